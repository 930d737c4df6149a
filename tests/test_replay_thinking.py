"""Thinking-model replay: Moonshot's 400s enforced, tool loops that keep reasoning complete, the
vLLM field name, thinking switched off, and the id drift that `normalize_kimi_ids` prevents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from helpers import ToolCallAccumulator, normalize_kimi_ids, run_tool_loop
from helpers.formats import parse_kimi
from helpers.paths import RECORDINGS_DIR
from helpers.replay import ReplayServer
from helpers.replay.modes import connect, stop_servers
from helpers.replay.scenarios.common import (
    ONE_AT_A_TIME_PROMPT,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    lesson_registry,
    user,
)
from helpers.replay.scenarios.n06_thinking_models import FOREIGN_ID, SCENARIOS, earlier_exchange
from helpers.replay.synthesize import play
from helpers.replay.validation import (
    NAMED_WITH_THINKING,
    REASONING_MISSING,
    REQUIRED_WITH_THINKING,
    ApiError,
    check_chat_request,
)

MOONSHOT = "kimi-k2.6"
SELF_HOSTED = "moonshotai/Kimi-K2.6"
SUMMARY = "Beijing is sunny, Shanghai has light rain, and Moscow has snow."


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    """The replay server over the shipped cassettes."""
    with ReplayServer(RECORDINGS_DIR) as running:
        yield running


def client_for(server: ReplayServer, engine: str) -> openai.OpenAI:
    """An SDK client for one engine profile of the replay server."""
    return openai.OpenAI(base_url=f"{server.url}/engines/{engine}/v1", api_key="k", max_retries=0)


def stripped_loop(client: openai.OpenAI, messages: list, **options: Any) -> str:
    """A loop as the guide writes it: the assistant message is rebuilt from content and calls
    only, so a thinking model's reasoning is dropped."""
    registry = lesson_registry()
    for _ in range(6):
        accumulator = ToolCallAccumulator()
        for chunk in client.chat.completions.create(
            model=MOONSHOT, messages=messages, tools=WEATHER_TOOLS, stream=True, **options
        ):
            accumulator.add(chunk)
        if not accumulator.tool_calls:
            return accumulator.content
        messages.append(
            {
                "role": "assistant",
                "content": accumulator.content,
                "tool_calls": accumulator.tool_calls,
            }
        )
        messages.extend(registry.call(call) for call in accumulator.tool_calls)
    raise AssertionError("the loop did not end")


# --- the checks themselves -----------------------------------------------------------------------


def body(messages: list, model: str = MOONSHOT, **extra: Any) -> dict[str, Any]:
    """A chat body with the weather tool."""
    return {"model": model, "messages": messages, "tools": WEATHER_TOOLS, **extra}


CALL = {
    "id": "get_weather:0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}
RESULT = {"role": "tool", "tool_call_id": "get_weather:0", "content": "{}"}


def round_two(**assistant: Any) -> list[dict[str, Any]]:
    """A second-round history: question, the assistant's call (plus `assistant`), the result."""
    return [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL], **assistant},
        RESULT,
    ]


def test_missing_reasoning_on_a_tool_call_message_is_refused_with_its_index() -> None:
    with pytest.raises(ApiError) as caught:
        check_chat_request(body(round_two()))
    assert caught.value.status == 400
    assert caught.value.message == REASONING_MISSING.format(index=1)
    assert caught.value.message == (
        "thinking is enabled but reasoning_content is missing in assistant tool call message "
        "at index 1"
    )
    check_chat_request(body(round_two(reasoning_content="Look it up.")))


def test_vllm_naming_does_not_satisfy_moonshot() -> None:
    with pytest.raises(ApiError, match="reasoning_content is missing"):
        check_chat_request(body(round_two(reasoning="Look it up.")))


@pytest.mark.parametrize("model", ["kimi-k2.5", "kimi-k2.6", "kimi-k2-thinking"])
def test_every_moonshot_thinking_model_enforces_it(model: str) -> None:
    with pytest.raises(ApiError):
        check_chat_request(body(round_two(), model=model))


