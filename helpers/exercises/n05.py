"""Self-checks for lesson 05 (Qwen): parsing Hermes calls by hand, spotting unparsed calls."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    NAMES,
    VALUES,
    Case,
    Explain,
    NotYet,
    as_tuples,
    call_student,
    case_of,
    exercise,
    generated_arguments,
    mismatch,
    name_and_arguments,
    on_battery,
    returned,
    seeded,
    shorten,
)
from helpers.formats import parse_hermes, render_hermes_tool_calls, render_kimi_tool_calls
from helpers.formats._common import tool_call_dict


def _calls(*pairs: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped calls with Kimi-style ids, for rendering sample texts."""
    return [
        tool_call_dict(f"functions.{n}:{i}", n, json.dumps(a)) for i, (n, a) in enumerate(pairs)
    ]


BEIJING = ("get_weather", {"city": "Beijing"})
SF_NOW = ("get_current_temperature", {"location": "San Francisco, CA, USA"})
SF_TOMORROW = ("get_temperature_date", {"location": "San Francisco, CA, USA", "date": "2024-10-01"})


HERMES_MISTAKES = (
    Explain(
        KeyError,
        r"^'(?!(?:name|arguments)'$)([^']+)'$",
        'the JSON of a Hermes block has exactly two keys, "name" and "arguments" (it is not '
        'OpenAI\'s shape with "function"), so there is no {0!r} in it.',
        'в JSON блока Hermes ровно два ключа, "name" и "arguments" (это не формат OpenAI с '
        '"function"), поэтому ключа {0!r} в нём нет.',
    ),
    Explain(
        json.JSONDecodeError,
        r"Extra data",
        "json.loads got the text of two calls at once: a greedy .* runs on to the last "
        "</tool_call>; use the non-greedy .*? so that each block stops at its own end tag.",
        "в json.loads попал текст сразу двух вызовов: жадный .* доходит до последнего "
        "</tool_call>; возьмите нежадный .*?, чтобы каждый блок кончался на своём теге.",
    ),
    Explain(
        json.JSONDecodeError,
        r"Expecting value: line 1 column 1 ",
        "json.loads got more than the JSON between <tool_call> and </tool_call>: strip the "
        "tags and the newlines around the object.",
        "в json.loads попало больше, чем JSON между <tool_call> и </tool_call>: отрежьте теги "
        "и переводы строк вокруг объекта.",
    ),
    Explain(
        json.JSONDecodeError,
        r".",
        "json.loads got a piece of the block's JSON, not all of it: a regular expression "
        "cannot match nested braces, so decode the whole text between the tags with json.loads.",
        "в json.loads попал только кусок JSON из блока: регулярное выражение не может найти "
        "вложенные скобки, поэтому раскодируйте через json.loads весь текст между тегами.",
    ),
)

UNPARSED_MISTAKES = (
    Explain(
        TypeError,
        r"'NoneType' has no len\(\)|'NoneType' object is not iterable",
        "tool_calls is None in a message without calls (the SDK writes it so): treat None as no "
        'calls, e.g. not message.get("tool_calls").',
        "в сообщении без вызовов tool_calls равен None (так его пишет SDK): считайте None "
        'отсутствием вызовов, например not message.get("tool_calls").',
    ),
    Explain(
        TypeError,
        r"NoneType",
        "content is None in a message that carries only tool_calls: read it as "
        'message.get("content") or "".',
        "в сообщении только с tool_calls content равен None: читайте его как "
        'message.get("content") or "".',
    ),
)


def hermes_cases() -> dict[str, str]:
    """Qwen raw outputs for exercise 1."""
    return {
        "one call": render_hermes_tool_calls(_calls(BEIJING)),
        "text before the calls": render_hermes_tool_calls(
            _calls(SF_NOW, SF_TOMORROW), "Let me check both."
        ),
        "no calls": "It is 26.1 °C in San Francisco now.",
        "the same call twice": render_hermes_tool_calls(_calls(BEIJING, BEIJING)),
    }


# Values without a call tag inside (Qwen's parser reads "<tool_call>" in a string as a new block)
PLAIN_VALUES = tuple(v for v in VALUES if "tool_call" not in v)


