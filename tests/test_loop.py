"""run_tool_loop: stop rule, message order, limits, truncation, sync and streaming."""

import json
import re
from http.server import BaseHTTPRequestHandler

import openai
import pytest
from formats_support import message_like_json
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from helpers import (
    ToolLoopError,
    ToolLoopLimitError,
    ToolRegistry,
    TruncatedToolCallError,
    run_tool_loop,
)
from helpers.i18n import reset_language, set_language
from helpers.loop import ToolLoopServerError, assistant_message_from
from tests.fakes import FakeClient, chunks_for, completion
from tests.test_replay_fixtures import fake_upstream, reply_json, reply_sse

WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain"}
USER = {"role": "user", "content": "Weather in Beijing?"}


def get_weather(city: str) -> dict:
    """Get weather information.

    Args:
        city: City name
    """
    return {"city": city, "weather": WEATHER.get(city, "unknown")}


@pytest.fixture
def registry():
    r = ToolRegistry()
    r.register(get_weather)
    return r


def weather_call(city, call_id="get_weather:0"):
    return (call_id, "get_weather", json.dumps({"city": city}))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("finish_with_calls", ["tool_calls", "stop"])
def test_loop_runs_tools_until_a_message_without_calls(registry, stream, finish_with_calls):
    client = FakeClient(
        [
            completion(None, [weather_call("Beijing")], finish_with_calls),
            completion("It is sunny in Beijing.", finish_reason="stop"),
        ]
    )
    messages = [USER]
    final = run_tool_loop(client, messages, registry, model="kimi", stream=stream, temperature=0.3)
    assert final == {"role": "assistant", "content": "It is sunny in Beijing."}
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["id"] == "get_weather:0"
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "get_weather:0",
        "name": "get_weather",
        "content": '{"city": "Beijing", "weather": "Sunny"}',
    }
    second = client.requests[1]
    assert second["tools"] == registry.schemas and second["temperature"] == 0.3
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]


def test_tool_calls_finish_reason_without_calls_still_stops(registry):
    client = FakeClient([completion("Done.", finish_reason="tool_calls")])
    assert run_tool_loop(client, [USER], registry, model="m")["content"] == "Done."


def test_parallel_calls_each_get_an_answer_in_order(registry):
    client = FakeClient(
        [
            completion(
                "Checking both.",
                [weather_call("Beijing", "a"), weather_call("Shanghai", "b")],
                "tool_calls",
            ),
            completion("Beijing sunny, Shanghai rainy."),
        ]
    )
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert messages[1]["content"] == "Checking both."
    assert [(m["tool_call_id"], json.loads(m["content"])["weather"]) for m in messages[2:4]] == [
        ("a", "Sunny"),
        ("b", "Light rain"),
    ]


def test_tool_errors_go_back_to_the_model(registry):
    client = FakeClient(
        [
            completion(None, [("x:0", "get_weather", '{"town": "Beijing"}')], "tool_calls"),
            completion(None, [("x:1", "get_weather", '{"city": "Beijing"}')], "tool_calls"),
            completion("Sunny."),
        ]
    )
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert "missing the required 'city'" in json.loads(messages[2]["content"])["error"]
    assert json.loads(messages[4]["content"])["weather"] == "Sunny"


def test_max_rounds_raises_a_clear_error_and_keeps_history(registry):
    script = [completion(None, [weather_call("Beijing", f"c{i}")], "tool_calls") for i in range(3)]
    messages = [USER]
    with pytest.raises(
        ToolLoopLimitError, match=r"max_rounds=2 rounds .*get_weather\(\{\"city\": \"Beijing\"\}\)"
    ):
        run_tool_loop(FakeClient(script), messages, registry, model="m", max_rounds=2)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]


def test_max_rounds_counts_requests(registry):
    client = FakeClient(
        [completion(None, [weather_call("Beijing")], "tool_calls"), completion("ok")]
    )
    run_tool_loop(client, [USER], registry, model="m", max_rounds=2)
    with pytest.raises(ValueError):
        run_tool_loop(client, [USER], registry, model="m", max_rounds=0)


