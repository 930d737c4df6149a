"""History and tools validation: the 400s a real server gives, through the SDK, never retried."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
import requests
from test_replay_fixtures import (
    ASSISTANT,
    CALL,
    MODEL,
    SYSTEM,
    TOOL_RESULT,
    TOOLS,
    USER,
)

from helpers.replay import ApiError, ReplayServer
from helpers.replay.validation import check_chat_request, check_messages, check_tools

ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
SECOND_CALL = {
    "id": "get_weather:1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Moscow"}'},
}


@pytest.fixture
def client(server: ReplayServer) -> Iterator[openai.OpenAI]:
    """An SDK client with its default retries (2): the server must stop them."""
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k") as sdk:
        yield sdk


def _bad_request(
    client: openai.OpenAI, server: ReplayServer, messages: list[dict[str, Any]], **kwargs: Any
) -> openai.BadRequestError:
    """Send a request that must fail with 400, checking the SDK did not retry it."""
    before = len(server.requests)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=messages, **kwargs)
    assert len(server.requests) == before + 1
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert caught.value.body["type"] == "invalid_request_error"
    return caught.value


def test_guide_defect_missing_assistant_message(
    client: openai.OpenAI, server: ReplayServer
) -> None:
    """The guide's streaming loop sends tool results without the assistant message: 400."""
    error = _bad_request(client, server, [SYSTEM, USER, TOOL_RESULT], tools=TOOLS)
    assert str(error) == f"Error code: 400 - {ORPHAN}"
    assert error.body == {
        "message": ORPHAN,
        "type": "invalid_request_error",
        "param": "messages.[2].role",
        "code": None,
    }


def test_tool_message_after_plain_assistant_is_orphan(
    client: openai.OpenAI, server: ReplayServer
) -> None:
    """A tool message after an assistant message without calls is an orphan too."""
    messages = [USER, {"role": "assistant", "content": "Hi"}, TOOL_RESULT]
    assert _bad_request(client, server, messages).body["param"] == "messages.[2].role"


def test_unanswered_tool_calls_before_next_message(
    client: openai.OpenAI, server: ReplayServer
) -> None:
    """An assistant tool call followed by a user message lists the unanswered id."""
    messages = [USER, ASSISTANT, {"role": "user", "content": "and?"}]
    error = _bad_request(client, server, messages, tools=TOOLS)
    assert error.body["message"] == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "get_weather:0"
    )
    assert error.body["param"] == "messages.[1].role"


def test_unanswered_tool_calls_at_the_end_lists_every_id(
    client: openai.OpenAI, server: ReplayServer
) -> None:
    """Two calls, one answered, conversation ends: the other id is listed."""
    assistant = {"role": "assistant", "content": "", "tool_calls": [CALL, SECOND_CALL]}
    messages = [USER, assistant, TOOL_RESULT]
    error = _bad_request(client, server, messages, tools=TOOLS)
    assert error.body["message"].endswith("did not have response messages: get_weather:1")
    unanswered = _bad_request(client, server, [USER, assistant], tools=TOOLS)
    assert unanswered.body["message"].endswith(
        "did not have response messages: get_weather:0, get_weather:1"
    )


def test_unknown_tool_call_id(client: openai.OpenAI, server: ReplayServer) -> None:
    """A tool answer whose id is not among the previous calls."""
    wrong = {**TOOL_RESULT, "tool_call_id": "functions.get_weather:0"}
    error = _bad_request(client, server, [USER, ASSISTANT, wrong], tools=TOOLS)
    assert error.body["message"] == (
        "Invalid parameter: 'tool_call_id' of 'functions.get_weather:0' not found in "
        "'tool_calls' of previous message."
    )
    assert error.body["param"] == "messages.[2].tool_call_id"


