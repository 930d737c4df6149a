"""Self-checks for lesson 04 (manual parsing): names inside call ids, a better extractor."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    NAMES,
    SHOULD_BE,
    Case,
    Explain,
    NotYet,
    call_student,
    case_of,
    exercise,
    generated_arguments,
    mismatch,
    on_battery,
    returned,
    seeded,
)
from helpers.formats import kimi_name_from_id, parse_kimi
from helpers.i18n import russian_plural

NAME_CASES: tuple[str, ...] = (
    "functions.get_weather:0",
    "get_weather:0",
    "functions.get-weather:12",
    "functions.weather.today:3",
    "search:1",
    # a dot in the name and no prefix: only "functions." is cut, never the text before a dot
    "weather.today:3",
)


def name_battery() -> list[Case]:
    """Ids beyond the lesson's: names with digits, dashes and dots at the end or inside, with and
    without the prefix, indices of several digits (seeded, the same on every run)."""
    rng = seeded("n04 name_from_id")
    ids = ["functions.search_v2:0", "search_v2:1", "functions.get-weather:0", "weather.today:10"]
    ids += ["functions.lookup2go:7", "functions.a.b-c_3:12", "v2:0", "functions.x9:99"]
    for _ in range(16):
        prefix = rng.choice(["functions.", ""])
        ids.append(
            f"{prefix}{rng.choice(NAMES)}{rng.choice(['', '2', '_v3', '-1'])}:{rng.randint(0, 120)}"
        )
    # a dotted name that holds "functions." itself: only the prefix is cut, never a later one
    ids += ["functions.cloud_functions.deploy:0", "cloud_functions.deploy:2"]
    return [case_of(i) for i in ids]


NAME_MISTAKES = (
    Explain(
        (AttributeError, TypeError),
        r"'NoneType' object (?:has no attribute 'group|is not subscriptable)",
        "your regular expression found nothing in this id: a name may contain characters your "
        "pattern does not allow (look at the id's name: '-', '.', digits).",
        "ваше регулярное выражение ничего не нашло в этом id: в имени бывают символы, которых "
        "ваш шаблон не допускает (посмотрите на имя в id: '-', '.', цифры).",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        "an id need not contain a dot (get_weather:0), so split('.') gives one piece and [1] "
        "does not exist: the prefix functions. is optional.",
        "в id может не быть точки (get_weather:0): тогда split('.') даёт один кусок, и [1] не "
        "существует. Префикс functions. есть не всегда.",
    ),
)


@exercise
def check_name_from_id(name_from_id: Callable[[str], Any]) -> None:
    """Exercise 1: the learner's function must agree with `kimi_name_from_id` on every id."""
    for call_id in NAME_CASES:
        expected = kimi_name_from_id(call_id)
        got = call_student(
            name_from_id, call_id, explain=NAME_MISTAKES, case=(repr(call_id), call_id)
        )
        got = returned(got, f"name_from_id({call_id!r})", ("a str", "строка"))
        if got == expected:
            continue
        why = (".", ".")
        if "." in expected:
            why = (
                ": the dot is part of this name. Remove only the prefix functions. (when it is "
                "there), not everything up to the first dot.",
                ": точка здесь — часть имени. Убирайте только префикс functions. (если он "
                "есть), а не всё до первой точки.",
            )
        call = f"name_from_id({call_id!r})"
        raise mismatch((call, call), expected, got, why, SHOULD_BE)
    on_battery(
        name_from_id,
        kimi_name_from_id,
        name_battery(),
        name="name_from_id",
        wanted=("a str", "строка"),
        idea=(
            "Only the prefix functions. and the index after the last ':' are not the name; "
            "digits, '-' and '.' inside or at the end belong to it.",
            "Не имя — только префикс functions. и номер после последнего ':'; цифры, '-' и '.' "
            "внутри имени или в его конце — часть имени.",
        ),
        explain=NAME_MISTAKES,
    )


def _call(call_id: str, arguments: str) -> str:
    return f"<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def _section(*calls: str) -> str:
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


