"""Lesson 05: the same loop with Qwen2.5 behind vLLM's hermes parser, the Qwen docs' two-tool
example, the manual loop over `/completions` with the Qwen template, and a server without the
parser flag."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    MANUAL_EXTRA,
    ONE_CALL_TURNS,
    QWEN_SYSTEM,
    SF,
    TEMPERATURE_PROMPT,
    TEMPERATURE_TOOLS,
    WEATHER_TURNS,
    get_current_temperature,
    get_temperature_date,
    guide_scenario,
)

NOTEBOOK = "05_qwen_comparison"

SCENARIOS: list[Scenario] = [
    # Lesson 02's dialog, Qwen edition: ids `chatcmpl-tool-...` invented by the server.
    guide_scenario("weather", WEATHER_TURNS, provider="qwen"),
    # The Qwen docs' example: a system message with today's date, two tools, two parallel calls.
    guide_scenario(
        "temperature",
        [
            Turn(
                tool_calls=[
                    ("get_current_temperature", {"location": SF}),
                    ("get_temperature_date", {"location": SF, "date": "2024-10-01"}),
                ],
                results=[
                    get_current_temperature(SF),
                    get_temperature_date(SF, "2024-10-01"),
                ],
            ),
            Turn(
                content="It is 26.1 °C in San Francisco now, "
                "and tomorrow (2024-10-01) it should be about 25.9 °C."
            ),
        ],
        provider="qwen",
        messages=[
            {"role": "system", "content": QWEN_SYSTEM},
            {"role": "user", "content": TEMPERATURE_PROMPT},
        ],
        tools=TEMPERATURE_TOOLS,
    ),
    # The manual loop with the Qwen2.5 template: raw `<tool_call>` JSON comes back as text. The
    # client decodes the arguments before templating (as vLLM does), so they are not encoded twice.
    guide_scenario(
        "weather-manual",
        WEATHER_TURNS,
        provider="qwen",
        api="completions",
        request_extra=MANUAL_EXTRA,
        decode_arguments=True,
    ),
    # A Qwen server started without `--tool-call-parser hermes`: the `<tool_call>` block arrives as
    # text in `content`, `tool_calls` is empty, finish_reason "stop" (the lesson parses it itself).
    guide_scenario("weather", ONE_CALL_TURNS, provider="qwen", engine="no_parser"),
]
