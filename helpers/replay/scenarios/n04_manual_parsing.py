"""Lesson 04: raw model text: the guide's manual loop over `/completions`, and a chat server
started without the tool-call parser flag."""

from helpers.replay.scenarios import Scenario
from helpers.replay.scenarios.common import (
    MANUAL_EXTRA,
    ONE_CALL_TURNS,
    WEATHER_TURNS,
    guide_scenario,
)

NOTEBOOK = "04_manual_parsing"

SCENARIOS: list[Scenario] = [
    # POST {"model", "prompt", "max_tokens": 512} to /v1/completions; the prompt is the Kimi-K2
    # template render; the answer is raw text with one tool-calls section, then the final text.
    # The client appends {"role": "assistant", "content": <text before the section>,
    # "tool_calls": <parsed calls>} before the tool result.
    guide_scenario("weather-manual", WEATHER_TURNS, api="completions", request_extra=MANUAL_EXTRA),
    # No parser flag: no `tool_calls`, the markers arrive in `content`, finish_reason "stop".
    guide_scenario("weather", ONE_CALL_TURNS, engine="no_parser"),
]
