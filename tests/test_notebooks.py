"""The committed notebooks, checked without a kernel: RU/EN parity, built from source, hygiene.

Every check is a function returning a list of problems. The real-notebook tests collect one case
per lesson (or per edition) that exists, so a failure names the file. The same checks first run on
a tiny fixture series built with `scripts/nbbuild.py` in a temporary folder: it must pass clean, and
each planted defect must be caught, which proves every check can fail.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest
import scripts_support
from lesson_checks import lesson_problems
from parity import cell_where, check_parity, code_cells

from helpers.catalog import REPLAY_API_KEY
from helpers.i18n import LANGUAGES as LANGS
from helpers.paths import NOTEBOOKS_DIR, REPO_ROOT

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

# Home and work folders of Linux, macOS (/Users/) and Windows (either slash), and /opt/ installs.
MACHINE_PATHS = ("/root/", "/home/", "/Users/", "/tmp/", "/work/", "/opt/", "C:\\", "C:/")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
LOOPBACK_PORT = re.compile(r"(?:127\.0\.0\.1|localhost):\d+")
SECRETS = (
    re.compile(r"(?<![\w-])sk-\w{3,}"),  # an OpenAI/Moonshot-style key
    re.compile(r"Bearer\s+[\w.~+/-]{12,}"),  # a header value, not the word "Bearer token"
)
API_KEY_VALUE = re.compile(r"""api[_-]?key['"]?\s*[:=]\s*['"]([^'"\n]*)['"]""", re.IGNORECASE)
TALKS_TO_MODEL = re.compile(
    r"\bconnect\(|\bOpenAI\(|\.completions\.create\(|\brequests\.post\(|\brun_tool_loop\("
)
NEXT_LINK = re.compile(r"\]\(\s*(?:\./)?(\d\d_\w+)\.ipynb\s*\)")
MAP_ROW = re.compile(r"^\|.*\]\(\s*(?:\./)?(\d\d_\w+)\.ipynb\s*\)", re.M)
# A link that names a lesson by number: `[Next: 01 Title](01_name.ipynb)`, `[01 Title](...)`.
TITLED_LINK = re.compile(
    r"\[((?:Next: |Дальше: )?)(\d\d) ([^\]]+)\]\(\s*(?:\./)?(\d\d_\w+)\.ipynb\s*\)"
)
NEXT_WORD = re.compile(r"\[(?:Next|Дальше)\b[^\]]*\]\(")
# The last lesson's closing words (scripts/new_lesson.py turns that line into a Next link).
END_OF_SERIES = {"en": "end of the series", "ru": "конец серии"}
README_LINK = re.compile(r"\[([^\]]+)\]\(notebooks/(en|ru)/(\d\d_\w+)\.ipynb\)")
CYRILLIC = re.compile(r"[А-Яа-яЁё]")
LETTER = re.compile(r"[A-Za-zА-Яа-яЁё]")


nbbuild = scripts_support.nbbuild()


# ---------------------------------------------------------------------------------------------
# Reading a series folder (`notebooks/` or the fixture's copy of it)


def lesson_names(nb_dir: Path) -> list[str]:
    """Every lesson that has a source or a notebook in either language."""
    found = {p.stem for p in (nb_dir / "src").glob("[0-9][0-9]_*.py")}
    for lang in LANGS:
        found |= {p.stem for p in (nb_dir / lang).glob("*.ipynb")}
    return sorted(found)


def series_order(names: list[str]) -> tuple[str, ...]:
    """The reading order: by lesson number (the list comes from the folder, nowhere else)."""
    return tuple(sorted(names))


def read_nb(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def output_texts(output) -> Iterator[tuple[str, str]]:
    """(where, text) for every piece of text an output carries, ANSI colours removed."""
    for key in ("text", "ename", "evalue"):
        if key in output:
            yield key, ANSI.sub("", "".join(output[key]))
    for line in output.get("traceback", []):
        yield "traceback", ANSI.sub("", line)
    for mime, value in output.get("data", {}).items():
        text = (
            value
            if isinstance(value, str)
            else "".join(value)
            if isinstance(value, list)
            else json.dumps(value)
        )
        yield mime, text


# ---------------------------------------------------------------------------------------------
# The checks: each returns a list of human-readable problems (empty = fine)


def check_file_set(nb_dir: Path, name: str) -> list[str]:
    """Both editions exist and come from a source in notebooks/src."""
    problems = [
        f"{lang}/{name}.ipynb is missing"
        for lang in LANGS
        if not (nb_dir / lang / f"{name}.ipynb").exists()
    ]
    if not (nb_dir / "src" / f"{name}.py").exists():
        problems.append(f"src/{name}.py is missing: notebooks are built from sources, not by hand")
    return problems


def skeleton(nb) -> dict:
    """A notebook without outputs or execution counts: what its source decides."""
    return {
        "nbformat": nb.nbformat,
        "nbformat_minor": nb.nbformat_minor,
        "metadata": nb.metadata,
        "cells": [
            {
                "id": c.get("id"),
                "cell_type": c.cell_type,
                "source": c.source,
                "metadata": c.metadata,
            }
            for c in nb.cells
        ],
    }


def check_built_from_source(nb_dir: Path, name: str, lang: str) -> list[str]:
    """The committed notebook is what nbbuild writes from the source (outputs aside)."""
    path = nb_dir / lang / f"{name}.ipynb"
    text = path.read_text(encoding="utf-8")
    committed = nbformat.reads(text, as_version=4)
    problems = []
    if text != nbformat.writes(committed) + "\n":
        problems.append(
            f"{lang}/{name}.ipynb is not in nbbuild's formatting (saved by another tool?)"
        )
    try:
        nbformat.validate(committed)
    except nbformat.ValidationError as exc:
        problems.append(f"{lang}/{name}.ipynb is not a valid notebook: {exc.message}")
    lesson = nbbuild.load_lesson(nb_dir / "src" / f"{name}.py")
    if lesson.name != name:
        problems.append(
            f"src/{name}.py declares Lesson({lesson.name!r}): it would build another file"
        )
    built = skeleton(nbbuild.clean(nbbuild.to_notebook(lesson, lang)))
    have = skeleton(committed)
    for key in ("nbformat", "nbformat_minor", "metadata"):
        if built[key] != have[key]:
            problems.append(
                f"{lang}/{name}.ipynb: notebook {key} {have[key]!r} != built {built[key]!r}"
            )
    if len(built["cells"]) != len(have["cells"]):
        problems.append(
            f"{lang}/{name}.ipynb has {len(have['cells'])} cells, the source builds "
            f"{len(built['cells'])}: rebuild with scripts/nbbuild.py {name}"
        )
    for i, (want, got) in enumerate(zip(built["cells"], have["cells"], strict=False)):
        if want != got:
            field = next(k for k in want if want[k] != got.get(k))
            problems.append(
                f"{lang}/{name}.ipynb cell {i} ({got.get('id')}): {field} differs from the source "
                f"(edited by hand, or not rebuilt): rebuild with scripts/nbbuild.py {name}"
            )
            break
    return problems


def check_hygiene(nb, where: str) -> list[str]:
    """Outputs are deterministic and safe to publish; errors only where a cell is tagged to raise."""
    problems = []
    if "widgets" in nb.metadata:
        problems.append(f"{where}: notebook metadata holds widget state (random model ids)")
    for cell in nb.cells:
        problems += _secret_problems(cell.source, f"{cell_where(where, cell)} source")
    counts = [c.get("execution_count") for c in code_cells(nb)]
    numbers = [n if isinstance(n, int) and n > 0 else 0 for n in counts]
    if 0 in numbers or numbers != sorted(set(numbers)):  # positive, strictly increasing
        problems.append(
            f"{where}: execution counts are {counts}, expected increasing top to bottom "
            "(nbbuild keeps the committed ones: rebuild with scripts/nbbuild.py)"
        )
    for cell in code_cells(nb):
        at = cell_where(where, cell)
        outputs = cell.get("outputs", [])
        if outputs and cell.get("execution_count") is None:
            problems.append(f"{at}: outputs with execution_count null (nbval fails it)")
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        errors = [o for o in outputs if o.output_type == "error"]
        if errors and not tagged:
            problems.append(
                f"{at}: shows {errors[0].get('ename')} but is not tagged raises-exception"
            )
        if tagged and not errors:
            problems.append(f"{at}: tagged raises-exception but its output shows no error")
        for out in outputs:
            problems += _output_problems(out, cell, at)
    return problems


def _output_problems(out, cell, at: str) -> list[str]:
    problems = []
    if out.output_type == "stream" and out.get("name") == "stderr":
        problems.append(f"{at}: stderr output {''.join(out.get('text', ''))[:80]!r}")
    if out.output_type == "execute_result" and out.get("execution_count") != cell.get(
        "execution_count"
    ):
        problems.append(f"{at}: execute_result count differs from the cell's")
    data = out.get("data", {})
    if WIDGET_VIEW in data or WIDGET_STATE in data:
        problems.append(f"{at}: a widget view is saved (random model id; nbbuild should drop it)")
    for kind, text in output_texts(out):
        paths = MACHINE_PATHS + (("~/",) if kind == "traceback" else ())
        found = next((p for p in paths if p in text), None)
        if found:
            line = next(ln for ln in text.splitlines() if found in ln)
            problems.append(f"{at}: {kind} output shows a machine path: {line.strip()[:100]!r}")
        if LOOPBACK_PORT.search(text):
            problems.append(
                f"{at}: {kind} output shows a local port {LOOPBACK_PORT.search(text)[0]!r}"
            )
        problems += _secret_problems(text, f"{at} {kind} output")
    return problems


def _secret_problems(text: str, at: str) -> list[str]:
    problems = [
        f"{at}: looks like a secret: {m[0][:12]!r}..." for r in SECRETS for m in r.finditer(text)
    ]
    for m in API_KEY_VALUE.finditer(text):
        if m[1] != REPLAY_API_KEY:
            problems.append(
                f"{at}: api_key value {m[1][:6]!r}... (only {REPLAY_API_KEY!r} may appear)"
            )
    return problems


def _connect_calls(src: str) -> list[ast.Call] | None:
    """Calls of `connect(...)`/`x.connect(...)` in a cell, or None if the cell is not Python."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "connect"
    ]


def _setup_providers(src: str, known: set[str] = frozenset()) -> set[str]:
    """Providers a cell sets up: `connect(provider)` (no provider: kimi), and
    `connect(provider, engine=...)` only while no setup for that provider came before (`known`):
    a lesson about one engine profile starts with it; later profile calls are comparisons."""
    calls = _connect_calls(src)
    if calls is None:  # not Python: count a textual call once
        return {"?"} if re.search(r"\bconnect\(", src) else set()
    providers = set()
    for call in calls:
        given = call.args[:1] + [k.value for k in call.keywords if k.arg == "provider"]
        provider = given[0].value if given and isinstance(given[0], ast.Constant) else "kimi"
        with_engine = len(call.args) > 1 or any(k.arg == "engine" for k in call.keywords)
        if with_engine and provider in known:
            continue
        providers.add(provider)
    return providers


def check_setup_cell(nb, where: str) -> list[str]:
    """A notebook that talks to a model has ONE setup cell `connect(provider)`, before any use.

    Later `connect(other_provider)` (a second model to compare) and `connect(p, engine=...)` (an
    engine profile) are not setup cells; connecting the same provider again in another cell is. A
    lesson about one engine profile may set up with it: `connect(p, engine=...)` first.
    """
    cells = code_cells(nb)
    talking = [i for i, c in enumerate(cells) if TALKS_TO_MODEL.search(c.source)]
    if not talking:
        return []
    setups: dict[str, list[int]] = {}
    for i, cell in enumerate(cells):
        for provider in _setup_providers(cell.source, set(setups)):
            setups.setdefault(provider, []).append(i)
    if not setups:
        return [f"{where}: talks to a model but no cell calls connect()"]
    problems = [
        f"{where}: {len(found)} setup cells connect to {provider!r}: "
        f"{[cells[i].get('id') for i in found]} (one setup cell per notebook)"
        for provider, found in setups.items()
        if len(found) > 1
    ]
    first_setup = min(i for found in setups.values() for i in found)
    if talking[0] < first_setup:
        problems.append(
            f"{where}: cell {cells[talking[0]].get('id')} talks to a model before the setup cell"
        )
    return problems


def check_next_link(nb, name: str, order: tuple[str, ...], where: str) -> list[str]:
    """A link to the next lesson in all but the last; every lesson link names a real lesson."""
    prose = markdown_of(nb)
    targets = set(NEXT_LINK.findall(prose))
    problems = [
        f"{where}: links to {t}.ipynb, which is not a lesson" for t in sorted(targets - set(order))
    ]
    targets = set(NEXT_LINK.findall(MAP_ROW.sub("", prose)))  # a map's row is not a "next" link
    position = order.index(name) if name in order else len(order) - 1
    if position < len(order) - 1 and order[position + 1] not in targets:
        problems.append(f"{where}: no link to the next lesson ({order[position + 1]}.ipynb)")
    return problems


def markdown_of(nb) -> str:
    """All of a notebook's markdown cells, one text."""
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def title_of(nb) -> str:
    """A lesson's title: its first cell's `# heading`."""
    return nb.cells[0].source.splitlines()[0].removeprefix("# ")


def lesson_titles(folder: Path, names) -> dict[str, str]:
    """The title of each lesson that has a notebook in one edition's folder."""
    return {n: title_of(read_nb(p)) for n in names if (p := folder / f"{n}.ipynb").exists()}


def check_link_titles(nb, titles: dict[str, str], where: str) -> list[str]:
    """Links that name a lesson by number carry its title (`[Next: 01 Title](01_x.ipynb)`), and
    every Next link is written so; `titles` maps each lesson to its title in this edition."""
    prose = markdown_of(nb)
    links = TITLED_LINK.findall(prose)
    problems = []
    for _, number, text, target in links:
        if target in titles and (number, text) != (target[:2], titles[target]):
            problems.append(
                f"{where}: a link to {target}.ipynb reads {number} {text!r}; "
                f"the lesson's title is {target[:2]} {titles[target]!r}"
            )
    titled = len([m for m in links if m[0]])
    if len(NEXT_WORD.findall(prose)) > titled:
        problems.append(f"{where}: a Next link is not written `[Next: NN Title](NN_name.ipynb)`")
    return problems


def check_end_of_series(nb, name: str, order: tuple[str, ...], lang: str, where: str) -> list[str]:
    """The last lesson, and only it, says it is the end of the series."""
    prose = markdown_of(nb)
    says = END_OF_SERIES[lang] in prose.lower()
    if name == order[-1] and not says:
        return [f"{where}: the last lesson does not say {END_OF_SERIES[lang]!r}"]
    if says and name != order[-1]:
        return [f"{where} says {END_OF_SERIES[lang]!r} but {order[-1]} comes later"]
    return []


def prose_of(markdown: str) -> str:
    """Markdown without code, links' targets, URLs and HTML tags: the words a reader reads."""
    text = re.sub(r"(```|~~~).*?\1", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    return re.sub(r"<[^>]*>", " ", text)


def check_russian_prose(ru, where: str) -> list[str]:
    """Every Russian prose cell that has words has Cyrillic ones (an untranslated cell has none)."""
    problems = []
    for cell in ru.cells:
        if cell.cell_type != "markdown":
            continue
        prose = prose_of(cell.source)
        if LETTER.search(prose) and not CYRILLIC.search(prose):
            first = cell.source.strip().splitlines()[0][:70]
            problems.append(
                f"{cell_where(where, cell)}: Russian edition's prose has no Cyrillic: {first!r}"
            )
    return problems


def check_lesson_00_map(nb, order: tuple[str, ...], where: str) -> list[str]:
    """Lesson 00's map has a table row linking every later lesson."""
    prose = markdown_of(nb)
    rows = set(MAP_ROW.findall(prose))
    return [
        f"{where}: the lesson map has no row for {name}" for name in order[1:] if name not in rows
    ]


def check_readme_map(readme: Path, nb_dir: Path, order: tuple[str, ...]) -> list[str]:
    """The README's lesson map links both editions of every lesson, titled as each notebook is."""
    if not readme.exists():
        return ["README.md is missing"]
    links = README_LINK.findall(readme.read_text(encoding="utf-8"))
    problems = [
        f"README.md: the lesson map has no {lang} link for {name}"
        for name in order
        for lang in LANGS
        if not any(n == name and g == lang for _, g, n in links)
    ]
    for title, lang, name in links:
        path = nb_dir / lang / f"{name}.ipynb"
        if name not in order or not path.exists():
            problems.append(f"README.md links {lang}/{name}.ipynb, which is not a lesson")
            continue
        heading = read_nb(path).cells[0].source.splitlines()[0]
        if heading != f"# {title}":
            problems.append(
                f"README.md calls {lang}/{name} {title!r}, its notebook says {heading!r}"
            )
    return problems


CLASS_DOCS = ("docs/class_endpoint.md", "docs/class_endpoint.ru.md")
LIVE_TABLE = re.compile(r"^\| (?:Lesson|Урок) \| Live", re.M)  # one row per lesson: "| 03 ... |"
LOAD_HEADER = re.compile(r"^\| (?:Lesson|Урок) \| 00 .*$", re.M)  # one column per lesson


def check_class_endpoint(text: str, order: tuple[str, ...], where: str) -> list[str]:
    """The class-endpoint guide's two lesson tables list every lesson, in order, in one table."""
    numbers = [name[:2] for name in order]
    problems = []
    table = LIVE_TABLE.search(text)
    rows = text[table.start() :].split("\n\n")[0].splitlines()[2:] if table else []
    listed = [row[2:4] for row in rows if re.match(r"\| \d\d ", row)]
    if listed != numbers:
        problems.append(
            f"{where}: the table of lessons that run live lists {listed} (one unbroken table "
            f"with a row per lesson expected: {numbers})"
        )
    header = LOAD_HEADER.search(text)
    columns = re.findall(r"\| (\d\d) (?=\|)", header.group(0)) if header else []
    if columns != numbers:
        problems.append(f"{where}: the load table's columns are {columns}, the lessons {numbers}")
    return problems


def all_problems(nb_dir: Path) -> list[str]:
    """Every check over every lesson of a series folder (and the repository around it)."""
    names = lesson_names(nb_dir)
    order = series_order(names)
    root = nb_dir.parent
    problems = lesson_problems(
        nb_dir / "src", root / "helpers" / "replay" / "scenarios", root / "data" / "recordings"
    )
    problems += check_readme_map(root / "README.md", nb_dir, order)
    titles = {lang: lesson_titles(nb_dir / lang, names) for lang in LANGS}
    for name in names:
        problems += check_file_set(nb_dir, name)
        have = {lang: nb_dir / lang / f"{name}.ipynb" for lang in LANGS}
        if all(p.exists() for p in have.values()):
            problems += check_parity(read_nb(have["en"]), read_nb(have["ru"]), name)
            problems += check_russian_prose(read_nb(have["ru"]), f"ru/{name}")
        for lang, path in have.items():
            if not path.exists():
                continue
            nb, where = read_nb(path), f"{lang}/{name}"
            if (nb_dir / "src" / f"{name}.py").exists():
                problems += check_built_from_source(nb_dir, name, lang)
            problems += check_hygiene(nb, where)
            problems += check_setup_cell(nb, where)
            problems += check_next_link(nb, name, order, where)
            problems += check_link_titles(nb, titles[lang], where)
            problems += check_end_of_series(nb, name, order, lang, where)
            if name == order[0]:
                problems += check_lesson_00_map(nb, order, where)
    return problems


# ---------------------------------------------------------------------------------------------
# The real notebooks: one case per lesson or per edition that exists now

REAL_LESSONS = lesson_names(NOTEBOOKS_DIR)
REAL_PAIRS = [
    n for n in REAL_LESSONS if all((NOTEBOOKS_DIR / g / f"{n}.ipynb").exists() for g in LANGS)
]
REAL_EDITIONS = [
    (lang, name)
    for name in REAL_LESSONS
    for lang in LANGS
    if (NOTEBOOKS_DIR / lang / f"{name}.ipynb").exists()
]
EDITION_IDS = [f"{lang}/{name}.ipynb" for lang, name in REAL_EDITIONS]


def _report(problems: list[str]) -> str:
    return "\n".join(problems)


def test_every_lesson_has_its_scenario_module_and_cassette():
    """The lesson list is `notebooks/src/`; each lesson needs `nNN_name.py` and `NN_name.json`."""
    problems = lesson_problems()
    assert not problems, _report(problems)


def test_readme_lesson_map_has_every_lesson():
    problems = check_readme_map(REPO_ROOT / "README.md", NOTEBOOKS_DIR, series_order(REAL_LESSONS))
    assert not problems, _report(problems)


@pytest.mark.parametrize("doc", CLASS_DOCS)
def test_class_endpoint_tables_have_every_lesson(doc):
    text = (REPO_ROOT / doc).read_text(encoding="utf-8")
    problems = check_class_endpoint(text, series_order(REAL_LESSONS), doc)
    assert not problems, _report(problems)


def test_class_endpoint_check_catches_a_missing_or_split_row():
    text = (REPO_ROOT / CLASS_DOCS[0]).read_text(encoding="utf-8")
    order = series_order(REAL_LESSONS)
    row = next(line for line in text.splitlines() if line.startswith("| 01 "))
    for broken in (text.replace(row + "\n", ""), text.replace(row + "\n", row + "\n\n")):
        assert any("run live lists" in p for p in check_class_endpoint(broken, order, "x"))
    assert check_class_endpoint(text.replace("| 01 | 02 |", "| 02 |"), order, "x")


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_00_map_has_every_lesson(lang):
    order = series_order(REAL_LESSONS)
    nb = read_nb(NOTEBOOKS_DIR / lang / f"{order[0]}.ipynb")
    problems = check_lesson_00_map(nb, order, f"{lang}/{order[0]}")
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", REAL_LESSONS)
def test_lesson_has_both_editions_and_a_source(name):
    problems = check_file_set(NOTEBOOKS_DIR, name)
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", REAL_PAIRS)
def test_en_ru_parity(name):
    en, ru = (read_nb(NOTEBOOKS_DIR / lang / f"{name}.ipynb") for lang in LANGS)
    problems = check_parity(en, ru, name)
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", REAL_PAIRS)
def test_russian_prose_is_translated(name):
    problems = check_russian_prose(read_nb(NOTEBOOKS_DIR / "ru" / f"{name}.ipynb"), f"ru/{name}")
    assert not problems, _report(problems)


@pytest.mark.parametrize(("lang", "name"), REAL_EDITIONS, ids=EDITION_IDS)
def test_notebook_is_built_from_its_source(lang, name):
    assert (NOTEBOOKS_DIR / "src" / f"{name}.py").exists(), f"src/{name}.py is missing"
    problems = check_built_from_source(NOTEBOOKS_DIR, name, lang)
    assert not problems, _report(problems)


@pytest.mark.parametrize(("lang", "name"), REAL_EDITIONS, ids=EDITION_IDS)
def test_outputs_are_clean(lang, name):
    problems = check_hygiene(read_nb(NOTEBOOKS_DIR / lang / f"{name}.ipynb"), f"{lang}/{name}")
    assert not problems, _report(problems)


@pytest.mark.parametrize(("lang", "name"), REAL_EDITIONS, ids=EDITION_IDS)
def test_one_setup_cell(lang, name):
    problems = check_setup_cell(read_nb(NOTEBOOKS_DIR / lang / f"{name}.ipynb"), f"{lang}/{name}")
    assert not problems, _report(problems)


@pytest.fixture(scope="module")
def real_titles() -> dict[str, dict[str, str]]:
    """Every real lesson's title, by edition (read once, not once per lesson)."""
    return {lang: lesson_titles(NOTEBOOKS_DIR / lang, REAL_LESSONS) for lang in LANGS}


@pytest.mark.parametrize(("lang", "name"), REAL_EDITIONS, ids=EDITION_IDS)
def test_links_to_the_next_lesson(lang, name, real_titles):
    nb = read_nb(NOTEBOOKS_DIR / lang / f"{name}.ipynb")
    order, where = series_order(REAL_LESSONS), f"{lang}/{name}"
    problems = check_next_link(nb, name, order, where)
    problems += check_link_titles(nb, real_titles[lang], where)
    problems += check_end_of_series(nb, name, order, lang, where)
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", REAL_LESSONS)
def test_no_todo_is_left_from_the_new_lesson_template(name):
    left = scripts_support.template_leftovers(name)
    assert not left, "left from scripts/new_lesson.py's template:\n" + _report(left)


# ---------------------------------------------------------------------------------------------
# The checks themselves, on a two-lesson fixture series built with nbbuild

FIXTURE_ORDER = ("00_alpha", "01_beta")
FIXTURE_SOURCES = {
    "00_alpha": """
from nbbuild import Lesson, code, md

LESSON = Lesson("00_alpha", [
    md("# Alpha\\n\\nA tiny lesson.", "# Альфа\\n\\nКрошечный урок (lesson)."),
    code(
        'from helpers import connect\\n\\nconn = connect("kimi")  # the setup\\nconn',
        'from helpers import connect\\n\\nconn = connect("kimi")  # настройка\\nconn',
    ),
    code('print("hello")  # greet', 'print("hello")  # поздороваться'),
    md("A failing call:\\n```python\\nboom()\\n```", "Вызов с ошибкой:\\n```python\\nboom()\\n```"),
    code('raise ValueError("boom")', tags=("raises-exception",)),
    code("answer = 42", hidden=True),
    md("[Next: 01 Beta](01_beta.ipynb)", "[Дальше: 01 Бета](01_beta.ipynb)"),
    md("| lesson |\\n|---|\\n| [01 Beta](01_beta.ipynb) |", "| урок |\\n|---|\\n| [01 Бета](01_beta.ipynb) |"),
])
""",
    "01_beta": """
from nbbuild import Lesson, code, md

LESSON = Lesson("01_beta", [
    md("# Beta", "# Бета"),
    code("x = 1 + 1\\nx"),
    md(
        "That is the end of the series. Back to the start: [00 Alpha](00_alpha.ipynb)",
        "Это конец серии. Вернуться к началу: [00 Альфа](00_alpha.ipynb)",
    ),
])
""",
}
FIXTURE_README = """
| # | English | Русский |
|---|---|---|
| 0 | [Alpha](notebooks/en/00_alpha.ipynb) | [Альфа](notebooks/ru/00_alpha.ipynb) |
| 1 | [Beta](notebooks/en/01_beta.ipynb) | [Бета](notebooks/ru/01_beta.ipynb) |
"""
FIXTURE_OUTPUTS = {  # (lesson, code cell index) -> outputs, as a replay run would leave them
    ("00_alpha", 0): [
        nbformat.v4.new_output(
            "execute_result",
            {"text/plain": f"Connection(provider='kimi', api_key='{REPLAY_API_KEY}')"},
        )
    ],
    ("00_alpha", 1): [nbformat.v4.new_output("stream", name="stdout", text="hello\n")],
    ("00_alpha", 2): [
        nbformat.v4.new_output(
            "error",
            ename="ValueError",
            evalue="boom",
            traceback=["\x1b[31mValueError\x1b[39m: boom"],
        )
    ],
    ("01_beta", 0): [nbformat.v4.new_output("execute_result", {"text/plain": "2"})],
}


@pytest.fixture
def series(tmp_path, monkeypatch) -> Path:
    """A `notebooks/` folder with two lessons written by nbbuild itself, outputs filled in."""
    nb_dir = tmp_path / "notebooks"
    (nb_dir / "src").mkdir(parents=True)
    for lang in LANGS:
        (nb_dir / lang).mkdir()
    for name, text in FIXTURE_SOURCES.items():
        (nb_dir / "src" / f"{name}.py").write_text(text, encoding="utf-8")
    (tmp_path / "README.md").write_text(FIXTURE_README, encoding="utf-8")
    scenarios, recordings = (
        tmp_path / "helpers" / "replay" / "scenarios",
        tmp_path / "data" / "recordings",
    )
    scenarios.mkdir(parents=True)
    recordings.mkdir(parents=True)
    for name in FIXTURE_ORDER:
        (scenarios / f"n{name}.py").write_text(f'NOTEBOOK = "{name}"\nSCENARIOS = []\n', "utf-8")
        (recordings / f"{name}.json").write_text('{"interactions": []}\n', "utf-8")
    monkeypatch.setattr(nbbuild, "ROOT", tmp_path)
    monkeypatch.setattr(nbbuild, "SRC", nb_dir / "src")
    for name in FIXTURE_ORDER:
        nbbuild.build(name, run=False)
        for lang in LANGS:

            def fill(nb, name=name):
                for i, cell in enumerate(code_cells(nb)):
                    cell.outputs = FIXTURE_OUTPUTS.get((name, i), [])
                    for out in cell.outputs:
                        if out.output_type == "execute_result":
                            out.execution_count = cell.execution_count

            edit(nb_dir, lang, name, fill)
    return nb_dir


def edit(nb_dir: Path, lang: str, name: str, change: Callable) -> None:
    """Change a fixture notebook in place, written the way nbbuild writes."""
    path = nb_dir / lang / f"{name}.ipynb"
    nb = read_nb(path)
    change(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def _cell(nb, key: str):
    """The fixture's cell by position: "00-002" is the third cell of lesson 00."""
    return nb.cells[int(key.split("-")[1])]


def _add_output(cell_id: str, output) -> Callable:
    return lambda nb: _cell(nb, cell_id).outputs.append(output)


def _set(cell_id: str, **fields) -> Callable:
    return lambda nb: _cell(nb, cell_id).update(fields)


def _stdout(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


# Outputs that show where a file is on the machine (each of MACHINE_PATHS' kinds).
MACHINE_PATH_OUTPUTS = (
    "saved to /work/main/x.json\n",
    "C:\\Users\\me\n",
    "cache in /Users/ana/.cache/huggingface\n",
    "python: /opt/conda/bin/python\n",
    "C:/toolcall/notebooks\n",
)

# name -> (language, lesson, change, a phrase the problem report must contain)
DEFECTS = {
    "ru notebook missing": ("ru", "01_beta", "delete", "ru/01_beta.ipynb is missing"),
    "source missing": ("src", "01_beta", "delete", "src/01_beta.py is missing"),
    "code differs": (
        "ru",
        "00_alpha",
        _set("00-002", source='print("hello", end="")  # привет'),
        "code differs between en and ru",
    ),
    "tag differs": (
        "ru",
        "00_alpha",
        lambda nb: _cell(nb, "00-004").metadata.pop("tags"),
        "(kind, tags, hidden)",
    ),
    "hidden flag differs": (
        "en",
        "00_alpha",
        lambda nb: _cell(nb, "00-005").metadata.pop("jupyter"),
        "(kind, tags, hidden)",
    ),
    "extra cell in one edition": (
        "en",
        "01_beta",
        lambda nb: nb.cells.append(nbformat.v4.new_markdown_cell("# x")),
        "en has 4 cells, ru has 3",
    ),
    "stale output in one edition": (
        "ru",
        "01_beta",
        _set("01-001", outputs=[_stdout("3\n")]),
        "outputs differ between en and ru",
    ),
    "markdown edited by hand": (
        "en",
        "00_alpha",
        _set("00-000", source="# Alpha!"),
        "source differs from the source",
    ),
    "comment edited by hand": (
        "ru",
        "00_alpha",
        _set("00-002", source='print("hello")  # привет'),
        "source differs from the source",
    ),
    "saved by an editor": (
        "en",
        "01_beta",
        lambda nb: nb.metadata.update(language_info={"name": "python", "version": "3.11.7"}),
        "notebook metadata",
    ),
    "lesson source renamed": ("src", "01_beta", "rename-lesson", "declares Lesson('01_gamma')"),
    "unrun cell with outputs": (
        "en",
        "01_beta",
        _set("01-001", execution_count=None),
        "outputs with execution_count null",
    ),
    "counts out of order": (
        "en",
        "00_alpha",
        _set("00-002", execution_count=7),
        "execution counts are [10, 7, 30, 40]",
    ),
    **{
        f"machine path {text.split()[-1]}": (
            "en",
            "00_alpha",
            _add_output("00-002", _stdout(text)),
            "machine path",
        )
        for text in MACHINE_PATH_OUTPUTS
    },
    "path in a traceback": (
        "en",
        "00_alpha",
        lambda nb: (
            _cell(nb, "00-004")
            .outputs[0]
            .traceback.append("File \x1b[32m~/.pyenv/lib/json/decoder.py:337\x1b[39m")
        ),
        "traceback output shows a machine path",
    ),
    "local port": (
        "en",
        "00_alpha",
        _add_output("00-002", _stdout("http://127.0.0.1:43512/v1\n")),
        "local port",
    ),
    "key in output": (
        "en",
        "00_alpha",
        _add_output("00-002", _stdout("key sk-live0123456789\n")),
        "looks like a secret",
    ),
    "bearer header": (
        "en",
        "00_alpha",
        _add_output("00-002", _stdout("Authorization: Bearer abcdefghijklmnop\n")),
        "looks like a secret",
    ),
    "api key in code": (
        "en",
        "01_beta",
        _set("01-001", source='api_key = "EMPTY"\nx = 1 + 1\nx'),
        "api_key value",
    ),
    "stderr": (
        "en",
        "01_beta",
        _add_output(
            "01-001", nbformat.v4.new_output("stream", name="stderr", text="UserWarning: x\n")
        ),
        "stderr output",
    ),
    "widget view saved": (
        "en",
        "01_beta",
        _add_output(
            "01-001",
            nbformat.v4.new_output(
                "display_data",
                {WIDGET_VIEW: {"model_id": "3f2a", "version_major": 2, "version_minor": 0}},
            ),
        ),
        "a widget view is saved",
    ),
    "widget state saved": (
        "en",
        "01_beta",
        lambda nb: nb.metadata.update(widgets={WIDGET_STATE: {}}),
        "widget state",
    ),
    "untagged error": (
        "en",
        "01_beta",
        _add_output(
            "01-001", nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=[])
        ),
        "not tagged raises-exception",
    ),
    "tagged cell did not raise": (
        "en",
        "00_alpha",
        _set("00-004", outputs=[]),
        "its output shows no error",
    ),
    "second setup cell": (
        "en",
        "00_alpha",
        _set("00-002", source="again = connect()"),
        "2 setup cells connect to 'kimi'",
    ),
    "no setup cell": (
        "en",
        "00_alpha",
        _set("00-001", source="client = OpenAI()"),
        "no cell calls connect()",
    ),
    "model used before setup": (
        "en",
        "00_alpha",
        lambda nb: (
            _set("00-001", source="client = OpenAI()")(nb),
            _set("00-002", source='c = connect("kimi")')(nb),
        ),
        "talks to a model before the setup cell",
    ),
    "no next link": (
        "en",
        "00_alpha",
        _set("00-006", source="The end."),
        "no link to the next lesson",
    ),
    "link to a lesson that is not": (
        "ru",
        "00_alpha",
        _set("00-006", source="[Дальше](01_bta.ipynb)"),
        "01_bta.ipynb, which is not a lesson",
    ),
    "a Next link whose text is not the title": (
        "ru",
        "00_alpha",
        _set("00-006", source="[Дальше: 01 Бэта](01_beta.ipynb)"),
        "the lesson's title is 01 'Бета'",
    ),
    "a Next link without the lesson's number and title": (
        "en",
        "00_alpha",
        _set("00-006", source="[Next lesson](01_beta.ipynb)"),
        "a Next link is not written",
    ),
    "the end of the series before the last lesson": (
        "en",
        "00_alpha",
        _set("00-006", source="[Next: 01 Beta](01_beta.ipynb). That is the end of the series."),
        "but 01_beta comes later",
    ),
    "the last lesson does not say it ends the series": (
        "ru",
        "01_beta",
        _set("01-002", source="Вернуться к началу: [00 Альфа](00_alpha.ipynb)"),
        "the last lesson does not say",
    ),
    "no scenario module": (
        "repo",
        "helpers/replay/scenarios/n01_beta.py",
        "delete",
        "lesson 01_beta has no scenario module n01_beta.py",
    ),
    "scenario module of another lesson": (
        "repo",
        "helpers/replay/scenarios/n01_beta.py",
        'NOTEBOOK = "01_gamma"\nSCENARIOS = []\n',
        "n01_beta.py must say NOTEBOOK = '01_beta'",
    ),
    "scenario module without a lesson": (
        "repo",
        "helpers/replay/scenarios/n02_gamma.py",
        'NOTEBOOK = "02_gamma"\nSCENARIOS = []\n',
        "n02_gamma.py belongs to no lesson",
    ),
    "no cassette": (
        "repo",
        "data/recordings/01_beta.json",
        "delete",
        "lesson 01_beta has no cassette data/recordings/01_beta.json",
    ),
    "no README row": (
        "repo",
        "README.md",
        FIXTURE_README.replace("| 1 | [Beta]", "| 1 | Beta"),
        "README.md: the lesson map has no en link for 01_beta",
    ),
    "README title is not the notebook's": (
        "repo",
        "README.md",
        FIXTURE_README.replace("[Бета]", "[Бэта]"),
        "README.md calls ru/01_beta 'Бэта'",
    ),
    "no row in lesson 00's map": (
        "ru",
        "00_alpha",
        _set("00-007", source="| урок |\n|---|"),
        "ru/00_alpha: the lesson map has no row for 01_beta",
    ),
    "untranslated Russian cell": (
        "ru",
        "00_alpha",
        _set("00-003", source="A failing call:\n```\nboom()\n```"),
        "prose has no Cyrillic",
    ),
}


def test_fixture_series_is_clean(series):
    assert all_problems(series) == []


def test_a_changed_comment_keeps_parity(series):
    en = read_nb(series / "en" / "00_alpha.ipynb")
    ru = read_nb(series / "ru" / "00_alpha.ipynb")
    _cell(ru, "00-002").source = 'print("hello")  # совсем другой комментарий\n# и ещё строка'
    assert check_parity(en, ru) == []


def test_a_stream_split_differently_keeps_parity(series):
    en = read_nb(series / "en" / "00_alpha.ipynb")
    ru = read_nb(series / "ru" / "00_alpha.ipynb")
    _cell(ru, "00-002").outputs = [_stdout("hel"), _stdout("lo\n")]
    assert check_parity(en, ru) == []


def test_an_engine_profile_connect_is_not_a_second_setup(series):
    nb = read_nb(series / "en" / "00_alpha.ipynb")
    _cell(nb, "00-002").source = 'vllm = connect("kimi", engine="vllm")'
    assert check_setup_cell(nb, "en/00_alpha") == []


def test_a_second_provider_is_not_a_second_setup(series):
    nb = read_nb(series / "en" / "00_alpha.ipynb")
    _cell(nb, "00-002").source = 'qwen = connect(provider="qwen")'
    assert check_setup_cell(nb, "en/00_alpha") == []


def test_a_lesson_without_a_model_needs_no_setup(series):
    assert check_setup_cell(read_nb(series / "en" / "01_beta.ipynb"), "en/01_beta") == []


def test_placeholders_are_not_secrets():
    text = "Set KIMI_API_KEY=sk-... and send it as a Bearer token; api_key='replay-needs-no-key'; task-sk-1"
    assert _secret_problems(text, "x") == []


def test_the_last_lesson_needs_no_next_link(series):
    nb = read_nb(series / "en" / "01_beta.ipynb")
    assert check_next_link(nb, "01_beta", FIXTURE_ORDER, "en/01_beta") == []


@pytest.mark.parametrize("defect", DEFECTS)
def test_checks_catch(series, defect):
    where, name, change, phrase = DEFECTS[defect]
    if where == "repo" and change == "delete":
        (series.parent / name).unlink()
    elif where == "repo":
        (series.parent / name).write_text(change, encoding="utf-8")
    elif where == "src" and change == "delete":
        (series / "src" / f"{name}.py").unlink()
    elif change == "rename-lesson":
        path = series / "src" / f"{name}.py"
        path.write_text(
            path.read_text(encoding="utf-8").replace('"01_beta"', '"01_gamma"'), "utf-8"
        )
    elif change == "delete":
        (series / where / f"{name}.ipynb").unlink()
    else:
        edit(series, where, name, change)
    problems = all_problems(series)
    assert any(phrase in p for p in problems), _report(problems) or "no problem reported"


# ---------------------------------------------------------------------------------------------
# nbbuild itself: stable ids, --no-execute keeps outputs, sources hold code as plain literals


def _ids(cells) -> list[str]:
    return nbbuild.cell_ids(nbbuild.Lesson("07_ids", cells))


def test_inserting_a_cell_renumbers_no_other_cell():
    cells = [
        nbbuild.md("# Title", "# Заголовок"),
        nbbuild.code("x = 1"),
        nbbuild.code("x = 1"),
        nbbuild.md("## 1. Step", "## 1. Шаг"),
        nbbuild.code("print(x)"),
    ]
    before = _ids(cells)
    assert len(set(before)) == len(before) and all(i.startswith("07-") for i in before)
    after = _ids([*cells[:3], nbbuild.code("y = 2  # new"), *cells[3:]])
    assert [i for i in after if i not in before] == [after[3]]
    assert after[:3] + after[4:] == before
    assert _ids([cells[0], *cells[2:]]) == [before[0], before[1], *before[3:]]  # a twin removed


def test_an_edited_translation_keeps_the_id_and_an_explicit_id_wins():
    ru_changed = _ids([nbbuild.md("# Title", "# Другой заголовок"), nbbuild.code("x = 1")])
    assert ru_changed == _ids([nbbuild.md("# Title", "# Заголовок"), nbbuild.code("x = 1")])
    assert _ids([nbbuild.md("# Title", "# Т", id="title")])[0] == "title"
    with pytest.raises(ValueError, match="used twice"):
        _ids([nbbuild.md("# A", "# А", id="same"), nbbuild.code("x", id="same")])


def _replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _texts(series: Path, name: str) -> dict[str, str]:
    return {lang: (series / lang / f"{name}.ipynb").read_text(encoding="utf-8") for lang in LANGS}


def test_no_execute_keeps_the_outputs_of_unchanged_cells(series):
    committed = _texts(series, "00_alpha")
    nbbuild.build("00_alpha", run=False)
    assert _texts(series, "00_alpha") == committed
    _replace_in(series / "src" / "00_alpha.py", "A tiny lesson.", "A very small lesson.")
    nbbuild.build("00_alpha", run=False)
    en = read_nb(series / "en" / "00_alpha.ipynb")
    assert en.cells[0].source.endswith("A very small lesson.")
    before = nbformat.reads(committed["en"], as_version=4)
    assert [c.outputs for c in code_cells(en)] == [c.outputs for c in code_cells(before)]
    assert all_problems(series) == []


def test_no_execute_refuses_to_drop_the_outputs_of_a_changed_cell(series):
    committed = _texts(series, "00_alpha")
    _replace_in(series / "src" / "00_alpha.py", "# greet", "# say hello")
    with pytest.raises(nbbuild.OutputsWouldBeLost, match="changed and have committed outputs"):
        nbbuild.build("00_alpha", run=False)
    assert _texts(series, "00_alpha") == committed


def test_a_traceback_is_shortened_once():
    lines = [
        "header",
        "----",
        "lib 1",
        "lib 2",
        "\x1b[32mCell In[3], line 1\x1b[39m",
        "lib 3",
        "E: boom",
    ]
    once = nbbuild._short_traceback(lines)
    assert once.count("... 2 library frame(s) hidden in the saved notebook ...") == 1
    assert nbbuild._short_traceback(once) == once


TEMPLATED = {
    "JoinedStr": "an f-string",
    "BinOp": "a % or + expression",
    "Call": "a call (.format?)",
}


def _literal_source(lines: list[bytes], node: ast.expr) -> str:
    """The source text of a node (what `ast.get_source_segment` returns, without splitting the
    whole file again for every node; offsets are in UTF-8 bytes)."""
    chunk = lines[node.lineno - 1 : node.end_lineno]
    if len(chunk) == 1:
        return chunk[0][node.col_offset : node.end_col_offset].decode()
    return b"".join(
        [chunk[0][node.col_offset :], *chunk[1:-1], chunk[-1][: node.end_col_offset]]
    ).decode()


def code_cell_problems(path: Path) -> list[str]:
    """`code(...)` sources are plain literals (raw when they hold a backslash) or a module-level
    name bound to one: what the source shows is what the cell holds, with no templating."""
    text = path.read_text(encoding="utf-8")
    lines = text.encode().splitlines(keepends=True)
    tree = ast.parse(text)
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "code"):
            continue
        for arg in node.args[:2] + [k.value for k in node.keywords if k.arg == "ru"]:
            where = f"{path.name}:{arg.lineno}"
            if isinstance(arg, ast.Name) and arg.id in assigned:
                arg = assigned[arg.id]
            if isinstance(arg, ast.Dict):
                continue  # {English comment: Russian comment}
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                kind = TEMPLATED.get(type(arg).__name__, type(arg).__name__)
                problems.append(f"{where}: code cell built from {kind}; write the code as it runs")
            elif "\\" in (segment := _literal_source(lines, arg)) and segment[:1] not in "rR":
                problems.append(
                    f"{where}: code cell with a backslash: make it a raw string r'''...'''"
                )
    return problems


@pytest.mark.parametrize("name", REAL_LESSONS)
def test_code_cells_are_written_as_they_run(name):
    problems = code_cell_problems(NOTEBOOKS_DIR / "src" / f"{name}.py")
    assert not problems, _report(problems)


def test_templated_code_cells_are_caught(tmp_path):
    source = tmp_path / "09_bad.py"
    source.write_text(
        "P = 'hi'\n"
        "LOOP = 'x = 1'\n"
        "cells = [code(f'print({P!r})'), code('print(%r)' % P), code('a\\\\nb'), code(r'a\\nb'),\n"
        "         code(LOOP), code('x', ru={'# a': '# б'}), code(P.upper())]\n",
        encoding="utf-8",
    )
    problems = code_cell_problems(source)
    assert [p.split(": ", 1)[1].split(";")[0].split(":")[0] for p in problems] == [
        "code cell built from an f-string",
        "code cell built from a % or + expression",
        "code cell with a backslash",
        "code cell built from a call (.format?)",
    ]


def test_the_folded_frames_line_speaks_the_editions_language():
    lines = ["header", "----", "lib 1", "\x1b[32mCell In[3], line 1\x1b[39m", "E: boom"]
    russian = nbbuild._short_traceback(lines, "ru")
    assert russian[2] == "... кадров библиотек, скрытых в сохранённом блокноте: 1 ..."
    assert nbbuild._short_traceback(russian, "ru") == russian  # idempotent in Russian too
    assert "library frame(s)" in nbbuild._short_traceback(lines, "en")[2]


def test_an_engine_profile_is_a_setup_only_before_any_other_setup():
    assert _setup_providers('conn = connect("kimi", engine="moonshot_thinking")') == {"kimi"}
    assert _setup_providers('connect("kimi", engine="vllm")', {"kimi"}) == set()
    assert _setup_providers('connect("qwen", "ollama")', {"kimi"}) == {"qwen"}
    assert _setup_providers("connect()") == {"kimi"}


def test_the_russian_edition_switches_language_even_with_a_translated_comment():
    src = 'set_language("en")  # the language of the helpers\' messages'
    assert nbbuild.code(src).ru == 'set_language("ru")  # язык сообщений помощников'
    own = nbbuild.code(src, ru={"# the language of the helpers' messages": "# по-русски"})
    assert own.ru == 'set_language("ru")  # по-русски'
