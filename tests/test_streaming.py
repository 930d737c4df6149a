"""ToolCallAccumulator: any chunking of a response assembles to the same message."""

import json
import re

import pytest
from formats_support import message_like_json
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from openai.types.chat import ChatCompletionChunk

from helpers import ToolCallAccumulator, ToolLoopError, ask_model
from helpers.i18n import reset_language, set_language
from helpers.streaming import MalformedChunkError, StreamErrorEvent, wrong_kind
from tests.fakes import chunks_for, completion

BASE = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}


def chunk(delta=None, finish=None, choices=True, **extra) -> dict:
    body = BASE | extra
    body["choices"] = (
        [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else []
    )
    return body


def test_guides_happy_path_with_sdk_objects_and_usage_chunk():
    body = completion(
        "Let me check.", [("get_weather:0", "get_weather", '{"city": "Beijing"}')], "tool_calls"
    )
    acc = ToolCallAccumulator()
    for c in chunks_for(body):
        acc.add(ChatCompletionChunk.model_validate(c))
    assert acc.content == "Let me check."
    assert acc.finish_reason == "tool_calls"
    assert acc.usage == {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    assert acc.assistant_message() == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {
                "id": "get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
            }
        ],
    }


def test_role_only_first_chunk_and_no_calls_gives_plain_message():
    acc = ToolCallAccumulator()
    for c in [chunk({"role": "assistant"}), chunk({"content": "Hi"}), chunk({}, "stop")]:
        acc.add(c)
    assert acc.assistant_message() == {"role": "assistant", "content": "Hi"}
    empty = ToolCallAccumulator()
    empty.add(chunk({"role": "assistant", "content": None}))
    assert empty.assistant_message() == {"role": "assistant", "content": None}


def test_name_split_across_chunks_and_delta_without_function():
    acc = ToolCallAccumulator()
    acc.add(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "functions.get_weather:0", "function": {"name": "get_"}}
                ]
            }
        )
    )
    acc.add(chunk({"tool_calls": [{"index": 0, "type": "function"}]}))
    acc.add(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "weather", "arguments": "{}"}}]})
    )
    assert acc.tool_calls == [
        {
            "id": "functions.get_weather:0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"},
        }
    ]


def repeating_provider_stream(with_index=True):
    """Fireworks, LiteLLM, DeepSeek, Qwen's API: id, type and whole name repeated on every delta."""
    pieces = ['{"city"', ': "Bei', 'jing"}']
    deltas = [
        {
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": p},
                }
            ]
        }
        for p in pieces
    ]
    deltas += [
        {
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": p},
                }
            ]
        }
        for p in ["{", "}"]
    ]
    if with_index:
        for delta in deltas:
            delta["tool_calls"][0]["index"] = 0 if delta["tool_calls"][0]["id"] == "call_1" else 1
    return deltas


@pytest.mark.parametrize("with_index", [True, False])
def test_id_type_and_name_repeated_on_every_delta_are_kept_once(with_index):
    acc = ToolCallAccumulator()
    for delta in repeating_provider_stream(with_index):
        acc.add(chunk(delta))
    assert acc.tool_calls == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
        },
        {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
    ]


def test_a_split_name_then_repeated_whole_does_not_double():
    acc = ToolCallAccumulator()
    acc.add_delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_"}}]})
    acc.add_delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "weather"}}]})
    acc.add_delta(
        {
            "tool_calls": [
                {"index": 0, "id": "a", "function": {"name": "get_weather", "arguments": "{}"}}
            ]
        }
    )
    assert acc.tool_calls[0]["function"] == {"name": "get_weather", "arguments": "{}"}


def test_interleaved_parallel_calls_are_glued_by_index():
    acc = ToolCallAccumulator()
    acc.add(
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "b", "function": {"name": "g", "arguments": '{"x"'}}
                ]
            }
        )
    )
    acc.add(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}},
                    {"index": 1, "function": {"arguments": ": 2}"}},
                ]
            }
        )
    )
    acc.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}))
    assert [(c["id"], c["function"]["arguments"]) for c in acc.tool_calls] == [
        ("a", "{}"),
        ("b", '{"x": 2}'),
    ]


