"""Request settings per round (`Turn.request`) and the settings an engine's real service rejects."""

from __future__ import annotations

import json

import openai
import pytest

from helpers.replay import ReplayServer
from helpers.replay.cassette import save_cassette
from helpers.replay.scenarios import Turn
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    guide_scenario,
    user,
    weather_calls,
    with_request,
)
from helpers.replay.synthesize import ScenarioError, build_cassette, play

FORCE_WEATHER = {"type": "function", "function": {"name": "get_weather"}}
TURNS = [
    with_request(weather_calls("Beijing"), tool_choice=FORCE_WEATHER),
    with_request(
        Turn(content="It's sunny in Beijing today."), tool_choice="none", temperature=None
    ),
]


def bodies(rounds: list[dict]) -> list[dict]:
    return [item["request"]["body"] for item in rounds]


@pytest.mark.parametrize("engine", ["moonshot", "vllm"])
def test_tool_choice_changes_between_rounds(engine):
    sent = bodies(play("t", guide_scenario("forced", TURNS, engine=engine)))
    assert [body["tool_choice"] for body in sent] == [FORCE_WEATHER, "none"]
    assert sent[0]["temperature"] == GUIDE_EXTRA["temperature"]
    assert "temperature" not in sent[1]  # None leaves a setting out
    assert GUIDE_EXTRA == {"temperature": 0.3, "tool_choice": "auto"}  # the scenario's own stays


def test_a_turn_without_settings_sends_the_scenarios_own():
    sent = bodies(play("t", guide_scenario("plain", [weather_calls("Beijing"), TURNS[1]])))
    assert sent[0]["tool_choice"] == "auto" and sent[0]["temperature"] == 0.3


def test_the_sdk_gets_each_round_answered_from_the_cassette(tmp_path):
    cassette = build_cassette("t", "n99_t", [guide_scenario("forced", TURNS)])
    save_cassette(tmp_path / "t.json", cassette)
    messages = user(WEATHER_PROMPT)
    with ReplayServer(tmp_path) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0)
        first = (
            client.chat.completions.create(
                model="moonshotai/Kimi-K2-Instruct",
                messages=messages,
                tools=WEATHER_TOOLS,
                temperature=0.3,
                tool_choice=FORCE_WEATHER,
            )
            .choices[0]
            .message
        )
        call = first.tool_calls[0]
        messages += [
            first.model_dump(exclude_unset=True),
            {
                "role": "tool",
                "tool_call_id": call.id,
                "name": "get_weather",
                "content": json.dumps({"city": "Beijing", "weather": "Sunny"}, ensure_ascii=False),
            },
        ]
        final = (
            client.chat.completions.create(
                model="moonshotai/Kimi-K2-Instruct",
                messages=messages,
                tools=WEATHER_TOOLS,
                tool_choice="none",
            )
            .choices[0]
            .message
        )
        assert final.content == "It's sunny in Beijing today." and not final.tool_calls
        with pytest.raises(openai.NotFoundError, match="tool_choice"):  # round 2 with round 1's
            client.chat.completions.create(
                model="moonshotai/Kimi-K2-Instruct",
                messages=messages,
                tools=WEATHER_TOOLS,
                temperature=0.3,
                tool_choice=FORCE_WEATHER,
            )


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"tool_choice": "required"}, 'tool_choice="required"'),
        ({"temperature": 1.5}, "temperature=1.5"),
    ],
)
def test_the_moonshot_profile_rejects_what_its_service_rejects(settings, named):
    turns = [with_request(weather_calls("Beijing"), **settings), TURNS[1]]
    with pytest.raises(ScenarioError, match=f"moonshot engine rejects {named}"):
        play("t", guide_scenario("bad", turns))
    sent = bodies(play("t", guide_scenario("fine", turns, engine="vllm")))  # vLLM takes both
    assert all(sent[0][name] == value for name, value in settings.items())
