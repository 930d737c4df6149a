"""The book builder's pure parts (scripts/build_site.py), without Sphinx: the table of contents,
the language links, the run box from README, what a lesson page is made of. The built pages are
checked in Chromium by tests/browser/test_site.py."""

from __future__ import annotations

import inspect
import json
import posixpath
import re

import ipywidgets
import nbformat
import pytest
import scripts_support

import helpers.widgets
from helpers.edition import is_solution, student_notebook

build_site = scripts_support.script("build_site")
ROOT = build_site.ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")
CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


@pytest.fixture(scope="module")
def commands():
    return build_site.readme_commands(README)


@pytest.fixture(scope="module")
def lessons():
    return build_site._lessons()


def test_the_commands_are_readmes_run_and_test_blocks(commands):
    for name in ("run", "test"):
        block = README.split(f"<!-- {name} -->", 1)[1].split("```bash\n", 1)[1].split("\n```")[0]
        assert commands[name] == block.strip()
    assert "jupyter lab" in commands["run"] and "notebooks/en/00_start.ipynb" in commands["run"]
    assert commands["test"].endswith("pytest")


@pytest.mark.parametrize("name", ["run", "test"])
def test_a_readme_without_a_block_is_refused_by_name(name):
    with pytest.raises(build_site.SiteError, match=f"<!-- {name} -->"):
        build_site.readme_commands(README.replace(f"<!-- {name} -->", ""))


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_run_box_opens_this_lesson_in_this_language_and_runs_every_test(commands, lang):
    box = build_site.run_box(commands, lang, "03_streaming")
    run = commands["run"].replace(
        "notebooks/en/00_start.ipynb", f"notebooks/{lang}/03_streaming.ipynb"
    )
    assert run in box and commands["test"] in box
    assert "notebooks/en/00_start" not in box
    assert build_site.WORDS[lang]["run_title"] in box
    first = build_site.run_box(commands, lang, "00_start", index=True)
    assert f"notebooks/{lang}/00_start.ipynb" in first and commands["test"] in first
    assert build_site.WORDS[lang]["run_index"] in first


def test_the_russian_run_box_speaks_to_the_student_in_one_form():
    """Every instruction of the Russian box is an imperative («Запустите», «откройте»), as its
    title is; an infinitive («Запустить все тесты») reads like a menu item next to it."""
    words = " ".join(v for k, v in build_site.WORDS["ru"].items() if k.startswith("run_"))
    verbs = re.findall(r"\b(?:[Зз]апуст|[Оо]ткр|[Вв]ыполн)\w*", words)
    assert len(verbs) >= 4, verbs
    assert [v for v in verbs if not v.endswith("те")] == []


@pytest.mark.parametrize(
    "command", ["jupyter lab", "jupyter lab notebooks/en/00_a.ipynb notebooks/en/01_b.ipynb"]
)
def test_a_run_command_that_opens_no_single_notebook_is_refused(command):
    with pytest.raises(build_site.SiteError, match="exactly one"):
        build_site.run_command(command, "notebooks/ru/02_sync_loop.ipynb")


@pytest.mark.parametrize("page", ["index", "02_sync_loop", "search", "deeper/page"])
@pytest.mark.parametrize(("lang", "other"), [("en", "ru"), ("ru", "en")])
def test_the_language_link_resolves_to_the_same_page_in_the_other_book(page, lang, other):
    url = build_site.other_language_url(page, lang)
    here = posixpath.dirname(f"{lang}/{page}.html")
    assert posixpath.normpath(posixpath.join(here, url)) == f"{other}/{page}.html"


def test_both_books_have_the_same_table_of_contents(lessons):
    en, ru = build_site.toc(lessons, "en"), build_site.toc(lessons, "ru")
    notebooks = sorted(p.stem for p in (ROOT / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb"))
    assert [n for n, _ in en] == [n for n, _ in ru] == [*notebooks, build_site.SETUP]
    assert all(CYRILLIC.search(title) for _, title in ru)
    assert not any(CYRILLIC.search(title) for _, title in en)


def _notebook(path, *sources):
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(s) for s in sources])
    nbformat.write(nb, path)


def test_without_the_registry_the_lessons_come_from_the_notebooks_headings(tmp_path):
    for lang, words in (("en", ("Start", "Loop")), ("ru", ("Начало", "Цикл"))):
        _notebook(tmp_path / "notebooks" / lang / "00_start.ipynb", f"# {words[0]}\n\ntext")
        _notebook(tmp_path / "notebooks" / lang / "01_loop.ipynb", "intro", f"# {words[1]}")
    found = build_site._lessons(tmp_path)
    assert [(x.name, x.number, x.title) for x in found] == [
        ("00_start", 0, {"en": "Start", "ru": "Начало"}),
        ("01_loop", 1, {"en": "Loop", "ru": "Цикл"}),
    ]
    assert found[1].notebook("ru") == tmp_path / "notebooks" / "ru" / "01_loop.ipynb"
    _notebook(tmp_path / "notebooks" / "ru" / "01_loop.ipynb", "## no title")
    with pytest.raises(build_site.SiteError, match="ru/01_loop.ipynb has no '# ' heading"):
        build_site._lessons(tmp_path)


def test_the_lessons_have_what_the_book_reads(lessons):
    for lesson in lessons:
        assert lesson.name[:2] == f"{lesson.number:02d}"
        for lang in build_site.LANGS:
            assert lesson.notebook(lang).is_file() and lesson.title[lang]


