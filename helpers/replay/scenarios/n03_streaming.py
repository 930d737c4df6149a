"""Lesson 03: the loop with `stream=True`: chunks, calls assembled by index, the usage chunk."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    PARALLEL_PROMPT,
    WEATHER_TURNS,
    guide_scenario,
    user,
    weather_calls,
)

NOTEBOOK = "03_streaming"

SCENARIOS: list[Scenario] = [
    # The guide's streaming dialog (Moonshot API shape).
    guide_scenario("weather-stream", WEATHER_TURNS, stream=True),
    # The same with a final usage chunk (`choices: []`): the guide's `chunk.choices[0]` fails on it.
    guide_scenario(
        "weather-stream-usage",
        WEATHER_TURNS,
        request_extra={**GUIDE_EXTRA, "stream_options": {"include_usage": True}},
        stream=True,
    ),
    # Text first, then two calls: all deltas of call 0, then all deltas of call 1. The lesson
    # stops at this request (it shows the chunks), so there is no second round.
    guide_scenario(
        "parallel-stream",
        [weather_calls("Beijing", "Shanghai", content="Let me check both cities.")],
        messages=user(PARALLEL_PROMPT),
        stream=True,
    ),
    # The two calls' deltas take turns (header 0, header 1, then argument fragments 0, 1, 0, 1...):
    # only accumulation by `index` gets both calls right. Its own prompt keeps the request distinct.
    guide_scenario(
        "parallel-interleaved",
        [
            weather_calls("Shanghai", "Moscow", interleave=True),
            Turn(content="Shanghai has light rain today, and Moscow has snow."),
        ],
        messages=user("Compare the weather in Shanghai and Moscow today."),
        stream=True,
    ),
]
