"""Build the presenter deck of the 90-minute class (lesson 8.3.2), in English and Russian.

    python scripts/build_deck.py            # build/deck/deck.en.md and build/deck/deck.ru.md

One Markdown file per language, slides separated by `---` (Marp, reveal.js's Markdown plugin,
VS Code's preview and plain reading all take it). The slides are taken from the lessons
themselves: for each step of the in-class path (`PATH`, the table in docs/teacher_guide.md) the
step's heading, its first paragraph and its first short code cell, in that language. A step that
no longer exists in its lesson stops the build with its name, so the deck cannot drift from the
lessons (`tests/test_deck.py` builds it).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import nbbuild  # noqa: E402  (scripts/ is not a package)

from helpers.lessons import lesson_names  # noqa: E402

DEFAULT_OUT = ROOT / "build" / "deck"
MAX_CODE_LINES = 14  # a longer cell stays in the notebook; the slide names the step only


@dataclass(frozen=True)
class Block:
    """One block of the class: minutes, who runs the cells, the lesson and its steps."""

    minutes: int
    where: str  # "students" (they run the cells) or "projector" (the teacher runs them)
    lesson: str
    steps: tuple[str, ...]  # step numbers as in the lesson's headings: "## 2. ..."


PATH = (
    Block(10, "students", "00_start", ("1", "2", "4")),
    Block(25, "students", "01_tools_schema", ("2", "3", "4", "5")),
    Block(25, "students", "02_sync_loop", ("2", "3", "4", "6", "7")),
    Block(15, "projector", "03_streaming", ("2", "3", "4", "7")),
    Block(5, "projector", "04_manual_parsing", ("2", "5")),
    Block(5, "projector", "05_qwen_comparison", ("6",)),
)
WRAP_UP_MINUTES = 5
TITLE = {
    "en": "Tool calling with Kimi-K2 and Qwen: the 90-minute class",
    "ru": "Вызов инструментов с Kimi-K2 и Qwen: занятие на 90 минут",
}
OBJECTIVES = {
    "en": [
        "Draw the tool-call loop and say who does what: the model asks, the program runs the "
        "function and sends the result back.",
        "Write a tool's JSON schema and call the function with `fn(**arguments)`.",
        "Run the loop with `client.chat.completions.create` and stop it on `tool_calls`, not on "
        "`finish_reason`.",
        "Say why a streamed call is glued by `index` and why the assistant message must stay in "
        "the history.",
    ],
    "ru": [
        "Нарисовать цикл вызова инструментов и сказать, кто что делает: модель просит, программа "
        "выполняет функцию и отправляет результат обратно.",
        "Написать JSON-схему инструмента и вызвать функцию как `fn(**arguments)`.",
        "Запустить цикл на `client.chat.completions.create` и останавливать его по `tool_calls`, "
        "а не по `finish_reason`.",
        "Объяснить, почему потоковый вызов собирают по `index` и почему сообщение ассистента "
        "должно остаться в истории.",
    ],
}
WORDS = {
    "en": {
        "objectives": "By the end of this class you can",
        "students": "you run the cells",
        "projector": "on the projector",
        "min": "min",
        "lesson": "Lesson",
        "wrap": "Wrap-up and homework",
        "homework": [
            "Finish lessons 01 and 02: the remaining steps and the exercises.",
            "Lessons 03, 04 and 05 with their exercises (3.5-5 hours of homework in all).",
            "Before you hand in: Kernel → Restart Kernel and Run All Cells, then save.",
        ],
    },
    "ru": {
        "objectives": "К концу занятия вы сможете",
        "students": "ячейки запускаете вы",
        "projector": "на проекторе",
        "min": "мин",
        "lesson": "Урок",
        "wrap": "Итоги и домашнее задание",
        "homework": [
            "Закончить уроки 01 и 02: оставшиеся шаги и упражнения.",
            "Уроки 03, 04 и 05 с упражнениями (всего 3,5-5 часов домашней работы).",
            "Перед сдачей: Kernel → Restart Kernel and Run All Cells, затем сохранить.",
        ],
    },
}


class DeckError(ValueError):
    """The in-class path names a step that a lesson does not have."""


def _heading(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def step_cells(lesson: nbbuild.Lesson, step: str) -> list[nbbuild.Cell]:
    """The cells of one step: from its `## N.` heading up to the next `##` heading."""
    start = None
    for i, cell in enumerate(lesson.cells):
        if cell.kind == "markdown" and re.search(rf"^##\s+{re.escape(step)}\.\s", cell.en, re.M):
            start = i
            break
    if start is None:
        raise DeckError(f"{lesson.name} has no step '## {step}.' (update PATH in build_deck.py)")
    cells = [lesson.cells[start]]
    for cell in lesson.cells[start + 1 :]:
        if cell.kind == "markdown" and re.search(r"^##\s", cell.en, re.M):
            break
        cells.append(cell)
    return cells


def slide(cells: list[nbbuild.Cell], lang: str) -> str:
    """A slide: the step's heading, its first paragraph and its first short code cell."""
    first = getattr(cells[0], lang)
    first = first[re.search(r"^##\s+\d+\.", first, re.M).start() :].strip()
    heading, _, rest = first.partition("\n")
    paragraphs = [p.strip() for p in rest.strip().split("\n\n") if p.strip()]
    if not paragraphs:  # the prose may be in the next markdown cell
        more = next((c for c in cells[1:] if c.kind == "markdown"), None)
        paragraphs = [p.strip() for p in getattr(more, lang, "").split("\n\n") if p.strip()]
    parts = [heading.replace("## ", "### ", 1)]
    if paragraphs:
        parts.append(paragraphs[0])
    for cell in cells:
        source = getattr(cell, lang).strip()
        if cell.kind == "code" and not cell.hidden and len(source.splitlines()) <= MAX_CODE_LINES:
            parts.append(f"```python\n{source}\n```")
            break
    return "\n\n".join(parts)


