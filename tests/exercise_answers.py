"""What the exercise tests share: the lessons' reference solutions (read from their hidden solution
cells, never copied), the inputs the checks are called with, and the wrong answers that more than
one test module feeds to a self-check."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from scripts_support import lesson_cells

from helpers.lessons import exercises_module, lesson_names

# The environment lesson 00's live-mode exercise accepts.
GOOD_ENV = {
    "LLM_MODE": "live",
    "KIMI_BASE_URL": "https://api.moonshot.ai/v1",
    "KIMI_MODEL": "kimi-k2.6",
}


SELF_CHECK = re.compile(r"(?:\w+\.)?check_\w+\([^\n]*\)")


class _Recorders:
    """A module stand-in whose every `check_*` records its arguments (see `solutions`)."""

    def __init__(self, recorder: Callable[[str], Any]) -> None:
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return self._recorder(name)


@functools.cache
def solutions(lesson: str) -> dict[str, Any]:
    """What the hidden solution cells of lesson `lesson` ("00".."09") define, run in order in one
    namespace (the self-check calls in them are replaced by recorders: `__check_calls__` maps
    each check's name to the arguments the reference solution gave it last)."""
    name = next(n for n in lesson_names() if n.startswith(lesson))
    module = importlib.import_module(f"helpers.exercises.{exercises_module(name)}")
    calls: dict[str, tuple[Any, ...]] = {}

    def recorder(check_name: str) -> Any:
        def record(*args: Any) -> None:
            calls[check_name] = args

        return record

    checks = {n: recorder(n) for n in dir(module) if n.startswith("check_")}
    namespace: dict[str, Any] = {
        "__check_calls__": calls,
        "json": json,
        "re": re,
        "copy": copy,
        module.__name__.rsplit(".", 1)[1]: SimpleNamespace(**checks),
        **checks,
    }
    after_solution = False
    for cell in lesson_cells(name):
        if cell.kind != "code":
            continue
        if cell.hidden:
            exec(compile(cell.en, f"<{name} solution>", "exec"), namespace)
        elif after_solution and SELF_CHECK.fullmatch(cell.en.strip()):
            # lessons 00-02 check the reference in the visible cell after the hidden one; a check
            # of another module (lesson 03's exit quiz, `quiz.check_quiz`) is recorded too
            for prefix in re.findall(r"(\w+)\.check_", cell.en):
                namespace.setdefault(prefix, _Recorders(recorder))
            exec(compile(cell.en, f"<{name} self-check>", "exec"), namespace)
        after_solution = cell.hidden
    return namespace


def solution(lesson: str, name: str) -> Any:
    """The value a lesson's hidden solution cells bind to `name`."""
    return solutions(lesson)[name]


def reference_args(lesson: str, check: str) -> tuple[Any, ...]:
    """The arguments the lesson's hidden solution cells pass to the self-check `check`."""
    calls = solutions(lesson)["__check_calls__"]
    assert check in calls, (
        f"lesson {lesson}'s hidden solution cells never call {check}: add a hidden cell with the "
        f"reference solution that ends with `{check}(...)` (docs/authoring.md)"
    )
    return calls[check]


# --- lesson 01: a typed function the schema is built from ------------------------------------------


def schema_with(path: str, value: Any) -> dict[str, Any]:
    """A copy of lesson 01's reference schema with one dotted path set (None deletes it)."""
    schema = copy.deepcopy(solution("01", "my_schema"))
    *parents, last = path.split(".")
    node = schema
    for key in parents:
        node = node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return schema


def renamed(fn):
    """The function under the exercise's name (the schema takes its name from __name__)."""
    fn.__name__ = "convert_temperature"
    return fn


def convert(value, to_unit):
    """The conversion itself, right both ways."""
    return value * 9 / 5 + 32 if to_unit == "fahrenheit" else (value - 32) * 5 / 9


@renamed
def untyped(value, to_unit):
    """Convert a temperature."""
    return convert(value, to_unit)


# --- lesson 03: assembling streamed tool calls ------------------------------------------------------


def guide_assemble(chunks):
    """The guide's accumulation: reads chunk.choices[0] and piece.function unguarded."""
    tool_calls = []
    for chunk in chunks:
        for piece in chunk.choices[0].delta.tool_calls or []:
            while len(tool_calls) <= piece.index:
                tool_calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = tool_calls[piece.index]
            call["id"] += piece.id or ""
            call["function"]["name"] += piece.function.name or ""
            call["function"]["arguments"] += piece.function.arguments or ""
    return tool_calls


def no_function_guard(chunks):
    """Skips the usage chunk, but reads `piece.function.name` unguarded."""
    return guide_assemble([chunk for chunk in chunks if chunk.choices])


def glue_to_latest(chunks):
    """Ignores `index`: right for one call, wrong for interleaved calls."""
    calls = []
    for chunk in chunks:
        for piece in (chunk.choices[0].delta.tool_calls if chunk.choices else None) or []:
            if piece.id:
                calls.append(
                    {"id": piece.id, "type": "function", "function": {"name": "", "arguments": ""}}
                )
            if piece.function:
                calls[-1]["function"]["name"] += piece.function.name or ""
                calls[-1]["function"]["arguments"] += piece.function.arguments or ""
    return calls


def repair_in_place(messages, content, tool_calls):
    """Inserts the assistant message into the caller's history."""
    messages.insert(1, {"role": "assistant", "content": content, "tool_calls": tool_calls})
    return messages


def repair_after(messages, content, tool_calls):
    """Appends the assistant message after the tool results."""
    return [*messages, {"role": "assistant", "content": content, "tool_calls": tool_calls}]


def repair_without_calls(messages, content, tool_calls):
    """Puts the assistant message back without its tool_calls."""
    return [messages[0], {"role": "assistant", "content": content}, messages[1]]


# --- lesson 06: normalizing ids, reading reasoning ----------------------------------------------------


def normalize_in_place(messages):
    """Right ids, but the caller's history is changed."""
    for message in messages:
        for k, tool_call in enumerate(message.get("tool_calls") or []):
            tool_call["id"] = f"functions.get_weather:{k}"
    return messages


def normalize_calls_only(messages):
    """Renames the calls and forgets the tool_call_id of the results."""
    result, k = copy.deepcopy(messages), 0
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            tool_call["id"] = f"functions.{tool_call['function']['name']}:{k}"
            k += 1
    return result


def normalize_counter_per_message(messages):
    """Restarts the counter in every message (the guide-era Moonshot habit)."""
    renamed, result = {}, copy.deepcopy(messages)
    for message in result:
        for k, tool_call in enumerate(message.get("tool_calls") or []):
            new_id = f"functions.{tool_call['function']['name']}:{k}"
            renamed[tool_call["id"]], tool_call["id"] = new_id, new_id
        if message["role"] == "tool":
            message["tool_call_id"] = renamed.get(message["tool_call_id"])
    return result


def reasoning_moonshot_only(chunks):
    """Knows only Moonshot's name."""
    text = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    return ("reasoning_content", text) if text else (None, "")


def reasoning_unguarded(chunks):
    """Reads chunk.choices[0] on the usage chunk too."""
    name, text = None, ""
    for chunk in chunks:
        delta = chunk.choices[0].delta
        for key in ("reasoning_content", "reasoning"):
            if getattr(delta, key, None):
                name, text = name or key, text + getattr(delta, key)
    return name, text
