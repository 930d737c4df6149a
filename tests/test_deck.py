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


WRAPPED = '<span class="wrapped">'


def _code_blocks(body: str) -> list[list[str]]:
    """The lines of each code block (not the outputs) of a slide, as shown."""
    blocks = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", body, re.S)
    return [build_deck.html.unescape(re.sub(r"<[^>]+>", "", b)).splitlines() for b in blocks]


def _notes(body: str) -> str:
    return build_deck.html.unescape(re.search(r'<aside class="notes">(.*?)</aside>', body).group(1))


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

    def source_lines(block: str) -> int:  # a wrapped line's continuations are not source lines
        return sum(1 for line in block.splitlines() if not line.startswith(WRAPPED))

    for (_, a), (_, b) in zip(en, ru, strict=True):
        assert [source_lines(c) for c in code.findall(a)] == [
            source_lines(c) for c in code.findall(b)
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
    for lesson, cell, *_ in build_deck.KEY_OUTPUTS:
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


def test_a_long_code_line_is_wrapped_never_cut(built):
    """A line longer than the slide used to be cut at 88 characters with "…": lesson 03's step 4
    lost the end of the very line it is about (the assistant message with its `tool_calls`)."""
    for lang in nbbuild.LANGS:
        sections = _sections((built / f"deck.{lang}.html").read_text(encoding="utf-8"))
        for kind, body in sections:
            for lines in _code_blocks(body):
                assert all(len(line) <= build_deck.MAX_LINE for line in lines), (lang, lines)
                cut = [line for line in lines if line.endswith("…") and line.strip() != "…"]
                assert not cut, (lang, kind, cut)
        shown = "\n".join(line for _, body in sections for b in _code_blocks(body) for line in b)
        assert '"tool_calls": tool_calls})' in shown  # lesson 03, step 4: the fix, whole
        assert "        # " in shown  # an inline comment that did not fit moved below its line


def test_wrapping_breaks_after_a_comma_outside_strings_and_moves_a_long_comment():
    wrap = build_deck.wrap_code
    line = '    messages.append({"role": "assistant", "content": content, "tool_calls": calls})'
    assert wrap(line, 62) == [
        '    messages.append({"role": "assistant", "content": content,',
        '        "tool_calls": calls})',
    ]
    assert wrap('x = f("a, b, c, d", y)', 21) == ['x = f("a, b, c, d",', "    y)"]  # not in "..."
    assert wrap('    if not calls:  # no calls: "#" in a comment', 32) == [
        "    if not calls:",
        '    # no calls: "#" in a comment',
    ]
    assert wrap('s = "# not a comment, " + tail', 22) == ['s = "# not a comment,', '    " + tail']
    assert wrap("short", 20) == ["short"]
    for width in (40, 50, 60):
        pieces = wrap(line, width)
        assert all(len(p) <= width for p in pieces)
        assert {len(p) - len(p.lstrip()) for p in pieces[1:]} == {8}  # four deeper, not more
        assert " ".join(" ".join(pieces).split()) == " ".join(line.split())  # nothing lost


def test_every_step_with_code_shows_some_on_its_slide():
    """Lesson 01's "1. The function" showed only its rule: its one code cell is 13 lines."""
    for block in class_path.PATH:
        lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
        for step in block.steps:
            cells = [lesson.cells[i] for i in class_path.step_indexes(lesson, step)]
            if any(c.kind == "code" and not c.hidden for c in cells):
                for lang in nbbuild.LANGS:
                    slide = build_deck.step_slide(lesson, step, lang, 1)
                    assert "<pre>" in slide, (block.lesson, step, lang)


def test_every_output_slide_shows_the_code_that_printed_it(built):
    """The reply's slide began with a bare `tool_calls` (the printed finish_reason, read as a
    caption) and the 400 came without the guide's loop that causes it."""
    for lang in nbbuild.LANGS:
        text = (built / f"deck.{lang}.html").read_text(encoding="utf-8")
        outputs = [body for kind, body in _sections(text) if kind == "output"]
        assert len(outputs) == len(build_deck.KEY_OUTPUTS)
        for body in outputs:
            assert "<pre><code" in body.split('<pre class="output">')[0], (lang, body[:80])
        code = ["\n".join(line for b in _code_blocks(body) for line in b) for body in outputs]
        assert "print(choice.finish_reason)" in code[0]
        assert "messages.extend(run_tool_calls(tool_calls))" in code[2]  # the guide's loop
    for lesson, cell_id, _, pattern in build_deck.KEY_OUTPUTS:
        for lang in nbbuild.LANGS:
            nb = build_deck.nbformat.read(
                REPO_ROOT / "notebooks" / lang / f"{lesson}.ipynb", as_version=4
            )
            source = next(c for c in nb.cells if c.get("id") == cell_id).source
            for alternative in pattern.split("|"):  # a lesson edit must not leave a stale pattern
                assert re.search(alternative, source, re.M), (cell_id, lang, alternative)


def test_an_exercise_whose_answer_is_in_a_skipped_step_says_where_in_its_notes(built):
    """Lesson 00's exercises 1 and 2 need step 3 (the export lines, the vLLM command for Qwen),
    which the class does not run."""
    lesson = nbbuild.load_lesson(nbbuild.SRC / "00_start.py")
    steps = class_path.PATH[0].steps
    assert [build_deck.answer_steps(lesson, n, steps) for n in "123"] == [["3"], ["3"], []]
    assert build_deck.answer_steps(lesson, "2", ("3",)) == []  # the class ran step 3
    said = {"en": "in step 3", "ru": "в шаге 3"}
    for lang in nbbuild.LANGS:
        text = (built / f"deck.{lang}.html").read_text(encoding="utf-8")
        notes = [_notes(body) for kind, body in _sections(text) if kind == "exercise"]
        expected = [
            bool(
                build_deck.answer_steps(
                    nbbuild.load_lesson(nbbuild.SRC / f"{b.lesson}.py"), n, b.steps
                )
            )
            for b in class_path.PATH
            for n in b.exercises
        ]
        assert [said[lang] in note for note in notes] == expected, (lang, notes)
        assert expected[:3] == [True, True, False]


def test_the_homework_names_every_lesson_the_class_leaves_unfinished():
    """Lesson 00's steps 3 and 5 were run in no class and set as no homework."""
    for block in class_path.PATH:
        lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
        steps = {m for c in lesson.cells for m in re.findall(r"^##\s+(\d+)\.\s", c.en, re.M)}
        if steps - set(block.steps):
            number = block.lesson[:2]
            for lang, guide in (("en", "teacher_guide.md"), ("ru", "teacher_guide.ru.md")):
                homework = " ".join(build_deck.WORDS[lang]["homework"])
                assert re.search(rf"\b{number}\b", homework), (lang, number, homework)
                text = (REPO_ROOT / "docs" / guide).read_text(encoding="utf-8")
                paragraph = re.search(
                    r"^\*\*(Homework|Домашнее задание):\*\*.*?\n\n", text, re.M | re.S
                )
                assert re.search(rf"\b{number}\b", paragraph.group(0)), (guide, number)


def test_the_pdf_printer_runs_chromium_with_the_browser_tests_flags():
    """The PDFs were printed without --disable-quic, which the browser tests pass."""
    conftest = scripts_support.importlib.util.spec_from_file_location(
        "browser_conftest", REPO_ROOT / "tests" / "browser" / "conftest.py"
    )
    module = scripts_support.importlib.util.module_from_spec(conftest)
    conftest.loader.exec_module(module)
    assert set(module.CHROMIUM_FLAGS) <= set(build_deck.CHROMIUM_FLAGS)


def _guide(name: str) -> str:
    """A teacher's guide without its HTML comments (the registry's markers)."""
    text = (REPO_ROOT / "docs" / name).read_text(encoding="utf-8")
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


@pytest.mark.parametrize("name", ["teacher_guide.md", "teacher_guide.ru.md"])
def test_the_guides_commands_run_the_scripts_in_the_projects_venv(name):
    """`python scripts/build_deck.py`, as the guide wrote it, stops at `import nbformat` unless
    the venv is active, while the guide's other commands name `.venv/bin/python`."""
    bare = re.findall(r"(?<![\w/.\\-])python3? scripts/\S+", _guide(name))
    assert not bare, bare


@pytest.mark.parametrize("name", ["teacher_guide.md", "teacher_guide.ru.md"])
def test_the_projected_kit_is_installed_outside_what_build_kit_replaces(name, tmp_path):
    """The guide had the teacher install the kit's venv in build/kit/toolcall-series-student/,
    which the next `build_kit.py` deletes with the venv in it."""
    build_kit = scripts_support.script("build_kit")
    folder, _ = build_kit.build_kit(tmp_path, names=["00_start"])
    (folder / ".venv").mkdir()
    build_kit.build_kit(tmp_path, names=["00_start"])
    assert not (folder / ".venv").exists()  # what a rebuild does to a venv inside the kit
    replaced = f"build/kit/{build_kit.KIT_NAME}"
    blocks = re.findall(r"```bash\n(.*?)```", _guide(name), re.S)
    installing = [b for b in blocks if "-m venv" in b or "jupyter lab" in b]
    assert installing
    for block in installing:
        assert not re.search(rf"^cd {re.escape(replaced)}", block, re.M), block


def test_the_russian_handout_has_no_calque_for_wire_shapes():
    """ "Формы на проводе" is "wire shapes" word for word; the heading says what is shown."""
    page = handout.page("ru", "")
    assert "на проводе" not in page
    assert handout.HEAD["ru"][2] in page


@pytest.mark.parametrize("name", ["teacher_guide.md", "teacher_guide.ru.md"])
def test_the_guides_estimates_for_the_timed_lessons_are_what_times_prints(name):
    """The guide quoted 56-91, 63-101 and 57-89 minutes; `--times` prints 57-92, 65-103, 57-90."""
    text = " ".join(_guide(name).split())
    rule = re.search(r"(?:The same rule|То же правило)[^.]*", text).group(0)
    said = re.search(r"(\d+-\d+), (\d+-\d+) (?:and|и) (\d+-\d+)", rule)
    assert said, name
    expected = [build_deck.estimated_minutes(n) for n in ("01_tools_schema", "02_sync_loop")]
    expected.append(build_deck.estimated_minutes("05_qwen_comparison"))
    assert list(said.groups()) == [f"{fast}-{slow}" for fast, slow in expected]