def test_thinking_off_self_hosted_and_instruct_models_are_not_checked() -> None:
    off = {"thinking": {"type": "disabled"}}
    check_chat_request(body(round_two(), **off))
    check_chat_request(body(round_two(), model=SELF_HOSTED))
    check_chat_request(body(round_two(), model="moonshotai/Kimi-K2-Instruct"))
    with pytest.raises(ApiError):  # kimi-k2-thinking cannot switch it off
        check_chat_request(body(round_two(), model="kimi-k2-thinking", **off))


def test_tool_choice_required_is_refused_with_thinking_on() -> None:
    with pytest.raises(ApiError) as caught:
        check_chat_request(body(user("Weather?"), tool_choice="required"))
    assert caught.value.message == REQUIRED_WITH_THINKING
    check_chat_request(
        body(user("Weather?"), tool_choice="required", thinking={"type": "disabled"})
    )


# --- through the replay server ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_three_tool_rounds_complete_with_run_tool_loop(server: ReplayServer, stream: bool) -> None:
    messages = user(ONE_AT_A_TIME_PROMPT)
    final = run_tool_loop(
        client_for(server, "moonshot_thinking"),
        messages,
        lesson_registry(),
        model=MOONSHOT,
        tools=WEATHER_TOOLS,
        stream=stream,
    )
    assert final["content"] == SUMMARY
    assert final["reasoning_content"] == "I have all three results; a one-line summary is enough."
    calls = [m for m in messages if m.get("tool_calls")]
    assert len(calls) == 3 and all(m["reasoning_content"] for m in calls)


def test_the_same_loop_without_reasoning_gets_the_400_on_round_two(server: ReplayServer) -> None:
    messages = user(ONE_AT_A_TIME_PROMPT)
    with pytest.raises(openai.BadRequestError) as caught:
        stripped_loop(client_for(server, "moonshot_thinking"), messages)
    assert caught.value.status_code == 400
    assert caught.value.body["message"] == REASONING_MISSING.format(index=1)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]  # failed on round 2


def test_with_thinking_off_the_stripped_loop_works(server: ReplayServer) -> None:
    answer = stripped_loop(
        client_for(server, "moonshot_thinking"),
        user(ONE_AT_A_TIME_PROMPT),
        extra_body={"thinking": {"type": "disabled"}},
    )
    assert answer == SUMMARY


def test_tool_choice_required_gets_the_400_from_the_server(server: ReplayServer) -> None:
    with pytest.raises(openai.BadRequestError, match="incompatible with thinking enabled"):
        client_for(server, "moonshot_thinking").chat.completions.create(
            model=MOONSHOT,
            messages=user(WEATHER_PROMPT),
            tools=WEATHER_TOOLS,
            tool_choice="required",
        )


def test_vllm_names_the_field_reasoning_and_the_loop_sends_it_back(server: ReplayServer) -> None:
    client = client_for(server, "vllm_thinking")
    first = client.chat.completions.create(
        model=SELF_HOSTED, messages=user(WEATHER_PROMPT), tools=WEATHER_TOOLS
    )
    raw = first.choices[0].message.model_dump()
    assert raw["reasoning"] == "The user asks about Beijing; call the weather tool."
    assert "reasoning_content" not in raw
    messages = user(WEATHER_PROMPT)
    final = run_tool_loop(
        client, messages, lesson_registry(), model=SELF_HOSTED, tools=WEATHER_TOOLS
    )
    assert final["content"] == "It's sunny in Beijing today."
    assert messages[1]["reasoning"] == raw["reasoning"] and "reasoning_content" not in messages[1]