def _book(lesson, lang, commands):
    key = nbformat.read(lesson.notebook(lang), as_version=4)
    return key, build_site.book_notebook(key, lesson.name, lang, commands)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_lesson_page_is_the_student_edition_with_its_outputs_run_box_and_widget_notes(
    lessons, commands, lang
):
    notes = {}
    for lesson in lessons:
        key, book = _book(lesson, lang, commands)
        student = student_notebook(key, lesson.name, lang)
        assert not any(is_solution(cell) for cell in book.cells), lesson.name
        code = [c for c in book.cells if c.cell_type == "code"]
        assert [(c.source, c.outputs) for c in code] == [
            (c.source, c.outputs) for c in student.cells if c.cell_type == "code"
        ]
        assert book.cells[0].source == student.cells[0].source
        assert book.cells[1].source == build_site.run_box(commands, lang, lesson.name)
        for before, cell in zip(book.cells, book.cells[1:], strict=False):
            if "widget-fallback" in cell.source:
                name = build_site.widget_in(before, build_site.widget_names(book))
                assert name and f"`{name}`" in cell.source, (lesson.name, before.source)
                notes.setdefault(lesson.name, []).append(name)
        assert json.dumps(book.metadata).count("widget") == 0  # no widget state to embed
    assert notes == {"03_streaming": ["watch_stream"], "04_manual_parsing": ["ParserPlayground"]}


def test_every_widget_a_lesson_shows_has_its_own_description(lessons, commands):
    used = set()
    for lesson in lessons:
        for lang in build_site.LANGS:
            _, book = _book(lesson, lang, commands)
            names = build_site.widget_names(book)
            used |= {build_site.widget_in(c, names) for c in book.cells} - {None}
    widget_classes = {
        name
        for name, value in inspect.getmembers(helpers.widgets, inspect.isclass)
        if issubclass(value, ipywidgets.Widget) and value.__module__ == helpers.widgets.__name__
    }
    assert used and widget_classes
    assert (used | widget_classes) <= set(build_site.WIDGETS), "add it to build_site.WIDGETS"


def test_a_widget_cell_is_one_that_calls_an_imported_widget_and_is_tagged():
    tagged = {"tags": ["nbval-ignore-output"]}
    cell = nbformat.v4.new_code_cell("ParserPlayground(raw_output)", metadata=tagged)
    assert build_site.widget_in(cell, ["ParserPlayground"]) == "ParserPlayground"
    assert build_site.widget_in(cell, ["StreamViewer"]) is None
    untagged = nbformat.v4.new_code_cell("ParserPlayground(raw_output)")
    assert build_site.widget_in(untagged, ["ParserPlayground"]) is None
    mention = nbformat.v4.new_code_cell("print(ParserPlayground)", metadata=tagged)
    assert build_site.widget_in(mention, ["ParserPlayground"]) is None
    imports = nbformat.v4.new_code_cell(
        "from helpers.widgets import (\n    ParserPlayground,\n    watch_stream as watch,\n)"
    )
    unfinished = nbformat.v4.new_code_cell("def f(:\n")  # a student's exercise, not Python yet
    nb = nbformat.v4.new_notebook(cells=[unfinished, imports])
    assert build_site.widget_names(nb) == ["ParserPlayground", "watch"]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_widget_note_names_the_widget_in_the_notebooks_language(lang):
    note = build_site.widget_note("ParserPlayground", lang)
    assert "`ParserPlayground`" in note and build_site.WIDGETS["ParserPlayground"][lang] in note
    unknown = build_site.widget_note("NewWidget", lang)
    assert build_site.WIDGET_GENERIC[lang] in unknown and "`NewWidget`" in unknown


def test_static_markdown_links_html_anchors_and_shows_mermaid_as_text():
    source = "See the [reference](#reference) and [step 2](#two).\n\n```mermaid\nA->>B: hi\n```"
    out = build_site.static_markdown(source, {"reference"})
    assert '<a href="#reference">reference</a>' in out
    assert "[step 2](#two)" in out  # not an HTML anchor of this lesson: MyST resolves it
    assert "```text\nA->>B: hi\n```" in out and "mermaid" not in out


@pytest.mark.parametrize(("lang", "other"), [("en", "lab_setup.ru.md"), ("ru", "lab_setup.md")])
def test_the_setup_page_is_lab_setup_without_its_other_language_line(lang, other):
    source = build_site.SETUP_SOURCE[lang].read_text(encoding="utf-8")
    page = build_site.setup_page(lang)
    assert f"]({other})" in source and other not in page
    assert page.startswith(source.splitlines()[0] + "\n")
    assert len(source.splitlines()) - len(page.splitlines()) == 2  # the line and its blank line
    assert source.endswith(page.split("\n## ", 1)[1])


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_index_page_lists_every_lesson_and_its_toctree_is_the_toc(lessons, commands, lang):
    page = build_site.index_page(lessons, lang, commands)
    toctree = page.split("```{toctree}", 1)[1].split("```", 1)[0].split("\n\n", 1)[1].split()
    assert toctree == [name for name, _ in build_site.toc(lessons, lang)]
    for lesson in lessons:
        assert f"]({lesson.name}.ipynb)" in page and lesson.title[lang] in page
    assert build_site.run_box(commands, lang, lessons[0].name, index=True) in page
    assert page.startswith(f"# {build_site.TITLE[lang]}\n")


def test_the_sphinx_settings_never_execute_or_fetch():
    for lang in build_site.LANGS:
        config = build_site.sphinx_config(lang)
        assert config["nb_execution_mode"] == "off" and config["nb_ipywidgets_js"] == {}
        assert config["language"] == lang and config["html_theme"] == "alabaster"
        assert config["extensions"] == ["myst_nb"]  # no intersphinx, nothing that downloads
