"""The session-end check that fails on a recording no notebook run requested
(tests/served_recordings.py), on the real cassettes and notebooks, without a kernel: which runs
count as whole, what the message says, and when the kernels get the log variable.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import served_recordings
from lesson_checks import cassette_path
from served_recordings import (
    FOLDER_KEY,
    ServedRecordings,
    code_cell_count,
    lessons_run_whole,
    notebook_of,
    served_ids,
    unused_message,
)

from helpers.i18n import LANGUAGES
from helpers.paths import RECORDINGS_DIR, REPO_ROOT
from helpers.replay.cassette import load_cassette
from helpers.replay.matching import canonical_request, request_key
from helpers.replay.server import SERVED_LOG_VARIABLE, served_id

LESSON = "02_sync_loop"


def whole_run(lesson: str) -> dict[str, set[str]]:
    """The node ids nbval reports for every cell of both editions of a lesson."""
    return {
        f"{lang}/{lesson}": {
            f"notebooks/{lang}/{lesson}.ipynb::Cell {i}"
            for i in range(code_cell_count(f"{lang}/{lesson}"))
        }
        for lang in LANGUAGES
    }


def all_served(lesson: str) -> list[str]:
    return [
        served_id(request_key(canonical_request(i.request["path"], i.request["body"])))
        for i in load_cassette(cassette_path(lesson)).interactions
    ]


def test_nbval_cells_are_told_from_other_tests():
    assert notebook_of("notebooks/ru/02_sync_loop.ipynb::Cell 12") == "ru/02_sync_loop"
    assert notebook_of("tests/test_loop.py::test_x") is None
    assert notebook_of("tests/test_grade.py::test_a[02_sync_loop.ipynb]") is None


def test_only_lessons_run_whole_in_both_editions_are_checked():
    run = whole_run(LESSON)
    assert lessons_run_whole(run, []) == [LESSON]
    assert lessons_run_whole(run, [f"ru/{LESSON}"]) == []  # a failed notebook: reported already
    assert lessons_run_whole({f"en/{LESSON}": run[f"en/{LESSON}"]}, []) == []  # one edition
    partial = {**run, f"en/{LESSON}": set(sorted(run[f"en/{LESSON}"])[:-1])}  # `-k`, `--lf`
    assert lessons_run_whole(partial, []) == []


def test_a_recording_no_run_requested_is_named_with_what_to_do():
    served = all_served(LESSON)
    assert unused_message([LESSON], set(served), RECORDINGS_DIR) is None
    first = load_cassette(cassette_path(LESSON)).interactions[0]
    message = unused_message([LESSON], set(served[1:]), RECORDINGS_DIR)
    assert message is not None and message.endswith(f"\n  {first.name}")
    assert f"nbval ran both editions of {LESSON}" in message
    assert "helpers/replay/scenarios/nNN_*.py" in message and "synthesize" in message


def test_the_log_is_read_from_every_workers_file(tmp_path):
    (tmp_path / "gw0.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "gw1.txt").write_text("c\n", encoding="utf-8")
    assert served_ids(tmp_path) == {"a", "b", "c"}


def test_kernels_of_nbval_cells_get_the_log_and_other_tests_do_not(tmp_path, monkeypatch):
    monkeypatch.delenv(SERVED_LOG_VARIABLE, raising=False)
    config = SimpleNamespace(workerinput={FOLDER_KEY: str(tmp_path), "workerid": "gw1"})
    plugin = ServedRecordings(config)
    assert plugin.is_worker and plugin.log == tmp_path / "gw1.txt"
    plugin.pytest_runtest_setup(SimpleNamespace(nodeid=f"notebooks/en/{LESSON}.ipynb::Cell 0"))
    assert os.environ[SERVED_LOG_VARIABLE] == str(tmp_path / "gw1.txt")
    plugin.pytest_runtest_setup(SimpleNamespace(nodeid="tests/test_loop.py::test_x"))
    assert SERVED_LOG_VARIABLE not in os.environ


@pytest.mark.parametrize("exitstatus", [pytest.ExitCode.OK, pytest.ExitCode.INTERRUPTED])
def test_the_controller_fails_the_session_only_after_a_whole_run(exitstatus, monkeypatch):
    plugin = ServedRecordings(SimpleNamespace())
    for notebook, cells in whole_run(LESSON).items():
        for nodeid in cells:
            plugin.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, failed=False))
        assert notebook in plugin.cells_seen
    (plugin.folder / "gw0.txt").write_text("\n".join(all_served(LESSON)[1:]), encoding="utf-8")
    session = SimpleNamespace(exitstatus=exitstatus)
    plugin.pytest_sessionfinish(session, exitstatus)
    assert not plugin.folder.exists()
    if exitstatus == pytest.ExitCode.OK:
        assert session.exitstatus == pytest.ExitCode.TESTS_FAILED and plugin.message
    else:  # an interrupted run checks nothing
        assert session.exitstatus == exitstatus and plugin.message is None


def test_a_session_with_an_unused_recording_ends_on_a_red_failed_line(tmp_path):
    """A real pytest session (a subprocess) that passes its one test but leaves every recording
    of a lesson unrequested: the exit code is 1 and the last line counts an error."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    plugin = Path(served_recordings.__file__)
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('served_recordings', {str(plugin)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"module.lessons_run_whole = lambda *args: [{LESSON!r}]  # as if nbval ran it whole\n"
        "module.served_ids = lambda folder: set()  # and its kernels requested nothing\n"
        "def pytest_configure(config):\n"
        "    module.register(config)\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 1, run.stdout + run.stderr
    assert "unused recordings" in run.stdout and "Recordings that no notebook run" in run.stdout
    assert re.fullmatch(r"1 passed, 1 error in [\d.]+s", lines[-1]), lines[-3:]
    assert "ERROR data/recordings - Recordings that no notebook run requested" in run.stdout
