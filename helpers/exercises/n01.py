"""Self-checks for lesson 01: a schema by hand, a tool called with **arguments, a typed function."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from helpers.exercises._verdict import NotYet, Verdict, student_error, verdict

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


def check_schema(schema: Any) -> Verdict:
    """Exercise 1: the JSON schema of convert_temperature, written by hand."""
    return verdict(lambda: _schema(schema))


def _greet(name: str, punctuation: str = "!") -> str:
    """A test tool whose result depends on every argument."""
    return f"Hello, {name}{punctuation}"


def _call_tool(call_tool: Callable[..., Any]) -> None:
    """Raise NotYet unless `call_tool` decodes the arguments and unpacks them with **."""
    tool_map = {"greet": _greet}
    cases = [
        ({"name": "Ada"}, "Hello, Ada!"),
        ({"name": "Lin", "punctuation": "?"}, "Hello, Lin?"),
        # the keys in another order than the parameters: passing values by position fails here
        ({"punctuation": ".", "name": "Kim"}, "Hello, Kim."),
    ]
    for arguments, expected in cases:
        tool_call = {
            "id": "greet:0",
            "type": "function",
            "function": {"name": "greet", "arguments": json.dumps(arguments)},
        }
        try:
            result = call_tool(tool_call, tool_map)
        except TypeError as exc:
            raise NotYet(
                f"`TypeError: {exc}`. Unpack the arguments: function(**arguments).",
                f"`TypeError: {exc}`. Распакуйте аргументы: function(**arguments).",
            ) from exc
        except Exception as exc:  # the student's code may fail in any way: report, don't crash
            raise student_error(exc) from exc
        if result != expected:
            raise NotYet(
                f"for arguments {json.dumps(arguments)} expected {expected!r}, got "
                f"{result!r}. Pass each JSON key as a keyword argument (**arguments).",
                f"для аргументов {json.dumps(arguments)} ожидалось {expected!r}, "
                f"получено {result!r}. Передайте ключи JSON именованными аргументами "
                "(**arguments).",
            )


def check_call_tool(call_tool: Callable[..., Any]) -> Verdict:
    """Exercise 2: run one OpenAI-shaped tool call through a tool_map with **arguments."""
    return verdict(lambda: _call_tool(call_tool))


def _typed_function(fn: Callable[..., Any]) -> None:
    """Raise NotYet unless `fn` converts correctly and its generated schema is complete."""
    from helpers.tools import schema_from_function

    try:
        works = abs(fn(100, "fahrenheit") - 212) < 1e-6 and abs(fn(212, "celsius") - 100) < 1e-6
    except Exception as exc:  # the student's code may fail in any way: report, don't crash
        raise student_error(exc) from exc
    if not works:
        raise NotYet(
            "keep the conversion working: 100 °C -> 212 °F and 212 °F -> 100 °C.",
            "перевод должен работать: 100 °C -> 212 °F и 212 °F -> 100 °C.",
        )
    untyped = [
        name
        for name, p in inspect.signature(fn).parameters.items()
        if p.annotation is inspect.Parameter.empty
    ]
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
        raise NotYet(
            f"schema_from_function cannot read it yet: `{exc}`",
            f"schema_from_function пока не может её прочитать: `{exc}`",
        ) from exc
    _schema(schema, ("the generated schema", "созданная схема"))


def check_typed_function(fn: Callable[..., Any]) -> Verdict:
    """Exercise 3: a typed function with a Google docstring whose schema matches exercise 1."""
    return verdict(lambda: _typed_function(fn))