def test_foreign_ids_make_the_self_hosted_model_drift(server: ReplayServer) -> None:
    client = client_for(server, "sglang_drift")
    messages = earlier_exchange(FOREIGN_ID)
    final = run_tool_loop(
        client, messages, lesson_registry(), model=SELF_HOSTED, tools=WEATHER_TOOLS
    )
    assert "tool_calls" not in final  # the server could not read the call...
    leaked = parse_kimi(final["content"])  # ...which sits, raw, in the content
    assert leaked.tool_calls[0]["id"].startswith("call_")
    assert leaked.tool_calls[0]["function"]["arguments"] == '{"city": "Moscow"}'
    assert any("not of the form 'functions.name:N'" in e for e in leaked.errors)


def test_normalized_ids_keep_the_self_hosted_model_on_track(server: ReplayServer) -> None:
    history = normalize_kimi_ids(earlier_exchange(FOREIGN_ID))
    assert history == earlier_exchange("functions.get_weather:0")  # what the cassette recorded
    final = run_tool_loop(
        client_for(server, "sglang_drift"),
        history,
        lesson_registry(),
        model=SELF_HOSTED,
        tools=WEATHER_TOOLS,
    )
    assert final["content"] == "Moscow has snow today."
    assert history[-3]["tool_calls"][0]["id"] == "functions.get_weather:1"


# --- synthesis and connect ----------------------------------------------------------------------


def test_reasoning_streams_before_content_and_calls() -> None:
    scenario = next(s for s in SCENARIOS if s.name == "three-rounds-stream")
    rank = {"reasoning_content": 0, "content": 1, "tool_calls": 2}
    for item in play("probe", scenario):
        deltas = [c["delta"] for e in item["response"]["sse"][1:-1] for c in e["data"]["choices"]]
        kinds = [key for delta in deltas for key in delta]
        assert kinds[0] == "reasoning_content", item["label"]
        assert kinds == sorted(kinds, key=rank.__getitem__), item["label"]


def test_connect_reaches_the_thinking_profiles() -> None:
    try:
        conn = connect("kimi", engine="moonshot_thinking")
        assert conn.model_name == MOONSHOT
        assert conn.endpoint.endswith("/engines/moonshot_thinking/v1")
        assert connect("kimi", engine="vllm_thinking").model_name == SELF_HOSTED
        assert connect("kimi", engine="sglang_drift").model_name == SELF_HOSTED
        assert connect("kimi").model_name == "moonshotai/Kimi-K2-Instruct"
    finally:
        stop_servers()


def test_cassette_says_it_is_synthesized_and_names_the_profiles() -> None:
    cassette = json.loads((RECORDINGS_DIR / "06_thinking_models.json").read_text("utf-8"))
    assert "synthesized" in cassette["meta"]["source"]
    names = {p["name"] for p in cassette["meta"]["profiles"]}
    assert names == {"moonshot_thinking", "vllm_thinking", "sglang_drift"}


