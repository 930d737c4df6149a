"""Grade a folder of submitted notebooks: run each in replay mode, write one CSV of marks.

    python -m helpers.grade submissions/ --out grades.csv [--weights weights.csv]
        [--timeout 600] [--cell-timeout 60] [--jobs 2] [--executed run/]

Each notebook runs in its own kernel (nbclient), started in the notebook's folder, with
`LLM_MODE=replay` forced, an allow-list of environment variables (no keys, tokens or proxies) and
the Hugging Face hub offline. The grader runs the cells one by one: a cell that runs longer than
`--cell-timeout` is interrupted and the next cell runs; `--timeout` caps the whole notebook.

Verdicts: the self-checks record them to `LLM_GRADE_LOG` (see `helpers.exercises._verdict`). The
grader counts a record only when it was written while the unchanged self-check cell of that very
exercise ran (it knows which cell runs when), and it reloads the check modules in the kernel just
before each self-check cell, so a cell that writes to the log or replaces a check function gets
nothing; the forged records are counted in the `verdict_log` column. Each submission is compared
with the teacher's key (`notebooks/<lang>/`) and its student edition: `attempted` says whether the
starter code of an exercise was changed, `check_cells` names edited or deleted self-check cells,
`answer_key` says when reference solutions were handed in.

A row per notebook; `student` is the first folder under the submissions folder, or the file name
without the lesson's name (`ivanova_02_sync_loop.ipynb` -> `ivanova`). `score` adds the weights of
the passed exercises (1 each, or from `--weights`, a CSV `exercise,weight`; `--weights-template`
writes one); `student_total` adds a student's best score per lesson.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from helpers.paths import NOTEBOOKS_DIR, REPO_ROOT

PASSED, NOT_YET, ERROR, MISSING = "passed", "not yet", "error", "missing"
DEFAULT_TIMEOUT = 600
DEFAULT_CELL_TIMEOUT = 60
# The only variables a student's kernel inherits (plus LC_*): what Python, Jupyter and the OS
# need to start. Keys, tokens, cloud credentials and proxies are never on the list.
ALLOWED_ENV = frozenset(
    (
        "PATH HOME USER LOGNAME LANG LANGUAGE TZ TMPDIR TEMP TMP PYTHONPATH VIRTUAL_ENV "
        "SYSTEMROOT SYSTEMDRIVE WINDIR COMSPEC PATHEXT USERPROFILE APPDATA LOCALAPPDATA "
        "PROGRAMDATA JUPYTER_PATH JUPYTER_DATA_DIR JUPYTER_CONFIG_DIR JUPYTER_RUNTIME_DIR"
    ).split()
)
LESSON_IN_CODE = re.compile(r"\bhelpers\.exercises(?:\.n(\d\d)\b|\s+import\s+n(\d\d)\b)")
LESSON_IN_NAME = re.compile(r"^(\d\d)_")
CHECK_CALL = re.compile(r"\b(check_\w+)\s*\(")
# Student code that reaches into the self-check machinery: shown to the teacher, never run away.
GRADING_INTERNALS = re.compile(r"LLM_GRADE_LOG|_verdict\b|\bRECORDED\b|Verdict\(")
COPY_SUFFIX = re.compile(r"\s*\(\d+\)$|[-_ ]copy\d*$", re.IGNORECASE)
# Run in the kernel before each self-check cell: the check code as shipped, whatever ran before.
RELOAD_CHECKS = (
    "import importlib as _il, helpers.exercises._verdict as _v\n"
    "_il.reload(_v)\n"
    "import helpers.exercises.n{lesson} as _m\n"
    "_il.reload(_m)\n"
    "del _il, _v, _m"
)


@dataclass
class Result:
    """One submitted notebook: how the run went, each exercise's verdict, hint and attempt."""

    notebook: str
    student: str = ""
    lesson: str = ""
    run: str = "ok"
    values: dict[str, str] = field(default_factory=dict)
    hints: dict[str, str] = field(default_factory=dict)
    attempted: dict[str, str] = field(default_factory=dict)
    check_cells: str = ""
    answer_key: str = ""
    verdict_log: str = ""
    score: float = 0.0
    max_score: float = 0.0


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


def all_exercises() -> list[str]:
    """The exercises of every lesson, in lesson order."""
    return [e for lesson in range(100) for e in exercises_of(f"{lesson:02d}")]


