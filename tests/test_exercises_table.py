"""Every exercise of the series against a table of wrong answers.

Each row is a plausible wrong answer (most were tried by a student working through the student
edition) and the words its hint must contain in English and in Russian, so a hint names the case
instead of printing a bare "expected ... got ...". The reference solutions are not copies: they are
read from the lessons' hidden solution cells and must be accepted. A new `check_*` function fails
`test_every_check_has_six_wrong_answers` until it has rows here: the list of checks is derived
from the lessons (every `check_*` of every `helpers/exercises/nNN.py` of a lesson), not written
down.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
import test_exercises_n10 as lesson10
import test_exercises_n11 as lesson11
import test_exercises_n12 as lesson12
from exercise_answers import (
    GOOD_ENV,
    convert,
    glue_to_latest,
    guide_assemble,
    no_function_guard,
    normalize_calls_only,
    normalize_counter_per_message,
    normalize_in_place,
    reasoning_moonshot_only,
    reasoning_unguarded,
    reference_args,
    renamed,
    repair_after,
    repair_in_place,
    repair_without_calls,
    schema_with,
    solution,
    untyped,
)
from scripts_support import lesson_cells
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers import guide_extract_tool_call_info
from helpers.exercises import n00, n01, n02, n03, n04, n05, n06, n07, n08, n09, n10, n12
from helpers.i18n import reset_language, set_language
from helpers.lessons import exercises_module, lesson_names
from helpers.replay.scenarios.n08_choosing_tools import DATED_TOOL


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


@renamed
def choices_in_the_summary(value: float, to_unit: str) -> float:
    """Convert a temperature (choices: ["celsius", "fahrenheit"]).

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to
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


def _extractor(pattern: re.Pattern[str]):
    """Lesson 04's extractor with another pattern (groups `id` and `arguments`)."""
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


def _extract_without(flags: int):
    """Lesson 04's reference extractor compiled with other flags (0: without re.DOTALL)."""
    return _extractor(re.compile(solution("04", "CALL_RE").pattern, flags))


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


# --- more wrong answers, as a student writes them (one per class of mistake in issue 27) ----------


# --- lesson 00 exercise 3: read_reply, as students wrote it -----------------------------------------


def _read(reply, **changed):
    """The four fields read right, then `changed` ones replaced by a function of the reply."""
    choice = reply.choices[0]
    out = {
        "text": choice.message.content,
        "finish_reason": choice.finish_reason,
        "model": reply.model,
        "total_tokens": reply.usage.total_tokens,
    }
    return out | {key: read(reply) for key, read in changed.items()}


def _read_copied(reply):
    """Step 4's printout typed in."""
    return {
        "text": "Ready.",
        "finish_reason": "stop",
        "model": "moonshotai/Kimi-K2-Instruct",
        "total_tokens": 16,
    }


def _read_message_object(reply):
    return _read(reply, text=lambda r: r.choices[0].message)


def _read_completion_tokens(reply):
    return _read(reply, total_tokens=lambda r: r.usage.completion_tokens)


def _read_float_tokens(reply):
    return _read(reply, total_tokens=lambda r: float(r.usage.total_tokens))


def _read_count_as_text(reply):
    return _read(reply, total_tokens=lambda r: str(r.usage.total_tokens))


def _read_last_choice(reply):
    return _read(reply, text=lambda r: r.choices[-1].message.content)


def _read_as_dict(reply):
    return {"text": reply["choices"][0]["message"]["content"]}


def _read_tuple(reply):
    choice = reply.choices[0]
    return choice.message.content, choice.finish_reason, reply.model, reply.usage.total_tokens


def _read_without_model(reply):
    out = _read(reply)
    del out["model"]
    return out


def _read_empty_text(reply):
    return _read(reply, text=lambda r: r.choices[0].message.content or "")


def _read_stop_typed(reply):
    return _read(reply, finish_reason=lambda r: "stop")


def _read_model_name(reply):
    """The model the notebook asked for (`model_name` of the live settings), not the one that
    answered."""
    return _read(reply, model=lambda r: "kimi-k2.6")


def _read_global_reply(step_4_reply):
    """Reads the notebook's `reply` (step 4's) instead of its parameter."""
    return lambda reply: _read(step_4_reply)


def _read_finish_reason_of_the_reply(reply):
    return _read(reply, finish_reason=lambda r: r.finish_reason)


def _read_usage_as_dict(reply):
    return _read(reply, total_tokens=lambda r: r.usage["total_tokens"])


def _read_choices_as_one(reply):
    return {"text": reply.choices.message.content}


# --- the hold-out set's accepted answers (holdout, 2026-12-02: a fresh student's, run on the kit) --
# Each was accepted before its case joined the battery; written here as the student wrote it.


