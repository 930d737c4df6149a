"""Self-checks for lesson 01: a schema by hand, a tool called with **arguments, a typed function."""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from helpers.exercises._verdict import (
    NAMES,
    VALUES,
    Explain,
    NotPlain,
    NotYet,
    a_function,
    call_student,
    exercise,
    plain,
    returned,
    seeded,
    shorten,
)
from helpers.formats._common import tool_call_dict

UNITS = ["celsius", "fahrenheit"]


def _schema(schema: Any, source: tuple[str, str] = ("the schema", "схема")) -> None:
    """Raise NotYet at the first way `schema` differs from the convert_temperature schema."""
    try:
        schema = plain(schema)
    except NotPlain as refused:
        raise NotYet(
            f"{source[0]} is {refused.en}; write it with dicts, lists and strings only.",
            f"{source[1]} — это {refused.ru}; запишите её только словарями, списками и строками.",
        ) from None
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
    if not isinstance(function.get("description"), str) or not function["description"].strip():
        raise NotYet(
            "give the tool a description (a string): the model decides from it when to call it.",
            "дайте инструменту описание (строкой): по нему модель решает, когда его вызывать.",
        )
    parameters = function.get("parameters")
    if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        raise NotYet(
            'function.parameters must be a JSON schema with "type": "object".',
            'function.parameters должен быть JSON-схемой с "type": "object".',
        )
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict):
        raise NotYet(
            "parameters.properties must be a dict from each argument's name to its schema, "
            f"not {type(properties).__name__}.",
            "parameters.properties должен быть словарём «имя аргумента → его схема», а не "
            f"{type(properties).__name__}.",
        )
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
        if not isinstance(prop.get("description"), str) or not prop["description"].strip():
            raise NotYet(
                f"give {name!r} a description (a string: the model reads it as text).",
                f"дайте {name!r} описание (строкой: модель читает его как текст).",
            )
    enum = properties["to_unit"].get("enum")
    if not isinstance(enum, list) or sorted(map(str, enum)) != UNITS:
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
    required = parameters.get("required")
    if not isinstance(required, list) or sorted(map(str, required)) != ["to_unit", "value"]:
        raise NotYet(
            'both arguments are required: "required": ["value", "to_unit"].',
            'оба аргумента обязательны: "required": ["value", "to_unit"].',
        )


@exercise
def check_schema(schema: Any) -> None:
    """Exercise 1: the JSON schema of convert_temperature, written by hand."""
    _schema(schema)


def _echo(**arguments: Any) -> dict[str, Any]:
    """A test tool for the generated calls: what it was given, by keyword."""
    return {"got": arguments}


