"""Build the class's slides (lesson 8.3.2) and a one-page handout, in English and Russian.

    python scripts/build_deck.py            # build/deck/: deck.<lang>.html/.pdf, handout.<lang>.pdf
    python scripts/build_deck.py --no-pdf   # the HTML only (no Chromium needed)
    python scripts/build_deck.py --guide-table en   # the path table of docs/teacher_guide.md
    python scripts/build_deck.py --times    # each lesson's estimated minutes

The decks are reveal.js (pinned `REVEAL_VERSION`, from the npm registry: `npm install --prefix
build/revealjs reveal.js@<version>`, which this script runs when the folder is missing) with every
asset inlined: one HTML file per language that shows offline, no CDN. The PDFs are printed by
headless Chromium (the browser test's, scripts/browser_setup.sh). The slides follow the in-class
path (`scripts/class_path.py`): for each step its heading, its rule (the first sentence) and its
first short code cell, taken from the lesson in that language; the loop as an SVG diagram; the
key outputs copied from the committed notebooks, under the lines that printed them; one slide per
in-class exercise (its task, never its solution); speaker notes with the minutes (and, for an
exercise whose answer is in a step the class skips, that step). A code line too long for a slide
is wrapped, never cut. A step that no longer exists stops the build.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]  # this checkout first (a shared venv)

import class_path  # noqa: E402
import nbbuild  # noqa: E402  (scripts/ is not a package)
import nbformat  # noqa: E402

from helpers.lessons import lesson_names  # noqa: E402

DEFAULT_OUT = ROOT / "build" / "deck"
REVEAL_VERSION = "5.1.0"  # MIT licence (reveal.js/LICENSE, copied beside the decks)
REVEAL_DIR = ROOT / "build" / "revealjs"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--no-first-run",
]
MAX_CODE_LINES = 11  # a longer cell stays in the notebook; the slide shows the rule only
MAX_OUTPUT_LINES = 10
MAX_LINE = 88
PATH = class_path.PATH
WRAP_UP_MINUTES = class_path.WRAP_UP_MINUTES

TITLE = {
    "en": "Tool calling with Kimi-K2 and Qwen: the 90-minute class",
    "ru": "Вызов инструментов с Kimi-K2 и Qwen: занятие на 90 минут",
}
OBJECTIVES = {
    "en": [
        "Draw the tool-call loop: the model asks, the program runs the function, sends the result",
        "Write a tool's JSON schema; call the function with `fn(**arguments)`",
        "Stop the loop on `tool_calls`, not on `finish_reason`",
        "Glue a streamed call by `index`; keep the assistant message in the history",
    ],
    "ru": [
        "Нарисовать цикл: модель просит, программа выполняет функцию и возвращает результат",
        "Написать JSON-схему инструмента; вызвать функцию как `fn(**arguments)`",
        "Останавливать цикл по `tool_calls`, а не по `finish_reason`",
        "Собирать потоковый вызов по `index`; не терять сообщение ассистента",
    ],
}
# The key outputs of the in-class path: (lesson, cell id in the committed notebook, title, a pattern
# of the cell's lines shown above the output, as in SLIDE_CODE), so that each output slide shows
# the code that printed it (tests/test_deck.py checks that every pattern finds its lines).
KEY_OUTPUTS = (
    (
        "02_sync_loop",
        "02-f9a3061e",
        {
            "en": "What comes back: finish_reason, then the call",
            "ru": "Что приходит в ответ: finish_reason, затем вызов",
        },
        r"^print\(choice|^show_tool_calls",
    ),
    (
        "03_streaming",
        "03-ff3a0c48",
        {
            "en": "No assistant message before the tool result: 400",
            "ru": "Нет сообщения ассистента перед результатом: 400",
        },
        r"^while|= assemble\(stream\)|if finish_reason ==|messages.extend",
    ),
    (
        "03_streaming",
        "03-c448ab7b",
        {"en": "A stream assembling, chunk by chunk", "ru": "Поток собирается по фрагментам"},
        r"^for chunk in|print\(len\(chunks\)",
    ),
)
# The code a step's slide shows, where the step's first short cell is not its point: (cell id,
# a pattern of the lines to show, "" for the whole cell), in order; skipped lines become "…".
# tests/test_deck.py checks that each cell is in its step and each pattern finds its lines.
SLIDE_CODE = {
    ("01_tools_schema", "1"): (
        ("01-3dfc315f", r"^WEATHER|^def get_weather|WEATHER\.get|^get_weather\("),
    ),
    ("01_tools_schema", "2"): (("01-521d6a15", ""),),
    ("01_tools_schema", "5"): (("01-0dc9b709", ""), ("01-3786b9a4", r"\(\*\*arguments\)")),
    ("02_sync_loop", "4"): (
        (
            "02-9efe2bec",
            r"def guide_loop|while finish_reason is None|finish_reason = choice|"
            r"if finish_reason ==|append\(choice|return choice",
        ),
    ),
    ("02_sync_loop", "7"): (
        (
            "02-0662f224",
            r"def tool_loop|for _ in|message = completion|append\(message\)|"
            r"if not message.tool_calls|return message",
        ),
    ),
    ("03_streaming", "3"): (
        (
            "03-a3007837",
            r"def assemble|for chunk in|for piece in|while len|call = tool_calls|"
            r"\[\"arguments\"\] \+=",
        ),
    ),
    ("03_streaming", "4"): (
        (
            "03-e4fcce04",
            r"def streaming_loop|assemble\(stream\)|if not tool_calls|return content|"
            r"\"role\": \"assistant\"|extend\(run_tool_calls",
        ),
    ),
}
WORDS = {
    "en": {
        "objectives": "By the end of this class you can",
        "students": "you run the cells",
        "projector": "on the projector",
        # the teacher's words (speaker notes, the guide's table): who runs the cells
        "students_teacher": "the students run the cells",
        "projector_teacher": "you run the cells on the projector",
        "min": "min",
        "lesson": "Lesson",
        "loop": "The tool-call loop",
        "exercise": "Exercise",
        "exercise_note": "Edit the cell, run it and the self-check below it. Aim for “Correct!”.",
        "output": "From the notebook",
        "wrap": "Wrap-up and homework",
        "homework": [
            "First the exit quiz, the last section of lesson 03: six questions on today's steps",
            "Finish lessons 00, 01 and 02: the remaining steps and exercises",
            "Lessons 03, 04 and 05 with their exercises",
            "Before you hand in: Kernel → Restart Kernel and Run All Cells, then save",
        ],
        "note_title": "{n} minutes in all. Before minute 0 every student has lesson 00 open in "
        "Jupyter; the minutes of each block are on its first slide.",
        "note_block": "Minutes {a}-{b} ({n} min), {where}.",
        "note_step": "About {m} min. Say the rule, run the cell, show the output.",
        "note_exercise": "About {m} min. Walk round; the self-check names one problem at a time.",
        "note_answer_in": "What it asks for is in step {steps}, which the class skips: send the "
        "students there.",
        "note_output": "Point at the output; the notebook cell is {cell}.",
        "note_wrap": "Minutes {a}-{b}. Show the handout: the five defects and their fixes.",
        "note_loop": "Trace one round with your finger: request, call, tool, result, answer.",
        "synth": "The 400's text is OpenAI's documented wording, replayed from a synthesized "
        "recording (not a Moonshot capture).",
    },
    "ru": {
        "objectives": "К концу занятия вы сможете",
        "students": "ячейки запускаете вы",
        "projector": "на проекторе",
        "students_teacher": "ячейки запускают студенты",
        "projector_teacher": "ячейки запускаете вы, на проекторе",
        "min": "мин",
        "lesson": "Урок",
        "loop": "Цикл вызова инструментов",
        "exercise": "Упражнение",
        "exercise_note": "Поправьте ячейку, запустите её и самопроверку под ней: цель — «Верно!».",
        "output": "Из блокнота",
        "wrap": "Итоги и домашнее задание",
        "homework": [
            "Сначала итоговый тест, последний раздел урока 03: шесть вопросов о шагах занятия",
            "Закончить уроки 00, 01 и 02: оставшиеся шаги и упражнения",
            "Уроки 03, 04 и 05 с упражнениями",
            "Перед сдачей: Kernel → Restart Kernel and Run All Cells, затем сохранить",
        ],
        "note_title": "Всего {n} минут. До минуты 0 у каждого студента открыт в Jupyter урок 00; "
        "минуты каждого блока — на его первом слайде.",
        "note_block": "Минуты {a}-{b} ({n} мин), {where}.",
        "note_step": "Около {m} мин. Скажите правило, запустите ячейку, покажите вывод.",
        "note_exercise": "Около {m} мин. Пройдите по классу; самопроверка называет "
        "одну ошибку за раз.",
        "note_answer_in": "Нужное для ответа — в шаге {steps}, который на занятии пропускаем: "
        "отправьте студентов туда.",
        "note_output": "Покажите на вывод; ячейка блокнота — {cell}.",
        "note_wrap": "Минуты {a}-{b}. Покажите памятку: пять дефектов и их исправления.",
        "note_loop": "Проведите один раунд пальцем: запрос, вызов, инструмент, результат, ответ.",
        "synth": "Текст ошибки 400 — документированная формулировка OpenAI из синтезированной "
        "записи (не запись ответа Moonshot).",
    },
}
LOOP_LABELS = {
    "en": {
        "program": "Your program",
        "program2": "messages, tools, tool_map",
        "model": "Model (server)",
        "model2": "chat.completions.create",
        "tool": "Tool",
        "tool2": "tool_map[name](**arguments)",
        "a1": "1. messages + tools",
        "a2": "2. assistant message with tool_calls",
        "a3": "3. run each call",
        "a4": '4. result as role: "tool" + tool_call_id',
        "stop": "no tool_calls → final answer, stop",
    },
    "ru": {
        "program": "Ваша программа",
        "program2": "messages, tools, tool_map",
        "model": "Модель (сервер)",
        "model2": "chat.completions.create",
        "tool": "Инструмент",
        "tool2": "tool_map[name](**arguments)",
        "a1": "1. messages + tools",
        "a2": "2. сообщение ассистента с tool_calls",
        "a3": "3. выполнить каждый вызов",
        "a4": '4. результат: role: "tool" + tool_call_id',
        "stop": "нет tool_calls → ответ, стоп",
    },
}


class DeckError(ValueError):
    """The in-class path names a step that a lesson does not have, or a build tool is missing."""


def loop_svg(lang: str) -> str:
    """The tool-call loop as an inline SVG (drawn here, no image file). The program is a tall box
    on the left; each of the four steps is a straight arrow to or from the model (top right) or
    the tool (bottom right), its label on the outer side of its arrow so that labels 2 and 3 never
    sit between two arrows. The arrows come in their numbers' order and `data-label` names a
    label's arrow, for tests/browser/test_slides.py, which checks that no text touches an arrow or
    a box's edge and that each label is nearest its own arrow."""
    t = {k: html.escape(v) for k, v in LOOP_LABELS[lang].items()}
    box = 'rx="14" fill="#eef4fb" stroke="#1f4e79" stroke-width="3"'
    big, small = 'font-size="26" font-weight="bold"', 'font-size="17" font-family="monospace"'
    arrows = (  # (number, path, label x, label baseline y)
        ("1", "M310,60 L662,60", 495, 44),
        ("2", "M670,110 L318,110", 505, 143),
        ("3", "M310,320 L642,320", 480, 304),
        ("4", "M650,370 L318,370", 485, 403),
    )
    paths = "".join(f'<path data-arrow="{n}" d="{d}"/>' for n, d, _, _ in arrows)
    labels = "".join(
        f'<text data-label="{n}" x="{x}" y="{y}">{t["a" + n]}</text>' for n, _, x, y in arrows
    )
    return f"""<svg class="loop-diagram" viewBox="0 0 1000 430" width="1180" height="507"
 xmlns="http://www.w3.org/2000/svg" role="img"
 aria-label="{t["program"]} / {t["model"]} / {t["tool"]}">
<defs><marker id="arrow-{lang}" viewBox="0 0 10 10" refX="9" refY="5"
 markerWidth="7" markerHeight="7"
 orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1f4e79"/></marker></defs>
<g text-anchor="middle" font-family="sans-serif" fill="#111">
<rect x="20" y="20" width="290" height="390" {box}/>
<text x="165" y="185" {big}>{t["program"]}</text>
<text x="165" y="220" {small}>{t["program2"]}</text>
<text x="165" y="280" font-size="17" fill="#7a2e00">{t["stop"]}</text>
<rect x="670" y="20" width="310" height="120" {box}/>
<text x="825" y="72" {big}>{t["model"]}</text><text x="825" y="107" {small}>{t["model2"]}</text>
<rect x="650" y="290" width="330" height="120" {box}/>
<text x="815" y="342" {big}>{t["tool"]}</text><text x="815" y="377" {small}>{t["tool2"]}</text>
<g stroke="#1f4e79" stroke-width="3" fill="none" marker-end="url(#arrow-{lang})">{paths}</g>
<g font-size="18">{labels}</g>
</g></svg>"""


