"""Matching: tolerant of what a model would not see differently, strict on what it would."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import requests
from test_replay_fixtures import (
    ASSISTANT,
    FINAL_TEXT,
    MODEL,
    PROMPT,
    ROUND_1,
    ROUND_2,
    SYSTEM,
    TOOL_RESULT,
    TOOLS,
    USER,
)

from helpers.replay import ReplayServer, canonical_request, first_difference, request_key
from helpers.replay.matching import MISSING, show_value


@pytest.fixture
def client(server: ReplayServer) -> Iterator[openai.OpenAI]:
    """An SDK client pointed at the server."""
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as sdk:
        yield sdk


def _status(server: ReplayServer, body: dict[str, Any], path: str = "/v1/chat/completions") -> int:
    """The status the server answers a raw body with."""
    return requests.post(f"{server.url}{path}", json=body, timeout=10).status_code


def _round_2(**changes: Any) -> list[dict[str, Any]]:
    """ROUND_2 with the assistant message changed."""
    messages = copy.deepcopy(ROUND_2)
    messages[2].update(changes)
    return messages


def test_sdk_message_object_appended_matches(
    client: openai.OpenAI, server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appending `choice.message` (a pydantic object) as is matches the recorded dict history."""
    first = client.chat.completions.create(model=MODEL, messages=ROUND_1, tools=TOOLS)
    message = first.choices[0].message
    sent: list[dict[str, Any]] = []
    original = server.find

    def spy(path: str, body: dict[str, Any], **kwargs: Any) -> Any:
        sent.append(body)
        return original(path, body, **kwargs)

    monkeypatch.setattr(server, "find", spy)
    messages = [*ROUND_1, message, TOOL_RESULT]
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    assert second.choices[0].message.content == FINAL_TEXT
    # What openai 3.57 puts on the wire: the fields the server sent (exclude_unset), nulls included.
    assert sent[0]["messages"][2] == {
        "content": "",
        "refusal": None,
        "role": "assistant",
        "tool_calls": [
            {
                "id": "get_weather:0",
                "function": {"arguments": '{"city": "Beijing"}', "name": "get_weather"},
                "type": "function",
            }
        ],
    }


def test_vllm_message_object_with_null_content_matches(server: ReplayServer) -> None:
    """The vLLM recording's message (content null) appended as is matches a "" history."""
    with openai.OpenAI(base_url=f"{server.url}/engines/vllm/v1", api_key="k") as sdk:
        first = sdk.chat.completions.create(model=MODEL, messages=ROUND_1, tools=TOOLS)
    message = first.choices[0].message.model_dump()
    assert message["content"] is None
    body = {"model": MODEL, "messages": [*ROUND_1, message], "tools": TOOLS}
    # Same history as ROUND_2 but for the id: matching reaches the id (strict) after content.
    diff = first_difference(
        canonical_request("/v1/chat/completions", {**body, "messages": [*ROUND_1, message]}),
        canonical_request("/v1/chat/completions", {**body, "messages": ROUND_2[:3]}),
    )
    assert diff is not None and diff[0] == "messages[2].tool_calls[0].id"


@pytest.mark.parametrize(
    "messages",
    [
        _round_2(content=None),
        [*ROUND_2[:2], {k: v for k, v in ASSISTANT.items() if k != "content"}, TOOL_RESULT],
        _round_2(refusal=None, audio=None, function_call=None, annotations=None),
        _round_2(annotations=[]),
        _round_2(tool_calls=[{k: v for k, v in ASSISTANT["tool_calls"][0].items() if k != "type"}]),
        _round_2(tool_calls=[{**ASSISTANT["tool_calls"][0], "index": 0}]),
        _round_2(
            tool_calls=[
                {
                    **ASSISTANT["tool_calls"][0],
                    "function": {"name": "get_weather", "arguments": '{ "city" :"Beijing" }'},
                }
            ]
        ),
        [{**m, "name": None} if m["role"] == "user" else m for m in ROUND_2],
        [{k: m[k] for k in reversed(list(m))} for m in ROUND_2],
    ],
    ids=[
        "content-null",
        "content-missing",
        "sdk-null-fields",
        "empty-annotations",
        "type-missing",
        "stream-index",
        "argument-whitespace",
        "null-name",
        "key-order",
    ],
)
def test_tolerated_forms_match(server: ReplayServer, messages: list[dict[str, Any]]) -> None:
    """Forms a model would not see differently still match the recording."""
    assert _status(server, {"model": MODEL, "messages": messages, "tools": TOOLS}) == 200