def _call_battery() -> list[tuple[str, dict[str, Any], Any]]:
    """Calls of tools named with digits, dashes and dots, with one to three keyword arguments:
    Cyrillic, emoji, nested values (seeded)."""
    rng = seeded("n01 call_tool")
    out = []
    for _ in range(20):
        keys = rng.sample(["city", "query", "days", "units", "filter"], rng.randint(1, 3))
        # JSON's own literals too (true, false, null): Python's eval and literal_eval refuse them
        arguments = {k: rng.choice([*VALUES, 3, {"a": [1, "б"]}, True, None, 2.5]) for k in keys}
        name = rng.choice(NAMES)
        out.append((name, arguments, {"got": arguments}))
    return out


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
        ({"name": "O'Brien"}, "Hello, O'Brien!"),  # an apostrophe: no quote swapping
    ]
    a_function(call_tool, "call_tool")
    calls = tuple([("greet", a, e) for a, e in cases] + _call_battery())
    for k, (name, arguments, expected) in enumerate(calls):
        # The first id names the tool, the others do not (OpenAI's `call_...`, vLLM's): the
        # tool to run is function.name, never a piece of the id.
        call_id = f"{name}:0" if k == 0 else ("call_", "chatcmpl-tool-")[k % 2] + f"{k:02d}x9"
        tool_call = tool_call_dict(call_id, name, json.dumps(arguments, ensure_ascii=False))
        shown = f"call_tool({name}, {shorten(json.dumps(arguments, ensure_ascii=False), 100)})"
        tool_map = {"greet": _greet, **{n: _echo for n in NAMES}}
        given = copy.deepcopy(tool_call)
        explain = (
            CALL_TOOL_MISTAKES if name == "greet" else (*_other_tool(name), *CALL_TOOL_MISTAKES)
        )
        result = call_student(call_tool, tool_call, tool_map, explain=explain, case=(shown, shown))
        if tool_call != given:
            raise NotYet(
                f"{shown} changed the tool call it was given (now {shorten(tool_call, 100)}): "
                "the same dict stays in the assistant message of the history, which goes back "
                "to the server, so read it without changing it.",
                f"{shown} изменила полученный вызов (теперь {shorten(tool_call, 100)}): этот же "
                "словарь остаётся в сообщении ассистента в истории, которая уходит обратно на "
                "сервер, поэтому читайте его, не изменяя.",
            )
        result = returned(
            result, shown, ("the function's own result", "собственный результат функции")
        )
        if isinstance(result, Mapping) and result.get("role") == "tool":
            raise NotYet(
                "call_tool returns a whole tool message; here it should return only what the "
                f'function returned ({expected!r}). Building the role "tool" message is the '
                "next lesson's step.",
                "call_tool возвращает целое сообщение с результатом; здесь нужно вернуть только "
                f'то, что вернула функция ({expected!r}). Сообщение с role "tool" собирают '
                "в следующем уроке.",
            )
        if isinstance(result, str) and result == str(expected) and result != expected:
            raise NotYet(
                f"{shown} returned {shorten(result)}, the str() of the function's result: "
                "return the result itself (the next step turns it into JSON).",
                f"{shown} вернула {shorten(result)}, то есть str() от результата функции: "
                "верните сам результат (в JSON его превращает следующий шаг).",
            )
        if isinstance(result, str) and repr(arguments) in result:
            raise NotYet(
                f"for arguments {json.dumps(arguments)} the tool returned {result!r}: the whole "
                "dict went into its first parameter, while each key should become one "
                "keyword argument.",
                f"для аргументов {json.dumps(arguments)} инструмент вернул {result!r}: весь "
                "словарь попал в его первый параметр, а каждый ключ должен стать отдельным "
                "именованным аргументом.",
            )
        if result != expected:
            raise NotYet(
                f"{shown}: expected {shorten(expected)}, got {shorten(result)}. Each JSON key "
                "is the name of one of the function's parameters; the tool is the one the call "
                "names.",
                f"{shown}: ожидалось {shorten(expected)}, получено {shorten(result)}. Каждый "
                "ключ JSON — имя одного из параметров функции; инструмент — тот, что назван в "
                "вызове.",
            )


def _other_tool(name: str) -> tuple[Explain, ...]:
    """What a KeyError means on the call of a tool other than greet: greet's own argument
    names looked up in another tool's arguments, or the tool looked up by a piece of its name."""
    pieces = {p for p in re.split(r"[.\-_]", name) if p and p != name}
    found = [
        Explain(
            KeyError,
            r"^'(name|punctuation)'$",
            f"this call of {name!r} has no argument {{0!r}}: the decoded arguments are the "
            "tool's own, whatever the tool, so pass them all as keyword arguments "
            "(function(**arguments)) instead of greet's parameters one by one.",
            f"в этом вызове {name!r} нет аргумента {{0!r}}: раскодированные аргументы — свои у "
            "каждого инструмента, поэтому передайте их все именованными аргументами "
            "(function(**arguments)), а не параметры greet по одному.",
        )
    ]
    if pieces:
        found.append(
            Explain(
                KeyError,
                r"^'(" + "|".join(re.escape(p) for p in sorted(pieces)) + r")'$",
                f"the tool is in tool_map under its whole name {name!r}, not {{0!r}}: look up "
                "function.name exactly as the call gives it.",
                f"инструмент лежит в tool_map под полным именем {name!r}, а не {{0!r}}: ищите "
                "function.name ровно в том виде, в каком его дал вызов.",
            )
        )
    return tuple(found)


