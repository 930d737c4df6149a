"""Lesson 07: Qwen3.5 behind vLLM's XML parser (reasoning in `reasoning`), and what the two laptop
servers, Ollama and llama.cpp's `llama-server`, send for the same two-city question (llama.cpp's
answers are captures, see data/captures/llamacpp.json)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import user

NOTEBOOK = "07_qwen_today"

FORECAST: dict[str, list[str]] = {
    "Paris": ["Sunny", "Cloudy", "Light rain"],
    "Oslo": ["Snow", "Snow", "Cloudy"],
}


def get_forecast(city: str, days: int = 1, hourly: bool = False) -> dict[str, Any]:
    """The lesson's forecast tool: a fixed table; `days` and `hourly` show typed parameters."""
    outlook = FORECAST.get(city, ["unknown"] * 3)[: max(1, min(days, 3))]
    return {"city": city, "days": outlook, "hourly": hourly}


FORECAST_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_forecast",
        "description": "Get the weather forecast for a city.",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "description": "Number of days, 1 to 3"},
                "hourly": {"type": "boolean", "description": "Hour-by-hour detail"},
            },
        },
    },
}
FORECAST_TOOLS: list[dict[str, Any]] = [FORECAST_TOOL]

FORECAST_PROMPT = "What's the 3-day forecast for Paris, hour by hour?"
COMPARE_PROMPT = "Compare tomorrow's forecast for Paris and Oslo."

PARIS_CALL = {"city": "Paris", "days": 3, "hourly": True}
FORECAST_TURNS: list[Turn] = [
    Turn(
        reasoning="The user wants three days for Paris with hourly detail. "
        "I will call get_forecast with days=3 and hourly=true.",
        tool_calls=[("get_forecast", PARIS_CALL)],
        results=[get_forecast(**PARIS_CALL)],
    ),
    Turn(
        reasoning="The tool answered: sunny, cloudy, then light rain.",
        content="Paris: sunny today, cloudy tomorrow, light rain the day after.",
    ),
]

TWO_CITIES = Turn(
    reasoning="Two cities, one day each: two calls.",
    tool_calls=[
        ("get_forecast", {"city": "Paris", "days": 1}),
        ("get_forecast", {"city": "Oslo", "days": 1}),
    ],
)
"""One reply with two parallel calls and nothing after it: the lesson stops at this request."""

SCENARIOS: list[Scenario] = [
    # The same loop on Qwen2.5 behind vLLM's hermes parser (the provider's default engine; in
    # live mode both loops of the lesson send exactly these requests). No reasoning field here,
    # and Qwen2.5 does not reason: the same turns without it.
    Scenario(
        name="forecast",
        provider="qwen",
        messages=user(FORECAST_PROMPT),
        tools=FORECAST_TOOLS,
        turns=[replace(turn, reasoning=None) for turn in FORECAST_TURNS],
    ),
    # Qwen3.5 behind vLLM (qwen3_coder + qwen3 parsers): the loop, reasoning in `reasoning`.
    Scenario(
        name="forecast",
        provider="qwen",
        engine="vllm_qwen3_coder",
        messages=user(FORECAST_PROMPT),
        tools=FORECAST_TOOLS,
        turns=FORECAST_TURNS,
    ),
    # Ollama: ids call_xxxxxxxx, each call whole in one chunk, `reasoning`, a `delta: {}` finish.
    Scenario(
        name="compare-stream",
        provider="qwen",
        engine="ollama",
        messages=user(COMPARE_PROMPT),
        tools=FORECAST_TOOLS,
        turns=[TWO_CITIES],
        stream=True,
    ),
    # llama.cpp: not synthesized. The lesson's two llama.cpp requests (this question streamed,
    # without and with `parallel_tool_calls: true`) are captured from a real llama-server by
    # `python scripts/capture_llamacpp.py` into data/captures/llamacpp.json, which synthesis
    # appends to this lesson's cassette as is.
]