def _holdout_eval(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    return function(**eval(tool_call["function"]["arguments"]))  # noqa: S307 (the mistake)


def _holdout_literal_eval(tool_call, tool_map):
    import ast

    function = tool_map[tool_call["function"]["name"]]
    return function(**ast.literal_eval(tool_call["function"]["arguments"]))


def _holdout_pops(tool_call, tool_map):
    fn = tool_call.pop("function")
    return tool_map[fn["name"]](**json.loads(fn["arguments"]))


def _holdout_len_default(message, finish_reason):
    return len(message.get("tool_calls", [])) > 0


def _holdout_fstring_json(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return f'{{"error": "{error}"}}'


def _holdout_str_only(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return json.dumps({"error": str(error)})


def _holdout_dumps_outside_try(function, arguments_text):
    try:
        result = function(**json.loads(arguments_text))
    except Exception as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})
    return json.dumps(result)


def _holdout_eval_arguments(function, arguments_text):
    try:
        return json.dumps(function(**eval(arguments_text)))  # noqa: S307 (the mistake)
    except Exception as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


def _holdout_break_on_finish(chunks):
    """The lesson's assembler, stopped at the first chunk with a finish_reason."""
    before_finish = []
    for chunk in chunks:
        if chunk.choices and chunk.choices[0].finish_reason:
            break
        before_finish.append(chunk)
    return solution("03", "assemble_tool_calls")(before_finish)


_KIMI = (
    r"<\|tool_call_begin\|>\s*(?P<id>{id})\s*<\|tool_call_argument_begin\|>\s*(?P<arguments>.*?)\s*"
    r"(?:{end})"
)


def _kimi_extractor(id_part, end):
    pattern = re.compile(_KIMI.format(id=id_part, end=end), re.DOTALL)

    def extract_tool_calls(text):
        calls = []
        for m in pattern.finditer(text):
            name = m["id"].removeprefix("functions.").rsplit(":", 1)[0]
            calls.append(
                {
                    "id": m["id"],
                    "type": "function",
                    "function": {"name": name, "arguments": m["arguments"]},
                }
            )
        return calls

    return extract_tool_calls


def _holdout_split_markers(text):
    calls = []
    for part in text.split("<|tool_call_begin|>")[1:]:
        call_id, _, rest = part.partition("<|tool_call_argument_begin|>")
        call_id = call_id.strip()
        arguments = rest.split("<|tool_call_end|>")[0].strip()
        name = call_id.removeprefix("functions.").rsplit(":", 1)[0]
        calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
    return calls


def _holdout_closing_tag(message):
    content = message.get("content") or ""
    closed = "</tool_call>" in content or "<|tool_calls_section_end|>" in content
    return closed and not message.get("tool_calls")


def _holdout_tag_prefix(message):
    content = message.get("content") or ""
    return ("<tool" in content or "<|tool" in content) and not message.get("tool_calls")


# The hold-out's answers whose hint named another mistake than the one made (now each its own).
_NOTEBOOK_TOOL_MAP = {"get_weather": lambda city: {"city": city}}


def _holdout_flat_call(tool_call, tool_map):
    return tool_map[tool_call["name"]](**json.loads(tool_call["arguments"]))


def _holdout_str_result(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    return str(function(**json.loads(tool_call["function"]["arguments"])))


def _holdout_one_parameter():
    """call_tool written with one parameter (Python names the function in its TypeError)."""

    def call_tool(tool_call):
        arguments = json.loads(tool_call["function"]["arguments"])
        return _NOTEBOOK_TOOL_MAP[tool_call["function"]["name"]](**arguments)

    return call_tool


def _holdout_notebook_tool_map(tool_call, tool_map_unused):
    return _holdout_one_parameter()(tool_call)


def _holdout_usage_unguarded(chunks):
    total = None
    for chunk in chunks:
        if chunk.usage.total_tokens:
            total = chunk.usage.total_tokens
    return total


def _holdout_regex_fields(text):
    calls = []
    for block in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL):
        name = re.search(r'"name":\s*"([^"]+)"', block).group(1)
        arguments = json.loads(re.search(r'"arguments":\s*(\{.*?\})', block, re.DOTALL).group(1))
        calls.append((name, arguments))
    return calls


def _holdout_before_first_tool(messages, content, tool_calls):
    """The assistant message before the first tool message of all (an earlier round's too)."""
    assistant = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    first = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    return [*messages[:first], assistant, *messages[first:]]


def _holdout_tools_moved_to_end(messages, content, tool_calls):
    others = [m for m in messages if m["role"] != "tool"]
    results = [m for m in messages if m["role"] == "tool"]
    return [*others, {"role": "assistant", "content": content, "tool_calls": tool_calls}, *results]


def _holdout_empty_choices_is_usage(chunks):
    for chunk in chunks:
        if not chunk.choices:
            return chunk.usage.total_tokens
    return None


def _cmd(tail: str) -> str:
    return "vllm serve Qwen/Qwen2.5-7B-Instruct " + tail


def _schema_properties_list() -> dict[str, Any]:
    schema = schema_with("function.parameters.properties", ["value", "to_unit"])
    return schema


class Agreeable:
    """An answer that says it equals anything (the grader cheat of issue 27)."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


def _call_tool_hard_coded(tool_call, tool_map):
    return tool_map["greet"](**json.loads(tool_call["function"]["arguments"]))


def _call_tool_positional_values(tool_call, tool_map):
    arguments = json.loads(tool_call["function"]["arguments"])
    return tool_map[tool_call["function"]["name"]](*arguments.values())


@renamed
def rounds_result(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    return round(convert(value, to_unit))


@renamed
def floor_division(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    return value * 9 / 5 + 32 if to_unit == "fahrenheit" else (value - 32) * 5 // 9


def _answer_invented_ids(message, tool_map):
    return _answer_one(message, tool_map, call_id=lambda c: f"{c['function']['name']}:0")


def _answer_reversed(message, tool_map):
    return _answer_one(message, tool_map)[::-1]


def _answer_counted_ids(message, tool_map):
    results = _answer_one(message, tool_map)
    for i, result in enumerate(results):
        result["tool_call_id"] = f"get_weather:{i}"
    return results


def _content_str(function, arguments_text):
    try:
        return str(function(**json.loads(arguments_text)))
    except Exception as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


def _content_ascii_fine_but_raises_type_error(function, arguments_text):
    try:
        arguments = json.loads(arguments_text)
        return json.dumps(function(**arguments))
    except (json.JSONDecodeError, TimeoutError) as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


def _content_no_message(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return json.dumps({"error": type(error).__name__})


def _assemble_first_piece(chunks):
    calls = []
    for chunk in chunks:
        if not chunk.choices or not chunk.choices[0].delta.tool_calls:
            continue
        piece = chunk.choices[0].delta.tool_calls[0]
        while len(calls) <= piece.index:
            calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        call = calls[piece.index]
        call["id"] += piece.id or ""
        if piece.function:
            call["function"]["name"] += piece.function.name or ""
            call["function"]["arguments"] += piece.function.arguments or ""
    return calls


def _assemble_overwrite(chunks):
    calls = []
    for chunk in chunks:
        for piece in (chunk.choices[0].delta.tool_calls if chunk.choices else None) or []:
            while len(calls) <= piece.index:
                calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = calls[piece.index]
            call["id"] = piece.id or call["id"]
            if piece.function:
                call["function"]["name"] = piece.function.name or call["function"]["name"]
                call["function"]["arguments"] += piece.function.arguments or ""
                if piece.function.arguments and piece.function.arguments.endswith("}"):
                    call["function"]["arguments"] = piece.function.arguments
    return calls


def _repair_at_one(messages, content, tool_calls):
    return [messages[0], {"role": "assistant", "content": content, "tool_calls": tool_calls},
            *messages[1:]]  # fmt: skip


def _repair_before_last(messages, content, tool_calls):
    assistant = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    return [*messages[:-1], assistant, messages[-1]]


def _repair_content_dropped(messages, content, tool_calls):
    first = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assistant = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return [*messages[:first], assistant, *messages[first:]]


def _usage_completion(chunks):
    return next((c.usage.completion_tokens for c in chunks if c.usage), None)


def _usage_zero(chunks):
    return next((c.usage.total_tokens for c in chunks if c.usage), 0)


def _usage_guessed(chunks):
    return 110 if any(c.usage for c in chunks) else None


def _extract_no_dash(text):
    return _extract_with(r"<\|tool_call_begin\|>\s*(?P<id>[\w.]+:\d+)\s*")(text)


def _extract_with(id_part: str, arguments_part: str = r"(?P<arguments>.*?)"):
    return _extractor(
        re.compile(
            id_part
            + r"<\|tool_call_argument_begin\|>\s*"
            + arguments_part
            + r"\s*(?:<\|tool_call_end\|>|<\|tool_calls_section_end\|>|$)",
            re.DOTALL,
        )  # fmt: skip
    )


def _extract_not_stripped(text):
    return _extract_with(r"<\|tool_call_begin\|>(?P<id>.+?)", r"(?P<arguments>.*?)")(text)


def _hermes_startswith(text):
    if not text.startswith("<tool_call>"):
        return []
    return solution("05", "hermes_calls")(text)


def _hermes_one_line(text):
    calls = []
    for line in text.splitlines():
        if line.startswith("{"):
            call = json.loads(line)
            calls.append((call["name"], call["arguments"]))
    return calls


def _hermes_without_dotall(text):
    return [
        (call["name"], call["arguments"])
        for call in map(json.loads, re.findall(r"<tool_call>\n(.*?)\n</tool_call>", text))
    ]


def _unparsed_startswith(message):
    content = (message.get("content") or "").lstrip()
    markup = content.startswith("<tool_call>") or content.startswith("<|tool_calls_section_begin|>")
    return markup and not message.get("tool_calls")


def _unparsed_truthy(message):
    content = message.get("content") or ""
    return (
        ("<tool_call>" in content or "<|tool_call_begin|>" in content)
        and not message.get("tool_calls")
        and "yes"
    )


def _for_history_moonshot_name(message):
    kept = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    if message.get("reasoning_content"):
        kept["reasoning_content"] = message["reasoning_content"]
    return kept


def _for_history_as_is(message):
    return message


def _for_history_no_calls(message):
    kept = solution("06", "for_history")(message)
    kept.pop("tool_calls", None)
    return kept


def _normalize_per_tool(messages):
    result, counts, renamed_ids = copy.deepcopy(messages), {}, {}
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            name = tool_call["function"]["name"]
            k = counts.get(name, 0)
            counts[name] = k + 1
            renamed_ids[tool_call["id"]] = tool_call["id"] = f"functions.{name}:{k}"
        if message["role"] == "tool":
            message["tool_call_id"] = renamed_ids.get(message["tool_call_id"])
    return result


def _normalize_first_match(messages):
    result, k, table = copy.deepcopy(messages), 0, {}
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            new_id = f"functions.{tool_call['function']['name']}:{k}"
            table.setdefault(tool_call["id"], new_id)  # the first call with that id wins
            tool_call["id"] = new_id
            k += 1
        if message["role"] == "tool":
            message["tool_call_id"] = table.get(message["tool_call_id"], message["tool_call_id"])
    return result


def _normalize_by_position(messages):
    result, k, pending = copy.deepcopy(messages), 0, []
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            tool_call["id"] = f"functions.{tool_call['function']['name']}:{k}"
            pending.append(tool_call["id"])
            k += 1
        if message["role"] == "tool" and pending:
            message["tool_call_id"] = pending.pop(0)  # results assumed in the calls' order
    return result


def _reasoning_first_piece(chunks):
    for chunk in chunks:
        if not chunk.choices:
            continue
        for key in ("reasoning_content", "reasoning"):
            piece = getattr(chunk.choices[0].delta, key, None)
            if piece:
                return key, piece
    return None, ""


def _reasoning_until_gap(chunks):
    name, text = None, ""
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        moonshot = getattr(delta, "reasoning_content", None)
        piece = moonshot or getattr(delta, "reasoning", None)
        if not piece and text:
            break  # reasoning cut short at the first chunk without it
        if piece:
            name = name or ("reasoning_content" if moonshot else "reasoning")
            text += piece
    return name, text


def _reasoning_one_name(chunks):
    _, text = solution("06", "reasoning_of")(chunks)
    return ("reasoning_content" if text else None), text


# Lesson 06's hold-out wrong answers (issue 27: a student's answers the checks once accepted).


def _for_history_empty_list(message):
    kept = {"role": "assistant", "content": message.get("content")}
    kept["tool_calls"] = message.get("tool_calls") or []  # OpenAI refuses `tool_calls: []`
    for key in ("reasoning_content", "reasoning"):
        if message.get(key):
            kept[key] = message[key]
    return kept


def _normalize_skips_kimi_ids(messages):
    result, renamed_ids, k = copy.deepcopy(messages), {}, 0
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            if not tool_call["id"].startswith("functions."):  # kept, though its counter is off
                renamed_ids[tool_call["id"]] = f"functions.{tool_call['function']['name']}:{k}"
                tool_call["id"] = renamed_ids[tool_call["id"]]
            k += 1
        if message["role"] == "tool":
            message["tool_call_id"] = renamed_ids.get(
                message["tool_call_id"], message["tool_call_id"]
            )
    return result


def _normalize_orphan_raises(messages):
    result, renamed_ids, k = copy.deepcopy(messages), {}, 0
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            renamed_ids[tool_call["id"]] = f"functions.{tool_call['function']['name']}:{k}"
            tool_call["id"], k = renamed_ids[tool_call["id"]], k + 1
        if message["role"] == "tool":
            message["tool_call_id"] = renamed_ids[message["tool_call_id"]]  # no call: KeyError
    return result


def _reasoning_not_none(chunks):
    name, text = None, ""
    for chunk in chunks:
        for key in ("reasoning_content", "reasoning"):
            piece = getattr(chunk.choices[0].delta, key, None) if chunk.choices else None
            if piece is not None:  # an empty field counts as thinking
                name, text = name or key, text + piece
    return name, text


def _reasoning_first_field_present(chunks):
    name, text = None, ""
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        for key in ("reasoning", "reasoning_content"):
            if name is None and hasattr(delta, key):  # present, though its value is None
                name = key
        text += (getattr(delta, name, None) or "") if name else ""
    return name, text


def _reasoning_stops_at_a_call(chunks):
    calls = (i for i, c in enumerate(chunks) if c.choices and c.choices[0].delta.tool_calls)
    return solution("06", "reasoning_of")(chunks[: next(calls, len(chunks))])  # later pieces lost


def _split_cut_off_is_reasoning(text):
    if "</think>" not in text and text.startswith("<think>"):
        return text.removeprefix("<think>").strip(), ""
    return solution("07", "split_think")(text)


def _content_exits_on_failure(function, text):
    try:
        return json.dumps(function(**json.loads(text)))
    except Exception:
        raise SystemExit(1) from None  # SystemExit is no Exception: it escaped the check


def _content_retries_forever(function, text):
    while True:  # an endless retry: the check ran the failing cases without a time bound
        try:
            return json.dumps(function(**json.loads(text)))
        except Exception:
            continue


def _xml_typed(text):
    return [
        (name, {k: int(v) if v.isdigit() else v for k, v in arguments.items()})
        for name, arguments in solution("07", "xml_calls")(text)
    ]


def _xml_keeps_newlines(text):
    return [
        (name, dict(re.findall(r"<parameter=(.*?)>(.*?)</parameter>", body, re.DOTALL)))
        for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL)
    ]


def _xml_greedy(text):
    return [
        (name, dict(re.findall(r"<parameter=(.*?)>\n(.*?)\n</parameter>", body, re.DOTALL)))
        for name, body in re.findall(r"<function=(.*?)>(.*)</function>", text, re.DOTALL)
    ]


def _typed_number_float(value, kind):
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return value
    return solution("07", "typed")(value, kind)


def _typed_unguarded_int(value, kind):
    if kind == "integer" and value.lower() != "null":
        return int(value)
    return solution("07", "typed")(value, kind)


def _split_lstrip(text):
    if "</think>" not in text:
        return "", text.strip()
    reasoning, answer = text.split("</think>", 1)
    return reasoning.lstrip("<think>").strip(), answer.strip()


def _split_first_paragraph(text):
    reasoning, answer = solution("07", "split_think")(text)
    return reasoning, answer.split("\n\n")[0]


def _split_answer_unstripped(text):
    if "</think>" not in text:
        return "", text
    reasoning, answer = text.split("</think>", 1)
    return reasoning.replace("<think>", "").strip(), answer


# Lesson 07's hold-out wrong answers (issue 27: a student's answers the checks once accepted).


def _xml_strips_newlines(text):
    return [
        (name, {key: value.strip("\n") for key, value in arguments.items()})  # every newline
        for name, arguments in solution("07", "xml_calls")(text)
    ]


def _typed_strips_first(value, kind):
    return solution("07", "typed")(value.strip(), kind)  # a string loses its own spaces


def _typed_int_of_float(value, kind):
    if kind != "number" or value.lower() == "null":
        return solution("07", "typed")(value, kind)
    try:
        number = float(value)
    except ValueError:
        return value
    return int(number) if int(number) == number else number  # int(inf) raises


def _split_last_tag(text):
    if "</think>" not in text:
        return "", text.strip()
    reasoning, answer = text.rsplit("</think>", 1)
    return reasoning.replace("<think>", "").strip(), answer.strip()


def _split_second_piece(text):
    parts = text.split("</think>")
    if len(parts) == 1:
        return "", text.strip()
    return parts[0].replace("<think>", "").strip(), parts[1].strip()


def _split_tags_removed_everywhere(text):
    if "</think>" not in text:
        return "", text.strip()
    reasoning, answer = text.replace("<think>", "").split("</think>", 1)
    return reasoning.strip(), answer.strip()


def _split_unclosed_is_reasoning(text):
    if "</think>" not in text and text.strip().startswith("<think>"):
        return text.strip()[len("<think>") :].strip(), ""
    return solution("07", "split_think")(text)


def _typed_value_stripped(text, kind):
    return text.strip() if kind == "string" else json.loads(text)


def _render_ascii(name, index, arguments):
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        kind = solution("09", "xtml_type")(value)
        parts.append(f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}<|close|>argument<|sep|>')  # fmt: skip
    return "".join(parts) + "<|close|>call<|sep|>"


def _render_bool_number(name, index, arguments):
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        kind = "number" if isinstance(value, int | float) else solution("09", "xtml_type")(value)
        parts.append(f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}<|close|>argument<|sep|>')  # fmt: skip
    return "".join(parts) + "<|close|>call<|sep|>"


def _render_spaced(name, index, arguments):
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        kind = solution("09", "xtml_type")(value)
        parts.append(f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}<|close|>argument<|sep|>')  # fmt: skip
    return "".join(parts) + "<|close|>call<|sep|>"


def _tags_first_match(messages):
    tags = {}
    for message in messages:
        if message["role"] != "tool":
            continue
        for earlier in messages:  # the first assistant message with that id, not the latest
            ids = [c["id"] for c in earlier.get("tool_calls") or []]
            if message["tool_call_id"] in ids:
                k = ids.index(message["tool_call_id"])
                tags[message["tool_call_id"]] = (
                    earlier["tool_calls"][k]["function"]["name"],
                    k + 1,
                )
                break
    return tags


def _tags_result_order(messages):
    tags, calls, seen = {}, [], 0
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls, seen = message["tool_calls"], 0
        elif message["role"] == "tool":
            seen += 1
            name = next(c["function"]["name"] for c in calls if c["id"] == message["tool_call_id"])
            tags[message["tool_call_id"]] = (name, seen)
    return tags


def _tags_from_zero(messages):
    return {k: (n, i - 1) for k, (n, i) in solution("09", "result_tags")(messages).items()}


def _tags_index_as_text(messages):
    return {k: (n, str(i)) for k, (n, i) in solution("09", "result_tags")(messages).items()}


def _tags_counted_per_tool(messages):
    tags, calls = {}, []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls = message["tool_calls"]
        elif message["role"] == "tool":
            names = [c["function"]["name"] for c in calls]
            k = [c["id"] for c in calls].index(message["tool_call_id"])
            tags[message["tool_call_id"]] = (names[k], names[: k + 1].count(names[k]))
    return tags


def _strict_tool_with(change):
    tool = copy.deepcopy(DATED_TOOL)
    tool["function"]["parameters"]["properties"]["date"] = {
        "type": "string",
        "description": "The date as YYYY-MM-DD",
    }
    change(tool)
    return tool


# --- wrong answers a second pass found accepted (each rejected since its case joined the battery) --


def _assemble_from(chunks, glue):
    """Lesson 03's reference loop over `chunks`, each piece glued onto its call by `glue`."""
    calls = []
    for chunk in chunks:
        if not chunk.choices:
            continue
        for piece in chunk.choices[0].delta.tool_calls or []:
            while len(calls) <= piece.index:
                calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            glue(calls[piece.index], piece)
    return calls


def _glue(call, piece):
    call["id"] += piece.id or ""
    if piece.function:
        call["function"]["name"] += piece.function.name or ""
        call["function"]["arguments"] += piece.function.arguments or ""


def _assemble_skips_first_chunk(chunks):
    """The first chunk taken for the role alone."""
    return _assemble_from(chunks[1:], _glue)


def _assemble_skips_usage(chunks):
    """Skips the chunk that has usage, and reads choices[0] of every other one."""
    calls = []
    for chunk in chunks:
        if chunk.usage:
            continue
        for piece in chunk.choices[0].delta.tool_calls or []:
            while len(calls) <= piece.index:
                calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            _glue(calls[piece.index], piece)
    return calls


def _glue_name_elif_arguments(call, piece):
    """A header carries the name, a later piece the arguments: never both."""
    call["id"] += piece.id or ""
    if piece.function and piece.function.name:
        call["function"]["name"] = piece.function.name
    elif piece.function:
        call["function"]["arguments"] += piece.function.arguments or ""


def _assemble_appends_at_new_index(chunks):
    """A new entry only when the index is the next one: a later call's first piece must wait."""
    calls = []
    for chunk in chunks:
        for piece in (chunk.choices[0].delta.tool_calls if chunk.choices else None) or []:
            if piece.index == len(calls):
                calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            _glue(calls[piece.index], piece)
    return calls


def _repair_at(messages, content, tool_calls, where):
    assistant = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    i = where(messages, tool_calls)
    return [*messages[:i], assistant, *messages[i:]]


def _repair_first_call_only(messages, content, tool_calls):
    """Looks for the result of the first call only."""
    first_id = tool_calls[0]["id"]
    return _repair_at(
        messages,
        content,
        tool_calls,
        lambda m, t: next(i for i, x in enumerate(m) if x.get("tool_call_id") == first_id),
    )


def _repair_after_last_user(messages, content, tool_calls):
    """The assistant answers the last question, so it goes right after it."""
    return _repair_at(
        messages,
        content,
        tool_calls,
        lambda m, t: max(i for i, x in enumerate(m) if x["role"] == "user") + 1,
    )


def _repair_before_last_results(messages, content, tool_calls):
    """One result per call, and the results are the last messages."""
    return _repair_at(messages, content, tool_calls, lambda m, t: len(m) - len(t))


def _repair_before_trailing_tools(messages, content, tool_calls):
    """Walks back from the end over the tool messages."""

    def start_of_trailing_tools(m, t):
        i = len(m)
        while i > 0 and m[i - 1]["role"] == "tool":
            i -= 1
        return i

    return _repair_at(messages, content, tool_calls, start_of_trailing_tools)


def _usage_last_chunk_guarded(chunks):
    last = chunks[-1]
    return last.usage.total_tokens if last.usage else None


def _usage_last_chunk_try(chunks):
    try:
        return chunks[-1].usage.total_tokens
    except AttributeError:
        return None


def _extract_one_per_id(text):
    """Keeps the calls in a dict by id: a reused id keeps the last call only."""
    calls = {}
    for call in solution("04", "extract_tool_calls")(text):
        calls[call["id"]] = call
    return list(calls.values())


def _hermes_skips_empty(text):
    """Keeps a block only when its name and arguments are truthy (to skip a broken block)."""
    calls = []
    for block in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL):
        call = json.loads(block)
        if call.get("name") and call.get("arguments"):
            calls.append((call["name"], call["arguments"]))
    return calls