CALL_TOOL_MISTAKES = (
    Explain(
        NameError,
        r"name '(null|true|false)' is not defined",
        "JSON's {0} is no Python name: the arguments are JSON text, so decode them with json.loads "
        "(eval would also run whatever code the model wrote).",
        "{0} есть в JSON, но не в Python: аргументы — JSON-текст, раскодируйте их через "
        "json.loads (eval к тому же выполнил бы любой код, который написала модель).",
    ),
    Explain(
        ValueError,
        r"malformed node or string",
        "the arguments are JSON text (with true, false and null), not a Python literal: decode "
        "them with json.loads.",
        "аргументы — JSON-текст (с true, false и null), а не литерал Python: раскодируйте их "
        "через json.loads.",
    ),
    Explain(
        KeyError,
        r"^'((?:call_|chatcmpl-tool-|greet:)[^']*)'$",
        "{0!r} is the call's id, not a tool's name: the tool to run is function.name (an id "
        "says nothing about the tool: OpenAI's look like call_..., vLLM's like chatcmpl-tool-...).",
        "{0!r} — это id вызова, а не имя инструмента: запускать нужно function.name (id ничего "
        "не говорит об инструменте: у OpenAI он вида call_..., у vLLM — chatcmpl-tool-...).",
    ),
    Explain(
        KeyError,
        r"^'(name|arguments)'$",
        "a tool call has no key {0!r} of its own: the name and the arguments sit in its "
        '"function" object.',
        'у вызова нет собственного ключа {0!r}: имя и аргументы лежат в его объекте "function".',
    ),
    Explain(
        KeyError,
        r"^'(greet|" + "|".join(re.escape(n) for n in NAMES) + r")'$",
        "the tool {0!r} is in the tool_map the check hands to call_tool: look the tool up in "
        "that parameter, not in a dict of the notebook.",
        "инструмент {0!r} есть в tool_map, который проверка передаёт в call_tool: ищите "
        "инструмент в этом параметре, а не в словаре из блокнота.",
    ),
    Explain(
        TypeError,
        r"call_tool\(\) (?:takes|missing)",
        "the function call_tool takes two parameters, the tool call and the tool_map, and the "
        "check passes both.",
        "сама функция call_tool принимает два параметра, вызов и tool_map, и проверка передаёт "
        "оба.",
    ),
    Explain(
        TypeError,
        r"must be a mapping, not str",
        'function["arguments"] is JSON text (a str), and ** needs a dict: decode it first with '
        "json.loads.",
        'function["arguments"] — это JSON-текст (str), а ** нужен словарь: сначала '
        "раскодируйте его через json.loads.",
    ),
    Explain(
        TypeError,
        r"string indices must be integers",
        'function["arguments"] is JSON text (a str), not a dict: decode it with json.loads '
        "before reading keys.",
        'function["arguments"] — это JSON-текст (str), а не словарь: раскодируйте его через '
        "json.loads, прежде чем читать ключи.",
    ),
    Explain(
        TypeError,
        r"unexpected keyword argument",
        "the call names the tool to run (function.name): this function has no such parameter, "
        "so it is not the tool the call asked for.",
        "вызов сам называет инструмент (function.name): у этой функции нет такого параметра, "
        "значит, это не тот инструмент, который просил вызов.",
    ),
    Explain(
        TypeError,
        r".",
        "each key of the decoded arguments is the name of one parameter of the function: it "
        "must arrive as that keyword argument.",
        "каждый ключ раскодированных аргументов — имя одного параметра функции: он должен "
        "попасть в функцию как этот именованный аргумент.",
    ),
)


@exercise
def check_typed_function(fn: Callable[..., Any]) -> None:
    """Exercise 3: a typed function with a Google docstring whose schema matches exercise 1."""
    from helpers.tools import schema_from_function

    rng = seeded("n01 convert_temperature")
    generated = [(round(rng.uniform(-300, 1000), 2), rng.choice(UNITS)) for _ in range(16)]
    battery = [
        (v, u, v * 9 / 5 + 32 if u == "fahrenheit" else (v - 32) * 5 / 9)
        for v, u in [
            (-40, "fahrenheit"),
            (-40, "celsius"),
            (0, "fahrenheit"),
            (37.5, "fahrenheit"),
            *generated,
        ]
    ]
    for value, unit, expected in ((100, "fahrenheit", 212), (212, "celsius", 100), *battery):
        got = call_student(fn, value, unit, case=(f"({value}, {unit!r})", f"({value}, {unit!r})"))
        got = returned(got, f"convert_temperature({value}, {unit!r})", ("a number", "число"))
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise NotYet(
                f"convert_temperature({value}, {unit!r}) returned {got!r}; return the "
                f"converted number ({expected}).",
                f"convert_temperature({value}, {unit!r}) вернула {got!r}; верните "
                f"число после перевода ({expected}).",
            )
        if abs(got - expected) > 1e-6 * max(1, abs(expected)):
            raise NotYet(
                f"convert_temperature({value}, {unit!r}) should be about {expected:.4g}, got "
                f"{got!r}: to_unit names the unit to convert to, and the formula holds for "
                "every temperature, below zero too.",
                f"convert_temperature({value}, {unit!r}) должна дать около {expected:.4g}, "
                f"получено {got!r}: to_unit — единица, в которую переводят, а формула верна для "
                "любой температуры, и ниже нуля тоже.",
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
    try:
        _schema(schema, ("the generated schema", "созданная схема"))
    except NotYet as missed:
        if '"enum"' not in missed.en:
            raise
        raise NotYet(
            f"{missed.en} In the docstring the choices go at the end of to_unit's own line "
            'under Args:, as (choices: ["celsius", "fahrenheit"]).',
            f"{missed.ru} В docstring варианты пишут в конце строки самого to_unit в разделе "
            'Args:, так: (choices: ["celsius", "fahrenheit"]).',
        ) from None


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
