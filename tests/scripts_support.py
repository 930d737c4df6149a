"""The project's scripts as modules, for the tests that need them (one loader, one place)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from helpers.i18n import LANGUAGES as LANGS
from helpers.lessons import exercises_module, scenario_module
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


def lesson_cells(name: str) -> list[Any]:
    """The cells of `notebooks/src/<name>.py`, as nbbuild reads them."""
    return nbbuild().load_lesson(NOTEBOOKS_DIR / "src" / f"{name}.py").cells


def lesson_code(name: str) -> list[str]:
    """The English code cells of `notebooks/src/<name>.py`, as nbbuild reads them."""
    return [cell.en for cell in lesson_cells(name) if cell.kind == "code"]


def second_run_language(lesson: str, run: str) -> str:
    """The edition a lesson runs in when it runs a second time, in another setting (`run` is
    "student" for the student edition or "live" for live mode).

    nbval runs both editions of every lesson. The other whole-lesson runs take one edition per
    lesson, alternating along the series, and the two settings take opposite editions (a lesson
    that runs in both runs once more in each language); each setting sees both languages. That
    costs half as many kernels and loses nothing that can differ: the editions share their code
    (the parity tests check it, the student edition's too), and what they print differently is
    the helpers' `tr()` text, which every setting still shows in both languages (the live-mode
    and student-edition tests assert that).
    """
    from helpers.lessons import lesson_names

    offset = {"live": 0, "student": 1}[run]
    return LANGS[(lesson_names().index(lesson) + offset) % len(LANGS)]


def template_leftovers(name: str, root: Path = REPO_ROOT) -> list[str]:
    """The `TODO` lines scripts/new_lesson.py's templates leave in a lesson's four files."""
    module = exercises_module(name)
    files = [
        root / "notebooks" / "src" / f"{name}.py",
        root / "helpers" / "replay" / "scenarios" / f"{scenario_module(name)}.py",
        root / "helpers" / "exercises" / f"{module}.py",
        root / "tests" / f"test_exercises_{module}.py",
    ]
    return [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in files
        if path.exists()
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"\bTODO\b", line)
    ]


def copy_of_the_series(tmp_path: Path) -> Path:
    """The lesson sources and the Markdown files the registry generates into, copied to
    `tmp_path` (with the empty folders new_lesson writes into)."""
    registry = script("registry")
    for folder in ("notebooks/src", "helpers/replay/scenarios", "helpers/exercises", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    for source in (registry.ROOT / "notebooks/src").glob("[0-9][0-9]_*.py"):
        (tmp_path / "notebooks/src" / source.name).write_bytes(source.read_bytes())
    for relative in registry.DOCS:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes((registry.ROOT / relative).read_bytes())
    return tmp_path