@pytest.mark.parametrize("stream", [False, True])
def test_truncated_call_raises_and_runs_nothing(registry, stream):
    calls = []
    registry = ToolRegistry()
    registry.register(
        lambda city: calls.append(city),
        {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    )
    client = FakeClient([completion(None, [("a", "get_weather", '{"city": "Bei')], "length")])
    messages = [USER]
    with pytest.raises(
        TruncatedToolCallError, match=r"max_tokens .*get_weather\(\{\"city\": \"Bei\)"
    ):
        run_tool_loop(client, messages, registry, model="m", stream=stream)
    assert calls == [] and messages == [USER]


def test_length_without_calls_returns_the_cut_answer(registry):
    assert (
        run_tool_loop(
            FakeClient([completion("Sunny an", finish_reason="length")]),
            [USER],
            registry,
            model="m",
        )["content"]
        == "Sunny an"
    )


def test_explicit_tools_argument_wins(registry):
    client = FakeClient([completion("ok")])
    run_tool_loop(client, [USER], registry, model="m", tools=[])
    assert client.requests[0]["tools"] == []


def test_appended_assistant_messages_are_plain_dicts(registry):
    client = FakeClient(
        [completion(None, [weather_call("Beijing")], "tool_calls"), completion("ok")]
    )
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
            }
        ],
    }


# --- reasoning (thinking models) goes back on every assistant message with tool calls ----------


def with_reasoning(body, key, text):
    body["choices"][0]["message"][key] = text
    return body


def reasoning_chunks_for(body, key):
    """Like `chunks_for`, with the message's reasoning streamed before the content."""
    out = chunks_for(body)
    text = body["choices"][0]["message"].get(key)
    if text:
        head = out[0] | {"choices": [{"index": 0, "delta": {key: ""}, "finish_reason": None}]}
        pieces = [
            head
            | {"choices": [{"index": 0, "delta": {key: text[i : i + 4]}, "finish_reason": None}]}
            for i in range(0, len(text), 4)
        ]
        out = out[:1] + pieces + out[1:]
    return out


class ReasoningClient(FakeClient):
    """FakeClient that streams the reasoning of each scripted answer before its content."""

    def __init__(self, script, key):
        super().__init__(script)
        self.key = key

    def create(self, **kwargs):
        if not kwargs.get("stream"):
            return super().create(**kwargs)
        body = self.script[0]
        super().create(**(kwargs | {"stream": False}))  # records the request, pops the body
        self.requests[-1]["stream"] = True
        return iter(
            [ChatCompletionChunk.model_validate(c) for c in reasoning_chunks_for(body, self.key)]
        )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_reasoning_goes_back_on_every_assistant_message_with_calls(registry, stream, key):
    script = [
        with_reasoning(
            completion(None, [weather_call("Beijing", "functions.get_weather:0")], "tool_calls"),
            key,
            "Ask the tool about Beijing.",
        ),
        with_reasoning(
            completion(
                "Now Shanghai.", [weather_call("Shanghai", "functions.get_weather:1")], "tool_calls"
            ),
            key,
            "Beijing is sunny; now Shanghai.",
        ),
        with_reasoning(
            completion(None, [weather_call("Moscow", "functions.get_weather:2")], "tool_calls"),
            key,
            "One more.",
        ),
        with_reasoning(completion("Sunny, rainy, unknown."), key, "Summarise."),
    ]
    client = ReasoningClient(script, key)
    messages = [USER]
    final = run_tool_loop(client, messages, registry, model="kimi", stream=stream)
    assert final == {"role": "assistant", "content": "Sunny, rainy, unknown.", key: "Summarise."}
    last_request = client.requests[-1]["messages"]
    assistants = [m for m in last_request if m["role"] == "assistant"]
    assert [m[key] for m in assistants] == [
        "Ask the tool about Beijing.",
        "Beijing is sunny; now Shanghai.",
        "One more.",
    ]
    # nothing else about the message changes
    assert assistants[1] == {
        "role": "assistant",
        "content": "Now Shanghai.",
        key: "Beijing is sunny; now Shanghai.",
        "tool_calls": [
            {
                "id": "functions.get_weather:1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Shanghai"}'},
            }
        ],
    }
    other = {"reasoning_content": "reasoning", "reasoning": "reasoning_content"}[key]
    assert all(other not in m for m in last_request)


