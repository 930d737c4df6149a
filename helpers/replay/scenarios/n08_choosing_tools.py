"""Lesson 08: one two-city question under every `tool_choice` setting, engine by engine.

Each answer follows what the engine documents (sources in each profile's summary and below);
a setting whose answer no source gives is not recorded, and the lesson's table says so. A turn
declared `refused` is recorded as the error the replay server's own checks give.

- Moonshot kimi-k2.6, thinking on: a forced `tool_choice` ("required" or a named function) is
  refused with a 400 (reported by third parties); `parallel_tool_calls` is not documented.
- Moonshot kimi-k3: auto / none / required; a named function is silently ignored
  (Kimi-Vendor-Verifier's K3 tests), so the model answers as under "auto".
- vLLM (Kimi-K2 behind `kimi_k2`): named and required use structured outputs, named gives one
  call of that function (docs/features/tool_calling.md); its handling of
  `parallel_tool_calls: false` is not in our sources.
- llama.cpp with a Qwen3 (Hermes) template: grammar-constrained; parallel calls on by default
  (from the template), and `false` still allows several; `required` lets text come first
  (observed on a real llama-server); what it does with a named function is not in our sources.
- Ollama: `tool_choice` is not supported on `/v1`: only the default is recorded.
"""

from __future__ import annotations

from typing import Any

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import NAMED, WEATHER_TOOLS, user

NOTEBOOK = "08_choosing_tools"

UMBRELLA_PROMPT = "Do I need an umbrella in Beijing or in Shanghai today?"
"""Two cities, so two calls under "auto" (a prompt of its own: lesson 02's two-city prompt is
answered by other recordings of the same engines)."""
SETTINGS: dict[str, dict[str, Any]] = {
    "auto": {"tool_choice": "auto"},
    "none": {"tool_choice": "none"},
    "required": {"tool_choice": "required"},
    "named": {"tool_choice": NAMED},
    "parallel-off": {"tool_choice": "auto", "parallel_tool_calls": False},
}
"""The lesson's rows: request settings sent with the same messages and tools."""

THOUGHT = "Two cities: one get_weather call for each."
BOTH = [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})]
NO_TOOL_TEXT = "I can't look the weather up right now, so I can't tell which city needs one."


def both(thinks: bool, content: str | None = None) -> Turn:
    """Two parallel calls, Beijing and Shanghai (with reasoning on a thinking model)."""
    return Turn(content=content, tool_calls=BOTH, reasoning=THOUGHT if thinks else None)


def text(thinks: bool) -> Turn:
    """No call: the model answers in text."""
    reasoning = "Tools are off for this reply; answer in words." if thinks else None
    return Turn(content=NO_TOOL_TEXT, reasoning=reasoning)


ONE = Turn(tool_calls=[("get_weather", {"city": "Beijing"})])
REFUSED = Turn(refused=True)

# (provider, engine, thinks) -> {row: the model's answer}; a row left out is not recorded.
ANSWERS: dict[tuple[str, str, bool], dict[str, Turn]] = {
    ("kimi", "moonshot_thinking", True): {
        "auto": both(True),
        "none": text(True),
        "required": REFUSED,
        "named": REFUSED,
    },
    ("kimi", "moonshot_k3", True): {
        "auto": both(True),
        "none": text(True),
        "required": both(True),
        "named": both(True),  # ignored: the answer "auto" gives
    },
    ("kimi", "vllm", False): {
        "auto": both(False),
        "none": text(False),
        "required": both(False),
        "named": ONE,
    },
    ("qwen", "llamacpp_hermes", True): {
        "auto": both(True),
        "none": text(True),
        "required": both(True, content="Let me check both cities."),
        "parallel-off": both(True),
    },
    ("qwen", "ollama", True): {"auto": both(True)},
}


DATED_PROMPT = "What will the weather be in Beijing on 2026-12-02?"
DATED_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city on a date.",
        "parameters": {
            "type": "object",
            "required": ["city", "date"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "date": {"type": "string", "format": "date"},
            },
        },
    },
}
"""A schema outside Moonshot's strict subset (`format`)."""
LOOSE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {**DATED_TOOL["function"], "strict": False},
}
"""The same tool with strict mode switched off, as Moonshot requires it be said explicitly."""

DATED_CALL = Turn(
    tool_calls=[("get_weather", {"city": "Beijing", "date": "2026-12-02"})],
    reasoning="One city, one date: one call.",
)


def strict_scenario(name: str, tool: dict[str, Any], turn: Turn) -> Scenario:
    """The dated question to kimi-k2.6 with one version of the dated tool."""
    return Scenario(
        name=name,
        provider="kimi",
        engine="moonshot_thinking",
        messages=user(DATED_PROMPT),
        tools=[tool],
        turns=[turn],
    )


SCENARIOS: list[Scenario] = [
    # One single-request scenario per recorded (engine, row).
    *(
        Scenario(
            name=f"choice-{row}",
            provider=provider,  # type: ignore[arg-type]
            engine=engine,
            messages=user(UMBRELLA_PROMPT),
            tools=WEATHER_TOOLS,
            turns=[turn],
            request_extra=SETTINGS[row],
        )
        for (provider, engine, _), rows in ANSWERS.items()
        for row, turn in rows.items()
    ),
    # Moonshot's tools are strict unless they say otherwise: `format` is refused...
    strict_scenario("strict-default", DATED_TOOL, REFUSED),
    # ...and accepted once the tool sends "strict": false.
    strict_scenario("strict-off", LOOSE_TOOL, DATED_CALL),
]
