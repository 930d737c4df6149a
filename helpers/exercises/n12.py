"""Self-checks for lesson 12: tool-call precision, recall and F1, and schema accuracy.

Each check runs the student's function and the reference on the same hidden battery (the
lesson's example, edge cases, and cases generated from a fixed seed) and compares the numbers.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable
from typing import Any

from helpers.arguments import validate_arguments
from helpers.exercises._verdict import Explain, NotYet, a_function, call_student, exercise
from helpers.tools import parse_arguments

Case = tuple[str, str, tuple[Any, ...]]  # (English name, Russian name, arguments)


def _number(value: Any) -> float | None:
    """`value` as a float when it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _kind(value: Any) -> str:
    return type(value).__name__


def _rounded(got: float, want: float) -> bool:
    """`got` is `want` rounded to 2-4 decimals (and not `want` itself)."""
    return not math.isclose(got, want, abs_tol=1e-9) and any(
        math.isclose(got, round(want, digits), abs_tol=1e-12) for digits in (2, 3, 4)
    )


ROUNDED = (
    "Return the numbers as computed, not rounded: round only where you print them.",
    "Возвращайте числа как есть, без округления: округляйте только при выводе на экран.",
)
PERCENT = (
    "Return a share between 0 and 1, not a percentage.",
    "Верните долю от 0 до 1, а не проценты.",
)


def _texts(want: tuple[float, ...], got: tuple[float, ...]) -> tuple[str, str]:
    """The two sets of numbers as a hint shows them: 3 decimals, or every digit when 3 decimals
    would show them the same."""
    short = [", ".join(f"{n:.3f}" for n in numbers) for numbers in (want, got)]
    if short[0] != short[1]:
        return short[0], short[1]
    return ", ".join(map(repr, want)), ", ".join(map(repr, got))


# --- exercise 1: precision, recall, F1 ------------------------------------------------------------


