"""Lesson 02: the synchronous loop; the same dialog through four engines, parallel calls,
a tool error sent back to the model, and a model that needs more rounds than allowed."""

from helpers.replay.scenarios import RUN_TOOL, Scenario, Turn
from helpers.replay.scenarios.common import (
    ONE_AT_A_TIME_PROMPT,
    PARALLEL_PROMPT,
    WEATHER_TURNS,
    guide_scenario,
    user,
    weather_calls,
)

NOTEBOOK = "02_sync_loop"

SCENARIOS: list[Scenario] = [
    # The guide's dialog through each engine: ids and finish_reason differ, the loop must not
    # care. On `stop_with_calls` the guide's `while finish_reason == "tool_calls"` loop stops
    # after round 1 (same first request); `run_tool_loop` goes on to round 2.
    *(
        guide_scenario("weather", WEATHER_TURNS, engine=engine)
        for engine in (None, "vllm", "sglang", "stop_with_calls")
    ),
    # Two calls in one assistant message; both results go back before the next request.
    guide_scenario(
        "parallel",
        [
            weather_calls("Beijing", "Shanghai", content="Let me check both cities."),
            Turn(content="Beijing is sunny today, while Shanghai has light rain."),
        ],
        messages=user(PARALLEL_PROMPT),
    ),
    # A wrong argument name: the registry's validation error goes back, the model corrects itself.
    guide_scenario(
        "tool-error",
        [
            Turn(tool_calls=[("get_weather", {"town": "Beijing"})], results=[RUN_TOOL]),
            *WEATHER_TURNS,
        ],
        messages=user("What's the weather in Beijing? Use the weather tool."),
    ),
    # Three rounds of calls before the answer: `max_rounds=2` stops it, the default lets it finish.
    guide_scenario(
        "one-at-a-time",
        [
            weather_calls("Beijing"),
            weather_calls("Shanghai"),
            weather_calls("Moscow"),
            Turn(content="Beijing is sunny, Shanghai has light rain, and Moscow has snow."),
        ],
        messages=user(ONE_AT_A_TIME_PROMPT),
    ),
]
