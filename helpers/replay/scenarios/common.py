"""Tools, prompts, turns and request settings shared by the scenarios (and by notebook cells).

Notebooks define the same tool in their own cells; a test compares them with these values so the
replayed requests match byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from helpers.replay.scenarios import Scenario, Turn

# --- the guide's weather tool -------------------------------------------------------------------

WEATHER: dict[str, str] = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict[str, str]:
    """The lesson's weather tool: a fixed table, so the result visibly depends on `city`."""
    return {"city": city, "weather": WEATHER.get(city, "unknown")}


WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get weather information. "
        "Call this tool when the user needs to get weather information",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    },
}
WEATHER_TOOLS: list[dict[str, Any]] = [WEATHER_TOOL]

WEATHER_PROMPT = "What's the weather like in Beijing today? Let's check using the tool."
PARALLEL_PROMPT = "Compare the weather in Beijing and Shanghai today."
ONE_AT_A_TIME_PROMPT = (
    "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."
)


def weather_calls(*cities: str, **fields: Any) -> Turn:
    """A turn calling `get_weather` once per city (in parallel), answered by the real tool;
    `fields` sets the rest of the turn (`content`, `interleave`, `reasoning`)."""
    return Turn(
        tool_calls=[("get_weather", {"city": city}) for city in cities],
        results=[get_weather(city) for city in cities],
        **fields,
    )


WEATHER_TURNS: list[Turn] = [weather_calls("Beijing"), Turn(content="It's sunny in Beijing today.")]
"""The guide's dialog: call get_weather for Beijing, get the result back, answer."""

ONE_CALL_TURNS: list[Turn] = [Turn(tool_calls=[("get_weather", {"city": "Beijing"})])]
"""One reply with one call for Beijing and nothing after it: the lesson stops at this request."""

NAMED: dict[str, Any] = {"type": "function", "function": {"name": "get_weather"}}
"""A `tool_choice` naming the weather tool."""

GUIDE_EXTRA: dict[str, Any] = {"temperature": 0.3, "tool_choice": "auto"}
"""What the guide's `client.chat.completions.create(...)` sends besides model/messages/tools."""

MANUAL_EXTRA: dict[str, Any] = {"max_tokens": 512}
"""What the guide's manual loop sends to `/completions` besides model/prompt."""


def with_request(turn: Turn, **settings: Any) -> Turn:
    """`turn`, asked for with other request settings: `with_request(turn, tool_choice="none")`."""
    return replace(turn, request=settings)


def user(text: str) -> list[dict[str, Any]]:
    """A conversation that starts with one user message."""
    return [{"role": "user", "content": text}]


def guide_scenario(name: str, turns: list[Turn], **fields: Any) -> Scenario:
    """The guide's Kimi-K2 weather request (prompt, tool, GUIDE_EXTRA) with `fields` changed."""
    guide = {
        "provider": "kimi",
        "messages": user(WEATHER_PROMPT),
        "tools": WEATHER_TOOLS,
        "request_extra": GUIDE_EXTRA,
    }
    return Scenario(name=name, turns=turns, **(guide | fields))


def lesson_registry() -> Any:
    """A `ToolRegistry` with every lesson tool; `RUN_TOOL` results come from it (lazy import)."""
    from helpers.tools import ToolRegistry

    registry = ToolRegistry()
    registry.register(get_weather, schema=WEATHER_TOOL)
    registry.register(get_current_temperature, schema=TEMPERATURE_TOOLS[0])
    registry.register(get_temperature_date, schema=TEMPERATURE_TOOLS[1])
    return registry


# --- the Qwen docs' temperature tools (schemas written for this course) -------------------------

QWEN_SYSTEM = (
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n"
    "Current Date: 2024-09-30"
)
TEMPERATURE_PROMPT = "What's the temperature in San Francisco now? How about tomorrow?"
SF = "San Francisco, CA, USA"

_UNIT = {
    "type": "string",
    "enum": ["celsius", "fahrenheit"],
    "description": 'The unit of the temperature, "celsius" by default.',
}
_LOCATION = {
    "type": "string",
    "description": 'The location, in the format "City, State, Country".',
}
TEMPERATURE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_current_temperature",
            "description": "Get the current temperature at a location.",
            "parameters": {
                "type": "object",
                "properties": {"location": _LOCATION, "unit": _UNIT},
                "required": ["location"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_temperature_date",
            "description": "Get the temperature at a location on a given date.",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": _LOCATION,
                    "date": {
                        "type": "string",
                        "description": 'The date, in the format "Year-Month-Day".',
                    },
                    "unit": _UNIT,
                },
                "required": ["location", "date"],
            },
        },
    },
]


def get_current_temperature(location: str, unit: str = "celsius") -> dict[str, Any]:
    """Fixed current temperature (26.1 °C), converted when `unit` is fahrenheit."""
    value = 26.1 if unit == "celsius" else 79.0
    return {"temperature": value, "location": location, "unit": unit}


def get_temperature_date(location: str, date: str, unit: str = "celsius") -> dict[str, Any]:
    """Fixed temperature for any date (25.9 °C), converted when `unit` is fahrenheit."""
    value = 25.9 if unit == "celsius" else 78.6
    return {"temperature": value, "location": location, "date": date, "unit": unit}
