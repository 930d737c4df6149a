"""The project's scripts as modules, for the tests that need them (one loader, one place)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from helpers.paths import NOTEBOOKS_DIR, REPO_ROOT


def script(name: str) -> ModuleType:
    """`scripts/<name>.py` as the module `<name>` (nbbuild keeps its own name: the lesson sources
    import `from nbbuild import ...`)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def nbbuild() -> ModuleType:
    """`scripts/nbbuild.py`."""
    return script("nbbuild")


def lesson_code(name: str) -> list[str]:
    """The English code cells of `notebooks/src/<name>.py`, as nbbuild reads them."""
    lesson = nbbuild().load_lesson(NOTEBOOKS_DIR / "src" / f"{name}.py")
    return [cell.en for cell in lesson.cells if cell.kind == "code"]
