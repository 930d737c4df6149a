"""Every exercise of the series against a table of wrong answers.

Each row is a plausible wrong answer (most were tried by a student working through the student
edition) and the words its hint must contain in English and in Russian, so a hint names the case
instead of printing a bare "expected ... got ...". The reference solutions are not copies: they are
read from the lessons' hidden solution cells and must be accepted. A new `check_*` function fails
`test_every_exercise_has_three_wrong_answers` until it has rows here.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from exercise_answers import (
    GOOD_ENV,
    REPLY,
    convert,
    glue_to_latest,
    guide_assemble,
    no_function_guard,
    normalize_calls_only,
    normalize_counter_per_message,
    normalize_in_place,
    reasoning_moonshot_only,
    reasoning_unguarded,
    renamed,
    repair_after,
    repair_in_place,
    repair_without_calls,
    schema_with,
    solution,
    untyped,
)
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers import guide_extract_tool_call_info
from helpers.exercises import n00, n01, n02, n03, n04, n05, n06, n07

MODULES = (n00, n01, n02, n03, n04, n05, n06, n07)


@dataclass(frozen=True)
class Row:
    """One exercise (`check`) given `answer`; the hint must contain `en` and `ru`."""

    check: Callable[..., Any]
    answer: Callable[[], tuple[Any, ...]]
    en: str
    ru: str
    label: str


def row(check, answer, en, ru, label) -> Row:
    """A wrong answer: `answer` is the one argument of `check`."""
    return Row(check, lambda: (answer,), en, ru, label)


# --- wrong answers ---------------------------------------------------------------------------------


@renamed
def returns_text(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    return f"{convert(value, to_unit)} degrees"


@renamed
def choices_not_json(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: [celsius, fahrenheit])
    """
    return convert(value, to_unit)


@renamed
def no_summary(value: float, to_unit: str) -> float:
    """
    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    return convert(value, to_unit)


def _tool_message_instead(tool_call, tool_map):
    """Builds lesson 02's tool message instead of returning the function's result."""
    arguments = json.loads(tool_call["function"]["arguments"])
    result = tool_map[tool_call["function"]["name"]](**arguments)
    return {"role": "tool", "tool_call_id": tool_call["id"], "content": json.dumps(result)}


def _answer_one(message, tool_map, *, dumps=json.dumps, call_id=lambda c: c["id"]):
    results = []
    for tool_call in message["tool_calls"]:
        arguments = json.loads(tool_call["function"]["arguments"])
        result = tool_map[tool_call["function"]["name"]](**arguments)
        results.append(
            {
                "role": "tool",
                "tool_call_id": call_id(tool_call),
                "name": tool_call["function"]["name"],
                "content": dumps(result),
            }
        )
    return results


def _constant_error(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception:
        return json.dumps({"error": "bad"})


def _json_errors_only(function, arguments_text):
    try:
        arguments = json.loads(arguments_text)
    except json.JSONDecodeError as error:
        return json.dumps({"error": str(error)})
    return json.dumps(function(**arguments))


def _error_as_dict(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return {"error": str(error)}


def _usage_from_first_choice(chunks):
    return sum(1 for c in chunks if c.choices[0].delta.content is not None)


def _extract_without(flags: int):
    """Lesson 04's reference extractor compiled with other flags (0: without re.DOTALL)."""
    pattern = re.compile(solution("04", "CALL_RE").pattern, flags)
    name_from_id = solution("04", "name_from_id")

    def extract(text):
        return [
            {
                "id": m["id"],
                "type": "function",
                "function": {"name": name_from_id(m["id"]), "arguments": m["arguments"]},
            }
            for m in pattern.finditer(text)
        ]

    return extract


def _without_type(text):
    return [
        {k: v for k, v in call.items() if k != "type"}
        for call in solution("04", "extract_tool_calls")(text)
    ]