def _generated_calls(rng: Any) -> list[dict[str, Any]]:
    """Zero to three calls with names with digits, dashes and dots and varied arguments."""
    pairs = [
        (rng.choice(NAMES), generated_arguments(rng, PLAIN_VALUES))
        for _ in range(rng.randint(0, 3))
    ]
    return _calls(*pairs)


def hermes_battery() -> list[Case]:
    """Qwen outputs (seeded): text before the blocks or not, zero to three blocks, '<', '>',
    marker-like text, Cyrillic and emoji inside the arguments, nested values."""
    rng = seeded("n05 hermes_calls")
    out = []
    for _ in range(22):
        content = rng.choice(["", "Let me check.", "Сейчас проверю 🌧️", "A <b>bold</b> plan:\n"])
        calls = _generated_calls(rng)
        if rng.random() < 0.4:  # a model that pretty-prints: the JSON spans several lines
            blocks = [
                "<tool_call>\n"
                + json.dumps(
                    {
                        "name": c["function"]["name"],
                        "arguments": json.loads(c["function"]["arguments"]),
                    },
                    indent=2,
                    ensure_ascii=False,
                )
                + "\n</tool_call>"
                for c in calls
            ]
            text = content + "\n".join(blocks)
        else:
            text = render_hermes_tool_calls(calls, content)
        text = text or content or "Sunny."
        out.append(case_of(text))
    return out


def no_argument_battery() -> list[Case]:
    """Calls of a tool without parameters: their arguments are `{}`, alone or beside others."""
    now = ("get_time", {})
    return [
        case_of(render_hermes_tool_calls(_calls(now))),
        case_of(render_hermes_tool_calls(_calls(BEIJING, now), "Сейчас проверю.")),
    ]


def unparsed_battery() -> list[Case]:
    """Assistant messages (seeded): Kimi or Qwen markup anywhere in content or only words that
    look like it, tool_calls missing, None, [] or parsed."""
    rng = seeded("n05 has_unparsed_calls")
    out = []
    for _ in range(24):
        calls = _generated_calls(rng) or _calls(BEIJING)
        markup = rng.choice([render_kimi_tool_calls, render_hermes_tool_calls, None])
        before = rng.choice(["", "Let me check. ", "Проверю.\n", "I used no tool_call here. "])
        content = before + (markup(calls) if markup else rng.choice(PLAIN_VALUES))
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        pick = rng.randrange(4)
        if pick:
            message["tool_calls"] = [None, [], calls][pick - 1]
        out.append(case_of(message))
    # cut off by max_tokens inside a call (no closing marker), and an answer that names Qwen's
    # other tags in its text
    kimi, hermes = (
        render(_calls(BEIJING)) for render in (render_kimi_tool_calls, render_hermes_tool_calls)
    )
    for content, calls in (
        (kimi[: kimi.index("Beijing")], []),
        (hermes[: hermes.index("Beijing")], None),
        (
            "Qwen's prompt lists the tools inside <tools></tools>; results come in "
            "<tool_response>.",
            [],
        ),
    ):
        out.append(case_of({"role": "assistant", "content": content, "tool_calls": calls}))
    return out


def _unparsed(message: dict[str, Any]) -> bool:
    content = message.get("content") or ""
    markup = "<|tool_call_begin|>" in content or "<tool_call>" in content
    return markup and not message.get("tool_calls")


