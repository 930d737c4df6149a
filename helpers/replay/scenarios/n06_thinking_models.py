"""Lesson 06: thinking models (Kimi K2.6) in a tool loop: reasoning on the wire and sent back,
the field name per engine, thinking switched off, and tool-call ids drifting on self-hosted Kimi."""

from __future__ import annotations

import dataclasses
from typing import Any

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import (
    ONE_AT_A_TIME_PROMPT,
    WEATHER_PROMPT,
    WEATHER_TOOLS,
    user,
    weather_calls,
)

NOTEBOOK = "06_thinking_models"

THINKING_OFF: dict[str, Any] = {"thinking": {"type": "disabled"}}
"""What `extra_body={"thinking": {"type": "disabled"}}` adds to the request body."""

THREE_ROUNDS: list[Turn] = [
    weather_calls(
        "Beijing", reasoning="The user wants three cities, one call at a time. Start with Beijing."
    ),
    weather_calls("Shanghai", reasoning="Beijing is sunny. Next comes Shanghai."),
    weather_calls("Moscow", reasoning="Shanghai has light rain. Moscow is the last one."),
    Turn(
        content="Beijing is sunny, Shanghai has light rain, and Moscow has snow.",
        reasoning="I have all three results; a one-line summary is enough.",
    ),
]
"""Three tool rounds and an answer, each with its reasoning."""

THREE_ROUNDS_OFF: list[Turn] = [dataclasses.replace(t, reasoning=None) for t in THREE_ROUNDS]
"""The same dialog with thinking switched off: no reasoning at all."""

ONE_ROUND: list[Turn] = [
    weather_calls("Beijing", reasoning="The user asks about Beijing; call the weather tool."),
    Turn(content="It's sunny in Beijing today.", reasoning="The tool says Sunny. Answer briefly."),
]

# A history that started elsewhere: an OpenAI-style client or provider invented the call id.
FOREIGN_ID = "call_8f14e45fceea167a5a36dedd"
FOLLOW_UP = "And in Moscow?"


def earlier_exchange(call_id: str) -> list[dict[str, Any]]:
    """A finished weather question whose call carries `call_id`, then a follow-up question."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
    }
    return [
        {"role": "user", "content": WEATHER_PROMPT},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": call_id,
            "name": "get_weather",
            "content": '{"city": "Beijing", "weather": "Sunny"}',
        },
        {"role": "assistant", "content": "It's sunny in Beijing today."},
        {"role": "user", "content": FOLLOW_UP},
    ]


MOSCOW = weather_calls("Moscow", reasoning="Now the user asks about Moscow: call the tool again.")


def kimi_scenario(name: str, engine: str, turns: list[Turn], **fields: Any) -> Scenario:
    """A Kimi scenario with the weather tool on `engine`, no sampling settings sent; the
    three-city question unless `fields` give other `messages`."""
    fields.setdefault("messages", user(ONE_AT_A_TIME_PROMPT))
    return Scenario(
        name=name, provider="kimi", engine=engine, tools=WEATHER_TOOLS, turns=turns, **fields
    )


SCENARIOS: list[Scenario] = [
    # Moonshot API, thinking on: three tool rounds, reasoning sent back each time (JSON, then SSE).
    kimi_scenario("three-rounds", "moonshot_thinking", THREE_ROUNDS),
    kimi_scenario("three-rounds-stream", "moonshot_thinking", THREE_ROUNDS, stream=True),
    # The same with `thinking: {"type": "disabled"}`: no reasoning, nothing to send back.
    kimi_scenario(
        "thinking-off-stream",
        "moonshot_thinking",
        THREE_ROUNDS_OFF,
        request_extra=THINKING_OFF,
        stream=True,
    ),
    # vLLM >= 0.17 names the field `reasoning`.
    kimi_scenario("weather", "vllm_thinking", ONE_ROUND, messages=user(WEATHER_PROMPT)),
    # Self-hosted SGLang: a foreign id in the history makes the model drift; normalized, no drift.
    kimi_scenario("foreign-ids", "sglang_drift", [MOSCOW], messages=earlier_exchange(FOREIGN_ID)),
    kimi_scenario(
        "normalized-ids",
        "sglang_drift",
        [MOSCOW, Turn(content="Moscow has snow today.", reasoning="Snow. Say so.")],
        messages=earlier_exchange("functions.get_weather:0"),
    ),
]
