"""Build the published book: the lessons as a static site, in English and in Russian.

    python scripts/build_site.py             # build/site/en/, build/site/ru/, build/site/index.html
    python scripts/build_site.py --out DIR

Sphinx and myst-nb (`pip install -r requirements-site.txt`) render the committed notebooks with
their stored outputs; nothing is executed (`nb_execution_mode = "off"`) and nothing is fetched:
no intersphinx, the `alabaster` theme that ships in Sphinx's wheel, no widget or MathJax script
from a CDN. Each book shows the student edition of every lesson (`helpers.edition`: the committed
notebook without the reference solutions, which a public book would hand to every student), the
same table of contents in both languages, a link on every page to the same page in the other
language, Sphinx's offline search (`language = "ru"` for the Russian book: Russian stemming), a
note in place of each interactive widget (the committed notebooks keep no widget output), and a
"run it yourself" box with README's two commands (its `<!-- run -->` and `<!-- test -->` blocks).
The generated Sphinx sources go to `<out>-src/<lang>/`, so a build can be inspected by hand.
"""

from __future__ import annotations

import argparse
import ast
import html
import importlib.util
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT / "scripts", ROOT):  # this checkout's scripts and helpers first
    if str(_path) in sys.path:
        sys.path.remove(str(_path))
    sys.path.insert(0, str(_path))

import nbformat  # noqa: E402

from helpers.edition import student_notebook  # noqa: E402

LANGS = ("en", "ru")
DEFAULT_OUT = ROOT / "build" / "site"
INDEX = "index"  # the landing page of each book
SETUP = "setup"  # docs/lab_setup(.ru).md: installing the series on a computer or in a lab
SETUP_SOURCE = {"en": ROOT / "docs" / "lab_setup.md", "ru": ROOT / "docs" / "lab_setup.ru.md"}
LANGUAGE_NAME = {"en": "English", "ru": "Русский"}
TITLE = {
    "en": "Tool calling with Kimi-K2 and Qwen",
    "ru": "Вызов инструментов с Kimi-K2 и Qwen",
}
WORDS = {
    "en": {
        "intro": "A course unit in Jupyter notebooks on how large language models call tools: "
        "Moonshot AI's Kimi-K2 tool-calling guide step by step, its defects fixed, and the same "
        "loop with Qwen. Every lesson runs offline: a local server replays recorded answers, so "
        "no key, GPU or network is needed. These pages show each lesson with the outputs stored "
        "in its notebook; the reference solutions of the exercises are not included.",
        "lessons": "Lessons",
        "more": "Setting up",
        "setup": "Installing the series on your computer or in a computer lab: [{title}]({doc}).",
        "run_title": "Run it yourself",
        "run_lesson": "In a clone of the repository, open this lesson in JupyterLab (replay "
        "mode: no key, no GPU, no network):",
        "run_index": "In a clone of the repository, open the first lesson in JupyterLab (replay "
        "mode: no key, no GPU, no network):",
        "run_test": "Run every test (the helpers, the replay server and every notebook under "
        "`pytest --nbval`):",
        "widget_title": "Interactive widget",
        "widget": "In Jupyter this cell shows {what} (`{name}`). A static page cannot run it: "
        "open the notebook to use it (see “Run it yourself” at the top of the page).",
        "other": "This page in English",
    },
    "ru": {
        "intro": "Учебный блок в блокнотах Jupyter о том, как большие языковые модели вызывают "
        "инструменты: руководство Moonshot AI по вызову инструментов в Kimi-K2 шаг за шагом, "
        "исправления его ошибок и тот же цикл с Qwen. Каждый урок работает без сети: локальный "
        "сервер воспроизводит записанные ответы, поэтому не нужны ни ключ, ни GPU, ни интернет. "
        "Здесь уроки показаны с результатами, сохранёнными в блокнотах; эталонных решений "
        "упражнений здесь нет.",
        "lessons": "Уроки",
        "more": "Установка",
        "setup": "Как установить серию на свой компьютер или в компьютерный класс: "
        "[{title}]({doc}).",
        "run_title": "Запустите сами",
        "run_lesson": "В клоне репозитория откройте этот урок в JupyterLab (режим "
        "воспроизведения (replay): без ключа, GPU и сети):",
        "run_index": "В клоне репозитория откройте первый урок в JupyterLab (режим "
        "воспроизведения (replay): без ключа, GPU и сети):",
        "run_test": "Запустите все тесты (помощники, сервер воспроизведения и каждый блокнот "
        "под `pytest --nbval`):",
        "widget_title": "Интерактивный виджет",
        "widget": "В Jupyter эта ячейка показывает {what} (`{name}`). Статическая страница не "
        "может его запустить: откройте блокнот (см. «Запустите сами» в начале страницы).",
        "other": "Эта страница по-русски",
    },
}
# What each widget of helpers/widgets.py shows, for the note that stands in for it. A widget
# missing here gets the generic words (`WIDGET_GENERIC`); a test keeps this list complete.
WIDGETS = {
    "StreamViewer": {
        "en": "a stream viewer: a slider and a Play button step through the stream chunk by "
        "chunk, and the view shows the text and the tool calls assembled so far",
        "ru": "просмотр потока: ползунок и кнопка Play проходят поток по фрагментам, а под ними "
        "видно, какой текст и какие вызовы инструментов уже собраны",
    },
    "ParserPlayground": {
        "en": "a parser playground: type or pick raw model output, and our parser and the "
        "guide's read it side by side as you type",
        "ru": "песочницу для парсеров: введите или выберите сырой вывод модели, и наш парсер и "
        "парсер из руководства разберут его рядом, пока вы печатаете",
    },
}
WIDGETS["watch_stream"] = WIDGETS["StreamViewer"]  # builds and shows a StreamViewer
WIDGET_GENERIC = {"en": "an interactive widget", "ru": "интерактивный виджет"}
README_BLOCK = re.compile(r"<!-- (run|test) -->\s*```bash\n(.*?)\n```", re.DOTALL)
NOTEBOOK_PATH = re.compile(r"notebooks/en/\d\d_\w+\.ipynb")
HEADING = re.compile(r"^# (.+)$", re.MULTILINE)
# An HTML anchor in a lesson's prose (`<a id="reference"></a>` before its folded reference block)
# is raw HTML to MyST, which resolves `[text](#reference)` among its own targets and finds none:
# such a link becomes raw HTML too (plain words only; anything else stays and fails the build).
ANCHOR = re.compile(r'^<a id="([\w-]+)"></a>$', re.MULTILINE)
ANCHOR_LINK = re.compile(r"\[([\w ]+)\]\(#([\w-]+)\)")
# JupyterLab draws ```mermaid blocks; a static page without mermaid.js shows their text.
MERMAID = re.compile(r"^```mermaid$", re.MULTILINE)

