"""The 90-minute in-class path (lesson 8.3.2), defined once.

The teacher's guide's table (`build_deck.py --guide-table` prints it), the deck and
`tests/test_class_path.py` (which runs exactly these cells, in order, in a fresh kernel per lesson)
all read `PATH`, so the three cannot drift apart.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]  # this checkout first (a shared venv)

import nbbuild  # noqa: E402  (scripts/ is not a package)


@dataclass(frozen=True)
class Block:
    """One block of the class: minutes, who runs the cells, the lesson, its steps and exercises."""

    minutes: int
    where: str  # "students" (they run the cells) or "projector" (the teacher runs them)
    lesson: str
    steps: tuple[str, ...]  # step numbers as in the lesson's headings: "## 2. ..."
    exercises: tuple[str, ...] = ()  # exercise numbers: "### Exercise 1. ..."


# Every block runs its lesson's Setup section first, then the steps, then the exercises. Lesson
# 02's Exercise 2 needs Exercise 1 (its cell imports the checks, `n02`), so both are in class.
PATH = (
    Block(20, "students", "00_start", ("1", "2", "4"), ("1", "2", "3")),
    Block(25, "students", "01_tools_schema", ("1", "2", "3", "4", "5"), ("1",)),
    Block(25, "students", "02_sync_loop", ("1", "2", "3", "4", "5", "6", "7"), ("1", "2")),
    Block(15, "projector", "03_streaming", ("1", "2", "3", "4", "7")),
)
WRAP_UP_MINUTES = 5


class PathError(ValueError):
    """The in-class path names a step or an exercise that a lesson does not have."""


def _section(lesson: nbbuild.Lesson, pattern: str, stop: str, name: str) -> list[int]:
    """Indexes of the cells from the markdown cell matching `pattern` up to the next `stop`."""
    start = next(
        (
            i
            for i, c in enumerate(lesson.cells)
            if c.kind == "markdown" and re.search(pattern, c.en, re.M)
        ),
        None,
    )
    if start is None:
        raise PathError(f"{lesson.name} has no {name} (update PATH in scripts/class_path.py)")
    found = [start]
    for i in range(start + 1, len(lesson.cells)):
        cell = lesson.cells[i]
        if cell.kind == "markdown" and re.search(stop, cell.en, re.M):
            break
        found.append(i)
    return found


def step_indexes(lesson: nbbuild.Lesson, step: str) -> list[int]:
    """The cells of step `step`: from its `## N.` heading up to the next `##` heading."""
    return _section(lesson, rf"^##\s+{re.escape(step)}\.\s", r"^##\s", f"step '## {step}.'")


def exercise_indexes(lesson: nbbuild.Lesson, number: str) -> list[int]:
    """The cells of `### Exercise N.` up to the next exercise or section."""
    return _section(
        lesson,
        rf"^###\s+Exercise\s+{re.escape(number)}\.\s",
        r"^###?\s",
        f"'### Exercise {number}.'",
    )


def block_indexes(block: Block) -> list[int]:
    """Every cell the block names, in the order the class runs them."""
    lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
    cells = _section(lesson, r"^##\s+Setup\b", r"^##\s", "'## Setup'")
    for step in block.steps:
        cells += step_indexes(lesson, step)
    for number in block.exercises:
        cells += exercise_indexes(lesson, number)
    return cells


def block_cell_ids(block: Block) -> list[str]:
    """The committed notebooks' cell ids of `block_indexes(block)`."""
    lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
    ids = nbbuild.cell_ids(lesson)
    return [ids[i] for i in block_indexes(block)]


# How a block's minutes were estimated (the guide states it): the prose of the block's cells read
# at READING_WPM (technical prose at student pace), RUN_READ_MINUTES per visible code cell (run it,
# read its output; the cells themselves run in about a second each in replay, measured by
# tests/test_class_path.py), and each in-class exercise's estimate from the guide.
READING_WPM = 130
RUN_READ_MINUTES = 0.5
EXERCISE_MINUTES = {
    ("00_start", "1"): 3,
    ("00_start", "2"): 3,
    ("00_start", "3"): 3,
    ("01_tools_schema", "1"): 10,
    ("02_sync_loop", "1"): 2,
    ("02_sync_loop", "2"): 10,
}


def cells_minutes(lesson: nbbuild.Lesson, indexes: list[int]) -> float:
    """Reading and running these cells of a lesson, by the method above (the deck's notes give
    it per step)."""
    cells = [lesson.cells[i] for i in indexes]
    words = sum(len(re.findall(r"\w+", c.en)) for c in cells if c.kind == "markdown")
    code = sum(1 for c in cells if c.kind == "code" and not c.hidden)
    return words / READING_WPM + code * RUN_READ_MINUTES


def estimated_minutes(block: Block) -> float:
    """Reading + running + exercises for one block, by the method above."""
    lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
    exercises = sum(EXERCISE_MINUTES[block.lesson, n] for n in block.exercises)
    return cells_minutes(lesson, block_indexes(block)) + exercises
