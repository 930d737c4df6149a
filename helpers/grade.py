"""Grade a folder of submitted notebooks: run each in replay mode, write one CSV of verdicts.

    python -m helpers.grade submissions/ --out grades.csv [--timeout 300] [--executed run/]

Each notebook runs in its own kernel (nbclient), started in the notebook's folder, with
`LLM_MODE=replay` forced, no API keys or proxies in its environment and the Hugging Face hub
offline. The self-checks record their verdicts to `LLM_GRADE_LOG` (see
`helpers.exercises._verdict`), so the table never depends on printed text. The grader itself runs
nothing but the submitted notebooks, and a broken notebook (invalid JSON, a cell that raises, an
endless loop) gets a row that says so instead of stopping the run.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import inspect
import json
import os
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASSED, NOT_YET, ERROR, MISSING = "passed", "not yet", "error", "missing"
DEFAULT_TIMEOUT = 300
# What the kernel must not inherit: credentials, live settings, proxies (replay is loopback only).
DROPPED_ENV = re.compile(
    r"^(KIMI_|QWEN_|OPENAI_|MOONSHOT_|LLM_|HF_TOKEN|HUGGING_FACE_HUB_TOKEN)|_proxy$", re.IGNORECASE
)
LESSON_IN_CODE = re.compile(r"\bhelpers\.exercises(?:\.n(\d\d)\b|\s+import\s+n(\d\d)\b)")
LESSON_IN_NAME = re.compile(r"^(\d\d)_")


@dataclass
class Result:
    """One submitted notebook: how the run went and each exercise's value."""

    notebook: str
    lesson: str = ""
    run: str = "ok"
    values: dict[str, str] = field(default_factory=dict)


def exercises_of(lesson: str) -> list[str]:
    """The exercises of a lesson, `NN:check_name`, in the order its check module defines them."""
    try:
        module = importlib.import_module(f"helpers.exercises.n{lesson}")
    except ModuleNotFoundError:
        return []
    checks = [
        (inspect.getsourcelines(fn)[1], name)
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if name.startswith("check_") and fn.__module__ == module.__name__
    ]
    return [f"{lesson}:{name}" for _, name in sorted(checks)]


def lesson_of(path: Path, nb: Any | None) -> str:
    """The lesson number, from the exercise module the notebook imports, else from its file name."""
    for cell in nb.cells if nb is not None else []:
        if cell.cell_type == "code":
            found = LESSON_IN_CODE.search(cell.source)
            if found:
                return found.group(1) or found.group(2)
    found = LESSON_IN_NAME.match(path.name)
    return found.group(1) if found else ""


def kernel_env(log_path: Path) -> dict[str, str]:
    """The kernel's environment: ours minus secrets, live settings and proxies; replay forced."""
    env = {k: v for k, v in os.environ.items() if not DROPPED_ENV.search(k)}
    env.update(
        {
            "LLM_MODE": "replay",
            "LLM_GRADE_LOG": str(log_path),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    return env


def run_notebook(nb: Any, folder: Path, log_path: Path, timeout: float) -> str:
    """Execute `nb` in place, in `folder`; say how the run went (a broken notebook never raises)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    deadline = time.monotonic() + timeout
    client = NotebookClient(
        nb,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=False,
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        resources={"metadata": {"path": str(folder)}},
    )
    try:
        client.execute(env=kernel_env(log_path))
    except CellTimeoutError:
        return f"timeout after {timeout:g} s"
    except DeadKernelError:
        return "kernel died"
    except RuntimeError as exc:  # nbclient reports a kernel that would not start this way
        return f"failed to run: {exc}"
    failed = sum(  # a cell tagged raises-exception shows a defect on purpose
        1
        for cell in nb.cells
        if any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        and "raises-exception" not in cell.get("metadata", {}).get("tags", [])
    )
    return f"ok, {failed} cell(s) raised" if failed else "ok"


def read_log(log_path: Path) -> dict[str, bool]:
    """The last verdict per exercise from a grade log (a torn last line is ignored)."""
    last: dict[str, bool] = {}
    if not log_path.exists():
        return last
    for line in log_path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and "exercise" in entry:
            last[str(entry["exercise"])] = bool(entry.get("passed"))
    return last


def grade_notebook(path: Path, root: Path, timeout: float, executed: Path | None) -> Result:
    """Run one submitted notebook and read its verdicts."""
    import nbformat

    result = Result(notebook=path.relative_to(root).as_posix())
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # any unreadable file is the student's problem, not the grader's
        result.lesson = lesson_of(path, None)
        result.run = f"invalid notebook: {type(exc).__name__}"
        result.values = {name: MISSING for name in exercises_of(result.lesson)}
        return result
    result.lesson = lesson_of(path, nb)
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "verdicts.jsonl"
        result.run = run_notebook(nb, path.parent, log_path, timeout)
        verdicts = read_log(log_path)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for name in exercises_of(result.lesson):
        if name in verdicts:
            result.values[name] = PASSED if verdicts[name] else NOT_YET
        elif re.search(rf"\b{re.escape(name.split(':', 1)[1])}\s*\(", sources):
            result.values[name] = ERROR  # the check is there but gave no verdict
        else:
            result.values[name] = MISSING
    if executed is not None:
        target = executed / result.notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
    return result


def grade_folder(
    folder: Path,
    out: Path,
    timeout: float = DEFAULT_TIMEOUT,
    executed: Path | None = None,
    jobs: int = 1,
) -> list[Result]:
    """Grade every `*.ipynb` under `folder` and write the table to `out` (rows in path order).

    `jobs` notebooks run at once, each in its own kernel (a class of 25 on a lab server)."""
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)

    def grade(path: Path) -> Result:
        print(f"grading {path.relative_to(folder).as_posix()} ...", flush=True)
        return grade_notebook(path, folder, timeout, executed)

    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(grade, paths))
    else:
        results = [grade(path) for path in paths]
    write_table(results, out)
    return results


def write_table(results: list[Result], out: Path) -> None:
    """One row per notebook, one column per exercise of any lesson seen; blank = other lesson."""
    columns: list[str] = []
    for lesson in sorted({r.lesson for r in results if r.lesson}):
        columns += exercises_of(lesson)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["notebook", "lesson", "run", *columns])
        for r in results:
            writer.writerow([r.notebook, r.lesson, r.run, *(r.values.get(c, "") for c in columns)])


def main(argv: list[str] | None = None) -> None:
    """Command line: grade a folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folder", type=Path, help="folder of submitted .ipynb files (searched recursively)"
    )
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the CSV to write")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per notebook (default {DEFAULT_TIMEOUT})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="notebooks run at once, each in its own kernel (default 1)",
    )
    parser.add_argument(
        "--executed",
        type=Path,
        default=None,
        help="also save each executed notebook under this folder",
    )
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    results = grade_folder(
        args.folder.resolve(), args.out, args.timeout, args.executed, max(1, args.jobs)
    )
    print(f"wrote {args.out}: {len(results)} notebook(s)")


if __name__ == "__main__":
    main()
