"""Grade a folder of submitted notebooks in replay mode: a CSV of verdicts and a sheet of marks.

    python -m helpers.grade submissions/ --out grades.csv [--weights weights.csv]
        [--marks marks.csv] [--timeout 600] [--cell-timeout 180] [--jobs 2] [--executed run/]

The grader, not the student, holds the checks. For each submission and each exercise it starts a
fresh kernel that runs the answer key's own setup cells (from the grader's copy of the lesson),
then only the student's cells for that exercise (the answer cell and any cell added below it),
then the grader's own check: the lesson's check module is imported afresh, after the student's
code ran, from a read-only copy of `helpers/` made for that kernel alone. Values the student hands
over are made plain Python data first (a `dict` subclass with a lying `__eq__` becomes a dict),
and so is whatever the student's functions return. The kernel's state (the bindings of the
modules the checks and the kernel use, threads, signal handlers, trace and profile functions,
IPython's hooks) is read before the student's cells and again after the check, the second time
with the interpreter's own functions only (`KERNEL_STATE`); the verdict comes back with it over a
local socket opened for that one request. A changed state, check code changed while it ran, or a
second verdict refuses the verdict and flags the notebook. After each kernel the copy and the
checkout's `helpers/`, `data/`, the interpreter's start-up files and the kernel's spec are
compared with a snapshot taken at the start: a change refuses that kernel's verdicts, is undone,
and is flagged (with `--jobs` above 1, every kernel running then is run again alone to find
whose change it was).

The kernel inherits an allow-list of environment variables (no keys, tokens or proxies),
`LLM_MODE=replay` is forced, the Hugging Face hub is offline, its home (and IPython's and
Jupyter's folders) is a fresh folder of its own, and it talks over local sockets (no TCP ports to
collide). The handed-in notebooks are read before any kernel runs and graded from those bytes; one
that changes on disk meanwhile is put back, and the kernel that ran then is flagged. Whatever the
grader puts back is kept (`grader-undone-*` in the temporary folder). One grader per Python
environment runs at a time. A student's cell or a check longer than `--cell-timeout` is
interrupted; `--timeout` caps the time of one notebook (and of the key's own setup cells). A
notebook that cannot be read or graded becomes one row that says why; every other notebook is
still graded, and rows are written as they finish.

Answer cells are also read (AST) for code that reaches into the grading: assignments to
attributes of imported modules, `setattr`, `importlib`, `builtins`, `sys.modules`, `gc`,
`ctypes`, threads and processes, frames and code objects (`sys._getframe`, `.f_back`,
`.__globals__`...), trace, profile and audit hooks, `get_ipython` and magics, the checks' own
references, `__eq__`/`__hash__`/`__del__` overrides, `exec`/`eval`, file writes; names and texts
built from constants at run time (`"__glo" + "bals__"`, a reversed string) are read as the text
they build.
Such a notebook is flagged "needs review" (it is still graded). Reference solutions pasted as they
are score 0 and are flagged; a starter fixed by a small edit that happens to equal the key is not.

Two files: `--out` (one row per notebook: run, flags, score, and per exercise the verdict,
whether it was attempted, and the hint) and `--marks` (default: `<out>_marks.csv`, one row per
student: the best score of each lesson, the total, the mark in per cent with the weights, and the
flags that need review). `student` is the first folder under the submissions folder, or the file
name without the lesson's name (`ivanova_02_sync_loop.ipynb` -> `ivanova`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import csv
import difflib
import hashlib
import importlib
import inspect
import io
import os
import re
import secrets
import signal
import site
import sys
import tempfile
import threading
import time
import tokenize
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from helpers.edition import KERNEL_START_SECONDS, is_solution, student_notebook
from helpers.exercises._verdict import CORRECT
from helpers.exercises._verdict import NOT_YET as NOT_YET_TEXT
from helpers.lessons import CHECK_CALL, lesson_names
from helpers.paths import REPO_ROOT

# What a self-check prints, in either language.
PASS_MARKS, FAIL_MARKS = (CORRECT.en, CORRECT.ru), (NOT_YET_TEXT.en, NOT_YET_TEXT.ru)
PASSED, NOT_YET, ERROR, MISSING, COPIED = "passed", "not yet", "error", "missing", "key copied"
DEFAULT_TIMEOUT = 600
DEFAULT_CELL_TIMEOUT = 180  # honest setup cells took more than 60 s beside two busy cores
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
LANGUAGE_IN_CODE = re.compile(r"""\bset_language\(\s*["'](\w\w)["']\s*\)""")
# Student code that names the self-check machinery: shown to the teacher.
GRADING_INTERNALS = re.compile(
    r"LLM_GRADE_LOG|_verdict\b|\bRECORDED\b|Verdict\(|_grader_|helpers[/\\\\]exercises|"
    r"site-packages|\.pth\b|(?:site|user)customize|kernel\.json|toolcall-grader"
)
# A folder per lesson (`02`, `02_sync_loop`, `lesson 02`, `урок_02`): not a student's name. A
# name after the number must be the lesson's own (`01_ivanova/` is a student's folder).
LESSON_FOLDER = re.compile(r"^(?:lesson|урок)?[-_ ]?(\d\d)(?:[-_ ](\w+))?$", re.IGNORECASE)
# What a download, a file manager or a drive adds to a copy's name: ` (1)`, ` copy`, ` copy 2`,
# ` - Copy`, ` — копия`, `-copy`, `_copy2`, and `Copy of ` before it.
COPY_SUFFIX = re.compile(
    r"\s*\(\d+\)$|(?:\s*[-–—]\s*|[_ ])(?:copy|копия)(?:\s*\d+)?$|^copy of\s+", re.IGNORECASE
)
# A starter changed in at most this many lines is a fix (which may well equal the key), not a
# pasted reference solution.
SMALL_EDIT = 2
# What the grader copies for each kernel and watches in the checkout.
GRADER_TREES = ("helpers", "data", "notebooks")  # notebooks: the key
# The checkout it watches and puts back (the test suite points it at a private copy, so a
# developer's edits made while the tests run are not taken for a student's).
CHECKOUT = REPO_ROOT
UNDONE_IN: Path | None = None  # where the versions it puts back are kept (None: the temp folder)
STATE_MIME = "application/x.toolcall-grader-state+json"
MAX_RECORD = 4_000_000  # bytes a check request may send back
# How long the verdict's connection may stay silent (2 s cut a record short beside busy cores;
# a connection held open only delays the end of its kernel's turn, up to this).
RECEIVE_SECONDS = 30
# The modules whose bindings the kernel's state covers: those the checks and the request use,
# and those the kernel's messages and the display go through. (`helpers.*` is imported afresh
# for the check and compared inside the request, while the check runs.)
WATCHED_MODULES = (
    "builtins sys json json.decoder json.encoder json.scanner _json re copy math functools "
    "itertools operator collections collections.abc typing time threading _thread signal "
    "_signal socket _socket difflib string types dataclasses enum abc shlex random inspect "
    "hashlib hmac gc importlib importlib.util IPython IPython.display "
    "IPython.core.display_functions IPython.core.displaypub ipykernel.iostream "
    "ipykernel.zmqshell _frozen_importlib _frozen_importlib_external transformers.utils "
    "transformers.utils.chat_template_utils pydantic.main openai.types.chat.chat_completion "
    "openai.types.chat.chat_completion_chunk openai.types.chat.chat_completion_message "
    "openai.types.chat.chat_completion_message_tool_call"
).split()
WATCHED = f"name in {tuple(WATCHED_MODULES)!r}"
# Bindings that change in normal use (found by grading every lesson's honest answers):
# ipykernel binds `input` and IPython `sys.excepthook` anew for each cell, and an exception
# in any cell sets `sys.last_*`.
STATE_CHURN = frozenset(
    "builtins.input builtins.getpass sys.excepthook sys.last_type sys.last_value "
    "sys.last_traceback sys.last_exc".split()
)


# --- reading the notebooks -------------------------------------------------------------------


# CPython 3.11 builds every syntax tree with one shared recursion counter, so two threads that
# parse at once (`--jobs 2`) can fail with "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905): a notebook was left "not graded" by it in a test run.
_PARSING = threading.RLock()


def _parse(source: str) -> ast.Module:
    """`ast.parse`, one thread at a time, and again when the shared counter was thrown off by
    a parse outside the grader's lock (3.11 parses a source line to place a traceback's carets,
    in whatever thread formats one): the tree was built, only the counter's check failed."""
    with _PARSING:
        for attempt in range(3):
            try:
                return ast.parse(source)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc) or attempt == 2:
                    raise
    raise AssertionError("unreachable")  # pragma: no cover


def _meta(cell: Any, key: str) -> dict[str, Any]:
    """A cell's metadata entry `key` when it is a dict, else {} (a submission may hold anything)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    value = metadata.get(key) if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else {}


def _grade_id(cell: Any) -> str:
    value = _meta(cell, "nbgrader").get("grade_id")
    return value if isinstance(value, str) else ""


def _source(cell: Any) -> str:
    value = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(value, list):
        value = "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _code_cells(nb: Any) -> list[Any]:
    cells = nb.get("cells") if isinstance(nb, dict) else None
    return [c for c in cells or [] if isinstance(c, dict) and c.get("cell_type") == "code"]


def _no_comments(source: str) -> str:
    """A cell's code for comparison: without comment-only lines, end-of-line comments (the
    editions differ there), blank lines and trailing spaces. Comments are found by `tokenize`,
    so a quote inside one (`# don't`) or a `#` inside a string is read right."""
    text = source.strip()
    starts: dict[int, int] = {}  # line number -> column where its comment starts
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                starts[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):  # unfinished code: cut at any "#" after a space
        starts = {
            n: m.start()
            for n, line in enumerate(text.splitlines(), 1)
            if (m := re.search(r"(^|\s)#", line))
        }
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line[: starts[number]] if number in starts else line
        if code.strip():
            lines.append(code.rstrip())
    return "\n".join(lines)


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
    for cell in _code_cells(nb) if nb is not None else []:
        found = LESSON_IN_CODE.search(_source(cell))
        if found:
            return found.group(1) or found.group(2)
    found = LESSON_IN_NAME.match(path.name)
    return found.group(1) if found else ""


def language_of(nb: Any) -> str:
    """The edition a submission is: the language its setup cell chooses (English without one)."""
    for cell in _code_cells(nb):
        found = LANGUAGE_IN_CODE.search(_source(cell))
        if found and found.group(1) in ("en", "ru"):
            return found.group(1)
    return "en"


def _lesson_folder(part: str) -> bool:
    found = LESSON_FOLDER.match(_without_copy(part))
    if not found or not found[2]:
        return bool(found)
    return f"{found[1]}_{found[2].casefold()}" in lesson_names()


def _without_copy(name: str) -> str:
    """`name` without the marks of a copy (`ivanova (1)`, `ivanova copy`, `ivanova - Copy (2)`,
    `ivanova — копия` -> `ivanova`); the name itself when nothing else is left."""
    while (shorter := COPY_SUFFIX.sub("", name, count=1).strip()) not in (name, ""):
        name = shorter
    return name


@cache
def _lesson_at_the_ends() -> re.Pattern[str]:
    """Any of the key's lesson names (`01_tools_schema`, written `01-tools-schema` or
    `01 tools schema` too) at the start or the end of a file name, with its separator."""
    names = "|".join(r"[-_ ]".join(map(re.escape, n.split("_"))) for n in lesson_names())
    return re.compile(rf"^(?:{names})(?:[-_ ]+|$)|[-_ ]+(?:{names})$", re.IGNORECASE)


def student_of(relative: Path) -> str:
    """The student a submission belongs to, in lower case: its first folder that is not named
    after a lesson (`02/`, `lesson_02/`, `02_sync_loop/`; `01_ivanova/` is a student's), else its
    file name without the lesson's name (`Ivanova_02_sync_loop.ipynb`,
    `02_sync_loop-ivanova (1).ipynb` -> `ivanova`); a copy's mark (`ivanova (1)/`,
    `ivanova - Copy/`) is not part of the name. A file with no name but the lesson's
    (`lesson_01/01_tools_schema (1).ipynb`) is its own row, named by its path as it is
    (`lesson_01/01_tools_schema (1)`), so that two such files never become one student."""
    folders = [part for part in relative.parts[:-1] if not _lesson_folder(part)]
    if folders:
        return _without_copy(folders[0]).casefold()
    name = _without_copy(relative.stem)
    while (shorter := _lesson_at_the_ends().sub("", name, count=1)) != name:
        name = _without_copy(shorter) if shorter else shorter
    name = re.sub(
        r"(?:^|(?<=[-_ ]))(?:(?:lesson|урок)[-_ ]?)?\d\d(?=[-_ ]|$)", " ", name, flags=re.I
    )
    name = name.strip(" _-.")
    return name.casefold() if name else relative.with_name(relative.stem).as_posix()


# --- the teacher's key -----------------------------------------------------------------------


@dataclass(frozen=True)
class Exercise:
    """One exercise as the key has it: the cells run before the answer, the starter, the check."""

    name: str  # `01:check_schema`, the column name
    setup: tuple[Any, ...]  # the key's code cells before the answer cell (the checks left out)
    starter: str  # the starter code of the answer cell (comments dropped)
    check: str  # the student edition's check cell (comments dropped)
    arguments: str  # what the check cell hands to the check: `my_schema`, `reply, text, ...`
    solutions: tuple[str, ...]  # the key's reference solutions of this exercise


@dataclass(frozen=True)
class Reference:
    """What the teacher's copy says about one lesson in one language."""

    exercises: dict[str, Exercise]
    code: frozenset[str]  # every code cell of the student edition (comments dropped)
    solutions: tuple[str, ...]
    imported: frozenset[str]  # the names its cells import (the setup's)
    # The lesson's own helpers that its checks compare with and its cells import, which no
    # reference solution calls: an answer that calls one has not done the exercise.
    borrowed: frozenset[str]


