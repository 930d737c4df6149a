"""The class's exit quiz (lesson 8.3.2): six questions on lessons 00-03, one letter each.

Students answer in the last section of lesson 03 (`quiz.check_quiz(answers)`); the teacher's answer
sheet is printed by scripts/build_deck.py from `QUESTIONS`. A wrong answer's hint names the
question and the lesson step to reread, never the right letter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helpers.exercises import _verdict

# Looked up at call time, not imported by name: the grader reloads `_verdict` before each check
# cell, and a NotYet bound at import would then be a class the reloaded wrapper does not catch.

# (question, options a-c, the right letter, the step to reread), each text as (English, Russian).
QUESTIONS: list[dict[str, Any]] = [
    {
        "q": ("Who runs the tool's function?", "Кто выполняет функцию инструмента?"),
        "options": (
            ("the model", "модель"),
            ("your program, from tool_map", "ваша программа, через tool_map"),
            ("the API server", "сервер API"),
        ),
        "answer": "b",
        "reread": ("lesson 00, step 1", "урок 00, шаг 1"),
    },
    {
        "q": (
            "A call's arguments arrive as...",
            "Аргументы вызова приходят как...",
        ),
        "options": (
            (
                "a JSON string: json.loads, then fn(**arguments)",
                "строка JSON: json.loads, затем fn(**arguments)",
            ),
            ("a dict to pass as fn(arguments)", "словарь, который передают как fn(arguments)"),
            ("Python code to eval", "код Python для eval"),
        ),
        "answer": "a",
        "reread": ("lesson 01, steps 4-5", "урок 01, шаги 4-5"),
    },
    {
        "q": ("When does the loop stop?", "Когда цикл останавливается?"),
        "options": (
            ('when finish_reason != "tool_calls"', 'когда finish_reason != "tool_calls"'),
            ("after one round", "после одного раунда"),
            ("when the message carries no tool_calls", "когда в сообщении нет tool_calls"),
        ),
        "answer": "c",
        "reread": ("lesson 02, steps 6-7", "урок 02, шаги 6-7"),
    },
    {
        "q": (
            'What must come right before the role: "tool" results in messages?',
            'Что должно стоять в messages прямо перед результатами role: "tool"?',
        ),
        "options": (
            ("the user's question again", "вопрос пользователя ещё раз"),
            ("the assistant message with its tool_calls", "сообщение ассистента с его tool_calls"),
            ("nothing", "ничего"),
        ),
        "answer": "b",
        "reread": ("lesson 03, step 4", "урок 03, шаг 4"),
    },
    {
        "q": (
            "Streamed pieces of a tool call are glued by...",
            "Потоковые куски вызова склеивают по...",
        ),
        "options": (
            ("their index", "их index"),
            ("their id, present in every chunk", "их id, который есть в каждом фрагменте"),
            ("arrival order only", "только порядку прихода"),
        ),
        "answer": "a",
        "reread": ("lesson 03, step 3", "урок 03, шаг 3"),
    },
    {
        "q": (
            'How does a role: "tool" message say which call it answers?',
            'Как сообщение role: "tool" указывает, на какой вызов оно отвечает?',
        ),
        "options": (
            ("by its position only", "только своим местом в списке"),
            ("by the function's name", "именем функции"),
            ("by tool_call_id, the call's id", "полем tool_call_id, равным id вызова"),
        ),
        "answer": "c",
        "reread": ("lesson 02, step 3", "урок 02, шаг 3"),
    },
]


@_verdict.exercise
def check_quiz(answers: Mapping[int, str]) -> None:
    """The exit quiz: `answers` maps each question number (1-6) to a letter a, b or c."""
    if not isinstance(answers, Mapping):
        raise _verdict.NotYet(
            'answers must be a dict: {1: "a", 2: "c", ...}.',
            'answers должен быть словарём: {1: "a", 2: "c", ...}.',
        )
    as_text = [k for k in answers if isinstance(k, str) and k.strip().isdigit()]
    if as_text:
        raise _verdict.NotYet(
            f'the keys are the question numbers as numbers (1, not "1"): {as_text[0]!r} is text.',
            f'ключи — номера вопросов числами (1, а не "1"): {as_text[0]!r} — это текст.',
        )
    for number, question in enumerate(QUESTIONS, start=1):
        given = answers.get(number)
        letter = given.strip().lower() if isinstance(given, str) else None
        if letter and letter not in ("a", "b", "c"):
            if len(letter) <= 3:  # "b)" as printed
                raise _verdict.NotYet(
                    f'question {number}: {given!r} is not one letter; give the letter alone, "a", '
                    '"b" or "c".',
                    f"вопрос {number}: {given!r} — не одна буква; укажите только букву, «a», «b» "
                    "или «c».",
                )
            raise _verdict.NotYet(
                f'question {number}: give the option\'s letter, "a", "b" or "c", not its text.',
                f"вопрос {number}: укажите букву варианта, «a», «b» или «c», а не его текст.",
            )
        if letter not in ("a", "b", "c"):
            raise _verdict.NotYet(
                f'question {number} has no answer yet: give one letter, "a", "b" or "c".',
                f"на вопрос {number} пока нет ответа: укажите одну букву, «a», «b» или «c».",
            )
        if given.strip().lower() != question["answer"]:
            en, ru = question["reread"]
            raise _verdict.NotYet(
                f"question {number} is not right yet: reread {en}.",
                f"ответ на вопрос {number} пока неверен: перечитайте {ru}.",
            )
    extra = sorted(str(k) for k in answers if k not in range(1, len(QUESTIONS) + 1))
    if extra:
        raise _verdict.NotYet(
            f"there are only {len(QUESTIONS)} questions; remove {', '.join(extra)}.",
            f"вопросов всего {len(QUESTIONS)}; уберите {', '.join(extra)}.",
        )


def show_questions() -> None:
    """Print the questions and their options in the notebook's language."""
    from helpers.i18n import tr

    for number, question in enumerate(QUESTIONS, start=1):
        print(f"{number}. {tr(*question['q'])}")
        for letter, option in zip("abc", question["options"], strict=True):
            print(f"   {letter}) {tr(*option)}")
