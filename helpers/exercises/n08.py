"""Self-checks for lesson 08 (choosing tools): settings that give exactly one call on vLLM, which
engine refuses or ignores a named function, and a tool schema Moonshot accepts in strict mode."""

from __future__ import annotations

import copy
import re
from typing import Any

from helpers.exercises._verdict import NotPlain, NotYet, exercise, plain, shorten
from helpers.replay.validation import ApiError, check_moonshot_tools

TOOL = "get_weather"
ENGINES = ("Moonshot K2.6", "Moonshot K3", "vLLM")
# A named tool_choice, engine by engine (the lesson's table): Kimi K2.6 with thinking on refuses
# it, Kimi K3 ignores it, vLLM holds it to one call with structured outputs.
NAMED_REFUSED = frozenset({"Moonshot K2.6"})
NAMED_IGNORED = frozenset({"Moonshot K3"})
SHAPE = '{"type": "function", "function": {"name": "get_weather", ...}}'


def _plain_or_none(value: Any) -> Any:
    """The answer as plain JSON values, or None when it holds anything else (the checks then
    say what shape they want)."""
    try:
        return plain(value)
    except NotPlain:
        return None


@exercise
def check_one_call(settings: Any) -> None:
    """Exercise 1: the create() settings that make vLLM return exactly one get_weather call."""
    settings = _plain_or_none(settings)
    if not isinstance(settings, dict):
        raise NotYet(
            f"settings should be a dict of keyword arguments, got {type(settings).__name__}.",
            "settings должен быть словарём именованных аргументов, а не "
            f"{type(settings).__name__}.",
        )
    if "tool_choice" not in settings and ("function_call" in settings or "functions" in settings):
        old = "function_call" if "function_call" in settings else "functions"
        raise NotYet(
            f"{old} belongs to the deprecated functions API, which vLLM's chat endpoint does "
            'not read: the choice goes in tool_choice, and without it "auto" applies.',
            f"{old} — часть устаревшего functions API, которую чат-эндпоинт vLLM не читает: "
            'выбор передаётся в tool_choice, а без него действует "auto".',
        )
    body = settings.get("extra_body")
    if isinstance(body, dict):  # the SDK merges extra_body into the request, over the rest
        settings = {**settings, **{k: body[k] for k in ("tool_choice", "n", "tools") if k in body}}
    _nothing_else_breaks_it(settings)
    choice = settings.get("tool_choice", "auto")
    capped = settings.get("parallel_tool_calls", True)
    if not isinstance(capped, bool):
        raise NotYet(
            f"parallel_tool_calls is {capped!r}; it takes a bool, True or False.",
            f"parallel_tool_calls равно {capped!r}; нужен bool, True или False.",
        )
    if choice in ("auto", None):
        raise NotYet(
            'with "auto" the model decides: it may answer in text or make two calls '
            "(parallel_tool_calls=False would only cap the number at one).",
            'при "auto" решает модель: она может ответить текстом или сделать два вызова '
            "(parallel_tool_calls=False только ограничил бы их число одним).",
        )
    if choice == "none":
        raise NotYet('"none" forbids calls altogether.', '"none" вообще запрещает вызовы.')
    if choice == "required" and capped is False:
        return  # at least one call (a grammar), and vLLM keeps only the first
    if choice == "required":
        raise NotYet(
            '"required" promises at least one call, not exactly one: the table shows two '
            "(parallel_tool_calls=False would keep the first, or name the function).",
            '"required" обещает хотя бы один вызов, а не ровно один: в таблице их два '
            "(parallel_tool_calls=False оставил бы первый; или назовите функцию).",
        )
    if isinstance(choice, str):
        raise NotYet(
            f"tool_choice {choice!r} is not a value vLLM knows: a function is named with an "
            'object {"type": "function", "function": {"name": ...}}.',
            f"tool_choice {choice!r} — не то значение, которое знает vLLM: функцию называют "
            'объектом {"type": "function", "function": {"name": ...}}.',
        )
    if not isinstance(choice, dict) or choice.get("type") != "function":
        raise NotYet(
            'a named choice is an object with "type": "function".',
            'выбор по имени — это объект с "type": "function".',
        )
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if name != TOOL:
        raise NotYet(
            f'the object names its function under "function": {{"name": ...}}; here it names '
            f"{name!r}, the tool is {TOOL!r}.",
            f'объект называет функцию в "function": {{"name": ...}}; здесь названо {name!r}, '
            f"а инструмент называется {TOOL!r}.",
        )