def _hermes_parameters_key(text):
    """Reads the arguments under "parameters", the key of a tool's schema."""
    blocks = re.findall(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL)
    return [(c["name"], c["parameters"]) for c in map(json.loads, blocks)]


def _unparsed_of(message, calls):
    content = message.get("content") or ""
    return ("<tool_call>" in content or "<|tool_call_begin|>" in content) and not calls


def _unparsed_pops(message):
    return _unparsed_of(message, message.pop("tool_calls", None))


def _unparsed_setdefault(message):
    return _unparsed_of(message, message.setdefault("tool_calls", []))


def _unparsed_content_filled_in(message):
    message["content"] = message.get("content") or ""
    return _unparsed_of(message, message.get("tool_calls"))


def _xml_with(parameter_re, keep=lambda parameters: True):
    """Lesson 07's reading of XML calls with another parameter pattern; a call kept if `keep`."""

    def xml_calls(text):
        calls = []
        for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL):
            parameters = dict(re.findall(parameter_re, body, re.DOTALL))
            if keep(parameters):
                calls.append((name, parameters))
        return calls

    return xml_calls


def _split_prefix_removed(text):
    """Removes <think> with removeprefix, before stripping the reasoning."""
    reasoning, found, answer = text.partition("</think>")
    if not found:
        return "", text.strip()
    return reasoning.removeprefix("<think>").strip(), answer.strip()


def _render_numbers_g(name, index, arguments):
    """Numbers written with the :g format (to keep 2 from turning into 2.0)."""
    xtml_type = solution("09", "xtml_type")
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        kind = xtml_type(value)
        if kind == "string":
            text = value
        elif kind == "number":
            text = f"{value:g}"
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        parts.append(
            f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}<|close|>argument<|sep|>'
        )
    return "".join(parts) + "<|close|>call<|sep|>"