# The page template: alabaster's, with the link to the same page in the other language on top.
LAYOUT = """{% extends "!layout.html" %}
{% block relbar_top %}
<nav class="language-switch" aria-label="language">
<a class="other-language" href="{{ other_language_url }}" hreflang="{{ other_language }}"
   lang="{{ other_language }}" title="{{ other_language_title }}">{{ other_language_label }}</a>
</nav>
{{ super() }}
{% endblock %}
"""
CSS = """
nav.language-switch { text-align: right; margin-bottom: 0.5em; font-size: 0.95em; }
nav.language-switch a::before { content: "⇄ "; }
div.admonition.run-it-yourself pre { white-space: pre-wrap; overflow-wrap: anywhere; }
div.admonition p.admonition-title::after { content: ""; }
div.body { min-width: 0; max-width: none; }
div.sphinxsidebar #searchbox input[type="text"] { width: 150px; }
div.sphinxsidebar #searchbox input[type="submit"] { width: auto; padding: 0 0.4em; }
div.cell_output pre { max-height: 40em; overflow: auto; }
"""
CHOOSER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title_en} / {title_ru}</title></head>
<body>
<h1>{title_en}</h1><p><a href="en/index.html" hreflang="en">English</a></p>
<h1 lang="ru">{title_ru}</h1><p><a href="ru/index.html" hreflang="ru" lang="ru">Русский</a></p>
</body></html>
"""


class SiteError(ValueError):
    """README lacks a command block, a lesson has no notebook, or Sphinx is missing."""


# --------------------------------------------------------------------------- the lesson list


@dataclass(frozen=True)
class _Lesson:
    """What the book needs of a lesson when scripts/registry.py is absent (its `Lesson` has it)."""

    name: str
    title: dict[str, str]
    summary: dict[str, str] = field(default_factory=dict)
    root: Path = ROOT

    @property
    def number(self) -> int:
        return int(self.name[:2])

    def notebook(self, lang: str) -> Path:
        return self.root / "notebooks" / lang / f"{self.name}.ipynb"


def first_heading(path: Path) -> str:
    """The text of the first `# ` heading of a notebook (its title)."""
    nb = nbformat.read(path, as_version=4)
    text = "\n\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    return first_markdown_heading(text, f"{path.parent.name}/{path.name}")


def first_markdown_heading(text: str, where: str) -> str:
    found = HEADING.search(text)
    if not found:
        raise SiteError(f"{where} has no '# ' heading")
    return found.group(1).strip()


def _lessons(root: Path = ROOT) -> list:
    """The lessons in reading order: `registry.lessons()` (scripts/registry.py) when the checkout
    has it, else each notebooks/en/NN_*.ipynb with the first heading of both editions as title."""
    path = root / "scripts" / "registry.py"
    if path.exists():
        registry = sys.modules.get("registry")
        if registry is None or Path(registry.__file__).resolve() != path.resolve():
            spec = importlib.util.spec_from_file_location("registry", path)
            registry = sys.modules["registry"] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(registry)
        return list(registry.lessons())
    found = []
    for path in sorted((root / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb")):
        title = {lang: first_heading(root / "notebooks" / lang / path.name) for lang in LANGS}
        found.append(_Lesson(path.stem, title, root=root))
    return found


def toc(lessons: list, lang: str) -> list[tuple[str, str]]:
    """The book's table of contents as (document name, title): the lessons, then the set-up page.
    Both books have the same document names in the same order."""
    return [(lesson.name, lesson.title[lang]) for lesson in lessons] + [(SETUP, setup_title(lang))]


# --------------------------------------------------------------------------- pure page parts


def other_language(lang: str) -> str:
    return next(other for other in LANGS if other != lang)


def other_language_url(pagename: str, lang: str) -> str:
    """The relative address of the same page in the other book: the books are sibling folders
    (`<out>/en`, `<out>/ru`) with the same page names, e.g. `../ru/02_sync_loop.html`."""
    up = "../" * (pagename.count("/") + 1)
    return f"{up}{other_language(lang)}/{pagename}.html"


def readme_commands(readme: str) -> dict[str, str]:
    """README's two commands: {"run": ..., "test": ...} from its `<!-- run -->` and
    `<!-- test -->` bash blocks (the one source the book shows them from)."""
    found = {name: command.strip() for name, command in README_BLOCK.findall(readme)}
    missing = [name for name in ("run", "test") if name not in found]
    if missing:
        raise SiteError(
            f"README.md has no `<!-- {missing[0]} -->` block followed by a ```bash block: "
            "the book's run box shows README's two commands"
        )
    return found


def run_command(command: str, notebook: str) -> str:
    """README's run command with its notebook (`notebooks/en/00_start.ipynb`) replaced."""
    if len(NOTEBOOK_PATH.findall(command)) != 1:
        raise SiteError(
            f"README's run command should open exactly one notebooks/en/NN_name.ipynb: {command!r}"
        )
    return NOTEBOOK_PATH.sub(notebook, command)