@pytest.mark.parametrize(
    ("tools", "message", "param"),
    [
        (
            {"type": "function"},
            "Invalid type for 'tools': expected an array, but got an object instead.",
            "tools",
        ),
        (
            [{"type": "function", "name": "get_weather", "parameters": {}}],
            "Missing required parameter: 'tools[0].function'.",
            "tools[0].function",
        ),
        (
            [{"type": "fn", "function": {"name": "get_weather"}}],
            "Invalid value: 'fn'. Supported values are: 'function'.",  # OpenAI's single quotes
            "tools[0].type",
        ),
        (
            [{"function": {"name": "get_weather"}}],
            "Missing required parameter: 'tools[0].type'.",
            "tools[0].type",
        ),
        (
            [{"type": "function", "function": {"parameters": {}}}],
            "Missing required parameter: 'tools[0].function.name'.",
            "tools[0].function.name",
        ),
        (
            [{"type": "function", "function": {"name": "f", "parameters": "{}"}}],
            "Invalid type for 'tools[0].function.parameters': expected an object, "
            "but got a string instead.",
            "tools[0].function.parameters",
        ),
        (
            ["get_weather"],
            "Invalid type for 'tools[0]': expected an object, but got a string instead.",
            "tools[0]",
        ),
    ],
)
def test_malformed_tools(
    client: openai.OpenAI, server: ReplayServer, tools: Any, message: str, param: str
) -> None:
    """Malformed tool declarations get a 400 naming the field."""
    error = _bad_request(client, server, [USER], tools=tools)
    assert error.body["message"] == message
    assert error.body["param"] == param


def test_validation_comes_before_matching(server: ReplayServer) -> None:
    """A broken history gets the 400 even though no recording would match it anyway."""
    body = {"model": "nope", "messages": [{"role": "tool", "tool_call_id": "x", "content": "1"}]}
    response = requests.post(f"{server.url}/v1/chat/completions", json=body, timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == ORPHAN


def test_completions_are_not_history_checked(server: ReplayServer) -> None:
    """/completions has no messages: a mismatch there is a 404, not a 400."""
    body = {"model": MODEL, "prompt": "anything"}
    response = requests.post(f"{server.url}/v1/completions", json=body, timeout=10)
    assert response.status_code == 404


def test_valid_histories_pass() -> None:
    """Correct histories raise nothing: parallel calls answered in any order, then more turns."""
    assistant = {"role": "assistant", "content": None, "tool_calls": [CALL, SECOND_CALL]}
    second = {**TOOL_RESULT, "tool_call_id": "get_weather:1"}
    check_messages(
        [
            SYSTEM,
            USER,
            assistant,
            second,
            TOOL_RESULT,
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "thanks"},
        ]
    )
    check_messages([USER, ASSISTANT, TOOL_RESULT])
    check_tools(TOOLS)
    check_tools(None)
    check_chat_request({"model": MODEL, "messages": [USER], "tools": TOOLS})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": [USER]}, "you must provide a model parameter"),
        ({"model": MODEL}, "Missing required parameter: 'messages'."),
        ({"model": MODEL, "messages": []}, "Invalid 'messages': empty array."),
        ({"model": MODEL, "messages": [{"content": "x"}]}, "'messages[0].role'"),
        ({"model": MODEL, "messages": [{"role": "bot", "content": "x"}]}, "Invalid value: 'bot'"),
        (
            {"model": MODEL, "messages": [USER, ASSISTANT, {"role": "tool", "content": "1"}]},
            "Missing required parameter: 'messages[2].tool_call_id'.",
        ),
    ],
)
def test_other_request_errors(body: dict[str, Any], message: str) -> None:
    """Missing model/messages, empty or role-less messages are 400s too."""
    with pytest.raises(ApiError) as caught:
        check_chat_request(body)
    assert caught.value.status == 400
    assert message in caught.value.message


# --- a tool message right after a user turn is an orphan, even after an earlier, complete run ----


