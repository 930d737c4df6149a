"""ToolCallAccumulator: any chunking of a response assembles to the same message."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from openai.types.chat import ChatCompletionChunk

from helpers import ToolCallAccumulator
from tests.fakes import chunks_for, completion

BASE = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}


def chunk(delta=None, finish=None, choices=True, **extra) -> dict:
    body = BASE | extra
    body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else []
    return body


def test_guides_happy_path_with_sdk_objects_and_usage_chunk():
    body = completion("Let me check.", [("get_weather:0", "get_weather", '{"city": "Beijing"}')], "tool_calls")
    acc = ToolCallAccumulator()
    for c in chunks_for(body):
        acc.add(ChatCompletionChunk.model_validate(c))
    assert acc.content == "Let me check."
    assert acc.finish_reason == "tool_calls"
    assert acc.usage == {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    assert acc.assistant_message() == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [{"id": "get_weather:0", "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}],
    }


def test_role_only_first_chunk_and_no_calls_gives_plain_message():
    acc = ToolCallAccumulator()
    for c in [chunk({"role": "assistant"}), chunk({"content": "Hi"}), chunk({}, "stop")]:
        acc.add(c)
    assert acc.assistant_message() == {"role": "assistant", "content": "Hi"}
    empty = ToolCallAccumulator()
    empty.add(chunk({"role": "assistant", "content": None}))
    assert empty.assistant_message() == {"role": "assistant", "content": None}


def test_id_and_name_split_across_chunks_and_delta_without_function():
    acc = ToolCallAccumulator()
    acc.add(chunk({"tool_calls": [{"index": 0, "id": "functions.get_", "function": {"name": "get_"}}]}))
    acc.add(chunk({"tool_calls": [{"index": 0, "id": "weather:0", "type": "function"}]}))
    acc.add(chunk({"tool_calls": [{"index": 0, "function": {"name": "weather", "arguments": "{}"}}]}))
    assert acc.tool_calls == [{"id": "functions.get_weather:0", "type": "function",
                               "function": {"name": "get_weather", "arguments": "{}"}}]


def test_interleaved_parallel_calls_are_glued_by_index():
    acc = ToolCallAccumulator()
    acc.add(chunk({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"x\""}}]}))
    acc.add(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}},
                                  {"index": 1, "function": {"arguments": ": 2}"}}]}))
    acc.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}))
    assert [(c["id"], c["function"]["arguments"]) for c in acc.tool_calls] == [("a", "{}"), ("b", '{"x": 2}')]


def test_missing_index_new_id_starts_a_call_otherwise_continues():
    acc = ToolCallAccumulator()
    acc.add_delta({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{"}}]})
    acc.add_delta({"tool_calls": [{"function": {"arguments": "}"}}]})
    acc.add_delta({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "[]"}}]})
    assert [(c["id"], c["function"]["arguments"]) for c in acc.tool_calls] == [("a", "{}"), ("b", "[]")]


def test_other_choices_and_usage_only_chunks_are_ignored_safely():
    acc = ToolCallAccumulator()
    acc.add(BASE | {"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]})
    acc.add(chunk(choices=False, usage={"total_tokens": 3}))
    assert acc.content == "" and acc.usage == {"total_tokens": 3}


def test_returned_calls_are_copies():
    acc = ToolCallAccumulator()
    acc.add_delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]})
    acc.tool_calls[0]["id"] = "changed"
    assert acc.tool_calls[0]["id"] == "a"


names = st.from_regex(r"[a-z][a-z0-9_.\-]{0,12}", fullmatch=True)
args = st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8)), max_size=3)


@st.composite
def chunked_response(draw):
    """Random calls and content, each string cut at random places, call pieces interleaved."""
    calls = draw(st.lists(st.tuples(names, names, args), min_size=0, max_size=4))
    content = draw(st.text(max_size=30))
    expected = [{"id": f"{n}:{i}", "type": "function",
                 "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                for i, (n, _, a) in enumerate(calls)]

    def cut(text: str) -> list[str]:
        points = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
        bounds = [0, *[p for p in points if p < len(text)], len(text)]
        return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a] or [""]

    streams = []
    for index, call in enumerate(expected):
        f = call["function"]
        pieces = [{"index": index, "id": p} for p in cut(call["id"])]
        pieces += [{"index": index, "function": {"name": p}} for p in cut(f["name"])]
        pieces += [{"index": index, "function": {"arguments": p}} for p in cut(f["arguments"])]
        streams.append(pieces)
    merged = []
    while any(streams):  # interleave: keep each call's own order
        pick = draw(st.sampled_from([s for s in streams if s]))
        merged.append(pick.pop(0))
    deltas = [{"content": p} for p in cut(content)] + [{"tool_calls": [m]} for m in merged]
    return content, expected, deltas


@settings(max_examples=examples(300), deadline=None)
@given(chunked_response())
def test_any_chunking_assembles_the_same_calls(case):
    content, expected, deltas = case
    acc = ToolCallAccumulator()
    acc.add(chunk({"role": "assistant"}))
    for delta in deltas:
        acc.add(chunk(delta))
    acc.add(chunk({}, "tool_calls"))
    acc.add(chunk(choices=False, usage={"total_tokens": 1}))
    assert acc.content == content
    assert acc.tool_calls == expected
