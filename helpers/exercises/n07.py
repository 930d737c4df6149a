"""Self-checks for lesson 07 (Qwen today): XML calls by hand, typed values, the think block."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import NotYet, Verdict, call_student, verdict
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
    return {
        "one call": _render([paris]),
        "text and two calls": _render([paris, oslo], "Checking both."),
        "a value over two lines": _render([note]),
        "no calls": "Paris will be sunny.",
    }


def check_xml_calls(xml_calls: Callable[[str], Any]) -> Verdict:
    """Exercise 1: (name, {parameter: text}) pairs, as `parse_qwen_xml` reads them without tools."""

    def check() -> None:
        for case, text in xml_cases().items():
            expected = [
                (c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in parse_qwen_xml(text).tool_calls
            ]
            got = call_student(xml_calls, text)
            if isinstance(got, list):
                got = [tuple(item) if isinstance(item, list) else item for item in got]
            if got != expected:
                raise NotYet(
                    f"for '{case}' expected {expected}, got {got!r}.",
                    f"для варианта '{case}' ожидалось {expected}, получено {got!r}.",
                )

    return verdict(check)


TYPED_CASES: list[tuple[str, str]] = [
    ("3", "integer"),
    ("2.0", "number"),
    ("2.5", "number"),
    ("true", "boolean"),
    ("True", "boolean"),
    ("yes", "boolean"),
    ("null", "integer"),
    ("Paris", "string"),
    ("three", "integer"),
]


def check_typed(typed: Callable[[str, str], Any]) -> Verdict:
    """Exercise 2: a value typed as vLLM's qwen3_coder parser types it, for simple types."""

    def check() -> None:
        for value, kind in TYPED_CASES:
            expected, _ = convert_parameter(value, "x", {"x": {"type": kind}})
            got = call_student(typed, value, kind)
            if got != expected or type(got) is not type(expected):
                raise NotYet(
                    f"typed({value!r}, {kind!r}) should be {expected!r}, got {got!r}.",
                    f"typed({value!r}, {kind!r}) должно быть {expected!r}, получено {got!r}.",
                )

    return verdict(check)


THINK_CASES: dict[str, tuple[str, str]] = {
    "a whole block": (
        "<think>\nThe user wants Paris.\n</think>\n\nParis is sunny.",
        "блок целиком",
    ),
    "the prompt opened it": (
        "The user wants Paris.\n</think>\n\nParis is sunny.",
        "блок открыл промпт",
    ),
    "no thinking": ("Paris is sunny.", "без рассуждения"),
    "empty block": ("<think>\n\n</think>\n\nParis is sunny.", "пустой блок"),
}


def check_split_think(split_think: Callable[[str], Any]) -> Verdict:
    """Exercise 3: (reasoning, answer), both stripped, as `parse_hermes` splits them."""

    def check() -> None:
        for case, (text, case_ru) in THINK_CASES.items():
            result = parse_hermes(text)
            expected = (result.reasoning, result.content)
            got = call_student(split_think, text)
            if isinstance(got, list):
                got = tuple(got)
            if got != expected:
                raise NotYet(
                    f"for '{case}' expected {expected!r}, got {got!r}.",
                    f"для варианта «{case_ru}» ожидалось {expected!r}, получено {got!r}.",
                )

    return verdict(check)
