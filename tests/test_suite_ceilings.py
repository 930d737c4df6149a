"""The suite's own ceilings, as conftest.py sets them on the collected items."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRINTER = """
def pytest_collection_finish(session):
    for item in session.items:
        print("ITEM", item.name, getattr(item, "output_timeout", None))
"""


def test_nbval_cells_wait_longer_than_nbval_s_5_seconds_for_output(tmp_path):
    """nbval's fixed 5 s wait for a cell's output messages failed a check cell on a loaded
    machine; conftest gives every nbval cell NBVAL_OUTPUT_SECONDS instead."""
    (tmp_path / "print_items.py").write_text(PRINTER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "print_items"]
        + ["-p", "no:cacheprovider", "notebooks/en/00_start.ipynb"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    items = [line.split() for line in done.stdout.splitlines() if line.startswith("ITEM ")]
    assert len(items) > 5, done.stdout + done.stderr
    assert {waits for *_, waits in items} == {"60"}, items
