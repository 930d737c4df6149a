"""Self-checks for lesson 07 (Qwen today): XML calls by hand, typed values, the think block."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    NAMES,
    SHOULD_BE,
    Case,
    Explain,
    as_tuples,
    call_student,
    case_of,
    exercise,
    mismatch,
    name_and_arguments,
    on_battery,
    returned,
    seeded,
    strict_equal,
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


def _values(calls: Any) -> list[Any] | None:
    """Every parameter value of plain (name, {key: value}) pairs, or None for another shape."""
    if not isinstance(calls, list):
        return None
    out = []
    for item in calls:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[1], dict)):
            return None
        out += list(item[1].values())
    return out


def _longer(got: Any, expected: Any) -> bool:
    """Some value of `got` is longer than the same value of `expected` (extra whitespace)."""
    mine, theirs = _values(got), _values(expected)
    return bool(mine and theirs) and any(
        len(str(a)) > len(str(b)) for a, b in zip(mine, theirs, strict=False)
    )


XML_VALUES = ("Paris", "Москва ☀️", "a < b > c", "  indented", "x = 1\n    y = 2", "3", "true", "")


def xml_battery() -> list[Case]:
    """Qwen3.5 outputs (seeded): text before the calls, one to three calls, names with digits,
    dashes and dots, values with '<', '>', Cyrillic, emoji, newlines and edge spaces."""
    rng = seeded("n07 xml_calls")
    out = []
    for _ in range(22):
        calls = [
            _call(
                rng.choice(NAMES),
                {
                    k: rng.choice(XML_VALUES)
                    for k in rng.sample(["city", "text", "days", "q"], rng.randint(1, 3))
                },
            )
            for _ in range(rng.randint(1, 3))
        ]
        out.append(case_of(_render(calls, rng.choice(["", "Checking.", "Проверю 🌦️"]))))
    # a value whose own text starts and ends with a newline: only the format's newline goes
    blank = _call("save_note", {"text": "\nafter a blank line\n"})
    return [case_of(_render([blank])), *out]


def bare_call_battery() -> list[Case]:
    """A tool without parameters: its <function=...> block holds no <parameter> at all."""
    now = _call("get_time", {})
    return [
        case_of(_render([now])),
        case_of(_render([_call("get_forecast", {"city": "Paris"}), now], "Проверю.")),
    ]


def dashed_key_battery() -> list[Case]:
    """Parameter names with '-' and '.', as a function's name may have them."""
    calls = [_call("search-v2", {"max-results": "5", "q": "Москва"})]
    return [
        case_of(_render(calls)),
        case_of(_render([_call("weather.today", {"geo.city": "Oslo", "days": "2"})])),
    ]


THINK_BATTERY = (
    "<think>think about Paris first.</think>Paris is sunny.",
    "<think>\nhistory says Paris\n</think>\n\nParis is sunny.",
    "<think>kind request; <b>bold</b> not needed</think>\n\nOK",
    "<think>\n>quoted</think>\n\nOK",
    "thinking about it\n</think>\n\nParis is sunny.",
    "<think>\nПользователь спрашивает про Москву 🌨️\n</think>\n\nВ Москве снег.",
    "<think></think>Paris is sunny.",
    "  Paris is sunny.  ",
    "<think>\nTwo steps.\n</think>\n\nFirst line.\n\nSecond line.\n",
    "ink and tea\n</think>\nAnswer.",
    "<think>\n\tindented\n</think>\t Answer \t",
)


def think_battery() -> list[Case]:
    """THINK_BATTERY and generated texts (seeded): the block whole, opened by the prompt or
    absent; reasoning that starts with letters of "<think>"; Cyrillic; whitespace at the edges."""
    rng = seeded("n07 split_think")
    texts = list(THINK_BATTERY)
    for _ in range(12):
        reasoning = rng.choice(["think twice", "kin", "Нужно проверить", "> quoted", ""])
        answer = rng.choice(["Paris is sunny.", "В Москве снег ❄️", "a\n\nb", ""])
        pad = rng.choice(["", "\n", "\n\n", " "])
        opened = rng.choice(["<think>", ""])
        texts.append(f"{opened}{pad}{reasoning}{pad}</think>{pad}{answer}{pad}")
    return [case_of(text) for text in texts]