def reference_f1(expected: list[Any], called: list[Any]) -> tuple[float, float, float]:
    """The lesson's definition, with a zero denominator giving 0.0."""
    tp = sum(bool(e) and bool(c) for e, c in zip(expected, called, strict=True))
    fp = sum(bool(c) and not e for e, c in zip(expected, called, strict=True))
    fn = sum(bool(e) and not c for e, c in zip(expected, called, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def f1_cases() -> list[Case]:
    """The lesson's example, the edge cases, then 20 labelled sets from a fixed seed."""
    lesson = [True, True, True, False, False]
    cases: list[Case] = [
        ("the lesson's vLLM column", "столбец vLLM из урока", (lesson, lesson)),
        (
            "the lesson's 'stop' column counted by finish_reason",
            "столбец „stop“ из урока, подсчёт по finish_reason",
            (lesson, [False] * 5),
        ),
        ("one extra call", "один лишний вызов", (lesson, [True, True, True, True, False])),
        ("one missed call", "один пропущенный вызов", (lesson, [True, False, True, False, False])),
        ("every reply called", "вызов в каждом ответе", (lesson, [True] * 5)),
        (
            "no request needed a call and none was made",
            "вызов не был нужен и не был сделан ни разу",
            ([False] * 4, [False] * 4),
        ),
        (
            "no request needed a call, one was made",
            "вызов не был нужен, но один сделан",
            ([False, False, False], [False, True, False]),
        ),
        ("one request, right", "один запрос, верно", ([True], [True])),
        ("labels written as 1 and 0", "метки записаны как 1 и 0", ([1, 0, 1, 1], [1, 1, 0, 1])),
        ("empty lists", "пустые списки", ([], [])),
    ]
    rng = random.Random(12)
    for number in range(1, 21):
        size = rng.randint(2, 12)
        expected = [rng.random() < 0.6 for _ in range(size)]
        called = [e if rng.random() < 0.7 else not e for e in expected]
        cases.append(
            (f"generated set {number}", f"сгенерированный набор {number}", (expected, called))
        )
    return cases


def _f1_idea(
    expected: list[Any], called: list[Any], want: tuple[float, ...], got: tuple[float, ...]
) -> tuple[str, str]:
    """One sentence on the idea behind the first number that differs."""
    if any(want) and all(
        math.isclose(g, 100 * w, abs_tol=1e-6) for g, w in zip(got, want, strict=True)
    ):
        return PERCENT
    if any(_rounded(g, w) for g, w in zip(got, want, strict=True)) and all(
        math.isclose(g, w, abs_tol=1e-9) or _rounded(g, w) for g, w in zip(got, want, strict=True)
    ):
        return ROUNDED
    tp, fp, fn = (
        sum(1 for e, c in zip(expected, called, strict=True) if rule(bool(e), bool(c)))
        for rule in (lambda e, c: e and c, lambda e, c: c and not e, lambda e, c: e and not c)
    )
    if not math.isclose(got[0], want[0], abs_tol=1e-9):
        if tp + fp == 0:
            return (
                "No reply called here, so precision's denominator is zero: it is 0.0.",
                "Здесь нет ни одного ответа с вызовом, знаменатель точности равен нулю: она 0.0.",
            )
        if math.isclose(got[0], want[1], abs_tol=1e-9):
            return (
                "Precision and recall look swapped: precision divides by the replies that "
                "called, recall by the requests that needed a call.",
                "Похоже, точность и полнота перепутаны: точность делят на число ответов с "
                "вызовом, полноту — на число запросов, которым вызов был нужен.",
            )
        return (
            "Precision counts among the replies that called: right calls / (right + extra).",
            "Точность считают среди ответов с вызовом: верные / (верные + лишние).",
        )
    if not math.isclose(got[1], want[1], abs_tol=1e-9):
        if tp + fn == 0:
            return (
                "No request needed a call here, so recall's denominator is zero: it is 0.0.",
                "Здесь ни одному запросу не был нужен вызов, знаменатель полноты равен нулю: "
                "она 0.0.",
            )
        return (
            "Recall counts among the requests that needed a call: right calls / (right + missed).",
            "Полноту считают среди запросов, которым нужен вызов: верные / (верные + пропущенные).",
        )
    if want[0] + want[1] == 0:
        return ("F1 of two zeros is 0.0.", "F1 от двух нулей равен 0.0.")
    return (
        "F1 is the harmonic mean 2PR / (P + R), not the average of P and R.",
        "F1 — среднее гармоническое 2PR / (P + R), а не среднее арифметическое P и R.",
    )


def _three_numbers(got: Any, case: tuple[str, str]) -> tuple[float, float, float]:
    """The student's result as three floats, or a NotYet naming what came back."""
    if not isinstance(got, tuple | list) or len(got) != 3:
        size = f" of {len(got)}" if isinstance(got, tuple | list) else ""
        raise NotYet(
            f"on {case[0]} your function returned a {_kind(got)}{size}: return a tuple of three "
            "numbers (precision, recall, f1).",
            f"на входе «{case[1]}» ваша функция вернула {_kind(got)}: верните кортеж из трёх "
            "чисел (precision, recall, f1).",
        )
    numbers = [_number(item) for item in got]
    if None in numbers:
        bad = got[numbers.index(None)]
        raise NotYet(
            f"on {case[0]} your tuple holds a {_kind(bad)}: all three values must be numbers.",
            f"на входе «{case[1]}» в кортеже есть значение типа {_kind(bad)}: все три должны "
            "быть числами.",
        )
    return numbers[0], numbers[1], numbers[2]  # type: ignore[return-value]


ZERO = (
    Explain(
        ZeroDivisionError,
        r".",
        "a denominator is zero on this input: a ratio with a zero denominator is 0.0.",
        "на этом входе знаменатель равен нулю: отношение с нулевым знаменателем равно 0.0.",
    ),
)


@exercise
def check_f1(precision_recall_f1: Callable[[list[Any], list[Any]], Any]) -> None:
    """Exercise 1: (precision, recall, f1) from two label lists, 0.0 for a zero denominator."""
    a_function(precision_recall_f1, "precision_recall_f1")
    for en, ru, (expected, called) in f1_cases():
        shown = f"expected={expected}, called={called}"
        case = (f"{en} ({shown})", f"{ru} ({shown})")
        got = call_student(
            precision_recall_f1, copy.copy(expected), copy.copy(called), explain=ZERO, case=case
        )
        numbers = _three_numbers(got, case)
        want = reference_f1(expected, called)
        if not all(math.isclose(g, w, abs_tol=1e-9) for g, w in zip(numbers, want, strict=True)):
            idea_en, idea_ru = _f1_idea(expected, called, want, numbers)
            want_text, got_text = _texts(want, numbers)
            raise NotYet(
                f"on {case[0]} the answer is ({want_text}), your function gave ({got_text}). "
                f"{idea_en}",
                f"на входе «{case[1]}» ответ ({want_text}), ваша функция дала ({got_text}). "
                f"{idea_ru}",
            )


# --- exercise 2: schema accuracy ------------------------------------------------------------------

CITY = {"type": "string", "description": "City name"}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather in a city.",
            "parameters": {"type": "object", "properties": {"city": CITY}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_temperature",
            "description": "Convert a temperature.",
            "parameters": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "to_unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["value", "to_unit"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_cities",
            "description": "List the cities with a forecast.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def _call(name: str, arguments: Any, number: int = 0) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


# Single calls, each with what makes it fit or not (the hint names it).
SINGLE: list[tuple[str, str, dict[str, Any]]] = [
    ("a valid call", "верный вызов", _call("get_weather", {"city": "Beijing"})),
    (
        "Cyrillic and emoji in a value",
        "кириллица и эмодзи в значении",
        _call("get_weather", {"city": "Москва 🌨"}),
    ),
    (
        "arguments that are not JSON",
        "аргументы — не JSON",
        _call("get_weather", '{"city": "Beijing"'),
    ),
    (
        "a tool that is not in tools",
        "инструмента нет в tools",
        _call("get_time", {"city": "Beijing"}),
    ),
    ("a required argument missing", "нет обязательного аргумента", _call("get_weather", {})),
    ("empty arguments text", "пустой текст аргументов", _call("get_weather", "")),
    (
        "an argument the tool does not take",
        "аргумент, которого нет у инструмента",
        _call("get_weather", {"city": "Beijing", "unit": "celsius"}),
    ),
    (
        "a number written as text",
        "число, записанное строкой",
        _call("convert_temperature", {"value": "25", "to_unit": "celsius"}),
    ),
    (
        "a value outside the enum",
        "значение вне enum",
        _call("convert_temperature", {"value": 25, "to_unit": "kelvin"}),
    ),
    (
        "a valid call with an integer for a number",
        "верный вызов с целым числом для number",
        _call("convert_temperature", {"value": 25, "to_unit": "fahrenheit"}),
    ),
    (
        "arguments that are a JSON list",
        "аргументы — список JSON",
        _call("get_weather", '["Beijing"]'),
    ),
    ("the city as null", "город равен null", _call("get_weather", {"city": None})),
    (
        "empty arguments text for a tool without parameters",
        "пустой текст аргументов у инструмента без параметров",
        _call("list_cities", ""),
    ),
]


# More single calls (not in the generated mixes, so those stay as they were): a tool without
# parameters fits only arguments that are a JSON object, and a name is matched exactly.
SINGLE_MORE: list[tuple[str, str, dict[str, Any]]] = [
    (
        "arguments that are not JSON, for a tool without parameters",
        "аргументы — не JSON, у инструмента без параметров",
        _call("list_cities", '{"x": '),
    ),
    (
        "arguments null for a tool without parameters",
        "аргументы null у инструмента без параметров",
        _call("list_cities", "null"),
    ),
    (
        "a JSON list for a tool without parameters",
        "список JSON у инструмента без параметров",
        _call("list_cities", "[]"),
    ),
    (
        "the tool's name in another case",
        "имя инструмента в другом регистре",
        _call("Get_Weather", {"city": "Oslo"}),
    ),
    (
        "a space before the tool's name",
        "пробел перед именем инструмента",
        _call(" get_weather", {"city": "Oslo"}),
    ),
]


def reference_schema_accuracy(
    tool_calls: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> float:
    """The share of calls whose arguments are JSON that fits their tool's schema."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    fits = 0
    for call in tool_calls:
        name = call["function"]["name"]
        arguments, problem = parse_arguments(call["function"]["arguments"])
        if not problem and name in schemas and not validate_arguments(arguments, schemas[name]):
            fits += 1
    return fits / len(tool_calls) if tool_calls else 0.0


def schema_cases() -> list[Case]:
    """Each single call alone, the lesson-like mixes, no calls, then 12 seeded mixes."""
    cases: list[Case] = [
        (f"one call: {en}", f"один вызов: {ru}", ([call], TOOLS)) for en, ru, call in SINGLE
    ]
    every = [call for _, _, call in SINGLE]
    cases += [
        (f"one call: {en}", f"один вызов: {ru}", ([call], TOOLS)) for en, ru, call in SINGLE_MORE
    ]
    cases += [
        ("all the calls above together", "все вызовы выше вместе", (every, TOOLS)),
        ("no calls", "вызовов нет", ([], TOOLS)),
        ("tools=[] (no tool fits)", "tools=[] (ни один инструмент не подходит)", (every[:3], [])),
    ]
    rng = random.Random(1212)
    for number in range(1, 13):
        mix = [copy.deepcopy(rng.choice(every)) for _ in range(rng.randint(2, 7))]
        cases.append((f"generated mix {number}", f"сгенерированный набор {number}", (mix, TOOLS)))
    return cases


def _single_label(call: dict[str, Any]) -> tuple[str, str] | None:
    for en, ru, known in SINGLE + SINGLE_MORE:
        if known == call:
            return en, ru
    return None


SCHEMA_MISTAKES = (
    Explain(
        KeyError,
        r"^'(name|parameters)'$",
        'a tool keeps its {0} inside tool["function"] too (the shape of tools=: '
        't["function"]["name"], t["function"]["parameters"]), not at its top level.',
        'у инструмента {0} тоже лежит внутри tool["function"] (в том виде, в каком их передают '
        'в tools=: t["function"]["name"], t["function"]["parameters"]), а не на верхнем уровне.',
        line=r"\btools?\b|\bt\[",
    ),
    Explain(
        KeyError,
        r"^'(name|arguments)'$",
        'a call keeps its {0} inside call["function"] (the shape the exercise shows), not at '
        "its top level.",
        'у вызова {0} лежит внутри call["function"] (в том виде, что показан в упражнении), '
        "а не на верхнем уровне.",
    ),
    Explain(
        json.JSONDecodeError,
        r".",
        "these arguments are no JSON text json.loads can read; parse_arguments returns the "
        "problem instead of raising (and reads empty text as {}).",
        "эти аргументы — не JSON-текст, который может прочитать json.loads; parse_arguments "
        "не выбрасывает исключение, а возвращает описание проблемы (а пустой текст читает как {}).",
    ),
)


@exercise
def check_schema_accuracy(schema_accuracy: Callable[[list[Any], list[Any]], Any]) -> None:
    """Exercise 2: the share of calls whose arguments fit their tool's schema."""
    a_function(schema_accuracy, "schema_accuracy")
    for en, ru, (tool_calls, tools) in schema_cases():
        case = (en, ru)
        got = call_student(
            schema_accuracy,
            copy.deepcopy(tool_calls),
            copy.deepcopy(tools),
            explain=SCHEMA_MISTAKES,
            case=case,
        )
        number = _number(got)
        if number is None:
            raise NotYet(
                f"on {en} your function returned a {_kind(got)}: return the share as a float "
                "between 0.0 and 1.0.",
                f"на входе «{ru}» ваша функция вернула {_kind(got)}: верните долю числом от 0.0 "
                "до 1.0.",
            )
        want = reference_schema_accuracy(tool_calls, tools)
        if math.isclose(number, want, abs_tol=1e-9):
            continue
        if math.isclose(number, want * 100, abs_tol=1e-6) and want:
            idea = PERCENT
        elif type(got) is int and got == math.floor(want):
            idea = (
                "// keeps only the whole part of the share: divide with /.",
                "// оставляет от доли только целую часть: делите через /.",
            )
        elif _rounded(number, want):
            idea = ROUNDED
        elif len(tool_calls) == 1:
            label = _single_label(tool_calls[0]) or case
            fits = want == 1.0
            verdict = ("fits", "подходит") if fits else ("does not fit", "не подходит")
            idea = (
                f"This call {verdict[0]} its tool's schema ({label[0]}).",
                f"Этот вызов {verdict[1]} под схему своего инструмента ({label[1]}).",
            )
        else:
            idea = (
                "Divide the calls that fit by the number of calls, not of tools or replies.",
                "Делите число подходящих вызовов на число вызовов, а не инструментов или ответов.",
            )
        want_text, got_text = _texts((want,), (number,))
        raise NotYet(
            f"on {en} the share is {want_text}, your function gave {got_text}. {idea[0]}",
            f"на входе «{ru}» доля равна {want_text}, ваша функция дала {got_text}. {idea[1]}",
        )