@pytest.mark.parametrize(
    "extra",
    [
        {"temperature": 0.6, "top_p": 0.9, "seed": 7, "user": "me"},
        {"max_tokens": 50},
        {"stream": False, "tool_choice": "auto", "n": 1},
        {"stream_options": None, "presence_penalty": 0.1},
    ],
    ids=["sampling", "chat-max-tokens", "defaults", "nulls"],
)
def test_ignored_fields_match(server: ReplayServer, extra: dict[str, Any]) -> None:
    """Sampling knobs, chat length limits and default values do not change the match."""
    assert _status(server, {"model": MODEL, "messages": ROUND_2, "tools": TOOLS, **extra}) == 200


def _tools_renamed() -> list[dict[str, Any]]:
    """TOOLS with another function name."""
    tools = copy.deepcopy(TOOLS)
    tools[0]["function"]["name"] = "get_forecast"
    return tools


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"messages": _round_2(content="Let me check.")}, "messages[2].content"),
        (
            {
                "messages": [
                    *_round_2(tool_calls=[{**ASSISTANT["tool_calls"][0], "id": "call_0"}])[:3],
                    {**TOOL_RESULT, "tool_call_id": "call_0"},
                ]
            },
            "messages[2].tool_calls[0].id",
        ),
        ({"messages": [*ROUND_2[:3], {**TOOL_RESULT, "name": "weather"}]}, "messages[3].name"),
        (
            {"messages": [*ROUND_2[:3], {**TOOL_RESULT, "content": '{"weather": "Rain"}'}]},
            "messages[3].content",
        ),
        (
            {
                "messages": _round_2(
                    tool_calls=[
                        {
                            **ASSISTANT["tool_calls"][0],
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ]
                )
            },
            "messages[2].tool_calls[0].function.arguments",
        ),
        ({"messages": [USER, SYSTEM]}, "messages[0].role"),
        ({"tools": _tools_renamed()}, "tools[0].function.name"),
        ({"tools": []}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"stream": True}, "stream"),
        ({"parallel_tool_calls": False}, "parallel_tool_calls"),
    ],
    ids=[
        "assistant-text",
        "call-id",
        "tool-name",
        "tool-content",
        "arguments-value",
        "message-order",
        "tool-renamed",
        "no-tools",
        "tool-choice",
        "stream",
        "other-field",
    ],
)
def test_strict_differences_do_not_match(
    server: ReplayServer, body: dict[str, Any], field: str
) -> None:
    """What a model would see differently gets the 404 naming that field."""
    full = {"model": MODEL, "messages": ROUND_2, "tools": TOOLS, **body}
    response = requests.post(f"{server.url}/v1/chat/completions", json=full, timeout=10)
    assert response.status_code == 404
    assert response.headers["x-should-retry"] == "false"
    assert f"First difference at {field}:" in response.json()["error"]["message"]


def test_completions_max_tokens_and_prompt_are_matched(server: ReplayServer) -> None:
    """For raw completions max_tokens and the exact prompt matter; temperature does not."""
    base = {"model": MODEL, "prompt": PROMPT, "max_tokens": 100}
    assert _status(server, {**base, "temperature": 0.6}, "/v1/completions") == 200
    assert _status(server, {**base, "max_tokens": 20}, "/v1/completions") == 404
    assert _status(server, {**base, "prompt": PROMPT + " "}, "/v1/completions") == 404


