"""Self-checks for lesson 03 (streaming): assembling calls, repairing a history, reading usage."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    Explain,
    NotYet,
    call_student,
    exercise,
    server_refusal,
    weather_call,
)
from helpers.exercises._verdict import chunk as _chunk
from helpers.streaming import ToolCallAccumulator


def _header(index: int, call_id: str, name: str) -> dict[str, Any]:
    """The first delta of a call: index, id, name, empty arguments."""
    piece = {"index": index, "id": call_id, "type": "function"}
    return {"tool_calls": [piece | {"function": {"name": name, "arguments": ""}}]}


def _args(index: int, text: str) -> dict[str, Any]:
    """A later delta of a call: index and an argument fragment."""
    return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}


def sample_streams() -> dict[str, list[Any]]:
    """Streams the checks use: one call; interleaved calls plus usage; a delta without function."""
    usage = {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110}
    return {
        "one call": [
            _chunk({"role": "assistant", "content": ""}),
            _chunk(_header(0, "get_weather:0", "get_weather")),
            _chunk(_args(0, '{"city": ')),
            _chunk(_args(0, '"Beijing"}')),
            _chunk({}, "tool_calls"),
        ],
        "interleaved calls with a usage chunk": [
            _chunk({"role": "assistant", "content": "Checking."}),
            _chunk(_header(0, "get_weather:0", "get_weather")),
            _chunk(_header(1, "get_weather:1", "get_weather")),
            _chunk(_args(1, '{"city": "Mos')),
            _chunk(_args(0, '{"city": "Shang')),
            _chunk(_args(0, 'hai"}')),
            _chunk(_args(1, 'cow"}')),
            _chunk({}, "tool_calls"),
            _chunk(None, usage=usage),
        ],
        "a delta without function": [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"tool_calls": [{"index": 0, "id": "functions.get_weather:0"}]}),
            _chunk({"tool_calls": [{"index": 0, "type": "function"}]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"name": "get_weather"}}]}),
            _chunk(_args(0, '{"city": "Moscow"}')),
            _chunk({}, "tool_calls"),
        ],
    }


ASSEMBLE_MISTAKES = (
    Explain(
        IndexError,
        r"list index out of range",
        "the usage chunk at the end of a stream has `choices: []`: skip a chunk without "
        "choices before reading chunk.choices[0].",
        "у фрагмента со статистикой в конце потока `choices: []`: пропускайте фрагмент без "
        "choices, прежде чем читать chunk.choices[0].",
    ),
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute '(name|arguments)'",
        "a piece of tool_calls may come without function (only index and id): check "
        "piece.function before reading .{0}.",
        "часть tool_calls может прийти без function (только index и id): проверьте "
        "piece.function, прежде чем читать .{0}.",
    ),
    Explain(
        TypeError,
        r'can only concatenate str \(not "NoneType"\)',
        'a fragment\'s id, name or arguments may be None: add `or ""` before gluing.',
        'id, name или arguments во фрагменте могут быть None: перед склейкой добавьте `or ""`.',
    ),
)

USAGE_MISTAKES = (
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute 'total_tokens'",
        "a stream without a usage chunk ends with an ordinary chunk whose usage is None, so "
        "chunks[-1].usage is None there: look for a chunk whose usage is set, else return "
        "None.",
        "поток без фрагмента со статистикой кончается обычным фрагментом, у которого usage "
        "равно None, поэтому chunks[-1].usage там None: найдите фрагмент с заполненным usage, "
        "а если его нет, верните None.",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        "the usage chunk has `choices: []`: read chunk.usage, not chunk.choices[0].",
        "у фрагмента со статистикой `choices: []`: читайте chunk.usage, а не chunk.choices[0].",
    ),
)


@exercise
def check_assemble(assemble_tool_calls: Callable[[list[Any]], Any]) -> None:
    """Exercise 1: the learner's assembler must match `ToolCallAccumulator` on every stream."""
    for name, chunks in sample_streams().items():
        name_ru = CASE_RU[name]
        got = call_student(
            assemble_tool_calls,
            list(chunks),
            explain=ASSEMBLE_MISTAKES,
            case=(f"the stream '{name}'", name_ru),
        )
        accumulator = ToolCallAccumulator()  # the right answer: the course's accumulator
        for chunk in chunks:
            accumulator.add(chunk)
        expected = accumulator.tool_calls
        if got == expected:
            continue
        if not got:
            raise NotYet(
                f"no tool calls for the stream '{name}': glue each fragment onto "
                "tool_calls[piece.index].",
                f"нет вызовов для потока «{name_ru}»: приклейте каждую часть к "
                "tool_calls[piece.index].",
            )
        raise NotYet(
            f"for the stream '{name}' expected {json.dumps(expected)}, got {got!r}.",
            f"для потока «{name_ru}» ожидалось {json.dumps(expected)}, получено {got!r}.",
        )


QUESTION = "What's the weather like in Beijing today? Let's check using the tool."
CALLS = [weather_call("get_weather:0", "Beijing")]
RESULT = {
    "role": "tool",
    "tool_call_id": "get_weather:0",
    "name": "get_weather",
    "content": '{"city": "Beijing", "weather": "Sunny"}',
}


def broken_history() -> list[dict[str, Any]]:
    """What the guide's streaming loop sends in round 2: a tool result with no call before it."""
    return [{"role": "user", "content": QUESTION}, copy.deepcopy(RESULT)]


@exercise
def check_history(repair: Callable[..., Any]) -> None:
    """Exercise 2: the repaired history must pass the server's checks, in the right order."""
    from helpers.replay.validation import ApiError, check_messages

    broken = broken_history()
    before = copy.deepcopy(broken)
    repaired = call_student(repair, broken, "", copy.deepcopy(CALLS))
    if broken != before:
        raise NotYet(
            "return a new list; the messages you were given must stay unchanged.",
            "верните новый список; переданные сообщения менять не нужно.",
        )
    try:
        check_messages(repaired)
    except ApiError as error:
        raise server_refusal(error.message) from None
    roles = [m.get("role") for m in repaired]
    if roles != ["user", "assistant", "tool"]:
        raise NotYet(
            f"expected the roles user, assistant, tool; got {roles}.",
            f"ожидались роли user, assistant, tool; получено {roles}.",
        )
    if repaired[1].get("tool_calls") != CALLS:
        raise NotYet(
            "the assistant message must carry the tool_calls it made.",
            "сообщение ассистента должно содержать свои tool_calls.",
        )


@exercise
def check_usage(total_tokens: Callable[[list[Any]], Any]) -> None:
    """Exercise 3: total tokens from the usage chunk, None without one, no IndexError."""
    streams = sample_streams()
    got = call_student(
        total_tokens,
        list(streams["interleaved calls with a usage chunk"]),
        explain=USAGE_MISTAKES,
        case=("the stream with a usage chunk", "поток со статистикой"),
    )
    if got != 110:
        raise NotYet(
            f"the stream ends with a usage chunk of total_tokens=110; you returned {got!r}.",
            f"поток заканчивается фрагментом с total_tokens=110; вы вернули {got!r}.",
        )
    got = call_student(
        total_tokens,
        list(streams["one call"]),
        explain=USAGE_MISTAKES,
        case=("a stream without a usage chunk", "поток без статистики"),
    )
    if got is not None:
        raise NotYet(
            f"a stream without a usage chunk should give None; you returned {got!r}.",
            f"для потока без статистики нужно вернуть None; вы вернули {got!r}.",
        )