def _hermes_arguments_as_text(text):
    return [(n, json.dumps(a)) for n, a in solution("05", "hermes_calls")(text)]


def _hermes_first_only(text):
    return solution("05", "hermes_calls")(text)[:1]


def _hermes_greedy(text):
    calls = []
    for block in re.findall(r"<tool_call>(.*)</tool_call>", text, re.DOTALL):
        call = json.loads(block)
        calls.append((call["name"], call["arguments"]))
    return calls


def _for_history_renames(message):
    kept = {"role": "assistant", "content": message.get("content")}
    text = message.get("reasoning_content") or message.get("reasoning")
    if text:
        kept["reasoning_content"] = text
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    return kept


def _for_history_drops_content(message):
    kept = solution("06", "for_history")(message)
    kept.pop("content", None)
    kept["content"] = "Done." if kept.get("tool_calls") else None
    return kept


def _reasoning_attribute(chunks):
    """Reads `.reasoning_content` as a declared attribute: the SDK's delta has no such field."""
    text = "".join(c.choices[0].delta.reasoning_content or "" for c in chunks if c.choices)
    return "reasoning_content", text


def _xml_stripped(text):
    return [
        (
            name,
            {
                k: v.strip()
                for k, v in re.findall(r"<parameter=(.*?)>(.*?)</parameter>", body, re.DOTALL)
            },
        )
        for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL)
    ]


def _xml_without_dotall(text):
    return [
        (name, dict(re.findall(r"<parameter=(.*?)>\n(.*?)\n</parameter>", body)))
        for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL)
    ]


def _xml_first_only(text):
    return solution("07", "xml_calls")(text)[:1]


def _typed_variant(
    *, case_sensitive_null=False, int_via_float=False, bool_any=False, null_first=False
):
    def typed(value, kind):
        if kind == "string" and not null_first:
            return value
        if (value == "null") if case_sensitive_null else (value.lower() == "null"):
            return None
        try:
            if kind == "integer":
                return int(float(value)) if int_via_float else int(value)
            if kind == "number":
                number = float(value)
                return int(number) if number.is_integer() else number
        except ValueError:
            return value
        if kind == "boolean":
            return bool(value) if bool_any else value.lower() == "true"
        return value

    return typed


def _split_unstripped(text):
    if "</think>" not in text:
        return "", text
    reasoning, answer = text.split("</think>", 1)
    return reasoning.replace("<think>", "").strip(), answer.strip()


def _split_needs_open_tag(text):
    found = re.search(r"<think>(.*?)</think>(.*)", text, re.DOTALL)
    if not found:
        return "", text.strip()
    return found[1].strip(), found[2].strip()


def _split_keeps_tag(text):
    if "</think>" not in text:
        return "", text.strip()
    reasoning, answer = text.split("</think>", 1)
    return reasoning.strip(), answer.strip()