def lesson_of(path: Path, nb: Any | None) -> str:
    """The lesson number, from the exercise module the notebook imports, else from its file name."""
    for cell in nb.cells if nb is not None else []:
        if cell.cell_type == "code":
            found = LESSON_IN_CODE.search(cell.source)
            if found:
                return found.group(1) or found.group(2)
    found = LESSON_IN_NAME.match(path.name)
    return found.group(1) if found else ""


def student_of(relative: Path) -> str:
    """The student a submission belongs to: its first folder, else its file name without the
    lesson's name (`ivanova_02_sync_loop.ipynb`, `02_sync_loop-ivanova (1).ipynb` -> `ivanova`)."""
    if len(relative.parts) > 1:
        return relative.parts[0]
    stem = COPY_SUFFIX.sub("", relative.stem)
    left = re.sub(r"\d\d_[a-z0-9]+(?:_[a-z0-9]+)*", " ", stem, count=1)
    left = re.sub(r"(?:^|(?<=[-_ ]))\d\d(?=[-_ ]|$)", " ", left).strip(" _-.")
    return left or stem


def kernel_env(log_path: Path) -> dict[str, str]:
    """The kernel's environment: the allow-list only, replay forced, the hub offline."""
    env = {k: v for k, v in os.environ.items() if k in ALLOWED_ENV or k.startswith("LC_")}
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


def _no_comments(source: str) -> str:
    """A cell's code for comparison: without comment-only lines, end-of-line comments (the
    editions differ there), blank lines and trailing spaces."""
    lines = []
    for line in source.strip().splitlines():
        code = re.sub(r"\s+#[^\"']*$", "", line)
        if code.strip() and not code.lstrip().startswith("#"):
            lines.append(code.rstrip())
    return "\n".join(lines)


@dataclass(frozen=True)
class Reference:
    """What the teacher's copy says about one lesson: the student edition's self-check cells and
    starter cells, by grade id, and the key's reference solutions."""

    checks: dict[str, str]  # grade id (`01-check_schema`) -> the cell's code
    starters: dict[str, str]  # `01-check_schema` -> the starter code of its answer cell
    solutions: tuple[str, ...]
    code: frozenset[str] = frozenset()  # every code cell of the student edition


@cache
def _nbbuild() -> Any:
    """scripts/nbbuild.py, which makes the student edition, loaded once under a private name (a
    module called `nbbuild` elsewhere on the path, e.g. in the working folder, is not taken)."""
    path = REPO_ROOT / "scripts" / "nbbuild.py"
    spec = importlib.util.spec_from_file_location("_toolcall_nbbuild", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@cache
def reference(lesson: str) -> Reference | None:
    """The reference of a lesson from the teacher's key (both editions), or None without one."""
    import nbformat

    keys = sorted(NOTEBOOKS_DIR.glob(f"*/{lesson}_*.ipynb")) if lesson else []
    if not keys:
        return None
    checks: dict[str, str] = {}
    starters: dict[str, str] = {}
    solutions: list[str] = []
    code: set[str] = set()
    for path in keys:
        key = nbformat.read(path, as_version=4)
        solutions += [_no_comments(c.source) for c in key.cells if _nbbuild()._is_hidden(c)]
        student = _nbbuild().student_notebook(key, path.stem, path.parent.name)
        code |= {_no_comments(c.source) for c in student.cells if c.cell_type == "code"}
        for cell in student.cells:
            meta = cell.metadata.get("nbgrader", {})
            if "grade_id" not in meta:
                continue
            if meta.get("solution"):
                starters[meta["grade_id"].removesuffix("-answer")] = _no_comments(cell.source)
            else:
                checks[meta["grade_id"]] = _no_comments(cell.source)
    solutions = list(dict.fromkeys(s for s in solutions if s))
    return Reference(checks, starters, tuple(solutions), frozenset(code))


def compare_with_reference(nb: Any, lesson: str, result: Result) -> dict[str, str]:
    """Fill `attempted`, `check_cells` and `answer_key`; return the trusted self-check code of
    each exercise (`01:check_schema` -> code) that this notebook still has unchanged."""
    ref = reference(lesson)
    code = [c for c in nb.cells if c.cell_type == "code"]
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in code}
    sources = [_no_comments(c.source) for c in code]
    if ref is None:
        result.check_cells = "no reference"
        return {}
    trusted: dict[str, str] = {}
    edited, deleted = [], []
    for grade_id, check in ref.checks.items():
        name = grade_id.split("-", 1)[1]
        if check in sources:
            trusted[grade_id.replace("-", ":", 1)] = check
        elif grade_id in by_id or any(name in CHECK_CALL.findall(c.source) for c in code):
            edited.append(name)
        else:
            deleted.append(name)
    problems = [f"edited: {', '.join(edited)}"] * bool(edited)
    problems += [f"deleted: {', '.join(deleted)}"] * bool(deleted)
    result.check_cells = "; ".join(problems) or "ok"
    for grade_id, starter in ref.starters.items():
        exercise = grade_id.replace("-", ":", 1)
        cell = by_id.get(f"{grade_id}-answer")
        at = code.index(cell) if cell is not None else _find(sources, starter)
        if at is None:
            continue  # no starter cell to compare with: left blank
        changed = sources[at] != starter
        # Cells the student added after the starter, before its check, are an attempt too.
        check = by_id.get(grade_id)
        end = code.index(check) if check is not None else _find(sources, ref.checks[grade_id])
        added = any(src not in ref.code for src in sources[at + 1 : end if end else at + 1])
        result.attempted[exercise] = "yes" if changed or added else "no"
    hidden = sum(1 for c in code if c.metadata.get("jupyter", {}).get("source_hidden"))
    copied = sum(1 for s in ref.solutions if s in sources)
    if hidden or copied:
        result.answer_key = f"yes: {copied} of {len(ref.solutions)} reference solutions" + (
            f", {hidden} collapsed solution cell(s)" if hidden else ""
        )
    else:
        result.answer_key = "no"
    return trusted