def test_assistant_message_from_keeps_non_null_reasoning_only():
    body = completion("ok")
    body["choices"][0]["message"] |= {
        "reasoning_content": None,
        "reasoning": "thought",
        "refusal": None,
    }
    message = ChatCompletion.model_validate(body).choices[0].message
    assert assistant_message_from(message) == {
        "role": "assistant",
        "content": "ok",
        "reasoning": "thought",
    }
    body["choices"][0]["message"] |= {"reasoning_content": "r", "reasoning": None}
    assert assistant_message_from(body["choices"][0]["message"]) == {
        "role": "assistant",
        "content": "ok",
        "reasoning_content": "r",
    }


# --- malformed server answers: a clear ToolLoopError in the notebook's language -----------------


@pytest.fixture
def russian():
    set_language("ru")
    yield
    reset_language()


MALFORMED = [
    pytest.param(None, "`message: null`", "`message: null`", id="message-null"),
    pytest.param(
        {"role": "assistant", "content": None, "tool_calls": "get_weather"},
        "`tool_calls` is a str",
        "`tool_calls` — str",
        id="tool_calls-string",
    ),
    pytest.param(
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function"}]},
        "tool call 0 (id 'a') has no `function`",
        "у вызова 0 (id 'a') нет `function`",
        id="no-function",
    ),
    pytest.param(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": None}],
        },
        "tool call 0 (id 'a') has no `function`",
        "у вызова 0 (id 'a') нет `function`",
        id="function-null",
    ),
    pytest.param(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": "get_weather"}],
        },
        "tool call 0 (id 'a') has no `function`",
        "у вызова 0 (id 'a') нет `function`",
        id="function-string",
    ),
    pytest.param(
        {"role": "assistant", "content": None, "tool_calls": ["get_weather"]},
        "tool call 0 is a str",
        "вызов 0 — str",
        id="call-string",
    ),
    pytest.param(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": ["get_weather"], "arguments": "{}"}}],
        },
        "tool call 0 (id 'a') has the name ['get_weather'], not text",
        "у вызова 0 (id 'a') имя ['get_weather'], а не строка",
        id="name-list",
    ),
]


def constructed(message):
    """A ChatCompletion built the lenient way the SDK builds responses (no validation)."""
    body = completion("x", finish_reason="tool_calls")
    body["choices"][0]["message"] = message
    return ChatCompletion.construct(**body)


class ConstructingClient(FakeClient):
    def create(self, **kwargs):
        self.requests.append(kwargs)
        return constructed(self.script.pop(0))


@pytest.mark.parametrize("message, english, russian_text", MALFORMED)
def test_malformed_answers_raise_a_clear_tool_loop_error(registry, message, english, russian_text):
    with pytest.raises(ToolLoopError, match=re.escape(english)):
        assistant_message_from(message)
    sdk_message = constructed(message).choices[0].message
    with pytest.raises(ToolLoopError, match=re.escape(english)):
        assistant_message_from(sdk_message)
    messages = [USER]
    with pytest.raises(ToolLoopError, match=re.escape(english)):
        run_tool_loop(ConstructingClient([message]), messages, registry, model="m")
    assert messages == [USER]  # nothing appended, nothing run


@pytest.mark.parametrize("message, english, russian_text", MALFORMED)
def test_malformed_answer_errors_speak_russian_in_the_russian_edition(
    russian, message, english, russian_text
):
    with pytest.raises(ToolLoopError, match=re.escape(russian_text)):
        assistant_message_from(message)


