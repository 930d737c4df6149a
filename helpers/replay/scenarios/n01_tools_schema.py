"""Lesson 01: one request with the weather tool; the model answers with one call."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import GUIDE_EXTRA, WEATHER_PROMPT, WEATHER_TOOLS, user

NOTEBOOK = "01_tools_schema"

SCENARIOS: list[Scenario] = [
    # Where the arguments come from: the model writes them as JSON text in the call.
    Scenario(
        name="weather",
        provider="kimi",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        turns=[Turn(tool_calls=[("get_weather", {"city": "Beijing"})])],
    ),
]