def _find(sources: list[str], wanted: str) -> int | None:
    """The index of the first cell whose code is `wanted`, or None."""
    return sources.index(wanted) if wanted in sources else None


def _log_lines(log_path: Path) -> list[dict[str, Any]]:
    """The complete JSON records of a grade log (a torn last line is skipped)."""
    if not log_path.exists():
        return []
    entries = []
    for line in log_path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and "exercise" in entry:
            entries.append(entry)
    return entries


def read_log(log_path: Path) -> dict[str, bool]:
    """The last verdict per exercise from a grade log (a torn last line is ignored)."""
    return {str(e["exercise"]): bool(e.get("passed")) for e in _log_lines(log_path)}


def run_notebook(
    nb: Any,
    folder: Path,
    log_path: Path,
    timeout: float,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    reload_before: dict[int, str] | None = None,
) -> tuple[str, dict[int, list[dict[str, Any]]]]:
    """Execute `nb` in place, in `folder`, one cell at a time (a broken notebook never raises);
    return how the run went and the verdict records each cell wrote, by cell index.

    A cell over `cell_timeout` seconds is interrupted (its output says so) and the run goes on;
    over `timeout` for the whole notebook the run stops. `reload_before` maps a cell index to the
    lesson whose check modules are reloaded (silently) before that cell runs."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    deadline = time.monotonic() + timeout
    status, records = "ok", {}

    def cell_limit(_cell: Any = None) -> int:
        """Seconds the next cell may run: `cell_timeout`, or what is left of `timeout`."""
        return max(1, int(min(cell_timeout, deadline - time.monotonic())))

    client = NotebookClient(
        nb,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={
            "ename": "CellTimeoutError",
            "evalue": f"the grader interrupted this cell after {cell_timeout:g} s",
            "traceback": [f"CellTimeoutError: interrupted after {cell_timeout:g} s"],
        },
        timeout_func=cell_limit,
        resources={"metadata": {"path": str(folder)}},
    )
    client.reset_execution_trackers()
    interrupted = 0
    try:
        with client.setup_kernel(env=kernel_env(log_path)):
            client.wait_for_reply(client.kc.kernel_info())
            for index, cell in enumerate(nb.cells):
                if time.monotonic() >= deadline:
                    status = f"timeout after {timeout:g} s"
                    break
                lesson = (reload_before or {}).get(index)
                if lesson:
                    reply = client.kc.execute(
                        RELOAD_CHECKS.format(lesson=lesson), silent=True, store_history=False
                    )
                    client.wait_for_reply(reply, None)
                seen = len(_log_lines(log_path))
                limit = cell_limit()
                started = time.monotonic()
                client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                if cell.cell_type == "code" and time.monotonic() - started >= limit:
                    interrupted += 1
                    cell.outputs.append(
                        nbformat.v4.new_output(
                            "stream", name="stderr", text=f"[grader] interrupted after {limit} s\n"
                        )
                    )
                new = _log_lines(log_path)[seen:]
                if new:
                    records[index] = new
    except CellTimeoutError:
        status = f"timeout after {timeout:g} s"
    except DeadKernelError:
        status = "kernel died"
    except RuntimeError as exc:  # nbclient reports a kernel that would not start this way
        status = f"failed to run: {exc}"
    if status == "ok":
        failed = sum(  # a cell tagged raises-exception shows a defect on purpose
            1
            for cell in nb.cells
            if any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            and "raises-exception" not in cell.get("metadata", {}).get("tags", [])
        )
        parts = [f"{failed} cell(s) raised"] * bool(failed)
        parts += [f"{interrupted} cell(s) interrupted after {cell_timeout:g} s"] * bool(interrupted)
        status = ", ".join(["ok", *parts])
    return status, records


def grade_notebook(
    path: Path,
    root: Path,
    timeout: float,
    executed: Path | None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
) -> Result:
    """Run one submitted notebook and read its verdicts, counting only the trusted ones."""
    import nbformat

    relative = path.relative_to(root)
    result = Result(notebook=relative.as_posix(), student=student_of(relative))
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # any unreadable file is the student's problem, not the grader's
        result.lesson = lesson_of(path, None)
        result.run = f"invalid notebook: {type(exc).__name__}"
        result.values = {name: MISSING for name in exercises_of(result.lesson)}
        return result
    result.lesson = lesson_of(path, nb)
    trusted = compare_with_reference(nb, result.lesson, result)
    trusted_cells: dict[int, set[str]] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            code = _no_comments(cell.source)
            names = {e for e, check in trusted.items() if check == code}
            if names:
                trusted_cells[index] = names
    reload_before = {index: result.lesson for index in trusted_cells}
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / f"verdicts-{os.urandom(6).hex()}.jsonl"
        result.run, records = run_notebook(
            nb, path.parent, log_path, timeout, cell_timeout, reload_before
        )
    verdicts: dict[str, dict[str, Any]] = {}
    forged = 0
    for index, entries in records.items():
        for entry in entries:
            if str(entry.get("exercise")) in trusted_cells.get(index, set()):
                verdicts[str(entry["exercise"])] = entry
            else:
                forged += 1
    touching = [
        str(i + 1)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and i not in trusted_cells and GRADING_INTERNALS.search(c.source)
    ]
    notes = [f"{forged} record(s) from other cells ignored"] * bool(forged)
    notes += [f"cell(s) {', '.join(touching)} touch the self-check code"] * bool(touching)
    result.verdict_log = "; ".join(notes) or "ok"
    called = {n for c in nb.cells if c.cell_type == "code" for n in CHECK_CALL.findall(c.source)}
    for name in exercises_of(result.lesson):
        if name in verdicts:
            passed = bool(verdicts[name].get("passed"))
            result.values[name] = PASSED if passed else NOT_YET
            result.hints[name] = str(verdicts[name].get("hint") or "")
            if passed:
                result.attempted[name] = "yes"
        elif name.split(":", 1)[1] in called:
            result.values[name] = ERROR  # the check is there but gave no trusted verdict
        else:
            result.values[name] = MISSING
    if executed is not None:
        target = executed / result.notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
    return result


def read_weights(path: Path | None) -> dict[str, float]:
    """`exercise,weight` rows of a CSV (a header row is fine); exercises not listed weigh 1."""
    if path is None:
        return {}
    weights = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            if len(row) < 2 or not row[0].strip() or row[0].strip().lower() == "exercise":
                continue
            try:
                weights[row[0].strip()] = float(row[1])
            except ValueError as exc:
                raise ValueError(
                    f"{path}: weight of {row[0]!r} is not a number: {row[1]!r}"
                ) from exc
    unknown = sorted(set(weights) - set(all_exercises()))
    if unknown:
        raise ValueError(
            f"{path}: no such exercise(s): {', '.join(unknown)} (see --weights-template)"
        )
    return weights


def score(results: list[Result], weights: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Set each result's score and maximum; return each student's total and maximum, counting
    the best submission of each lesson once."""
    best: dict[tuple[str, str], Result] = {}
    for r in results:
        exercises = exercises_of(r.lesson)
        r.max_score = sum(weights.get(e, 1.0) for e in exercises)
        r.score = sum(weights.get(e, 1.0) for e in exercises if r.values.get(e) == PASSED)
        key = (r.student, r.lesson)
        if key not in best or r.score > best[key].score:
            best[key] = r
    totals: dict[str, tuple[float, float]] = {}
    for (student, _), r in best.items():
        got, out_of = totals.get(student, (0.0, 0.0))
        totals[student] = (got + r.score, out_of + r.max_score)
    return totals