def test_odd_but_usable_calls_are_cleaned_not_refused():
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": None, "function": {"name": "get_weather", "arguments": None}},
            {"id": "b", "function": {"name": None, "arguments": {"city": "Oslo"}}},
        ],
    }
    assert assistant_message_from(message)["tool_calls"] == [
        {"id": "", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
        {"id": "b", "type": "function", "function": {"name": "", "arguments": '{"city": "Oslo"}'}},
    ]


def test_loop_errors_speak_russian_in_the_russian_edition(russian, registry):
    script = [completion(None, [weather_call("Beijing", f"c{i}")], "tool_calls") for i in range(2)]
    with pytest.raises(ToolLoopLimitError, match="max_rounds=1"):
        run_tool_loop(FakeClient(script), [USER], registry, model="m", max_rounds=1)
    with pytest.raises(ToolLoopLimitError, match="всё ещё вызывала инструменты"):
        run_tool_loop(FakeClient(script), [USER], registry, model="m", max_rounds=1)
    cut = [completion(None, [("a", "get_weather", '{"city": "Bei')], "length")]
    with pytest.raises(TruncatedToolCallError, match="max_tokens"):
        run_tool_loop(FakeClient(cut), [USER], registry, model="m")
    with pytest.raises(TruncatedToolCallError, match="Ничего не запущено"):
        run_tool_loop(FakeClient(list(cut)), [USER], registry, model="m")
    with pytest.raises(ValueError, match="не меньше 1"):
        run_tool_loop(FakeClient([]), [USER], registry, model="m", max_rounds=0)


json_values = message_like_json(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    ["id", "type", "function", "name", "arguments", "content", "tool_calls", "reasoning"],
)


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_assistant_message_from_gives_a_message_or_a_tool_loop_error(message):
    try:
        clean = assistant_message_from(message)
    except ToolLoopError:
        return
    assert clean["role"] == "assistant"
    for call in clean.get("tool_calls", []):
        assert isinstance(call["id"], str) and isinstance(call["function"]["arguments"], str)
        assert isinstance(call["function"]["name"], str)


# --- real servers' edges: dropped calls, error answers, interrupts, unencodable results ---------


class ScriptedHandler(BaseHTTPRequestHandler):
    """A live endpoint that answers each POST from a script: `("json", status, body)` or
    `("sse", [event text, ...])` (sent as `data:` lines, the connection closed at the end)."""

    protocol_version = "HTTP/1.1"
    script: list = []
    bodies: list = []

    def log_message(self, format, *args):
        """Quiet."""

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).bodies.append(json.loads(raw))
        kind, *rest = type(self).script.pop(0)
        if kind == "json":
            reply_json(self, *rest)
        else:
            reply_sse(self, rest[0])


@pytest.fixture
def live():
    """(client, handler class): a real openai client on a scripted local endpoint."""
    ScriptedHandler.script, ScriptedHandler.bodies = [], []
    with fake_upstream(ScriptedHandler) as url:
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        with client:
            yield client, ScriptedHandler


LLAMA_PARSE_FAILURE = "The model produced output that does not match the expected peg-native format"


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_the_engine_dropped_at_max_tokens_is_a_truncation_not_an_answer(registry, stream):
    # llama.cpp drops a call cut before its name is complete: no tool_calls, finish "length".
    client = FakeClient([completion("", finish_reason="length")])
    messages = [USER]
    with pytest.raises(TruncatedToolCallError, match=r"max_tokens.*finish_reason='length'"):
        run_tool_loop(client, messages, registry, model="m", stream=stream, max_tokens=5)
    assert messages == [USER]


def test_a_dropped_call_is_reported_in_russian_in_the_russian_edition(russian, registry):
    client = FakeClient([completion(None, finish_reason="length")])
    with pytest.raises(TruncatedToolCallError, match="max_tokens"):
        run_tool_loop(client, [USER], registry, model="m")


@pytest.mark.parametrize("status", [400, 500, 503])
def test_a_server_error_is_one_sentence_and_adds_nothing(live, registry, status):
    client, handler = live
    body = {"error": {"message": LLAMA_PARSE_FAILURE, "type": "server_error", "code": status}}
    handler.script = [("json", status, body)]
    messages = [USER]
    with pytest.raises(ToolLoopServerError) as caught:
        run_tool_loop(client, messages, registry, model="m")
    text = str(caught.value)
    assert text == (
        f"The server answered with an error (HTTP {status}): {LLAMA_PARSE_FAILURE}; "
        "nothing was added to `messages`."
    )
    assert caught.value.__suppress_context__  # the student sees one sentence, not two tracebacks
    assert messages == [USER]