def _check_arguments(source: str) -> str:
    """The arguments of the last `check_*(...)` call of a check cell, as source text."""
    tree = _parse(source)
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", "") or getattr(node.func, "attr", "")).startswith("check_")
    ]
    call = calls[-1]
    parts = [ast.get_source_segment(source, a) or "" for a in call.args]
    parts += [f"{k.arg}={ast.get_source_segment(source, k.value)}" for k in call.keywords]
    return ", ".join(parts)


def _without_checks(cell: Any) -> Any:
    """A copy of a key's solution cell, as setup of a later exercise, without its statements that
    call a self-check: the check cell that imports the checks is not part of the setup."""
    lines = cell.source.splitlines(keepends=True)
    try:
        body = _parse(cell.source).body
    except SyntaxError:
        return cell
    for node in reversed(body):
        call = node.value if isinstance(node, ast.Expr) else None
        called = ast.unparse(call.func).split(".")[-1] if isinstance(call, ast.Call) else ""
        if CHECK_CALL.match(called + "("):
            del lines[node.lineno - 1 : node.end_lineno]
    found = copy.deepcopy(cell)
    found.source = "".join(lines).rstrip() + "\n"
    return found


@cache
def reference(lesson: str, lang: str = "en") -> Reference | None:
    """The reference of a lesson from the teacher's key in `lang`, or None without one."""
    import nbformat

    keys = sorted((CHECKOUT / "notebooks" / lang).glob(f"{lesson}_*.ipynb")) if lesson else []
    if not keys:
        return None
    key = nbformat.read(keys[0], as_version=4)
    solutions: dict[str, list[str]] = {}
    for i, cell in enumerate(key.cells):
        if is_solution(cell):
            # The exercise's check cell comes right before its solution in the key.
            before = [c for c in key.cells[:i] if c.cell_type == "code" and not is_solution(c)]
            found = CHECK_CALL.findall(before[-1].source) if before else []
            if found:
                solutions.setdefault(found[0], []).append(_no_comments(cell.source))
    student = student_notebook(key, keys[0].stem, lang)
    code = [c for c in student.cells if c.cell_type == "code"]
    exercises: dict[str, Exercise] = {}
    for i, cell in enumerate(code):
        grade_id = _grade_id(cell)
        if not grade_id or _meta(cell, "nbgrader").get("solution"):
            continue
        function = grade_id.split("-", 1)[1]
        answer = code[i - 1]
        # The key's cells before this answer, earlier exercises' reference solutions included
        # (an answer may use an earlier one: 04's extract calls name_from_id), checks left out.
        ids = [c.get("id") for c in key.cells]
        before = key.cells[: ids.index(answer.get("id"))] if answer.get("id") in ids else []
        setup = [
            _without_checks(c) if is_solution(c) else c
            for c in before
            if c.cell_type == "code" and (is_solution(c) or not CHECK_CALL.search(c.source))
        ]
        exercises[f"{lesson}:{function}"] = Exercise(
            name=f"{lesson}:{function}",
            setup=tuple(setup),
            starter=_no_comments(answer.source),
            check=_no_comments(cell.source),
            arguments=_check_arguments(cell.source),
            solutions=tuple(solutions.get(function, ())),
        )
    every = tuple(dict.fromkeys(s for found in solutions.values() for s in found))
    imported = frozenset().union(*(_imported(_parsed(c.source)[0]) for c in code))
    in_solutions = frozenset().union(*(_mentioned(_parsed(s)[0]) for s in every))
    borrowed = (_compared_with(lesson) & imported) - in_solutions
    sources = frozenset(_no_comments(c.source) for c in code)
    return Reference(exercises, sources, every, imported, borrowed)


def _imported(tree: ast.AST | None) -> set[str]:
    """The names a cell's imports bind (`import a.b` binds `a`)."""
    found: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found |= {a.asname or a.name for a in node.names}
    return found


def _mentioned(tree: ast.AST | None) -> set[str]:
    """Every name a cell reads, attribute it names or name it imports (by its own name)."""
    nodes = list(ast.walk(tree)) if tree is not None else []
    return (
        {n.id for n in nodes if isinstance(n, ast.Name)}
        | {n.attr for n in nodes if isinstance(n, ast.Attribute)}
        | {a.name for n in nodes if isinstance(n, ast.ImportFrom) for a in n.names}
    )


def _compared_with(lesson: str) -> frozenset[str]:
    """The functions and classes a lesson's check module imports from the series' helpers
    (not the checks' own machinery, not constants), by the names they have there."""
    path = CHECKOUT / "helpers" / "exercises" / f"n{lesson}.py"
    tree = _parse(path.read_text(encoding="utf-8")) if path.is_file() else None
    return frozenset(
        alias.name
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("helpers.")
        and not (node.module or "").startswith(("helpers.exercises", "helpers.i18n"))
        for alias in node.names
        if not alias.name.isupper()
    )


def _changed(a: str, b: str) -> int:
    """How many lines an edit from `a` to `b` changes (or adds, or removes)."""
    a_lines, b_lines = a.splitlines(), b.splitlines()
    opcodes = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def answer_cells(nb: Any, ref: Reference, exercise: Exercise) -> list[int] | None:
    """Indices (among the code cells) of the student's cells for `exercise`: its answer cell and
    the cells added below it, up to its check cell; None when no answer cell is left. A copy of
    the answer cell (Jupyter's copy keeps its metadata, the same answer id) is one of them: they
    run in order, so the last definition wins, as it does in Jupyter."""
    code = _code_cells(nb)
    sources = [_no_comments(_source(c)) for c in code]
    grade_id = exercise.name.replace(":", "-", 1)
    ids = [_grade_id(c) for c in code]
    if f"{grade_id}-answer" in ids:
        start = ids.index(f"{grade_id}-answer")
    elif exercise.starter in sources:
        start = sources.index(exercise.starter)
    else:  # the answer cell lost its metadata: the student's cells just above its check cell
        checks = [i for i, s in enumerate(sources) if ids[i] == grade_id or s == exercise.check]
        start = checks[0] if checks else 0
        while start > 0 and not ids[start - 1] and sources[start - 1] not in ref.code:
            start -= 1
        if not checks or start == checks[0]:
            return None
    end = start + 1
    while end < len(code):
        if ids[end] == f"{grade_id}-answer":  # a copy of the answer cell
            end += 1
            continue
        if ids[end] or sources[end] == exercise.check or sources[end] in ref.code:
            break
        if CHECK_CALL.search(sources[end]):
            break
        end += 1
    return list(range(start, end))


# --- reading the student's code for patching -------------------------------------------------

SUSPECT_MODULES = frozenset(
    "importlib builtins gc ctypes cffi threading _thread multiprocessing concurrent subprocess "
    "signal inspect weakref atexit pickle marshal dill cloudpickle pdb bdb trace code codeop "
    "runpy os posix nt shutil socket _socket select selectors pty faulthandler sysconfig site "
    "IPython ipykernel jupyter_client zmq traitlets sitecustomize usercustomize timeit "
    "doctest pkgutil base64 binascii codecs zlib pwd".split()
)
# Modules that are often an attribute of another (`glob.os`, `dataclasses.inspect`,
# `logging.sys`): reached that way they are the same module, so they are flagged the same.
MODULE_ATTRS = frozenset(
    "sys os posix nt inspect socket _socket gc subprocess ctypes builtins importlib threading "
    "_thread multiprocessing pty weakref".split()
)
# A process of its own outlives the cell and the kernel: forked, detached or killed by name.
PROCESS_CALLS = frozenset("fork forkpty setsid setpgid setpgrp killpg daemon_threads".split())
SUSPECT_CALLS = frozenset(
    "exec eval compile __import__ setattr delattr globals locals vars breakpoint dir".split()
)
SUSPECT_METHODS = frozenset(
    "__eq__ __ne__ __hash__ __bool__ __index__ __instancecheck__ __subclasscheck__ __del__ "
    "__getattribute__ __getattr__ __init_subclass__ __set_name__ __reduce__ __reduce_ex__ "
    "__copy__ __deepcopy__".split()
)
SUSPECT_SYS = frozenset(
    "modules meta_path path_hooks path_importer_cache path settrace setprofile gettrace "
    "getprofile _getframe _current_frames addaudithook audit monitoring excepthook displayhook "
    "breakpointhook setrecursionlimit setswitchinterval stdout stderr stdin prefix base_prefix "
    "exec_prefix executable orig_argv argv".split()
)
# Attributes (read, written, or named in a string) that lead from a value to frames, code,
# globals or the interpreter's internals: the routes to the check's own variables.
SUSPECT_ATTRS = frozenset(
    "f_back f_locals f_globals f_builtins f_code f_trace tb_frame tb_next gi_frame cr_frame "
    "ag_frame gi_code __globals__ __code__ __closure__ cell_contents co_consts __subclasses__ "
    "__builtins__ __dict__ __class__ __bases__ __base__ __mro__ __getattribute__ __setattr__ "
    "__traceback__ __self__ __func__ __wrapped__ __defaults__ __kwdefaults__ __loader__ "
    "__spec__ __file__ __import__ __reduce__ __reduce_ex__ walk_stack walk_tb extract_stack "
    "currentframe exc_info exception StackSummary capture_locals format_stack stack "
    "getouterframes getinnerframes".split()
)
# Of those, the ones that are routes to frames whatever they are reached from: an imported name
# (`from traceback import walk_stack`) or a keyword (`capture_locals=True`) is flagged too.
FRAME_ROUTES = frozenset(
    "walk_stack walk_tb extract_stack currentframe exc_info StackSummary capture_locals "
    "format_stack getouterframes getinnerframes _getframe _current_frames".split()
)
# Of those, the names no other object in these lessons has: flagged whatever they are read from
# (`s = sys; s.settrace(...)`, `from sys import settrace`).
SYS_ONLY = SUSPECT_SYS - frozenset(
    "modules path audit monitoring stdout stderr stdin prefix executable argv".split()
)
# A file of the key (its notebooks hold the hidden solutions) named in a string.
KEY_FILES = re.compile(r"\.ipynb\b|\bnotebooks[/\\]|\bsrc[/\\]\d\d_")
WRITE_METHODS = frozenset(
    "write_text write_bytes unlink rmdir rename touch chmod symlink_to hardlink_to".split()
)
CHECK_MODULE = re.compile(r"^n\d\d$")
# Names in a lesson's check module that hold the reference or its battery, not a check.
CHECKS_OWN = re.compile(r"^_|battery|cases|reference|solution|expected|verdict", re.IGNORECASE)


