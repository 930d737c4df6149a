"""Self-checks for lesson 10: MCP tool names mapped for the model, and a `tools/call` result
(with `isError`) turned into the content of a tool message.

Each check runs the learner's function on a hidden battery against the reference in
`helpers.mcp` and stops at the first input where they differ, naming it.
"""

from __future__ import annotations

import json
import random
from typing import Any

from helpers.exercises._verdict import (
    NotYet,
    Raised,
    a_function,
    call_student,
    catching,
    exercise,
    shorten,
)
from helpers.mcp import NO_MESSAGE, model_tool_name, tool_content, tool_names

# --- Exercise 1: names -----------------------------------------------------------------------

_LONG = "analytics.reports.quarterly_revenue_by_region_and_product_line.export_csv"
_LONG_TWIN = "analytics.reports.quarterly_revenue_by_region_and_product_line.export_pdf"
_MCP_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."

NAME_CASES: list[list[str]] = [
    ["weather.today", "read_file"],  # the lesson's server
    ["getUser"],
    ["DATA_EXPORT_v2"],
    ["admin.tools.list"],
    ["a"],  # the shortest MCP name
    ["go"],
    ["run", "_id"],  # 3 characters: long enough, no prefix
    ["3d.render"],  # a leading digit
    ["-dash-first"],
    ["_private"],
    ["user-profile/update"],  # an older MCP draft allowed "/"
    ["погода.сегодня"],  # Cyrillic: outside MCP's set, but servers send it
    ["weather today"],
    [_LONG],  # 72 characters
    [_LONG, _LONG_TWIN],  # two long names that share their first 64 characters
    ["x" * 128],  # the longest MCP name
    ["a" * 64, "b" * 65],  # exactly 64, and one over
    ["weather.today", "weather_today"],  # a collision
    ["read.file", "read-file", "read_file"],  # "-" stays, "." does not
    ["a.b", "a/b"],  # a collision through another character
    ["x", "t_x"],  # a collision through the prefix
    ["search", "search"],  # the same name twice is one tool, not a collision
    [],
]


def _generated_names(count: int = 6) -> list[list[str]]:
    """Deterministic random MCP names (the allowed set, 1 to 128 characters)."""
    rng = random.Random(10)
    cases = []
    for _ in range(count):
        size = rng.choice([1, 2, 5, 20, 63, 64, 65, 100, 128])
        cases.append(["".join(rng.choice(_MCP_CHARS) for _ in range(size)) for _ in range(2)])
    return cases


def _why_name(mcp_name: str, wrong: str) -> tuple[str, str]:
    """The rule a wrong model name (`wrong`) most likely broke."""
    replaced = model_tool_name(mcp_name)
    if wrong == "t_" + replaced:
        return (
            "`t_` goes in front only when the name, after the replacement, does not start with a "
            f"letter or `_`, or is shorter than 3 characters; {replaced!r} starts with a letter "
            "or `_` and has at least 3",
            "`t_` ставится впереди, только если имя после замены начинается не с буквы и не с "
            f"`_` или короче 3 символов; а {replaced!r} начинается с буквы или `_` и не короче 3 "
            "символов",
        )
    if replaced == "t_" + wrong:
        return (
            "a name that does not start with a letter or `_`, or is shorter than 3, gets `t_` "
            "in front",
            "имя, которое начинается не с буквы и не с `_` или короче 3 символов, получает "
            "`t_` впереди",
        )
    if len(replaced) == 64 and len(mcp_name) > 61:
        prefixed = replaced.startswith("t_") and not mcp_name.startswith("t_")
        return (
            "a name longer than 64 keeps 55 characters, then `_` and 8 hex digits of the "
            "SHA-1 of the MCP name"
            + ("; the `t_` in front counts, so measure after adding it" if prefixed else ""),
            "имя длиннее 64 символов сохраняет 55 символов, затем `_` и 8 шестнадцатеричных "
            "цифр SHA-1 от имени MCP"
            + (
                "; `t_` впереди тоже считается, так что длину меряйте после него"
                if prefixed
                else ""
            ),
        )
    return (
        "every character outside [a-zA-Z0-9_-] becomes `_` (a Cyrillic letter, a space, `/` "
        "and `.` too), while letters, digits, `_` and `-` stay; then a name that does not start "
        "with a letter or `_`, or is shorter than 3, gets `t_` in front",
        "каждый символ вне [a-zA-Z0-9_-] становится `_` (кириллица, пробел, `/` и `.` тоже), а "
        "буквы, цифры, `_` и `-` остаются; затем имя, которое начинается не с буквы и не с `_` "
        "или короче 3 символов, получает `t_` впереди",
    )