@exercise
def check_xml_calls(xml_calls: Callable[[str], Any]) -> None:
    """Exercise 1: (name, {parameter: text}) pairs, as `parse_qwen_xml` reads them without tools."""
    for case, text in xml_cases().items():
        expected = name_and_arguments(parse_qwen_xml(text).tool_calls)
        got = call_student(xml_calls, text, case=(f"'{case}'", CASE_RU[case]))
        got = as_tuples(
            returned(got, "xml_calls(...)", ("a list of pairs", "список пар")), items=True
        )
        if got == expected:
            continue
        why = (".", ".")
        texts = _values(got)
        if texts is not None and any(not isinstance(v, str) for v in texts):
            why = (
                ": without the tools' schema every value stays the text between the tags; "
                "typing values is exercise 2's job.",
                ": без схемы инструментов каждое значение остаётся текстом между тегами; "
                "типы значений — задача упражнения 2.",
            )
        elif _strip_values(got) == _strip_values(expected) and _longer(got, expected):
            why = (
                ": a value kept the newline the format puts after <parameter=KEY> or before "
                "</parameter>; that newline belongs to the format, not to the value.",
                ": в значении остался перевод строки, который формат ставит после "
                "<parameter=KEY> или перед </parameter>; он часть формата, а не значения.",
            )
        elif _strip_values(got) == _strip_values(expected):
            why = (
                ": the value lost its own spaces or newlines. Cut exactly one newline after "
                "<parameter=KEY> and one before </parameter>; .strip() removes more than that.",
                ": значение потеряло собственные пробелы или переводы строк. Отрежьте ровно "
                "один перевод строки после <parameter=KEY> и один перед </parameter>; "
                ".strip() убирает больше.",
            )
        raise mismatch(variant(case), expected, got, why)
    on_battery(
        xml_calls,
        lambda text: name_and_arguments(parse_qwen_xml(text).tool_calls),
        xml_battery(),
        name="xml_calls",
        wanted=(
            "a list of (name, {parameter: text}) pairs",
            "список пар (name, {параметр: текст})",
        ),
        idea=(
            "Each <function=...> block is one call; a value is exactly the text between its "
            "tags minus the one newline on each side the format adds.",
            "Каждый блок <function=...> — один вызов; значение — это ровно текст между его "
            "тегами без одного перевода строки с каждой стороны, который добавляет формат.",
        ),
        more=(
            (
                bare_call_battery(),
                (
                    "A tool without parameters is called with a <function=...> block that has no "
                    "<parameter> inside: it is a call all the same, with the parameters {}.",
                    "Инструмент без параметров вызывают блоком <function=...>, в котором нет ни "
                    "одного <parameter>: это такой же вызов, с параметрами {}.",
                ),
            ),
            (
                dashed_key_battery(),
                (
                    "A parameter's name, like a function's, may hold '-' and '.': it is all the "
                    "text between <parameter= and >.",
                    "В имени параметра, как и в имени функции, бывают '-' и '.': имя — весь "
                    "текст между <parameter= и >.",
                ),
            ),
        ),
    )


TYPED_BATTERY: list[tuple[str, str]] = [
    ("0", "integer"),
    ("-0", "integer"),
    ("42", "number"),
    ("-3.25", "number"),
    ("1e3", "number"),
    ("TRUE", "boolean"),
    ("false", "boolean"),
    ("False", "boolean"),
    ("1", "boolean"),
    ("nUll", "boolean"),
    ("null", "number"),
    ("NULL", "integer"),
    ("Москва", "string"),
    ("3.0", "integer"),
    ("007", "integer"),
    ("2.50", "number"),
    ("true", "string"),
    ("12", "string"),
    ("x1", "number"),
    ("", "string"),
    ("☀️", "string"),
    ("inf", "number"),
    ("1.234", "number"),  # three decimals: float() keeps them all
]


def _same_typed(expected: Any, got: Any) -> bool:
    """The reference's value, or for a word float() reads as infinity ("inf") that float: vLLM
    keeps the text, the lesson's rule (float() converts it) gives the float; both are fine."""
    if strict_equal(expected, got):
        return True
    return isinstance(expected, str) and type(got) is float and math.isinf(got)


TYPED_MISTAKES = (
    Explain(
        OverflowError,
        r"infinity",
        "this text is infinity for float(), which is not a whole number, and int() of "
        "infinity raises: ask the float whether it is whole before making it an int.",
        "для float() этот текст — бесконечность, а она не целое число, и int() от "
        "бесконечности выбрасывает исключение: спросите у float, целое ли оно, прежде чем "
        "делать из него int.",
    ),
)


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
    ("  two spaces  ", "string"),
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
        got = returned(
            got, f"typed({value!r}, {kind!r})", ("a typed value", "значение нужного типа")
        )
        if got != expected or type(got) is not type(expected):
            why_en, why_ru = _typed_reason(value, kind, expected, got)
            call = f"typed({value!r}, {kind!r})"
            raise mismatch((call, call), expected, got, (f". {why_en}", f". {why_ru}"), SHOULD_BE)
    on_battery(
        typed,
        lambda value, kind: convert_parameter(value, "x", {"x": {"type": kind}})[0],
        [case_of(value, kind) for value, kind in TYPED_BATTERY],
        name="typed",
        wanted=("a typed value", "значение нужного типа"),
        explain=TYPED_MISTAKES,
        same=_same_typed,
        idea=_typed_reason,  # the rule of the case at hand, as for the cases above
    )


