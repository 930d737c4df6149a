"""Both editions of every markdown cell say the same number of things: sentence-level parity
(the rules and the short list of deliberate splits: tests/sentence_parity.py).

The check runs on every lesson, then on copies of a lesson with one sentence added to, or taken
out of, one edition: each must be caught, naming the cell and what to do.
"""

from __future__ import annotations

import dataclasses

import pytest
from output_language import markdown_blocks
from scripts_support import lesson_cells, nbbuild
from sentence_parity import (
    ALLOWED,
    SENTENCE_END,
    lesson_differences,
    sentences,
    unit_differences,
)

from helpers.lessons import lesson_names

LESSONS = lesson_names()


def differences(name: str, cells=None):
    cells = lesson_cells(name) if cells is None else cells
    ids = nbbuild().cell_ids(nbbuild().Lesson(name, cells))
    return lesson_differences(name, cells, ids)


@pytest.mark.parametrize("name", LESSONS)
def test_every_unit_has_as_many_sentences_in_both_editions(name):
    problems = [d.message() for d in differences(name) if not d.allowed()]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("lesson", "start", "what", "reason"), ALLOWED, ids=[f"{a[0]}:{a[1][:24]}" for a in ALLOWED]
)
def test_every_allowed_split_is_needed(lesson, start, what, reason):
    assert reason.strip() and len(start) >= 12
    found = [d for d in differences(lesson) if d.en.startswith(start) and d.what == what]
    assert found, f"stale entry of ALLOWED in tests/sentence_parity.py: {lesson}, {start!r}"


def _prose_cell(name: str, lang: str) -> int:
    """The first markdown cell after the title with a paragraph of two sentences or more in
    `lang` whose unit is not on the allow-list."""
    for index, cell in enumerate(lesson_cells(name)):
        if index and cell.kind == "markdown" and not differences(name, [cell]):
            text = getattr(cell, lang)
            if any(len(sentences(p)) >= 2 for p in text.split("\n\n")):
                return index
    raise AssertionError(f"{name} has no two-sentence paragraph")


def _mutated(name: str, lang: str, change) -> list:
    cells = list(lesson_cells(name))
    index = _prose_cell(name, lang)
    cells[index] = dataclasses.replace(cells[index], **{lang: change(getattr(cells[index], lang))})
    return cells


ADDED = {"en": "It also runs on a laptop.", "ru": "Это работает и на ноутбуке."}


def _add_sentence(lang: str):
    def change(text: str) -> str:
        paragraphs = text.split("\n\n")
        at = next(i for i, p in enumerate(paragraphs) if len(sentences(p)) >= 2)
        paragraphs[at] = paragraphs[at].rstrip() + " " + ADDED[lang]
        return "\n\n".join(paragraphs)

    return change


def _drop_sentence(text: str) -> str:
    """`text` without the first sentence of its first paragraph of two sentences or more, cut
    where `sentences` cuts (a sentence may end in `**1.**`, a code span or a closing quote)."""
    for at, paragraph in enumerate(paragraphs := text.split("\n\n")):
        count = len(sentences(paragraph))
        if count < 2:
            continue
        for end in SENTENCE_END.finditer(paragraph):
            if len(sentences(paragraph[end.end() :])) == count - 1:
                paragraphs[at] = paragraph[end.end() :]
                return "\n\n".join(paragraphs)
    raise AssertionError(f"no paragraph of two sentences to drop one from: {text[:80]!r}")


@pytest.mark.parametrize("name", [LESSONS[0], LESSONS[-1]])
@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("how", ["added", "removed"])
def test_a_sentence_in_one_edition_only_is_caught(name, lang, how):
    change = _add_sentence(lang) if how == "added" else _drop_sentence
    found = [d for d in differences(name, _mutated(name, lang, change)) if not d.allowed()]
    assert len(found) == 1, [d.message() for d in found]
    message = found[0].message()
    assert "a sentence is in one edition only" in message, message
    assert f"notebooks/src/{name}.py" in message and "ALLOWED" in message, message


def test_a_sentence_dropped_from_an_exercise_is_caught():
    en = (
        "**1.** Write `my_messages`: a conversation of one user message that asks for the "
        "weather in\nMoscow."
    )  # the exercise cell scripts/new_lesson.py writes: its `**1.**` is the only sentence end
    dropped = _drop_sentence(en)
    assert dropped.startswith("Write `my_messages`") and len(sentences(dropped)) == 1
    found = unit_differences("x", "c", dropped, en)
    assert [d.what for d in found] == ["sentences +1"]
    assert "a sentence is in one edition only" in found[0].message()


def test_what_does_not_end_a_sentence():
    assert len(sentences("Use `a.b()`, e.g. with 0.5 or see https://x.org/a.b. Then stop.")) == 2
    assert len(sentences("Это, т. е. версия 2.5, см. урок 03. Дальше `x`. Конец!")) == 3
    assert len(sentences("- The loop stops. It returns `messages`.")) == 2


def test_a_code_span_lost_or_added_in_one_edition_is_caught():
    en = "Call `run_tool_loop` with `messages`."
    assert unit_differences("x", "c", en, "Вызовите `run_tool_loop` с историей.")
    assert unit_differences("x", "c", en, "Вызовите `run_tool_loop` с `tools`.")
    assert not unit_differences("x", "c", "Send `<what went wrong>`.", "Пошлите `<что не так>`.")
    lost = unit_differences("x", "c", "One.\n\n- Two.", "Раз.")
    assert lost and "paragraphs/list items/table rows" in lost[0].message()


def test_a_sentence_added_to_an_allowed_split_is_still_caught():
    lesson, start, what, _ = ALLOWED[0]
    cell = next(c for c in lesson_cells(lesson) if c.kind == "markdown" and start in c.en)
    units_en, units_ru = markdown_blocks(cell.en), markdown_blocks(cell.ru)
    at = next(i for i, unit in enumerate(units_en) if unit.startswith(start))
    assert all(d.allowed() for d in unit_differences(lesson, "c", cell.en, cell.ru))
    units_ru[at] += " " + ADDED["ru"]
    found = unit_differences(lesson, "c", "\n\n".join(units_en), "\n\n".join(units_ru))
    found = [d for d in found if not d.allowed()]
    assert [d.what for d in found] == ["sentences +2"]
    assert "a sentence is in one edition only" in found[0].message()
