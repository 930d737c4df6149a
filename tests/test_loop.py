"""run_tool_loop: stop rule, message order, limits, truncation, sync and streaming."""

import json

import pytest

from helpers import ToolLoopLimitError, ToolRegistry, TruncatedToolCallError, run_tool_loop
from tests.fakes import FakeClient, completion

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
    client = FakeClient([
        completion(None, [weather_call("Beijing")], finish_with_calls),
        completion("It is sunny in Beijing.", finish_reason="stop"),
    ])
    messages = [USER]
    final = run_tool_loop(client, messages, registry, model="kimi", stream=stream, temperature=0.3)
    assert final == {"role": "assistant", "content": "It is sunny in Beijing."}
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["id"] == "get_weather:0"
    assert messages[2] == {"role": "tool", "tool_call_id": "get_weather:0", "name": "get_weather",
                           "content": '{"city": "Beijing", "weather": "Sunny"}'}
    second = client.requests[1]
    assert second["tools"] == registry.schemas and second["temperature"] == 0.3
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]


def test_tool_calls_finish_reason_without_calls_still_stops(registry):
    client = FakeClient([completion("Done.", finish_reason="tool_calls")])
    assert run_tool_loop(client, [USER], registry, model="m")["content"] == "Done."


def test_parallel_calls_each_get_an_answer_in_order(registry):
    client = FakeClient([
        completion("Checking both.", [weather_call("Beijing", "a"), weather_call("Shanghai", "b")], "tool_calls"),
        completion("Beijing sunny, Shanghai rainy."),
    ])
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert messages[1]["content"] == "Checking both."
    assert [(m["tool_call_id"], json.loads(m["content"])["weather"]) for m in messages[2:4]] == [
        ("a", "Sunny"), ("b", "Light rain")]


def test_tool_errors_go_back_to_the_model(registry):
    client = FakeClient([
        completion(None, [("x:0", "get_weather", '{"town": "Beijing"}')], "tool_calls"),
        completion(None, [("x:1", "get_weather", '{"city": "Beijing"}')], "tool_calls"),
        completion("Sunny."),
    ])
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert "missing the required 'city'" in json.loads(messages[2]["content"])["error"]
    assert json.loads(messages[4]["content"])["weather"] == "Sunny"


def test_max_rounds_raises_a_clear_error_and_keeps_history(registry):
    script = [completion(None, [weather_call("Beijing", f"c{i}")], "tool_calls") for i in range(3)]
    messages = [USER]
    with pytest.raises(ToolLoopLimitError, match=r"max_rounds=2 rounds .*get_weather\(\{\"city\": \"Beijing\"\}\)"):
        run_tool_loop(FakeClient(script), messages, registry, model="m", max_rounds=2)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]


def test_max_rounds_counts_requests(registry):
    client = FakeClient([completion(None, [weather_call("Beijing")], "tool_calls"), completion("ok")])
    run_tool_loop(client, [USER], registry, model="m", max_rounds=2)
    with pytest.raises(ValueError):
        run_tool_loop(client, [USER], registry, model="m", max_rounds=0)


@pytest.mark.parametrize("stream", [False, True])
def test_truncated_call_raises_and_runs_nothing(registry, stream):
    calls = []
    registry = ToolRegistry()
    registry.register(lambda city: calls.append(city), {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}})
    client = FakeClient([completion(None, [("a", "get_weather", '{"city": "Bei')], "length")])
    messages = [USER]
    with pytest.raises(TruncatedToolCallError, match=r"max_tokens .*get_weather\(\{\"city\": \"Bei\)"):
        run_tool_loop(client, messages, registry, model="m", stream=stream)
    assert calls == [] and messages == [USER]


def test_length_without_calls_returns_the_cut_answer(registry):
    assert run_tool_loop(FakeClient([completion("Sunny an", finish_reason="length")]), [USER],
                         registry, model="m")["content"] == "Sunny an"


def test_explicit_tools_argument_wins(registry):
    client = FakeClient([completion("ok")])
    run_tool_loop(client, [USER], registry, model="m", tools=[])
    assert client.requests[0]["tools"] == []


def test_appended_assistant_messages_are_plain_dicts(registry):
    client = FakeClient([completion(None, [weather_call("Beijing")], "tool_calls"), completion("ok")])
    messages = [USER]
    run_tool_loop(client, messages, registry, model="m")
    assert messages[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "get_weather:0", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}]}
