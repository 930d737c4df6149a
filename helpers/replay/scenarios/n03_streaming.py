"""Lesson 03: the loop with `stream=True`: chunks, calls assembled by index, the usage chunk."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    PARALLEL_PROMPT,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    user,
    weather_calls,
)

NOTEBOOK = "03_streaming"

WEATHER_TURNS = [
    weather_calls("Beijing"),
    Turn(content="It's sunny in Beijing today."),
]

SCENARIOS: list[Scenario] = [
    # The guide's streaming dialog (Moonshot API shape).
    Scenario(
        name="weather-stream",
        provider="kimi",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        stream=True,
        turns=WEATHER_TURNS,
    ),
    # The same with a final usage chunk (`choices: []`): the guide's `chunk.choices[0]` fails on it.
    Scenario(
        name="weather-stream-usage",
        provider="kimi",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra={**GUIDE_EXTRA, "stream_options": {"include_usage": True}},
        stream=True,
        turns=WEATHER_TURNS,
    ),
    # Text first, then two calls: all deltas of call 0, then all deltas of call 1.
    Scenario(
        name="parallel-stream",
        provider="kimi",
        messages=user(PARALLEL_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        stream=True,
        turns=[
            weather_calls("Beijing", "Shanghai", content="Let me check both cities."),
            Turn(content="Beijing is sunny today, while Shanghai has light rain."),
        ],
    ),
    # The two calls' deltas take turns (header 0, header 1, then argument fragments 0, 1, 0, 1...):
    # only accumulation by `index` gets both calls right. Its own prompt keeps the request distinct.
    Scenario(
        name="parallel-interleaved",
        provider="kimi",
        messages=user("Compare the weather in Shanghai and Moscow today."),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        stream=True,
        turns=[
            weather_calls("Shanghai", "Moscow", interleave=True),
            Turn(content="Shanghai has light rain today, and Moscow has snow."),
        ],
    ),
]