def test_path_is_matched_and_normalised(server: ReplayServer) -> None:
    """Duplicate slashes and a query string do not matter; an engine prefix does."""
    body = {"model": MODEL, "messages": ROUND_2, "tools": TOOLS}
    assert _status(server, body, "/v1//chat/completions?x=1") == 200
    response = requests.post(
        f"{server.url}/engines/sglang/v1/chat/completions", json=body, timeout=10
    )
    assert response.status_code == 404
    message = response.json()["error"]["message"]
    assert "First difference at path:" in message
    assert '"/engines/sglang/v1/chat/completions"' in message


def test_closest_prefers_longest_common_history(server: ReplayServer) -> None:
    """A round-2 history with a changed tool result is closest to round 2, not round 1."""
    messages = [*ROUND_2[:3], {**TOOL_RESULT, "content": '{"weather": "Rain"}'}]
    response = requests.post(
        f"{server.url}/v1/chat/completions",
        json={"model": MODEL, "messages": messages, "tools": TOOLS},
        timeout=10,
    )
    assert "Closest recording: 'weather/round-2' in lesson.json." in response.text


def test_extra_message_reports_the_absent_side(server: ReplayServer) -> None:
    """A longer history than any recording: the extra message vs '(absent)'."""
    messages = [*ROUND_2, {"role": "assistant", "content": FINAL_TEXT}, USER]
    response = requests.post(
        f"{server.url}/v1/chat/completions",
        json={"model": MODEL, "messages": messages, "tools": TOOLS},
        timeout=10,
    )
    message = response.json()["error"]["message"]
    assert "First difference at messages[4]:" in message
    assert '  this request: {"role": "assistant", "content": "It is sunny' in message
    assert "  recording:    (absent)" in message


def test_canonical_form_units() -> None:
    """The canonical form itself: arguments by value, ignored fields gone, key order free."""
    one = canonical_request(
        "/v1/chat/completions",
        {"model": "m", "messages": ROUND_2, "temperature": 1, "stream": False},
    )
    assert "temperature" not in one and "stream" not in one
    reordered = json.loads(json.dumps({"stream": False, "messages": ROUND_2, "model": "m"}))
    assert request_key(one) == request_key(canonical_request("/v1/chat/completions", reordered))
    args = one["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(args) == {"city": "Beijing"}
    broken = canonical_request(
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": _round_2(
                tool_calls=[
                    {
                        **ASSISTANT["tool_calls"][0],
                        "function": {"name": "get_weather", "arguments": '{"city": '},
                    }
                ]
            ),
        },
    )
    assert broken["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": '
    # JSON true and 1 are different arguments even though Python says True == 1.
    as_true = canonical_request("/v1/completions", {"model": "m", "prompt": [True]})
    as_one = canonical_request("/v1/completions", {"model": "m", "prompt": [1]})
    assert request_key(as_true) != request_key(as_one)


def test_show_value_shortens() -> None:
    """Values in messages are cut near 80 characters; absent values are named."""
    assert show_value(MISSING) == "(absent)"
    assert show_value("short") == '"short"'
    long_a, long_b = "x" * 200 + "A" + "y" * 200, "x" * 200 + "B"
    shown = show_value(long_a, long_b)
    assert shown.startswith('..."') and shown.endswith("...") and "A" in shown
    assert len(shown) <= 90
    assert show_value({"k": "v" * 300}) == '{"k": "' + "v" * 73 + "…[+229 chars]"


# --- issue 33: the 404 hint follows a language chosen after import ------------------------------


@pytest.mark.parametrize("order", [("ru", "en"), ("en", "ru")])
def test_the_live_hint_is_in_the_language_chosen_after_import(order: tuple[str, str]) -> None:
    from helpers.i18n import reset_language, set_language
    from helpers.replay import matching  # imported at the top of this file, in English

    request = {"path": "/v1/chat/completions", "model": "m"}
    try:
        for lang in order:
            set_language(lang)
            text, _ = matching.mismatch_message(request, [])
            russian = "режим live" in text and "перейдите" in text
            english = "switch to live mode" in text
            assert (russian, english) == (lang == "ru", lang == "en"), text
    finally:
        reset_language()
