"""Build, run and clean the series' notebooks from one source per lesson.

Each lesson lives in `notebooks/src/NN_topic.py` as a list of cells built with `md(en, ru)` and
`code(src, ru=None)`. One source makes the English and Russian editions share every code cell by
construction; only prose and code comments are translated.

    python scripts/nbbuild.py                 # build all lessons, run them in replay mode, clean
    python scripts/nbbuild.py 02_sync_loop    # one lesson
    python scripts/nbbuild.py --no-execute    # write without running (keeps the outputs of
                                              # unchanged cells, refuses to drop any other)
    python scripts/nbbuild.py --student       # student edition in build/student/{en,ru}
    python scripts/nbbuild.py --uses helpers/loop.py   # the lessons to rebuild after changing it
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout first (a shared venv)

from helpers.edition import KERNEL_START_SECONDS, STUDENT_KERNEL, student_notebook  # noqa: E402, F401  (re-exported)
from helpers.edition import is_solution as _is_hidden  # noqa: E402, F401  (the tests' old name)
from helpers.lessons import lesson_names  # noqa: E402

SRC = ROOT / "notebooks" / "src"
LANGS = ("en", "ru")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Installed packages in a traceback: shown from `site-packages/` on, whatever the machine.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SITE_PACKAGES = re.compile(r"(?:[A-Za-z]:)?[^\s'\"\x1b]*[/\\]site-packages[/\\]")
# The line that stands for library frames folded out of a saved traceback, in each edition.
HIDDEN_TEXT = {
    "en": "... {} library frame(s) hidden in the saved notebook ...",
    "ru": "... кадров библиотек, скрытых в сохранённом блокноте: {} ...",
}
HIDDEN_FRAMES = re.compile(
    r"\.\.\. (?:(\d+) library frame\(s\) hidden in the saved notebook"
    r"|кадров библиотек, скрытых в сохранённом блокноте: (\d+)) \.\.\."
)
# The setup cell chooses the language of the helpers' messages; each edition gets its own.
# The call is rewritten whatever its comment says (a `ru` dict may have translated the comment).
LANGUAGE_CALL = {"en": 'set_language("en")', "ru": 'set_language("ru")'}
LANGUAGE_COMMENT = {
    "en": "# the language of the helpers' messages",
    "ru": "# язык сообщений помощников",
}


@dataclass
class Cell:
    """One cell in both languages."""

    kind: str
    en: str
    ru: str
    tags: tuple[str, ...] = ()
    hidden: bool = False
    id: str | None = None  # None: derived from the lesson name and the English first line


def md(en: str, ru: str, *, id: str | None = None) -> Cell:
    """A markdown cell: English and Russian prose."""
    return Cell("markdown", en.strip("\n"), ru.strip("\n"), id=id)


def code(
    src: str,
    ru: str | dict[str, str] | None = None,
    *,
    tags: tuple[str, ...] = (),
    hidden: bool = False,
    id: str | None = None,
) -> Cell:
    """A code cell. `ru` translates its comments: a dict {English comment: Russian comment}
    applied to `src` (preferred: the code itself is written once), or the whole Russian source."""
    if isinstance(ru, dict):
        russian = src
        for english, translated in ru.items():
            if english not in src:
                raise ValueError(f"comment to translate not found in the code: {english!r}")
            russian = russian.replace(english, translated)
        ru = russian
    if ru is None:
        ru = src
    ru = ru.replace(LANGUAGE_CALL["en"], LANGUAGE_CALL["ru"]).replace(
        LANGUAGE_COMMENT["en"], LANGUAGE_COMMENT["ru"]
    )
    return Cell("code", src.strip("\n"), ru.strip("\n"), tags, hidden, id)


@dataclass
class Lesson:
    """A lesson: its file name (without .ipynb) and cells."""

    name: str
    cells: list[Cell] = field(default_factory=list)


def load_lesson(path: Path) -> Lesson:
    """Import `notebooks/src/<name>.py` and return its `LESSON`."""
    spec = importlib.util.spec_from_file_location(f"lesson_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.LESSON


def cell_ids(lesson: Lesson) -> list[str]:
    """Stable ids: `NN-` + a hash of the lesson name, the cell's English first line and how many
    earlier cells share that line, so inserting or removing a cell renumbers no other cell.
    `md(..., id=...)`/`code(..., id=...)` pins an id by hand (it must be unique in the lesson)."""
    seen: dict[str, int] = {}
    ids = []
    for cell in lesson.cells:
        if cell.id is not None:
            ids.append(cell.id)
            continue
        first = cell.en.strip().splitlines()[0] if cell.en.strip() else ""
        key = f"{cell.kind}|{first}"
        seen[key] = seen.get(key, 0) + 1
        digest = hashlib.sha256(f"{lesson.name}|{key}|{seen[key]}".encode()).hexdigest()[:8]
        ids.append(f"{lesson.name[:2]}-{digest}")
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{lesson.name}: cell ids used twice: {duplicates}")
    return ids


def to_notebook(lesson: Lesson, lang: str) -> nbformat.NotebookNode:
    """Build the notebook of one language with stable cell ids (see `cell_ids`)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for cell, cell_id in zip(lesson.cells, cell_ids(lesson), strict=True):
        source = getattr(cell, lang)
        if cell.kind == "markdown":
            new = nbformat.v4.new_markdown_cell(source)
        else:
            new = nbformat.v4.new_code_cell(source)
            if cell.tags:
                new.metadata["tags"] = list(cell.tags)
            if cell.hidden:
                new.metadata["jupyter"] = {"source_hidden": True}
        new["id"] = cell_id
        nb.cells.append(new)
    return nb


