"""Verdicts for the self-check cells, in the notebook's language (`helpers.i18n`).

A self-check prints one verdict line and returns a `Verdict`, so a grader or a test can read the
result without parsing text. The returned object shows nothing in a notebook (the printed line is
the display), so a check cell's output is the verdict alone.

Every verdict is also recorded in this kernel with the exercise it belongs to (`RECORDED`), for
tests. Nothing is written anywhere else: the grader (`python -m helpers.grade`) runs its own copy
of the checks and reads the returned `Verdict`, not a log the student's code could write to.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
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


CYRILLIC = re.compile("[\u0400-\u04ff]")


def english(hint: str) -> str:
    """An English hint with the Cyrillic of a shown input written as \\u escapes (as Python's
    ascii() writes them): the English edition prints no Cyrillic."""
    return CYRILLIC.sub(lambda m: f"\\u{ord(m[0]):04x}", hint)


def exercise(check: Callable[P, None]) -> Callable[P, Verdict]:
    """Make `check`, which raises NotYet at the first problem it finds, an exercise's self-check:
    called, it prints "Correct!" or "Not yet: <hint>" in the notebook's language, records the
    verdict under its own name and module (see `RECORDED`) and returns it."""

    @functools.wraps(check)
    def self_check(*args: P.args, **kwargs: P.kwargs) -> Verdict:
        try:
            check(*args, **kwargs)
        except NotYet as failed:
            result = Verdict(False, tr(english(failed.en), failed.ru))
        except (Exception, RecursionError, _TooSlow) as exc:  # the answer broke the check itself
            result = Verdict(False, tr(*unreadable(exc)))
        else:
            result = Verdict(True)
        _record(result, check.__module__, check.__name__)
        print(result)
        return result

    return self_check


@dataclass(frozen=True)
class Explain:
    """A recogniser: when a learner's exception is `kind` (a type or a tuple of types) and its
    message matches `pattern`, the reason in both languages (`{0}`, `{1}`, ... are the pattern's
    groups). With `line`, it fits only when the source line that raised (the innermost frame's,
    as `linecache` knows it: a notebook cell's too) is known and matches `line`: one message
    (`list index out of range`) can then get a reason per expression that raised it."""

    kind: type[BaseException] | tuple[type[BaseException], ...]
    pattern: str
    en: str
    ru: str
    line: str | None = None

    def reason(self, exc: BaseException) -> tuple[str, str] | None:
        """The reason for `exc` in English and Russian, or None when the recogniser does not fit."""
        match = re.search(self.pattern, str(exc)) if isinstance(exc, self.kind) else None
        if match is None:
            return None
        if self.line is not None:
            raised = raising_line(exc)
            if raised is None or not re.search(self.line, raised):
                return None
        return self.en.format(*match.groups()), self.ru.format(*match.groups())


def raising_line(exc: BaseException) -> str | None:
    """The source line of the innermost frame of `exc`'s traceback, or None when it is unknown
    (code compiled from a string that linecache does not hold)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return (frames[-1].line or None) if frames else None


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
        "в json.loads попал текст, который не является одним значением JSON: проверьте, какую "
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
    a_function(fn)
    try:
        with time_bound(STUDENT_SECONDS, STUDENT_WAIT_SECONDS):
            return fn(*args)
    except _TooSlow as slow:
        limit, what = slow.args
        where_en, where_ru = (f" on {case[0]}", f" на входе «{case[1]}»") if case else ("", "")
        if what == "wall":
            raise NotYet(
                f"your function was still waiting after {limit:g} s{where_en}: look for a "
                "sleep, an input() or a request that never returns.",
                f"ваша функция всё ещё ждала через {limit:g} с{where_ru}: поищите sleep, "
                "input() или запрос, который не возвращается.",
            ) from None
        raise NotYet(
            f"your function did not finish within {limit:g} s{where_en}: look for a "
            "loop that never ends.",
            f"ваша функция не завершилась за {limit:g} с{where_ru}: поищите цикл, "
            "который не заканчивается.",
        ) from None
    except (Exception, SystemExit) as exc:  # the learner's bug is the news, not a crash
        raise student_error(exc, explain, case) from None


@dataclass(frozen=True)
class Raised:
    """An exception a function raised, as its answer (where raising is what a check reads)."""

    exc: BaseException


def catching(
    fn: Callable[..., Any], kinds: type[BaseException] | tuple[type[BaseException], ...]
) -> Callable[..., Any]:
    """`fn` returning `Raised(exc)` instead of raising an exception of `kinds` (run it through
    `call_student`, which still bounds its time)."""

    def run(*args: Any) -> Any:
        try:
            return fn(*args)
        except kinds as exc:
            return Raised(exc)

    return run


def a_function(fn: Any, name: str = "") -> None:
    """NotYet unless `fn` (the answer, or the function `name`) can be called."""
    if not callable(fn):
        raise NotYet(
            f"{name or 'the answer'} should be a function; got {kind(fn)}.",
            f"нужна функция{' ' + name if name else ''}, а получено {kind(fn)}.",
        )


def student_error(
    exc: BaseException, explain: Sequence[Explain] = (), case: tuple[str, str] | None = None
) -> NotYet:
    """The NotYet for an exception raised by a learner's code: where, what, and why."""
    text = _safe_str(exc)
    name = f"`{type(exc).__name__}: {text}`" if text else f"`{type(exc).__name__}`"
    where_en, where_ru = (f" on {case[0]}", f" на входе «{case[1]}»") if case else ("", "")
    en = f"your function raised {name}{where_en}."
    ru = f"ваша функция выбросила {name}{where_ru}."
    for recogniser in (*explain, *COMMON_MISTAKES):
        try:
            reason = recogniser.reason(exc)
        except Exception:  # an exception whose str() raises fits no recogniser
            reason = None
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
    "reasoning in the first chunk": "рассуждение уже в первом фрагменте",
    "reasoning in two paragraphs": "рассуждение в два абзаца",
    "the same call twice": "один и тот же вызов дважды",
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
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def _capital(text: str) -> str:
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
    return tool_call_dict(call_id, "get_weather", json.dumps({"city": city}))


# --- the student's values, made safe to compare and to show --------------------------------------
# A check never calls a method of the learner's object (`__eq__`, `__bool__`, `__len__`, `__iter__`
# or `__repr__` may raise or lie): `plain` copies the value into Python's own JSON types through
# the base classes' methods, refusing any other type by name, and bounds its size and depth.

STUDENT_SECONDS = (
    2.0  # CPU seconds for one call of the learner's function: an endless loop ends here
)
STUDENT_WAIT_SECONDS = 30.0  # wall seconds: a function that waits (sleep, input(), a request)
MAX_TEXT = 20_000  # characters of all the strings of one answer
MAX_ITEMS = 2_000  # lists' items and dicts' keys of one answer
MAX_DEPTH = 20
SHOWN = 160  # characters of a value a hint shows


BATTERIES: dict[str, int] = {}  # the function's name -> the cases it was run on (bench/checks.py)


class _TooSlow(BaseException):
    """The learner's function ran past its time (a BaseException: `except Exception` in the
    learner's code does not swallow it); `args[0]` is the limit it ran past, `args[1]` its kind
    ("cpu" or "wall")."""


@contextmanager
def time_bound(seconds: float, wait: float = STUDENT_WAIT_SECONDS) -> Iterator[None]:
    """Raise `_TooSlow` in the block after `seconds` of this process's CPU time (ITIMER_PROF: on a
    busy machine a correct function is not cut short for waiting its turn) or `wait` seconds of
    wall time (a function that sleeps or blocks). Main thread with setitimer only; elsewhere no
    bound. A wall timer already running (pytest-timeout's) is put back afterwards with the time
    it had left, and left alone when it would fire first."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    wall = not 0 < outer_left <= wait

    def past(limit: float, what: str) -> Callable[[int, Any], None]:
        def handler(signum: int, frame: Any) -> None:
            raise _TooSlow(limit, what)

        return handler

    started = time.monotonic()
    previous_prof = signal.signal(signal.SIGPROF, past(seconds, "cpu"))
    signal.setitimer(signal.ITIMER_PROF, seconds)
    if wall:
        previous_alarm = signal.signal(signal.SIGALRM, past(wait, "wall"))
        signal.setitimer(signal.ITIMER_REAL, wait)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous_prof)
        if wall:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_alarm)
            if outer_left > 0:
                left = outer_left - (time.monotonic() - started)
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), outer_interval)


class NotPlain(Exception):
    """A value `plain` refuses: `en` and `ru` say what it is."""

    def __init__(self, en: str, ru: str) -> None:
        super().__init__(en)
        self.en, self.ru = en, ru


def kind(value: Any) -> str:
    """A value's type as a hint names it, without calling anything of the value."""
    return f"a {type(value).__name__!r} object" if value is not None else "None"


def plain(value: Any) -> Any:
    """`value` copied into plain JSON types (dict with str keys, list, str, int, float, bool,
    None; a tuple becomes a list), never calling the value's own methods. Raises NotPlain for any
    other type (generator, custom object, set, bytes...), a non-str key, a NaN, or an answer too
    big or too deep."""
    budget = {"text": MAX_TEXT, "items": MAX_ITEMS}

    def copy_of(v: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise NotPlain("a value nested too deep", "слишком глубоко вложенное значение")
        if v is None or type(v) is bool:
            return v
        if isinstance(v, bool):
            return bool.__bool__(v)
        if isinstance(v, int):
            return int.__index__(v)
        if isinstance(v, float):
            number = float.__float__(v)
            if math.isnan(number):
                raise NotPlain("NaN (not a number)", "NaN (не число)")
            return number
        if isinstance(v, str):
            text = str.__str__(v)
            budget["text"] -= len(text)
            if budget["text"] < 0:
                raise NotPlain(
                    f"text of over {MAX_TEXT} characters", f"текст длиннее {MAX_TEXT} символов"
                )
            return text
        if isinstance(v, (list, tuple)):
            base = list if isinstance(v, list) else tuple
            n = base.__len__(v)
            budget["items"] -= n
            if budget["items"] < 0:
                raise NotPlain(f"over {MAX_ITEMS} items", f"больше {MAX_ITEMS} элементов")
            return [copy_of(base.__getitem__(v, i), depth + 1) for i in range(n)]
        if isinstance(v, dict):
            budget["items"] -= dict.__len__(v)
            if budget["items"] < 0:
                raise NotPlain(f"over {MAX_ITEMS} items", f"больше {MAX_ITEMS} элементов")
            out = {}
            for key, item in list(dict.items(v)):
                if not isinstance(key, str):
                    raise NotPlain(
                        f"a dict key of type {type(key).__name__!r} (JSON keys are strings)",
                        f"ключ словаря типа {type(key).__name__!r} (ключи JSON — строки)",
                    )
                out[str.__str__(key)] = copy_of(item, depth + 1)
            return out
        raise NotPlain(kind(v), f"объект типа {type(v).__name__!r}" if v is not None else "None")

    return copy_of(value, 0)


def returned(value: Any, call: str, wanted: Pair) -> Any:
    """`plain(value)`, or NotYet saying that `call` returned something of another type and what
    the exercise wants (`wanted`, e.g. ("a list of dicts", "список словарей"))."""
    try:
        return plain(value)
    except NotPlain as refused:
        raise NotYet(
            f"{call} returned {refused.en}; the exercise wants {wanted[0]} (plain Python values).",
            f"{call} вернула {refused.ru}; в упражнении ожидается {wanted[1]} (обычные "
            "значения Python).",
        ) from None


def strict_equal(a: Any, b: Any) -> bool:
    """Equality of plain values that also compares types: True is not 1, 16.0 is not 16."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    return a == b


def shorten(value: Any, limit: int = SHOWN) -> str:
    """repr of a plain value, cut in the middle to `limit` characters."""
    text = repr(value)
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def _safe_str(value: Any) -> str:
    """str(value) bounded, or its type's name when str() raises."""
    try:
        text = str(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def unreadable(exc: BaseException) -> Pair:
    """What a check says when the answer broke the check itself (an object that raises or lies
    where a plain value was expected): the type of trouble, and what to give instead."""
    name = type(exc).__name__
    return (
        f"the check could not read your answer (`{name}`): give it plain values (dict, list, "
        "str, number, bool, None) or the function the exercise asks for.",
        f"проверка не смогла прочитать ваш ответ (`{name}`): передайте обычные значения "
        "(dict, list, str, число, bool, None) или функцию, которую просит упражнение.",
    )


@dataclass(frozen=True)
class Case:
    """One input of a battery: the arguments, and how a hint shows them (English, Russian)."""

    args: tuple[Any, ...]
    shown: str


def case_of(*args: Any, shown: str | None = None) -> Case:
    """A battery case; shown by default as the shortened arguments."""
    text = shown if shown is not None else ", ".join(shorten(a, 120) for a in args)
    return Case(args, text)


def on_battery(
    student: Callable[..., Any],
    reference: Callable[..., Any],
    cases: Iterable[Case],
    *,
    name: str,
    wanted: Pair,
    idea: Pair | Callable[..., Pair],
    explain: Sequence[Explain] = (),
    same: Callable[[Any, Any], bool] | None = None,
    more: Sequence[tuple[Iterable[Case], Pair]] = (),
) -> None:
    """The differential test: on every case the learner's function must give what `reference`
    gives, compared as plain JSON values (a tuple equals a list). The first disagreement raises
    NotYet naming the input, the expected and the returned value, and `idea` (one sentence on
    the idea, never the code; or a function of the case's arguments, the expected and the
    returned value that gives the sentence for that case). `same(expected, got)` replaces
    equality where order or form may differ (default: `strict_equal`). `more` holds further
    batteries run after `cases`, in order, each with its own idea."""
    batteries = tuple((case, idea) for cases, idea in ((cases, idea), *more) for case in cases)
    BATTERIES[name] = BATTERIES.get(name, 0) + len(batteries)  # a check may call on_battery twice
    for case, idea in batteries:
        expected = plain(reference(*copy.deepcopy(case.args)))
        call = f"{name}({case.shown})"
        got = call_student(student, *copy.deepcopy(case.args), explain=explain, case=(call, call))
        got = returned(got, call, wanted)
        if not (same or strict_equal)(expected, got):
            if callable(idea):
                idea = idea(*case.args, expected, got)
            where = difference(expected, got)
            if where:
                path, want, have = where
                raise NotYet(
                    f"{call}: at result{path} expected {shorten(want, 100)}, got "
                    f"{shorten(have, 100)}. {idea[0]}",
                    f"{call}: в result{path} ожидалось {shorten(want, 100)}, получено "
                    f"{shorten(have, 100)}. {idea[1]}",
                )
            raise NotYet(
                f"{call} should return {shorten(expected)}, got {shorten(got)}. {idea[0]}",
                f"{call} должна вернуть {shorten(expected)}, получено {shorten(got)}. {idea[1]}",
            )


def difference(want: Any, have: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """Where two plain values of the same shape first differ, as (path like `[0].function.name`,
    expected, got); None when they differ in shape at the top (different lengths, types, keys)."""
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        for i, (w, h) in enumerate(zip(want, have, strict=True)):
            if not strict_equal(w, h):
                return difference(w, h, f"{path}[{i}]") or (f"{path}[{i}]", w, h)
        return None
    if isinstance(want, dict) and isinstance(have, dict) and want.keys() == have.keys():
        for key in want:
            if not strict_equal(want[key], have[key]):
                inner = f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"
                return difference(want[key], have[key], inner) or (inner, want[key], have[key])
        return None
    return None


def seeded(seed: str) -> Any:
    """A random generator seeded by a text: the same battery on every run."""
    import random

    return random.Random(seed)


# Pieces the generated batteries combine: names with digits, dashes and dots; values with
# Cyrillic, emoji, markup-like text, edge whitespace and newlines.
NAMES = ("get_weather", "search_v2", "get-weather", "weather.today", "f", "lookup2go", "a.b-c_3")
VALUES = (
    "Beijing",
    "Москва",
    "Sunny ☀️",
    "a < b > c",
    "</parameter> is text",
    "<tool_call>",
    "  two spaces  ",
    "line one\nline two",
    "",
    "Санкт-Петербург, ул. Ленина 1",
)


def generated_arguments(rng: Any, values: Sequence[str] = VALUES) -> dict[str, Any]:
    """One call's arguments: one to three keys, strings, numbers, a nested object or a list."""
    keys = rng.sample(["city", "query", "date", "units", "filter", "limit"], rng.randint(1, 3))
    out: dict[str, Any] = {}
    for key in keys:
        pick = rng.randrange(5)
        if pick == 0:
            out[key] = rng.randint(-5, 500)
        elif pick == 1:
            out[key] = {"text": rng.choice(values), "exact": rng.random() < 0.5}
        elif pick == 2:
            out[key] = [rng.choice(values), rng.randint(0, 9)]
        else:
            out[key] = rng.choice(values)
    return out
