"""Self-checks for lesson 09 (Kimi K3's XTML): reading a typed value, writing a call element."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    NAMES,
    VALUES,
    Case,
    Explain,
    NotYet,
    call_student,
    case_of,
    exercise,
    generated_arguments,
    mismatch,
    on_battery,
    plain,
    returned,
    seeded,
)
from helpers.formats import parse_kimi_xtml, render_kimi_xtml
from helpers.formats._common import tool_call_dict
from helpers.formats.kimi_xtml import CLOSE, OPEN, SEP

# (text of the element, its type attribute, the value): what `parse_kimi_xtml` reads.
TYPED_CASES: list[tuple[str, str]] = [
    ("Beijing", "string"),
    ("3", "number"),
    ("2.5", "number"),
    ("true", "boolean"),
    ("null", "null"),
    ('{"max":5}', "object"),
    ('["a","b"]', "array"),
    ("42", "string"),
    ('"quoted"', "string"),
    ("false", "string"),
]

TYPED_MISTAKES = (
    Explain(
        json.JSONDecodeError,
        r".",
        'a value with type="string" is raw text, not JSON: return it unchanged.',
        'значение с type="string" — сырой текст, а не JSON: верните его без изменений.',
    ),
)


def expected_value(text: str, kind: str) -> Any:
    """The value `parse_kimi_xtml` reads from one argument element (the oracle)."""
    raw = (
        f'{OPEN}call tool="f" index="1"{SEP}{OPEN}argument key="x" type="{kind}"{SEP}{text}'
        f"{CLOSE}argument{SEP}{CLOSE}call{SEP}"
    )
    calls = parse_kimi_xtml(raw).tool_calls
    return json.loads(calls[0]["function"]["arguments"])["x"]


TYPED_BATTERY: list[tuple[str, str]] = [
    ("  Beijing  ", "string"),
    ("\nline one\nline two\n", "string"),
    ("Москва ☀️", "string"),
    (" 3 ", "string"),
    ("a < b > c", "string"),
    ("null", "string"),
    ("", "string"),
    ("-0.5", "number"),
    ("1e2", "number"),
    ("0", "number"),
    ("false", "boolean"),
    ('{"город":"Москва","дни":3}', "object"),
    ('{"a":{"b":[1,{"c":null}]}}', "object"),
    ('["Санкт-Петербург","☔"]', "array"),
    ("[]", "array"),
    ("[1,2.5,true,null]", "array"),
    ("{}", "object"),
    ('"раз"', "string"),
    ("7", "number"),
    ("true", "string"),
    ("\t tab\t", "string"),
    ("C:\\new\\tab", "string"),  # backslashes stay: nothing in a raw string is an escape
]


def render_battery() -> list[Case]:
    """(name, index, arguments) (seeded): names with digits, dashes and dots, Cyrillic and emoji
    inside strings, objects and arrays, booleans, null, floats, '<' and '>'."""
    rng = seeded("n09 render_call")
    out = []
    for _ in range(22):
        arguments = generated_arguments(rng)
        if rng.random() < 0.5:
            arguments[rng.choice(["flag", "ok"])] = rng.choice([True, False, None, 0.25, -3])
        if rng.random() < 0.4:
            arguments["place"] = {"город": rng.choice(VALUES), "tags": ["☀️", "снег"]}
        out.append(case_of(rng.choice(NAMES), rng.randint(1, 4), arguments))
    # numbers of more than six digits: JSON keeps every one ("%g" and the like round them)
    out.append(case_of("get_price", 2, {"amount": 1234567, "rate": 3.14159265, "ok": False}))
    return out


def tags_battery() -> list[Case]:
    """Conversations (seeded): a system message first or not, one to three rounds, ids reused
    from round to round for other tools, results in any order, final answers between rounds."""
    rng = seeded("n09 result_tags")
    out = []
    for n in range(22):
        messages: list[dict[str, Any]] = []
        if n % 2:
            messages.append({"role": "system", "content": "Be brief."})
        reuse = n % 3 != 2
        for r in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": rng.choice(VALUES) or "?"})
            calls = [
                _call_of(f"call:{k}" if reuse else f"c{r}{k}", rng.choice(NAMES))
                for k in range(rng.randint(1, 3))
            ]
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            results = [_result(c["id"], rng.choice(VALUES)) for c in calls]
            rng.shuffle(results)
            messages += results
            if rng.random() < 0.5:
                messages.append({"role": "assistant", "content": "Готово."})
        out.append(case_of(messages, shown=_shown_calls(messages)))
    return out


def _shown_calls(messages: list[dict[str, Any]]) -> str:
    """A conversation as a hint names it: each assistant message's calls, `id=tool`."""
    rounds = [
        ", ".join(f"{c['id']}={c['function']['name']}" for c in m["tool_calls"])
        for m in messages
        if m.get("tool_calls")
    ]
    return "<" + " | ".join(rounds) + ">"