def _relative_paths(line: str) -> str:
    """A traceback line without machine paths: repo files relative, packages from site-packages/."""
    line = line.replace(str(ROOT) + os.sep, "")
    return SITE_PACKAGES.sub("site-packages/", line)


def _short_traceback(lines: list[str], lang: str = "en") -> list[str]:
    """Keep the header, the notebook's own frames and the error line; fold library frames.

    A saved error should show the learner where in *their* cell it happened and what it says, not
    forty lines of SDK internals (running the cell shows the full traceback)."""
    if len(lines) < 3:
        return [_relative_paths(line) for line in lines]
    kept, hidden = list(lines[:2]), 0
    for frame in lines[2:-1]:
        folded = HIDDEN_FRAMES.fullmatch(frame)
        if folded:  # shortened before (a kept output): count its frames again, add no line
            hidden += int(folded[1] or folded[2])
        elif ANSI.sub("", frame).startswith("Cell "):
            if hidden:
                kept.append(HIDDEN_TEXT[lang].format(hidden))
                hidden = 0
            kept.append(frame)
        else:
            hidden += 1
    if hidden:
        kept.append(HIDDEN_TEXT[lang].format(hidden))
    kept.append(lines[-1])
    return [_relative_paths(line) for line in kept]


COUNT_STEP = 10  # a fresh lesson's code cells are counted 10, 20, 30...: room for insertions