WRONG: list[Row] = [
    # --- 00 -----------------------------------------------------------------------------------
    row(
        n00.check_live_env,
        GOOD_ENV | {"LLM_MODE": "replay"},
        'LLM_MODE must be "live"',
        "с настоящей моделью",
        "00-1 replay mode",
    ),
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_BASE_URL": "https://api.moonshot.ai"},
        "/v1",
        "в адресе нужен /v1",
        "00-1 no /v1",
    ),
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_MODEL": "moonshotai/Kimi-K2-Instruct"},
        "Hugging Face repository id",
        "репозитория на Hugging Face",
        "00-1 hub repo id",
    ),
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_API_KEY": "sk-x"},
        "leave the API key out",
        "не пишите ключ",
        "00-1 key in the notebook",
    ),
    row(
        n00.check_qwen_command,
        "vllm serve Qwen/Qwen2.5-7B-Instruct",
        "--enable-auto-tool-choice",
        "добавьте --enable-auto-tool-choice",
        "00-2 no flags",
    ),
    row(
        n00.check_qwen_command,
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser kimi_k2",
        "the parser is hermes",
        "нужен парсер hermes",
        "00-2 wrong parser",
    ),
    row(
        n00.check_qwen_command,
        "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct",
        "start with: vllm serve",
        "начните с: vllm serve",
        "00-2 another engine",
    ),
    row(
        n00.check_qwen_command,
        "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct "
        "--enable-auto-tool-choice",
        "add --tool-call-parser",
        "добавьте --tool-call-parser",
        "00-2 module form without a parser",
    ),
    Row(
        n00.check_reading,
        lambda: (REPLY, REPLY.choices[0].message, "stop", 16),
        "message.content",
        "message.content",
        "00-3 the message object",
    ),
    Row(
        n00.check_reading,
        lambda: (REPLY, "Ready.", "tool_calls", 16),
        "lives on the choice",
        "лежит в choice",
        "00-3 wrong finish_reason",
    ),
    Row(
        n00.check_reading,
        lambda: (REPLY, "Ready.", "stop", 1),
        "usage.completion_tokens",
        "только часть счёта",
        "00-3 completion tokens",
    ),
    # --- 01 -----------------------------------------------------------------------------------
    row(
        n01.check_schema,
        schema_with("function.parameters.properties.to_unit.enum", None),
        "enum",
        'у to_unit должен быть "enum"',
        "01-1 no enum",
    ),
    row(
        n01.check_schema,
        schema_with("function.parameters.properties.value.type", "integer"),
        '"type": "number"',
        "должен быть",
        "01-1 integer value",
    ),
    row(
        n01.check_schema,
        schema_with("function.parameters.required", ["value"]),
        "both arguments are required",
        "оба аргумента обязательны",
        "01-1 one required",
    ),
    row(
        n01.check_schema,
        schema_with("function.parameters.properties.value.description", None),
        "description",
        "дайте 'value' описание",
        "01-1 no description",
    ),
    row(
        n01.check_call_tool,
        lambda tool_call, tool_map: tool_map[tool_call["function"]["name"]](
            json.loads(tool_call["function"]["arguments"])
        ),
        "the whole dict went into its first parameter",
        "весь словарь попал в его первый параметр",
        "01-2 the guide's positional dict",
    ),
    row(
        n01.check_call_tool,
        lambda tool_call, tool_map: tool_map[tool_call["function"]["name"]](
            **tool_call["function"]["arguments"]
        ),
        "decode it first with json.loads",
        "раскодируйте его через json.loads",
        "01-2 no json.loads",
    ),
    row(
        n01.check_call_tool,
        _tool_message_instead,
        "whole tool message",
        "целое сообщение с результатом",
        "01-2 a tool message",
    ),
    row(n01.check_typed_function, untyped, "add a type hint", "аннотацию типа", "01-3 untyped"),
    row(
        n01.check_typed_function,
        returns_text,
        "return the converted number",
        "верните число",
        "01-3 returns text",
    ),
    row(
        n01.check_typed_function,
        choices_not_json,
        "double quotes",
        "в двойных кавычках",
        "01-3 choices not JSON",
    ),
    row(
        n01.check_typed_function,
        no_summary,
        "summary line",
        "строка с общим описанием",
        "01-3 no summary line",
    ),
    # --- 02 -----------------------------------------------------------------------------------
    row(
        n02.check_needs_tools,
        lambda m, f: f == "tool_calls",
        "stop_with_calls",
        "движок stop_with_calls",
        "02-1 the guide's rule",
    ),
    row(
        n02.check_needs_tools,
        lambda m, f: "tool_calls" in m,
        "empty tool_calls list",
        "пустым списком tool_calls",
        "02-1 key present",
    ),
    row(
        n02.check_needs_tools,
        lambda m, f: f == "tool_calls" or bool(m.get("tool_calls")),
        "although finish_reason says",
        "хотя finish_reason",
        "02-1 either",
    ),
    row(
        n02.check_answer_calls,
        lambda m, t: _answer_one(m, t)[:1],
        "two tool messages",
        "нужно два сообщения",
        "02-2 first call only",
    ),
    row(
        n02.check_answer_calls,
        lambda m, t: _answer_one(m, t, dumps=str),
        "json.dumps",
        "JSON-текста",
        "02-2 content not JSON",
    ),
    row(
        n02.check_answer_calls,
        lambda m, t: _answer_one(m, t, call_id=lambda c: c["function"]["name"]),
        "tool_call_id must be the call's id",
        "tool_call_id должен быть id вызова",
        "02-2 name as id",
    ),
    row(
        n02.check_tool_content,
        _constant_error,
        "the model cannot tell",
        "модель не поймёт",
        "02-3 constant error text",
    ),
    row(
        n02.check_tool_content,
        _json_errors_only,
        "with a tool that fails",
        "когда инструмент падает",
        "02-3 only JSON errors caught",
    ),
    row(
        n02.check_tool_content,
        _error_as_dict,
        "return JSON text",
        "верните JSON-текст",
        "02-3 a dict, not JSON text",
    ),
    # --- 03 -----------------------------------------------------------------------------------
    row(
        n03.check_assemble,
        guide_assemble,
        "`choices: []`",
        "`choices: []`",
        "03-1 the guide's loop",
    ),
    row(
        n03.check_assemble,
        no_function_guard,
        "check piece.function",
        "проверьте piece.function",
        "03-1 no function guard",
    ),
    row(
        n03.check_assemble,
        glue_to_latest,
        "interleaved calls",
        "чередующиеся вызовы",
        "03-1 ignores index",
    ),
    row(n03.check_assemble, lambda chunks: [], "no tool calls", "нет вызовов", "03-1 the starter"),
    row(
        n03.check_history,
        repair_after,
        "must come right after the assistant message",
        "должно идти сразу после сообщения ассистента",
        "03-2 assistant appended last",
    ),
    row(
        n03.check_history,
        repair_in_place,
        "return a new list",
        "верните новый список",
        "03-2 changed in place",
    ),
    row(
        n03.check_history,
        repair_without_calls,
        "must come right after the assistant message",
        "должно идти сразу после",
        "03-2 assistant without calls",
    ),
    row(
        n03.check_usage,
        lambda chunks: chunks[-1].usage.total_tokens,
        "usage is None",
        "usage равно None",
        "03-3 the last chunk",
    ),
    row(
        n03.check_usage,
        _usage_from_first_choice,
        "`choices: []`",
        "`choices: []`",
        "03-3 reads choices",
    ),
    row(
        n03.check_usage, lambda chunks: 0, "total_tokens=110", "total_tokens=110", "03-3 a constant"
    ),
    # --- 04 -----------------------------------------------------------------------------------
    row(
        n04.check_name_from_id,
        lambda c: c.split(".", 1)[-1].rsplit(":", 1)[0],
        "'weather.today:3'",
        "точка здесь — часть имени",
        "04-1 text after the first dot",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.split(".")[1].split(":")[0],
        "IndexError",
        "может не быть точки",
        "04-1 the guide's expression",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.removeprefix("functions.").split(":")[0].replace("-", "_"),
        "'get-weather'",
        "'get-weather'",
        "04-1 dash replaced",
    ),
    row(
        n04.check_extract,
        _extract_without(0),
        "re.DOTALL",
        "re.DOTALL",
        "04-2 a regex without re.DOTALL",
    ),
    row(n04.check_extract, _without_type, 'has no "type"', 'нет "type"', "04-2 no type"),
    row(
        n04.check_extract,
        guide_extract_tool_call_info,
        "variant 'second section'",
        "вариант «вторая секция»",
        "04-2 the guide's parser",
    ),
    # --- 05 -----------------------------------------------------------------------------------
    row(
        n05.check_hermes_calls,
        _hermes_arguments_as_text,
        "arguments must be a dict",
        "arguments должен быть словарём",
        "05-1 arguments as text",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_first_only,
        "look for every block",
        "ищите все блоки",
        "05-1 first block only",
    ),
    row(n05.check_hermes_calls, _hermes_greedy, "non-greedy", "нежадный", "05-1 greedy regex"),
    row(
        n05.check_unparsed,
        lambda m: "tool_call" in (m.get("content") or "") and not m.get("tool_calls"),
        "merely mentions the word",
        "слово tool_call просто упомянуто",
        "05-2 the word tool_call",
    ),
    row(
        n05.check_unparsed,
        lambda m: "<tool_call>" in (m.get("content") or ""),
        "Kimi-K2 markers",
        "маркеры Kimi-K2",
        "05-2 one format only",
    ),
    row(
        n05.check_unparsed,
        lambda m: (
            "<|tool_call_begin|>" in (m.get("content") or "")
            or "<tool_call>" in (m.get("content") or "")
        ),
        "the server parsed the calls",
        "сервер разобрал вызовы",
        "05-2 ignores tool_calls",
    ),
    row(
        n05.check_unparsed,
        lambda m: (
            (
                "<tool_call>" in (m.get("content") or "")
                or "<|tool_call_begin|>" in (m.get("content") or "")
            )
            and not m.get("tool_calls")
            or None
        ),
        "real bool",
        "именно bool",
        "05-2 None for False",
    ),
    # --- 06 -----------------------------------------------------------------------------------
    row(
        n06.check_history_message,
        lambda m: {
            "role": "assistant",
            "content": m.get("content"),
            "tool_calls": m.get("tool_calls"),
        },
        "the reasoning is lost",
        "рассуждение потерялось",
        "06-1 the starter",
    ),
    row(
        n06.check_history_message,
        _for_history_renames,
        "vLLM >= 0.17",
        "vLLM >= 0.17",
        "06-1 renames vLLM's field",
    ),
    row(
        n06.check_history_message,
        _for_history_drops_content,
        "expected",
        "«Moonshot, рассуждение включено» ожидалось",
        "06-1 content replaced",
    ),
    row(
        n06.check_normalize,
        normalize_in_place,
        "return a new list",
        "верните новый список",
        "06-2 in place",
    ),
    row(
        n06.check_normalize,
        normalize_calls_only,
        "must get the new id of its call",
        "должен получить новый id своего вызова",
        "06-2 calls only",
    ),
    row(
        n06.check_normalize,
        normalize_counter_per_message,
        "the call ids should be",
        "«id в стиле OpenAI» id вызовов",
        "06-2 counter per message",
    ),
    row(
        n06.check_reasoning_of,
        reasoning_unguarded,
        "`choices: []`",
        "«vLLM и фрагмент со статистикой»",
        "06-3 the usage chunk",
    ),
    row(
        n06.check_reasoning_of,
        reasoning_moonshot_only,
        "'vLLM with a usage chunk'",
        "«vLLM и фрагмент со статистикой»",
        "06-3 Moonshot's name only",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_attribute,
        "getattr",
        "getattr",
        "06-3 an undeclared attribute",
    ),
    # --- 07 -----------------------------------------------------------------------------------
    row(
        n07.check_xml_calls,
        _xml_stripped,
        ".strip() removes more",
        ".strip() убирает больше",
        "07-1 .strip() on values",
    ),
    row(
        n07.check_xml_calls,
        _xml_without_dotall,
        "'a value over two lines'",
        "«значение на двух строках»",
        "07-1 no re.DOTALL for values",
    ),
    row(
        n07.check_xml_calls,
        _xml_first_only,
        "'text and two calls'",
        "«текст и два вызова»",
        "07-1 first call only",
    ),
    row(
        n07.check_typed,
        _typed_variant(case_sensitive_null=True),
        "in any case (NULL, Null)",
        "в любом регистре",
        "07-2 case-sensitive null",
    ),
    row(
        n07.check_typed,
        _typed_variant(null_first=True),
        'keeps "null" as its text',
        'оставляет "null" текстом',
        "07-2 null before the type",
    ),
    row(
        n07.check_typed,
        _typed_variant(int_via_float=True),
        "int(float(value)) would turn",
        "int(float(value)) превратил бы",
        "07-2 int(float(v))",
    ),
    row(
        n07.check_typed,
        _typed_variant(bool_any=True),
        'True only for "true"',
        'True только для "true"',
        "07-2 bool(value)",
    ),
    row(
        n07.check_split_think,
        _split_unstripped,
        "also when the text has no </think>",
        "даже когда </think> в тексте нет",
        "07-3 unstripped without </think>",
    ),
    row(
        n07.check_split_think,
        _split_needs_open_tag,
        "'the prompt opened it'",
        "«блок открыл промпт»",
        "07-3 needs <think>",
    ),
    row(
        n07.check_split_think,
        _split_keeps_tag,
        "'a whole block'",
        "«блок целиком»",
        "07-3 keeps the <think> tag",
    ),
]


