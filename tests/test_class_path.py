"""The 90-minute in-class path (scripts/class_path.py) runs: exactly its cells, in order, in a fresh
kernel per lesson, with no NameError (issue 28 item 5)."""

from __future__ import annotations

import copy

import nbformat
import pytest
import scripts_support

from helpers.paths import NOTEBOOKS_DIR

class_path = scripts_support.script("class_path")
nbbuild = scripts_support.nbbuild()


def test_the_path_fills_ninety_minutes_and_names_lesson_00s_exercises():
    assert sum(b.minutes for b in class_path.PATH) + class_path.WRAP_UP_MINUTES == 90
    first = class_path.PATH[0]
    assert first.lesson == "00_start" and first.exercises == ("1", "2", "3")


@pytest.mark.parametrize("block", class_path.PATH, ids=lambda b: b.lesson)
def test_the_blocks_cells_run_in_order_in_a_fresh_kernel(block, tmp_path):
    committed = nbformat.read(NOTEBOOKS_DIR / "en" / f"{block.lesson}.ipynb", as_version=4)
    by_id = {cell.get("id"): cell for cell in committed.cells}
    wanted = class_path.block_cell_ids(block)
    missing = [i for i in wanted if i not in by_id]
    assert not missing, f"{block.lesson}: the committed notebook lacks cells {missing}: rebuild it"
    nb = copy.deepcopy(committed)
    nb.cells = [copy.deepcopy(by_id[i]) for i in wanted]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    # Raises with the cell id and the exception (a NameError included) when a cell that is not
    # tagged `raises-exception` fails.
    nbbuild.execute(nb, NOTEBOOKS_DIR / "en")
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert ran and all(c.execution_count for c in ran)


def test_a_path_that_skips_the_step_defining_clients_fails(tmp_path):
    """The old guide's lesson 02 path (steps 2-4 and 6-7) ends in a NameError: the test sees it."""
    block = class_path.Block(25, "students", "02_sync_loop", ("1", "2", "3", "4", "6", "7"))
    committed = nbformat.read(NOTEBOOKS_DIR / "en" / "02_sync_loop.ipynb", as_version=4)
    by_id = {cell.get("id"): cell for cell in committed.cells}
    nb = copy.deepcopy(committed)
    nb.cells = [copy.deepcopy(by_id[i]) for i in class_path.block_cell_ids(block)]
    with pytest.raises(RuntimeError, match="NameError"):
        nbbuild.execute(nb, NOTEBOOKS_DIR / "en")


def test_a_step_that_is_gone_stops_the_path():
    with pytest.raises(class_path.PathError, match="00_start has no step '## 99.'"):
        class_path.block_indexes(class_path.Block(1, "students", "00_start", ("99",)))


def test_each_blocks_minutes_match_the_estimate_within_20_percent():
    for block in class_path.PATH:
        estimate = class_path.estimated_minutes(block)
        assert abs(estimate - block.minutes) <= 0.2 * block.minutes, (block.lesson, estimate)