def inline(text: str) -> str:
    """Markdown inline code, bold and links to HTML (escaped); nothing else."""
    out = html.escape(text)
    out = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def first_sentence(text: str) -> str:
    """The step's rule: the first sentence of its first paragraph (the lesson style's rule)."""
    flat = " ".join(text.split())
    match = re.search(r"^(.+?[.!?])(\s|$)", flat)
    return match.group(1) if match else flat


def _outside_strings(line: str) -> list[int]:
    """The positions of `line` that are not inside a Python string literal."""
    outside, quote, escaped = [], None, False
    for i, char in enumerate(line):
        if quote is None:
            if char in "\"'":
                quote = char
            else:
                outside.append(i)
        elif escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == quote:
            quote = None
    return outside


def _comment_start(line: str) -> int | None:
    """Where a Python comment starts in `line` (a `#` outside string literals), or None."""
    return next((i for i in _outside_strings(line) if line[i] == "#"), None)


def _break_at(line: str, width: int) -> int | None:
    """Where to break a line so that its first part has at most `width` characters: after the
    last ", " outside string literals, else after the last space; None when neither is there."""
    commas = [i + 2 for i in _outside_strings(line) if i + 2 <= width and line.startswith(", ", i)]
    spaces = [i + 1 for i in range(min(width, len(line))) if line[i] == " " and line[:i].strip()]
    return (commas or spaces or [None])[-1]