def test_an_error_event_inside_a_stream_is_one_sentence_and_adds_nothing(live, registry):
    client, handler = live
    head = chunks_for(completion("Let me check."))[:2]
    error = {"error": {"code": 500, "message": LLAMA_PARSE_FAILURE, "type": "server_error"}}
    handler.script = [("sse", [json.dumps(c) for c in head] + [json.dumps(error)])]
    messages = [USER]
    with pytest.raises(ToolLoopServerError, match=re.escape(LLAMA_PARSE_FAILURE)):
        run_tool_loop(client, messages, registry, model="m", stream=True)
    assert messages == [USER]


def test_a_server_error_speaks_russian_in_the_russian_edition(russian, live, registry):
    client, handler = live
    handler.script = [("json", 500, {"error": {"message": "boom", "type": "x"}})]
    with pytest.raises(
        ToolLoopServerError, match=r"^Сервер ответил ошибкой \(HTTP 500\): boom; в `messages`"
    ):
        run_tool_loop(client, [USER], registry, model="m")


def test_an_unreachable_server_is_one_sentence(registry):
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    messages = [USER]
    with client, pytest.raises(ToolLoopServerError, match="could not reach the server"):
        run_tool_loop(client, messages, registry, model="m")
    assert messages == [USER]


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_while_tools_run_leaves_no_unanswered_calls(interrupt):
    seen = []

    def slow_tool(city: str) -> str:
        """Stops the run at the second call, as Ctrl+C in a notebook would.

        Args:
            city: City name
        """
        seen.append(city)
        if len(seen) == 2:
            raise interrupt()
        return "ok"

    registry = ToolRegistry()
    registry.register(slow_tool)
    calls = [("a", "slow_tool", '{"city": "A"}'), ("b", "slow_tool", '{"city": "B"}')]
    client = FakeClient([completion(None, calls, "tool_calls"), completion("done")])
    messages = [USER]
    with pytest.raises(interrupt):
        run_tool_loop(client, messages, registry, model="m")
    assert messages == [USER]  # the history is still one a server accepts
    seen.clear()
    client.script = [completion(None, calls, "tool_calls"), completion("done")]
    registry = ToolRegistry()
    registry.register(lambda city: "ok", {"name": "slow_tool", "parameters": {"type": "object"}})
    assert run_tool_loop(client, messages, registry, model="m")["content"] == "done"
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]