def _parsed(source: str, magics: bool = True) -> tuple[ast.AST | None, list[str]]:
    """A cell's syntax tree; IPython's own syntax (`%magic`, `!shell`) is translated first and
    named, as it runs code the cell does not show (`magics=False`: a string's text, plain
    Python only)."""
    try:
        return _parse(source), []
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in a string's text
        if not magics:
            return None, []
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return _parse(TransformerManager().transform_cell(source)), [
            "uses IPython magics or shell commands (%, !)"
        ]
    except Exception:  # not Python even for IPython: it cannot run, so it cannot patch
        return None, []


def _folded(node: ast.AST, known: dict[str, str], depth: int = 0) -> str | None:
    """The text a string expression builds from constants alone (`"__glo" + "bals__"`,
    `"...".join(...)`, `text[::-1]`, an f-string, `chr(95)`, a name bound to such a text):
    what a name built at run time will read, so it is checked like a plain string."""
    if depth > 20:
        return None
    fold = lambda inner: _folded(inner, known, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left), fold(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [fold(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        text, bounds = fold(node.value), (node.slice.lower, node.slice.upper, node.slice.step)
        values = [None if b is None else _int_constant(b) for b in bounds]
        if text is None or any(v is None for v, b in zip(values, bounds, strict=True) if b):
            return None
        return text[slice(*values)] if values[2] != 0 else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner, method = fold(node.func.value), node.func.attr
        arguments = [fold(a) for a in node.args]
        if owner is not None and method == "join" and len(node.args) == 1:
            items = getattr(node.args[0], "elts", None)
            parts = [fold(item) for item in items] if items is not None else [None]
            return owner.join(parts) if all(p is not None for p in parts) else None
        if owner is not None and method in ("lower", "upper", "strip") and not node.args:
            return getattr(owner, method)()
        if owner is not None and method == "replace" and len(arguments) == 2:
            if all(a is not None for a in arguments):
                return owner.replace(*arguments)
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "chr" and node.args:
        code = node.args[0]
        if isinstance(code, ast.Constant) and isinstance(code.value, int):
            return chr(code.value) if 0 <= code.value < 0x110000 else None
    return None


def _int_constant(node: ast.AST) -> int | None:
    """An int constant, negative ones (`-1`) included."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_constant(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _texts_built(tree: ast.AST) -> list[str]:
    """The texts a cell builds from constants at run time (not the plain constants: those are
    read as they are), for the same checks as its plain strings."""
    known: dict[str, str] = {}
    for _ in range(3):  # names bound to texts built from names bound to texts...
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    value = _folded(node.value, known)
                    if value is not None:
                        known[target.id] = value
    built = []
    for node in ast.walk(tree):
        plain = isinstance(node, ast.JoinedStr) and not any(
            isinstance(v, ast.FormattedValue) for v in node.values
        )  # f"..." without a placeholder is a plain string, read as one
        if isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Subscript, ast.Call)) and not plain:
            value = _folded(node, known)
            if value is not None and value not in built:
                built.append(value)
    return built


def patching(source: str, depth: int = 0, known: frozenset[str] = frozenset()) -> list[str]:
    """What a student's cell does that could reach into the grading, one phrase each (code in
    a string, as `timeit` or `exec` runs it, is read too: `in a string: ...`)."""
    tree, found = _parsed(source, magics=depth == 0)
    if tree is None:
        return []
    imported = _imported(tree) | known  # `known`: what the lesson's own cells imported
    # A name bound to an imported module (or to one of its attributes) is the module too.
    aliases = [
        (t.id, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    ]
    grown = True
    while grown:
        before = len(imported)
        imported |= {name for name, value in aliases if _root_name(value) in imported}
        grown = len(imported) > before

    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}

    def root(node: ast.AST) -> str:
        return _root_name(node, through_calls=True)

    def dotted(node: ast.AST) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
        return ".".join(reversed(parts))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and root(part) in imported:
                        found.append(f"assigns {dotted(part) or root(part)}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            for name in names:
                if name.split(".")[0] in SUSPECT_MODULES:
                    found.append(f"imports {name}")
            module = getattr(node, "module", None) or ""
            for alias in node.names if isinstance(node, ast.ImportFrom) else []:
                if alias.name == "*" or (module == "sys" and alias.name in SUSPECT_SYS):
                    found.append(f"imports {alias.name} from {module}")
                elif alias.name in FRAME_ROUTES:
                    found.append(f"imports {alias.name} from {module} (a route to frames)")
                elif (
                    alias.name.startswith("_")
                    and not alias.name.startswith("__")
                    and not module.startswith("helpers")
                ):
                    found.append(f"imports {module}.{alias.name} (a module's private name)")
            if module.startswith("helpers.exercises"):
                for theirs in [a.name for a in node.names if CHECKS_OWN.search(a.name)]:
                    found.append(f"imports {module}.{theirs} (the checks' own code)")
            for alias in node.names:  # a check module under another name hides its `nNN.`
                full = f"{module}.{alias.name}" if module else alias.name
                if full.startswith("helpers.exercises") and alias.asname:
                    found.append(f"imports {full} as {alias.asname}")
        elif isinstance(node, ast.Name):
            if node.id in ("__builtins__", "builtins", "get_ipython", "__import__"):
                found.append(f"uses {node.id}")
            elif node.id in SUSPECT_CALLS and id(node) not in called:
                found.append(f"names {node.id} (to call it by another name)")
            elif isinstance(node.ctx, ast.Store) and node.id.startswith("check_"):
                found.append(f"defines {node.id}")
        elif isinstance(node, ast.Attribute):
            if (dotted(node.value) == "sys" and node.attr in SUSPECT_SYS) or node.attr in SYS_ONLY:
                found.append(f"uses sys.{node.attr}")
            elif node.attr in SUSPECT_ATTRS:
                found.append(f"uses .{node.attr}")
            elif (
                node.attr in MODULE_ATTRS
                and root(node) in imported
                and dotted(node.value) != node.attr  # `socket.socket` is the class
            ):
                found.append(f"uses {dotted(node) or node.attr} (a module)")
            elif node.attr in PROCESS_CALLS:
                found.append(f"uses .{node.attr} (a process of its own)")
            elif (
                node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
                and not CHECK_MODULE.match(node.value.id)
            ):
                found.append(f"uses {node.value.id}.{node.attr} (a module's private name)")
            elif isinstance(node.value, ast.Name) and CHECK_MODULE.match(node.value.id):
                if CHECKS_OWN.search(node.attr):
                    found.append(f"uses {node.value.id}.{node.attr} (the checks' own code)")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", "") or ""
            if name in SUSPECT_CALLS:
                found.append(f"calls {name}()")
            elif name in FRAME_ROUTES:
                found.append(f"calls {name}() (a route to frames)")
            for keyword in node.keywords:
                if keyword.arg in FRAME_ROUTES:
                    found.append(f"passes {keyword.arg}= (a route to frames)")
            if name in ("getattr", "hasattr") and len(node.args) > 1:
                what = node.args[1]
                if isinstance(what, ast.Constant) and what.value in SUSPECT_ATTRS:
                    found.append(f"calls {name}() for {what.value}")
                elif not isinstance(what, ast.Constant) and root(node.args[0]) in imported:
                    found.append(f"calls {name}() on a module with a computed name")
            if name == "open" and _writes(node):
                found.append("opens a file for writing")
            attr = getattr(node.func, "attr", "")
            if attr in WRITE_METHODS or (attr == "open" and _writes(node, method=True)):
                found.append(f"writes files (.{attr})")
            elif attr == "replace" and len(node.args) == 1 and not node.keywords:
                found.append("writes files (.replace)")  # a path's; str.replace takes two
            if attr in ("attrgetter", "methodcaller"):
                found.append(f"calls {attr}()")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in SUSPECT_METHODS or node.name.startswith("check_"):
                found.append(f"defines {node.name}")
            elif node.name in SUSPECT_ATTRS:  # a property named __class__ runs in isinstance()
                found.append(f"defines {node.name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += _text_flags(node.value, depth, NAMED_IN_TEXT, "names {} in a string")
    for text in _texts_built(tree):
        found += _text_flags(text, depth, BUILT_NAMES, "builds the name {} at run time")
    if GRADING_INTERNALS.search(source) and "names the self-check machinery" not in found:
        found.append("names the self-check machinery")
    return list(dict.fromkeys(found))


# The names a plain string is flagged for, and the wider set for a text built at run time (no
# honest answer builds "exec" or "os" out of pieces).
NAMED_IN_TEXT = SUSPECT_ATTRS | SUSPECT_METHODS
BUILT_NAMES = NAMED_IN_TEXT | SUSPECT_CALLS | SUSPECT_MODULES | SYS_ONLY


def _text_flags(text: str, depth: int, names: frozenset[str], says: str) -> list[str]:
    """What a string's text shows: a suspect name (`says` with the name), the self-check's
    machinery, a key file, and the flags of the code it holds (read as a cell of its own)."""
    found = [says.format(text)] if text in names else []
    if GRADING_INTERNALS.search(text):
        found.append("names the self-check machinery")
    if KEY_FILES.search(text):
        found.append("names a notebook or lesson file")
    if depth < 3 and ("\n" in text or ";" in text or "import" in text):
        inner = patching(text, depth + 1) if len(text) < 100_000 else []
        found += [f"in a string: {phrase}" for phrase in inner]
    return found


def _root_name(node: ast.AST, through_calls: bool = False) -> str:
    """The name an expression like `a.b[c].d` (or, `through_calls`, `a.b().c`) starts from; ""
    for anything else. `[module][0]` starts from the module."""
    steps = (
        (ast.Attribute, ast.Subscript, ast.Call)
        if through_calls
        else (ast.Attribute, ast.Subscript)
    )
    while isinstance(node, steps):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return next((n for n in (_root_name(e, through_calls) for e in node.elts) if n), "")
    return node.id if isinstance(node, ast.Name) else ""


def _writes(call: ast.Call, method: bool = False) -> bool:
    """Whether an open call's mode writes: `mode=` or the second argument (`open(path, mode)`,
    `gzip.open`), and for a method also a first argument spelt like a mode (`Path(p).open("w")`).
    """
    modes = [k.value for k in call.keywords if k.arg in ("mode", None)] + call.args[1:2]
    first = call.args[0] if method and call.args else None
    if isinstance(first, ast.Constant) and re.fullmatch(r"[rwxabt+]{1,4}", str(first.value)):
        modes.append(first)
    for mode in modes:
        if not isinstance(mode, ast.Constant) or not isinstance(mode.value, str):
            return True  # a computed mode: cannot tell, so look
        if set(mode.value) & set("wax+"):
            return True
    return False


# --- the grader's own files ------------------------------------------------------------------


def _tree_files(root: Path, trees: tuple[str, ...]) -> dict[str, bytes]:
    """Every file under `root/<tree>` (no byte-code caches), by relative path."""
    files = {}
    for tree in trees:
        for path in sorted((root / tree).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def _startup_files() -> list[Path]:
    """Files every new Python or kernel reads at start: `.pth` and `*customize.py` files of the
    site folders, and the python3 kernel's spec (a student's code could plant code there)."""
    folders = [Path(p) for p in [*site.getsitepackages(), site.getusersitepackages()]]
    found = [p for f in folders if f.is_dir() for p in sorted(f.glob("*.pth"))]
    found += [f / n for f in folders for n in ("sitecustomize.py", "usercustomize.py")]
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        spec = Path(KernelSpecManager().get_kernel_spec("python3").resource_dir)
        found += sorted(p for p in spec.glob("*") if p.is_file())
    except Exception:  # no spec file: the kernel is found on the path instead
        pass
    # The teacher's own IPython and Jupyter read these at start (the home is found through
    # the password database too: a kernel's HOME is its own folder, the real one is not).
    homes = {Path.home()}
    with contextlib.suppress(ImportError, KeyError):
        import pwd

        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    for home in sorted(homes):
        found += sorted((home / ".ipython").glob("profile_*/startup/*"))
        found += sorted((home / ".ipython").glob("profile_*/ipython*config.py"))
        found += sorted((home / ".jupyter").glob("jupyter_*config.*"))
    return found


class GraderFiles:
    """The helpers and data as they were when grading began, and the guard around each kernel.

    Each kernel gets its own read-only copy (made from the snapshot, hashed); after it ends, the
    copy, the checkout's `helpers/` and `data/` and the start-up files are compared with the
    snapshot. Anything changed is put back (new files removed) and reported."""

    def __init__(
        self,
        root: Path | None = None,
        submissions: Path | None = None,
        skip: Path | None = None,
        watch: tuple[Path, ...] = (),
    ) -> None:
        self.root = root = CHECKOUT if root is None else root
        self.files = _tree_files(root, GRADER_TREES)
        # The handed-in notebooks as they were read, before any student's code ran: a kernel
        # that overwrites another student's notebook is caught, the notebook put back, and it is
        # graded from these bytes (`skip`: the executed copies the grader writes itself).
        self.submissions, self.skip = submissions, skip
        self.handed_in = self._notebooks()
        self.undone: Path | None = None  # where the changed versions it put back are kept
        self.kept = 0
        self.digest = self._digest(self.files)
        # Start-up files and the files the grader reads or writes itself (`watch`: the weights;
        # `wrote`: each executed copy once written), put back like the checkout.
        self.startup = {p: (p.read_bytes() if p.exists() else None) for p in _startup_files()}
        self.startup |= {p: (p.read_bytes() if p.exists() else None) for p in watch}
        self.own = set(watch)
        self.lock = threading.Lock()
        # The kernels running now (their shared files may change under them), and whether one
        # runs alone: a kernel whose run saw the shared files changed is run again alone.
        self.turns = threading.Condition()
        self.running: list[KernelRun] = []
        self.alone, self.waiting = False, 0
        # Processes below the grader before any kernel: not a student's (another test's server).
        become_subreaper()  # on Linux; elsewhere only the processes seen below a kernel count
        self.before = descendants(os.getpid())

    def left_behind(self, run: KernelRun, seen: set[int]) -> int:
        """Stop what a stopped kernel left alive: the processes `seen` below it before it
        stopped (its process group is killed with it, so a live one had detached) and the
        orphans the grader inherited. An orphan whose working folder is another running
        kernel's is that kernel's (it ran there); one whose folder is nobody's may be any
        running kernel's, so all of them are suspect, as for a changed file (run again alone).
        Zombies of this kernel are collected, not counted. Returns how many were left alive."""
        for _ in range(40):  # the killed group's processes take a moment to end
            table = _processes()
            if not any(table.get(pid, (0, "Z"))[1] not in "ZX" for pid in seen):
                break
            time.sleep(0.05)
        with self.turns:
            others = [r.root for r in self.running if r is not run and r.root]
            orphans = {pid for pid, (parent, _) in table.items() if parent == os.getpid()}
            alive = {
                pid
                for pid in ((orphans | seen) & set(table)) - self.before - {run.pid}
                if table[pid][1] not in "ZX"
                and not any(_folder_of(pid).startswith(root) for root in others)
            }
            if others and [pid for pid in alive if not _folder_of(pid).startswith(run.root)]:
                for each in self.running:
                    each.suspect = True
        stop_processes(alive | {pid for pid in seen if table.get(pid, (0, ""))[1] == "Z"})
        return len(alive)

    @contextlib.contextmanager
    def kernel(self, alone: bool = False) -> Iterator[KernelRun]:
        """A turn to run one kernel; `alone`: wait until no other kernel runs, and let none
        start until this one is done."""
        run = KernelRun()
        with self.turns:
            if alone:
                self.waiting += 1
                self.turns.wait_for(lambda: not self.running and not self.alone)
                self.waiting -= 1
                self.alone = True
            else:
                self.turns.wait_for(lambda: not self.alone and not self.waiting)
            self.running.append(run)
        try:
            yield run
        finally:
            with self.turns:
                self.running.remove(run)
                self.alone = self.alone and not alone
                self.turns.notify_all()

    @staticmethod
    def _digest(files: dict[str, bytes]) -> str:
        total = hashlib.sha256()
        for name in sorted(files):
            total.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        return total.hexdigest()

    def make_copy(self, folder: Path) -> None:
        """Write the snapshot under `folder`, read-only."""
        for name, content in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            path.chmod(0o444)
        for tree in GRADER_TREES:
            (folder / tree).mkdir(parents=True, exist_ok=True)
            for path in [folder / tree, *(p for p in (folder / tree).rglob("*") if p.is_dir())]:
                path.chmod(0o555)

    def copy_changed(self, folder: Path) -> bool:
        """Whether the copy under `folder` differs from the snapshot."""
        try:
            return self._digest(_tree_files(folder, GRADER_TREES)) != self.digest
        except OSError:
            return True

    def _notebooks(self) -> dict[str, bytes]:
        if self.submissions is None:
            return {}
        found, skip = {}, self.skip.resolve() if self.skip is not None else None
        for path in sorted(self.submissions.rglob("*.ipynb")):
            if skip is not None and path.resolve().is_relative_to(skip):
                continue
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                found[path.relative_to(self.submissions).as_posix()] = path.read_bytes()
        return found

    def wrote(self, path: Path, content: bytes) -> None:
        """Write one of the grader's own files (an executed copy) and watch it from now on: a
        later kernel that rewrites it ("Correct!" in a classmate's copy) is undone."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        with self.lock:
            self.startup[path] = content
            self.own.add(path)

    def handed_in_bytes(self, path: Path) -> bytes | None:
        """A submission as it was when grading began (None: not one of them)."""
        if self.submissions is None or not path.is_relative_to(self.submissions):
            return None
        return self.handed_in.get(path.relative_to(self.submissions).as_posix())

    def _keep(self, name: str, content: bytes) -> None:
        """Keep a changed version before it is put back (it may be someone's work, not a
        student's tampering): under `undone`, one folder per change."""
        if self.undone is None:
            self.undone = Path(tempfile.mkdtemp(prefix="grader-undone-", dir=UNDONE_IN))
        self.kept += 1
        relative = Path(name).relative_to(Path(name).anchor)  # a start-up file's is absolute
        kept = self.undone / str(self.kept) / relative
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(content)

    def _put_back(
        self, base: Path, before: dict[str, bytes], now: dict[str, bytes], shown: str = ""
    ) -> list[str]:
        """Write back under `base` every file of `before` that `now` has changed, remove the
        new ones (each kept first); the names, with `shown` in front."""
        changed = []
        for name in sorted(set(now) | set(before)):
            if now.get(name) == before.get(name):
                continue
            changed.append(shown + name)
            if name in now:
                self._keep(shown + name, now[name])
            path = base / name
            if name in before:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(before[name])
            else:
                path.unlink(missing_ok=True)
        return changed

    def restore_checkout(self) -> list[str]:
        """Put back what changed in the checkout and the start-up files; name each file. Each
        changed or new file is kept under `undone` first."""
        changed = []
        with self.lock:
            changed += self._put_back(self.root, self.files, _tree_files(self.root, GRADER_TREES))
            if self.submissions is not None:
                now = self._notebooks()
                changed += self._put_back(self.submissions, self.handed_in, now, "submissions/")
            for path in set(_startup_files()) | set(self.startup):
                if path in self.own and path.is_symlink():  # a link put in its place
                    path.unlink()
                before = self.startup.get(path)
                after = path.read_bytes() if path.exists() else None
                if after != before:
                    changed.append(str(path))
                    if after is not None:
                        self._keep(str(path), after)
                    if before is None:
                        path.unlink(missing_ok=True)
                    else:
                        path.write_bytes(before)
        if changed:  # any kernel running now may have done it
            with self.turns:
                for run in self.running:
                    run.suspect = True
        return changed


@dataclass
class KernelRun:
    """One kernel's turn: `suspect` when shared files changed or a process was left behind
    while it ran; `pid`, the kernel's process once it started."""

    suspect: bool = False
    pid: int = 0
    root: str = ""  # its temporary folder (the kernel works in root/work)


# --- processes a kernel leaves behind (Linux) ------------------------------------------------
# A student's code can fork, detach (setsid) and outlive its kernel: to rewrite the marks sheet
# once the grader ends, to keep changing shared files while other kernels run, or to relay the
# verdict socket. As a "child subreaper" the grader inherits every such orphan, so it can find
# the processes left after a kernel stopped, stop them, and refuse that kernel's verdict.


def become_subreaper() -> bool:
    """Make orphaned descendants of this process its children (Linux `prctl`); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, tuple[int, str]]:
    """Every process /proc shows: pid -> (parent pid, state letter); {} without /proc."""
    found = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rpartition(")")[2].split()
            found[int(name)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):  # it ended meanwhile
            continue
    return found


def descendants(pid: int, table: dict[int, tuple[int, str]] | None = None) -> set[int]:
    """The processes below `pid` (children, theirs, ...)."""
    table = _processes() if table is None else table
    below, grown = set(), {pid}
    while grown:
        grown = {child for child, (parent, _) in table.items() if parent in grown} - below
        below |= grown
    return below


def _folder_of(pid: int) -> str:
    """A process's working folder, with a final separator ("" when it cannot be read)."""
    try:
        return os.path.join(os.readlink(f"/proc/{pid}/cwd"), "")
    except OSError:
        return ""


def stop_processes(pids: set[int]) -> None:
    """Kill each process and collect it if it is this process's child (no zombie is left)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def _unlock(folder: Path) -> None:
    """Make a read-only copy deletable again."""
    for path in [folder, *folder.rglob("*")]:
        try:
            path.chmod(0o755 if path.is_dir() else 0o644)
        except OSError:
            pass


# --- one exercise in one fresh kernel --------------------------------------------------------

# The kernel's state, as the grader compares it before the student's code and after the check.
# It reads the interpreter through its own C functions only, each verified (a builtin function
# of the right module and name cannot be made in Python), never through names a student's code
# can rebind (`len`, `sorted`, `isinstance`, `id`...).
KERNEL_STATE = r"""
def _grader_state(watched, final=False):
    builtin, tuple_, problems, state = "".join.__class__, ().__class__, [], {}

    def real(fn, module, name):
        try:
            ok = fn.__class__ is builtin and fn.__name__ == name
            ok = ok and fn.__self__.__name__ == module
        except BaseException:
            ok = False
        if not ok:
            problems.append(module + "." + name + " is not the interpreter's own")
        return ok

    import sys as maybe_sys
    gettrace = maybe_sys.gettrace
    if not real(gettrace, "sys", "gettrace"):
        return state, problems, None
    real_sys = gettrace.__self__
    names = real_sys.__dict__
    if [n for n in ("getprofile", "_getframe", "_current_frames")
            if not real(names.get(n), "sys", n)]:
        return state, problems, None
    frame_builtins = names["_getframe"]().f_builtins
    ident, digest = frame_builtins.get("id"), frame_builtins.get("hash")
    if not (real(ident, "builtins", "id") and real(digest, "builtins", "hash")):
        return state, problems, None
    if gettrace() is not None:
        problems.append("a trace function is set (sys.settrace)")
    frame = names["_getframe"]()
    while frame is not None:  # a trace taken away leaves its local tracer on the frames it saw
        if frame.f_trace is not None:
            problems.append("the check's frames were traced (sys.settrace)")
            break
        frame = frame.f_back
    if names["getprofile"]() is not None:
        problems.append("a profile function is set (sys.setprofile)")
    monitoring = names.get("monitoring")
    if monitoring is not None and real(monitoring.get_tool, "sys.monitoring", "get_tool"):
        for tool in [0, 1, 2, 3, 4, 5]:
            if monitoring.get_tool(tool) is not None:
                problems.append("a sys.monitoring tool is registered")
    module_type, modules = real_sys.__class__, names["modules"]
    # Read through the types' own descriptors: `type(x)` and these run none of the student's code.
    kind, function, same_text = module_type.__class__, real.__class__, "".__class__.__eq__
    kind_module, kind_dict, kind_mro = (
        kind.__dict__[n].__get__ for n in ("__module__", "__dict__", "__mro__"))
    code_of, defaults_of, keywords_of = (
        function.__dict__[n].__get__ for n in ("__code__", "__defaults__", "__kwdefaults__"))

    def is_class(value):
        for base in kind_mro(kind(value)):
            if base is kind:
                return True
        return False

    def bind(key, value):
        state[key] = ident(value)
        if kind(value) is function:  # its code or defaults swapped in place
            found = (ident(code_of(value)), ident(defaults_of(value)), ident(keywords_of(value)))
            state[key + "()"] = digest(found)
    if modules.__class__ is not {}.__class__:
        problems.append("sys.modules was replaced")
        return state, problems, None
    # Threads: each must be one the threading module knows, and none may be running code of
    # a cell (the student's) but this one.
    here = names["_getframe"]()
    cells = here.f_code.co_filename.rpartition("/")[0] + "/"
    known = modules["threading"].__dict__["_active"]
    for thread, frame in names["_current_frames"]().items():
        if known.__class__ is not {}.__class__ or thread not in known:
            problems.append("a thread the threading module does not know runs")
        while frame is not None and frame is not here:
            if frame.f_code.co_filename.startswith(cells):
                problems.append("another thread runs the student's code")
                break
            frame = frame.f_back
    # Each import hook by its place: one inserted in front of the others (in place, so the
    # binding is the same list) changes a place; one appended, as `six` does, is asked last.
    for name in ("meta_path", "path_hooks"):
        for place, hook in enumerate(names[name]):
            state["sys.%s[%d]" % (name, place)] = ident(hook)
    getset = kind.__dict__["__dict__"].__class__
    BUILT_LATER = ("__slotnames__", "__signature__")
    # Modules whose objects' attributes change in normal use (the kernel's output streams, the
    # thread objects, random's generator): only their bindings are compared.
    LIVELY = ("sys", "IPython", "ipykernel", "threading", "_thread", "random", "signal", "socket")
    for name in [n for n in modules]:
        module = modules.get(name)
        if name.__class__ is not "".__class__:
            problems.append("sys.modules has a name that is not a str")
            continue
        mine = same_text(name, "helpers") is True or "".__class__.startswith(name, "helpers.")
        if not mine:  # the request imports `helpers` afresh and compares it itself
            state["sys.modules[" + name + "]"] = ident(module)  # a module swapped for another
        if watched(name) is not True or module is None:
            continue
        lively = name.partition(".")[0] in LIVELY
        if module.__class__ is not module_type:
            state[name] = -1
            continue
        state[name] = ident(module)
        try:
            for key, value in module.__dict__.items():
                if not key.startswith("__") or key in ("__import__", "__build_class__"):
                    bind(name + "." + key, value)
                    # A class of the module's own: each binding of its dict (a method patched
                    # in place, `inspect.Parameter.replace` or a file loader's `get_data`).
                    if is_class(value) and same_text(name, kind_module(value)) is True:
                        # Each binding of its own, and which names it has (an inherited method
                        # shadowed by a patch); copy adds __slotnames__, pydantic builds its
                        # validators and __signature__ on first use, by themselves.
                        own = [(m, inner) for m, inner in kind_dict(value).items()
                               if m not in BUILT_LATER and not m.startswith("__pydantic")]
                        for member, inner in own:
                            bind(name + "." + key + "." + member, inner)
                        state[name + "." + key + ".{}"] = digest(tuple_([m for m, _ in own]))
                    elif (not lively and not is_class(value)
                          and watched(kind_module(kind(value))) is True):
                        # An object of a watched module's class: its own attributes (a
                        # method replaced on `json._default_decoder`), read through the slot.
                        for base in kind_mro(kind(value)):
                            slot = kind_dict(base).get("__dict__")
                            if slot is not None and slot.__class__ is getset:
                                inner = slot.__get__(value)
                                if inner.__class__ is {}.__class__:
                                    members = tuple_({}.__class__.keys(inner))
                                    state[name + "." + key + "@"] = digest(members)  # added
                                    for member, each in {}.__class__.items(inner):
                                        bind(name + "." + key + "@" + member, each)
                                break
        except BaseException:
            state[name] = -2
    # copy's dispatch tables, by their contents (an entry added in place, such as dict copied
    # as itself, makes the check's "did the answer change its input" test see nothing).
    copying = modules.get("copy")
    if copying is not None and copying.__class__ is module_type:
        for table in ("_deepcopy_dispatch", "_copy_dispatch"):
            entries = copying.__dict__.get(table)
            if entries.__class__ is {}.__class__:
                pairs = [(ident(k), ident(v)) for k, v in {}.__class__.items(entries)]
                state["copy." + table + "[...]"] = digest(tuple_(pairs))
    signal = modules.get("_signal")
    if signal is not None and real(signal.getsignal, "_signal", "getsignal"):
        for number in signal.valid_signals():
            handler = signal.getsignal(number)
            try:
                state["signal %d" % number] = (0).__class__.__int__(handler)
            except BaseException:
                state["signal %d" % number] = ident(handler)
    gc = modules.get("gc")
    if gc is not None and real(gc.disable, "gc", "disable"):
        if final:
            gc.disable()  # no finalizer of the student's runs from here until the kernel ends
        state["gc.callbacks"] = digest(tuple_([ident(c) for c in gc.callbacks]))
    try:
        shell = modules["IPython"].get_ipython()
        manager = shell.input_transformer_manager
        lists = {"input_transformers_post": shell.input_transformers_post,
                 "ast_transformers": shell.ast_transformers,
                 "cleanup_transforms": manager.cleanup_transforms,
                 "line_transforms": manager.line_transforms}
        lists.update(shell.events.callbacks)
        for name, each in lists.items():
            state["ipython " + name] = digest(tuple_([ident(x) for x in each]))
        for key, value in shell.__dict__.items():
            if value.__class__ is function or value.__class__ is builtin:
                state["ipython shell." + key] = ident(value)
    except BaseException:
        problems.append("IPython's shell could not be read")
    return state, problems, real_sys
"""


# Run after the key's setup and before the student's cells: the kernel's state as the grader
# compares it later (nothing of the student's has run yet, so this output can be trusted).
PREAMBLE = """
def _grader_preamble():
    from IPython.display import publish_display_data
    state, problems, _ = _grader_state(lambda name: {watched})
    publish_display_data({{"{mime}": {{"state": state, "problems": problems}}}})

_grader_preamble()
del _grader_preamble, _grader_state
"""

# Sent after the student's cells: import the lesson's checks afresh from the grader's copy, run
# the check on plain copies of the student's values, then, after the last call of the student's
# code, read the kernel's state with the interpreter's own functions and send the verdict with it
# over a local socket that the grader opened for this request and accepts one connection on.
CHECK_REQUEST = """
def _grader_{nonce}(_arguments):
    import functools, sys, types
    # What is kept for later is immutable (tuples, str, bool): code that runs later in this
    # kernel (a hook) may reach this frame's objects, but cannot change those.
    problems = ()
    if sys.gettrace() is not None or sys.getprofile() is not None:
        problems += ("a trace or profile function was set when the check began",)
    # The state now as well as after the check: a patch that takes itself away once it has
    # acted (on the check's import, say) is seen here, while it is still in place.
    start, found, _ = _grader_state(lambda name: {watched})
    start, problems = tuple(start.items()), problems + tuple(found)
    passed, hint, error = False, "", ""

    def plain(value, depth=0):
        kind = type(value)
        if depth > 100 or kind in (str, int, float, bool, bytes, type(None)):
            return value
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, bool):
            return bool(int.__int__(value))
        if isinstance(value, int):
            return int.__int__(value)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, dict):
            return {{plain(k, depth + 1): plain(v, depth + 1) for k, v in dict.items(value)}}
        if isinstance(value, list):
            return [plain(v, depth + 1) for v in list.__iter__(value)]
        if isinstance(value, tuple):
            return tuple(plain(v, depth + 1) for v in tuple.__iter__(value))
        if isinstance(value, types.FunctionType):
            @functools.wraps(value)
            def answer(*args, **kwargs):
                return plain(value(*args, **kwargs))
            return answer
        return value

    def marked(value):
        # A function is its code, defaults and closure too: each can be swapped in place.
        if isinstance(value, types.FunctionType):
            return (value, value.__code__, value.__defaults__, value.__kwdefaults__)
        return (value,)

    def checks_code():
        # The check's own modules and their classes, to see them changed while the check ran:
        # a binding replaced, a function's code swapped, or a name added (a global that shadows
        # a builtin, a property or __getattribute__ put on a class).
        found = {{}}
        for name, module in list(sys.modules.items()):
            if name == "helpers" or name.startswith("helpers."):
                names = tuple(vars(module).items())
                found[name] = {{key: marked(value) for key, value in names}}
                for key, value in names:
                    if isinstance(value, type) and value.__module__ == name:
                        inner = tuple(vars(value).items())
                        found[name + "." + key] = {{k: marked(v) for k, v in inner}}
        return found

    def added_normally(key, value):
        # What the interpreter adds by itself: a submodule imported while the check ran, the
        # warnings registry, copyreg's __slotnames__ (copy.deepcopy of an instance).
        if key in ("__warningregistry__", "__slotnames__"):
            return True
        return isinstance(value, types.ModuleType) and value.__name__.startswith("helpers.")

    try:
        for name in [n for n in sys.modules if n == "helpers" or n.startswith("helpers.")]:
            del sys.modules[name]
        sys.path.insert(0, {copy!r})
        # Import hooks defined by the student's code (in __main__) are taken out.
        def theirs(hook):
            kind = hook if isinstance(hook, type) else type(hook)
            return getattr(kind, "__module__", "") == "__main__"
        sys.meta_path[:] = [f for f in sys.meta_path if not theirs(f)]
        sys.path_hooks[:] = [h for h in sys.path_hooks if not theirs(h)]
        sys.path_importer_cache.clear()
        import importlib, re
        re.purge()  # a pattern the check compiles at import must not come from a planted cache
        module = importlib.import_module("helpers.exercises.n{lesson}")
        strays = sorted(
            n for n, m in sys.modules.items()
            if (n == "helpers" or n.startswith("helpers."))
            and not str(getattr(m, "__file__", None) or {copy!r}).startswith({copy!r})
        )
        if strays:
            raise ImportError("the check code did not come from the grader's copy: "
                              + ", ".join(strays))
        before = checks_code()
        args, kwargs = _arguments()
        verdict = getattr(module, "{function}")(
            *[plain(a) for a in args], **{{k: plain(v) for k, v in kwargs.items()}}
        )
        shown = getattr(verdict, "hint", "")
        passed = getattr(verdict, "passed", None) is True
        hint = str.__str__(shown) if isinstance(shown, str) else ""
        after = checks_code()
        changed = []
        for name, names in before.items():
            now = after.get(name, {{}})
            for key, value in names.items():
                same = now.get(key)
                if same is None or len(same) != len(value) or any(
                    a is not b for a, b in zip(same, value)
                ):
                    changed.append(name + "." + key)
            for key, value in now.items():
                if key not in names and not added_normally(key, value[0]):
                    changed.append(name + "." + key + " (added)")
        changed = sorted(changed)
        if changed:
            changed = ", ".join(changed[:4]) + (", ..." if len(changed) > 4 else "")
            problems += ("the check's code changed while it ran: " + changed,)
    except BaseException as exc:
        error = str.__str__(type(exc).__name__ + ": " + str(exc)[:300])
    _grader_send_{nonce}(passed is True, hint, error, problems, start)