def _hermes_mismatch(name: str, expected: list[Any], got: Any) -> NotYet:
    """Expected and got for one case, and what the difference most likely means."""
    name_ru = CASE_RU[name]
    head_en = f"for '{name}' expected {expected}, got {got!r}. "
    head_ru = f"для варианта «{name_ru}» ожидалось {expected}, получено {got!r}. "
    if not isinstance(got, list):
        return NotYet(
            head_en + "Return a list of (name, arguments) pairs.",
            head_ru + "Верните список пар (name, arguments).",
        )
    pairs = [item for item in got if isinstance(item, tuple) and len(item) == 2]
    if len(pairs) != len(got):
        return NotYet(
            head_en + "Each item is a pair: (name, arguments).",
            head_ru + "Каждый элемент — пара: (name, arguments).",
        )
    if any(isinstance(first, dict) and isinstance(second, str) for first, second in pairs):
        return NotYet(
            head_en + "Each pair is (name, arguments), the name first.",
            head_ru + "Каждая пара — (name, arguments), имя первым.",
        )
    if any(isinstance(arguments, str) for _, arguments in pairs):
        return NotYet(
            head_en + "arguments must be a dict: the block's JSON already holds an object "
            'under "arguments", so take call["arguments"] after json.loads of the block.',
            head_ru + "arguments должен быть словарём: в JSON блока под ключом "
            '"arguments" уже лежит объект, так что берите call["arguments"] после json.loads '
            "всего блока.",
        )
    if not got and expected:
        return NotYet(
            head_en + "Each call is a <tool_call>...</tool_call> block holding one JSON "
            "object, on lines of its own between the tags; none was found here.",
            head_ru + "Каждый вызов — это блок <tool_call>...</tool_call> с одним объектом "
            "JSON на отдельных строках между тегами; здесь не найдено ни одного.",
        )
    if len(got) < len(expected):
        return NotYet(
            head_en + f"{len(expected)} <tool_call> blocks, {len(got)} found: look for every "
            "block (re.findall), not only the first; two equal blocks are two calls.",
            head_ru + f"Блоков <tool_call> {len(expected)}, а найдено {len(got)}: ищите все "
            "блоки (re.findall), а не только первый; два одинаковых блока — это два вызова.",
        )
    if len(got) > len(expected):
        return NotYet(
            head_en + "More pairs than <tool_call> blocks: read only what stands between "
            "<tool_call> and </tool_call>.",
            head_ru + "Пар больше, чем блоков <tool_call>: читайте только то, что стоит между "
            "<tool_call> и </tool_call>.",
        )
    return NotYet(
        head_en + 'Each pair is (call["name"], call["arguments"]) of one block, in order.',
        head_ru + 'Каждая пара — (call["name"], call["arguments"]) одного блока, по порядку.',
    )


@exercise
def check_hermes_calls(hermes_calls: Callable[[str], Any]) -> None:
    """Exercise 1: (name, arguments dict) pairs equal to what `parse_hermes` finds."""
    for name, text in hermes_cases().items():
        expected = name_and_arguments(parse_hermes(text).tool_calls)
        got = call_student(
            hermes_calls, text, explain=HERMES_MISTAKES, case=(f"'{name}'", CASE_RU[name])
        )
        got = as_tuples(
            returned(got, "hermes_calls(...)", ("a list of pairs", "список пар")), items=True
        )
        if got != expected:
            raise _hermes_mismatch(name, expected, got)
    on_battery(
        hermes_calls,
        lambda text: name_and_arguments(parse_hermes(text).tool_calls),
        hermes_battery(),
        name="hermes_calls",
        wanted=("a list of (name, arguments) pairs", "список пар (name, arguments)"),
        explain=HERMES_MISTAKES,
        idea=(
            "Every <tool_call> block is one call, wherever it stands, and its JSON may hold any "
            "text, also '<', '>' and other languages.",
            "Каждый блок <tool_call> — это один вызов, где бы он ни стоял, а в его JSON может "
            "быть любой текст, в том числе '<', '>' и другие языки.",
        ),
        more=(
            (
                no_argument_battery(),
                (
                    "A tool without parameters is called with empty arguments {}: it is a call "
                    "all the same, and its arguments are {}.",
                    "Инструмент без параметров вызывают с пустыми аргументами {}: это такой же "
                    "вызов, и его arguments — {}.",
                ),
            ),
        ),
    )


