"""The class decks and handouts (scripts/build_deck.py): taken from the lessons and the committed
notebooks, both languages, the same slides, self-contained, no solution on an exercise slide."""

from __future__ import annotations

import re

import pytest
import scripts_support

from helpers.paths import REPO_ROOT

build_deck = scripts_support.script("build_deck")
class_path = scripts_support.script("class_path")
handout = scripts_support.script("handout")
nbbuild = scripts_support.nbbuild()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("deck")
    build_deck.build(out, pdf=False)
    return out


def _sections(text: str) -> list[str]:
    return re.findall(r'<section data-kind="(\w+)">(.*?)</section>', text, re.S)


def test_both_languages_have_the_same_slides_with_the_same_code(built):
    en = _sections((built / "deck.en.html").read_text(encoding="utf-8"))
    ru = _sections((built / "deck.ru.html").read_text(encoding="utf-8"))
    assert [k for k, _ in en] == [k for k, _ in ru]
    steps = sum(len(b.steps) for b in class_path.PATH)
    exercises = sum(len(b.exercises) for b in class_path.PATH)
    kinds = [k for k, _ in en]
    assert kinds.count("step") == steps and kinds.count("exercise") == exercises
    assert kinds.count("output") == len(build_deck.KEY_OUTPUTS) and kinds.count("diagram") == 1
    code = re.compile(r"<pre><code[^>]*>(.*?)</code></pre>", re.S)
    for (_, a), (_, b) in zip(en, ru, strict=True):
        assert [len(c.splitlines()) for c in code.findall(a)] == [
            len(c.splitlines()) for c in code.findall(b)
        ]
        assert '<aside class="notes">' in a and '<aside class="notes">' in b
    ru_text = "".join(body for _, body in ru)
    en_text = "".join(body for _, body in en)
    assert re.search(r"[а-я]{4}", ru_text) and not re.search(r"[а-я]{4}", en_text)


def test_the_deck_is_self_contained_and_credits_reveal(built):
    for lang in nbbuild.LANGS:
        text = (built / f"deck.{lang}.html").read_text(encoding="utf-8")
        assert not re.search(r'(src|href)="https?://', text)
        assert "@import url(" not in text  # the theme's web fonts are cut out
        assert f"reveal.js {build_deck.REVEAL_VERSION}, MIT" in text
    assert "Permission is hereby granted" in (built / "reveal.js.LICENSE").read_text(
        encoding="utf-8"
    )


def test_each_step_slide_is_the_lessons_own_heading(built):
    text = (built / "deck.en.html").read_text(encoding="utf-8")
    headings = iter(re.findall(r'<section data-kind="step">\n<h3>(.*?)</h3>', text))
    for block in class_path.PATH:
        source = (nbbuild.SRC / f"{block.lesson}.py").read_text(encoding="utf-8")
        for step in block.steps:
            heading = re.sub(r"</?code>", "`", next(headings))
            assert heading.startswith(f"{step}. ")
            assert f"## {heading}".replace("&#x27;", "'").replace("&quot;", '"') in source


def test_the_key_outputs_come_from_the_committed_notebooks(built):
    assert "Error code: 400" in build_deck.cell_output("03_streaming", "03-ff3a0c48", "ru")
    text = (built / "deck.en.html").read_text(encoding="utf-8")
    for lesson, cell, _ in build_deck.KEY_OUTPUTS:
        first = build_deck.cell_output(lesson, cell, "en").splitlines()[0][:40]
        assert build_deck.html.escape(first) in text
    with pytest.raises(build_deck.DeckError, match="has no output in cell 03-nope"):
        build_deck.cell_output("03_streaming", "03-nope", "en")


@pytest.mark.parametrize("lesson_step", sorted(build_deck.SLIDE_CODE))
def test_a_steps_chosen_code_is_in_that_step_and_every_pattern_finds_its_lines(lesson_step):
    """A lesson edit that moves or rewrites a chosen line must fail here, not leave a slide
    with a stale or empty excerpt."""
    name, step = lesson_step
    lesson = nbbuild.load_lesson(nbbuild.SRC / f"{name}.py")
    ids = nbbuild.cell_ids(lesson)
    in_step = {ids[i] for i in class_path.step_indexes(lesson, step)}
    for cell_id, pattern in build_deck.SLIDE_CODE[lesson_step]:
        assert cell_id in in_step, f"{cell_id} is not in {name} step {step}"
        cell = lesson.cells[ids.index(cell_id)]
        assert cell.kind == "code" and not cell.hidden, cell_id
        for lang in ("en", "ru"):
            shown = build_deck.excerpt(getattr(cell, lang), pattern)
            code = [line for line in shown if line.strip() != "…"]
            alternatives = pattern.split("|") if pattern else [""]
            for alternative in alternatives:  # each alternative finds a line
                assert any(re.search(alternative, line) for line in code), (cell_id, alternative)
    slide = build_deck.step_slide(lesson, step, "en", 1)
    assert slide.count("<pre>") == len(build_deck.SLIDE_CODE[lesson_step])


def test_an_excerpt_marks_each_run_of_skipped_lines_once():
    source = "def f():\n    a = 1\n    b = 2\n    return a\n"
    assert build_deck.excerpt(source, r"def f|return") == ["def f():", "    …", "    return a"]
    assert build_deck.excerpt(source, "") == source.strip().splitlines()


def test_an_exercise_slide_shows_the_task_never_the_solution(built):
    lesson = nbbuild.load_lesson(nbbuild.SRC / "00_start.py")
    slide = build_deck.exercise_slide(lesson, "2", "en", 4)
    assert "Qwen2.5-7B-Instruct" in slide and "<pre>" not in slide
    assert "--tool-call-parser" not in slide  # the hidden solution's flag


def test_the_guides_table_is_the_path():
    for lang, name in (("en", "teacher_guide.md"), ("ru", "teacher_guide.ru.md")):
        guide = (REPO_ROOT / "docs" / name).read_text(encoding="utf-8")
        assert build_deck.guide_table(lang) in guide, f"docs/{name}: run build_deck --guide-table"


def test_the_handout_has_readmes_five_defects_in_both_languages():
    rows = handout.readme_defects()
    assert len(rows) == len(handout.DEFECTS_RU) == 5
    for (en, *_), (ru, *_) in zip(rows, handout.DEFECTS_RU, strict=True):
        assert re.findall(r"`[^`]+`", en)[:1] == re.findall(r"`[^`]+`", ru)[:1]


def test_a_step_that_is_gone_stops_the_build():
    lesson = nbbuild.load_lesson(nbbuild.SRC / "00_start.py")
    with pytest.raises(class_path.PathError, match="00_start has no step '## 99.'"):
        build_deck.step_slide(lesson, "99", "en", 1)


def test_time_estimates_grow_with_the_lesson_and_are_ranges():
    times = {p.stem: build_deck.estimated_minutes(p.stem) for p in nbbuild.SRC.glob("[0-9]*.py")}
    assert all(0 < fast < slow < 180 for fast, slow in times.values()), times
    assert times["03_streaming"][1] > times["01_tools_schema"][1]


def test_the_answer_sheet_has_every_question_and_its_answer(built):
    from helpers.exercises.quiz import QUESTIONS

    for lang in nbbuild.LANGS:
        sheet = (built / f"quiz_answers.{lang}.html").read_text(encoding="utf-8")
        assert sheet.count("<h2>") == len(QUESTIONS)
        for question in QUESTIONS:
            assert f": {question['answer']}</strong>" in sheet