def extract_cases() -> dict[str, str]:
    """Raw outputs the extractor check uses (the lesson's variants and a few more)."""
    beijing = _call("functions.get_weather:0", '{"city": "Beijing"}')
    shanghai = _call("functions.get_weather:1", '{"city": "Shanghai"}')
    return {
        "no calls": "It is sunny in Beijing today.",
        "textbook": _section(beijing),
        "text before the section": "Let me check." + _section(beijing),
        "two calls in one section": _section(beijing, shanghai),
        "second section": _section(beijing) + "Now Shanghai." + _section(shanghai),
        "cut off by max_tokens": "<|tool_calls_section_begin|>" + beijing[:-20],
        "'-' in the name": _section(_call("functions.get-weather:0", '{"city": "Beijing"}')),
        "id without 'functions.'": _section(_call("get_weather:0", '{"city": "Beijing"}')),
        "newlines between markers": "<|tool_calls_section_begin|>\n<|tool_call_begin|> "
        'functions.get_weather:0 <|tool_call_argument_begin|>\n{"city": "Beijing"}\n'
        "<|tool_call_end|>\n<|tool_calls_section_end|>",
        # pretty-printed JSON: without re.DOTALL, "." stops at the newline and the call is lost
        "arguments over several lines": _section(
            _call("functions.get_weather:0", '{\n  "city": "Beijing"\n}')
        ),
    }


def extract_battery() -> list[Case]:
    """Generated raw outputs (seeded): text around the calls, one to three calls in one or two
    sections, names with digits, dashes and dots, ids with and without the prefix, nested and
    multi-line arguments with '<', '>', Cyrillic and emoji, spaces around markers, a cut-off end."""
    rng = seeded("n04 extract_tool_calls")
    out = []
    for n in range(24):
        calls, k = [], 0
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(NAMES)
            prefix = "functions." if rng.random() < 0.7 else ""
            arguments = json.dumps(
                generated_arguments(rng),
                ensure_ascii=rng.random() < 0.3,
                indent=rng.choice([None, 2]),
            )
            pad = rng.choice(["", " ", "\n"])
            calls.append(
                f"<|tool_call_begin|>{pad}{prefix}{name}:{k}{pad}<|tool_call_argument_begin|>"
                f"{pad}{arguments}{pad}<|tool_call_end|>"
            )
            k += 1
        if len(calls) > 1 and rng.random() < 0.4:
            text = _section(calls[0]) + rng.choice(["", "Then: "]) + _section(*calls[1:])
        else:
            text = _section(*calls)
        text = rng.choice(["", "Let me check. ", "Проверю погоду 🌦️\n"]) + text
        if n % 6 == 5:  # cut off by max_tokens: the last call has no end markers
            text = text[: text.rindex("<|tool_call_end|>")]
        out.append(case_of(text))
    # the arguments end at the section end when <|tool_call_end|> is missing (step 3 says so);
    # compact JSON has no space to stop an id pattern that takes any non-space character
    out.append(
        case_of(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_calls_section_end|>'
        )
    )
    compact = [
        _call(f"functions.get_weather:{k}", f'{{"city":"{c}"}}')
        for k, c in enumerate(["Beijing", "Осло"])
    ]
    out.append(case_of(_section(*compact)))
    return out


def empty_arguments_battery() -> list[Case]:
    """Calls with nothing between the argument marker and the end (a model that writes no
    arguments for a tool without parameters), and an output cut right after that marker."""
    empty = "<|tool_call_begin|>functions.now:0<|tool_call_argument_begin|><|tool_call_end|>"
    beijing = _call("functions.get_weather:1", '{"city": "Beijing"}')
    return [
        case_of(_section(empty, beijing)),
        case_of("<|tool_calls_section_begin|>" + empty.removesuffix("<|tool_call_end|>")),
    ]


def reused_id_battery() -> list[Case]:
    """Outputs where two calls have the same id: a model that starts counting again in its
    second section, or writes one id twice in a section."""
    first = _call("functions.get_weather:0", '{"city": "Beijing"}')
    again = _call("functions.get_weather:0", '{"city": "Москва"}')
    return [
        case_of(_section(first) + "And Moscow: " + _section(again)),
        case_of(_section(_call("search:0", '{"q": "a"}'), _call("search:0", '{"q": "b"}'))),
    ]


EXTRACT_MISTAKES = (
    Explain(
        IndexError,
        r"list index out of range",
        "the text may lack an end marker (output cut off) or the id a dot: do not index a "
        "split() result blindly; read what is there and stop at the end of the text.",
        "в тексте может не быть маркера конца (вывод обрезан), а в id — точки: не берите "
        "элемент результата split() вслепую; читайте то, что есть, до конца текста.",
    ),
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute 'group",
        "re.search found nothing in this text and returned None: check the match first.",
        "re.search ничего не нашёл в этом тексте и вернул None: сначала проверьте совпадение.",
    ),
)


def _brief(calls: Any) -> tuple[str, str]:
    """Calls as a short list `id name(arguments)` in English and Russian, or the repr of
    something else."""
    if not isinstance(calls, list):
        return repr(calls)[:120], repr(calls)[:120]
    try:
        items = [f"{c['id']} {c['function']['name']}({c['function']['arguments']})" for c in calls]
    except (KeyError, TypeError):
        return repr(calls)[:200], repr(calls)[:200]
    n = len(calls)
    en = f"{n} call" if n == 1 else f"{n} calls"
    return f"{en} {items}", f"{n} {russian_plural(n, 'вызов', 'вызова', 'вызовов')} {items}"