def wrap_code(line: str, width: int = MAX_LINE) -> list[str]:
    """A code line as lines of at most `width` characters, nothing cut: an inline comment moves to
    a line of its own below, long code breaks after a comma (or a space) and goes on four spaces
    deeper, a long comment goes on as another comment. The pieces after the first are
    continuations. A word longer than `width` stays whole (the browser test then fails)."""
    indent = " " * (len(line) - len(line.lstrip()))
    start = _comment_start(line)
    if len(line) > width and start is not None and line[:start].strip():
        return wrap_code(line[:start].rstrip(), width) + wrap_code(indent + line[start:], width)
    going_on = indent + ("# " if line.lstrip().startswith("#") else "    ")
    pieces, rest = [], line
    while len(rest) > width:
        cut = _break_at(rest, width)
        if cut is None or not rest[:cut].strip() or rest[:cut] == going_on:
            break
        pieces.append(rest[:cut].rstrip())
        rest = going_on + rest[cut:].lstrip()
    return [*pieces, rest]


def _code(source: list[str], output: bool = False) -> str:
    """A code block (or a cell's output); a line too long for the slide is wrapped, never cut,
    each continuation in a `<span class="wrapped">` (tests/test_deck.py counts them apart)."""
    lines = []
    for line in source:
        if output:
            pieces = [line] if len(line) <= MAX_LINE else textwrap.wrap(line, MAX_LINE)
        else:
            pieces = wrap_code(line)
        lines.append(html.escape(pieces[0]))
        lines += [f'<span class="wrapped">{html.escape(piece)}</span>' for piece in pieces[1:]]
    tag = '<pre class="output"><code>' if output else '<pre><code class="language-python">'
    return f"{tag}{chr(10).join(lines)}</code></pre>"