def _tags_get_with_default(messages):
    """Reads tool_calls with .get(key, []): None, as model_dump() writes it, is not iterable."""
    tags, calls = {}, {}
    for message in messages:
        if message["role"] == "assistant":
            calls = {}
            for index, call in enumerate(message.get("tool_calls", []), 1):
                calls[call["id"]] = (call["function"]["name"], index)
        elif message["role"] == "tool":
            tags[message["tool_call_id"]] = calls[message["tool_call_id"]]
    return tags


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
        "does not start vLLM's OpenAI-compatible server",
        "не запускает OpenAI-совместимый сервер vLLM",
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
    row(
        n00.check_reading,
        _read_copied,
        "fits that one reply only",
        "подходит только к тому ответу",
        "00-3 values typed in from step 4's printout",
    ),
    row(
        n00.check_reading,
        _read_message_object,
        "'ChatCompletionMessage'",
        "'ChatCompletionMessage'",
        "00-3 the message object",
    ),
    row(
        n00.check_reading,
        _read_completion_tokens,
        "total_tokens=16>, total_tokens 1 is usage.completion_tokens",
        "total_tokens=16> total_tokens 1 — это usage.completion_tokens",
        "00-3 completion tokens",
    ),
    row(
        n00.check_reading,
        _read_float_tokens,
        "total_tokens=16>, total_tokens is 16.0, a float",
        "total_tokens=16> total_tokens равно 16.0, это float",
        "00-3 a float count",
    ),
    row(
        n00.check_reading,
        _read_count_as_text,
        "got '16'",
        "получено '16'",
        "00-3 the count as text",
    ),
    row(n00.check_reading, _read_last_choice, "choices=2", "choices=2", "00-3 the last choice"),
    row(
        n00.check_reading,
        _read_as_dict,
        "ChatCompletion is an SDK object, not a dict",
        "ChatCompletion — из SDK, а не словарь",
        "00-3 brackets on the SDK object",
    ),
    row(
        n00.check_reading,
        _read_tuple,
        "wants a dict with the keys",
        "нужен словарь с ключами",
        "00-3 a tuple",
    ),
    row(
        n00.check_reading,
        _read_without_model,
        "no key 'model'",
        "нет ключа 'model'",
        "00-3 a key left out",
    ),
    row(
        n00.check_reading,
        _read_empty_text,
        "tool_calls=['get_weather']",
        "tool_calls=['get_weather']",
        "00-3 None made ''",
    ),
    row(
        n00.check_reading,
        _read_stop_typed,
        "finish_reason='length'",
        "finish_reason='length'",
        "00-3 finish_reason typed in",
    ),
    row(
        n00.check_reading,
        _read_model_name,
        "model should be 'moonshotai/Kimi-K2-Instruct'",
        "model должно быть 'moonshotai/Kimi-K2-Instruct'",
        "00-3 the model asked for",
    ),
    row(
        n00.check_reading,
        _read_global_reply(n00.reply_of(n00.STEP_4)),
        "read each one from the reply the function is given",
        "берите каждое из ответа, который получила функция",
        "00-3 the notebook's reply, not the parameter",
    ),
    row(
        n00.check_reading,
        _read_finish_reason_of_the_reply,
        "finish_reason belongs to a choice",
        "finish_reason есть у варианта ответа",
        "00-3 finish_reason read from the reply itself",
    ),
    row(
        n00.check_reading,
        _read_usage_as_dict,
        "CompletionUsage is an SDK object",
        "CompletionUsage — из SDK",
        "00-3 brackets on usage",
    ),
    row(
        n00.check_reading,
        _read_choices_as_one,
        "list of answers",
        "список вариантов ответа",
        "00-3 choices as one answer",
    ),
    # --- the hold-out set's accepted answers, each now rejected by a case it had missed ----------
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_MODEL": "kimi-k2-6"},
        "did you mean 'kimi-k2.6'",
        "вы имели в виду 'kimi-k2.6'",
        "holdout 00-1 a typo of the model id",
    ),
    row(
        n00.check_live_env,
        GOOD_ENV | {"LLM_MODE": "record"},
        "writes every reply into the recordings",
        "записывают каждый ответ в кассеты",
        "holdout 00-1 record mode",
    ),
    row(
        n00.check_qwen_command,
        _cmd(" # --enable-auto-tool-choice --tool-call-parser hermes"),
        "add --enable-auto-tool-choice",
        "добавьте --enable-auto-tool-choice",
        "holdout 00-2 the flags commented out",
    ),
    row(
        n01.check_call_tool,
        _holdout_eval,
        "decode them with json.loads",
        "через json.loads",
        "holdout 01-2 eval",
    ),
    row(
        n01.check_call_tool,
        _holdout_literal_eval,
        "not a Python literal",
        "а не литерал Python",
        "holdout 01-2 literal_eval",
    ),
    row(
        n01.check_call_tool,
        _holdout_pops,
        "changed the tool call",
        "изменила полученный вызов",
        "holdout 01-2 pops function",
    ),
    row(
        n02.check_needs_tools,
        _holdout_len_default,
        "'tool_calls': None",
        "'tool_calls': None",
        "holdout 02-1 len of a None",
    ),
    row(
        n02.check_tool_content,
        _holdout_fstring_json,
        "not JSON",
        "not JSON",
        "holdout 02-3 JSON by hand",
    ),
    row(
        n02.check_tool_content,
        _holdout_str_only,
        "silent",
        "silent",
        "holdout 02-3 str(error) alone",
    ),
    row(
        n02.check_tool_content,
        _holdout_dumps_outside_try,
        "TypeError",
        "TypeError",
        "holdout 02-3 dumps outside try",
    ),
    row(
        n02.check_tool_content,
        _holdout_eval_arguments,
        '"days": null',
        '"days": null',
        "holdout 02-3 eval",
    ),
    row(
        n03.check_assemble,
        _holdout_break_on_finish,
        "finish_reason='tool_calls' + delta.tool_calls",
        "finish_reason='tool_calls' + delta.tool_calls",
        "holdout 03-1 stop at finish_reason",
    ),
    row(
        n04.check_extract,
        _kimi_extractor(r".+?", r"<\|tool_call_end\|>|$"),
        'got \'{"city": "Beijing"}<|tool_calls_section_end|>\'',
        'получено \'{"city": "Beijing"}<|tool_calls_section_end|>\'',
        "holdout 04-2 the section end forgotten",
    ),
    row(
        n04.check_extract,
        _kimi_extractor(r"\S+", r"<\|tool_call_end\|>|<\|tool_calls_section_end\|>|$"),
        'functions.get_weather:0<|tool_call_argument_begin|>{"city":"Beijing"',
        'functions.get_weather:0<|tool_call_argument_begin|>{"city":"Beijing"',
        "holdout 04-2 a greedy non-space id",
    ),
    row(
        n04.check_extract,
        _holdout_split_markers,
        "<|tool_calls_section_end|>'",
        "<|tool_calls_section_end|>'",
        "holdout 04-2 split on markers",
    ),
    row(
        n05.check_unparsed,
        _holdout_closing_tag,
        "should return True, got False",
        "должна вернуть True",
        "holdout 05-2 closing tags only",
    ),
    row(
        n05.check_unparsed,
        _holdout_tag_prefix,
        "<tool_response>",
        "<tool_response>",
        "holdout 05-2 any <tool prefix",
    ),
    row(
        n01.check_call_tool,
        _holdout_flat_call,
        'its "function" object',
        'объекте "function"',
        "holdout 01-2 the flat shape",
    ),
    row(
        n01.check_call_tool,
        _holdout_str_result,
        "the str() of the function's result",
        "str() от результата",
        "holdout 01-2 str of the result",
    ),
    row(
        n01.check_call_tool,
        _holdout_one_parameter(),
        "takes two parameters",
        "принимает два параметра",
        "holdout 01-2 tool_map left out",
    ),
    row(
        n01.check_call_tool,
        _holdout_notebook_tool_map,
        "not in a dict of the notebook",
        "а не в словаре из блокнота",
        "holdout 01-2 the notebook's tool_map",
    ),
    row(
        n03.check_usage,
        _holdout_usage_unguarded,
        "for every other chunk usage is None",
        "у всех остальных usage равно None",
        "holdout 03-3 usage read on every chunk",
    ),
    row(
        n05.check_hermes_calls,
        _holdout_regex_fields,
        "cannot match nested braces",
        "не может найти вложенные скобки",
        "holdout 05-1 fields by regex",
    ),
    row(
        n03.check_history,
        _holdout_before_first_tool,
        "user+assistant+tool+assistant+user+tool",
        "user+assistant+tool+assistant+user+tool",
        "holdout 03-2 before an earlier round's result",
    ),
    row(
        n03.check_history,
        _holdout_tools_moved_to_end,
        "user+assistant+tool+assistant+user+tool",
        "user+assistant+tool+assistant+user+tool",
        "holdout 03-2 every result moved to the end",
    ),
    row(
        n03.check_usage,
        _holdout_empty_choices_is_usage,
        "<choices: [] + ",
        "<choices: [] + ",
        "holdout 03-3 every choices: [] taken for usage",
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
    # --- added for issue 27: every check gets at least six, one per class of mistake -----------
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_MODEL": "kimi-k2-0905-preview"},
        "retired",
        "снята",
        "00-1 a retired id",
    ),
    row(
        n00.check_live_env,
        GOOD_ENV | {"KIMI_BASE_URL": "http://localhost:8000/v1"},
        "Moonshot platform",
        "платформу Moonshot",
        "00-1 a local server",
    ),
    row(
        n00.check_live_env,
        [("LLM_MODE", "live")],
        "must be a dict",
        "должен быть словарём",
        "00-1 a list of pairs",
    ),
    row(
        n00.check_qwen_command,
        _cmd("-tp 8 --enable-auto-tool-choice --tool-call-parser hermes"),
        "need 8 GPUs",
        "GPU: 8",
        "00-2 eight GPUs",
    ),
    row(
        n00.check_qwen_command,
        _cmd("--tensor-parallel-size 3 --enable-auto-tool-choice --tool-call-parser hermes"),
        "--tensor-parallel-size 3",
        "--tensor-parallel-size 3",
        "00-2 three does not divide the heads",
    ),
    row(
        n00.check_qwen_command,
        _cmd("--enable-auto-tool-choice --tool-call-parser hermes --tool-call-parser qwen3_xml"),
        "not qwen3_xml",
        "а не qwen3_xml",
        "00-2 the last parser wins",
    ),
    row(
        n00.check_qwen_command,
        "vllm serve Qwen/Qwen2.5-7B --enable-auto-tool-choice --tool-call-parser hermes",
        "'Qwen/Qwen2.5-7B'",
        "'Qwen/Qwen2.5-7B'",
        "00-2 the base model",
    ),
    row(
        n01.check_schema,
        _schema_properties_list(),
        "must be a dict",
        "должен быть словарём",
        "01-1 properties as a list",
    ),
    row(
        n01.check_schema,
        schema_with("function.parameters.properties.to_unit.enum", ["C", "F"]),
        "enum",
        "enum",
        "01-1 enum of letters",
    ),
    row(n01.check_schema, Agreeable(), "'Agreeable'", "'Agreeable'", "01-1 a lying object"),
    row(
        n01.check_call_tool,
        _call_tool_hard_coded,
        "call_tool(search_v2",
        "call_tool(search_v2",
        "01-2 always greet",
    ),
    row(
        n01.check_call_tool,
        _call_tool_positional_values,
        "'Hello, .Kim'",
        "'Hello, .Kim'",
        "01-2 values by position",
    ),
    row(
        n01.check_call_tool,
        lambda tool_call, tool_map: Agreeable(),
        "'Agreeable'",
        "'Agreeable'",
        "01-2 a lying result",
    ),
    row(
        n01.check_typed_function,
        rounds_result,
        "convert_temperature(",
        "convert_temperature(",
        "01-3 rounded",
    ),
    row(
        n01.check_typed_function,
        floor_division,
        "convert_temperature(",
        "convert_temperature(",
        "01-3 floor division",
    ),
    row(
        n02.check_needs_tools,
        lambda m, f: not m.get("content"),
        "needs_tools(",
        "needs_tools(",
        "02-1 no text means tools",
    ),
    row(
        n02.check_needs_tools,
        lambda m, f: f != "stop",
        "finish_reason 'stop'",
        "движок stop_with_calls",
        "02-1 anything but stop",
    ),
    row(
        n02.check_needs_tools,
        lambda m, f: Agreeable(),
        "'Agreeable'",
        "'Agreeable'",
        "02-1 a lying answer",
    ),
    row(
        n02.check_answer_calls,
        _answer_invented_ids,
        "tool_call_id",
        "tool_call_id",
        "02-2 invented ids",
    ),
    row(
        n02.check_answer_calls,
        _answer_counted_ids,
        "tool_call_id",
        "tool_call_id",
        "02-2 ids counted by the student",
    ),
    row(
        n02.check_answer_calls,
        _answer_reversed,
        "tool_call_id must be the call's id",
        "tool_call_id должен быть id",
        "02-2 reversed",
    ),
    row(
        n02.check_tool_content,
        _content_str,
        "as JSON text",
        "JSON-текстом",
        "02-3 str() of the result",
    ),
    row(
        n02.check_tool_content,
        _content_ascii_fine_but_raises_type_error,
        "TypeError",
        "TypeError",
        "02-3 two exceptions caught",
    ),
    row(
        n02.check_tool_content,
        _content_no_message,
        "the model cannot tell",
        "модель не поймёт",
        "02-3 the type name only",
    ),
    row(
        n03.check_assemble,
        _assemble_first_piece,
        "assemble_tool_calls(<",
        "assemble_tool_calls(<",
        "03-1 only tool_calls[0]",
    ),
    row(
        n03.check_assemble,
        _assemble_overwrite,
        "the stream 'one call'",
        "«один вызов»",
        "03-1 a piece overwrites",
    ),
    row(
        n03.check_history,
        _repair_at_one,
        "repair(<system",
        "repair(<system",
        "03-2 inserted at position 1",
    ),
    row(
        n03.check_history,
        _repair_before_last,
        "repair(<",
        "repair(<",
        "03-2 before the last message",
    ),
    row(n03.check_history, _repair_content_dropped, "content", "content", "03-2 content dropped"),
    row(
        n03.check_usage, _usage_completion, "total_tokens", "total_tokens", "03-3 completion tokens"
    ),
    row(n03.check_usage, _usage_zero, "None", "None", "03-3 zero for no usage"),
    row(
        n03.check_usage,
        _usage_guessed,
        "total_tokens(<",
        "total_tokens(<",
        "03-3 the example's number",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.removeprefix("functions.").rstrip(":0123456789"),
        "'functions.search_v2:0'",
        "'functions.search_v2:0'",
        "04-1 rstrip of digits",
    ),
    row(
        n04.check_name_from_id,
        lambda c: re.match(r"(?:functions\.)?([\w.]+):\d+", c).group(1),
        "'functions.get-weather:12'",
        "'-'",
        "04-1 a regex without '-'",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.split(".")[-1].split(":")[0],
        "'functions.weather.today:3'",
        "точка здесь — часть имени",
        "04-1 after the last dot",
    ),
    row(
        n04.check_extract,
        _extract_with(r"<\|tool_call_begin\|>\s*(?P<id>.+?)\s*", r"(?P<arguments>[^<]*)"),
        "'newlines between markers'",
        "«переводы строк между маркерами»",
        "04-2 [^<]* for arguments",
    ),
    row(
        n04.check_extract,
        _extract_no_dash,
        "'-' in the name",
        "'-' в имени",
        "04-2 an id pattern without '-'",
    ),
    row(
        n04.check_extract,
        _extract_not_stripped,
        "newlines between markers",
        "переводы строк между маркерами",
        "04-2 spaces kept",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_startswith,
        "text before the calls",
        "текст перед вызовами",
        "05-1 startswith",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_without_dotall,
        "hermes_calls(",
        "hermes_calls(",
        "05-1 one-line JSON only",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_one_line,
        "hermes_calls(",
        "hermes_calls(",
        "05-1 lines that start with {",
    ),
    row(
        n05.check_unparsed,
        _unparsed_startswith,
        "has_unparsed_calls(",
        "has_unparsed_calls(",
        "05-2 startswith",
    ),
    row(n05.check_unparsed, _unparsed_truthy, "real bool", "именно bool", "05-2 a truthy string"),
    row(
        n06.check_history_message,
        _for_history_moonshot_name,
        "vLLM >= 0.17",
        "vLLM >= 0.17",
        "06-1 Moonshot's field only",
    ),
    row(
        n06.check_history_message,
        _for_history_no_calls,
        "tool_calls",
        "tool_calls",
        "06-1 calls dropped",
    ),
    row(
        n06.check_history_message,
        lambda m: Agreeable(),
        "'Agreeable'",
        "'Agreeable'",
        "06-1 a lying message",
    ),
    row(
        n06.check_normalize,
        _normalize_per_tool,
        "normalize_ids(<",
        "normalize_ids(<",
        "06-2 a counter per tool",
    ),
    row(
        n06.check_normalize,
        _normalize_first_match,
        "normalize_ids(<",
        "normalize_ids(<",
        "06-2 the first call with the id",
    ),
    row(
        n06.check_normalize,
        _normalize_by_position,
        "must get the new id of its call",
        "должен получить новый id",
        "06-2 results in the calls' order",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_first_piece,
        "'Moonshot'",
        "«Moonshot»",
        "06-3 the first piece",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_until_gap,
        "reasoning_of(<",
        "reasoning_of(<",
        "06-3 cut short",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_one_name,
        "'vLLM with a usage chunk'",
        "«vLLM и фрагмент со статистикой»",
        "06-3 one name for both",
    ),
    row(
        n06.check_history_message,
        _for_history_empty_list,
        "`tool_calls: []`",
        "`tool_calls: []`",
        "06-1 no calls as an empty list",
    ),
    row(
        n06.check_normalize,
        _normalize_skips_kimi_ids,
        "normalize_ids(<functions.get_weather:3",
        "normalize_ids(<functions.get_weather:3",
        "06-2 Kimi-looking ids kept",
    ),
    row(
        n06.check_normalize,
        _normalize_orphan_raises,
        "answers no call stays as it is",
        "не отвечает ни на один вызов",
        "06-2 a result whose call was cut away",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_not_none,
        'reasoning_of(<2 chunks: reasoning_content=""',
        "ничего нет",
        "06-3 an empty field is thinking",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_first_field_present,
        "holds nothing",
        "ничего нет",
        "06-3 the first field present",
    ),
    row(
        n02.check_tool_content,
        _content_exits_on_failure,
        "tool_content raised SystemExit",
        "tool_content выбрасывает SystemExit",
        "02-3 sys.exit on a failure",
    ),
    row(
        n02.check_tool_content,
        _content_retries_forever,
        """did not finish within 2 s on tool_content(get_weather, '{"city": "Mos')""",
        """не завершилась за 2 с на входе «tool_content(get_weather, '{"city": "Mos')»""",
        "02-3 an endless retry",
    ),
    row(
        n06.check_reasoning_of,
        _reasoning_stops_at_a_call,
        "glued in order to the stream's end",
        "склеенные по порядку до конца потока",
        "06-3 reasoning after a tool call lost",
    ),
    row(
        n07.check_split_think,
        _split_cut_off_is_reasoning,
        "Without </think> there is no reasoning",
        "Без </think> рассуждения нет",
        "07-3 an output cut off in the block is reasoning",
    ),
    row(
        n07.check_xml_calls,
        _xml_typed,
        "typing values is exercise 2's job",
        "задача упражнения 2",
        "07-1 values converted",
    ),
    row(
        n07.check_xml_calls,
        _xml_keeps_newlines,
        "kept the newline",
        "остался перевод строки",
        "07-1 newlines kept",
    ),
    row(
        n07.check_xml_calls,
        _xml_greedy,
        "'text and two calls'",
        "«текст и два вызова»",
        "07-1 greedy function",
    ),
    row(n07.check_typed, _typed_number_float, "typed(", "typed(", "07-2 every number a float"),
    row(n07.check_typed, _typed_unguarded_int, "ValueError", "ValueError", "07-2 int() unguarded"),
    row(
        n07.check_split_think,
        _split_lstrip,
        "think about Paris",
        "think about Paris",
        "07-3 lstrip('<think>')",
    ),
    row(
        n07.check_split_think,
        _split_first_paragraph,
        "split_think(",
        "split_think(",
        "07-3 first paragraph only",
    ),
    row(
        n07.check_split_think,
        _split_answer_unstripped,
        "'a whole block'",
        "«блок целиком»",
        "07-3 answer not stripped",
    ),
    row(
        n07.check_xml_calls,
        _xml_strips_newlines,
        "\\nafter a blank line\\n",
        "\\nafter a blank line\\n",
        "07-1 every edge newline cut",
    ),
    row(
        n07.check_typed,
        _typed_strips_first,
        "typed('  two spaces  ', 'string')",
        "typed('  two spaces  ', 'string')",
        "07-2 a string stripped",
    ),
    row(
        n07.check_typed,
        _typed_int_of_float,
        "typed('inf', 'number')",
        "бесконечность",
        "07-2 int() of infinity",
    ),
    row(
        n07.check_split_think,
        _split_last_tag,
        "first </think>",
        "первом </think>",
        "07-3 the last </think>",
    ),
    row(
        n07.check_split_think,
        _split_second_piece,
        "The tag </think> closes",
        "первом </think>",
        "07-3 the second piece only",
    ),
    row(
        n07.check_split_think,
        _split_tags_removed_everywhere,
        "Type <think> to open",
        "первом </think>",
        "07-3 <think> removed from the answer",
    ),
    row(
        n07.check_split_think,
        _split_unclosed_is_reasoning,
        "Still weighing Paris",
        "оборвался внутри блока",
        "07-3 an unclosed block as reasoning",
    ),
    row(n08.check_one_call, {"tool_choice": "auto"}, '"auto"', '"auto"', "08-1 the starter"),
    row(
        n08.check_one_call,
        {"tool_choice": "auto", "parallel_tool_calls": False},
        "only cap",
        "только ограничил",
        "08-1 capped auto",
    ),
    row(
        n08.check_one_call,
        {"tool_choice": "required"},
        "at least one",
        "хотя бы один",
        "08-1 required",
    ),
    row(n08.check_one_call, {"tool_choice": "none"}, "forbids", "запрещает", "08-1 none"),
    row(
        n08.check_one_call,
        {"tool_choice": "get_weather"},
        "is not a value",
        "не то значение",
        "08-1 a bare name",
    ),
    row(
        n08.check_one_call,
        {"tool_choice": {"function": {"name": "get_weather"}}},
        '"type": "function"',
        '"type": "function"',
        "08-1 no type",
    ),
    row(n08.check_one_call, Agreeable(), "dict", "словарём", "08-1 a lying object"),
    row(
        n08.check_one_call,
        {"function_call": {"name": "get_weather"}},
        "deprecated functions API",
        "устаревшего functions API",
        "08-1 the deprecated function_call",
    ),
    Row(
        n08.check_named_choice,
        lambda: (set(), set()),
        "fill both sets",
        "заполните оба",
        "08-2 the starter",
    ),
    Row(
        n08.check_named_choice,
        lambda: ({"Moonshot K2.6", "Moonshot K3"}, set()),
        "K3 does not refuse",
        "K3 не отказывает",
        "08-2 both refuse",
    ),
    Row(
        n08.check_named_choice,
        lambda: ({"Moonshot K2.6"}, {"Moonshot K3", "vLLM"}),
        "vLLM keeps",
        "vLLM",
        "08-2 vLLM ignores",
    ),
    Row(
        n08.check_named_choice,
        lambda: (set(), {"Moonshot K3"}),
        "K2.6 with thinking on",
        "K2.6",
        "08-2 K2.6 forgotten",
    ),
    Row(
        n08.check_named_choice,
        lambda: ({"moonshot k2.6"}, {"Moonshot K3"}),
        "use the names",
        "используйте названия",
        "08-2 lower case",
    ),
    Row(
        n08.check_named_choice,
        lambda: ("Moonshot K2.6", {"Moonshot K3"}),
        "set of engine names",
        "множеством",
        "08-2 a string",
    ),
    Row(
        n08.check_named_choice,
        lambda: ({Agreeable()}, {"Moonshot K3"}),
        "Agreeable",
        "Agreeable",
        "08-2 a lying item",
    ),
    row(
        n08.check_strict_tool,
        copy.deepcopy(DATED_TOOL),
        "format is not supported",
        "format",
        "08-3 the starter",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(lambda t: t["function"].update(strict=False)),
        "leave strict out",
        "не указывайте strict",
        "08-3 strict off",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(
            lambda t: t["function"]["parameters"]["properties"]["date"].update(title="Date")
        ),
        "title is not supported",
        "title",
        "08-3 a title",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(lambda t: t["function"]["parameters"]["properties"].pop("date")),
        "both parameters",
        "оба параметра",
        "08-3 date removed",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(
            lambda t: t["function"]["parameters"]["properties"].update(date={"type": "string"})
        ),
        "what a date looks like",
        "как выглядит дата",
        "08-3 no description",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(lambda t: t["function"].update(name="weather")),
        "keep the tool's shape",
        "сохраните вид",
        "08-3 renamed",
    ),
    row(
        n08.check_strict_tool,
        Agreeable(),
        "keep the tool's shape",
        "сохраните вид",
        "08-3 a lying object",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(lambda t: t["function"]["parameters"].update(required=["city"])),
        "'date' is not in required",
        "'date' больше нет в required",
        "08-3 date no longer required",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(
            lambda t: t["function"]["parameters"]["properties"]["date"].update(
                description="The date."
            )
        ),
        "'The date.' does not say what a date looks like",
        "не говорит, как выглядит дата",
        "08-3 a description without the shape",
    ),
    row(
        n08.check_strict_tool,
        _strict_tool_with(
            lambda t: t["function"]["parameters"]["properties"]["date"].update(type="date")
        ),
        "\"type\": 'date' is not a JSON Schema type",
        "не тип JSON Schema",
        "08-3 type date",
    ),
    row(
        n09.check_typed_value,
        lambda text, kind: json.loads(text),
        "JSONDecodeError",
        "сырой текст",
        "09-1 the starter",
    ),
    row(
        n09.check_typed_value,
        _typed_value_stripped,
        "'  Beijing  '",
        "'  Beijing  '",
        "09-1 .strip() on strings",
    ),
    row(
        n09.check_typed_value,
        lambda t, k: json.loads(t) if t[:1] in '0123456789tfn[{"' else t,
        "decide by the type",
        "решайте по типу",
        "09-1 decided by the text",
    ),
    row(
        n09.check_typed_value,
        lambda t, k: float(t) if k == "number" else solution("09", "typed_value")(t, k),
        "typed_value('3', 'number')",
        "typed_value('3', 'number')",
        "09-1 numbers as floats",
    ),
    row(
        n09.check_typed_value,
        lambda t, k: t.strip('"') if k == "string" else json.loads(t),
        "'\"quoted\"'",
        "'\"quoted\"'",
        "09-1 quotes removed",
    ),
    row(
        n09.check_typed_value,
        lambda t, k: t,
        "typed_value('3', 'number')",
        "typed_value('3', 'number')",
        "09-1 everything text",
    ),
    row(
        n09.check_render_call,
        lambda name, index, arguments: (
            f'<|open|>call tool="{name}" index="{index}"<|sep|><|close|>call<|sep|>'
        ),
        "render_call('get_weather', 1",
        "render_call('get_weather', 1",
        "09-2 the starter",
    ),
    row(
        n09.check_render_call,
        _render_ascii,
        "\\u escapes",
        "кириллицу",
        "09-2 the old recipe escapes Cyrillic",
    ),
    row(
        n09.check_render_call,
        _render_bool_number,
        "bool first",
        "bool первым",
        "09-2 True as a number",
    ),
    row(
        n09.check_render_call,
        _render_spaced,
        "compact JSON",
        "компактный JSON",
        "09-2 spaces in JSON",
    ),
    row(
        n09.check_render_call,
        lambda n, i, a: solution("09", "render_call")(n, i - 1, a),
        "character",
        "символа",
        "09-2 index from zero",
    ),
    row(
        n09.check_render_call,
        lambda n, i, a: Agreeable(),
        "'Agreeable'",
        "'Agreeable'",
        "09-2 a lying text",
    ),
    row(
        n09.check_result_tags,
        _tags_first_match,
        "result_tags(<",
        "result_tags(<",
        "09-3 the first assistant message",
    ),
    row(
        n09.check_result_tags,
        _tags_result_order,
        "results in the other order",
        "результаты в обратном порядке",
        "09-3 the results' order",
    ),
    row(n09.check_result_tags, _tags_from_zero, "'one call'", "«один вызов»", "09-3 from zero"),
    row(
        n09.check_result_tags,
        lambda messages: {
            m["tool_call_id"]: (m.get("name"), 1) for m in messages if m["role"] == "tool"
        },
        "name from the call",
        "из вызова",
        "09-3 the tool message's name",
    ),
    row(n09.check_result_tags, lambda messages: {}, "'one call'", "«один вызов»", "09-3 nothing"),
    row(
        n09.check_result_tags,
        lambda messages: Agreeable(),
        "'Agreeable'",
        "'Agreeable'",
        "09-3 a lying dict",
    ),
    row(
        n09.check_result_tags,
        _tags_index_as_text,
        "an int), not its text",
        "(int), а не его текст",
        "09-3 the index as text",
    ),
    row(
        n09.check_result_tags,
        _tags_counted_per_tool,
        "whatever its tool",
        "какого бы инструмента",
        "09-3 the index counted per tool",
    ),
]