def run_box(commands: dict[str, str], lang: str, lesson: str, index: bool = False) -> str:
    """The "run it yourself" box (MyST): README's run command opening `lesson` in this language
    (on the index page, `index=True`, the first lesson), and README's test command."""
    words = WORDS[lang]
    notebook = f"notebooks/{lang}/{lesson}.ipynb"
    intro = words["run_index"] if index else words["run_lesson"]
    return (
        f"````{{admonition}} {words['run_title']}\n:class: tip run-it-yourself\n\n{intro}\n\n"
        f"```bash\n{run_command(commands['run'], notebook)}\n```\n\n{words['run_test']}\n\n"
        f"```bash\n{commands['test']}\n```\n````"
    )


def widget_names(nb: nbformat.NotebookNode) -> list[str]:
    """The names a notebook imports from helpers.widgets."""
    names = []
    for cell in nb.cells:
        try:
            tree = ast.parse(cell.source) if cell.cell_type == "code" else None
        except SyntaxError:  # an exercise cell a student has not finished, an IPython magic
            continue
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.ImportFrom) and node.module == "helpers.widgets":
                names += [alias.asname or alias.name for alias in node.names]
    return names


def widget_in(cell: nbformat.NotebookNode, names: list[str]) -> str | None:
    """The widget a code cell shows, or None. The committed notebooks keep no widget output
    (nbbuild drops the view, whose model id is random, and tags the cell nbval-ignore-output),
    so a widget cell is one that calls an imported widget and carries that tag."""
    if cell.cell_type != "code" or "nbval-ignore-output" not in cell.metadata.get("tags", []):
        return None
    return next((n for n in names if re.search(rf"\b{re.escape(n)}\s*\(", cell.source)), None)


