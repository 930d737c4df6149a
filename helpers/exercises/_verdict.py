"""Verdicts for the self-check cells, in the notebook's language (`helpers.i18n`).

A self-check prints one verdict line and returns a `Verdict`, so a grader or a test can read the
result without parsing text. The returned object shows nothing in a notebook (the printed line is
the display), so a check cell's output is the verdict alone.

Every verdict is also recorded in this kernel with the exercise it belongs to (`RECORDED`), for
tests. Nothing is written anywhere else: the grader (`python -m helpers.grade`) runs its own copy
of the checks and reads the returned `Verdict`, not a log the student's code could write to.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

from helpers.formats._common import tool_call_dict
from helpers.i18n import Text, tr

CORRECT = Text("Correct!", "Верно!")
NOT_YET = Text("Not yet:", "Пока нет:")
P = ParamSpec("P")
Pair = tuple[str, str]  # the same text in English and in Russian


class NotYet(Exception):
    """A self-check failed: `en` and `ru` say what is wrong and what to try."""

    def __init__(self, en: str, ru: str) -> None:
        super().__init__(en)
        self.en = en
        self.ru = ru


@dataclass(frozen=True)
class Verdict:
    """What a self-check found: `passed`, and the hint (empty when passed)."""

    passed: bool
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return str(CORRECT) if self.passed else f"{NOT_YET} {self.hint}"

    def _ipython_display_(self) -> None:
        """Show nothing: the verdict line was already printed by the self-check."""


# Every verdict given in this kernel, oldest first: {"exercise", "passed", "hint"}.
RECORDED: list[dict[str, Any]] = []
LESSON_MODULE = re.compile(r"(?:^|\.)n(\d\d)$")


def _record(result: Verdict, module: str, function: str) -> None:
    """Remember the verdict under the check function that gave it (`helpers.exercises.n01` +
    `check_schema` -> `01:check_schema`, the grader's column name)."""
    found = LESSON_MODULE.search(module)
    exercise = f"{found.group(1) if found else module}:{function}"
    entry = {"exercise": exercise, "passed": result.passed, "hint": result.hint}
    RECORDED.append(entry)


def exercise(check: Callable[P, None]) -> Callable[P, Verdict]:
    """Make `check`, which raises NotYet at the first problem it finds, an exercise's self-check:
    called, it prints "Correct!" or "Not yet: <hint>" in the notebook's language, records the
    verdict under its own name and module (see `RECORDED`) and returns it."""

    @functools.wraps(check)
    def self_check(*args: P.args, **kwargs: P.kwargs) -> Verdict:
        try:
            check(*args, **kwargs)
        except NotYet as failed:
            result = Verdict(False, tr(failed.en, failed.ru))
        else:
            result = Verdict(True)
        _record(result, check.__module__, check.__name__)
        print(result)
        return result

    return self_check


@dataclass(frozen=True)
class Explain:
    """A recogniser: when a learner's exception is `kind` and its message matches `pattern`, the
    reason in both languages (`{0}`, `{1}`, ... are the pattern's groups)."""

    kind: type[BaseException]
    pattern: str
    en: str
    ru: str

    def reason(self, exc: BaseException) -> tuple[str, str] | None:
        """The reason for `exc` in English and Russian, or None when the recogniser does not fit."""
        match = re.search(self.pattern, str(exc)) if isinstance(exc, self.kind) else None
        if match is None:
            return None
        return self.en.format(*match.groups()), self.ru.format(*match.groups())


# Mistakes any exercise can make; an exercise puts its own, more precise ones first.
COMMON_MISTAKES: tuple[Explain, ...] = (
    Explain(
        AttributeError,
        r"'dict' object has no attribute '(\w+)'",
        'the message is a dict here, not an SDK object: use message["{0}"] (or '
        'message.get("{0}") when the key may be missing).',
        'здесь сообщение — словарь, а не объект SDK: пишите message["{0}"] (или '
        'message.get("{0}"), если ключа может не быть).',
    ),
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute '(\w+)'",
        "a value you read .{0} from is None here: check for None first.",
        "значение, у которого вы берёте .{0}, здесь равно None: сначала проверьте, не None ли оно.",
    ),
    Explain(
        TypeError,
        r"'NoneType' object is not (?:subscriptable|iterable)|"
        r"argument of type 'NoneType' is not iterable|NoneType",
        "a value is None where your code expects text or a list: treat None as empty.",
        "значение равно None там, где ваш код ждёт текст или список: считайте None пустым.",
    ),
    Explain(
        KeyError,
        r"'?([^']*)'?",
        "the key {0!r} is missing in this input: not every message or call has it; use .get().",
        "ключа {0!r} в этих данных нет: он есть не у каждого сообщения или вызова; "
        "используйте .get().",
    ),
    Explain(
        json.JSONDecodeError,
        r".",
        "json.loads got text that is not one JSON value: check which part of the text you cut out.",
        "json.loads получил текст, который не является одним значением JSON: проверьте, какую "
        "часть текста вы вырезали.",
    ),
)


