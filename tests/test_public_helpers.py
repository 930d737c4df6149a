"""Every public helper has a test that names it (issue 30: a new helper without a test passed
the suite). What counts as public: tests/public_helpers.py. The check runs on the repository, then
on a helper planted in a module and used by a lesson; below, the tests of the helpers that had
none.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from public_helpers import ALLOWED, helpers_tested_by, is_tested, public_helpers, untested
from scripts_support import lesson_code

from helpers import current_mode, language, tool_error_content, tr
from helpers.exercises import quiz
from helpers.exercises.n03 import broken_history
from helpers.i18n import reset_language, set_language
from helpers.lessons import lesson_names
from helpers.paths import RECORDINGS_DIR, REPO_ROOT
from helpers.replay import Cassette, Interaction
from helpers.replay.cassette import load_cassette
from helpers.replay.validation import ApiError, check_messages
from helpers.templates import KIMI_K2_MARKERS, Marker

TEST_FILES = sorted((REPO_ROOT / "tests").rglob("test_*.py"))


@functools.cache
def outside_sources() -> tuple[str, ...]:
    """The code outside helpers/ that uses helpers: every lesson's cells and every script."""
    lessons = [source for name in lesson_names() for source in lesson_code(name)]
    scripts = [p.read_text(encoding="utf-8") for p in sorted((REPO_ROOT / "scripts").glob("*.py"))]
    return (*lessons, *scripts)


def test_every_public_helper_has_a_test_that_names_it():
    public = public_helpers(outside_sources())
    assert len(public) > 50 and "helpers.loop.run_tool_loop" in public, "is the list stale?"
    problems = untested(public, TEST_FILES)
    tested = helpers_tested_by(TEST_FILES)
    stale = [n for n in ALLOWED if n not in public or is_tested(n, tested)]
    assert not stale, f"stale entries of ALLOWED in tests/public_helpers.py: {stale}"
    assert not problems, "\n".join(problems)


def planted(monkeypatch, name: str) -> dict[str, str]:
    """The public helpers with a function `name` planted in helpers.loop and used by a lesson."""
    import helpers.loop

    helper = lambda messages: len(messages)  # noqa: E731
    helper.__module__ = "helpers.loop"
    monkeypatch.setattr(helpers.loop, name, helper, raising=False)
    lesson = f"from helpers.loop import {name}\n{name}(messages)"
    return public_helpers([*outside_sources(), lesson])


def untested_message(helper: str) -> str:
    module, name = helper.rsplit(".", 1)
    return (
        f"{helper} (used outside helpers/) has no test that names it: add a test under tests/ "
        f"that imports {name} from {module} (or reads it from the module) and checks what it "
        "returns or raises (or, if only the notebooks can run it, an entry in ALLOWED of "
        "tests/public_helpers.py with the reason)"
    )


def test_a_new_helper_without_a_test_is_named(monkeypatch):
    name = "rounds_" + "summary"  # built here: this file must not name it
    problems = untested(planted(monkeypatch, name), TEST_FILES)
    assert problems == [untested_message(f"helpers.loop.{name}")]


def test_a_helper_whose_name_the_tests_use_for_something_else_is_untested(monkeypatch):
    names = ["a", "b"]  # a test's own variable, and `names` occurs all over the tests
    assert names and "names" in (REPO_ROOT / "tests/test_public_helpers.py").read_text("utf-8")
    problems = untested(planted(monkeypatch, "names"), TEST_FILES)
    assert problems == [untested_message("helpers.loop.names")]


TESTED_BY = {
    "an import from its module": ("from helpers.loop import {name}\n", True),
    "an import from its package": ("from helpers import run_tool_loop as {name}\n", False),
    "an attribute of its module": ("from helpers import loop\nloop.{name}(1)\n", True),
    "an attribute of a module alias": ("import helpers.loop as lp\nlp.{name}\n", True),
    "an attribute of the dotted module": ("import helpers.loop\nhelpers.loop.{name}\n", True),
    "a local variable of that name": ("{name} = 1\nprint({name})\n", False),
    "an attribute of another object": ("import json\njson.{name}\nobj.{name}()\n", False),
    "an import from another module": ("from helpers.guard import {name}\n", False),
}