def none_calls_battery() -> list[Case]:
    """Conversations whose answers without calls carry `"tool_calls": None`, as the SDK's
    `model_dump()` writes an assistant message."""
    ask = {"role": "user", "content": "?"}
    pair = [_call_of("a", "get_weather"), _call_of("b", "get_time")]
    messages = [
        ask,
        {"role": "assistant", "content": "", "tool_calls": pair},
        _result("b", "noon"),
        _result("a", "sunny"),
        {"role": "assistant", "content": "Солнечно, полдень.", "tool_calls": None},
        ask,
        {"role": "assistant", "content": None, "tool_calls": [_call_of("a", "get_time")]},
        _result("a", "one o'clock"),
    ]
    first = [{"role": "assistant", "content": "Привет!", "tool_calls": None}, *messages]
    return [case_of(m, shown=_shown_calls(m) + ', "tool_calls": None') for m in (messages, first)]


@exercise
def check_typed_value(typed_value: Callable[[str, str], Any]) -> None:
    """Exercise 1: the Python value of a K3 argument element's text, given its type."""
    for text, kind in TYPED_CASES:
        expected = expected_value(text, kind)
        got = call_student(
            typed_value,
            text,
            kind,
            explain=TYPED_MISTAKES,
            case=(f"({text!r}, {kind!r})", f"({text!r}, {kind!r})"),
        )
        call = f"typed_value({text!r}, {kind!r})"
        got = returned(got, call, ("a plain value", "обычное значение"))
        if got == expected and type(got) is type(expected):
            continue
        if kind == "string":
            raise NotYet(
                f"{call} should be the text {expected!r}, got {got!r}: a string value stays "
                "text even when it looks like JSON; decide by the type, not by the text.",
                f"{call} должно быть текстом {expected!r}, получено {got!r}: строковое "
                "значение остаётся текстом, даже если похоже на JSON; решайте по типу, а не "
                "по тексту.",
            )
        raise NotYet(
            f"{call} should be {expected!r} ({type(expected).__name__}), got {got!r}: "
            f'values of type="{kind}" are compact JSON; decode them with json.loads.',
            f"{call} должно быть {expected!r} ({type(expected).__name__}), получено "
            f'{got!r}: значения с type="{kind}" — компактный JSON; декодируйте их через '
            "json.loads.",
        )
    on_battery(
        typed_value,
        expected_value,
        [case_of(text, kind) for text, kind in TYPED_BATTERY],
        name="typed_value",
        wanted=("a plain value", "обычное значение"),
        explain=TYPED_MISTAKES,
        idea=_typed_value_rule,
    )


def _typed_value_rule(text: str, kind: str, expected: Any, got: Any) -> tuple[str, str]:
    """The rule of one battery case: the string rule for a string, JSON for the rest."""
    if kind == "string":
        return (
            'A type="string" value is exactly the text, spaces, newlines and backslashes '
            "included: nothing in it is decoded.",
            'Значение с type="string" — ровно этот текст, вместе с пробелами, переводами строк '
            "и обратными косыми чертами: в нём ничего не раскодируется.",
        )
    return (
        f'A value of type="{kind}" is JSON: json.loads(text) gives it (only type="string" is '
        "raw text).",
        f'Значение с type="{kind}" — это JSON: его даёт json.loads(text) (как есть остаётся '
        'только type="string").',
    )