# The second pass's wrong answers (each was accepted before its case joined the battery).
WRONG += [
    row(
        n03.check_assemble,
        _assemble_skips_first_chunk,
        "1: {'role': 'assistant', 'tool_calls': [...]}>): at result[0].id",
        "вместе с ролью нести и первую часть вызова",
        "03-1 the first chunk skipped",
    ),
    row(
        n03.check_assemble,
        _assemble_skips_usage,
        "<choices: [] + 'one call'",
        "<choices: [] + 'one call'",
        "03-1 usage chunks skipped, choices[0] read",
    ),
    row(
        n03.check_assemble,
        lambda chunks: _assemble_from(chunks, _glue_name_elif_arguments),
        "whole>): at result[0].function.arguments",
        "Одна часть может нести весь вызов сразу",
        "03-1 name elif arguments",
    ),
    row(
        n03.check_assemble,
        _assemble_appends_at_new_index,
        "A call's first piece may come after a piece of a call with a higher index",
        "Первая часть вызова может прийти после части вызова с большим index",
        "03-1 an IndexError of the calls' list",
    ),
    row(
        n03.check_history,
        _repair_first_call_only,
        "another order than the calls",
        "не в том порядке, что вызовы",
        "03-2 the first call's result only",
    ),
    row(
        n03.check_history,
        _repair_after_last_user,
        "repair(<user+assistant+tool+tool+tool+tool>, None, calls): at result[1]",
        "до и после них могут стоять другие раунды",
        "03-2 right after the last question",
    ),
    row(
        n03.check_history,
        _repair_before_last_results,
        "other rounds may stand before or after them",
        "до и после них могут стоять другие раунды",
        "03-2 the results taken for the last messages",
    ),
    row(
        n03.check_history,
        _repair_before_trailing_tools,
        "other rounds may stand before or after them",
        "до и после них могут стоять другие раунды",
        "03-2 the trailing tool messages",
    ),
    row(
        n03.check_usage,
        _usage_last_chunk_guarded,
        "total_tokens([])",
        "total_tokens([])",
        "03-3 the last chunk, guarded",
    ),
    row(
        n03.check_usage,
        _usage_last_chunk_try,
        "total_tokens([])",
        "total_tokens([])",
        "03-3 the last chunk in try",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.replace("functions.", "").split(":")[0],
        "'functions.cloud_functions.deploy:0'",
        "'functions.cloud_functions.deploy:0'",
        "04-1 functions. replaced everywhere",
    ),
    row(
        n04.check_name_from_id,
        lambda c: c.rpartition(":")[0].rpartition("functions.")[2],
        "should return 'cloud_functions.deploy', got 'deploy'",
        "должна вернуть 'cloud_functions.deploy', получено 'deploy'",
        "04-1 after the last functions.",
    ),
    row(
        n04.check_extract,
        _extract_one_per_id,
        "the same id",
        "один и тот же id",
        "04-2 one call per id",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_skips_empty,
        "empty arguments {}",
        "пустыми аргументами {}",
        "05-1 a block with empty arguments skipped",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_parameters_key,
        'exactly two keys, "name" and "arguments"',
        'ровно два ключа, "name" и "arguments"',
        "05-1 the arguments under parameters",
    ),
    row(
        n05.check_unparsed,
        _unparsed_pops,
        "changed the message it was given",
        "изменила полученное сообщение",
        "05-2 tool_calls popped",
    ),
    row(
        n05.check_unparsed,
        _unparsed_setdefault,
        "Kimi-K2 markers in content, no tool_calls",
        "маркеры Kimi-K2 в content, tool_calls нет",
        "05-2 tool_calls set by setdefault",
    ),
    row(
        n05.check_unparsed,
        _unparsed_content_filled_in,
        "content None with parsed tool_calls",
        "content равен None, tool_calls разобраны",
        "05-2 content None written over",
    ),
    row(
        n07.check_xml_calls,
        _xml_with(r"<parameter=(\w+)>\n(.*?)\n</parameter>"),
        "'max-results'",
        "'max-results'",
        "07-1 a parameter name of word characters",
    ),
    row(
        n07.check_xml_calls,
        _xml_with(r"<parameter=(.*?)>\n(.*?)\n</parameter>", keep=bool),
        "no <parameter> inside",
        "нет ни одного <parameter>",
        "07-1 a call without parameters dropped",
    ),
    row(
        n07.check_split_think,
        _split_prefix_removed,
        "spaces or newlines before <think>",
        "могут стоять пробелы или переводы строк",
        "07-3 removeprefix before strip",
    ),
    row(
        n09.check_render_call,
        _render_numbers_g,
        "is written as JSON writes it, every digit kept",
        "пишется так, как его пишет JSON, со всеми цифрами",
        "09-2 numbers written with :g",
    ),
    row(
        n09.check_result_tags,
        _tags_get_with_default,
        '"tool_calls": None',
        '"tool_calls": None',
        "09-3 tool_calls None read with .get(key, [])",
    ),
]