def _notes(text: str) -> str:
    return f'<aside class="notes">{html.escape(text)}</aside>'


def section(kind: str, body: str, notes: str) -> str:
    return f'<section data-kind="{kind}">\n{body}\n{_notes(notes)}\n</section>'


def step_slide(lesson: nbbuild.Lesson, step: str, lang: str, minutes: float) -> str:
    """A step: its heading, its rule (first sentence) and its first short code cell."""
    cells = [lesson.cells[i] for i in class_path.step_indexes(lesson, step)]
    first = getattr(cells[0], lang)
    first = first[re.search(r"^##\s+\d+\.", first, re.M).start() :].strip()
    heading, _, rest = first.partition("\n")
    paragraphs = [p for p in rest.strip().split("\n\n") if p.strip() and not p.startswith("|")]
    if not paragraphs:  # the prose may be in the next markdown cell
        more = next((c for c in cells[1:] if c.kind == "markdown"), None)
        paragraphs = [p for p in getattr(more, lang, "").split("\n\n") if p.strip()]
    parts = [f"<h3>{inline(heading.removeprefix('## '))}</h3>"]
    if paragraphs:
        parts.append(f'<p class="rule">{inline(first_sentence(paragraphs[0]))}</p>')
    chosen = SLIDE_CODE.get((lesson.name, step))
    if chosen:
        ids = nbbuild.cell_ids(lesson)
        for cell_id, pattern in chosen:
            parts.append(_code(excerpt(getattr(lesson.cells[ids.index(cell_id)], lang), pattern)))
    for cell in [] if chosen else cells:
        source = getattr(cell, lang).strip().splitlines()
        if cell.kind == "code" and not cell.hidden and len(source) <= MAX_CODE_LINES:
            parts.append(_code(source))
            break
    return section("step", "\n".join(parts), WORDS[lang]["note_step"].format(m=round(minutes)))


