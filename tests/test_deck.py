"""The presenter deck (scripts/build_deck.py): taken from the lessons, both languages, 90 minutes."""

from __future__ import annotations

import re

import pytest
import scripts_support

build_deck = scripts_support.script("build_deck")
nbbuild = scripts_support.nbbuild()


@pytest.fixture(scope="module")
def decks(tmp_path_factory) -> dict[str, list[str]]:
    out = tmp_path_factory.mktemp("deck")
    build_deck.main(["--out", str(out)])
    return {
        lang: (out / f"deck.{lang}.md").read_text(encoding="utf-8").split("\n\n---\n\n")
        for lang in nbbuild.LANGS
    }


def test_the_path_fills_ninety_minutes():
    assert sum(b.minutes for b in build_deck.PATH) + build_deck.WRAP_UP_MINUTES == 90


def test_both_languages_have_the_same_slides_with_the_same_code(decks):
    en, ru = decks["en"], decks["ru"]
    steps = sum(len(b.steps) for b in build_deck.PATH)
    assert len(en) == len(ru) == 2 + len(build_deck.PATH) + steps
    code = re.compile(r"```python\n(.*?)```", re.S)

    def bare(text):  # the editions differ in comments and printed strings, not in shape
        return [len(c.splitlines()) for c in code.findall(text)]

    for a, b in zip(en, ru, strict=True):
        assert bare(a) == bare(b)
        assert a.strip() and b.strip()
    assert re.search(r"[а-я]{4}", "".join(ru)) and not re.search(r"[а-я]{4}", "".join(en))


def test_each_step_slide_is_the_lessons_own_heading(decks):
    slides = iter(decks["en"][1:])
    for block in build_deck.PATH:
        assert next(slides).startswith(f"## Lesson {block.lesson[:2]}: ")
        source = (nbbuild.SRC / f"{block.lesson}.py").read_text(encoding="utf-8")
        for step in block.steps:
            heading = next(slides).splitlines()[0]
            assert heading.startswith(f"### {step}. ")
            assert f"## {heading.removeprefix('### ')}" in source


def test_a_step_that_is_gone_stops_the_build():
    lesson = nbbuild.load_lesson(nbbuild.SRC / "00_start.py")
    with pytest.raises(build_deck.DeckError, match="00_start has no step '## 99.'"):
        build_deck.step_cells(lesson, "99")


def test_time_estimates_grow_with_the_lesson_and_are_ranges():
    times = {p.stem: build_deck.estimated_minutes(p.stem) for p in nbbuild.SRC.glob("[0-9]*.py")}
    assert all(0 < fast < slow < 180 for fast, slow in times.values()), times
    # The streaming lesson is longer than the first one by every measure the estimate uses.
    assert times["03_streaming"][1] > times["01_tools_schema"][1]