def grade_folder(
    folder: Path,
    out: Path,
    timeout: float = DEFAULT_TIMEOUT,
    executed: Path | None = None,
    jobs: int = 1,
    weights: dict[str, float] | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
) -> list[Result]:
    """Grade every `*.ipynb` under `folder` and write the table to `out` (rows in path order).

    `jobs` notebooks run at once, each in its own kernel (a class of 25 on a lab server)."""
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)

    def grade(path: Path) -> Result:
        print(f"grading {path.relative_to(folder).as_posix()} ...", flush=True)
        return grade_notebook(path, folder, timeout, executed, cell_timeout)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(grade, paths))
    write_table(results, out, weights or {})
    return results


def _number(value: float) -> str:
    return f"{value:g}"


def write_table(results: list[Result], out: Path, weights: dict[str, float] | None = None) -> None:
    """One row per notebook: who, which lesson, how the run went, the flags, the marks, then
    three columns per exercise of any lesson seen (verdict, attempted, hint); blank = other
    lesson."""
    totals = score(results, weights or {})
    lessons = sorted({r.lesson for r in results if r.lesson})
    exercises = [e for lesson in lessons for e in exercises_of(lesson)]
    head = ["student", "notebook", "lesson", "run", "check_cells", "answer_key", "verdict_log"]
    head += ["score", "max_score", "student_total", "student_max"]
    for e in exercises:
        head += [e, f"{e} attempted", f"{e} hint"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(head)
        for r in results:
            total, most = totals.get(r.student, (0.0, 0.0))
            row = [r.student, r.notebook, r.lesson, r.run, r.check_cells, r.answer_key]
            row += [r.verdict_log, _number(r.score), _number(r.max_score)]
            row += [_number(total), _number(most)]
            for e in exercises:
                row += [r.values.get(e, ""), r.attempted.get(e, ""), r.hints.get(e, "")]
            writer.writerow(row)


def write_weights_template(path: Path) -> None:
    """Every exercise of every lesson with weight 1, for the teacher to edit."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["exercise", "weight"])
        writer.writerows([e, 1] for e in all_exercises())


def main(argv: list[str] | None = None) -> None:
    """Command line: grade a folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folder",
        type=Path,
        nargs="?",
        help="folder of submitted .ipynb files (searched recursively)",
    )
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the CSV to write")
    parser.add_argument("--weights", type=Path, help="CSV of `exercise,weight` (default: 1 each)")
    parser.add_argument(
        "--weights-template",
        type=Path,
        help="write every exercise with weight 1 to this CSV and stop",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per notebook (default {DEFAULT_TIMEOUT})",
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=DEFAULT_CELL_TIMEOUT,
        help=f"seconds per cell before it is interrupted (default {DEFAULT_CELL_TIMEOUT})",
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
        help="also save each executed notebook (with its outputs) under this folder",
    )
    args = parser.parse_args(argv)
    if args.weights_template is not None:
        write_weights_template(args.weights_template)
        print(f"wrote {args.weights_template}")
        return
    if args.folder is None or not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    try:
        weights = read_weights(args.weights)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    results = grade_folder(
        args.folder.resolve(),
        args.out,
        args.timeout,
        args.executed,
        args.jobs,
        weights,
        args.cell_timeout,
    )
    print(f"wrote {args.out}: {len(results)} notebook(s)")


if __name__ == "__main__":
    main()