# Lessons 10-12 keep their wrong answers beside their own tests (tests/test_exercises_n10.py,
# n11, n12), with the words each hint must contain; the table runs them too, so every check of the
# series is held to the same rules here (six rows, the case named, no solution code given away).
WRONG += [
    row(check, answer, en[0], ru[0], f"10-{check.__name__}-{number}")
    for check, rows in (
        (n10.check_map_tool_names, lesson10.WRONG_NAMES),
        (n10.check_result_content, lesson10.WRONG_RESULTS),
    )
    for number, (answer, en, ru) in enumerate(rows, 1)
]
WRONG += [
    row(check, answer, en[0], ru[0], f"11-{check.__name__}-{getattr(answer, '__name__', 'value')}")
    for check, answer, en, ru in lesson11.WRONG
]
WRONG += [
    row(check, answer, en, ru, f"12-{check.__name__}-{answer.__name__}")
    for check, rows in (
        (n12.check_f1, lesson12.F1_WRONG),
        (n12.check_schema_accuracy, lesson12.SCHEMA_WRONG),
    )
    for answer, en, ru, _case in rows
]


# --- round 4 of the wrong answers (a student helper, 2026-12-03): each was accepted or got a
# misleading hint before the fix that came with it.


def _pops_the_calls(message, tool_map):
    """Takes the calls off the assistant message (which stays in the history)."""
    answers = _answer_one(message, tool_map)
    message["tool_calls"].clear()
    return answers


def _error_without_type(function, arguments_text):
    """str(error) alone: a TimeoutError() says nothing."""
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return json.dumps({"error": str(error)})


WRONG += [
    row(
        n02.check_answer_calls,
        _pops_the_calls,
        "changed the assistant message it was given",
        "изменила полученное сообщение ассистента",
        "02-2 calls popped off the message",
    ),
    row(
        n02.check_tool_content,
        _error_without_type,
        "str() of TimeoutError() is empty",
        "str() от TimeoutError() — пустая строка",
        "02-3 the error's text without its type",
    ),
]


def test_a_result_json_cannot_encode_may_be_written_as_text(capsys) -> None:
    """02-3: `default=str` keeps a dated result instead of turning it into an error; both are
    right by the task's text (round 4 found this honest answer rejected)."""

    def tool_content(function, arguments_text):
        try:
            return json.dumps(function(**json.loads(arguments_text)), default=str)
        except Exception as error:
            return json.dumps({"error": f"{type(error).__name__}: {error}"})

    assert verdict_of(capsys, n02.check_tool_content, tool_content).strip() == CORRECT


def _normalized_then(change):
    """The lesson's normalize_ids, then one change to the history it returns."""

    def normalize_ids(history):
        return change(solution("06", "normalize_ids")(history))

    return normalize_ids


def _without_user_messages(history):
    return [m for m in history if m.get("role") in ("assistant", "tool")]


