"""A recording that no notebook run requests fails the test session (issue 30).

`scripts/nbbuild.py` already fails naming such a recording when it builds a lesson; this plugin
makes the suite do the same, so a scenario left behind after a lesson changed (or a cassette
edited by hand) is caught on a clean checkout too. Loaded by the root conftest.py.

- While an nbval cell runs, `SERVED_LOG_VARIABLE` names a log file of this process, so the
  kernel nbval starts inherits it and its replay server logs every recording it answers; while
  any other test runs, the variable is unset (a unit test's own replay server would otherwise
  count as a notebook run).
- With pytest-xdist, the controller makes one folder and hands it to every worker
  (`workerinput`); each worker's kernels log to their own file in it.
- At the end of the session the controller checks the cassettes of the lessons whose both
  editions ran whole (every code cell reported, none failed): a run of a few tests, a `-k`
  selection, one edition or a failed notebook checks nothing, so a partial run never fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from helpers.i18n import LANGUAGES
from helpers.paths import NOTEBOOKS_DIR, RECORDINGS_DIR
from helpers.replay.server import SERVED_LOG_VARIABLE
from helpers.replay.synthesize import unused_recordings

FOLDER_KEY = "served_recordings_folder"
ERROR_NODEID = "data/recordings"  # where the session's summary puts the unused recordings


def notebook_of(nodeid: str) -> str | None:
    """`en/02_sync_loop` for an nbval cell's node id (`notebooks/en/02_sync_loop.ipynb::Cell 3`)."""
    path, _, cell = nodeid.partition("::")
    parts = Path(path).parts
    if not (path.endswith(".ipynb") and cell.startswith("Cell ") and len(parts) >= 2):
        return None
    return f"{parts[-2]}/{Path(path).stem}"


def code_cell_count(notebook: str, notebooks_dir: Path = NOTEBOOKS_DIR) -> int:
    """How many code cells (nbval items) a committed notebook has."""
    path = notebooks_dir / f"{notebook}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"] if path.exists() else []
    return sum(1 for cell in cells if cell["cell_type"] == "code")


def lessons_run_whole(
    cells_seen: Mapping[str, set[str]],
    failed: Iterable[str],
    notebooks_dir: Path = NOTEBOOKS_DIR,
) -> list[str]:
    """The lessons whose every edition ran every code cell and none failed."""
    failed = set(failed)
    whole = {
        notebook
        for notebook, cells in cells_seen.items()
        if notebook not in failed and len(cells) == code_cell_count(notebook, notebooks_dir) > 0
    }
    lessons = {notebook.split("/", 1)[1] for notebook in whole}
    return sorted(n for n in lessons if all(f"{lang}/{n}" in whole for lang in LANGUAGES))


def served_ids(folder: Path) -> set[str]:
    """Every recording the kernels' replay servers logged in `folder`."""
    return {
        line for log in folder.glob("*.txt") for line in log.read_text(encoding="utf-8").split()
    }


def unused_message(lessons: list[str], served: set[str], recordings_dir: Path) -> str | None:
    """The failure for the recordings of `lessons` that no run requested, or None."""
    cassettes = [p for n in lessons if (p := recordings_dir / f"{n}.json").is_file()]
    unused = unused_recordings(served, cassettes)
    if not unused:
        return None
    return (
        "Recordings that no notebook run requested (nbval ran both editions of "
        f"{', '.join(lessons)}): delete the turn or the scenario in "
        "helpers/replay/scenarios/nNN_*.py and run `python -m helpers.replay synthesize`, or "
        "make the lesson send that request:\n" + "\n".join(f"  {name}" for name in unused)
    )


class ServedRecordings:
    """The plugin: see the module's docstring."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        workerinput = getattr(config, "workerinput", None)
        self.is_worker = workerinput is not None
        if self.is_worker:
            self.folder = Path(workerinput[FOLDER_KEY])
            self.log = self.folder / f"{workerinput.get('workerid', 'worker')}.txt"
        else:
            self.folder = Path(tempfile.mkdtemp(prefix="served-"))
            self.log = self.folder / "main.txt"
        self.cells_seen: dict[str, set[str]] = defaultdict(set)
        self.failed: set[str] = set()
        self.message: str | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:  # type: ignore[no-untyped-def]
        node.workerinput[FOLDER_KEY] = str(self.folder)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if notebook_of(item.nodeid):
            os.environ[SERVED_LOG_VARIABLE] = str(self.log)  # before nbval starts the kernel
        else:
            os.environ.pop(SERVED_LOG_VARIABLE, None)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        notebook = notebook_of(report.nodeid)
        if notebook is None:
            return
        self.cells_seen[notebook].add(report.nodeid)
        if report.failed:
            self.failed.add(notebook)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        os.environ.pop(SERVED_LOG_VARIABLE, None)
        if self.is_worker:
            return
        try:
            if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                lessons = lessons_run_whole(self.cells_seen, self.failed)
                self.message = unused_message(lessons, served_ids(self.folder), RECORDINGS_DIR)
                if self.message:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter) -> None:  # type: ignore[no-untyped-def]
        """The message, and an error in the session's counts: the last line then reads
        "56 passed, 1 error" in red (the exit code alone is easy to miss)."""
        if self.message:
            terminalreporter.write_sep("=", "unused recordings", red=True, bold=True)
            terminalreporter.write_line(self.message)
            error = pytest.CollectReport(
                ERROR_NODEID, "failed", longrepr=self.message.split(":", 1)[0], result=[]
            )
            terminalreporter.stats.setdefault("error", []).append(error)


def register(config: pytest.Config) -> None:
    """Called by the root conftest.py's `pytest_configure`."""
    config.pluginmanager.register(ServedRecordings(config), "served-recordings")
