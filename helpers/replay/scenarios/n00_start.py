"""Lesson 00: a connection check without tools, once for Kimi-K2 and once for Qwen."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import user

NOTEBOOK = "00_start"

SCENARIOS: list[Scenario] = [
    Scenario(
        name="ready",
        provider=provider,
        messages=user("Reply with one word: ready"),
        turns=[Turn(content="Ready.")],
    )
    for provider in ("kimi", "qwen")
]