def excerpt(source: str, pattern: str) -> list[str]:
    """The lines of a cell that `pattern` finds (all of them for ""), a run of skipped lines
    shown as one "…" at the next shown line's indentation (a run of blank lines alone, as one
    blank line)."""
    lines = source.strip().splitlines()
    if not pattern:
        return lines
    shown, skipped, blank = [], False, False
    for line in lines:
        if re.search(pattern, line):
            if shown and skipped:
                shown.append(" " * (len(line) - len(line.lstrip())) + "…")
            elif shown and blank:
                shown.append("")
            shown.append(line)
            skipped = blank = False
        elif line.strip():
            skipped = True
        else:
            blank = True
    return shown


def _literals(code: str) -> set[str]:
    """The string literals of at least four characters in some code."""
    return {a or b for a, b in re.findall(r"\"([^\"\n]{4,})\"|'([^'\n]{4,})'", code)}


def answer_steps(lesson: nbbuild.Lesson, number: str, class_steps: tuple[str, ...]) -> list[str]:
    """The steps outside `class_steps` that hold what exercise `number` asks for: a string literal
    of its reference solution that the starter lacks, found in such a step and in none of the
    class's steps."""
    cells = [lesson.cells[i] for i in class_path.exercise_indexes(lesson, number)]
    code = [c for c in cells if c.kind == "code"]
    new = set().union(*(_literals(c.en) for c in code if c.hidden))
    new -= set().union(*(_literals(c.en) for c in code if not c.hidden))
    steps = [m for c in lesson.cells for m in re.findall(r"^##\s+(\d+)\.\s", c.en, re.M)]
    text = {
        step: "\n".join(lesson.cells[i].en for i in class_path.step_indexes(lesson, step))
        for step in steps
    }
    seen = "\n".join(text[step] for step in class_steps)
    return [
        step
        for step in steps
        if step not in class_steps and any(v in text[step] and v not in seen for v in new)
    ]