def _grader_send_{nonce}(passed, hint, error, problems, start):
    # From here on only the interpreter's own functions are called, each verified first.
    text, tuple_, mapping = "".__class__, ().__class__, {{}}.__class__
    passed = passed is True
    hint, error = text.__str__(hint), text.__str__(error)
    problems = tuple_([text.__str__(p) for p in tuple_.__iter__(problems)])
    state, found, real_sys = _grader_state(lambda name: {watched}, final=True)
    problems = problems + tuple_(found)
    for name, value in tuple_.__iter__(start):  # changed in between: not what it was before
        if mapping.get(state, name, value) != value:
            state[name] = -3
    state = tuple_(mapping.items(state))
    kind = (0).__class__.__class__
    sockets = real_sys.modules.get("_socket") if real_sys is not None else None
    socket = sockets.__dict__.get("socket") if sockets.__class__ is real_sys.__class__ else None
    flags = kind.__dict__["__flags__"].__get__(socket) if socket.__class__ is kind else 0
    if not (flags & 256 and kind.__dict__["__name__"].__get__(socket) == "socket"):
        raise RuntimeError("the socket type is not the interpreter's own")
    lines = ["{nonce}", "1" if passed else "0"]
    for part in (hint, error, "\\n".join(problems)):
        lines.append(text.encode(part, "utf-8").hex())
    for name, value in state:
        lines.append(text.encode(name, "utf-8").hex() + " %d" % value)
    record = text.encode("\\n".join(lines), "utf-8")  # whole before connecting: a busy
    channel = socket(1, 1)  # machine must not pause the kernel between the connect and the send
    socket.connect(channel, {address!r})
    socket.sendall(channel, record)
    socket.close(channel)