def _first_difference(expected: list[dict[str, Any]], got: Any) -> tuple[str, str] | None:
    """Where two lists of calls first differ, as `calls[i].field: expected X, got Y`, or None
    when the difference is not inside matching dicts."""
    if not isinstance(got, list) or len(got) != len(expected):
        return None

    def walk(want: Any, have: Any, path: str) -> tuple[str, str] | None:
        if isinstance(want, dict) and isinstance(have, dict):
            for key in want:
                if key not in have:
                    return (f'{path} has no "{key}"', f'в {path} нет "{key}"')
                found = walk(want[key], have[key], f"{path}.{key}")
                if found:
                    return found
            extra = sorted(set(have) - set(want))
            if extra:
                return (f"{path} has extra keys {extra}", f"в {path} лишние ключи {extra}")
            return None
        if want != have:
            return (
                f"{path} should be {want!r}, got {have!r}",
                f"{path} должно быть {want!r}, получено {have!r}",
            )
        return None

    for i, (want, have) in enumerate(zip(expected, got, strict=True)):
        found = walk(want, have, f"calls[{i}]")
        if found:
            return found
    return None


def _extract_mismatch(name: str, text: str, expected: list[dict[str, Any]], got: Any) -> NotYet:
    """The hint for an extractor that disagrees with parse_kimi on one variant."""
    name_ru = CASE_RU[name]
    (want, want_ru), (have, have_ru) = _brief(expected), _brief(got)
    difference = _first_difference(expected, got)
    if difference:
        return NotYet(
            f"variant '{name}': {difference[0]}.",
            f"вариант «{name_ru}»: {difference[1]}.",
        )
    lost = isinstance(got, list) and len(got) < len(expected)
    if lost and any("\n" in c["function"]["arguments"] for c in expected):
        return NotYet(
            f"variant '{name}': expected {want}, got {have}. These arguments span several "
            "lines, and in a regular expression . does not match a newline unless you pass "
            "re.DOTALL.",
            f"вариант «{name_ru}»: ожидалось {want_ru}, получено {have_ru}. Здесь аргументы "
            "занимают несколько строк, а . в регулярном выражении не совпадает с переводом "
            "строки, если не передать re.DOTALL.",
        )
    return NotYet(
        f"variant '{name}': expected {want}, got {have}.",
        f"вариант «{name_ru}»: ожидалось {want_ru}, получено {have_ru}.",
    )


@exercise
def check_extract(extract_tool_calls: Callable[[str], Any]) -> None:
    """Exercise 2: the learner's extractor must find the same calls as `parse_kimi`."""
    for name, text in extract_cases().items():
        expected = parse_kimi(text).tool_calls
        got = call_student(
            extract_tool_calls,
            text,
            explain=EXTRACT_MISTAKES,
            case=(f"the variant '{name}'", CASE_RU[name]),
        )
        got = returned(got, "extract_tool_calls(...)", ("a list of dicts", "список словарей"))
        if got != expected:
            raise _extract_mismatch(name, text, expected, got)
    on_battery(
        extract_tool_calls,
        lambda text: parse_kimi(text).tool_calls,
        extract_battery(),
        name="extract_tool_calls",
        wanted=("a list of dicts", "список словарей"),
        idea=(
            "Every call of every section counts; the id and the arguments are the text between "
            "their markers without the spaces around it, whatever characters they contain.",
            "Считается каждый вызов каждой секции; id и аргументы — это текст между их маркерами "
            "без пробелов по краям, какие бы символы в нём ни стояли.",
        ),
        explain=EXTRACT_MISTAKES,
        more=(
            (
                empty_arguments_battery(),
                (
                    "A call whose arguments are empty (nothing after <|tool_call_argument_begin|>, "
                    "before its end or where the output was cut) is still a call, with "
                    "arguments ''.",
                    "Вызов с пустыми аргументами (после <|tool_call_argument_begin|> ничего нет — "
                    "до конца вызова или до места, где вывод оборвался) — всё равно вызов, с "
                    "arguments ''.",
                ),
            ),
            (
                reused_id_battery(),
                (
                    "Two calls may have the same id (a model that starts counting again in a "
                    "second section): each is still a call of its own; return them all, in order.",
                    "У двух вызовов может оказаться один и тот же id (модель начала счёт заново во "
                    "второй секции): это всё равно два вызова; верните оба, по порядку.",
                ),
            ),
        ),
    )