@pytest.mark.parametrize("case", TESTED_BY)
def test_a_helper_is_tested_when_a_test_imports_or_reads_it_from_its_module(
    case, monkeypatch, tmp_path
):
    name = "rounds_" + "summary"
    public = planted(monkeypatch, name)
    code, tested = TESTED_BY[case]
    test = tmp_path / "test_planted.py"
    body = "".join(f"    {line}\n" for line in code.format(name=name).splitlines())
    test.write_text(f"def test_it():\n{body}", encoding="utf-8")
    problems = untested({f"helpers.loop.{name}": public[f"helpers.loop.{name}"]}, [test])
    assert problems == ([] if tested else [untested_message(f"helpers.loop.{name}")])


def test_a_helper_imported_from_the_package_that_exports_it_is_tested(tmp_path):
    test = tmp_path / "test_planted.py"
    test.write_text("from helpers import run_tool_loop\n", encoding="utf-8")
    assert untested({"helpers.loop.run_tool_loop": "exported"}, [test]) == []
    test.write_text("from helpers.replay import run_tool_loop\n", encoding="utf-8")
    assert untested({"helpers.loop.run_tool_loop": "exported"}, [test])


def test_a_helper_read_from_an_imported_module_is_public():
    used = "from helpers.exercises import n01\nn01.check_schema(f)\nimport helpers.guard as g\ng.x"
    public = public_helpers([used])
    assert public["helpers.exercises.n01.check_schema"] == "used outside helpers/"
    assert public["helpers.loop.run_tool_loop"] == "exported"


# --- the helpers that had no test of their own -----------------------------------------------


@pytest.mark.parametrize(("lang", "text"), [("en", "call"), ("ru", "вызов")])
def test_tr_picks_the_language_in_force(lang, text):
    set_language(lang)
    try:
        assert tr("call", "вызов") == text
    finally:
        reset_language()


def test_language_is_the_chosen_one_then_llm_lang_then_english(monkeypatch):
    reset_language()
    monkeypatch.delenv("LLM_LANG", raising=False)
    assert language() == "en"
    monkeypatch.setenv("LLM_LANG", " RU ")
    assert language() == "ru"
    monkeypatch.setenv("LLM_LANG", "de")  # not a language of the series: the default
    assert language() == "en"
    set_language("ru")
    try:
        monkeypatch.setenv("LLM_LANG", "en")
        assert language() == "ru"  # set_language wins over the environment
    finally:
        reset_language()


def test_tool_error_content_is_json_the_model_reads():
    content = tool_error_content("Город «Москва» не найден")
    assert json.loads(content) == {"error": "Город «Москва» не найден"}
    assert "Москва" in content  # not escaped to \\u codes: the model reads it as written


def test_current_mode_reads_llm_mode(monkeypatch):
    monkeypatch.delenv("LLM_MODE", raising=False)
    assert current_mode() == "replay"
    monkeypatch.setenv("LLM_MODE", " Live ")
    assert current_mode() == "live"
    monkeypatch.setenv("LLM_MODE", "offline")
    with pytest.raises(ValueError, match="'offline' is not a mode; use one of: replay"):
        current_mode()


def test_a_loaded_cassette_holds_interactions_named_by_file():
    path = RECORDINGS_DIR / "02_sync_loop.json"
    cassette = load_cassette(path)
    assert isinstance(cassette, Cassette) and cassette.path == path
    first = cassette.interactions[0]
    assert isinstance(first, Interaction) and first.cassette == "02_sync_loop.json"
    assert first.index == 0 and first.name.endswith(" in 02_sync_loop.json")
    assert Path(first.cassette).name == first.cassette  # never a machine path


def test_the_kimi_markers_are_markers_with_ids():
    assert all(isinstance(m, Marker) for m in KIMI_K2_MARKERS)
    names = {m.token: m for m in KIMI_K2_MARKERS}
    assert names["<|tool_calls_section_begin|>"].special is False  # not dropped, as in the model
    assert len({m.id for m in KIMI_K2_MARKERS}) == len(KIMI_K2_MARKERS)


@pytest.mark.parametrize(("lang", "first"), [("en", "1. Who runs"), ("ru", "1. Кто выполняет")])
def test_the_quiz_shows_its_questions_in_the_language(lang, first, capsys):
    set_language(lang)
    try:
        quiz.show_questions()
    finally:
        reset_language()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(first)
    assert sum(line.startswith("   a) ") for line in lines) == len(quiz.QUESTIONS)


def test_the_broken_history_is_what_a_server_refuses():
    history = broken_history()
    assert [m["role"] for m in history] == ["user", "tool"]
    with pytest.raises(ApiError, match="tool"):
        check_messages(history)
    assert broken_history() == history and broken_history() is not history