def test_missing_index_new_id_starts_a_call_otherwise_continues():
    acc = ToolCallAccumulator()
    acc.add_delta({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{"}}]})
    acc.add_delta({"tool_calls": [{"function": {"arguments": "}"}}]})
    acc.add_delta({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "[]"}}]})
    assert [(c["id"], c["function"]["arguments"]) for c in acc.tool_calls] == [
        ("a", "{}"),
        ("b", "[]"),
    ]


def test_other_choices_and_usage_only_chunks_are_ignored_safely():
    acc = ToolCallAccumulator()
    acc.add(
        BASE | {"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]}
    )
    acc.add(chunk(choices=False, usage={"total_tokens": 3}))
    assert acc.content == "" and acc.usage == {"total_tokens": 3}


def test_returned_calls_are_copies():
    acc = ToolCallAccumulator()
    acc.add_delta(
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}
    )
    acc.tool_calls[0]["id"] = "changed"
    assert acc.tool_calls[0]["id"] == "a"


names = st.from_regex(r"[a-z][a-z0-9_.\-]{0,12}", fullmatch=True)
args = st.dictionaries(
    st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8)), max_size=3
)


@st.composite
def chunked_response(draw):
    """Random calls and content, each string cut at random places, call pieces interleaved."""
    calls = draw(st.lists(st.tuples(names, names, args), min_size=0, max_size=4))
    content = draw(st.text(max_size=30))
    expected = [
        {
            "id": f"{n}:{i}",
            "type": "function",
            "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)},
        }
        for i, (n, _, a) in enumerate(calls)
    ]

    def cut(text: str) -> list[str]:
        points = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
        bounds = [0, *[p for p in points if p < len(text)], len(text)]
        return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a] or [""]

    streams = []
    for index, call in enumerate(expected):
        f = call["function"]
        name_pieces = cut(f["name"])
        # "a" + "a" cannot be told from "a" repeated; servers repeat whole names, never split so
        assume(all(p != "".join(name_pieces[:i]) for i, p in enumerate(name_pieces)))
        pieces = [{"index": index, "id": call["id"]}]
        pieces += [{"index": index, "function": {"name": p}} for p in name_pieces]
        pieces += [{"index": index, "function": {"arguments": p}} for p in cut(f["arguments"])]
        for piece in pieces[1:]:  # some providers repeat id, type and the whole name on every delta
            repeat = draw(st.sets(st.sampled_from(["id", "type", "name"])))
            piece.update({"id": call["id"]} if "id" in repeat else {})
            piece.update({"type": "function"} if "type" in repeat else {})
            if "name" in repeat and "arguments" in piece.get("function", {}):
                piece["function"]["name"] = f["name"]
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


# --- reasoning (thinking models): kept under the name the server used --------------------------

REASONING_KEYS = ["reasoning_content", "reasoning"]


def thinking_stream(key: str) -> list[dict]:
    """Reasoning first (as Moonshot streams it), then content, then two parallel calls."""
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({key: "The user asks about "}),
        chunk({key: "two cities.", "content": ""}),
        chunk({"content": "Checking."}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "functions.get_weather:0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": '},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "functions.get_weather:1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Moscow"}'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Beijing"}'}}]}),
        chunk({}, "tool_calls"),
    ]


@pytest.mark.parametrize("key", REASONING_KEYS)
@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk-objects"])
def test_reasoning_is_collected_and_sent_back_under_the_same_key(key, sdk):
    acc = ToolCallAccumulator()
    for c in thinking_stream(key):
        acc.add(ChatCompletionChunk.model_validate(c) if sdk else c)
    assert acc.reasoning == "The user asks about two cities."
    assert acc.reasoning_key == key
    assert acc.assistant_message() == {
        "role": "assistant",
        "content": "Checking.",
        key: "The user asks about two cities.",
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
            },
            {
                "id": "functions.get_weather:1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Moscow"}'},
            },
        ],
    }


def test_sdk_delta_objects_keep_reasoning_too():
    acc = ToolCallAccumulator()
    for c in thinking_stream("reasoning"):
        acc.add_delta(ChatCompletionChunk.model_validate(c).choices[0].delta)
    assert acc.reasoning == "The user asks about two cities." and acc.reasoning_key == "reasoning"