def _reference_args(check: Callable[..., Any]) -> tuple[Any, ...]:
    """The arguments that make up the lesson's reference solution for `check`."""
    lesson = check.__module__.rsplit(".n", 1)[1]
    names = {
        "check_live_env": ("live_env",),
        "check_qwen_command": ("command",),
        "check_reading": ("reply", "text", "finish_reason", "total_tokens"),
        "check_schema": ("my_schema",),
        "check_call_tool": ("call_tool",),
        "check_typed_function": ("convert_temperature",),
        "check_needs_tools": ("needs_tools",),
        "check_answer_calls": ("answer_calls",),
        "check_tool_content": ("tool_content",),
        "check_assemble": ("assemble_tool_calls",),
        "check_history": ("repair",),
        "check_usage": ("total_tokens",),
        "check_name_from_id": ("name_from_id",),
        "check_extract": ("extract_tool_calls",),
        "check_hermes_calls": ("hermes_calls",),
        "check_unparsed": ("has_unparsed_calls",),
        "check_history_message": ("for_history",),
        "check_normalize": ("normalize_ids",),
        "check_reasoning_of": ("reasoning_of",),
        "check_xml_calls": ("xml_calls",),
        "check_typed": ("typed",),
        "check_split_think": ("split_think",),
    }[check.__name__]
    return tuple(solution(lesson, name) for name in names)