def widget_note(name: str, lang: str) -> str:
    """The static stand-in for a widget (MyST)."""
    words = WORDS[lang]
    what = WIDGETS.get(name, WIDGET_GENERIC)[lang]
    return (
        f"```{{admonition}} {words['widget_title']}\n:class: note widget-fallback\n\n"
        f"{words['widget'].format(what=what, name=name)}\n```"
    )


def book_notebook(
    key: nbformat.NotebookNode, lesson: str, lang: str, commands: dict[str, str]
) -> nbformat.NotebookNode:
    """A lesson as the book shows it: the student edition of the committed notebook (stored
    outputs, no solutions), the run box after the title cell, a note after each widget cell."""
    nb = student_notebook(key, lesson, lang)
    names = widget_names(nb)
    anchors = {a for c in nb.cells if c.cell_type == "markdown" for a in ANCHOR.findall(c.source)}
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = static_markdown(cell.source, anchors)
        cells.append(cell)
        if index == 0:
            cells.append(_markdown(run_box(commands, lang, lesson), f"{lesson[:2]}-site-run"))
        widget = widget_in(cell, names)
        if widget:
            cells.append(_markdown(widget_note(widget, lang), f"{cell.get('id')}-site-widget"))
    nb.cells = cells
    return nb


def static_markdown(source: str, anchors: set[str]) -> str:
    """A lesson's markdown cell for a static page: links to its HTML anchors as HTML links, its
    mermaid diagrams as text."""
    source = ANCHOR_LINK.sub(
        lambda m: f'<a href="#{m[2]}">{html.escape(m[1])}</a>' if m[2] in anchors else m[0],
        source,
    )
    return MERMAID.sub("```text", source)


