"""The one-page class handout (A4), per language: the loop, the guide's five defects and their
fixes (README's table), the wire shapes to remember. scripts/build_deck.py writes it and prints
it to PDF with Chromium."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout first (a shared venv)

TITLE = {
    "en": "Tool calling: what to remember",
    "ru": "Вызов инструментов: что запомнить",
}
HEAD = {
    "en": (
        "The loop",
        "The guide's five defects",
        "Wire shapes",
        "the guide",
        "what goes wrong",
        "the fix",
    ),
    "ru": (
        "Цикл",
        "Пять дефектов руководства",
        "Как выглядят сообщения",
        "в руководстве",
        "что ломается",
        "исправление",
    ),
}
# The Russian rows of README's defects table, in its order (tests/test_deck.py compares the count
# and the code in the first column with README's English table).
DEFECTS_RU = [
    (
        "`tool_function(tool_call_arguments)`",
        "весь словарь становится первым аргументом",
        "`ToolRegistry.call` вызывает `fn(**arguments)` после проверки по схеме",
    ),
    (
        'нет сообщения ассистента перед результатами `role: "tool"` (поток и ручной цикл)',
        "серверы, которые проверяют историю (OpenAI, Moonshot), отвечают 400; другие путают модель",
        "`run_tool_loop` всегда сначала добавляет его",
    ),
    (
        '`while finish_reason == "tool_calls"`',
        "движки отвечают `stop` с вызовами или `tool_calls` без них",
        "продолжать, пока в сообщении есть вызовы",
    ),
    (
        "`extract_tool_call_info` читает `tool_calls_sections[0]`",
        "вторая секция теряется, без конечного маркера — исключение, id с `-` пропадают",
        "`parse_kimi` (и потоковый разборщик линейной сложности)",
    ),
    (
        "`chunk.choices[0]` в цикле по потоку",
        "последний фрагмент со статистикой приходит с `choices: []`",
        "`ToolCallAccumulator`",
    ),
]
WIRE_COMMENTS = {
    "en": (
        "the model asks (assistant message: append it to messages as it is)",
        "your program answers, one message per call, same id",
        "a stream: delta.tool_calls[i] pieces glued by index; the last usage chunk has choices: []",
    ),
    "ru": (
        "модель просит (сообщение ассистента: добавить в messages как есть)",
        "программа отвечает: одно сообщение на вызов, тот же id",
        "поток: куски delta.tool_calls[i] склеивают по index; у фрагмента usage choices: []",
    ),
}
WIRE = """\
# {0}
{"role": "assistant", "content": "",
 "tool_calls": [{"id": "get_weather:0", "type": "function",
   "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Beijing\\"}"}}]}
# {1}
{"role": "tool", "tool_call_id": "get_weather:0", "content": "{\\"weather\\": \\"Sunny\\"}"}
# {2}
"""
RULES = {
    "en": [
        "`arguments` is a JSON string: `json.loads` it, call `fn(**arguments)`.",
        "Loop while the message has `tool_calls`; `finish_reason` is not reliable.",
        "The assistant message goes into the history before the tool results.",
    ],
    "ru": [
        "`arguments` — строка JSON: `json.loads`, затем `fn(**arguments)`.",
        "Цикл идёт, пока в сообщении есть `tool_calls`; `finish_reason` ненадёжен.",
        "Сообщение ассистента — в историю раньше результатов инструментов.",
    ],
}


def readme_defects() -> list[tuple[str, str, str]]:
    """README's defects table (English): rows of (the guide, what goes wrong, the fix)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("| the guide | what goes wrong | the fix |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.strip().splitlines()[1:] if line.startswith("|")]
    return [tuple(c.strip() for c in row.strip("|").split(" | ")) for row in rows]


def _inline(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


STYLE = """
@page { size: A4; margin: 12mm; }
body { font-family: sans-serif; font-size: 10.5pt; margin: 0; color: #111; }
h1 { font-size: 16pt; margin: 0 0 4mm; } h2 { font-size: 12pt; margin: 4mm 0 2mm; }
svg { width: 175mm; height: auto; display: block; margin: 0 auto; }
table { border-collapse: collapse; width: 100%; font-size: 9pt; }
td, th { border: 1px solid #999; padding: 1.2mm 2mm; vertical-align: top; text-align: left; }
pre { font-size: 8.3pt; background: #f4f4f4; padding: 2mm; white-space: pre-wrap; margin: 0; }
code { font-size: 92%; } ul { margin: 1mm 0; padding-left: 6mm; }
"""


def page(lang: str, svg: str) -> str:
    """The handout's HTML (one A4 page)."""
    head = HEAD[lang]
    rows = readme_defects() if lang == "en" else DEFECTS_RU
    table = "".join(
        "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    wire = WIRE
    for i, comment in enumerate(WIRE_COMMENTS[lang]):
        wire = wire.replace(f"# {{{i}}}", f"# {comment}")
    rules = "".join(f"<li>{_inline(r)}</li>" for r in RULES[lang])
    return f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<title>{html.escape(TITLE[lang])}</title><style>{STYLE}</style></head><body>
<h1>{html.escape(TITLE[lang])}</h1>
<h2>{head[0]}</h2>{svg}<ul>{rules}</ul>
<h2>{head[1]}</h2><table><tr><th>{head[3]}</th><th>{head[4]}</th><th>{head[5]}</th></tr>{table}</table>
<h2>{head[2]}</h2><pre>{html.escape(wire)}</pre>
</body></html>
"""


SHEET = {
    "en": ("Exit quiz: answer sheet (for the teacher)", "answer", "reread"),
    "ru": ("Итоговый тест: ответы (для преподавателя)", "ответ", "перечитать"),
}


def answer_sheet(lang: str) -> str:
    """The teacher's printable answer sheet of the exit quiz (helpers/exercises/quiz.py)."""
    from helpers.exercises.quiz import QUESTIONS

    index = 0 if lang == "en" else 1
    title, answer, reread = SHEET[lang]
    items = []
    for number, q in enumerate(QUESTIONS, start=1):
        options = "".join(
            f"<li>{letter}) {html.escape(option[index])}</li>"
            for letter, option in zip("abc", q["options"], strict=True)
        )
        items.append(
            f"<h2>{number}. {html.escape(q['q'][index])}</h2><ul>{options}</ul>"
            f"<p><strong>{answer}: {q['answer']}</strong> · {reread}: "
            f"{html.escape(q['reread'][index])}</p>"
        )
    return f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>{"".join(items)}</body></html>
"""