def all_checks() -> list[Callable[..., Any]]:
    """Every exercise's self-check in the series."""
    return [
        fn
        for module in MODULES
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if name.startswith("check_") and fn.__module__ == module.__name__
    ]


def test_every_exercise_has_three_wrong_answers() -> None:
    counts = {check.__name__: 0 for check in all_checks()}
    for wrong in WRONG:
        counts[wrong.check.__name__] += 1
    assert len(counts) == 22, counts
    assert {name: n for name, n in counts.items() if n < 3} == {}


@pytest.mark.parametrize("wrong", WRONG, ids=[w.label for w in WRONG])
def test_a_wrong_answer_is_rejected_with_a_hint_that_names_the_case(wrong: Row, capsys) -> None:
    out = verdict_of(capsys, wrong.check, *copy.deepcopy(wrong.answer()))
    english, russian = out.splitlines()
    assert english.startswith(NOT_YET), out
    assert wrong.en in english, out
    assert russian.startswith("Пока нет:") and wrong.ru in russian, out


@pytest.mark.parametrize("check", all_checks(), ids=lambda c: f"{c.__module__[-3:]}.{c.__name__}")
def test_the_lessons_reference_solution_is_accepted(check, capsys) -> None:
    assert verdict_of(capsys, check, *_reference_args(check)) == CORRECT + "\n"