_grader_{nonce}(lambda: (lambda *a, **k: (a, k))({arguments}))
del _grader_{nonce}, _grader_send_{nonce}, _grader_state
"""


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell binds and the names it mentions (for `needed_setup`)."""
    try:
        tree = _parse(source)
    except SyntaxError:
        return set(), set()
    bound, mentioned = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            mentioned.add(node.id)
            if not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        # A name changed in place (`messages.append(...)`, `tool_map[k] = f`) counts as bound.
        changed = None
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            changed = node.value.func
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            changed = next(
                (t for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))), None
            )
        while isinstance(changed, (ast.Attribute, ast.Subscript)):
            changed = changed.value
        if isinstance(changed, ast.Name):
            bound.add(changed.id)
    return bound, mentioned | bound


def needed_setup(setup: tuple[Any, ...], sources: list[str]) -> list[Any]:
    """The key's setup cells the student's `sources` can depend on: the first one (imports,
    language, client), and, going back from the end, every cell that binds or touches a name
    that a later needed cell (or the student's code) mentions. The rest of the lesson (its
    demonstrations, its requests to the model) does not run: it cannot change the verdict."""
    wanted: set[str] = set()
    for source in sources:
        wanted |= _names(source)[1]
    keep = []
    for index in range(len(setup) - 1, -1, -1):
        bound, mentioned = _names(_source(setup[index]))
        if index == 0 or bound & wanted:
            keep.append(setup[index])
            wanted |= mentioned
    return keep[::-1]