def _plain_table(got: Any) -> dict[str, str] | None:
    """The learner's answer as a plain str -> str dict, or None when it is not one."""
    if type(got) is not dict:
        return None
    if not all(type(k) is str and type(v) is str for k, v in got.items()):
        return None
    return {str(k): str(v) for k, v in got.items()}


@exercise
def check_map_tool_names(map_tool_names: Any) -> None:
    """Exercise 1: model name -> MCP name for every MCP name; ValueError on a collision."""
    a_function(map_tool_names, "map_tool_names")
    for names in NAME_CASES + _generated_names():
        shown = shown_ru = shorten(names, 90)
        expected = catching(tool_names, ValueError)(names)  # Raised for a collision
        # On a collision any exception is caught, to say which one the exercise asks for.
        caught = Exception if isinstance(expected, Raised) else ValueError
        got = call_student(catching(map_tool_names, caught), list(names), case=(shown, shown_ru))
        if isinstance(got, Raised) and not isinstance(got.exc, ValueError):
            first, second = _collision(names)
            kind = type(got.exc).__name__
            raise NotYet(
                f"for {shown} the MCP names {first!r} and {second!r} both become "
                f"{model_tool_name(first)!r} and map_tool_names raised {kind}: raise ValueError, "
                "the one exception the exercise names, so a caller can catch exactly that.",
                f"для {shown_ru} имена MCP {first!r} и {second!r} оба становятся "
                f"{model_tool_name(first)!r}, и map_tool_names подняла {kind}: поднимите "
                "ValueError — единственное исключение, названное в упражнении, чтобы вызывающий "
                "код мог поймать именно его.",
            )
        if isinstance(expected, Raised):
            if not isinstance(got, Raised):
                first, second = _collision(names)
                raise NotYet(
                    f"for {shown} the MCP names {first!r} and {second!r} both become "
                    f"{model_tool_name(first)!r}: raise ValueError, or a call would reach the "
                    "wrong tool.",
                    f"для {shown_ru} имена MCP {first!r} и {second!r} оба становятся "
                    f"{model_tool_name(first)!r}: поднимите ValueError, иначе вызов попадёт не "
                    "тому инструменту.",
                )
            continue
        if isinstance(got, Raised):
            twice = len(set(names)) < len(names)
            raise NotYet(
                f"for {shown} no two different MCP names get the same model name, yet ValueError "
                "was raised" + (" (the same name listed twice is one tool)." if twice else "."),
                f"для {shown_ru} никакие два разных имени MCP не получают одно имя для модели, а "
                "ValueError поднята"
                + (" (одно имя, указанное дважды, — это один инструмент)." if twice else "."),
            )
        table = _plain_table(got)
        if table is None:
            raise NotYet(
                f"for {shown} return a dict from str to str (model name -> MCP name), not "
                f"{shorten(got, 60)}.",
                f"для {shown_ru} верните словарь из str в str (имя для модели -> имя MCP), а не "
                f"{shorten(got, 60)}.",
            )
        for mcp_name in dict.fromkeys(names):
            right = model_tool_name(mcp_name)
            name_en = name_ru = shorten(mcp_name, 80)
            if table.get(right) == mcp_name:
                continue
            wrong = next((k for k, v in table.items() if v == mcp_name), None)
            if wrong is None:
                raise NotYet(
                    f"for {shown} the MCP name {name_en} is missing from the "
                    f"values; it should be the value of {right!r}.",
                    f"для {shown_ru} имени MCP {name_ru} нет среди значений; оно "
                    f"должно быть значением для {right!r}.",
                )
            why_en, why_ru = _why_name(mcp_name, wrong)
            raise NotYet(
                f"for {shown} the MCP name {name_en} should get the model name "
                f"{right!r}, got {ascii(wrong)}: {why_en}.",
                f"для {shown_ru} имя MCP {name_ru} должно получить имя для модели "
                f"{right!r}, а получило {wrong!r}: {why_ru}.",
            )
        if table != expected:
            extra = sorted(set(table) - set(expected))
            raise NotYet(
                f"for {shown} the dict should hold one entry per MCP name; extra keys: "
                f"{shorten(extra, 60)}.",
                f"для {shown_ru} в словаре должно быть по одной записи на имя MCP; лишние ключи: "
                f"{shorten(extra, 60)}.",
            )


