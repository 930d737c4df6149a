"""Each script imports `helpers` from its own checkout, never from another one.

Two checkouts often share one venv, whose editable install (a `.pth` finder) points at one of
them, and a developer's PYTHONPATH may name a third tree. Run from a second checkout, a script
must still import that checkout's `helpers`: each one puts its own root first on `sys.path`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.paths import REPO_ROOT

SCRIPTS = sorted(
    path.name
    for path in (REPO_ROOT / "scripts").glob("*.py")
    if re.search(
        r"^\s*(from helpers[ .]|import (helpers|nbbuild|class_path))", path.read_text(), re.M
    )
)
LAZY = ("capture_llamacpp.py", "handout.py", "registry.py")  # import helpers only inside functions
MODULES = ("class_path.py", "handout.py")  # no command line: run as they are
# One interpreter runs every script as `python scripts/<name>.py` would (its folder first on
# sys.path, argv, __main__), restoring sys.path and forgetting the repository's modules between
# scripts, so each must find this checkout by itself; the shared third-party imports stay cached.
DRIVER = r"""
import json, runpy, sys
from pathlib import Path

scripts, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ours = ("helpers", "nbbuild", "class_path", "wheelhouse", "handout", "lesson_", "registry")
start = list(sys.path)
found = {}
for script in scripts:
    for name in [m for m in sys.modules if m.split(".")[0].startswith(ours)]:
        del sys.modules[name]
    sys.path[:] = [str(Path(script).parent), *start]
    sys.argv = [script] if Path(script).name in modules else [script, "--help"]
    error = None
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        error = None if exc.code in (0, None) else f"exit {exc.code}"
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
    helpers = sys.modules.get("helpers")
    found[Path(script).name] = [error, getattr(helpers, "__file__", None)]
print("RESULT " + json.dumps(found))
"""


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list]]:
    """Every script run from a second checkout (scripts and helpers copied, the rest linked),
    with PYTHONPATH naming another tree whose `helpers` refuses to be imported."""
    base = tmp_path_factory.mktemp("checkouts")
    copy = base / "second"
    copy.mkdir()
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO_ROOT / "scripts", copy / "scripts", ignore=ignore)
    shutil.copytree(REPO_ROOT / "helpers", copy / "helpers", ignore=ignore)
    for name in ("data", "notebooks", "requirements.txt"):
        (copy / name).symlink_to(REPO_ROOT / name)
    other = base / "other"
    (other / "helpers").mkdir(parents=True)
    (other / "helpers" / "__init__.py").write_text(
        "raise ImportError('imported the helpers of another tree')\n", encoding="utf-8"
    )
    paths = [str(copy / "scripts" / name) for name in SCRIPTS]
    run = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(paths), json.dumps(MODULES)],
        cwd=base,
        env={**os.environ, "PYTHONPATH": str(other)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, run.stderr[-2000:]
    return copy, json.loads(lines[-1].removeprefix("RESULT "))


def test_the_scripts_that_import_helpers_are_found():
    assert {"nbbuild.py", "build_kit.py", "new_lesson.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_script_imports_its_own_checkouts_helpers(imported, script):
    copy, found = imported
    error, helpers = found[script]
    assert error is None, f"{script} from a second checkout: {error}"
    if script in LAZY:
        assert helpers is None or Path(helpers).is_relative_to(copy), helpers
    else:
        assert helpers and Path(helpers).is_relative_to(copy), (
            f"{script} imported helpers from {helpers}, not from its checkout {copy}"
        )
