"""Lesson 10: the model's side of the MCP lesson, synthesized from Moonshot's documented format.

The tools are what the lesson's MCP server lists, after `helpers.mcp.to_openai_tools` (the names
mapped, `title` keywords dropped). The results are the exact texts `helpers.mcp.tool_content`
makes of the server's answers (tests/test_mcp.py runs the lesson's server and compares).

- "raw-names": the listing sent unchanged (a dotted name, `title` keywords) is refused with the
  400 the Moonshot platform documents for a name outside its pattern.
- "mcp-loop": one question that needs both tools; the model calls them in parallel, then answers.
"""

from __future__ import annotations

from typing import Any

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import user

NOTEBOOK = "10_mcp_tools"

MCP_PROMPT = "What's the weather in Moscow today, and what did I write in packing.txt?"

WEATHER_DESCRIPTION = "Today's weather in a city."
READ_DESCRIPTION = "Read a text file from the notes folder."


def _tool(name: str, description: str, parameter: str, title: str | None = None) -> dict[str, Any]:
    """One `tools=` entry with one required string parameter (and MCP's titles when given)."""
    prop: dict[str, Any] = {"type": "string"}
    parameters: dict[str, Any] = {"type": "object", "properties": {parameter: prop}}
    if title is not None:
        prop["title"] = parameter.capitalize()
        parameters = {**parameters, "required": [parameter], "title": title}
    else:
        parameters["required"] = [parameter]
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


MCP_TOOLS: list[dict[str, Any]] = [
    _tool("weather_today", WEATHER_DESCRIPTION, "city"),
    _tool("read_file", READ_DESCRIPTION, "name"),
]
"""What the lesson sends as `tools=`: the server's listing after `to_openai_tools`."""

RAW_TOOLS: list[dict[str, Any]] = [
    _tool("weather.today", WEATHER_DESCRIPTION, "city", title="weather_todayArguments"),
    _tool("read_file", READ_DESCRIPTION, "name", title="read_fileArguments"),
]
"""The listing copied into `tools=` as it is: the MCP names and the SDK's `title` keywords."""

MOSCOW = '{"city": "Moscow", "weather": "Snow", "celsius": -3}'
PACKING = "Umbrella, warm scarf."

MCP_TURNS: list[Turn] = [
    Turn(
        tool_calls=[("weather_today", {"city": "Moscow"}), ("read_file", {"name": "packing.txt"})],
        results=[MOSCOW, PACKING],
    ),
    Turn(
        content="It's snowing in Moscow today, -3 °C. Your packing.txt says: umbrella, warm scarf."
    ),
]

SCENARIOS: list[Scenario] = [
    Scenario(
        name="raw-names",
        provider="kimi",
        messages=user(MCP_PROMPT),
        tools=RAW_TOOLS,
        turns=[Turn(refused=True)],
    ),
    Scenario(
        name="mcp-loop",
        provider="kimi",
        messages=user(MCP_PROMPT),
        tools=MCP_TOOLS,
        turns=MCP_TURNS,
    ),
]