def _collision(names: list[str]) -> tuple[str, str]:
    """The first two MCP names of `names` that get the same model name."""
    seen: dict[str, str] = {}
    for name in names:
        model = model_tool_name(name)
        if model in seen and seen[model] != name:
            return seen[model], name
        seen[model] = name
    raise AssertionError("no collision")  # pragma: no cover: only called for a collision


# --- Exercise 2: a tools/call result as a tool message -------------------------------------


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
LINK = {"type": "resource_link", "uri": "file:///notes/packing.txt", "name": "packing.txt"}
FORECAST = {"city": "Moscow", "weather": "Snow", "celsius": -3}
FORECAST_TEXT = json.dumps(FORECAST, indent=2)

RESULT_CASES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "the weather for Moscow",
        "погода в Москве",
        {"content": [_text(FORECAST_TEXT)], "structuredContent": FORECAST, "isError": False},
    ),
    (
        "an unknown city (isError)",
        "неизвестный город (isError)",
        {
            "content": [_text("Error executing tool weather.today: No forecast for 'Paris'.")],
            "isError": True,
        },
    ),
    (
        "a plain text result",
        "простой текстовый результат",
        {"content": [_text("Umbrella, warm scarf.")]},
    ),
    (
        "a text with spaces at its edges",
        "текст с пробелами по краям",
        {"content": [_text("  Umbrella:\n  - a warm scarf\n")]},
    ),
    (
        "an empty text block between two others",
        "пустой текстовый блок между двумя другими",
        {"content": [_text("Rain at noon."), _text(""), _text("Take an umbrella.")]},
    ),
    (
        "isError: false, written out",
        "isError: false, указано явно",
        {"content": [_text("ok")], "isError": False},
    ),
    (
        "an error in two text blocks",
        "ошибка в двух текстовых блоках",
        {"content": [_text("Invalid arguments:"), _text("city is required")], "isError": True},
    ),
    ("an error with no text", "ошибка без текста", {"content": [], "isError": True}),
    (
        "an error next to an image",
        "ошибка рядом с картинкой",
        {"content": [IMAGE, _text("rendering failed")], "isError": True},
    ),
    (
        "an error whose only block is an image",
        "ошибка, в которой только картинка",
        {"content": [IMAGE], "isError": True},
    ),
    (
        "an error with an empty text block",
        "ошибка с пустым текстовым блоком",
        {"content": [_text("")], "isError": True},
    ),
    (
        "an error that also has structuredContent",
        "ошибка, у которой есть и structuredContent",
        {"content": [_text("quota exceeded")], "structuredContent": {"retry": 30}, "isError": True},
    ),
    (
        "structuredContent that is a list",
        "structuredContent — список",
        {"content": [_text("[1, 2]")], "structuredContent": [1, 2]},
    ),
    (
        "structuredContent that is a string",
        "structuredContent — строка",
        {"content": [_text('"done"')], "structuredContent": "done"},
    ),
    (
        "structuredContent that is 0",
        "structuredContent равен 0",
        {"content": [_text("count: 0")], "structuredContent": 0},
    ),
    (
        "structuredContent that is false",
        "structuredContent равен false",
        {"content": [_text("flag is off")], "structuredContent": False},
    ),
    (
        "structuredContent that is an empty object",
        "structuredContent — пустой объект",
        {"content": [_text("no fields")], "structuredContent": {}},
    ),
    (
        "structuredContent: None",
        "structuredContent: None",
        {"content": [_text("nothing structured")], "structuredContent": None},
    ),
    ("Cyrillic text", "текст кириллицей", {"content": [_text("Снег, −3 °C")]}),
    (
        "a Cyrillic error",
        "ошибка кириллицей",
        {"content": [_text("Нет прогноза для города «Париж».")], "isError": True},
    ),
    ("two text blocks", "два текстовых блока", {"content": [_text("line one"), _text("line two")]}),
    (
        "text next to an image and a link",
        "текст рядом с картинкой и ссылкой",
        {"content": [IMAGE, _text("see the note"), LINK]},
    ),
    ("only an image", "только картинка", {"content": [IMAGE]}),
    ("an empty result", "пустой результат", {"content": []}),
    (
        "text that looks like JSON",
        "текст, похожий на JSON",
        {"content": [_text('{"city": "Oslo"}')]},
    ),
    (
        "nested structuredContent",
        "вложенный structuredContent",
        {
            "content": [_text("...")],
            "structuredContent": {"days": [{"t": 1.5}, {"t": -0.25}], "ok": True, "note": None},
        },
    ),
]