def _tool_messages_without_name(history):
    return [
        {k: v for k, v in m.items() if k != "name"} if m.get("role") == "tool" else m
        for m in history
    ]


def _history_message_then(change):
    """The lesson's for_history, then one change to the message it returns."""

    def for_history(message):
        return change(message, solution("06", "for_history")(message))

    return for_history


def _reasoning_under_both_names(message, kept):
    text = message.get("reasoning_content") or message.get("reasoning")
    return kept | {"reasoning_content": text, "reasoning": text} if text else kept


def _calls_without_type(message, kept):
    if kept.get("tool_calls"):
        kept["tool_calls"] = [
            {"id": c["id"], "function": c["function"]} for c in kept["tool_calls"]
        ]
    return kept


def _skips_the_first_chunk(chunks):
    """Takes the first chunk for the role's alone (it may carry reasoning already)."""
    return solution("06", "reasoning_of")(chunks[1:])


WRONG += [
    row(
        n06.check_normalize,
        _normalized_then(_without_user_messages),
        "normalize_ids returned",
        "normalize_ids вернула",
        "06-2 user messages dropped",
    ),
    row(
        n06.check_normalize,
        _normalized_then(_tool_messages_without_name),
        "lost the keys ['name']",
        "потеряло ключи ['name']",
        "06-2 the tool message's name dropped",
    ),
    row(
        n06.check_history_message,
        _history_message_then(_reasoning_under_both_names),
        "a field this server did not send",
        "а сервер такого поля не присылал",
        "06-1 the reasoning under both names",
    ),
    row(
        n06.check_history_message,
        _history_message_then(_calls_without_type),
        "at tool_calls[0] expected",
        "в tool_calls[0] ожидалось",
        "06-1 the calls rebuilt without their type",
    ),
    row(
        n06.check_reasoning_of,
        _skips_the_first_chunk,
        "reasoning in the first chunk",
        "рассуждение уже в первом фрагменте",
        "06-3 the first chunk skipped",
    ),
]


def _name_from_the_id(tool_call, tool_map):
    function = tool_map[tool_call["id"].split(":")[0]]
    return function(**json.loads(tool_call["function"]["arguments"]))