def exercise_slide(
    lesson: nbbuild.Lesson,
    number: str,
    lang: str,
    minutes: float,
    class_steps: tuple[str, ...] = (),
) -> str:
    """An in-class exercise: its heading and task, no code (the solution never reaches a slide).
    When what it asks for is in a step the class skips (`answer_steps`), the notes say where."""
    cell = lesson.cells[class_path.exercise_indexes(lesson, number)[0]]
    text = getattr(cell, lang)
    text = text[re.search(r"^###\s", text, re.M).start() :].strip()
    heading, _, task = text.partition("\n")
    task_paragraphs = [p for p in task.strip().split("\n\n") if p.strip()]
    body = [f"<h3>{inline(heading.removeprefix('### '))}</h3>"]
    body += [f"<p>{inline(' '.join(p.split()))}</p>" for p in task_paragraphs[:2]]
    body.append(f'<p class="small">{html.escape(WORDS[lang]["exercise_note"])}</p>')
    notes = WORDS[lang]["note_exercise"].format(m=round(minutes))
    elsewhere = answer_steps(lesson, number, class_steps) if class_steps else []
    if elsewhere:
        notes += " " + WORDS[lang]["note_answer_in"].format(steps=", ".join(elsewhere))
    return section("exercise", "\n".join(body), notes)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cell_output(lesson: str, cell_id: str, lang: str) -> str:
    """The committed output of one cell, as text: streams, plain results, an error's last line."""
    nb = nbformat.read(ROOT / "notebooks" / lang / f"{lesson}.ipynb", as_version=4)
    cell = next((c for c in nb.cells if c.get("id") == cell_id), None)
    if cell is None or not cell.get("outputs"):
        raise DeckError(f"{lang}/{lesson}.ipynb has no output in cell {cell_id} (KEY_OUTPUTS)")
    texts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            texts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            texts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            texts.append(f"{out.ename}: {out.evalue}")
    return ANSI.sub("", "".join(texts)).strip()


def output_slide(lesson: str, cell_id: str, title: str, lang: str, pattern: str = "") -> str:
    """A cell's committed output under the lines of the cell that printed it (`pattern`, as in
    SLIDE_CODE; the whole cell when it is short)."""
    nb = nbformat.read(ROOT / "notebooks" / lang / f"{lesson}.ipynb", as_version=4)
    source = next(c for c in nb.cells if c.get("id") == cell_id).source
    text = cell_output(lesson, cell_id, lang)
    if text.startswith("BadRequestError") or "Error code: 400" in text:
        lines = [" ".join(text.split())]  # one long line: _code wraps it at spaces
        caveat = f'<p class="small">{html.escape(WORDS[lang]["synth"])}</p>'
    else:
        lines, caveat = text.splitlines()[:MAX_OUTPUT_LINES], ""
    body = [f"<h3>{html.escape(title)}</h3>"]
    if pattern or len(source.strip().splitlines()) <= 6:
        body.append(_code(excerpt(source, pattern)))
    body.append(_code(lines, output=True) + caveat)
    notes = WORDS[lang]["note_output"].format(cell=f"{lesson[:2]} · {cell_id}")
    return section("output", "\n".join(body), notes)


def slides(lang: str) -> list[str]:
    """Every slide of the deck in one language, in order."""
    words = WORDS[lang]
    items = [
        section(
            "title",
            f"<h2>{html.escape(TITLE[lang])}</h2><p><strong>{words['objectives']}:</strong></p>"
            + "<ul>"
            + "".join(f"<li>{inline(line)}</li>" for line in OBJECTIVES[lang])
            + "</ul>",
            words["note_title"].format(n=sum(b.minutes for b in PATH) + WRAP_UP_MINUTES),
        ),
        section("diagram", f"<h3>{words['loop']}</h3>\n{loop_svg(lang)}", words["note_loop"]),
    ]
    outputs = {(lesson, cell): (title, pattern) for lesson, cell, title, pattern in KEY_OUTPUTS}
    clock = 0
    for block in PATH:
        lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
        title = getattr(lesson.cells[0], lang).strip().splitlines()[0].lstrip("# ")
        span = f"{clock}-{clock + block.minutes} {words['min']}, {words[block.where]}"
        items.append(
            section(
                "block",
                f"<h2>{words['lesson']} {block.lesson[:2]}: {inline(title)}</h2><p>{span}</p>",
                words["note_block"].format(
                    a=clock,
                    b=clock + block.minutes,
                    n=block.minutes,
                    where=words[f"{block.where}_teacher"],
                ),
            )
        )
        ids = nbbuild.cell_ids(lesson)
        for step in block.steps:
            minutes = class_path.cells_minutes(lesson, class_path.step_indexes(lesson, step))
            items.append(step_slide(lesson, step, lang, minutes))
            for i in class_path.step_indexes(lesson, step):
                if (block.lesson, ids[i]) in outputs:
                    title, pattern = outputs[block.lesson, ids[i]]
                    items.append(output_slide(block.lesson, ids[i], title[lang], lang, pattern))
        for number in block.exercises:
            minutes = class_path.EXERCISE_MINUTES[block.lesson, number]
            items.append(exercise_slide(lesson, number, lang, minutes, block.steps))
        clock += block.minutes
    items.append(
        section(
            "wrap",
            f"<h2>{words['wrap']}</h2><p>{clock}-{clock + WRAP_UP_MINUTES} {words['min']}</p><ul>"
            + "".join(f"<li>{inline(line)}</li>" for line in words["homework"])
            + "</ul>",
            words["note_wrap"].format(a=clock, b=clock + WRAP_UP_MINUTES),
        )
    )
    return items