THINK_CASES: dict[str, str] = {
    "a whole block": "<think>\nThe user wants Paris.\n</think>\n\nParis is sunny.",
    "the prompt opened it": "The user wants Paris.\n</think>\n\nParis is sunny.",
    "no thinking": "Paris is sunny.",
    "empty block": "<think>\n\n</think>\n\nParis is sunny.",
    "no thinking, newlines around the answer": "\n\nParis is sunny.\n",
    "reasoning in two paragraphs": (
        "<think>\nStep 1: Paris.\n\nStep 2:  check   Oslo.\n</think>\n\nOK"
    ),
}


# Answers that mention a tag themselves (the answer explains the format)
TAG_IN_THE_ANSWER = (
    "<think>Check Paris.</think>The tag </think> closes the reasoning block.",
    "<think>Check the tags.</think>Type <think> to open a reasoning block.",
)


# An output cut off inside the block (max_tokens): the exercise's rule, no </think> means no
# reasoning, as the lesson's solution and vLLM's qwen3 reasoning parser read it
CUT_OFF_IN_THE_BLOCK = "<think>\nStill weighing Paris against"


# Outputs with whitespace before the opening tag: it is still the leading <think>
OPENED_AFTER_SPACE = (
    "\n<think>\nParis first.\n</think>\n\nParis is sunny.",
    " <think>Проверю Москву.</think> В Москве снег.",
)


def _split(text: str) -> tuple[str, str]:
    if "</think>" not in text:
        return "", text.strip()
    result = parse_hermes(text)
    return result.reasoning, result.content


@exercise
def check_split_think(split_think: Callable[[str], Any]) -> None:
    """Exercise 3: (reasoning, answer), both stripped, as `parse_hermes` splits them."""
    for case, text in THINK_CASES.items():
        result = parse_hermes(text)
        expected = (result.reasoning, result.content)
        got = call_student(split_think, text, case=(f"'{case}'", CASE_RU[case]))
        got = as_tuples(returned(got, "split_think(...)", ("a pair of strings", "пара строк")))
        if got == expected:
            continue
        why = (".", ".")
        if isinstance(got, tuple) and len(got) == 2 and got[1] == expected[1] and got[0]:
            why = (
                ": only the edges of the reasoning are stripped; its inner newlines, blank lines "
                "and spaces stay as the model wrote them.",
                ": у рассуждения срезаются только края; переводы строк, пустые строки и пробелы "
                "внутри остаются такими, как их написала модель.",
            )
        if isinstance(got, tuple) and tuple(str(x).strip() for x in got) == expected:
            why = (
                ": strip both parts, also when the text has no </think>.",
                ": уберите пробелы и переводы строк по краям обеих частей, даже когда "
                "</think> в тексте нет.",
            )
        raise mismatch(variant(case), expected, got, why)
    on_battery(
        split_think,
        _split,
        [case_of(text) for text in TAG_IN_THE_ANSWER],
        name="split_think",
        wanted=("a pair of strings", "пара строк"),
        idea=(
            "The reasoning ends at the first </think>; everything after it is the answer, a tag "
            "the answer itself mentions included.",
            "Рассуждение заканчивается на первом </think>; всё после него — ответ, вместе с "
            "тегом, который упоминает сам ответ.",
        ),
        more=[
            (
                [case_of(CUT_OFF_IN_THE_BLOCK)],
                (
                    "Without </think> there is no reasoning, even after an opening <think> (an "
                    "output cut off inside the block): the whole text is the answer.",
                    "Без </think> рассуждения нет, даже после открывающего <think> (вывод "
                    "оборвался внутри блока): весь текст — это ответ.",
                ),
            ),
            (
                think_battery(),
                (
                    "<think> and </think> are whole tags: remove them as tags, not as sets of "
                    "characters, and strip only the edges of the two parts.",
                    "<think> и </think> — целые теги: убирайте их как теги, а не как набор "
                    "символов, и срезайте пробелы только по краям двух частей.",
                ),
            ),
            (
                [case_of(text) for text in OPENED_AFTER_SPACE],
                (
                    "The text may have spaces or newlines before <think>: the tag still opens the "
                    "block, and it is no part of the reasoning.",
                    "Перед <think> в начале текста могут стоять пробелы или переводы строк: тег "
                    "всё равно открывает блок и в рассуждение не входит.",
                ),
            ),
        ],
    )
