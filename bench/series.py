"""Time the series under nbval against a floor of notebooks that only import the same libraries.

    python bench/series.py                # notebooks/en and notebooks/ru, best of 1
    python bench/series.py --repeat 3     # best of 3 per side (slower, steadier on a busy machine)
    python bench/series.py 03_streaming   # some lessons only

For each notebook, the floor is a generated notebook with the same cells (markdown stays markdown)
whose first code cell imports the same libraries the lesson imports (openai, requests, ipywidgets,
helpers and its submodules, transformers through `helpers._hf`) and whose other code cells print a
number. Both sides run the same way: `pytest` with the project's nbval options, one subprocess per
side, the same environment. Per-notebook times are the wall time of every cell's setup + call +
teardown (kernel start and shutdown included), recorded by a small pytest plugin; the totals are
the wall time of each whole pytest subprocess (start-up and collection included).
The aim (issue 5): the series at most 1.5x its floor.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from helpers.lessons import lesson_names

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LANGS = ("en", "ru")
LIBRARIES = ("openai", "requests", "ipywidgets", "transformers", "helpers")
NEEDS_TRANSFORMERS = re.compile(r"\btransformers\b|\bload_tokenizer\b|helpers\.templates")
ENV = {"LLM_MODE": "replay", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
AIM = 1.5

# A pytest plugin, written next to the floor notebooks and loaded with `-p` on both sides: wall
# time and failed phases per notebook file (junit reports cannot name files outside the rootdir).
TIMER_PLUGIN = """
import json, os, time
from collections import defaultdict
import pytest

seconds, failed = defaultdict(float), defaultdict(int)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = time.perf_counter()
    yield
    seconds[str(item.path)] += time.perf_counter() - start

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if outcome.get_result().failed:
        failed[str(item.path)] += 1

def pytest_sessionfinish(session):
    with open(os.environ["SERIES_TIMES"], "w") as f:
        json.dump({"seconds": seconds, "failed": failed}, f)
"""


def imported_modules(nb: nbformat.NotebookNode) -> list[str]:
    """The modules of LIBRARIES that a notebook's code imports, in first-use order."""
    found: dict[str, None] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            )
            for name in names:
                if name.split(".")[0] in LIBRARIES:
                    found.setdefault(name)
    return list(found)


def floor_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Same cells as `nb`; the first code cell imports its libraries, the others print a number."""
    modules = [m for m in imported_modules(nb) if m.split(".")[0] != "transformers"]
    code = "\n".join(f"import {m}" for m in modules)
    if any(NEEDS_TRANSFORMERS.search(c.source) for c in nb.cells if c.cell_type == "code"):
        code += "\nfrom helpers._hf import import_transformers\n\n_ = import_transformers()"
    floor = nbformat.v4.new_notebook(metadata=nb.metadata)
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            floor.cells.append(nbformat.v4.new_markdown_cell("Floor."))
            continue
        count += 1
        if count == 1:
            new = nbformat.v4.new_code_cell(code.strip() or "pass", execution_count=count)
        else:
            new = nbformat.v4.new_code_cell(f"print({count})", execution_count=count)
            new.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{count}\n")]
        floor.cells.append(new)
    return floor


def run_pytest(paths: list[Path], plugin_dir: Path) -> tuple[float, dict, dict]:
    """nbval over `paths` with the project's pytest options: wall seconds, then seconds and failed
    cells per notebook path."""
    times = plugin_dir / "times.json"
    code = (
        f"import sys; sys.path.insert(0, {str(plugin_dir)!r}); import pytest; "
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    cmd = [
        sys.executable,
        "-c",
        code,
        "-c",
        str(ROOT / "pyproject.toml"),
        "--rootdir",
        str(ROOT),
        "-q",
        "--no-header",
        "-n",  # one process: the timer plugin runs where the cells run (addopts say `-n 2`)
        "0",
        "-p",
        "no:randomly",
        "-p",
        "_series_timer",
        *map(str, paths),
    ]
    env = {**os.environ, **ENV, "SERIES_TIMES": str(times)}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        tail = done.stdout[-2000:] + done.stderr[-2000:]
        sys.exit(f"pytest could not run ({done.returncode}):\n{tail}")
    result = json.loads(times.read_text())
    if not result["seconds"]:
        sys.exit(f"the timer plugin saw no notebook run:\n{done.stdout[-2000:]}")
    return wall, result["seconds"], result["failed"]


def measure(paths: list[Path], plugin_dir: Path, repeat: int) -> tuple[float, dict, dict]:
    """Best wall time, best seconds per notebook, and failed cells of the last of `repeat` runs."""
    best_wall = float("inf")
    best: dict[str, float] = {}
    failed: dict[str, int] = {}
    for _ in range(repeat):
        wall, seconds, failed = run_pytest(paths, plugin_dir)
        best_wall = min(best_wall, wall)
        best = {k: min(v, best.get(k, v)) for k, v in seconds.items()}
    return best_wall, best, failed


def main(argv: list[str] | None = None) -> int:
    """Command line: build the floor, time both sides, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="lesson names (default: all in notebooks/en)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side; the best is kept")
    args = parser.parse_args(argv)
    names = args.names or lesson_names()
    lessons = [NOTEBOOKS / lang / f"{n}.ipynb" for n in names for lang in LANGS]
    missing = [str(p.relative_to(ROOT)) for p in lessons if not p.exists()]
    if missing or not lessons:
        sys.exit(f"no notebooks to time: missing {missing or 'all'}")
    with tempfile.TemporaryDirectory(prefix="series-floor-") as tmp:
        plugin_dir = Path(tmp)
        (plugin_dir / "_series_timer.py").write_text(TIMER_PLUGIN, encoding="utf-8")
        floors = {}
        for path in lessons:
            floor = plugin_dir / path.parent.name / path.name
            floor.parent.mkdir(exist_ok=True)
            nbformat.write(floor_notebook(nbformat.read(path, as_version=4)), floor)
            floors[path] = floor
        floor_wall, floor_nb, floor_failed = measure(list(floors.values()), plugin_dir, args.repeat)
        wall, series_nb, failed = measure(lessons, plugin_dir, args.repeat)
    if any(floor_failed.values()):
        sys.exit(f"the floor itself failed under nbval: {floor_failed}")
    print(f"{'notebook':28} {'cells':>5} {'series s':>9} {'floor s':>8} {'ratio':>6}")
    for path in lessons:
        key = f"{path.parent.name}/{path.stem}"
        cells = sum(1 for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        s, f = series_nb.get(str(path), 0.0), floor_nb.get(str(floors[path]), 0.0)
        bad = failed.get(str(path), 0)
        note = f"  ({bad} cells FAILED nbval)" if bad else ""
        print(f"{key:28} {cells:5d} {s:9.2f} {f:8.2f} {s / f if f else float('nan'):5.2f}x{note}")
    s_sum, f_sum = sum(series_nb.values()), sum(floor_nb.values())
    print(f"{'sum of notebooks':28} {'':5} {s_sum:9.2f} {f_sum:8.2f} {s_sum / f_sum:5.2f}x")
    ratio = wall / floor_wall
    print(f"{'wall, whole pytest run':28} {'':5} {wall:9.2f} {floor_wall:8.2f} {ratio:5.2f}x")
    verdict = "within" if ratio <= AIM else "OVER"
    print(f"aim: series <= {AIM}x floor (wall): {verdict}; failed cells: {sum(failed.values())}")
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
