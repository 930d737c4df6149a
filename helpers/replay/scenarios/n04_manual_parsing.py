"""Lesson 04: raw model text: the guide's manual loop over `/completions`, and a chat server
started without the tool-call parser flag."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    MANUAL_EXTRA,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    user,
    weather_calls,
)

NOTEBOOK = "04_manual_parsing"

SCENARIOS: list[Scenario] = [
    # POST {"model", "prompt", "max_tokens": 512} to /v1/completions; the prompt is the Kimi-K2
    # template render; the answer is raw text with one tool-calls section, then the final text.
    # The client appends {"role": "assistant", "content": <text before the section>,
    # "tool_calls": <parsed calls>} before the tool result.
    Scenario(
        name="weather-manual",
        provider="kimi",
        api="completions",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=MANUAL_EXTRA,
        turns=[
            weather_calls("Beijing"),
            Turn(content="It's sunny in Beijing today."),
        ],
    ),
    # No parser flag: no `tool_calls`, the markers arrive in `content`, finish_reason "stop".
    Scenario(
        name="weather",
        provider="kimi",
        engine="no_parser",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        turns=[Turn(tool_calls=[("get_weather", {"city": "Beijing"})])],
    ),
]
