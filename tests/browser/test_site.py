"""The published book as a reader meets it: Chromium opens every page of both books.

    pytest -m browser tests/browser/test_site.py   # after browser_setup.sh and requirements-site.txt

The books are built into a temporary folder (`scripts/build_site.py --out`, as a maintainer runs
it) and served by a `http.server` on 127.0.0.1. On every page: every local request succeeds and no
request leaves the machine (the page's other requests are aborted and reported); every `<a href>`
into the site names a page that exists and, with a `#fragment`, an element of that page with that
id; every `<img>` loaded (natural width > 0); the language link goes to the same page in the
other book, whose language link comes back; a lesson shows its stored outputs (one output block
per code cell with outputs in the book's notebook), its run box and a note for each widget. Both
books have the same table of contents, and the search finds a lesson in each language.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
import urllib.parse
from pathlib import Path

import nbformat
import pytest
import scripts_support

pytestmark = [
    pytest.mark.browser,
    # myst-parser 5.2 reads an attribute Sphinx 9 deprecates; harmless until Sphinx 11
    pytest.mark.filterwarnings("ignore:.*MystReferenceResolver.app:PendingDeprecationWarning"),
]

build_site = scripts_support.script("build_site")

# Everything the checks read from one page, in one pass.
PAGE_JS = """() => ({
  lang: document.documentElement.lang,
  h1: (document.querySelector('h1:not(.logo)') || {}).textContent || '',
  ids: Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  images: Array.from(document.images).map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
  other: Array.from(document.querySelectorAll('a.other-language')).map(a => a.href),
  outputs: document.querySelectorAll('div.cell_output').length,
  tracebacks: document.querySelectorAll('div.cell_output .traceback').length,
  runbox: (document.querySelector('.run-it-yourself') || {}).innerText || '',
  widgets: Array.from(document.querySelectorAll('.widget-fallback')).map(e => e.innerText),
  live_widgets: document.querySelectorAll('.jupyter-widgets, script[type*="widget"]').length,
  toc: Array.from(document.querySelectorAll('div.sphinxsidebar a.reference.internal'))
    .map(a => a.getAttribute('href')),
})"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The two books, built as `python scripts/build_site.py --out DIR` builds them, served on
    127.0.0.1: (folder, base URL)."""
    out = tmp_path_factory.mktemp("book") / "site"
    build_site.main(["--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["en", "index.html", "ru"]  # no build scraps
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def visited(site, browser):
    """Every page of the site, opened in Chromium: {relative path: what PAGE_JS read}, and the
    language link of each page followed: {relative path: (landed page, its language link)}."""
    out, base = site
    host = urllib.parse.urlsplit(base).netloc
    outside, failed = [], []
    page = browser.new_page()

    def route(r):
        if urllib.parse.urlsplit(r.request.url).netloc == host:
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on(
        "response",
        lambda response: (
            failed.append(f"{response.status} {response.url}") if response.status >= 400 else None
        ),
    )
    page.on("requestfailed", lambda request: failed.append(f"failed {request.url}"))
    pages, followed = {}, {}
    try:
        for path in sorted(out.rglob("*.html")):
            rel = path.relative_to(out).as_posix()
            page.goto(base + rel)
            pages[rel] = page.evaluate(PAGE_JS)
            pages[rel]["failed"], pages[rel]["outside"] = list(failed), list(outside)
            failed.clear()
            outside.clear()
            if pages[rel]["other"]:
                page.click("a.other-language")
                page.wait_for_load_state("load")
                landed = page.url.removeprefix(base).split("#")[0]
                followed[rel] = (landed, page.evaluate(PAGE_JS)["other"])
                pages[rel]["failed"] += failed
                pages[rel]["outside"] += outside
                failed.clear()
                outside.clear()
    finally:
        page.close()
    return pages, followed


def _lesson_pages(lang: str) -> list[tuple[object, str]]:
    return [(lesson, f"{lang}/{lesson.name}.html") for lesson in build_site._lessons()]


def test_every_page_loads_everything_locally_and_nothing_leaves_the_machine(visited):
    pages, _ = visited
    assert len(pages) == 1 + 2 * (
        len(build_site._lessons()) + 4
    )  # + index, setup, search, genindex
    for rel, info in pages.items():
        assert not info["outside"], f"{rel} asked for {info['outside']} (must not leave 127.0.0.1)"
        assert not info["failed"], f"{rel}: {info['failed']}"
        assert info["live_widgets"] == 0, f"{rel} embeds a widget (or its state)"


def test_no_internal_link_is_broken_and_every_image_loaded(site, visited):
    out, base = site
    pages, _ = visited
    ids = {rel: set(info["ids"]) for rel, info in pages.items()}
    checked = 0
    for rel, info in pages.items():
        for image in info["images"]:
            assert image["ok"], f"{rel}: the image {image['src']} did not load"
        for href in info["links"]:
            if not href.startswith(base):
                assert href.startswith(("https://", "http://", "mailto:")), f"{rel}: {href}"
                continue  # a link to another site is for the reader; the test never follows it
            target, _, fragment = href.removeprefix(base).partition("#")
            target = urllib.parse.unquote(target.split("?")[0]) or "index.html"
            assert (out / target).is_file(), f"{rel} links {href}: no such file in the book"
            if fragment and target.endswith(".html"):
                assert urllib.parse.unquote(fragment) in ids[target], (
                    f"{rel} links {href}: {target} has no element with id {fragment!r}"
                )
            checked += 1
    assert checked > 1000  # the sidebars alone link every page of both books


def test_the_language_link_lands_on_the_same_page_in_the_other_book(visited):
    pages, followed = visited
    books = [rel for rel in pages if rel != "index.html"]
    assert sorted(followed) == sorted(books), "a page without exactly one language link"
    for rel, (landed, back) in followed.items():
        lang, _, name = rel.partition("/")
        other = build_site.other_language(lang)
        assert landed == f"{other}/{name}", f"{rel}'s language link went to {landed}"
        assert len(pages[rel]["other"]) == 1 and len(back) == 1, rel
        assert back[0].endswith("/" + rel), f"{landed}'s language link goes to {back[0]}, not {rel}"
        assert pages[rel]["lang"] == lang and pages[landed]["lang"] == other
    for lang in build_site.LANGS:
        other = build_site.other_language(lang)
        for lesson, rel in _lesson_pages(lang):
            landed = followed[rel][0]
            assert pages[rel]["h1"].rstrip("#¶ ") == lesson.title[lang], rel
            assert pages[landed]["h1"].rstrip("#¶ ") == lesson.title[other], landed


def test_both_books_have_the_same_table_of_contents(visited):
    pages, _ = visited
    expected = [f"{name}.html" for name, _ in build_site.toc(build_site._lessons(), "en")]
    for lang in build_site.LANGS:
        toc = [href for href in pages[f"{lang}/index.html"]["toc"] if "#" not in href]
        assert toc == expected, f"the {lang} book's sidebar"
    assert re.search("[а-я]", pages["ru/02_sync_loop.html"]["h1"])  # the Russian edition


def test_lessons_show_their_stored_outputs_run_box_and_widget_notes(visited):
    pages, _ = visited
    commands = build_site.readme_commands((build_site.ROOT / "README.md").read_text())
    widget_notes = 0
    for lang in build_site.LANGS:
        for lesson, rel in _lesson_pages(lang):
            key = nbformat.read(lesson.notebook(lang), as_version=4)
            nb = build_site.book_notebook(key, lesson.name, lang, commands)
            code = [c for c in nb.cells if c.cell_type == "code"]
            info = pages[rel]
            assert info["outputs"] == sum(1 for c in code if c.outputs), rel
            errors = sum(1 for c in code if any(o.output_type == "error" for o in c.outputs))
            assert info["tracebacks"] == errors, rel
            runbox = " ".join(info["runbox"].split())
            assert f"notebooks/{lang}/{lesson.name}.ipynb" in runbox, rel
            assert " ".join(commands["test"].split()) in runbox, rel
            names = build_site.widget_names(nb)
            expected = [build_site.widget_in(c, names) for c in code]
            assert len(info["widgets"]) == len([w for w in expected if w]), rel
            assert all(build_site.WORDS[lang]["widget_title"] in w for w in info["widgets"]), rel
            widget_notes += len(info["widgets"])
    assert widget_notes >= 4  # lessons 03 and 04, in both languages


@pytest.mark.parametrize(("lang", "word", "lesson"), [
    ("en", "accumulator", "03_streaming.html"),
    ("ru", "фрагментами", "03_streaming.html"),  # stemmed: the lesson says «фрагмент», «фрагменты»
])  # fmt: skip
def test_search_finds_a_lesson(site, browser, shots, lang, word, lesson):
    _, base = site
    page = browser.new_page()
    try:
        page.goto(f"{base}{lang}/search.html?q={urllib.parse.quote(word)}")
        page.wait_for_selector("#search-results ul.search li", timeout=30_000)
        hits = page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
        assert any(h.split("?")[0].split("#")[0].endswith(f"/{lang}/{lesson}") for h in hits), hits
        if shots is not None:
            page.screenshot(path=str(Path(shots) / f"site_{lang}_search.png"))
            for name in ("index", "03_streaming", "04_manual_parsing"):
                page.goto(f"{base}{lang}/{name}.html")
                page.screenshot(path=str(Path(shots) / f"site_{lang}_{name}.png"), full_page=True)
    finally:
        page.close()