def kernel_env(
    copy_root: Path | None = None, lang: str = "en", home: Path | None = None
) -> dict[str, str]:
    """The kernel's environment: the allow-list only, replay forced, the hub offline, the
    grader's copy of `helpers` first on the path (the checkout is taken off it). With `home`,
    the kernel's home and IPython's and Jupyter's own folders are a fresh folder of its own: a
    start-up file an answer writes there dies with that kernel instead of running in every
    later kernel (and the teacher's own Jupyter)."""
    env = {k: v for k, v in os.environ.items() if k in ALLOWED_ENV or k.startswith("LC_")}
    if home is not None:
        env.update(
            {
                "HOME": str(home),
                "USERPROFILE": str(home),
                "IPYTHONDIR": str(home / ".ipython"),
                "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"),
            }
        )
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    path = [p for p in path if Path(p).resolve() != REPO_ROOT.resolve()]
    if copy_root is not None:
        path.insert(0, str(copy_root))
    env.update(
        {
            "PYTHONPATH": os.pathsep.join(path),
            "PYTHONDONTWRITEBYTECODE": "1",
            "LLM_MODE": "replay",
            "LLM_LANG": lang,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if not env["PYTHONPATH"]:
        del env["PYTHONPATH"]
    return env


@dataclass
class Outcome:
    """What one exercise's kernel gave: the verdict (or why none), and the outputs to show."""

    value: str = ERROR
    hint: str = ""
    note: str = ""  # how the run went, when not well
    outputs: dict[int, list[Any]] = field(default_factory=dict)  # code cell index -> outputs
    check_outputs: list[Any] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)  # the grader's files it changed
    runtime: list[str] = field(default_factory=list)  # what it changed in the kernel's runtime
    suspect: bool = False  # shared files changed while it ran (another kernel may have done it)


def _stop(manager: Any, client: Any) -> None:
    """Shut a kernel down, remove its connection files and close the client's channels (nbclient
    leaves them open when it did not make the kernel: a heartbeat thread and sockets per kernel,
    so a class's grading ran out of file handles), whatever state the kernel is in."""
    from jupyter_core.utils import run_sync

    if client.kc is not None:  # first: the manager's cleanup ends the sockets' context
        with contextlib.suppress(Exception):
            client.kc.stop_channels()
        client.kc = None
    try:
        if run_sync(manager.is_alive)():
            run_sync(manager.shutdown_kernel)(now=True)
        run_sync(manager.cleanup_resources)()
    except Exception:  # already gone: nothing to stop
        pass


def read_record(data: bytes, nonce: str) -> dict[str, Any] | None:
    """The verdict a check request sent over its socket (see CHECK_REQUEST), or None when it is
    not one: `passed`, `hint`, `error`, `problems` and the kernel's `state`."""
    try:
        lines = data.decode("utf-8").split("\n")
        if len(lines) < 5 or lines[0] != nonce or lines[1] not in ("0", "1"):
            return None
        hint, error, problems = (bytes.fromhex(x).decode("utf-8") for x in lines[2:5])
        state = {}
        for line in lines[5:]:
            name, value = line.split(" ")
            state[bytes.fromhex(name).decode("utf-8")] = int(value)
    except ValueError:  # UnicodeDecodeError is one
        return None
    return {
        "passed": lines[1] == "1",
        "hint": hint,
        "error": error,
        "problems": [p for p in problems.split("\n") if p],
        "state": state,
    }


def _receive(listener: Any, found: list[bytes]) -> None:
    """Append to `found` everything sent on each connection made to `listener`, until it is
    closed (a thread of its own: the kernel's record can be bigger than a socket's buffer)."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:  # closed: the kernel has ended
            return
        with connection:
            connection.settimeout(RECEIVE_SECONDS)
            chunks, size = [], 0
            try:
                while size < MAX_RECORD:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            except OSError:  # a timeout is one
                pass
            found.append(b"".join(chunks))


def changed_state(before: dict[str, Any], after: dict[str, int]) -> list[str]:
    """What was changed or removed between the kernel's state before the student's code and
    after the check: `json.loads` (a module's binding), `threads`, `signal 14`, `ipython
    ast_transformers`... (a binding added since, as a lazy import does, is not a change)."""
    return sorted(k for k, v in before.items() if k not in STATE_CHURN and after.get(k) != v)


def _preamble_state(outputs: list[Any]) -> dict[str, Any] | None:
    for out in outputs:
        found = out.get("data", {}).get(STATE_MIME) if isinstance(out, dict) else None
        if isinstance(found, dict) and isinstance(found.get("state"), dict):
            return found
    return None


def _printed_a_pass(outputs: list[Any]) -> bool:
    """Whether the check cell printed "Correct!" and no "Not yet:" (either language): what the
    check printed in the kernel, beside what it sent (a verdict changed on its way, by a hook on
    the output or a relay of the socket, leaves the printed one as it was)."""
    text = "".join(
        str(o.get("text", "")) for o in outputs if isinstance(o, dict) and o.get("name") == "stdout"
    )
    return any(mark in text for mark in PASS_MARKS) and not any(m in text for m in FAIL_MARKS)


def _verdict_of(
    outcome: Outcome,
    received: list[bytes],
    nonce: str,
    preamble: dict[str, Any] | None,
    status: str,
    refusals: list[str] | None = None,
) -> None:
    """Set `outcome`'s verdict from what the check request sent, refusing it when the kernel's
    runtime changed, more than one record came, or the request did not end well."""
    records = [read_record(data, nonce) for data in received]
    runtime = []
    if preamble is None:
        runtime.append("the kernel's state before the answer was not read")
    elif preamble.get("problems"):
        runtime.append("; ".join(map(str, preamble["problems"])))
    if len(received) > 1:
        runtime.append(f"{len(received)} verdicts were sent instead of one")
    record = records[0] if len(records) == 1 else None
    if record is not None:
        runtime += record["problems"]
        if record["passed"] and not _printed_a_pass(outcome.check_outputs):
            runtime.append("the verdict sent is a pass, the verdict the check printed is not")
        if preamble is not None:
            changed = changed_state(preamble["state"], record["state"])
            if changed:
                runtime.append("changed: " + ", ".join(changed[:8]))
    runtime += refusals or []  # last: the kernel's own reasons are the more telling ones
    outcome.runtime = runtime
    if outcome.tampered:
        outcome.value, outcome.hint = ERROR, "verdict refused: the grader's files were changed"
    elif runtime:
        outcome.value = ERROR
        outcome.hint = "verdict refused: the kernel's runtime was changed (" + "; ".join(runtime)
        outcome.hint = outcome.hint[:400] + ")"
    elif record is None or status not in ("ok", ""):
        outcome.value = ERROR
        outcome.hint = "no verdict: " + (outcome.note or "the check did not answer")
    elif record["error"]:
        outcome.value, outcome.hint = ERROR, record["error"]
    else:
        outcome.value = PASSED if record["passed"] else NOT_YET
        outcome.hint = record["hint"]


def run_exercise(
    cells: list[Any],
    exercise: Exercise,
    lang: str,
    files: GraderFiles,
    cell_timeout: float,
    deadline: float,
    alone: bool = False,
) -> Outcome:
    """Grade one exercise in a fresh kernel: the key's setup, the kernel's state, the student's
    `cells`, the check. `alone`: while no other kernel runs (to know who changed shared files)."""
    import socket

    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    outcome = Outcome()
    nonce = secrets.token_hex(8)
    lesson = exercise.name.split(":", 1)[0]
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp, files.kernel(alone) as run_token:
        root = Path(tmp)
        run_token.root = os.path.join(os.path.realpath(root), "")
        copy_root, work, address = root / "grader", root / "work", root / "verdict"
        files.make_copy(copy_root)
        work.mkdir()
        request = KERNEL_STATE + CHECK_REQUEST.format(
            nonce=nonce,
            address=str(address),
            watched=WATCHED,
            copy=str(copy_root),
            lesson=lesson,
            function=exercise.name.split(":", 1)[1],
            arguments=exercise.arguments,
        )
        check_cell = nbformat.v4.new_code_cell(request)
        state_cell = nbformat.v4.new_code_cell(
            KERNEL_STATE + PREAMBLE.format(watched=WATCHED, mime=STATE_MIME)
        )
        wanted = [_source(c) for c in cells] + [exercise.arguments]
        setup = [copy.deepcopy(c) for c in needed_setup(exercise.setup, wanted)]
        student = [nbformat.v4.new_code_cell(_source(c)) for c in cells]
        run = nbformat.v4.new_notebook()
        run.cells = [*setup, state_cell, *student, check_cell]
        status: dict[int, str] = {}

        bounded = {id(c) for c in student} | {id(check_cell)}

        def limit(cell: Any) -> int:
            """The student's cells and the check get `cell_timeout`; the key's own cells only the
            notebook's time (a slow machine must not make them the student's interrupted cell)."""
            left = deadline - time.monotonic()
            return max(1, int(min(cell_timeout, left) if id(cell) in bounded else left))

        def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
            status[cell_index] = str(execute_reply.get("content", {}).get("status", ""))

        manager = AsyncKernelManager(
            kernel_name="python3", transport="ipc", ip=str(root / "kernel")
        )
        client = NotebookClient(
            run,
            km=manager,
            allow_errors=True,
            interrupt_on_timeout=True,
            error_on_timeout={
                "ename": "CellTimeoutError",
                "evalue": f"the grader interrupted this cell after {cell_timeout:g} s",
                "traceback": [f"CellTimeoutError: interrupted after {cell_timeout:g} s"],
            },
            timeout_func=limit,
            startup_timeout=KERNEL_START_SECONDS,
            resources={"metadata": {"path": str(work)}},
            on_cell_executed=executed,
        )
        problems, received = [], []
        keys_processes: set[int] = set()
        refusals: list[str] = []  # what refuses the verdict, found outside the kernel
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        receiver = threading.Thread(target=_receive, args=(listener, received), daemon=True)
        try:
            home = root / "home"
            home.mkdir()
            with client.setup_kernel(env=kernel_env(copy_root, lang, home), cwd=str(work)):
                run_token.pid = int(getattr(manager.provisioner, "pid", 0) or 0)
                for index, cell in enumerate(run.cells):
                    if time.monotonic() >= deadline:
                        problems.append("the notebook's time ran out")
                        break
                    if cell is check_cell:  # the one connection the verdict comes on
                        # Bound under another name and renamed once it listens: a connect to
                        # `address` never meets a socket file that refuses it.
                        listener.bind(str(address) + ".new")
                        listener.listen(8)
                        os.replace(str(address) + ".new", address)
                        receiver.start()
                    started, allowed = time.monotonic(), limit(cell)
                    client.execute_cell(cell, index)
                    if cell is state_cell and run_token.pid:  # the key's own, before the answer
                        keys_processes = descendants(run_token.pid)
                    if time.monotonic() - started >= allowed and cell is not check_cell:
                        cell.outputs.append(
                            nbformat.v4.new_output(
                                "stream",
                                name="stderr",
                                text=f"[grader] interrupted after {allowed} s\n",
                            )
                        )
                        problems.append(f"interrupted after {allowed} s")
                    failed = [o for o in cell.outputs if o.get("output_type") == "error"]
                    tagged = "raises-exception" in cell.metadata.get("tags", [])
                    if failed and cell in setup and not tagged:
                        problems.append(f"the key's setup raised {failed[0].get('ename')}")
        except CellTimeoutError:
            problems.append("the notebook's time ran out")
        except DeadKernelError:
            problems.append("kernel died")
        except RuntimeError as exc:  # nbclient reports a kernel that would not start this way
            problems.append(f"failed to run: {exc}")
        except Exception as exc:  # the kernel's messages broke (a student patched json...)
            problems.append(f"the kernel stopped answering ({type(exc).__name__})")
        finally:  # the kernel is ours (nbclient only stops kernels it made itself)
            below = descendants(run_token.pid) if run_token.pid else set()
            _stop(manager, client)
            left = files.left_behind(run_token, below - keys_processes)
            if left:
                refusals.append(f"{left} process(es) of the answer outlived the kernel")
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the receiver's accept
            listener.close()
            if receiver.is_alive():
                receiver.join(10)
        outcome.tampered = ["the grader's copy"] * files.copy_changed(copy_root)
        shared = files.restore_checkout()
        outcome.tampered += shared
        outcome.suspect = bool(shared) or run_token.suspect
        _unlock(copy_root)
    outcome.suspect = outcome.suspect or run_token.suspect
    outcome.outputs = {i: c.outputs for i, c in enumerate(student)}
    outcome.check_outputs = list(check_cell.outputs)
    outcome.note = ", ".join(dict.fromkeys(problems))
    preamble = _preamble_state(state_cell.get("outputs", []))
    check_status = status.get(run.cells.index(check_cell), "")
    if any(o.get("output_type") == "error" for o in check_cell.outputs):
        check_status = "error"
    _verdict_of(outcome, received, nonce, preamble, check_status, refusals)
    return outcome


# --- one notebook ----------------------------------------------------------------------------


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
    review: list[str] = field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0


def grade_notebook(
    path: Path,
    root: Path,
    timeout: float,
    executed: Path | None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    files: GraderFiles | None = None,
) -> Result:
    """Grade one submitted notebook, one fresh kernel per exercise; never raises."""
    relative = path.relative_to(root)
    result = Result(notebook=relative.as_posix(), student=student_of(relative))
    try:
        _grade(path, result, timeout, executed, cell_timeout, files or GraderFiles())
    except Exception as exc:  # one broken notebook is one row that says why
        result.run = f"not graded: {type(exc).__name__}: {str(exc)[:200]}"
        for name in exercises_of(result.lesson):
            result.values.setdefault(name, MISSING)
    return result


def _grade(
    path: Path,
    result: Result,
    timeout: float,
    executed: Path | None,
    cell_timeout: float,
    files: GraderFiles,
) -> None:
    import nbformat

    try:
        handed_in = files.handed_in_bytes(path)
        if handed_in is None:
            nb = nbformat.read(path, as_version=4)
        else:  # as it was before any kernel ran: another answer may have written to it since
            nb = nbformat.reads(handed_in.decode("utf-8"), as_version=4)
    except Exception as exc:  # any unreadable file is the student's problem, not the grader's
        result.lesson = lesson_of(path, None)
        result.run = f"invalid notebook: {type(exc).__name__}"
        result.values = {name: MISSING for name in exercises_of(result.lesson)}
        return
    result.lesson = lesson_of(path, nb)
    lang = language_of(nb)
    ref = reference(result.lesson, lang)
    names = exercises_of(result.lesson)
    if ref is None:
        result.check_cells = "no reference"
        result.values = {name: MISSING for name in names}
        return
    code = _code_cells(nb)
    sources = [_no_comments(_source(c)) for c in code]
    written = {i for i, s in enumerate(sources) if s not in ref.code}
    for i in sorted(written):
        found = patching(_source(code[i]), known=ref.imported)
        if found:
            result.review.append(f"cell {i + 1}: {', '.join(found)}")
    _compare_checks(code, sources, ref, result)
    hidden = sum(1 for c in code if _meta(c, "jupyter").get("source_hidden"))
    # The key's own collapsed solution cells in the notebook: the key was handed in, so an answer
    # equal to the key's is scored as copied. Without them equal text is only flagged: a short
    # answer written the obvious way (lesson 00's three values, a four-line loop) is the key's.
    the_key = any(
        s in ref.solutions
        for c, s in zip(code, sources, strict=True)
        if _meta(c, "jupyter").get("source_hidden")
    )
    fixes: set[str] = set()  # reference solutions reached by a small edit of a starter
    deadline = time.monotonic() + timeout
    notes = []
    for name in names:
        exercise = ref.exercises.get(name)
        at = answer_cells(nb, ref, exercise) if exercise else None
        if exercise is None or at is None:
            result.values[name], result.attempted[name] = MISSING, "no"
            continue
        mine = [sources[i] for i in at]
        result.attempted[name] = "yes" if mine != [exercise.starter] else "no"
        used = sorted(ref.borrowed & set().union(*(_mentioned(_parsed(s)[0]) for s in mine)))
        if used:
            result.review.append(
                f"{name}: calls {', '.join(used)}, the lesson's own helper the check compares with"
            )
        fixes |= {s for s in mine if _changed(exercise.starter, s) <= SMALL_EDIT}
        copied = [
            s
            for s in mine
            if s in exercise.solutions and _changed(exercise.starter, s) > SMALL_EDIT
        ]
        if copied and the_key:
            result.values[name], result.hints[name] = COPIED, "the reference solution, pasted"
            result.review.append(f"{name}: the key's reference solution pasted")
            continue
        if copied:
            result.review.append(f"{name}: the same text as the key's reference solution")
        untouched = result.attempted[name] == "no"
        outcome = _UNTOUCHED.get((lang, name)) if untouched else None
        if outcome is None:
            cells = [code[i] for i in at]
            outcome = run_exercise(cells, exercise, lang, files, cell_timeout, deadline)
            if outcome.suspect and "the grader's copy" not in outcome.tampered:
                # Shared files (the checkout, site-packages) changed while this kernel ran: with
                # --jobs above 1 another kernel may have done it. Run once more with no other
                # kernel at the same time: a change now is this exercise's own.
                outcome = run_exercise(cells, exercise, lang, files, cell_timeout, deadline, True)
            if untouched and not (outcome.note or outcome.tampered or outcome.runtime):
                _UNTOUCHED[(lang, name)] = outcome
        result.values[name], result.hints[name] = outcome.value, outcome.hint
        if outcome.note:
            notes.append(f"{name}: {outcome.note}")
        if outcome.tampered:
            changed = ", ".join(outcome.tampered)
            result.review.append(f"{name}: changed the grader's files ({changed})")
        if outcome.runtime:
            changed = "; ".join(outcome.runtime)
            result.review.append(f"{name}: changed the kernel's runtime ({changed})"[:500])
        for i, outputs in zip(at, outcome.outputs.values(), strict=False):
            code[i]["outputs"] = copy.deepcopy(outputs)
        check = _check_cell_of(code, sources, exercise, at)
        if check is not None:
            check["outputs"] = copy.deepcopy(outcome.check_outputs)
    copied_total = sum(1 for s in ref.solutions if s in sources and s not in fixes)
    if hidden or copied_total:
        result.answer_key = f"yes: {copied_total} of {len(ref.solutions)} reference solutions" + (
            f", {hidden} collapsed solution cell(s)" if hidden else ""
        )
        result.review.append(f"answer key: {result.answer_key.removeprefix('yes: ')}")
    else:
        result.answer_key = "no"
    result.run = "; ".join(["ok", *notes]) if notes else "ok"
    if executed is not None:
        text = nbformat.writes(nb)
        files.wrote(executed / result.notebook, (text.rstrip("\n") + "\n").encode("utf-8"))


# The verdict on an untouched starter, by (language, exercise): the same code in the same setup
# gets the same verdict, so each runs once per grading.
_UNTOUCHED: dict[tuple[str, str], Outcome] = {}


def _compare_checks(code: list[Any], sources: list[str], ref: Reference, result: Result) -> None:
    """`check_cells`: which of the student edition's check cells were edited or deleted (they
    are not what grades, but a changed one deserves a look)."""
    ids = [_grade_id(c) for c in code]
    edited, deleted = [], []
    for name, exercise in ref.exercises.items():
        function = name.split(":", 1)[1]
        if exercise.check in sources:
            continue
        called = any(function in CHECK_CALL.findall(s) for s in sources)
        (edited if name.replace(":", "-", 1) in ids or called else deleted).append(function)
    problems = [f"edited: {', '.join(edited)}"] * bool(edited)
    problems += [f"deleted: {', '.join(deleted)}"] * bool(deleted)
    result.check_cells = "; ".join(problems) or "ok"
    if problems:
        result.review.append(f"check cells {'; '.join(problems)}")


def _check_cell_of(
    code: list[Any], sources: list[str], exercise: Exercise, at: list[int]
) -> Any | None:
    """The submission's check cell of `exercise` (right after its answer cells), if any."""
    after = at[-1] + 1
    if after < len(code) and exercise.name.split(":", 1)[1] in CHECK_CALL.findall(sources[after]):
        return code[after]
    return None


# --- marks -----------------------------------------------------------------------------------


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


def score(
    results: list[Result], weights: dict[str, float], counted: list[str] | None = None
) -> dict[str, tuple[float, float]]:
    """Set each result's score and maximum; return each student's total and maximum, counting
    the best submission of each lesson once (of the `counted` lessons only, when given)."""
    best = best_of(results, weights)
    totals: dict[str, tuple[float, float]] = {}
    for (student, lesson), r in best.items():
        if counted is not None and lesson not in counted:
            continue
        got, out_of = totals.get(student, (0.0, 0.0))
        totals[student] = (got + r.score, out_of + r.max_score)
    return totals


def best_of(results: list[Result], weights: dict[str, float]) -> dict[tuple[str, str], Result]:
    """Score every result; the best submission of each (student, lesson)."""
    best: dict[tuple[str, str], Result] = {}
    for r in results:
        exercises = exercises_of(r.lesson)
        r.max_score = sum(weights.get(e, 1.0) for e in exercises)
        r.score = sum(weights.get(e, 1.0) for e in exercises if r.values.get(e) == PASSED)
        key = (r.student, r.lesson)
        if key not in best or r.score > best[key].score:
            best[key] = r
    return best


def _number(value: float) -> str:
    return f"{value:g}"


HEAD = ["student", "notebook", "lesson", "run", "check_cells", "answer_key", "needs_review"]
HEAD += ["score", "max_score", "student_total", "student_max"]


def _head(lessons: list[str]) -> list[str]:
    head = list(HEAD)
    for e in (e for lesson in lessons for e in exercises_of(lesson)):
        head += [e, f"{e} attempted", f"{e} hint"]
    return head


def _row(r: Result, lessons: list[str], total: tuple[float, float] | None) -> list[str]:
    row = [r.student, r.notebook, r.lesson, r.run, r.check_cells, r.answer_key]
    row += ["; ".join(r.review), _number(r.score), _number(r.max_score)]
    row += [_number(total[0]), _number(total[1])] if total else ["", ""]
    for e in (e for lesson in lessons for e in exercises_of(lesson)):
        row += [r.values.get(e, ""), r.attempted.get(e, ""), r.hints.get(e, "")]
    return row


def write_table(
    results: list[Result],
    out: Path,
    weights: dict[str, float] | None = None,
    counted: list[str] | None = None,
) -> None:
    """One row per notebook: who, which lesson, how the run went, the flags, the marks, then
    three columns per exercise of any lesson seen (verdict, attempted, hint); blank = other
    lesson."""
    totals = score(results, weights or {}, counted)
    lessons = sorted({r.lesson for r in results if r.lesson})
    with _written_whole(out) as writer:
        writer.writerow(_head(lessons))
        for r in results:
            writer.writerow(_row(r, lessons, totals.get(r.student, (0.0, 0.0))))


def write_marks(
    results: list[Result],
    out: Path,
    weights: dict[str, float] | None = None,
    counted: list[str] | None = None,
) -> None:
    """One row per student: the best score of each lesson of the class (blank: not handed in),
    the total and its maximum over every lesson of the class, the mark in per cent, and the
    flags that need a look before the mark stands. With `counted`, exactly those lessons make
    the columns and the maximum, so one student's extra notebook changes nobody's mark."""
    weights = weights or {}
    best = best_of(results, weights)
    lessons = counted if counted is not None else sorted({r.lesson for r in results if r.lesson})
    most = {lesson: sum(weights.get(e, 1.0) for e in exercises_of(lesson)) for lesson in lessons}
    out_of = sum(most.values())
    students = sorted({r.student for r in results})
    head = ["student", *(f"lesson {lesson}" for lesson in lessons), "total", "max", "mark_%"]
    with _written_whole(out) as writer:
        writer.writerow([*head, "needs_review"])
        for student in students:
            mine = {lesson: best.get((student, lesson)) for lesson in lessons}
            total = sum(r.score for r in mine.values() if r is not None)
            flags = [
                f"{r.notebook}: {flag}"
                for r in results
                if r.student == student
                for flag in ([r.run] if not r.run.startswith("ok") else [])
                + r.review
                + ([f"lesson {r.lesson} not counted"] if r.lesson not in lessons else [])
            ]
            mark = 100 * total / out_of if out_of else 0.0
            writer.writerow(
                [
                    student,
                    *(_number(r.score) if r is not None else "" for r in mine.values()),
                    _number(total),
                    _number(out_of),
                    f"{mark:.1f}",
                    " | ".join(flags),
                ]
            )


@contextlib.contextmanager
def _written_whole(out: Path) -> Iterator[Any]:
    """A CSV writer for `out` that writes a temporary file beside it, then moves it into place:
    a symbolic link an answer planted at `out` is replaced, not followed to a teacher's file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(handle, "w", newline="", encoding="utf-8") as stream:
            yield csv.writer(stream)
        os.chmod(temp, 0o644)  # mkstemp's 0600 would hide the sheet from a colleague
        os.replace(temp, out)
    finally:
        Path(temp).unlink(missing_ok=True)


def marks_path(out: Path) -> Path:
    """Where the per-student sheet goes by default: `grades.csv` -> `grades_marks.csv`."""
    return out.with_name(f"{out.stem}_marks{out.suffix or '.csv'}")


@contextlib.contextmanager
def _one_grader_at_a_time() -> Iterator[None]:
    """Hold a lock that every grader of this Python environment takes: the start-up files it
    watches (`*.pth`, the kernel's spec) are shared, so a second grader at once would put back a
    file the first one's student planted and credit the wrong kernel with it. A grader started
    meanwhile says so and waits."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; run one grader at a time by hand there
        yield
        return
    name = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"toolcall-grader-{name}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                "another grader is running in this Python environment; waiting for it to end",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@_one_grader_at_a_time()
def grade_folder(
    folder: Path,
    out: Path,
    timeout: float = DEFAULT_TIMEOUT,
    executed: Path | None = None,
    jobs: int = 1,
    weights: dict[str, float] | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    marks: Path | None = None,
    counted: list[str] | None = None,
    watch: tuple[Path, ...] = (),
) -> list[Result]:
    """Grade every `*.ipynb` under `folder`: rows go to `out` as notebooks finish, then `out` is
    rewritten in path order with the students' totals, and the marks sheet is written.

    `jobs` notebooks are graded at once (a class of 25 on a lab server); one grader of a
    Python environment runs at a time (the others wait). `watch`: files the grader reads (the
    weights), put back like the checkout if a kernel changes them."""
    files = GraderFiles(submissions=folder, skip=executed, watch=watch)
    paths = [folder / name for name in files.handed_in]  # read once, before any kernel
    _UNTOUCHED.clear()
    lessons = sorted({_peek_lesson(p) for p in paths} - {""})
    for lesson in lessons:  # read the key once, before any student's code runs
        for lang in ("en", "ru"):
            reference(lesson, lang)
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_head(lessons))
        handle.flush()

        def grade(path: Path) -> Result:
            print(f"grading {path.relative_to(folder).as_posix()} ...", flush=True)
            result = grade_notebook(path, folder, timeout, executed, cell_timeout, files)
            best_of([result], weights or {})
            with lock:
                writer.writerow(_row(result, lessons, None))
                handle.flush()
            return result

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(grade, p) for p in paths]
            done = [future.result() for future in as_completed(futures)]
    results = sorted(done, key=lambda r: r.notebook)
    write_table(results, out, weights or {}, counted)
    write_marks(results, marks or marks_path(out), weights or {}, counted)
    if files.undone is not None:
        print(
            f"the grader put back files that changed while it ran (see the needs_review column); "
            f"each changed version is kept in {files.undone}",
            file=sys.stderr,
        )
    return results


def read_lessons(text: str) -> list[str]:
    """`--lessons 00-03` or `01,02,05`: the lessons the marks count, checked against the series."""
    known = [name[:2] for name in lesson_names()]
    chosen: set[str] = set()
    for part in text.replace(" ", "").split(","):
        first, _, last = part.partition("-")
        if first not in known or (last and last not in known):
            raise ValueError(
                f"--lessons: {part!r} is not a lesson or a range ({known[0]}-{known[-1]})"
            )
        chosen.update(known[known.index(first) : known.index(last or first) + 1])
    return sorted(chosen)


def _peek_lesson(path: Path) -> str:
    """The lesson of a submission, read without failing."""
    try:
        import nbformat

        return lesson_of(path, nbformat.read(path, as_version=4))
    except Exception:  # unreadable: the name may still tell
        return lesson_of(path, None)


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
    parser.add_argument(
        "--marks", type=Path, help="the per-student sheet (default: <out>_marks.csv)"
    )
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
        help="seconds per student cell or check before it is interrupted "
        f"(default {DEFAULT_CELL_TIMEOUT})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="notebooks graded at once, each exercise in its own kernel (default 1)",
    )
    parser.add_argument(
        "--lessons",
        help="the lessons the marks count, e.g. 00-03 or 01,02,05 (default: all handed in)",
    )
    parser.add_argument(
        "--executed",
        type=Path,
        help="also save each notebook with the grader's outputs in its answer and check cells",
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
        counted = read_lessons(args.lessons) if args.lessons else None
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    marks = args.marks or marks_path(args.out)
    results = grade_folder(
        args.folder.resolve(),
        args.out,
        args.timeout,
        args.executed,
        args.jobs,
        weights,
        args.cell_timeout,
        marks,
        counted,
        (args.weights.resolve(),) if args.weights else (),
    )
    print(f"wrote {args.out}: {len(results)} notebook(s); {marks}: the marks per student")


if __name__ == "__main__":
    main()