def unparsed_cases() -> list[tuple[str, str, dict[str, Any], bool]]:
    """(description, Russian description, assistant message, expected answer) for exercise 2."""
    kimi_text = render_kimi_tool_calls(_calls(BEIJING))
    qwen_text = render_hermes_tool_calls(_calls(BEIJING))
    parsed = _calls(BEIJING)
    return [
        (
            "Kimi-K2 markers in content, no tool_calls",
            "маркеры Kimi-K2 в content, tool_calls нет",
            {"content": kimi_text},
            True,
        ),
        (
            "Qwen <tool_call> in content, tool_calls: []",
            "<tool_call> от Qwen в content, tool_calls: []",
            {"content": qwen_text, "tool_calls": []},
            True,
        ),
        ("a plain answer", "обычный ответ", {"content": "It's sunny in Beijing today."}, False),
        (
            "an answer that merely mentions the word tool_call",
            "ответ, где слово tool_call просто упомянуто",
            {"content": "I answered without a tool_call: it's sunny in Beijing."},
            False,
        ),
        (
            "content None with parsed tool_calls",
            "content равен None, tool_calls разобраны",
            {"content": None, "tool_calls": parsed},
            False,
        ),
        (
            "call markers in content, but the server parsed the calls too",
            "маркеры вызова в content, но сервер тоже разобрал вызовы",
            {"content": kimi_text, "tool_calls": parsed},
            False,
        ),
        (
            "text before calls the server parsed",
            "текст перед вызовами, которые сервер разобрал",
            {"content": "Let me check.", "tool_calls": parsed},
            False,
        ),
    ]


def _unparsed_reason(message: dict[str, Any], expected: bool) -> tuple[str, str]:
    """Why a case expects True or False, in both languages."""
    if expected:
        return (
            "content holds call markup and tool_calls is empty: the server left the call unparsed.",
            "В content есть разметка вызова, а tool_calls пуст: сервер не разобрал вызов.",
        )
    if message.get("tool_calls"):
        return (
            "tool_calls is not empty: the server parsed the calls, whatever content says.",
            "tool_calls не пуст: сервер разобрал вызовы, что бы ни было в content.",
        )
    return (
        "This content has no call markup: look for the markers themselves "
        "(<tool_call>, <|tool_call_begin|>), not for a word that text may contain.",
        "В этом content нет разметки вызова: ищите сами маркеры (<tool_call>, "
        "<|tool_call_begin|>), а не слово, которое может встретиться в тексте.",
    )


@exercise
def check_unparsed(has_unparsed_calls: Callable[[dict[str, Any]], Any]) -> None:
    """Exercise 2: True exactly when call markup sits in `content` and `tool_calls` is empty."""
    for description, description_ru, message, expected in unparsed_cases():
        given = {"role": "assistant", **copy.deepcopy(message)}
        got = call_student(
            has_unparsed_calls,
            given,
            explain=UNPARSED_MISTAKES,
            case=(description, description_ru),
        )
        if given != {"role": "assistant", **message}:
            raise NotYet(
                f"has_unparsed_calls changed the message it was given ({description}; now "
                f"{shorten(given, 100)}): the loop sends this message back in its next request, "
                "so read it without changing it.",
                f"has_unparsed_calls изменила полученное сообщение ({description_ru}; теперь "
                f"{shorten(given, 100)}): цикл отправит это сообщение обратно в следующем "
                "запросе, поэтому читайте его, не изменяя.",
            )
        got = returned(got, "has_unparsed_calls(...)", ("True or False", "True или False"))
        why_en, why_ru = _unparsed_reason(message, expected)
        case = (f"{description}:", f"{description_ru}:")
        if not isinstance(got, bool):
            why_en, why_ru = (
                ": return a real bool (True or False), e.g. with bool(...).",
                ": верните именно bool (True или False), например через bool(...).",
            )
            raise mismatch(case, expected, got, (why_en, why_ru))
        if got != expected:
            raise mismatch(case, expected, got, (f". {why_en}", f". {why_ru}"))
    on_battery(
        has_unparsed_calls,
        _unparsed,
        unparsed_battery(),
        name="has_unparsed_calls",
        wanted=("True or False", "True или False"),
        explain=UNPARSED_MISTAKES,
        idea=(
            "Call markup may stand anywhere in content, after any text; and when tool_calls is "
            "not empty the server has parsed the calls.",
            "Разметка вызова может стоять в content где угодно, после любого текста; а если "
            "tool_calls не пуст, сервер уже разобрал вызовы.",
        ),
    )
