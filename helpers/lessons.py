"""The one lesson list, read from `notebooks/src/NN_name.py`, and the files each lesson needs.

Everything that used to keep its own copy of the list (the scenario registry, the tests, the maps'
checks) asks this module, so a new lesson source is picked up with no list to edit, and a lesson
that lacks one of its pieces is reported by name with the command that makes it.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.paths import NOTEBOOKS_DIR

LESSON_NAME = re.compile(r"^\d\d_[a-z0-9]+(?:_[a-z0-9]+)*$")
"""`NN_words`: two digits, then lowercase words joined by `_` (e.g. `02_sync_loop`)."""
CHECK_CALL = re.compile(r"\b(check_\w+)\s*\(")
"""A call of a self-check in a cell's code (`n01.check_schema(...)`): group 1 is its name."""


def lesson_names(src_dir: Path = NOTEBOOKS_DIR / "src") -> tuple[str, ...]:
    """Every lesson that has a source in `src_dir`, in reading order (by its number)."""
    return tuple(sorted(p.stem for p in src_dir.glob("[0-9][0-9]_*.py")))


def scenario_module(lesson: str) -> str:
    """The scenario module of a lesson: `02_sync_loop` -> `n02_sync_loop` (a name can't start
    with a digit)."""
    return f"n{lesson}"


def exercises_module(lesson: str) -> str:
    """The self-check module of a lesson: `02_sync_loop` -> `n02`."""
    return f"n{lesson[:2]}"


def lesson_of_module(module: str) -> str:
    """The lesson a scenario module belongs to: `n02_sync_loop` -> `02_sync_loop`."""
    return module.removeprefix("n")