# (name, index, arguments) for exercise 2.
CALL_CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("get_weather", 1, {"city": "Beijing"}),
    ("get_forecast", 2, {"city": "Paris", "days": 3, "hourly": True}),
    ("save_note", 1, {"text": 'He said "hi"', "tags": ["a", "b"], "due": None}),
    ("search", 3, {"filters": {"max": 5, "sort": "date"}, "ratio": 0.5}),
    ("set_temperature", 1, {"celsius": 2.0}),  # a whole float stays 2.0 (json.dumps)
]


def expected_call(name: str, index: int, arguments: dict[str, Any]) -> str:
    """The call element as `render_kimi_xtml` writes it at position `index` of a message."""
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for n in range(index)
    ]
    history = [{"role": "user", "content": "?"}, {"role": "assistant", "tool_calls": calls}]
    text = render_kimi_xtml(history, thinking=False, add_generation_prompt=False)
    start = text.rindex(f"{OPEN}call ")
    end = text.index(f"{CLOSE}call{SEP}", start) + len(f"{CLOSE}call{SEP}")
    return text[start:end]


def _render_hint(expected: str, got: str) -> tuple[str, str]:
    """What the learner's call element most likely got wrong."""
    if 'type="number"' in got and 'type="boolean"' in expected and 'type="boolean"' not in got:
        return (
            "True is also an int in Python, so a boolean became a number: test for bool first.",
            "в Python True — тоже int, поэтому логическое значение стало числом: проверяйте bool "
            "первым.",
        )
    if '"Beijing"' in got or '"Paris"' in got:
        return (
            "string values are raw text: no quotes, no json.dumps.",
            "строковые значения пишутся сырым текстом: без кавычек и без json.dumps.",
        )
    if "\\u" in got and "\\u" not in expected:
        return (
            "the renderer writes every character of a JSON value as it is, Cyrillic and emoji "
            "too, not as \\u escapes.",
            "рендерер пишет каждый символ JSON-значения как есть, кириллицу и эмодзи тоже, а "
            "не escape-последовательностями \\u.",
        )
    if (", " in got or ": " in got) and ", " not in expected and ": " not in expected:
        return (
            "non-string values are compact JSON: no space after ',' or ':'.",
            "нестроковые значения — компактный JSON: без пробела после ',' и ':'.",
        )
    position = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    number = _number_at(expected, got, position)
    if number:
        want, have = number
        return (
            f"the number {want} is written as JSON writes it, every digit kept; got {have!r}.",
            f"число {want} пишется так, как его пишет JSON, со всеми цифрами; получено {have!r}.",
        )
    return (
        f"the texts differ from character {position}: expected "
        f"{expected[position : position + 40]!r}, got {got[position : position + 40]!r}.",
        f"тексты расходятся с символа {position}: ожидалось "
        f"{expected[position : position + 40]!r}, получено {got[position : position + 40]!r}.",
    )


_NUMBER_ARGUMENT = re.compile(
    re.escape(OPEN)
    + r'argument key="([^"]*)" type="number"'
    + re.escape(SEP)
    + r"(.*?)"
    + re.escape(CLOSE)
)


def _number_at(expected: str, got: str, position: int) -> tuple[str, str] | None:
    """(the number as expected, as the learner wrote it) when the texts first differ inside a
    type="number" argument of `expected` whose key the learner's text also has."""
    for found in _NUMBER_ARGUMENT.finditer(expected):
        if found.start(2) <= position <= found.end(2):
            key = re.escape(found[1])
            mine = re.search(
                re.escape(OPEN)
                + f'argument key="{key}" type="[^"]*"'
                + re.escape(SEP)
                + r"(.*?)"
                + re.escape(CLOSE),
                got,
            )
            return (found[2], mine[1]) if mine else None
    return None