def _nothing_else_breaks_it(settings: dict[str, Any]) -> None:
    """The settings besides the choice that undo "exactly one call": tools replaced, more than
    one choice, or a token limit that cuts the call off."""
    if "tools" in settings:
        raise NotYet(
            f"settings sets tools={shorten(settings['tools'], 60)}: the lesson passes its own "
            "tools (with get_weather) to create(), so leave tools out of settings.",
            f"settings задаёт tools={shorten(settings['tools'], 60)}: урок сам передаёт в "
            "create() свои tools (с get_weather), поэтому уберите tools из settings.",
        )
    if settings.get("n", 1) != 1:
        raise NotYet(
            f"n={settings['n']!r} asks for that many answers, each with its own call: leave n "
            "out (it is 1).",
            f"n={settings['n']!r} просит столько ответов, и в каждом свой вызов: не задавайте n "
            "(по умолчанию 1).",
        )
    for key in ("max_tokens", "max_completion_tokens"):
        limit = settings.get(key)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit < 50:
            raise NotYet(
                f"{key}={limit} cuts the answer off before the call is whole (its JSON "
                "arguments alone take more tokens): leave the limit out or make it larger.",
                f"{key}={limit} обрывает ответ раньше, чем вызов готов (одни его аргументы в "
                "JSON занимают больше токенов): уберите ограничение или увеличьте его.",
            )


def _engine_set(value: Any, name: str) -> set[str]:
    """The student's set of engine names, checked against the three the exercise lists."""
    if isinstance(value, str) or not isinstance(value, set | frozenset | list | tuple):
        raise NotYet(
            f"{name} should be a set of engine names, such as {{'vLLM'}}.",
            f"{name} должен быть множеством названий движков, например {{'vLLM'}}.",
        )
    items = [str.__str__(i) if isinstance(i, str) else type(i).__name__ for i in list(value)]
    unknown = sorted(item for item in items if item not in ENGINES)
    if unknown:
        raise NotYet(
            f"{name} holds {unknown}; use the names {list(ENGINES)}.",
            f"в {name} есть {unknown}; используйте названия {list(ENGINES)}.",
        )
    return set(items)


@exercise
def check_named_choice(refuses: Any, ignores: Any) -> None:
    """Exercise 2: which engines refuse a named tool_choice, and which ignore it."""
    refused = _engine_set(refuses, "refuses")
    ignored = _engine_set(ignores, "ignores")
    if not refused and not ignored:
        raise NotYet(
            "fill both sets from the table's row for the named function (get_weather).",
            "заполните оба множества по строке таблицы для функции по имени (get_weather).",
        )
    if "Moonshot K3" in refused:
        raise NotYet(
            "Kimi K3 does not refuse a named function: it accepts the request and ignores the "
            "choice.",
            "Kimi K3 не отказывает в выборе функции по имени: он принимает запрос и не учитывает "
            "выбор.",
        )
    if "vLLM" in refused | ignored:
        raise NotYet(
            "vLLM keeps a named choice: structured outputs hold the reply to one call of that "
            "function.",
            "vLLM соблюдает выбор по имени: структурированный вывод ограничивает ответ одним "
            "вызовом этой функции.",
        )
    if "Moonshot K2.6" in ignored or "Moonshot K2.6" not in refused:
        raise NotYet(
            "Kimi K2.6 with thinking on answers a forced choice, named or required, with HTTP 400.",
            "Kimi K2.6 с включённым рассуждением отвечает на принудительный выбор, по имени или "
            "required, ошибкой HTTP 400.",
        )
    if ignored != NAMED_IGNORED:
        raise NotYet(
            "one engine answers a named choice as if tool_choice were absent: which one ignored "
            "it in the table?",
            "один движок отвечает на выбор по имени так, будто tool_choice нет: какой из них "
            "не заметил его в таблице?",
        )
    assert refused == NAMED_REFUSED  # every other combination was named above


