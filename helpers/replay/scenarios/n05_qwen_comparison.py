"""Lesson 05: the same loop with Qwen2.5 behind vLLM's hermes parser, the Qwen docs' two-tool
example, the manual loop over `/completions` with the Qwen template, and a server without the
parser flag."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    MANUAL_EXTRA,
    QWEN_SYSTEM,
    SF,
    TEMPERATURE_PROMPT,
    TEMPERATURE_TOOLS,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    get_current_temperature,
    get_temperature_date,
    user,
    weather_calls,
)

NOTEBOOK = "05_qwen_comparison"

WEATHER_TURNS = [
    weather_calls("Beijing"),
    Turn(content="It's sunny in Beijing today."),
]

SCENARIOS: list[Scenario] = [
    # Lesson 02's dialog, Qwen edition: ids `chatcmpl-tool-...` invented by the server.
    Scenario(
        name="weather",
        provider="qwen",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        turns=WEATHER_TURNS,
    ),
    # The Qwen docs' example: a system message with today's date, two tools, two parallel calls.
    Scenario(
        name="temperature",
        provider="qwen",
        messages=[
            {"role": "system", "content": QWEN_SYSTEM},
            {"role": "user", "content": TEMPERATURE_PROMPT},
        ],
        tools=TEMPERATURE_TOOLS,
        request_extra=GUIDE_EXTRA,
        turns=[
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
    ),
    # The manual loop with the Qwen2.5 template: raw `<tool_call>` JSON comes back as text. The
    # client decodes the arguments before templating (as vLLM does), so they are not encoded twice.
    Scenario(
        name="weather-manual",
        provider="qwen",
        api="completions",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=MANUAL_EXTRA,
        decode_arguments=True,
        turns=WEATHER_TURNS,
    ),
    # A Qwen server started without `--tool-call-parser hermes`: the `<tool_call>` block arrives as
    # text in `content`, `tool_calls` is empty, finish_reason "stop" (the lesson parses it itself).
    Scenario(
        name="weather",
        provider="qwen",
        engine="no_parser",
        messages=user(WEATHER_PROMPT),
        tools=WEATHER_TOOLS,
        request_extra=GUIDE_EXTRA,
        turns=[Turn(tool_calls=[("get_weather", {"city": "Beijing"})])],
    ),
]