def _json_kind(text: str) -> str | None:
    """`text` as canonical JSON, or None when it is not JSON."""
    try:
        return json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return None


def _why_content(result: dict[str, Any], got: str) -> tuple[str, str]:
    """The rule a wrong answer `got` for `result` most likely broke."""
    if result.get("isError") is True:
        if not "".join(b.get("text", "") for b in result["content"] if b.get("type") == "text"):
            return (
                f'an error with no text (no "text" block, or only empty ones) gives '
                f'{{"error": "{NO_MESSAGE}"}}',
                f'ошибка без текста (нет блоков "text" или они пустые) даёт '
                f'{{"error": "{NO_MESSAGE}"}}',
            )
        try:
            keys = sorted(json.loads(got)) if type(json.loads(got)) is dict else None
        except (ValueError, RecursionError):
            keys = None
        if keys is not None and "error" in keys and keys != ["error"]:
            return (
                'the content of an error is an object with the one key "error" (no other keys)',
                'content ошибки — объект с одним ключом "error" (и без других ключей)',
            )
        if keys == ["error"]:
            return (
                'the error\'s text is the "text" of the blocks whose type is "text", joined by '
                '"\\n"; other blocks add nothing, not even an empty line',
                'текст ошибки — поле "text" тех блоков, у которых type равен "text", через "\\n"; '
                "прочие блоки ничего не добавляют, даже пустой строки",
            )
        return (
            'isError wins over everything else: json.dumps({"error": <the text blocks joined '
            'by "\\n">})',
            'isError важнее всего остального: json.dumps({"error": <текстовые блоки через "\\n">})',
        )
    if "structuredContent" in result and result["structuredContent"] is not None:
        return (
            "structuredContent is sent as its json.dumps, even when it is 0, false, an empty "
            "object or a string",
            "structuredContent отправляется как его json.dumps, даже если это 0, false, "
            "пустой объект или строка",
        )
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    if len(texts) > 1 and got in (texts[0], texts[-1]):
        return (
            'otherwise the text of every "text" block, joined by "\\n", not of one block',
            'иначе текст всех блоков "text" через "\\n", а не одного блока',
        )
    if got.strip() == "\n".join(texts).strip() or got == "\n".join(t.strip() for t in texts):
        return (
            'otherwise the "text" of every "text" block exactly as it is, joined by "\\n": no '
            "strip, the spaces and newlines at the edges are the tool's",
            'иначе поле "text" каждого блока "text" ровно как есть, через "\\n": без strip, '
            "пробелы и переводы строк по краям — часть ответа инструмента",
        )
    if got == "\n".join(t for t in texts if t):
        return (
            'otherwise every "text" block joined by "\\n", exactly as it is: an empty text '
            "block still adds its line",
            'иначе все блоки "text" через "\\n", ровно как есть: пустой текстовый блок тоже '
            "добавляет свою строку",
        )
    return (
        'otherwise the text of the "text" blocks joined by "\\n"; other blocks are left out',
        'иначе текст блоков "text" через "\\n"; прочие блоки не попадают',
    )


@exercise
def check_result_content(result_content: Any) -> None:
    """Exercise 2: a tools/call result (JSON data) as the content of a tool message."""
    a_function(result_content, "result_content")
    for case_en, case_ru, result in RESULT_CASES:
        expected = tool_content(result)
        got = call_student(
            result_content, json.loads(json.dumps(result)), case=(f"'{case_en}'", f"«{case_ru}»")
        )
        if type(got) is not str:
            raise NotYet(
                f"for '{case_en}' return a str (the tool message's content), not "
                f"{shorten(got, 60)}.",
                f"для варианта «{case_ru}» верните str (content сообщения с результатом), а не "
                f"{shorten(got, 60)}.",
            )
        got = str(got)
        as_json = result.get("isError") is True or result.get("structuredContent") is not None
        same = _json_kind(got) == _json_kind(expected) if as_json else got == expected
        if not same:
            why_en, why_ru = _why_content(result, got)
            shown_en = [shorten(v, n) for v, n in ((result, 120), (expected, 80))]
            raise NotYet(
                f"for '{case_en}' {shown_en[0]} expected {shown_en[1]}, got "
                f"{shorten(got, 80)}: {why_en}.",
                f"для варианта «{case_ru}» {shorten(result, 120)} ожидалось "
                f"{shorten(expected, 80)}, а получено {shorten(got, 80)}: {why_ru}.",
            )