def call_student(
    fn: Callable[..., Any],
    *args: Any,
    explain: Sequence[Explain] = (),
    case: tuple[str, str] | None = None,
) -> Any:
    """Call the learner's function; an exception becomes a NotYet that names it and says why.

    The exception's type and message stay visible (in backticks: they are Python's words); the
    first recogniser of `explain`, then of `COMMON_MISTAKES`, that fits adds the reason. `case`
    names the input, in both languages, on which the function failed."""
    try:
        return fn(*args)
    except Exception as exc:  # the learner's bug is the news, not a crash of the check
        raise student_error(exc, explain, case) from exc


def student_error(
    exc: BaseException, explain: Sequence[Explain] = (), case: tuple[str, str] | None = None
) -> NotYet:
    """The NotYet for an exception raised by a learner's code: where, what, and why."""
    name = f"`{type(exc).__name__}: {exc}`" if str(exc) else f"`{type(exc).__name__}`"
    where_en, where_ru = (f" on {case[0]}", f" на входе «{case[1]}»") if case else ("", "")
    en = f"your function raised {name}{where_en}."
    ru = f"ваша функция выбросила {name}{where_ru}."
    for recogniser in (*explain, *COMMON_MISTAKES):
        reason = recogniser.reason(exc)
        if reason is not None:
            return NotYet(f"{en} {_capital(reason[0])}", f"{ru} {_capital(reason[1])}")
    return NotYet(en, ru)


# The cases' names in Russian, for the hints (the English names are the checks' keys).
CASE_RU = {
    "one call": "один вызов",
    "interleaved calls with a usage chunk": "чередующиеся вызовы и фрагмент со статистикой",
    "a delta without function": "дельта без function",
    "text before the calls": "текст перед вызовами",
    "no calls": "без вызовов",
    "textbook": "как в учебнике",
    "text before the section": "текст перед секцией",
    "two calls in one section": "два вызова в одной секции",
    "second section": "вторая секция",
    "cut off by max_tokens": "обрезано по max_tokens",
    "'-' in the name": "'-' в имени",
    "id without 'functions.'": "id без 'functions.'",
    "newlines between markers": "переводы строк между маркерами",
    "arguments over several lines": "аргументы на нескольких строках",
    "Moonshot, thinking on": "Moonshot, рассуждение включено",
    "vLLM >= 0.17": "vLLM >= 0.17",
    "no thinking": "без рассуждения",
    "a final answer": "окончательный ответ",
    "OpenAI-style ids": "id в стиле OpenAI",
    "two calls in one message": "два вызова в одном сообщении",
    "Moonshot": "Moonshot",
    "vLLM with a usage chunk": "vLLM и фрагмент со статистикой",
    "text and two calls": "текст и два вызова",
    "a value over two lines": "значение на двух строках",
    "spaces at the edges of a value": "пробелы по краям значения",
    "a whole block": "блок целиком",
    "the prompt opened it": "блок открыл промпт",
    "empty block": "пустой блок",
    "no thinking, newlines around the answer": "без рассуждения, переводы строк вокруг ответа",
    "two calls": "два вызова",
    "results in the other order": "результаты в обратном порядке",
    "two rounds": "два раунда",
}


def variant(name: str) -> Pair:
    """The case `name` as a hint names it: "for '<name>'", "для варианта «<in Russian>»"."""
    return f"for '{name}'", f"для варианта «{CASE_RU[name]}»"