STYLE = """
.reveal h2 { font-size: 1.5em; } .reveal h3 { font-size: 1.15em; }
.reveal p, .reveal li { font-size: 0.8em; line-height: 1.3; }
.reveal p.rule { font-size: 0.85em; } .reveal p.small { font-size: 0.55em; color: #555; }
.reveal pre { width: 100%; font-size: 0.55em; box-shadow: none; margin: 12px 0; }
.reveal pre code { max-height: none; padding: 10px 14px; background: #f4f4f4; color: #111; }
.reveal pre.output code { background: #fdf6e3; }
.reveal .slides section { text-align: left; }
.reveal svg.loop-diagram { display: block; margin: 0 auto; max-width: 100%; height: auto; }
"""


def reveal_assets() -> dict[str, str]:
    """reveal.js's CSS and JS (installed into build/revealjs from the npm registry when missing)."""
    package = REVEAL_DIR / "node_modules" / "reveal.js"
    installed = json.loads((package / "package.json").read_text()) if package.exists() else {}
    if installed.get("version") != REVEAL_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            raise DeckError(f"reveal.js {REVEAL_VERSION} is not in {REVEAL_DIR} and npm is missing")
        REVEAL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(REVEAL_DIR),
             f"reveal.js@{REVEAL_VERSION}"],
            check=True,
        )  # fmt: skip
    return {
        name: (package / path).read_text(encoding="utf-8")
        for name, path in {
            "reset": "dist/reset.css",
            "reveal": "dist/reveal.css",
            "theme": "dist/theme/white.css",
            "js": "dist/reveal.js",
            "notes": "plugin/notes/notes.js",
            "licence": "LICENSE",
        }.items()
    }


def deck_html(lang: str, assets: dict[str, str]) -> str:
    """One self-contained reveal.js file: every asset inlined, no network at show time."""
    theme = re.sub(r"@import url\([^)]*\);?", "", assets["theme"])  # the theme's web fonts
    sections = "\n".join(slides(lang))
    return f"""<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8">
<title>{html.escape(TITLE[lang])}</title>
<!-- reveal.js {REVEAL_VERSION}, MIT licence (see reveal.js.LICENSE beside this file) -->
<style>{assets["reset"]}{assets["reveal"]}{theme}{STYLE}</style></head>
<body><div class="reveal"><div class="slides">
{sections}
</div></div>
<script>{assets["js"]}</script><script>{assets["notes"]}</script>
<script>Reveal.initialize({{hash: true, width: 1280, height: 720, margin: 0.04,
  transition: "none", pdfSeparateFragments: false, plugins: [RevealNotes]}});</script>
</body></html>
"""