@exercise
def check_render_call(render_call: Callable[[str, int, dict[str, Any]], Any]) -> None:
    """Exercise 2: one call element with typed arguments, exactly as the renderer writes it."""
    for name, index, arguments in CALL_CASES:
        expected = expected_call(name, index, arguments)
        case = f"render_call({name!r}, {index}, {arguments!r})"
        got = call_student(render_call, name, index, dict(arguments), case=(case, case))
        _render_verdict(case, expected, returned(got, case, ("text", "текст")))
    for one in render_battery():
        name, index, arguments = one.args
        case = f"render_call({one.shown})"
        got = call_student(render_call, name, index, dict(arguments), case=(case, case))
        _render_verdict(
            case, expected_call(name, index, arguments), returned(got, case, ("text", "текст"))
        )


def _render_verdict(case: str, expected: str, got: Any) -> None:
    """NotYet unless the learner's element is exactly the renderer's."""
    if got == expected:
        return
    if not isinstance(got, str):
        raise NotYet(
            f"{case} should return text, got {type(got).__name__}.",
            f"{case} должна вернуть текст, а вернула {type(got).__name__}.",
        )
    en, ru = _render_hint(expected, got)
    raise NotYet(f"{case}: {en}", f"{case}: {ru}")


def _call_of(call_id: str, name: str) -> dict[str, Any]:
    return tool_call_dict(call_id, name, "{}")


def _result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def result_cases() -> dict[str, list[dict[str, Any]]]:
    """Conversations for exercise 3 (the tool messages carry no `name`, as many clients send)."""
    ask = {"role": "user", "content": "?"}
    one = [ask, {"role": "assistant", "tool_calls": [_call_of("c1", "get_weather")]}]
    one.append(_result("c1", "sunny"))
    pair = [_call_of("a", "get_weather"), _call_of("b", "get_time")]
    two = [ask, {"role": "assistant", "tool_calls": pair}]
    two += [_result("a", "sunny"), _result("b", "noon")]
    swapped = [*two[:2], _result("b", "noon"), _result("a", "sunny")]
    rounds = [*two, {"role": "assistant", "tool_calls": [_call_of("c", "get_weather")]}]
    rounds.append(_result("c", "snow"))
    return {
        "one call": one,
        "two calls": two,
        "results in the other order": swapped,
        "two rounds": rounds,
    }


_RESULT_HEADER = re.compile(
    re.escape(OPEN) + r'message role="tool" tool="([^"]*)" index="(\d+)"' + re.escape(SEP)
)


