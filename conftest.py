"""Test-session environment, inherited by the kernels that nbval and the tests start."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

# Replay never needs the hub: fail at once instead of a 47-second retry if something tries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The 'PyTorch was not found' advisory would be a stray stderr output in every notebook.
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
# Kernels are new processes: with this checkout first on PYTHONPATH they import its `helpers`,
# not a copy installed (editable) from another checkout into the same venv.
_others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *_others])

# jsonschema without its 1 s IRI grammar (see helpers/arguments.py), imported before nbval's
# nbformat asks for it; nbval is then loaded here rather than automatically (`-p no:nbval`).
# If it was loaded already (addopts overridden with `-o addopts=...`), it is not loaded twice.
import helpers.arguments  # noqa: E402, F401

pytest_plugins = [] if "nbval.plugin" in sys.modules else ["nbval.plugin"]


# Test files whose every test starts Jupyter kernels, and fixtures that start them.
KERNEL_FILES = {"test_live_mode.py", "test_replay_lab_proxy.py"}
# tests/test_grade.py: folders of notebooks graded in kernels.
KERNEL_FIXTURES = {"graded", "endless"}


# The longest test files, started first so that two xdist workers (`--dist loadfile`) finish
# together instead of one of them starting a minute-long file at the end.
LONGEST_FIRST = (
    "test_live_mode.py",
    "test_student_edition.py",
    "test_grade.py",
    "test_replay_lab_proxy.py",
    "test_setup.py",
)


REGISTRY_SKIP = pytest.mark.skip(
    reason="downloads from the package index; the default run needs no network. "
    "Run it with: LLM_TEST_REGISTRY=1 .venv/bin/pytest -m registry"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what runs notebooks in kernels (nbval cells, the live-mode, lab-proxy, grading and
    browser tests) as `notebooks`, so `-m 'not notebooks'` is the quick unit loop; put the longest
    files first."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(rank)))
    for item in items:
        path = Path(str(item.fspath))
        if (
            path.suffix == ".ipynb"
            or path.name in KERNEL_FILES
            or KERNEL_FIXTURES & set(getattr(item, "fixturenames", ()))
            or item.get_closest_marker("browser")
        ):
            item.add_marker(pytest.mark.notebooks)
        if item.get_closest_marker("registry") and not os.environ.get("LLM_TEST_REGISTRY"):
            item.add_marker(REGISTRY_SKIP)