def _three_rounds(*reasoning: str | None) -> list[dict[str, Any]]:
    """Three tool rounds; the assistant message of round i carries `reasoning[i]` when not None."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in three cities?"}]
    for i, text in enumerate(reasoning):
        call = CALL | {"id": f"get_weather:{i}"}
        assistant: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [call]}
        if text is not None:
            assistant["reasoning_content"] = text
        messages += [assistant, RESULT | {"tool_call_id": call["id"]}]
    return messages


@pytest.mark.parametrize(
    "reasoning, index",
    [
        ((None, "b", "c"), 1),  # only the first lost it: the last messages are all fine
        (("a", None, "c"), 3),
        (("a", "b", None), 5),
    ],
)
def test_every_assistant_tool_call_message_in_the_history_is_checked(reasoning, index) -> None:
    with pytest.raises(ApiError) as caught:
        check_chat_request(body(_three_rounds(*reasoning)))
    assert caught.value.message == REASONING_MISSING.format(index=index)
    check_chat_request(body(_three_rounds("a", "b", "c")))


# --- the Moonshot platform's other documented rules ------------------------------------------------


def test_a_named_tool_choice_is_refused_with_thinking_on_too() -> None:
    named = {"type": "function", "function": {"name": "get_weather"}}
    with pytest.raises(ApiError) as caught:
        check_chat_request(body(user("Weather?"), tool_choice=named))
    assert caught.value.message == NAMED_WITH_THINKING
    off = {"thinking": {"type": "disabled"}}
    check_chat_request(body(user("Weather?"), tool_choice=named, **off))
    check_chat_request(body(user("Weather?"), tool_choice="auto"))


@pytest.mark.parametrize("model", ["kimi-k2.6", "kimi-k2.5"])
def test_locked_sampling_refuses_other_values_and_accepts_the_fixed_ones(model: str) -> None:
    off = {"thinking": {"type": "disabled"}}
    for extra, name in [({"temperature": 0.3}, "temperature"), ({"top_p": 0.5}, "top_p")]:
        with pytest.raises(ApiError) as caught:
            check_chat_request(body(user("Hi"), model=model, **extra))
        assert caught.value.param == name
    with pytest.raises(ApiError, match="only 0.6 is allowed"):
        check_chat_request(body(user("Hi"), model=model, temperature=1.0, **off))
    with pytest.raises(ApiError, match="invalid n"):
        check_chat_request(body(user("Hi"), model=model, n=2))
    check_chat_request(body(user("Hi"), model=model, temperature=1, top_p=0.95, n=1))
    check_chat_request(body(user("Hi"), model=model, temperature=0.6, **off))
    check_chat_request(body(user("Hi"), model=model))  # nothing sent: the platform's values
    check_chat_request(body(user("Hi"), model="moonshotai/Kimi-K2.6", temperature=0.3))


def tool(name: str = "get_weather", strict: bool | None = None, **parameters: Any) -> dict:
    """One function tool whose `parameters` schema is `{"type": "object", **parameters}`."""
    function: dict[str, Any] = {"name": name, "parameters": {"type": "object", **parameters}}
    if strict is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


CITY = {"city": {"type": "string"}}


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"title": "Weather", "properties": CITY}, "title"),
        ({"properties": {"day": {"type": "string", "format": "date"}}}, "properties.day.format"),
        ({"$comment": "ours", "properties": CITY}, "$comment"),
        (
            {"properties": {"at": {"type": "array", "prefixItems": [{"type": "number"}]}}},
            "properties.at.prefixItems",
        ),
        ({"properties": {"x": {"$defs": {}, "type": "string"}}}, "only at the root"),
        ({"properties": {"x": {"$ref": "https://example.org/s.json"}}}, "internal references"),
        ({"properties": {"x": {"enum": ["a", 1]}}}, "enum mixes value types"),
    ],
)
def test_strict_tools_refuse_what_moonshots_schema_subset_leaves_out(
    schema: dict, where: str
) -> None:
    with pytest.raises(ApiError) as caught:
        check_chat_request(body(user("Hi"), tools=[tool(**schema)]))
    assert where in caught.value.message and "strict" in caught.value.message
    check_chat_request(body(user("Hi"), tools=[tool(strict=False, **schema)]))
    check_chat_request(body(user("Hi"), model=SELF_HOSTED, tools=[tool(**schema)]))


def test_a_property_named_like_a_keyword_is_fine() -> None:
    named = {"title": {"type": "string"}, "format": {"type": "string"}}
    check_chat_request(body(user("Hi"), tools=[tool(properties=named)]))


@pytest.mark.parametrize("name", ["go", "1st_tool", "get weather", "-x-tool", "a" * 65])
def test_tool_names_follow_moonshots_pattern(name: str) -> None:
    with pytest.raises(ApiError, match="must match"):
        check_chat_request(body(user("Hi"), tools=[tool(name)]))


def test_at_most_128_functions() -> None:
    check_chat_request(body(user("Hi"), tools=[tool(f"tool_{i}") for i in range(128)]))
    with pytest.raises(ApiError, match="at most 128 functions"):
        check_chat_request(body(user("Hi"), tools=[tool(f"tool_{i}") for i in range(129)]))


def test_the_replay_moonshot_profile_checks_schemas_and_vllm_does_not(
    server: ReplayServer,
) -> None:
    bad = tool(properties={"day": {"type": "string", "format": "date"}})
    ask = {"messages": user(WEATHER_PROMPT), "tools": [bad]}
    default = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="format is not supported"):
        default.chat.completions.create(model="moonshotai/Kimi-K2-Instruct", **ask)
    with pytest.raises(openai.NotFoundError):  # accepted, but nothing recorded for it
        client_for(server, "vllm").chat.completions.create(
            model="moonshotai/Kimi-K2-Instruct", **ask
        )


def test_kimi_k2_thinking_has_no_switch_and_k2_7_code_refuses_disabled() -> None:
    off = {"thinking": {"type": "disabled"}}
    with pytest.raises(ApiError, match="reasoning_content is missing"):
        check_chat_request(body(round_two(), model="kimi-k2-thinking", **off))
    with pytest.raises(ApiError, match="cannot be disabled"):
        check_chat_request(body(user("Hi"), model="kimi-k2.7-code", **off))


def test_keep_all_wants_reasoning_on_every_assistant_message() -> None:
    history = [*user("Hi"), {"role": "assistant", "content": "Hello!"}, *user("Weather?")]
    check_chat_request(body(history))
    with pytest.raises(ApiError, match="index 1"):
        check_chat_request(body(history, thinking={"type": "enabled", "keep": "all"}))


def test_every_schema_the_series_sends_or_builds_is_accepted_by_the_platform() -> None:
    from helpers import schema_from_function
    from helpers.replay.cassette import cassette_files, load_cassette
    from helpers.replay.validation import check_moonshot_tools

    sent = 0
    for path in cassette_files(RECORDINGS_DIR):
        for interaction in load_cassette(path).interactions:
            tools = interaction.request["body"].get("tools")
            response = interaction.response
            if tools and response["status"] == 400:
                # lesson 08 sends a schema outside the subset and lesson 10 a dotted name on
                # purpose: where the tools are what was refused, the recorded refusal is the
                # platform check's own (other 400s refuse something else, e.g. a forced choice)
                try:
                    check_moonshot_tools(tools)
                except ApiError as refused:
                    assert refused.body() == response["body"]
            elif tools:
                check_moonshot_tools(tools)
                sent += 1
    assert sent > 20

    def plan(route: tuple[float, float], mode: str = "walk") -> dict:
        """Plan a trip.

        Args:
            route: start latitude and longitude
            mode: how to travel
        """
        return {}

    check_moonshot_tools([schema_from_function(plan)])  # prefixItems rewritten as items
    assert schema_from_function(plan)["function"]["parameters"]["properties"]["route"] == {
        "type": "array",
        "items": {"type": "number"},
        "description": "start latitude and longitude",
    }


def test_connection_settings_leave_locked_sampling_out_and_switch_thinking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from helpers.replay.modes import Connection, LiveSettingsError

    def conn(model: str, mode: str = "live") -> Connection:
        return Connection("http://127.0.0.1:1/v1", "k", model, mode, "kimi", None)

    monkeypatch.delenv("KIMI_THINKING", raising=False)
    assert conn("moonshotai/Kimi-K2-Instruct", "replay").settings(temperature=0.3) == {
        "temperature": 0.3
    }
    assert conn("kimi-k2.6").settings(temperature=0.3) == {}
    off = {"extra_body": {"thinking": {"type": "disabled"}}}
    assert conn("kimi-k2.6").settings(temperature=0.3, thinking=False) == off
    assert conn("moonshotai/Kimi-K2-Instruct-0905").settings(thinking=False) == {}
    monkeypatch.setenv("KIMI_THINKING", "off")
    assert conn("kimi-k2.5").settings(temperature=0.3) == off
    with pytest.raises(LiveSettingsError, match="always thinks"):
        conn("kimi-k2.7-code").settings()
    monkeypatch.setenv("KIMI_THINKING", "maybe")
    with pytest.raises(LiveSettingsError, match="on .* or off"):
        conn("kimi-k2.6").settings()