def test_no_reasoning_means_no_key_and_null_reasoning_is_ignored():
    acc = ToolCallAccumulator()
    for c in [chunk({"content": "Hi", "reasoning_content": None}), chunk({"reasoning": ""})]:
        acc.add(ChatCompletionChunk.model_validate(c))
    assert acc.reasoning == "" and acc.reasoning_key is None
    assert acc.assistant_message() == {"role": "assistant", "content": "Hi"}


def test_a_delta_with_both_names_is_counted_once_under_the_first_name_seen():
    # vLLM kept `reasoning_content` as an alias of `reasoning` for a while: the same text twice.
    acc = ToolCallAccumulator()
    acc.add_delta({"reasoning": "a", "reasoning_content": "a"})
    acc.add_delta({"reasoning": "b"})
    acc.add_delta({"reasoning_content": "c", "reasoning": "c"})
    assert acc.reasoning == "abc"
    assert acc.reasoning_key == "reasoning_content"  # the preferred name when both arrive at once
    assert acc.assistant_message() == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "abc",
    }


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sampled_from(REASONING_KEYS),
    st.lists(st.text(min_size=1, max_size=6), max_size=8),
    st.lists(st.text(min_size=1, max_size=6), max_size=4),
)
def test_any_chunking_of_reasoning_assembles_it(key, reasoning_pieces, content_pieces):
    acc = ToolCallAccumulator()
    for piece in reasoning_pieces:
        acc.add(chunk({key: piece}))
    for piece in content_pieces:
        acc.add(chunk({"content": piece}))
    assert acc.reasoning == "".join(reasoning_pieces)
    assert acc.content == "".join(content_pieces)
    expected_key = key if reasoning_pieces else None
    assert acc.reasoning_key == expected_key
    assert (key in acc.assistant_message()) == bool(reasoning_pieces)


@pytest.mark.parametrize(
    "delta, fragment",
    [
        ({"tool_calls": "get_weather"}, "`tool_calls` is a str"),
        ({"tool_calls": ["get_weather"]}, "tool-call fragment is a str"),
        ({"tool_calls": [{"index": 0, "function": "get_weather"}]}, "`function` is a str"),
        ({"tool_calls": [{"index": [0], "function": {"name": "f"}}]}, "index [0] and name 'f'"),
        ({"tool_calls": [{"index": 0, "function": {"name": ["f"]}}]}, "index 0 and name ['f']"),
        ({"content": ["a", "b"]}, "`content` is a list"),
    ],
)
def test_malformed_stream_fragments_raise_a_clear_error(delta, fragment):
    acc = ToolCallAccumulator()
    with pytest.raises(ValueError, match=re.escape(fragment)):
        acc.add(chunk(delta))


def test_malformed_stream_in_the_loop_is_a_tool_loop_error():
    class Client:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **kwargs):
            return iter([chunk({"tool_calls": "get_weather"})])

    with pytest.raises(ToolLoopError, match="malformed"):
        ask_model(Client(), [], model="m", stream=True)


def test_odd_but_usable_fragments_are_cleaned():
    acc = ToolCallAccumulator()
    acc.add_delta(
        {
            "tool_calls": [
                {
                    "index": "0",
                    "id": 7,
                    "type": None,
                    "function": {"name": "f", "arguments": {"city": "Oslo"}},
                }
            ]
        }
    )
    acc.add_delta(
        {"tool_calls": [{"index": 0, "id": None, "function": {"name": None, "arguments": None}}]}
    )
    assert acc.tool_calls == [
        {"id": "7", "type": "function", "function": {"name": "f", "arguments": '{"city": "Oslo"}'}}
    ]


fuzz_values = message_like_json(
    st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=6),
    [
        "index",
        "id",
        "type",
        "function",
        "name",
        "arguments",
        "content",
        "tool_calls",
        "reasoning_content",
        "reasoning",
    ],
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(fuzz_values, max_size=5))
def test_any_delta_is_taken_or_refused_clearly_and_the_message_stays_readable(deltas):
    acc = ToolCallAccumulator()
    for delta in deltas:
        try:
            acc.add_delta(delta if isinstance(delta, dict) else {"tool_calls": delta})
        except ValueError as exc:
            assert "malformed" in str(exc)
    message = acc.assistant_message()
    json.dumps(message)  # what the client would have to send next
    for call in message.get("tool_calls", []):
        assert all(isinstance(call[k], str) for k in ("id", "type"))
        assert all(isinstance(v, str) for v in call["function"].values())