def print_pdfs(jobs: list[tuple[Path, Path, bool]]) -> None:
    """Headless Chromium (driven by Playwright, as the browser test) prints each (source, target,
    is_deck) local file to PDF; a deck is printed in reveal.js's print layout once it is ready."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        raise DeckError(
            "no playwright: run `bash scripts/browser_setup.sh` (or --no-pdf)"
        ) from error
    if not Path(CHROMIUM).exists():
        raise DeckError(f"no Chromium at {CHROMIUM}: run `bash scripts/browser_setup.sh`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            for source, target, is_deck in jobs:
                page = browser.new_page()
                page.goto(source.resolve().as_uri() + ("?print-pdf" if is_deck else ""))
                if is_deck:
                    page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=60_000)
                    page.wait_for_selector(".pdf-page", state="attached", timeout=60_000)
                page.pdf(path=str(target), prefer_css_page_size=True, print_background=True)
                page.close()
        finally:
            browser.close()


def build(out: Path = DEFAULT_OUT, pdf: bool = True) -> list[Path]:
    """Write deck.<lang>.html (and .pdf), handout.<lang>.html (and .pdf) into `out`."""
    import handout  # scripts/handout.py

    out.mkdir(parents=True, exist_ok=True)
    assets = reveal_assets()
    (out / "reveal.js.LICENSE").write_text(assets["licence"], encoding="utf-8")
    written, jobs = [], []
    for lang in nbbuild.LANGS:
        path = out / f"deck.{lang}.html"
        path.write_text(deck_html(lang, assets), encoding="utf-8")
        sheet = out / f"handout.{lang}.html"
        sheet.write_text(handout.page(lang, loop_svg(lang)), encoding="utf-8")
        answers = out / f"quiz_answers.{lang}.html"
        answers.write_text(handout.answer_sheet(lang), encoding="utf-8")
        written += [path, sheet, answers]
        if pdf:
            jobs += [
                (path, out / f"deck.{lang}.pdf", True),
                (sheet, out / f"handout.{lang}.pdf", False),
                (answers, out / f"quiz_answers.{lang}.pdf", False),
            ]
    if jobs:
        print_pdfs(jobs)
        written += [target for _, target, _ in jobs]
    return written


def guide_table(lang: str) -> str:
    """The path table of docs/teacher_guide(.ru).md, from `PATH` (a test keeps the guide equal)."""
    words = {
        "en": ("Time", "Where", "What", "Lesson", "Setup, steps", "exercises", "Summary, homework"),
        "ru": (
            "Время",
            "Где",
            "Что",
            "Урок",
            "Подготовка, шаги",
            "упражнения",
            "Итоги, домашнее задание",
        ),
    }[lang]
    rows = [f"| {words[0]} | {words[1]} | {words[2]} |", "|---|---|---|"]
    clock = 0
    for block in PATH:
        what = f"{words[3]} {block.lesson[:2]}: {words[4]} {', '.join(block.steps)}"
        if block.exercises:
            what += f"; {words[5]} {', '.join(block.exercises)}"
        where = WORDS[lang][f"{block.where}_teacher"]
        rows.append(f"| {clock}-{clock + block.minutes} | {where} | {what} |")
        clock += block.minutes
    rows.append(f"| {clock}-{clock + WRAP_UP_MINUTES} | | {words[6]} |")
    return "\n".join(rows)


# How the self-study times were estimated for the lessons nobody timed: reading speed for
# technical prose, time to run and read a code cell and its lines, and time per exercise, each as
# a (slow, fast) pair. `--times` prints the estimate for every lesson.
READING_WPM = (100, 130)
MINUTES_PER_CELL = (0.75, 0.5)
MINUTES_PER_CODE_LINE = (0.12, 0.08)
MINUTES_PER_EXERCISE = (15, 8)


def estimated_minutes(name: str) -> tuple[int, int]:
    """(fast, slow) minutes for a student working through lesson `name` alone, from its size."""
    lesson = nbbuild.load_lesson(nbbuild.SRC / f"{name}.py")
    words = sum(len(re.findall(r"\w+", c.en)) for c in lesson.cells if c.kind == "markdown")
    cells = [c for c in lesson.cells if c.kind == "code" and not c.hidden]
    lines = sum(len(c.en.strip().splitlines()) for c in cells)
    exercises = sum(1 for c in lesson.cells if c.kind == "code" and c.hidden)
    slow, fast = (
        words / wpm + len(cells) * cell + lines * line + exercises * exercise
        for wpm, cell, line, exercise in zip(
            READING_WPM, MINUTES_PER_CELL, MINUTES_PER_CODE_LINE, MINUTES_PER_EXERCISE, strict=True
        )
    )
    return round(fast), round(slow)


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default build/deck")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only (no Chromium)")
    parser.add_argument("--guide-table", choices=nbbuild.LANGS, help="print the path table")
    parser.add_argument(
        "--times", action="store_true", help="print each lesson's estimated minutes and stop"
    )
    args = parser.parse_args(argv)
    if args.guide_table:
        print(guide_table(args.guide_table))
        return
    if args.times:
        for name in lesson_names(nbbuild.SRC):
            fast, slow = estimated_minutes(name)
            print(f"{name}: {fast}-{slow} min")
        return
    for path in build(args.out, pdf=not args.no_pdf):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