def deck(lang: str) -> str:
    """The whole deck in one language."""
    words = WORDS[lang]
    slides = [
        f"# {TITLE[lang]}\n\n**{words['objectives']}:**\n\n"
        + "\n".join(f"- {line}" for line in OBJECTIVES[lang])
    ]
    clock = 0
    for block in PATH:
        lesson = nbbuild.load_lesson(nbbuild.SRC / f"{block.lesson}.py")
        title = _heading(getattr(lesson.cells[0], lang)).lstrip("# ")
        slides.append(
            f"## {words['lesson']} {block.lesson[:2]}: {title}\n\n"
            f"{clock}-{clock + block.minutes} {words['min']}, {words[block.where]}"
        )
        clock += block.minutes
        for step in block.steps:
            slides.append(slide(step_cells(lesson, step), lang))
    slides.append(
        f"## {words['wrap']}\n\n{clock}-{clock + WRAP_UP_MINUTES} {words['min']}\n\n"
        + "\n".join(f"- {line}" for line in words["homework"])
    )
    return "\n\n---\n\n".join(slides) + "\n"


# How the self-study times in docs/teacher_guide.md were estimated for the lessons nobody timed:
# reading speed for technical prose, time to run and read a code cell and its lines, and time
# per exercise, each as a (slow, fast) pair. `--times` prints the estimate for every lesson.
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


def build(out: Path = DEFAULT_OUT) -> list[Path]:
    """Write deck.en.md and deck.ru.md into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lang in nbbuild.LANGS:
        path = out / f"deck.{lang}.md"
        path.write_text(deck(lang), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default build/deck")
    parser.add_argument(
        "--times", action="store_true", help="print each lesson's estimated minutes and stop"
    )
    args = parser.parse_args(argv)
    if args.times:
        for name in lesson_names(nbbuild.SRC):
            fast, slow = estimated_minutes(name)
            print(f"{name}: {fast}-{slow} min")
        return
    for path in build(args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