def _markdown(source: str, cell_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    return cell


def setup_title(lang: str) -> str:
    path = SETUP_SOURCE[lang]
    return first_markdown_heading(path.read_text(encoding="utf-8"), f"docs/{path.name}")


def setup_page(lang: str) -> str:
    """docs/lab_setup(.ru).md for the book, without its line that links the other language's file
    (the language link on top of every page does that)."""
    text = SETUP_SOURCE[lang].read_text(encoding="utf-8")
    other = re.escape(SETUP_SOURCE[other_language(lang)].name)
    return re.sub(rf"^.*\]\({other}\).*\n\n?", "", text, count=1, flags=re.MULTILINE)


def index_page(lessons: list, lang: str, commands: dict[str, str]) -> str:
    """The landing page of one book: what the series is, the run box, the lessons with their
    summaries, the set-up page; its toctree is the book's table of contents."""
    words = WORDS[lang]
    items = []
    for lesson in lessons:
        summary = (getattr(lesson, "summary", None) or {}).get(lang, "")
        line = f"- [{lesson.name[:2]} {lesson.title[lang]}]({lesson.name}.ipynb)"
        items.append(f"{line}: {summary}" if summary else line)
    entries = "\n".join(name for name, _ in toc(lessons, lang))
    return "\n\n".join(
        [
            f"# {TITLE[lang]}",
            words["intro"],
            run_box(commands, lang, lessons[0].name, index=True),
            f"## {words['lessons']}",
            "\n".join(items),
            f"## {words['more']}",
            words["setup"].format(title=setup_title(lang), doc=f"{SETUP}.md"),
            f"```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{entries}\n```",
        ]
    )


# --------------------------------------------------------------------------- the build


def sphinx_config(lang: str) -> dict:
    """Sphinx's settings for one book (no conf.py: everything is here)."""
    return {
        "project": TITLE[lang],
        "language": lang,  # the search stems words in this language
        "extensions": ["myst_nb"],
        "root_doc": INDEX,
        "exclude_patterns": ["_build"],
        "templates_path": ["_templates"],
        "html_static_path": ["_static"],
        "html_css_files": ["book.css"],
        "html_theme": "alabaster",  # ships in Sphinx's wheel: no download
        "html_title": TITLE[lang],
        "html_theme_options": {
            "show_relbars": True,
            "show_powered_by": False,
            "page_width": "1220px",  # the lessons' code lines are up to 100 characters
            "sidebar_width": "240px",
        },
        # searchbox.html: its labels are translated (alabaster's searchfield.html says "Search")
        "html_sidebars": {
            "**": ["about.html", "searchbox.html", "navigation.html", "relations.html"]
        },
        "html_show_copyright": False,
        "html_show_sourcelink": False,
        "html_copy_source": False,
        "smartquotes": False,  # the text as the notebook shows it in Jupyter
        "html_last_updated_fmt": None,  # no build date: the same sources give the same pages
        "nb_execution_mode": "off",  # the stored outputs, never a kernel
        "nb_ipywidgets_js": {},  # no require.js or widget manager from a CDN
        "nb_merge_streams": True,
        "myst_heading_anchors": 3,
        "suppress_warnings": ["myst.header"],  # lessons start their steps at `##`
    }


def write_sources(src: Path, lang: str, lessons: list, commands: dict[str, str]) -> None:
    """Write one book's Sphinx sources into `src` (replaced)."""
    if src.exists():
        shutil.rmtree(src)
    (src / "_templates").mkdir(parents=True)
    (src / "_static").mkdir()
    (src / "_templates" / "layout.html").write_text(LAYOUT, encoding="utf-8")
    (src / "_static" / "book.css").write_text(CSS, encoding="utf-8")
    (src / f"{INDEX}.md").write_text(index_page(lessons, lang, commands), encoding="utf-8")
    (src / f"{SETUP}.md").write_text(setup_page(lang), encoding="utf-8")
    for lesson in lessons:
        path = lesson.notebook(lang)
        if not path.exists():
            raise SiteError(f"no {path.relative_to(ROOT)}: run `python scripts/nbbuild.py`")
        nb = book_notebook(nbformat.read(path, as_version=4), lesson.name, lang, commands)
        nbformat.write(nb, src / f"{lesson.name}.ipynb")


def _page_context(lang: str):
    def add(app, pagename, templatename, context, doctree) -> None:
        other = other_language(lang)
        context["other_language"] = other
        context["other_language_url"] = other_language_url(pagename, lang)
        context["other_language_label"] = LANGUAGE_NAME[other]
        context["other_language_title"] = WORDS[other]["other"]

    return add


def build_book(lang: str, src: Path, out: Path, quiet: bool = True) -> None:
    """Run Sphinx's html builder on `src` into `out` (replaced), warnings as errors."""
    try:
        from sphinx.application import Sphinx
        from sphinx.util.docutils import docutils_namespace, patch_docutils
    except ImportError as error:
        raise SiteError("no Sphinx: `pip install -r requirements-site.txt`") from error
    if out.exists():
        shutil.rmtree(out)
    # docutils_namespace: each book registers its nodes and roles afresh (as sphinx-build does).
    # Sphinx writes into a scratch folder: myst-nb puts its copies of the notebooks and their
    # images in `jupyter_execute/` beside the html folder, which must not land in the site.
    with tempfile.TemporaryDirectory() as work, patch_docutils(src), docutils_namespace():
        html = Path(work) / "html"
        app = Sphinx(
            str(src),
            None,
            str(html),
            str(Path(work) / "doctrees"),
            "html",
            confoverrides=sphinx_config(lang),
            status=None if quiet else sys.stdout,
            warning=sys.stderr,
            freshenv=True,
            warningiserror=True,
        )
        app.connect("html-page-context", _page_context(lang))
        app.build()
        if app.statuscode:
            raise SiteError(f"Sphinx failed on the {lang} book (status {app.statuscode})")
        (html / ".buildinfo").unlink(missing_ok=True)  # a config hash, no use to a reader
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(html, out)


def build(out: Path = DEFAULT_OUT, quiet: bool = True) -> dict[str, Path]:
    """Build both books into `out/<lang>` and a language chooser at `out/index.html`."""
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    lessons = _lessons()
    books = {}
    shutil.rmtree(out / "jupyter_execute", ignore_errors=True)  # left by builds before 2026-12
    for lang in LANGS:
        src = out.with_name(out.name + "-src") / lang
        write_sources(src, lang, lessons, commands)
        build_book(lang, src, out / lang, quiet=quiet)
        books[lang] = out / lang
    (out / "index.html").write_text(
        CHOOSER.format(title_en=html.escape(TITLE["en"]), title_ru=html.escape(TITLE["ru"])),
        encoding="utf-8",
    )
    return books


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default build/site")
    parser.add_argument("--verbose", action="store_true", help="show Sphinx's progress")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        books = build(args.out.resolve(), quiet=not args.verbose)
    except SiteError as error:
        sys.exit(f"build_site: {error}")
    for lang, folder in books.items():
        pages = sum(1 for _ in folder.rglob("*.html"))
        print(f"{lang}: {folder} ({pages} pages)")
    print(f"built in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
