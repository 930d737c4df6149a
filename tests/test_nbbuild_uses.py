"""`scripts/nbbuild.py --uses helpers/x.py`: the lessons to rebuild after changing a helper."""

from __future__ import annotations

import pytest
import scripts_support

from helpers.paths import REPO_ROOT

nbbuild = scripts_support.nbbuild()
HELPERS = REPO_ROOT / "helpers"


def test_imports_are_followed_to_the_module_that_defines_the_name():
    assert "helpers.replay.modes" in nbbuild.helper_imports("from helpers import connect")
    assert "helpers.loop" in nbbuild.helper_imports("from helpers.loop import run_tool_loop")
    assert "helpers.exercises.n02" in nbbuild.helper_imports("from helpers.exercises import n02")
    inside = "def f():\n    from helpers.display import show_raw\n"
    assert {"helpers", "helpers.display"} <= nbbuild.helper_imports(inside)
    assert nbbuild.helper_imports("import json\nfrom openai import OpenAI") == set()


def test_a_lessons_own_checks_are_read_by_that_lesson_only():
    assert nbbuild.lessons_using(HELPERS / "exercises" / "n02.py") == {"02_sync_loop": "reads"}


def test_the_replay_matcher_is_run_by_every_lesson_that_connects():
    """No lesson imports the matcher, but every `connect()` starts the server that uses it."""
    connecting = {
        name
        for name in nbbuild.lesson_names(nbbuild.SRC)
        if any("connect(" in cell for cell in scripts_support.lesson_code(name))
    }
    found = nbbuild.lessons_using(HELPERS / "replay" / "matching.py")
    assert connecting and set(found) == connecting and set(found.values()) == {"runs"}


def test_a_helper_no_lesson_uses():
    assert nbbuild.lessons_using(HELPERS / "grade.py") == {}


def test_the_command_prints_the_rebuild_line(capsys):
    nbbuild.main(["--uses", str(HELPERS / "exercises" / "n02.py")])
    out = capsys.readouterr().out
    assert "reads (import it or name it): 02_sync_loop" in out
    assert "rebuild: .venv/bin/python scripts/nbbuild.py 02_sync_loop" in out


@pytest.mark.parametrize("path", ["helpers/no_such.py", "scripts/nbbuild.py"])
def test_the_command_refuses_a_file_outside_helpers(path):
    with pytest.raises(SystemExit, match="a file under helpers/"):
        nbbuild.main(["--uses", str(REPO_ROOT / path)])
