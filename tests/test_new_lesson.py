"""`scripts/new_lesson.py` writes a lesson whose pieces fit together, and never overwrites one."""

from __future__ import annotations

from pathlib import Path

import pytest
import scripts_support

from helpers.lessons import lesson_problems


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for folder in ("notebooks/src", "helpers/replay/scenarios", "helpers/exercises", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "data" / "recordings").mkdir(parents=True)
    return tmp_path


def test_a_new_lesson_builds_and_lacks_only_its_cassette(root):
    new_lesson, nbbuild = scripts_support.script("new_lesson"), scripts_support.script("nbbuild")
    written = new_lesson.create("09_tool_choice", "Choosing a tool", "Выбор инструмента", root)
    assert {p.relative_to(root).as_posix() for p in written} == {
        "notebooks/src/09_tool_choice.py",
        "helpers/replay/scenarios/n09_tool_choice.py",
        "helpers/exercises/n09.py",
        "tests/test_exercises_n09.py",
    }
    problems = lesson_problems(
        root / "notebooks/src", root / "helpers/replay/scenarios", root / "data/recordings"
    )
    assert problems == [
        "lesson 09_tool_choice has no cassette data/recordings/09_tool_choice.json: "
        "run `python -m helpers.replay synthesize`"
    ]
    lesson = nbbuild.load_lesson(root / "notebooks/src/09_tool_choice.py")
    en, ru = nbbuild.to_notebook(lesson, "en"), nbbuild.to_notebook(lesson, "ru")
    assert en.cells[0].source.startswith("# Choosing a tool")
    assert ru.cells[0].source.startswith("# Выбор инструмента")
    assert 'set_language("ru")' in "".join(c.source for c in ru.cells)
    for path in written:  # every generated Python file compiles
        compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_it_refuses_a_bad_name_a_taken_number_and_overwriting(root):
    new_lesson = scripts_support.script("new_lesson")
    with pytest.raises(SystemExit, match="NN_lowercase_words"):
        new_lesson.create("9_Tool", "T", "Т", root)
    (root / "notebooks/src/09_other.py").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match="is taken by notebooks/src/09_other.py"):
        new_lesson.create("09_tool_choice", "T", "Т", root)
    (root / "helpers/exercises/n10.py").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="refusing to overwrite"):
        new_lesson.create("10_more", "T", "Т", root)
    assert (root / "helpers/exercises/n10.py").read_text(encoding="utf-8") == "# mine\n"
    assert not (root / "notebooks/src/10_more.py").exists()