EXPECTED, SHOULD_BE = ("expected", "ожидалось"), ("should be", "должно быть")


def mismatch(case: Pair, expected: Any, got: Any, why: Pair = (".", "."), verb=EXPECTED) -> NotYet:
    """The NotYet for a wrong answer: `<case> expected X, got Y<why>` in both languages. `case`
    names the input (e.g. "for 'one call'", "для варианта «один вызов»"), the values are shown
    with repr, `why` brings its own punctuation."""
    return NotYet(
        f"{case[0]} {verb[0]} {expected!r}, got {got!r}{why[0]}",
        f"{case[1]} {verb[1]} {expected!r}, получено {got!r}{why[1]}",
    )


def as_tuples(got: Any, items: bool = False) -> Any:
    """A list answer made a tuple, or with `items` each list in it made a tuple (a learner may
    build with lists what the exercise shows as tuples); anything else as it is."""
    if not isinstance(got, list):
        return got
    return [tuple(i) if isinstance(i, list) else i for i in got] if items else tuple(got)


def name_and_arguments(calls: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(name, decoded arguments) of each OpenAI-shaped call."""
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def _capital(text: str) -> str:
    """The sentence with its first letter in upper case."""
    return text[:1].upper() + text[1:]


# What a server's 400 about the history means, by the start of its (English) text: the server's
# words stay quoted, the explanation comes in the notebook's language.
SERVER_ERRORS: tuple[tuple[str, str, str], ...] = (
    (
        "Invalid parameter: messages with role 'tool' must be a response",
        'a role "tool" message must come right after the assistant message whose tool_calls '
        "it answers; here no such assistant message comes before it.",
        'сообщение с role "tool" должно идти сразу после сообщения ассистента, на чьи '
        "tool_calls оно отвечает; здесь перед ним такого сообщения нет.",
    ),
    (
        "An assistant message with 'tool_calls' must be followed by tool messages",
        'after an assistant message with tool_calls, every call needs its own role "tool" '
        "message before any other message.",
        "после сообщения ассистента с tool_calls каждый вызов должен получить своё сообщение "
        'с role "tool", прежде чем придёт любое другое сообщение.',
    ),
    (
        "Invalid parameter: 'tool_call_id' of",
        "a tool_call_id names no call of the assistant message just before it: copy the "
        "call's id exactly.",
        "tool_call_id не совпадает ни с одним вызовом в сообщении ассистента перед ним: "
        "скопируйте id вызова без изменений.",
    ),
    (
        "thinking is enabled but reasoning_content is missing",
        "with thinking on, Moonshot wants every assistant message with tool_calls sent back "
        "with its reasoning_content.",
        "когда рассуждение включено, Moonshot требует, чтобы каждое сообщение ассистента с "
        "tool_calls возвращалось вместе с его reasoning_content.",
    ),
)


def server_refusal(message: str) -> NotYet:
    """The NotYet for a history a server would refuse with a 400: its words quoted verbatim,
    then what they mean, in the notebook's language."""
    en, ru = next(
        ((en, ru) for start, en, ru in SERVER_ERRORS if message.startswith(start)),
        (
            "the server refuses this history; read its message and fix the field it names.",
            "сервер не примет такую историю; прочтите его сообщение и исправьте названное поле.",
        ),
    )
    return NotYet(
        f'a server would answer 400: "{message}". That means: {en}',
        f"сервер ответил бы 400 (его текст: «{message}»). Это значит: {ru}",
    )


# --- sample inputs the checks of more than one lesson build -------------------------------------
_CHUNK_HEAD = {
    "id": "chatcmpl-exercise",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "m",
}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, usage: Any = None) -> Any:
    """One SDK `ChatCompletionChunk` (a usage chunk with `choices: []` when `delta` is None)."""
    from openai.types.chat import ChatCompletionChunk

    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return ChatCompletionChunk.model_validate({**_CHUNK_HEAD, "choices": choices, "usage": usage})


def weather_call(call_id: str, city: str) -> dict[str, Any]:
    """An OpenAI-shaped get_weather call for `city` with `call_id`."""
    return tool_call_dict(call_id, "get_weather", json.dumps({"city": city}))