@exercise
def check_strict_tool(tool: Any) -> None:
    """Exercise 3: a tool schema the Moonshot platform accepts with strict mode left on."""
    tool = _plain_or_none(tool)
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or function.get("name") != TOOL:
        raise NotYet(f"keep the tool's shape: {SHAPE}.", f"сохраните вид инструмента: {SHAPE}.")
    if "strict" in tool or "strict" in function:
        raise NotYet(
            "leave strict out: the exercise asks for a schema strict mode accepts (strict: false "
            'would switch the check off, and "false" as a string is not false at all).',
            "не указывайте strict: нужна схема, которую примет строгий режим (strict: false "
            'выключил бы проверку, а "false" строкой — вовсе не false).',
        )
    properties = (function.get("parameters") or {}).get("properties")
    if not isinstance(properties, dict) or not {"city", "date"} <= set(properties):
        raise NotYet(
            "keep both parameters, city and date: dropping one is not a fix.",
            "сохраните оба параметра, city и date: удалить один — не исправление.",
        )
    required = (function.get("parameters") or {}).get("required")
    missing = [n for n in ("city", "date") if not isinstance(required, list) or n not in required]
    if missing:
        raise NotYet(
            f"keep both parameters required: {missing[0]!r} is not in required any more, so a "
            f"call without it would pass the schema.",
            f"оставьте оба параметра обязательными: {missing[0]!r} больше нет в required, и "
            "вызов без него прошёл бы проверку схемы.",
        )
    wrong_type = _not_a_json_type(function.get("parameters"))
    if wrong_type is not None:
        raise NotYet(
            f'"type": {wrong_type!r} is not a JSON Schema type (those are string, number, '
            "integer, boolean, array, object and null): a validator has nothing to check the "
            "value against.",
            f'"type": {wrong_type!r} — не тип JSON Schema (типы там такие: string, number, '
            "integer, boolean, array, object и null): валидатору не с чем сверить значение.",
        )
    try:
        check_moonshot_tools([copy.deepcopy(tool)])
    except ApiError as error:
        raise NotYet(
            f"Moonshot still refuses it: «{error.message.split(';')[0]}».",
            f"Moonshot всё ещё отвергает схему: «{error.message.split(';')[0]}».",
        ) from None
    date = properties["date"]
    description = date.get("description") if isinstance(date, dict) else None
    if not isinstance(description, str) or not description.strip():
        raise NotYet(
            "tell the model what a date looks like in the date's description.",
            "опишите в description параметра date, как выглядит дата.",
        )
    if not _gives_a_shape(description):
        raise NotYet(
            f"the date's description {description!r} does not say what a date looks like: "
            "without the order of year, month and day (a pattern or an example date) the model "
            'is free to send "tomorrow".',
            f"описание даты {description!r} не говорит, как выглядит дата: без порядка года, "
            "месяца и дня (шаблона или примера даты) модель вправе прислать «tomorrow».",
        )


JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
# A description that says what a date looks like names a pattern (YYYY, ГГГГ, MM, DD), a standard
# (ISO 8601) or shows an example with a four-digit year.
# What a date's shape looks like in a description: a pattern with the year and the month or day
# (YYYY-MM-DD, DD.MM.YYYY, ГГГГ-ММ-ДД), a standard, or an example date with all three parts.
DATE_PATTERN = re.compile(
    r"(?:YYYY|ГГГГ).{0,3}(?:MM|ММ|DD|ДД)|(?:MM|ММ|DD|ДД).{0,3}(?:MM|ММ|DD|ДД).{0,3}(?:YY|ГГ)"
    r"|\bISO\b|8601|RFC ?3339"
    r"|\b\d{4}[-./]\d{1,2}[-./]\d{1,2}\b|\b\d{1,2}[-./]\d{1,2}[-./]\d{2,4}\b",
    re.IGNORECASE,
)


DATE_PARTS = (r"year|год", r"month|месяц", r"\bday|\bден|\bдня|числ")


def _gives_a_shape(description: str) -> bool:
    """The description says what a date looks like: a pattern, a standard or an example date,
    or all three of year, month and day in words ("day/month/year"). A year alone ("2026") or
    two parts ("the day and the month") leave the order open."""
    parts = sum(bool(re.search(part, description, re.IGNORECASE)) for part in DATE_PARTS)
    return bool(DATE_PATTERN.search(description)) or parts == len(DATE_PARTS)


def _not_a_json_type(schema: Any, depth: int = 0) -> Any:
    """The first "type" value in `schema` (plain values) that is not a JSON Schema type, or
    None. A list of types is checked item by item; nested properties, items and *Of too."""
    if not isinstance(schema, dict) or depth > 20:
        return None
    kinds = schema.get("type")
    for kind in (kinds if isinstance(kinds, list) else [kinds]) if "type" in schema else []:
        if not isinstance(kind, str) or kind not in JSON_TYPES:
            return kind
    properties = schema.get("properties")
    nested = list(properties.values()) if isinstance(properties, dict) else []
    nested.append(schema.get("items"))
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            nested += schema[key]
    for inner in nested:
        found = _not_a_json_type(inner, depth + 1)
        if found is not None:
            return found
    return None
