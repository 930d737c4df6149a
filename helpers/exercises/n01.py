"""Self-checks for lesson 01: a schema by hand, a tool called with **arguments, a typed function."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from helpers.exercises._verdict import (
    NotYet,
    call_student,
    exercise,
    student_error,
)
from helpers.formats._common import tool_call_dict

UNITS = ["celsius", "fahrenheit"]


def _schema(schema: Any, source: tuple[str, str] = ("the schema", "схема")) -> None:
    """Raise NotYet at the first way `schema` differs from the convert_temperature schema."""
    if not isinstance(schema, Mapping) or schema.get("type") != "function":
        raise NotYet(
            f'{source[0]} must be a dict with "type": "function".',
            f'{source[1]} должна быть словарём с "type": "function".',
        )
    function = schema.get("function")
    if not isinstance(function, Mapping) or function.get("name") != "convert_temperature":
        raise NotYet(
            'function.name must be "convert_temperature".',
            'function.name должен быть "convert_temperature".',
        )
    if not str(function.get("description") or "").strip():
        raise NotYet(
            "give the tool a description: the model decides from it when to call it.",
            "дайте инструменту описание: по нему модель решает, когда его вызывать.",
        )
    parameters = function.get("parameters")
    if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        raise NotYet(
            'function.parameters must be a JSON schema with "type": "object".',
            'function.parameters должен быть JSON-схемой с "type": "object".',
        )
    properties = parameters.get("properties") or {}
    for name, json_type in (("value", "number"), ("to_unit", "string")):
        prop = properties.get(name)
        if not isinstance(prop, Mapping):
            raise NotYet(
                f"describe the argument {name!r} in parameters.properties.",
                f"опишите аргумент {name!r} в parameters.properties.",
            )
        if prop.get("type") != json_type:
            got = prop.get("type")
            raise NotYet(
                f'{name!r} should have "type": "{json_type}", not {got!r}.',
                f'у {name!r} должен быть "type": "{json_type}", а не {got!r}.',
            )
        if not str(prop.get("description") or "").strip():
            raise NotYet(f"give {name!r} a description.", f"дайте {name!r} описание.")
    if sorted(properties["to_unit"].get("enum") or []) != UNITS:
        raise NotYet(
            'to_unit needs "enum": ["celsius", "fahrenheit"].',
            'у to_unit должен быть "enum": ["celsius", "fahrenheit"].',
        )
    extra = sorted(set(properties) - {"value", "to_unit"})
    if extra:
        raise NotYet(
            f"only value and to_unit are arguments; remove {extra}.",
            f"аргументов только два, value и to_unit; уберите {extra}.",
        )
    if sorted(parameters.get("required") or []) != ["to_unit", "value"]:
        raise NotYet(
            'both arguments are required: "required": ["value", "to_unit"].',
            'оба аргумента обязательны: "required": ["value", "to_unit"].',
        )


@exercise
def check_schema(schema: Any) -> None:
    """Exercise 1: the JSON schema of convert_temperature, written by hand."""
    _schema(schema)


def _greet(name: str, punctuation: str = "!") -> str:
    """A test tool whose result depends on every argument."""
    return f"Hello, {name}{punctuation}"


@exercise
def check_call_tool(call_tool: Callable[..., Any]) -> None:
    """Exercise 2: run one OpenAI-shaped tool call through a tool_map with **arguments."""
    tool_map = {"greet": _greet}
    cases = [
        ({"name": "Ada"}, "Hello, Ada!"),
        ({"name": "Lin", "punctuation": "?"}, "Hello, Lin?"),
        # the keys in another order than the parameters: passing values by position fails here
        ({"punctuation": ".", "name": "Kim"}, "Hello, Kim."),
    ]
    for arguments, expected in cases:
        tool_call = tool_call_dict("greet:0", "greet", json.dumps(arguments))
        try:
            result = call_tool(tool_call, tool_map)
        except TypeError as exc:
            raise _call_tool_type_error(exc) from exc
        except Exception as exc:  # the student's code may fail in any way: report, don't crash
            raise student_error(exc) from exc
        if isinstance(result, Mapping) and result.get("role") == "tool":
            raise NotYet(
                "call_tool returns a whole tool message; here it should return only what the "
                f'function returned ({expected!r}). Building the role "tool" message is the '
                "next lesson's step.",
                "call_tool возвращает целое сообщение с результатом; здесь нужно вернуть только "
                f'то, что вернула функция ({expected!r}). Сообщение с role "tool" собирают '
                "в следующем уроке.",
            )
        if isinstance(result, str) and repr(arguments) in result:
            raise NotYet(
                f"for arguments {json.dumps(arguments)} the tool returned {result!r}: the whole "
                "dict went into its first parameter. Unpack it so that each key becomes a "
                "keyword argument: function(**arguments).",
                f"для аргументов {json.dumps(arguments)} инструмент вернул {result!r}: весь "
                "словарь попал в его первый параметр. Распакуйте его, чтобы каждый ключ стал "
                "именованным аргументом: function(**arguments).",
            )
        if result != expected:
            raise NotYet(
                f"for arguments {json.dumps(arguments)} expected {expected!r}, got "
                f"{result!r}. Pass each JSON key as a keyword argument (**arguments).",
                f"для аргументов {json.dumps(arguments)} ожидалось {expected!r}, "
                f"получено {result!r}. Передайте ключи JSON именованными аргументами "
                "(**arguments).",
            )


def _call_tool_type_error(exc: TypeError) -> NotYet:
    """The hint for a TypeError from call_tool: arguments not decoded, or not unpacked."""
    name = f"`TypeError: {exc}`"
    if "must be a mapping, not str" in str(exc):
        return NotYet(
            f'{name}. function["arguments"] is JSON text (a str), and ** needs a dict: '
            "decode it first with json.loads, then call function(**arguments).",
            f'{name}. function["arguments"] — это JSON-текст (str), а ** нужен словарь: '
            "сначала раскодируйте его через json.loads, затем вызовите function(**arguments).",
        )
    if "string indices must be integers" in str(exc):
        return NotYet(
            f'{name}. function["arguments"] is JSON text (a str), not a dict: decode it '
            "with json.loads before reading keys.",
            f'{name}. function["arguments"] — это JSON-текст (str), а не словарь: '
            "раскодируйте его через json.loads, прежде чем читать ключи.",
        )
    return NotYet(
        f"{name}. Unpack the decoded arguments as keywords: function(**arguments).",
        f"{name}. Передайте раскодированные аргументы как именованные: function(**arguments).",
    )


@exercise
def check_typed_function(fn: Callable[..., Any]) -> None:
    """Exercise 3: a typed function with a Google docstring whose schema matches exercise 1."""
    from helpers.tools import schema_from_function

    for value, unit, expected in ((100, "fahrenheit", 212), (212, "celsius", 100)):
        got = call_student(fn, value, unit, case=(f"({value}, {unit!r})", f"({value}, {unit!r})"))
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise NotYet(
                f"convert_temperature({value}, {unit!r}) returned {got!r}; return the "
                f"converted number ({expected}).",
                f"convert_temperature({value}, {unit!r}) вернула {got!r}; верните "
                f"число после перевода ({expected}).",
            )
        if abs(got - expected) > 1e-6:
            raise NotYet(
                "keep the conversion working: 100 °C -> 212 °F and 212 °F -> 100 °C; "
                f"convert_temperature({value}, {unit!r}) gave {got!r}.",
                "перевод должен работать: 100 °C -> 212 °F и 212 °F -> 100 °C; "
                f"convert_temperature({value}, {unit!r}) дала {got!r}.",
            )
    parameters = inspect.signature(fn).parameters
    untyped = [name for name, p in parameters.items() if p.annotation is inspect.Parameter.empty]
    if untyped:
        raise NotYet(
            f"add a type hint to every argument; missing for: {', '.join(untyped)}.",
            f"добавьте аннотацию типа каждому аргументу; её нет у: {', '.join(untyped)}.",
        )
    if "Args:" not in (inspect.getdoc(fn) or ""):
        raise NotYet(
            "describe the arguments in an Args: section of the docstring (Google style).",
            "опишите аргументы в docstring, в разделе Args: (стиль Google).",
        )
    try:
        schema = schema_from_function(fn)
    except Exception as exc:  # transformers raises its own parsing exceptions
        raise NotYet(*_schema_failure(exc)) from exc
    _schema(schema, ("the generated schema", "созданная схема"))


def _schema_failure(exc: Exception) -> tuple[str, str]:
    """Why schema_from_function could not read the function, in both languages. The library's
    English message stays quoted; the explanation comes in the notebook's language."""
    quoted = f"`{type(exc).__name__}: {exc}`"
    text = str(exc)
    argument = re.search(r"no description for the argument '(\w+)'", text)
    if argument:
        name = argument.group(1)
        return (
            f"schema_from_function found no description for {name!r} ({quoted}). Under Args: "
            f"write one indented line per argument, `{name}: what it is`; the docstring must "
            "start with a summary line before Args:.",
            f"schema_from_function не нашла описания аргумента {name!r} ({quoted}). В разделе "
            f"Args: нужна строка с отступом для каждого аргумента: `{name}: что это`; перед "
            "Args: в docstring должна стоять строка с общим описанием.",
        )
    if isinstance(exc, json.JSONDecodeError) or "choices" in text:
        return (
            f"the (choices: [...]) list must be JSON, with the values in double quotes: "
            f'(choices: ["celsius", "fahrenheit"]) ({quoted}).',
            f"список (choices: [...]) должен быть JSON, значения — в двойных кавычках: "
            f'(choices: ["celsius", "fahrenheit"]) ({quoted}).',
        )
    if isinstance(exc, NameError) or "type hint" in text.lower():
        return (
            f"schema_from_function cannot turn a type hint into a JSON type ({quoted}): use "
            "float, int, str or bool.",
            f"schema_from_function не может превратить аннотацию типа в тип JSON ({quoted}): "
            "используйте float, int, str или bool.",
        )
    return (
        f"schema_from_function cannot read the function yet ({quoted}): check the type "
        "hints and the Args: section of the docstring.",
        f"schema_from_function пока не может прочитать функцию ({quoted}): проверьте "
        "аннотации типов и раздел Args: в docstring.",
    )