def stable_counts(ids: list[str], previous: dict[str, int]) -> list[int]:
    """Execution counts for code cells `ids` (in order) that change no other cell's count when a
    cell is inserted, deleted or edited: a cell keeps its `previous` count (cell id -> count in
    the committed notebook) while the counts still increase; a new cell takes the middle of the
    gap to the next kept count, or the previous count + COUNT_STEP after the last one. Only when
    a gap is used up (two neighbours 1 apart) are the following cells shifted by one, up to the
    next one with room (a moved cell also takes the next free number). nbval needs a count on
    every cell it checks and never compares the numbers; a student sees them increase top to
    bottom, as in a notebook run once."""
    counts: list[int] = []
    last = 0
    for i, cell_id in enumerate(ids):
        kept = previous.get(cell_id)
        if kept is not None and kept > last:
            last = kept
        elif kept is not None:  # pushed on (or moved): the next free number
            last += 1
        else:
            ahead = (previous.get(later, 0) for later in ids[i + 1 :])
            upper = next((count for count in ahead if count > last), None)
            last += COUNT_STEP if upper is None else max(1, (upper - last) // 2)
        counts.append(last)
    return counts


def committed_counts(path: Path) -> dict[str, int]:
    """Cell id -> execution count in the committed notebook at `path` ({} if there is none)."""
    if not path.exists():
        return {}
    committed = nbformat.read(path, as_version=4)
    return {
        cell.id: cell.execution_count
        for cell in committed.cells
        if cell.cell_type == "code" and isinstance(cell.get("execution_count"), int)
    }


def clean(
    nb: nbformat.NotebookNode, lang: str = "en", previous: dict[str, int] | None = None
) -> nbformat.NotebookNode:
    """Make outputs deterministic: stable counts (`stable_counts`, from `previous`: the committed
    notebook's), no timings, no widget views (random model ids).
    `lang`: the edition, for the line that stands for folded traceback frames."""
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    counts = stable_counts([cell.get("id") for cell in code_cells], previous or {})
    for cell, count in zip(code_cells, counts, strict=True):
        cell.metadata.pop("execution", None)
        kept = []
        for out in cell.get("outputs", []):
            if WIDGET_MIME in out.get("data", {}):
                if "nbval-ignore-output" not in cell.metadata.get("tags", []):
                    raise ValueError(f"cell {cell.get('id')}: a widget needs nbval-ignore-output")
                continue  # a widget only lives with its kernel; re-run the cell to see it
            previous = kept[-1] if kept else None
            if (
                out.get("output_type") == "stream"
                and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == out.get("name")
            ):
                previous["text"] += out["text"]  # the kernel splits long prints at random places
                continue
            kept.append(out)
        cell.outputs = kept
        cell.execution_count = count
        for out in cell.outputs:
            if "execution_count" in out:
                out["execution_count"] = count
            if out.get("output_type") == "error":  # an expected error must not show machine paths
                out["traceback"] = _short_traceback(out.get("traceback", []), lang)
    return nb


def checkout_first(root: Path, pythonpath: str) -> str:
    """`PYTHONPATH` with `root` in front: a kernel started with it imports `helpers` from this
    checkout even when the venv has `helpers` installed (editable) from another one."""
    others = [p for p in pythonpath.split(os.pathsep) if p and Path(p).resolve() != root.resolve()]
    return os.pathsep.join([str(root), *others])


def execute(nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in replay mode, in its own folder, like nbval does."""
    from nbclient import NotebookClient

    env_backup = dict(os.environ)
    os.environ.update(
        {"LLM_MODE": "replay", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    )
    os.environ["PYTHONPATH"] = checkout_first(ROOT, os.environ.get("PYTHONPATH", ""))
    try:
        client = NotebookClient(
            nb,
            timeout=120,
            startup_timeout=KERNEL_START_SECONDS,
            kernel_name="python3",
            allow_errors=False,
            resources={"metadata": {"path": str(folder)}},
        )
        _run_allowing_tagged_errors(client)
    finally:
        os.environ.clear()
        os.environ.update(env_backup)
    return nb


def _run_allowing_tagged_errors(client) -> None:
    """Execute; a cell tagged `raises-exception` may fail, any other failure stops the build."""
    client.allow_errors = True
    client.execute()
    for cell in client.nb.cells:
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        if errors and not tagged:
            e = errors[0]
            raise RuntimeError(f"cell {cell.get('id')} failed: {e['ename']}: {e['evalue']}")
        if tagged and not errors:
            raise RuntimeError(f"cell {cell.get('id')} is tagged raises-exception, did not raise")


class OutputsWouldBeLost(RuntimeError):
    """`--no-execute` would drop committed outputs: the cells that made them changed."""


def keep_committed_outputs(nb: nbformat.NotebookNode, path: Path) -> list[str]:
    """Give each code cell the outputs the committed notebook has for the same source.

    Refuses (`OutputsWouldBeLost`) when a committed cell's outputs have no unchanged cell left to
    take them; returns the ids of code cells that are new, so have no outputs until a real run.
    """
    if not path.exists():
        return [c.id for c in nb.cells if c.cell_type == "code"]
    committed = nbformat.read(path, as_version=4)
    by_source: dict[str, list] = {}
    for cell in committed.cells:
        if cell.cell_type == "code":
            by_source.setdefault(cell.source, []).append(cell)
    new_cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if by_source.get(cell.source):
            cell.outputs = by_source[cell.source].pop(0).outputs
        else:
            new_cells.append(cell.id)
    lost = [c.id for found in by_source.values() for c in found if c.outputs]
    if lost:
        raise OutputsWouldBeLost(
            f"{path.relative_to(ROOT)}: cells {lost} changed and have committed outputs that "
            f"--no-execute would drop; build without --no-execute to run the lesson"
        )
    return new_cells


def build(name: str, run: bool, renumber: bool = False) -> None:
    """Write (and optionally run and clean) both editions of one lesson.

    Without running, the outputs of code cells whose source did not change are kept. Execution
    counts are kept from the committed notebook (`stable_counts`); `renumber` counts afresh."""
    lesson = load_lesson(SRC / f"{name}.py")
    for lang in LANGS:
        folder = ROOT / "notebooks" / lang
        path = folder / f"{lesson.name}.ipynb"
        nb = to_notebook(lesson, lang)
        previous = {} if renumber else committed_counts(path)
        if run:
            nb = clean(execute(nb, folder), lang, previous)
        else:
            missing = keep_committed_outputs(nb, path)
            nb = clean(nb, lang, previous)
            if missing and path.exists():
                print(
                    f"{path.relative_to(ROOT)}: new cells {missing} have no outputs yet: "
                    "build without --no-execute before committing"
                )
        nbformat.validate(nb)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


# ---------------------------------------------------------------------------------------------
# The student edition (helpers/edition.py makes it; the grader reads the key through it too).

STUDENT_DIR = ROOT / "build" / "student"


def build_student(names: list[str], out: Path = STUDENT_DIR) -> list[Path]:
    """Write the student edition of the named lessons from the committed notebooks (the key).

    A lesson whose notebook is not built yet is taken from its source, without outputs."""
    written = []
    for name in names:
        lesson = None
        for lang in LANGS:
            key_path = ROOT / "notebooks" / lang / f"{name}.ipynb"
            if key_path.exists():
                key = nbformat.read(key_path, as_version=4)
            else:
                lesson = lesson or load_lesson(SRC / f"{name}.py")
                key = clean(to_notebook(lesson, lang), lang)
            nb = student_notebook(key, name, lang)
            nbformat.validate(nb)
            path = out / lang / f"{name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            written.append(path)
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return written


# ---------------------------------------------------------------------------------------------
# Which lessons use a helper (`--uses helpers/loop.py`): the ones to rebuild after changing it.


def _module_of(path: Path) -> str:
    """`helpers/replay/modes.py` -> `helpers.replay.modes`; `__init__.py` -> its package."""
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _origin(module: str, name: str) -> str:
    """The `helpers` module that defines `name`, following re-exports (`from helpers import
    connect` -> helpers.replay -> helpers.replay.modes)."""
    from helpers import _EXPORTS

    if module == "helpers" and name in _EXPORTS:
        return _origin(_EXPORTS[name], name)
    path = ROOT / module.replace(".", "/")
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    if not path.exists():
        return module
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers"):
            if any(alias.name == name for alias in node.names):
                return _origin(node.module, name)
    return module


def helper_imports(source: str) -> set[str]:
    """The `helpers` modules (and their packages) that code imports, in function bodies too;
    `from X import name` also counts the module that defines `name` (`_origin`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("helpers")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers"):
            found.add(node.module)
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"  # `from helpers.exercises import n02`
                is_module = (ROOT / f"{submodule.replace('.', '/')}.py").exists()
                found.add(submodule if is_module else _origin(node.module, alias.name))
    return {".".join(m.split(".")[:n]) for m in found for n in range(1, m.count(".") + 2)}


def lessons_using(helper: Path) -> dict[str, str]:
    """Lesson -> "reads" (a code cell imports the module, or a cell names it) or "runs" (it is
    imported only through other helpers). Both must be rebuilt after a change to `helper`."""
    target = _module_of(helper)
    graph = {
        _module_of(path): helper_imports(path.read_text(encoding="utf-8"))
        for path in (ROOT / "helpers").rglob("*.py")
    }
    mentions = re.compile(rf"\b{re.escape(target)}\b|{re.escape(target.replace('.', '/'))}\b")
    found = {}
    for name in lesson_names(SRC):
        cells = load_lesson(SRC / f"{name}.py").cells
        direct = set().union(*(helper_imports(c.en) for c in cells if c.kind == "code"))
        seen, todo = set(direct), list(direct)
        while todo:
            for module in graph.get(todo.pop(), ()):
                if module not in seen:
                    seen.add(module)
                    todo.append(module)
        if target in direct or any(mentions.search(c.en) for c in cells):
            found[name] = "reads"
        elif target in seen:
            found[name] = "runs"
    return found


def print_uses(helper: Path) -> None:
    """`--uses`: the lessons that read or run `helper`, and the command that rebuilds them."""
    if not helper.resolve().is_relative_to(ROOT / "helpers") or not helper.exists():
        sys.exit(f"--uses takes a file under helpers/, such as helpers/loop.py, not {helper}")
    found = lessons_using(helper)
    for kind, what in (("reads", "import it or name it"), ("runs", "run it through other helpers")):
        names = [name for name, how in found.items() if how == kind]
        print(f"{kind} ({what}): {' '.join(names) or '-'}")
    if found:
        print(f"rebuild: .venv/bin/python scripts/nbbuild.py {' '.join(found)}")


def main(argv: list[str] | None = None) -> None:
    """Command line: build the named lessons (default: all)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="lesson names, e.g. 02_sync_loop")
    parser.add_argument("--no-execute", action="store_true", help="do not run the notebooks")
    parser.add_argument(
        "--renumber",
        action="store_true",
        help="count the code cells afresh (10, 20, 30...) instead of keeping the committed counts",
    )
    parser.add_argument(
        "--student",
        action="store_true",
        help="write the student edition (no solutions) from the committed key",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=STUDENT_DIR,
        help="folder of the student edition (default build/student)",
    )
    parser.add_argument(
        "--uses",
        type=Path,
        metavar="HELPER",
        help="list the lessons that read or run helpers/HELPER.py (build nothing)",
    )
    args = parser.parse_args(argv)
    if args.uses:
        print_uses(args.uses)
        return
    names = args.names or list(lesson_names(SRC))
    if args.student:
        build_student(names, args.out)
        return
    if args.no_execute:
        for name in names:
            build(name, run=False, renumber=args.renumber)
        return
    unused = build_and_count_served(names, renumber=args.renumber)
    if unused:
        sys.exit(
            "Recordings no notebook run requested (delete them from the lesson's scenarios, or "
            "make the lesson send that request):\n" + "\n".join(f"  {name}" for name in unused)
        )


def build_and_count_served(names: list[str], renumber: bool = False) -> list[str]:
    """Build and run the lessons (both editions) with the replay server logging what it answers;
    return the recordings of their cassettes that no run requested."""
    from helpers.paths import RECORDINGS_DIR
    from helpers.replay.server import SERVED_LOG_VARIABLE
    from helpers.replay.synthesize import unused_recordings

    with tempfile.TemporaryDirectory() as tmp:
        served_log = Path(tmp) / "served.txt"
        served_log.touch()
        os.environ[SERVED_LOG_VARIABLE] = str(served_log)  # the kernels inherit it
        try:
            for name in names:
                build(name, run=True, renumber=renumber)
        finally:
            del os.environ[SERVED_LOG_VARIABLE]
        served = set(served_log.read_text(encoding="utf-8").split())
    cassettes = [RECORDINGS_DIR / f"{name}.json" for name in names]
    return unused_recordings(served, [path for path in cassettes if path.is_file()])


if __name__ == "__main__":
    main()