@pytest.mark.parametrize(
    "messages, index",
    [
        ([USER, TOOL_RESULT], 1),
        (
            [
                SYSTEM,
                USER,
                ASSISTANT,
                TOOL_RESULT,
                {"role": "user", "content": "again"},
                TOOL_RESULT,
            ],
            5,
        ),
        (
            [
                USER,
                ASSISTANT,
                TOOL_RESULT,
                {"role": "assistant", "content": "ok"},
                USER,
                TOOL_RESULT,
            ],
            5,
        ),
    ],
)
def test_a_tool_message_right_after_a_user_turn_is_refused(
    client: openai.OpenAI, server: ReplayServer, messages: list[dict[str, Any]], index: int
) -> None:
    """The calls of an earlier run do not carry over a user turn: the id is known but not open."""
    with pytest.raises(ApiError) as caught:
        check_messages(messages)
    assert (caught.value.message, caught.value.param) == (ORPHAN, f"messages.[{index}].role")
    error = _bad_request(client, server, messages, tools=TOOLS)
    assert error.body["param"] == f"messages.[{index}].role"


# --- Kimi K3 on the Moonshot platform (lesson 09) ------------------------------------------------

K3_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"tool_choice": "required"}, "tool_choice 'required' needs at least one tool"),
        ({"tool_choice": "required", "tools": []}, "tool_choice 'required' needs at least one"),
        ({"tool_choice": "any", "tools": K3_TOOLS}, "must be 'auto', 'none' or 'required'"),
        ({"thinking": {"type": "enabled", "effort": "medium"}}, "effort must be 'low', 'high'"),
    ],
)
def test_kimi_k3_refuses_what_its_platform_refuses(extra: dict[str, Any], message: str) -> None:
    body = {"model": "kimi-k3", "messages": [{"role": "user", "content": "hi"}], **extra}
    with pytest.raises(ApiError, match=message) as caught:
        check_chat_request(body)
    assert caught.value.status == 400


@pytest.mark.parametrize(
    "extra",
    [
        {"tool_choice": "required", "tools": K3_TOOLS},  # kimi-k2.6 refuses this with thinking on
        {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},  # ignored
        {"tool_choice": "none", "thinking": {"type": "enabled", "effort": "low"}},
        {"thinking": {"type": "disabled"}},  # K3 always thinks; the switch is not an error here
    ],
)
def test_kimi_k3_accepts_its_subset(extra: dict[str, Any]) -> None:
    body = {"model": "kimi-k3", "messages": [{"role": "user", "content": "hi"}], "tools": K3_TOOLS}
    check_chat_request(body | extra)


def test_required_passes_on_kimi_k3_where_kimi_k2_6_refuses_it() -> None:
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": K3_TOOLS,
        "tool_choice": "required",
    }
    check_chat_request({"model": "kimi-k3", **body})
    with pytest.raises(ApiError, match="incompatible with thinking enabled"):
        check_chat_request({"model": "kimi-k2.6", **body})


def test_kimi_k3_needs_the_reasoning_on_every_assistant_message() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},  # no calls, still needs its reasoning
        {"role": "user", "content": "bye"},
    ]
    with pytest.raises(ApiError, match="reasoning_content is missing .* index 1"):
        check_chat_request({"model": "kimi-k3", "messages": messages})
    messages[1]["reasoning_content"] = "A greeting."
    check_chat_request({"model": "kimi-k3", "messages": messages})


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("temperature", "hot", "Invalid type for 'temperature': expected a decimal"),
        ("temperature", -1, "Expected a value >= 0, but got -1"),
        ("top_p", True, "Invalid type for 'top_p'"),
        ("max_tokens", -1, "Invalid 'max_tokens': integer below minimum value"),
        ("max_tokens", 1.5, "Invalid type for 'max_tokens': expected an integer"),
        ("n", 0, "Expected a value >= 1, but got 0"),
        ("stream", "yes", "Invalid type for 'stream': expected a boolean"),
    ],
)
def test_a_sampling_field_of_the_wrong_type_is_a_400_not_the_recording(
    client: openai.OpenAI, server: ReplayServer, field: str, value: Any, says: str
) -> None:
    """Matching ignores temperature and max_tokens, so a recorded request with `temperature:
    "hot"` was answered 200, where a live server refuses it."""
    error = _bad_request(client, server, [SYSTEM, USER], tools=TOOLS, extra_body={field: value})
    assert says in error.body["message"] and error.body["param"] == field


def test_nan_temperature_is_refused() -> None:
    with pytest.raises(ApiError, match="got nan instead"):
        check_chat_request({"model": MODEL, "messages": [USER], "temperature": float("nan")})
