"""Self-checks for lesson 07 (Qwen today): XML calls by hand, typed values, the think block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    SHOULD_BE,
    as_tuples,
    call_student,
    exercise,
    mismatch,
    name_and_arguments,
    variant,
)
from helpers.formats import convert_parameter, parse_hermes, parse_qwen_xml
from helpers.formats import render_qwen_xml_tool_calls as _render


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI-shaped call, for rendering sample texts."""
    return {"id": "x", "type": "function", "function": {"name": name, "arguments": arguments}}


def xml_cases() -> dict[str, str]:
    """Qwen3.5 raw outputs for exercise 1 (after the reasoning)."""
    paris = _call("get_forecast", {"city": "Paris", "days": 3})
    oslo = _call("get_forecast", {"city": "Oslo", "hourly": True})
    note = _call("save_note", {"text": "line one\nline two"})
    # spaces that belong to the value (indented code): .strip() would lose them
    code = _call("save_note", {"text": "    return 1  "})
    return {
        "one call": _render([paris]),
        "text and two calls": _render([paris, oslo], "Checking both."),
        "a value over two lines": _render([note]),
        "spaces at the edges of a value": _render([code]),
        "no calls": "Paris will be sunny.",
    }


def _strip_values(calls: Any) -> Any:
    """The calls with every parameter value stripped (to recognise an over-eager .strip())."""
    try:
        return [(name, {k: str(v).strip() for k, v in params.items()}) for name, params in calls]
    except (TypeError, ValueError, AttributeError):
        return None


@exercise
def check_xml_calls(xml_calls: Callable[[str], Any]) -> None:
    """Exercise 1: (name, {parameter: text}) pairs, as `parse_qwen_xml` reads them without tools."""
    for case, text in xml_cases().items():
        expected = name_and_arguments(parse_qwen_xml(text).tool_calls)
        got = as_tuples(
            call_student(xml_calls, text, case=(f"'{case}'", CASE_RU[case])), items=True
        )
        if got == expected:
            continue
        why = (".", ".")
        if _strip_values(got) == _strip_values(expected):
            why = (
                ": the value lost its own spaces or newlines. Cut exactly one newline after "
                "<parameter=KEY> and one before </parameter>; .strip() removes more than that.",
                ": значение потеряло собственные пробелы или переводы строк. Отрежьте ровно "
                "один перевод строки после <parameter=KEY> и один перед </parameter>; "
                ".strip() убирает больше.",
            )
        raise mismatch(variant(case), expected, got, why)


TYPED_CASES: list[tuple[str, str]] = [
    ("3", "integer"),
    ("2.0", "number"),
    ("2.5", "number"),
    ("true", "boolean"),
    ("True", "boolean"),
    ("yes", "boolean"),
    ("null", "integer"),
    ("NULL", "string"),
    ("null", "string"),
    ("Null", "number"),
    ("3.7", "integer"),
    ("-4", "integer"),
    ("Paris", "string"),
    ("three", "integer"),
]


def _typed_reason(value: str, kind: str, expected: Any, got: Any) -> tuple[str, str]:
    """The rule a case tests, in both languages, worded for what the answer got wrong."""
    if value.lower() == "null" and kind == "string":
        return (
            'A "string" parameter keeps "null" as its text (current vLLM; only a schema that also '
            "allows null makes it None): check the type before the null rule.",
            'Параметр типа "string" оставляет "null" текстом (так делает нынешний vLLM; None он '
            "получает, только если схема разрешает и null): проверьте тип раньше правила про null.",
        )
    if value.lower() == "null":
        return (
            '"null" in any case (NULL, Null) is None for every type but "string": compare '
            "value.lower().",
            '"null" в любом регистре (NULL, Null) — это None для любого типа, кроме "string": '
            "сравнивайте value.lower().",
        )
    if kind == "integer" and isinstance(expected, str):
        return (
            f"int() refuses {value!r}, so it stays the string; int(float(value)) would turn "
            "3.7 into 3.",
            f"int() не принимает {value!r}, поэтому значение остаётся строкой; "
            "int(float(value)) превратил бы 3.7 в 3.",
        )
    if kind == "integer":
        return (
            'A value of type "integer" is converted with int(value).',
            'Значение типа "integer" преобразуйте через int(value).',
        )
    if kind == "number":
        if isinstance(expected, str):
            return (
                f"float() refuses {value!r}, so it stays the string.",
                f"float() не принимает {value!r}, поэтому значение остаётся строкой.",
            )
        return (
            'A value of type "number" is converted with float(value); a whole one (2.0) '
            "becomes an int.",
            'Значение типа "number" преобразуйте через float(value); целое (2.0) становится int.',
        )
    if kind == "boolean":
        return (
            'A boolean is True only for "true" in any case; anything else is False.',
            'Логическое значение равно True только для "true" в любом регистре; всё остальное '
            "— False.",
        )
    return ("A string stays as it is.", "Строка остаётся как есть.")


@exercise
def check_typed(typed: Callable[[str, str], Any]) -> None:
    """Exercise 2: a value typed as vLLM's qwen3_coder parser types it, for simple types."""
    for value, kind in TYPED_CASES:
        expected, _ = convert_parameter(value, "x", {"x": {"type": kind}})
        got = call_student(typed, value, kind, case=(repr(value), value))
        if got != expected or type(got) is not type(expected):
            why_en, why_ru = _typed_reason(value, kind, expected, got)
            call = f"typed({value!r}, {kind!r})"
            raise mismatch((call, call), expected, got, (f". {why_en}", f". {why_ru}"), SHOULD_BE)


THINK_CASES: dict[str, str] = {
    "a whole block": "<think>\nThe user wants Paris.\n</think>\n\nParis is sunny.",
    "the prompt opened it": "The user wants Paris.\n</think>\n\nParis is sunny.",
    "no thinking": "Paris is sunny.",
    "empty block": "<think>\n\n</think>\n\nParis is sunny.",
    "no thinking, newlines around the answer": "\n\nParis is sunny.\n",
}


@exercise
def check_split_think(split_think: Callable[[str], Any]) -> None:
    """Exercise 3: (reasoning, answer), both stripped, as `parse_hermes` splits them."""
    for case, text in THINK_CASES.items():
        result = parse_hermes(text)
        expected = (result.reasoning, result.content)
        got = as_tuples(call_student(split_think, text, case=(f"'{case}'", CASE_RU[case])))
        if got == expected:
            continue
        why = (".", ".")
        if isinstance(got, tuple) and tuple(str(x).strip() for x in got) == expected:
            why = (
                ": strip both parts, also when the text has no </think>.",
                ": уберите пробелы и переводы строк по краям обеих частей, даже когда "
                "</think> в тексте нет.",
            )
        raise mismatch(variant(case), expected, got, why)