def _quotes_swapped(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    return function(**json.loads(tool_call["function"]["arguments"].replace("'", '"')))


def _greets_only(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    arguments = json.loads(tool_call["function"]["arguments"])
    return function(name=arguments["name"], punctuation=arguments.get("punctuation", "!"))


def _last_piece_of_the_name(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"].split(".")[-1]]
    return function(**json.loads(tool_call["function"]["arguments"]))


WRONG += [
    row(
        n01.check_schema,
        schema_with("function.parameters.properties.value.description", ["The temperature"]),
        "a description (a string",
        "описание (строкой",
        "01-1 a list as a description",
    ),
    row(
        n01.check_call_tool,
        _name_from_the_id,
        "is the call's id, not a tool's name",
        "это id вызова, а не имя инструмента",
        "01-2 the tool's name read from the id",
    ),
    row(n01.check_call_tool, _quotes_swapped, "Brien", "Brien", "01-2 quotes swapped"),
    row(
        n01.check_call_tool,
        _greets_only,
        "has no argument 'name'",
        "нет аргумента 'name'",
        "01-2 greet's parameters hard-coded",
    ),
    row(
        n01.check_call_tool,
        _last_piece_of_the_name,
        "under its whole name",
        "под полным именем",
        "01-2 the name's last piece",
    ),
]


def _stripped_content(reply):
    content = reply.choices[0].message.content
    return content.strip() if content else content


def _date_described(text):
    def change(tool):
        tool["function"]["parameters"]["properties"]["date"]["description"] = text

    return _strict_tool_with(change)


NAMED_WEATHER = {"type": "function", "function": {"name": "get_weather"}}

WRONG += (
    [
        row(
            n08.check_strict_tool,
            _date_described(description),
            "date",
            "дат",
            f"08-3 the date described as {description!r}",
        )
        for description in (
            "The date, e.g. 2026",
            "Any day in 2026",
            "The day and the month of the forecast",
        )
    ]
    + [
        row(
            n08.check_one_call,
            {"tool_choice": NAMED_WEATHER, **extra},
            en,
            ru,
            f"08-1 a named choice with {sorted(extra)}",
        )
        for extra, en, ru in (
            ({"tools": []}, "leave tools out of settings", "уберите tools из settings"),
            ({"max_tokens": 1}, "max_tokens=1 cuts the answer off", "max_tokens=1 обрывает ответ"),
            ({"n": 2}, "n=2 asks for that many answers", "n=2 просит столько ответов"),
        )
    ]
    + [
        row(n00.check_live_env, GOOD_ENV | {"KIMI_MODEL": model}, en, ru, f"00-1 {model}")
        for model, en, ru in (
            ("kimi-k2", "names the model family", "название семейства моделей"),
            ("kimi-k2-instruct", "names the model family", "название семейства моделей"),
            ("moonshot-v1-8k", "not Kimi-K2", "а не Kimi-K2"),
        )
    ]
    + [
        row(
            n00.check_qwen_command,
            "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice=true "
            "--tool-call-parser hermes",
            "is a switch that takes no value",
            "переключатель без значения",
            "00-2 the switch given a value",
        ),
        row(
            n00.check_reading,
            lambda reply: _read(reply, text=_stripped_content),
            "Ready.",
            "Ready.",
            "00-3 the text stripped",
        ),
    ]
)


def test_a_named_choice_sent_in_extra_body_is_one_call(capsys) -> None:
    """08-1: the SDK merges extra_body into the request, so the named choice reaches vLLM there
    too (round 4 found this honest answer rejected)."""
    out = verdict_of(capsys, n08.check_one_call, {"extra_body": {"tool_choice": NAMED_WEATHER}})
    assert out.strip() == CORRECT


# --- round 5 of the wrong answers (a second student helper, 2026-12-03, lessons 03-12): each
# was accepted, or got a misleading hint, before the case or the hint that came with it.


def _then(lesson, name, change):
    """The lesson's own solution `name`, its result passed through `change`."""

    def answer(*args):
        return change(solution(lesson, name)(*args), *args)

    return answer


def _total_as_a_sum(chunks):
    usage = next((c.usage for c in chunks if c.usage), None)
    return usage.prompt_tokens + usage.completion_tokens if usage else None


def _usage_after_the_calls_finish(chunks):
    after = False
    for chunk in chunks:
        if after and chunk.usage:
            return chunk.usage.total_tokens
        if chunk.choices and chunk.choices[0].finish_reason == "tool_calls":
            after = True
    return None


def _hermes_deduplicated(text):
    blocks = re.findall(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL)
    calls = map(json.loads, dict.fromkeys(b.strip() for b in blocks))
    return [(c["name"], c["arguments"]) for c in calls]


def _unparsed_with_len(message):
    content = message.get("content") or ""
    marked = "<|tool_call_begin|>" in content or "<tool_call>" in content
    return marked and len(message.get("tool_calls", [])) == 0


def _schema_problem_ignored(tool_calls, tools):
    from helpers.arguments import validate_arguments
    from helpers.tools import parse_arguments

    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    fits = 0
    for call in tool_calls:
        arguments, _problem = parse_arguments(call["function"]["arguments"])
        name = call["function"]["name"]
        fits += name in schemas and not validate_arguments(arguments, schemas[name])
    return fits / len(tool_calls) if tool_calls else 0.0


def _schema_names(normal):
    """The lesson's schema_accuracy with every tool and call name passed through `normal`."""

    def schema_accuracy(tool_calls, tools):
        tools = copy.deepcopy(tools)
        for tool in tools:
            tool["function"]["name"] = normal(tool["function"]["name"])
        calls = copy.deepcopy(tool_calls)
        for call in calls:
            call["function"]["name"] = normal(call["function"]["name"])
        return solution("12", "schema_accuracy")(calls, tools)

    return schema_accuracy


def _tools_read_flat(tool_calls, tools):
    schemas = {t["name"]: t["parameters"] for t in tools}
    return len([c for c in tool_calls if c["function"]["name"] in schemas]) / len(tool_calls)


def _raw_string_unescaped(text, kind):
    return text.replace("\\n", "\n") if kind == "string" else json.loads(text)


def _whole_floats_as_ints(name, index, arguments):
    whole = {
        k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in arguments.items()
    }
    return solution("09", "render_call")(name, index, whole)


def _reasoning(change):
    return _then("07", "split_think", lambda pair, text: (change(pair[0]), pair[1]))


WRONG += [
    row(
        n03.check_assemble,
        _then(
            "03",
            "assemble_tool_calls",
            lambda calls, chunks: [c for c in calls if c["function"]["arguments"]],
        ),
        "no arguments at all",
        "вовсе не прислать аргументов",
        "03-1 calls without arguments dropped",
    ),
    row(
        n03.check_usage,
        _total_as_a_sum,
        "not a sum of your own",
        "а не ваша сумма",
        "03-3 prompt + completion",
    ),
    row(
        n03.check_usage,
        _usage_after_the_calls_finish,
        "A text answer has its usage chunk too",
        "У текстового ответа тоже есть фрагмент со статистикой",
        "03-3 usage read only after the calls",
    ),
    row(
        n04.check_extract,
        _then(
            "04",
            "extract_tool_calls",
            lambda calls, text: [c for c in calls if c["function"]["arguments"]],
        ),
        "is still a call, with arguments ''",
        "всё равно вызов, с arguments ''",
        "04-2 calls with empty arguments dropped",
    ),
    row(
        n05.check_hermes_calls,
        _hermes_deduplicated,
        "two equal blocks are two calls",
        "два одинаковых блока — это два вызова",
        "05-1 equal blocks collapsed",
    ),
    row(
        n05.check_hermes_calls,
        _then("05", "hermes_calls", lambda pairs, text: [(a, n) for n, a in pairs]),
        "the name first",
        "имя первым",
        "05-1 (arguments, name) pairs",
    ),
    row(
        n05.check_unparsed,
        _unparsed_with_len,
        "is None in a message without calls",
        "tool_calls равен None",
        "05-2 len() of a tool_calls that is None",
    ),
    row(
        n07.check_split_think,
        _reasoning(lambda text: " ".join(text.split())),
        "only the edges of the reasoning are stripped",
        "срезаются только края",
        "07-3 the reasoning's lines joined with spaces",
    ),
    row(
        n07.check_split_think,
        _reasoning(lambda text: text.replace("\n", "")),
        "reasoning in two paragraphs",
        "рассуждение в два абзаца",
        "07-3 the reasoning's newlines removed",
    ),
    row(
        n07.check_split_think,
        _reasoning(lambda text: text.split("\n\n")[0]),
        "its inner newlines, blank lines",
        "пустые строки",
        "07-3 the reasoning's first paragraph",
    ),
    row(
        n07.check_typed,
        _then(
            "07", "typed", lambda value, *_: round(value, 2) if isinstance(value, float) else value
        ),
        "converted with float(value)",
        "через float(value)",
        "07-2 floats rounded to two places",
    ),
    row(
        n09.check_typed_value,
        _raw_string_unescaped,
        "backslashes",
        "обратными косыми чертами",
        "09-1 a raw string's backslash-n decoded",
    ),
    row(
        n09.check_render_call,
        _whole_floats_as_ints,
        "the number 2.0 is written as JSON writes it",
        "число 2.0 пишется так, как его пишет JSON",
        "09-2 a whole float written as an int",
    ),
    row(
        n09.check_result_tags,
        _then(
            "09", "result_tags", lambda tags, messages: {k: (v[1], v[0]) for k, v in tags.items()}
        ),
        "The pair is (tool name, index), the name first",
        "имя первым",
        "09-3 (index, name) pairs",
    ),
    row(
        n12.check_schema_accuracy,
        _schema_problem_ignored,
        "not JSON, for a tool without parameters",
        "у инструмента без параметров",
        "12-2 parse_arguments' problem ignored",
    ),
    row(
        n12.check_schema_accuracy,
        _schema_names(str.lower),
        "in another case",
        "в другом регистре",
        "12-2 names compared in any case",
    ),
    row(
        n12.check_schema_accuracy,
        _schema_names(str.strip),
        "a space before the tool's name",
        "пробел перед именем",
        "12-2 names stripped",
    ),
    row(
        n12.check_schema_accuracy,
        _tools_read_flat,
        'keeps its name inside tool["function"]',
        'name тоже лежит внутри tool["function"]',
        "12-2 tools read flat",
    ),
]


WRONG.append(
    row(
        n01.check_typed_function,
        choices_in_the_summary,
        "at the end of to_unit's own line",
        "в конце строки самого to_unit",
        "01-3 the choices in the summary line",
    )
)


MIN_WRONG = 6


def exercise_modules() -> list[ModuleType]:
    """The self-check module of every lesson that has one (`helpers/exercises/nNN.py`), in the
    lessons' order: derived from `helpers.lessons`, so a new lesson's checks join by themselves."""
    modules = []
    for lesson in lesson_names():
        name = f"helpers.exercises.{exercises_module(lesson)}"
        if importlib.util.find_spec(name) is not None:
            modules.append(importlib.import_module(name))
    return modules


def all_checks() -> list[Callable[..., Any]]:
    """Every exercise's self-check in the series: each `check_*` a lesson's module defines."""
    return [
        fn
        for module in exercise_modules()
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if name.startswith("check_") and fn.__module__ == module.__name__
    ]


def check_id(check: Callable[..., Any]) -> str:
    """`n04.check_extract`: how the table and the failures name a check."""
    return f"{check.__module__.rsplit('.', 1)[1]}.{check.__name__}"


def lesson_of(check: Callable[..., Any]) -> str:
    """The two digits of the lesson a check belongs to."""
    return check.__module__.rsplit(".n", 1)[1]


def test_the_checks_come_from_every_lessons_module() -> None:
    modules = exercise_modules()
    assert modules, "no lesson has a helpers/exercises/nNN.py"
    empty = [
        m.__name__
        for m in modules
        if not any(check_id(c).startswith(m.__name__[-3:]) for c in all_checks())
    ]
    assert not empty, f"these exercise modules define no check_* function: {empty}"


def test_every_check_has_six_wrong_answers() -> None:
    counts = {check_id(check): 0 for check in all_checks()}
    for wrong in WRONG:
        counts[check_id(wrong.check)] = counts.get(check_id(wrong.check), 0) + 1
    short = {name: n for name, n in counts.items() if n < MIN_WRONG}
    assert not short, (
        "every self-check needs at least "
        f"{MIN_WRONG} realistic wrong answers in tests/test_exercises_table.py (WRONG), one per "
        "class of mistake that applies (issue 27: text around calls, several calls and sections, "
        "odd ids and names, multi-line or marker-like arguments, Cyrillic, whitespace, truncation, "
        "a system message, results in another order, reused ids, a lying object). Missing:\n"
        + "\n".join(
            f"  {name}: {n} rows; add {MIN_WRONG - n} as row({name}, <wrong answer>, "
            '"<words of the English hint naming the failing input>", "<the same in Russian>", '
            '"<NN-k label>")'
            for name, n in short.items()
        )
    )


@pytest.mark.parametrize("wrong", WRONG, ids=[w.label for w in WRONG])
def test_a_wrong_answer_is_rejected_with_a_hint_that_names_the_case(wrong: Row, capsys) -> None:
    out = verdict_of(capsys, wrong.check, *copy.deepcopy(wrong.answer()))
    english, russian = out.splitlines()
    assert english.startswith(NOT_YET), out
    assert wrong.en in english, out
    assert russian.startswith("Пока нет:") and wrong.ru in russian, out
    given_away = [line for line in _solution_lines(lesson_of(wrong.check)) if line in out]
    assert not given_away, f"the hint gives the solution's code away: {given_away}"


@functools.cache
def _solution_lines(lesson: str) -> tuple[str, ...]:
    """The code lines of a lesson's hidden solution cells that are long enough to be a giveaway
    (an expression of the solution, not `return calls`)."""
    name = next(n for n in lesson_names() if n.startswith(lesson))
    lines = {
        line.strip()
        for cell in lesson_cells(name)
        if cell.kind == "code" and cell.hidden
        for line in cell.en.splitlines()
    }
    return tuple(line for line in lines if len(line) >= 24 and not line.startswith(("#", "check_")))


@pytest.mark.parametrize("check", all_checks(), ids=check_id)
def test_the_lessons_reference_solution_is_accepted(check, capsys) -> None:
    args = reference_args(lesson_of(check), check.__name__)
    assert verdict_of(capsys, check, *args) == CORRECT + "\n"


def _function_checks() -> list[Callable[..., Any]]:
    """The checks whose answer is one function (the others judge a value: a command, settings)."""
    checks = []
    for check in all_checks():
        try:
            args = reference_args(lesson_of(check), check.__name__)
        except AssertionError:  # no reference yet: the reference test says what to add
            continue
        if [callable(a) for a in args] == [True]:
            checks.append(check)
    return checks


@pytest.mark.parametrize("check", _function_checks(), ids=check_id)
def test_a_solution_hard_coded_to_the_example_is_rejected(check, capsys) -> None:
    """The function that returns, for any input, what the reference returns on the check's first
    input (the lesson's example) must get "Not yet": the check looks beyond its example."""
    (reference,) = reference_args(lesson_of(check), check.__name__)
    seen: list[Any] = []

    def spy(*args):
        result = reference(*args)
        if not seen:
            seen.append(copy.deepcopy(result))
        return result

    functools.update_wrapper(spy, reference)
    assert verdict_of(capsys, check, spy) == CORRECT + "\n"
    memorized = functools.update_wrapper(lambda *args: copy.deepcopy(seen[0]), reference)
    assert verdict_of(capsys, check, memorized).startswith(NOT_YET)


class _Raises:
    """An object every method of which raises (the checks must not touch it)."""

    def __getattr__(self, name):
        raise RuntimeError("touched")

    def __eq__(self, other):
        raise RuntimeError("__eq__")

    def __bool__(self):
        raise RuntimeError("__bool__")

    def __len__(self):
        raise RuntimeError("__len__")

    def __iter__(self):
        raise RuntimeError("__iter__")

    def __repr__(self):
        raise RuntimeError("__repr__")

    __hash__ = object.__hash__


class _BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no str")


def _raise_bad_str(*args):
    raise _BadStr


def _recursive() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _odd_values() -> list[tuple[str, Callable[[], Any]]]:
    """Values a student may pass or return by mistake, made fresh for each call."""
    return [
        ("None", lambda: None),
        ("1", lambda: 1),
        ("'x'", lambda: "x"),
        ("[]", lambda: []),
        ("{}", lambda: {}),
        ("a generator", lambda: (i for i in range(3))),
        ("a lying __eq__", Agreeable),
        ("an object that raises", _Raises),
        ("a huge string", lambda: "x" * 5_000_000),
        ("a recursive list", _recursive),
        ("a dict subclass", lambda: type("D", (dict,), {"__eq__": lambda s, o: True})()),
        ("a nan", lambda: float("nan")),
    ]


def _arity(check: Callable[..., Any]) -> int:
    return len(inspect.signature(inspect.unwrap(check)).parameters)


def _fuzz_cases() -> list[Any]:
    cases = []
    for check in all_checks():
        for label, make in _odd_values():
            cases.append(pytest.param(check, make, False, id=f"{check_id(check)}-{label}"))
            cases.append(pytest.param(check, make, True, id=f"{check_id(check)}-returns {label}"))
        cases.append(
            pytest.param(check, lambda: _raise_bad_str, None, id=f"{check_id(check)}-raises")
        )
    return cases


@pytest.mark.parametrize(("check", "make", "returned"), _fuzz_cases())
def test_no_check_raises_on_an_odd_value(check, make, returned, capsys) -> None:
    """Any value, or a function returning it, gets "Not yet" with a sentence in both languages."""
    for lang in ("en", "ru"):
        set_language(lang)
        try:
            value = make()
            answer = (lambda *args: make()) if returned else value
            result = check(*[answer] * _arity(check))
        finally:
            reset_language()
        out = capsys.readouterr().out
        assert not result.passed, out
        assert out.startswith(("Not yet: ", "Пока нет: ")) and len(out) > 20, out
        assert len(out) < 3000, out[:300]


def test_an_endless_loop_is_stopped(capsys) -> None:
    def endless(call_id):
        while True:
            pass

    out = verdict_of(capsys, n04.check_name_from_id, endless)
    assert "did not finish within" in out and "не завершилась за" in out, out


def test_the_time_bound_counts_cpu_time_so_a_busy_machine_does_not_cut_a_correct_function() -> None:
    """A function that computes is cut after its CPU seconds, one that waits after the wall
    seconds; waiting less than that is not computing (a loaded machine makes a correct function
    wait its turn, and must not turn its "Correct!" into "did not finish")."""
    import time

    from helpers.exercises._verdict import _TooSlow, time_bound

    with time_bound(0.2, wait=5):
        time.sleep(0.5)  # 0.5 s of wall time, almost no CPU: not cut
    with pytest.raises(_TooSlow) as slow:
        with time_bound(5, wait=0.3):
            time.sleep(3)
    assert slow.value.args == (0.3, "wall")
    with pytest.raises(_TooSlow) as slow:
        with time_bound(0.3, wait=30):
            while True:
                pass
    assert slow.value.args == (0.3, "cpu")


def test_a_function_that_waits_forever_gets_its_own_hint(capsys, monkeypatch) -> None:
    import time

    from helpers.exercises import _verdict

    monkeypatch.setattr(_verdict, "STUDENT_WAIT_SECONDS", 0.3)

    def waits(call_id):
        time.sleep(60)

    out = verdict_of(capsys, n04.check_name_from_id, waits)
    assert "still waiting after 0.3 s" in out and "всё ещё ждала через 0.3 с" in out, out


def test_the_time_bound_puts_an_outer_timer_back() -> None:
    """pytest-timeout (signal method) runs a timer of its own: the check's bound must still stop an
    endless function (the test above) and must give the outer timer back with its time left."""
    import signal

    from helpers.exercises._verdict import time_bound

    before = signal.getitimer(signal.ITIMER_REAL)[0]
    with time_bound(0.5):
        pass
    after = signal.getitimer(signal.ITIMER_REAL)[0]
    assert (before > 0) == (after > 0)
    assert after <= before


def test_a_list_kept_between_calls_is_named(capsys) -> None:
    """02-2 with a mutable default: the second call returns the first call's messages too (round
    4 saw only two long lists in the hint)."""

    def answer_calls(message, tool_map, results=[]):  # noqa: B006 (the mistake under test)
        results += _answer_one(message, tool_map)
        return results

    english, russian = verdict_of(capsys, n02.check_answer_calls, answer_calls).splitlines()
    assert english.startswith(NOT_YET) and "results=[] is made once" in english, english
    assert "создаётся один раз" in russian, russian