def expected_tags(messages: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    """`{tool_call_id: (tool, index)}` read from `render_kimi_xtml`'s result headers (the oracle).

    The renderer writes each run of results in the order of its assistant message's calls, so
    the k-th header of a run names the call with that index."""
    text = render_kimi_xtml(messages, thinking=False, add_generation_prompt=False)
    headers = iter(_RESULT_HEADER.findall(text))
    tags: dict[str, tuple[str, int]] = {}
    calls: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant":
            calls = message.get("tool_calls") or []
        elif message["role"] == "tool":
            tool, index = next(headers)
            tags[calls[int(index) - 1]["id"]] = (tool, int(index))
    return tags


def _index_per_name(messages: list[dict[str, Any]], call_id: str) -> int | None:
    """The place of call `call_id` among the calls of the same tool in the latest assistant
    message before its result (from 1): what counting per tool name gives."""
    calls: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant":
            calls = message.get("tool_calls") or []
        elif message["role"] == "tool" and message.get("tool_call_id") == call_id:
            names = [c["function"]["name"] for c in calls]
            ids = [c["id"] for c in calls]
            if call_id in ids:
                k = ids.index(call_id)
                return names[: k + 1].count(names[k])
    return None


TAGS_MISTAKES = (
    Explain(
        TypeError,
        r"'NoneType' object is not iterable",
        'an assistant message without calls may carry "tool_calls": None (so the SDK\'s '
        "model_dump() writes it), and .get(key, []) gives that None: treat None as no calls.",
        'у сообщения ассистента без вызовов может быть "tool_calls": None (так его записывает '
        "model_dump() из SDK), и .get(key, []) вернёт этот None: считайте None отсутствием "
        "вызовов.",
    ),
)


@exercise
def check_result_tags(result_tags: Callable[[list[dict[str, Any]]], Any]) -> None:
    """Exercise 3: which call (tool name and index) each tool result answers, as K3 writes it."""
    for case, messages in result_cases().items():
        expected = expected_tags(messages)
        got = call_student(result_tags, [dict(m) for m in messages], case=(case, CASE_RU[case]))
        got = returned(got, "result_tags(...)", ("a dict", "словарь"))
        expected = plain(expected)
        if got == expected:
            continue
        if isinstance(got, dict) and sorted(got) == sorted(expected):
            wrong = next(k for k in expected if got[k] != expected[k])
            why = (
                ". The index is the call's place in the assistant message's tool_calls (from "
                "1), not the result's place among the tool messages.",
                ". Индекс — место вызова в tool_calls сообщения ассистента (с 1), а не место "
                "результата среди сообщений инструмента.",
            )
            mine = got[wrong]
            if (
                isinstance(mine, list)
                and mine[:1] == expected[wrong][:1]
                and len(mine) == 2
                and type(mine[1]) is not int
                and str(mine[1]) == str(expected[wrong][1])
            ):
                why = (
                    f". The index is the number {expected[wrong][1]} (an int), not its text: "
                    "only the rendered prompt writes it as text.",
                    f". Индекс — это число {expected[wrong][1]} (int), а не его текст: текстом "
                    "его записывает только отрисованный промпт.",
                )
            elif (
                isinstance(mine, list)
                and mine[:1] == expected[wrong][:1]
                and mine[1:] == [_index_per_name(messages, wrong)]
            ):
                why = (
                    ". The index counts every call of the assistant message, whatever its tool, "
                    "not only the calls of the same tool.",
                    ". Индекс считает все вызовы сообщения ассистента, какого бы инструмента они "
                    "ни были, а не только вызовы того же инструмента.",
                )
            elif isinstance(mine, list) and mine[::-1] == list(expected[wrong]):
                why = (
                    ". The pair is (tool name, index), the name first.",
                    ". Пара — это (имя инструмента, индекс), имя первым.",
                )
            elif not isinstance(mine, list) or mine[:1] != expected[wrong][:1]:
                why = (
                    ". Take the tool's name from the call with that id (a tool message need "
                    "not carry a name).",
                    ". Имя инструмента берите из вызова с этим id (у сообщения инструмента "
                    "имени может не быть).",
                )
            case_en, case_ru = f"'{case}': the result for {wrong!r}", f"«{CASE_RU[case]}»: "
            case_ru += f"для результата {wrong!r}"
            verb = ("should be", "ожидалось")
            shown = tuple(mine) if isinstance(mine, list) else mine
            raise mismatch((case_en, case_ru), tuple(expected[wrong]), shown, why, verb)
        raise mismatch((f"'{case}':", f"«{CASE_RU[case]}»:"), expected, got)
    on_battery(
        result_tags,
        expected_tags,
        tags_battery(),
        name="result_tags",
        wanted=("a dict", "словарь"),
        idea=(
            "A result answers the call with its id in the latest assistant message before it: "
            "ids repeat from round to round.",
            "Результат отвечает на вызов с его id в последнем сообщении ассистента перед ним: "
            "id повторяются от раунда к раунду.",
        ),
        explain=TAGS_MISTAKES,
        more=(
            (
                none_calls_battery(),
                (
                    'An assistant message without calls may carry "tool_calls": None (so the '
                    "SDK's model_dump() writes it): None means no calls.",
                    'У сообщения ассистента без вызовов может быть "tool_calls": None (так его '
                    "записывает model_dump() из SDK): None означает, что вызовов нет.",
                ),
            ),
        ),
    )
