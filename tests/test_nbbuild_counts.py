"""Execution counts stay put: one inserted, deleted or edited cell is a one-cell diff.

nbval needs a count on every code cell it checks (a cell with outputs and no count fails, one
without a count is not checked) and never compares the numbers, so nbbuild keeps each cell's
committed count (`stable_counts`) instead of renumbering 1..n on every build.
"""

from __future__ import annotations

import difflib

import nbformat
import pytest
import scripts_support

from helpers.paths import NOTEBOOKS_DIR

nbbuild = scripts_support.nbbuild()
LESSON = "02_sync_loop"


def test_a_fresh_lesson_is_counted_in_steps():
    assert nbbuild.stable_counts(["a", "b", "c"], {}) == [10, 20, 30]


@pytest.mark.parametrize(
    ("ids", "previous", "expected"),
    [
        (["a", "new", "b"], {"a": 10, "b": 20}, [10, 15, 20]),  # the middle of the gap
        (["new", "a"], {"a": 10}, [5, 10]),  # before the first cell
        (["a", "b", "new"], {"a": 10, "b": 20}, [10, 20, 30]),  # after the last
        (["a", "c"], {"a": 10, "b": 20, "c": 30}, [10, 30]),  # a deleted cell: no renumbering
        (["a", "n1", "n2", "b"], {"a": 10, "b": 20}, [10, 15, 17, 20]),
    ],
)
def test_kept_counts_and_a_new_cell_in_the_gap(ids, previous, expected):
    assert nbbuild.stable_counts(ids, previous) == expected


def test_a_used_up_gap_shifts_only_up_to_the_next_room():
    """Neighbours 1 apart: the new cell pushes the next cells on until a gap absorbs it."""
    counts = nbbuild.stable_counts(["a", "new", "b", "c", "d"], {"a": 1, "b": 2, "c": 3, "d": 9})
    assert counts == [1, 2, 3, 4, 9]


def test_moved_cells_still_count_upwards():
    counts = nbbuild.stable_counts(["b", "a", "c"], {"a": 10, "b": 20, "c": 30})
    assert counts == [20, 21, 30]


def _rebuilt(lang: str, insert_at: int | None) -> str:
    """The lesson as `nbbuild.py --no-execute` writes it, optionally with one code cell inserted
    before source cell `insert_at`."""
    path = NOTEBOOKS_DIR / lang / f"{LESSON}.ipynb"
    lesson = nbbuild.load_lesson(NOTEBOOKS_DIR / "src" / f"{LESSON}.py")
    if insert_at is not None:
        lesson.cells.insert(insert_at, nbbuild.code('print("an inserted cell")'))
    nb = nbbuild.to_notebook(lesson, lang)
    nbbuild.keep_committed_outputs(nb, path)
    nb = nbbuild.clean(nb, lang, nbbuild.committed_counts(path))
    return nbformat.writes(nb) + "\n"


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_an_inserted_cell_is_a_one_cell_diff(lang, where):
    cells = nbbuild.load_lesson(NOTEBOOKS_DIR / "src" / f"{LESSON}.py").cells
    insert_at = {"first": 0, "middle": len(cells) // 2, "last": len(cells)}[where]
    committed = (NOTEBOOKS_DIR / lang / f"{LESSON}.ipynb").read_text(encoding="utf-8")
    assert _rebuilt(lang, None) == committed, f"rebuild {LESSON} first: scripts/nbbuild.py {LESSON}"
    changed = [
        line
        for line in difflib.unified_diff(
            committed.splitlines(), _rebuilt(lang, insert_at).splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    removed = [line for line in changed if line.startswith("-")]
    assert not removed, (
        f"inserting a cell changed other cells of {lang}/{LESSON}.ipynb: {removed[:5]} (a used-up "
        "gap between counts? `scripts/nbbuild.py --renumber` spaces them out again)"
    )
    assert any("an inserted cell" in line for line in changed)
    assert 5 <= len(changed) <= 20, changed  # the new cell's JSON (and a comma), nothing else