class ClosableStream:
    """A stream of chunks that records whether the loop closed it."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)
        self.closed = False

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.chunks)

    def close(self):
        self.closed = True


def test_the_stream_is_closed_when_a_chunk_is_malformed(registry):
    stream = ClosableStream(
        [{"choices": [{"index": 0, "delta": {"tool_calls": "get_weather"}}]}, {"choices": []}]
    )

    class Client:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **kwargs):
            return stream

    with pytest.raises(ToolLoopError, match="malformed"):
        run_tool_loop(Client(), [USER], registry, model="m", stream=True)
    assert stream.closed


def test_a_lone_surrogate_in_a_tool_result_is_sent_escaped_and_said(live):
    client, handler = live
    name = b"report-\xff.txt".decode("utf-8", "surrogateescape")  # as os.listdir gives it

    def list_files() -> list:
        """List the files."""
        return [name]

    registry = ToolRegistry()
    registry.register(list_files)
    handler.script = [
        ("json", 200, completion(None, [("a", "list_files", "{}")], "tool_calls")),
        ("json", 200, completion("One file.")),
    ]
    messages = [USER]
    with pytest.warns(UserWarning, match=r"list_files.*cannot be sent as UTF-8.*\\udcff"):
        answer = run_tool_loop(client, messages, registry, model="m")
    assert answer["content"] == "One file."
    sent = handler.bodies[1]["messages"][2]
    assert sent["role"] == "tool" and json.loads(sent["content"]) == ["report-\\udcff.txt"]
    assert messages[2] == sent  # the history holds what the model was sent


def test_the_surrogate_warning_speaks_russian_in_the_russian_edition(russian):
    registry = ToolRegistry()
    registry.register(lambda: "a\udcff", {"name": "list_files", "parameters": {"type": "object"}})
    client = FakeClient(
        [completion(None, [("a", "list_files", "{}")], "tool_calls"), completion("ok")]
    )
    messages = [USER]
    with pytest.warns(UserWarning, match=r"В результате list_files .*\\udcff"):
        run_tool_loop(client, messages, registry, model="m")
    assert messages[2]["content"] == "a\\udcff"  # plain text: one backslash, then udcff


# --- found by bench/probes_client.py: broken streams and empty answers ------------------------


def test_an_event_that_is_not_json_is_a_tool_loop_error_and_adds_nothing(live, registry):
    client, handler = live
    head = chunks_for(completion("Let me check."))[:2]
    handler.script = [("sse", [json.dumps(c) for c in head] + ["{not json"])]
    messages = [USER]
    with pytest.raises(ToolLoopError, match="malformed: an event in the stream is not JSON"):
        run_tool_loop(client, messages, registry, model="m", stream=True)
    assert messages == [USER]


def test_a_stream_cut_before_its_last_chunk_runs_nothing_and_adds_nothing(live):
    ran = []
    registry = ToolRegistry()
    schema = {"name": "get_weather", "parameters": {"type": "object"}}
    registry.register(lambda **arguments: ran.append(arguments), schema)
    chunks = chunks_for(completion(None, [weather_call("Beijing")], "tool_calls"), piece=4)
    handler_script = [("sse", [json.dumps(c) for c in chunks[:5]])]  # cut inside the arguments
    client, handler = live
    handler.script = handler_script
    messages = [USER]
    with pytest.raises(ToolLoopServerError, match=r"ended before its last chunk.*Ask again"):
        run_tool_loop(client, messages, registry, model="m", stream=True)
    assert messages == [USER] and ran == []


def test_an_answer_that_is_not_an_object_is_a_tool_loop_error(live, registry):
    client, handler = live
    handler.script = [("json", 200, [1, 2])]
    with pytest.raises(ToolLoopError, match=r"malformed: no `choices`.*\[1, 2\]"):
        run_tool_loop(client, [USER], registry, model="m")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("finish", ["length", "stop"])
def test_an_answer_the_loop_refuses_is_kept_on_the_error_with_its_reasoning(
    live, registry, stream, finish
):
    # A thinking model that spent max_tokens on reasoning (or stopped with nothing to say): the
    # loop adds nothing to `messages`, and the reasoning is not lost: it is on the error.
    client, handler = live
    body = completion(None, finish_reason=finish)
    body["choices"][0]["message"]["reasoning_content"] = "Beijing first, then Shanghai"
    chunks = chunks_for(body)
    reasoning = {"reasoning_content": "Beijing first, then Shanghai"}
    chunks.insert(1, chunks[0] | {"choices": [{"index": 0, "delta": reasoning}]})
    handler.script = [("sse", [json.dumps(c) for c in chunks]) if stream else ("json", 200, body)]
    messages = [USER]
    with pytest.raises(ToolLoopError) as caught:
        run_tool_loop(client, messages, registry, model="m", stream=stream, max_tokens=5)
    assert messages == [USER]
    assert caught.value.answer["reasoning_content"] == "Beijing first, then Shanghai"
    assert caught.value.answer["role"] == "assistant" and not caught.value.answer.get("tool_calls")


def test_a_call_cut_at_max_tokens_is_kept_on_the_error(registry):
    cut = [("c1", "get_weather", '{"city": "Bei')]
    client = FakeClient([completion(None, cut, finish_reason="length")])
    with pytest.raises(TruncatedToolCallError) as caught:
        run_tool_loop(client, [USER], registry, model="m")
    assert caught.value.answer["tool_calls"][0]["function"]["arguments"] == '{"city": "Bei'


# --- issue 33: lone surrogates from the server or in the user's messages -----------------------


def _utf8_sendable(messages):
    json.dumps(messages, ensure_ascii=False).encode("utf-8")  # raises if a surrogate is left
    return True


@pytest.mark.parametrize("stream", [False, True])
def test_a_lone_surrogate_the_server_sent_in_arguments_keeps_the_history_sendable(live, stream):
    # `"\ud83d"` escaped in the server's JSON is a lone surrogate once the SDK decodes it.
    client, handler = live
    seen = []
    registry = ToolRegistry()
    text = {"type": "object", "properties": {"text": {"type": "string"}}}
    registry.register(
        lambda **arguments: seen.append(arguments) or "ok", {"name": "echo", "parameters": text}
    )
    first = completion(None, [("c1", "echo", '{"text": "hi \ud83d"}')], "tool_calls")
    replies = [first, completion("Done.")]
    handler.script = [
        ("sse", [json.dumps(c) for c in chunks_for(body)]) if stream else ("json", 200, body)
        for body in replies
    ]
    messages = [USER]
    with pytest.warns(UserWarning, match=r"model's answer.*cannot be sent as UTF-8.*\\ud83d"):
        answer = run_tool_loop(client, messages, registry, model="m", stream=stream)
    assert answer["content"] == "Done."
    sent = handler.bodies[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {"text": "hi \\ud83d"}  # valid JSON, the escape as text
    assert seen == [{"text": "hi \\ud83d"}]  # the tool ran on what the history says
    assert _utf8_sendable(messages)
    messages.append({"role": "user", "content": "And now?"})
    handler.script = [("json", 200, completion("Still fine."))]
    assert run_tool_loop(client, messages, registry, model="m")["content"] == "Still fine."


def test_a_lone_surrogate_in_a_user_message_is_sent_escaped_not_raised(live):
    from helpers.loop import ask_model

    client, handler = live
    handler.script = [("json", 200, completion("Got it."))]
    messages = [{"role": "user", "content": "\udcff"}]
    with pytest.warns(UserWarning, match=r"A message in `messages`.*\\udcff"):
        message, finish = ask_model(client, messages, model="m")
    assert message["content"] == "Got it." and finish == "stop"
    assert handler.bodies[0]["messages"] == [{"role": "user", "content": "\\udcff"}]
    assert messages == [{"role": "user", "content": "\udcff"}]  # the caller's list is unchanged


def test_a_lone_surrogate_in_a_user_message_is_said_in_russian(live, russian):
    client, handler = live
    handler.script = [("json", 200, completion("ok"))]
    with pytest.warns(UserWarning, match=r"В сообщении из `messages` есть символы.*\\udcff"):
        run_tool_loop(client, [{"role": "user", "content": "a\udcff"}], ToolRegistry(), model="m")


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_text_utf8_cannot_encode_elsewhere_is_a_clear_tool_loop_error(live, lang):
    client, handler = live
    set_language(lang)
    try:
        with pytest.raises(ToolLoopError, match=r"UTF-8.*\\udcff") as caught:
            run_tool_loop(client, [USER], ToolRegistry(), model="m", tools=[{"x": "\udcff"}])
    finally:
        reset_language()
    assert ("cannot be sent" in str(caught.value)) == (lang == "en")
    assert handler.bodies == []


# --- issue 33: an empty answer is "" or None alike (Moonshot sends "", others null) -------------


@pytest.mark.parametrize("content", [None, ""])
@pytest.mark.parametrize("stream", [False, True])
def test_an_empty_answer_is_refused_whether_content_is_none_or_empty(
    live, registry, stream, content
):
    # An assistant message with neither content nor tool calls makes the next request a 400.
    client, handler = live
    body = completion(content)
    handler.script = [
        ("sse", [json.dumps(c) for c in chunks_for(body)]) if stream else ("json", 200, body)
    ]
    messages = [USER]
    with pytest.raises(ToolLoopError, match=r"no text and no tool call \(finish_reason='stop'\)"):
        run_tool_loop(client, messages, registry, model="m", stream=stream)
    assert messages == [USER]


@pytest.mark.parametrize("content", [None, ""])
def test_an_empty_answer_from_a_fake_client_is_refused_too(registry, content):
    client = FakeClient([completion(content)])
    with pytest.raises(ToolLoopError, match=r"no text and no tool call"):
        run_tool_loop(client, [USER], registry, model="m")


@pytest.mark.parametrize("content", [None, ""])
def test_content_beside_tool_calls_may_be_none_or_empty(registry, content):
    client = FakeClient(
        [completion(content, [weather_call("Beijing")], "tool_calls"), completion("Sunny.")]
    )
    messages = [USER]
    assert run_tool_loop(client, messages, registry, model="m")["content"] == "Sunny."
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