# --- what real servers send besides: two calls under one index, error events, usage in the choice


def test_two_whole_calls_under_one_index_with_different_ids_stay_two():
    acc = ToolCallAccumulator()
    for call_id, name, arguments in [
        ("a", "get_weather", '{"city": "Oslo"}'),
        ("b", "get_time", "{}"),
    ]:
        acc.add(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }
                    ]
                }
            )
        )
    acc.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": ""}}]}, "tool_calls"))
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in acc.tool_calls
    ] == [
        ("a", "get_weather", '{"city": "Oslo"}'),
        ("b", "get_time", "{}"),
    ]


def test_a_new_id_at_a_used_index_continues_with_its_own_fragments():
    acc = ToolCallAccumulator()
    acc.add_delta(
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}}]}
    )
    acc.add_delta({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]})
    acc.add_delta(
        {"tool_calls": [{"index": 1, "id": "c", "function": {"name": "h", "arguments": "[]"}}]}
    )
    acc.add_delta(
        {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": "["}}]}
    )
    acc.add_delta({"tool_calls": [{"index": 0, "function": {"arguments": "1]"}}]})
    assert [(c["id"], c["function"]["arguments"]) for c in acc.tool_calls] == [
        ("a", "{}"),
        ("b", "[1]"),
        ("c", "[]"),
    ]


LLAMA_ERROR = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}


def test_an_error_event_in_the_stream_raises_a_clear_error():
    acc = ToolCallAccumulator()
    acc.add(chunk({"role": "assistant", "content": None}))
    with pytest.raises(StreamErrorEvent, match=r"error in the stream: The model produced output"):
        acc.add(LLAMA_ERROR)
    with pytest.raises(StreamErrorEvent, match="boom"):
        acc.add({"error": "boom"})


def test_an_error_event_speaks_russian_in_the_russian_edition():
    set_language("ru")
    try:
        with pytest.raises(StreamErrorEvent, match="Сервер ответил ошибкой в потоке"):
            ToolCallAccumulator().add(LLAMA_ERROR)
    finally:
        reset_language()


def test_an_error_event_in_the_loop_is_one_sentence_and_adds_nothing():
    class Client:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **kwargs):
            return iter([chunk({"content": "Let me"}), LLAMA_ERROR])

    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(ToolLoopError, match="peg-native format; nothing was added") as caught:
        ask_model(Client(), messages, model="m", stream=True)
    assert caught.value.__suppress_context__ and messages == [{"role": "user", "content": "hi"}]


def test_usage_inside_the_choice_is_read_too():
    acc = ToolCallAccumulator()
    usage = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    acc.add(
        BASE | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]}
    )
    assert acc.usage == usage and acc.finish_reason == "stop"
    sdk = ToolCallAccumulator()
    sdk.add(
        ChatCompletionChunk.model_validate(
            BASE | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]}
        )
    )
    assert sdk.usage == usage


@pytest.mark.parametrize(
    "chunk",
    [
        "data",
        [1, 2],
        {"choices": "x"},
        {"choices": 3},
        {"choices": {"0": {}}},
        {"choices": ["x"]},
        {"choices": [{"index": 0, "delta": "oops"}]},
        {"choices": [{"index": 0, "delta": [1]}]},
    ],
)
def test_a_chunk_that_is_not_an_object_where_one_is_due_is_a_malformed_chunk(chunk):
    # Found by bench/probes_client.py: these raised AttributeError or TypeError.
    with pytest.raises(MalformedChunkError, match="malformed.*not (an object|a list)"):
        ToolCallAccumulator().add(chunk)


def test_a_wrong_kind_message_uses_the_right_article() -> None:
    assert wrong_kind(5, "`index`", "`index`")[0] == "`index` is an int (5), not an object"
    assert wrong_kind("x", "`delta`", "`delta`")[0] == "`delta` is a str ('x'), not an object"
