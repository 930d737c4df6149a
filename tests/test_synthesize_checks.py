"""Synthesis refuses replies the request forbids or the engine profile cannot produce (issue 18).

A scenario declares what the model answers; the request it answers is `request_extra` plus the
turn's own `Turn.request`. Each rule here is OpenAI's `tool_choice` / `parallel_tool_calls`
contract or a shape the profile documents; every test shows one refused reply (named in the
error) next to the closest allowed one, so a test fails if its rule is dropped.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import WEATHER_TOOLS, user, weather_calls, with_request
from helpers.replay.synthesize import ScenarioError, play

ANSWER = Turn(content="Sunny in both.")
ONE_CALL = weather_calls("Beijing")
TWO_CALLS = weather_calls("Beijing", "Shanghai")


def scenario(turns: list[Turn], engine: str = "vllm", **fields: Any) -> Scenario:
    """The weather question on one engine (Kimi-K2 behind vLLM unless told otherwise)."""
    return Scenario(
        name="rule",
        provider=fields.pop("provider", "kimi"),
        engine=engine,
        messages=user("Weather in Beijing and Shanghai?"),
        tools=WEATHER_TOOLS,
        turns=turns,
        **fields,
    )


def bodies(played: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request bodies of played interactions."""
    return [item["request"]["body"] for item in played]


NAMED = {"type": "function", "function": {"name": "get_weather"}}


def test_tool_choice_none_forbids_calls_in_request_extra_and_in_the_turn() -> None:
    with pytest.raises(ScenarioError, match='tool_choice="none" forbids tool calls.*makes 1'):
        play("t", scenario([ONE_CALL, ANSWER], request_extra={"tool_choice": "none"}))
    with pytest.raises(ScenarioError, match="rule/vllm/round-1.*none"):
        play("t", scenario([with_request(ONE_CALL, tool_choice="none"), ANSWER]))
    # allowed: an answer without calls under "none", asked for in the last round only
    played = play("t", scenario([ONE_CALL, with_request(ANSWER, tool_choice="none")]))
    assert [body.get("tool_choice") for body in bodies(played)] == [None, "none"]


def test_tool_choice_required_needs_a_call() -> None:
    with pytest.raises(ScenarioError, match='"required" needs a call'):
        play("t", scenario([ANSWER], request_extra={"tool_choice": "required"}))
    played = play("t", scenario([with_request(ONE_CALL, tool_choice="required"), ANSWER]))
    assert bodies(played)[0]["tool_choice"] == "required"


def test_a_named_tool_choice_needs_a_call_of_that_tool_only() -> None:
    with pytest.raises(ScenarioError, match="names the tool 'get_weather'.*nothing"):
        play("t", scenario([with_request(ANSWER, tool_choice=NAMED)]))
    other = Turn(tool_calls=[("get_time", {"city": "Beijing"})], results=["noon"])
    with pytest.raises(ScenarioError, match="names the tool 'get_weather'.*get_time"):
        play("t", scenario([with_request(other, tool_choice=NAMED), ANSWER]))
    played = play("t", scenario([with_request(ONE_CALL, tool_choice=NAMED), ANSWER]))
    assert bodies(played)[0]["tool_choice"] == NAMED


def test_parallel_tool_calls_false_allows_one_call_per_reply() -> None:
    with pytest.raises(ScenarioError, match="parallel_tool_calls=false.*makes 2"):
        play("t", scenario([TWO_CALLS, ANSWER], request_extra={"parallel_tool_calls": False}))
    with pytest.raises(ScenarioError, match="parallel_tool_calls=false.*makes 2"):
        play("t", scenario([with_request(TWO_CALLS, parallel_tool_calls=False), ANSWER]))
    # a turn may lift the scenario's setting (None leaves it out of the request)
    lifted = with_request(TWO_CALLS, parallel_tool_calls=None)
    played = play("t", scenario([lifted, ANSWER], request_extra={"parallel_tool_calls": False}))
    assert "parallel_tool_calls" not in bodies(played)[0]
    assert bodies(played)[1]["parallel_tool_calls"] is False
    play("t", scenario([ONE_CALL, ANSWER], request_extra={"parallel_tool_calls": False}))


def test_reasoning_needs_a_profile_that_reports_it() -> None:
    thinking = dataclasses.replace(ONE_CALL, reasoning="Check the weather.")
    with pytest.raises(ScenarioError, match="vllm has no reasoning field"):
        play("t", scenario([thinking, ANSWER]))
    completions = scenario([thinking, ANSWER], engine=None, api="completions")
    with pytest.raises(ScenarioError, match="/completions has no reasoning field"):
        play("t", completions)
    played = play("t", scenario([thinking, ANSWER], engine="vllm_thinking"))
    assert played[0]["response"]["body"]["choices"][0]["message"]["reasoning"] == (
        "Check the weather."
    )


def test_interleave_needs_two_calls_streamed_in_fragments() -> None:
    interleaved = dataclasses.replace(TWO_CALLS, interleave=True)
    whole = scenario([interleaved], engine="ollama", provider="qwen", stream=True)
    with pytest.raises(ScenarioError, match="ollama with 2 call.*cannot interleave"):
        play("t", whole)
    single = dataclasses.replace(ONE_CALL, interleave=True)
    with pytest.raises(ScenarioError, match="vllm with 1 call.*cannot interleave"):
        play("t", scenario([single, ANSWER], stream=True))
    play("t", scenario([interleaved, ANSWER], stream=True))


def test_every_shipped_scenario_keeps_the_rules() -> None:
    """The shipped scenarios play without a refusal (synthesize --check runs the same code)."""
    from helpers.replay.scenarios import all_scenarios

    for notebook, scenarios in all_scenarios().items():
        for item in scenarios:
            play(notebook, item)


# --- Kimi K3 on the Moonshot platform (lesson 09) ------------------------------------------------

K3_ANSWER = Turn(content="Hello!", reasoning="A greeting.")


def test_kimi_k3_ignores_a_named_choice_but_refuses_what_the_platform_refuses() -> None:
    # a named choice: the reply without a call is what K3 gives (the choice is ignored) ...
    played = play("t", scenario([with_request(K3_ANSWER, tool_choice=NAMED)], "moonshot_k3"))
    assert bodies(played)[0]["tool_choice"] == NAMED
    # ... while on an engine that honours it the same reply is refused
    with pytest.raises(ScenarioError, match="names the tool 'get_weather'"):
        play("t", scenario([with_request(K3_ANSWER, tool_choice=NAMED)], "vllm_thinking"))
    # "required" is accepted on K3 (kimi-k2.6 refuses it with thinking on) but not without tools
    call = dataclasses.replace(ONE_CALL, reasoning="Call it.")
    played = play("t", scenario([with_request(call, tool_choice="required"), K3_ANSWER], "moonshot_k3"))  # fmt: skip
    assert bodies(played)[0]["tool_choice"] == "required"
    no_tools = dataclasses.replace(
        scenario([K3_ANSWER], "moonshot_k3"), tools=None, request_extra={"tool_choice": "required"}
    )
    with pytest.raises(ScenarioError, match="needs at least one tool"):
        play("t", no_tools)
    # a reply without reasoning cannot go back into a K3 history: round 2 would be a 400
    with pytest.raises(ScenarioError, match="reasoning_content is missing"):
        play("t", scenario([ONE_CALL, K3_ANSWER], "moonshot_k3"))
