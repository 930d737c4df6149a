"""Every lesson's own cells send what its scenarios recorded: prompts, the weather table, tools.

Lessons define their tool and prompts in their own cells (so each can be read alone); the
cassettes are synthesized from `helpers/replay/scenarios/`. A difference would show up as a replay
404 in one lesson; these tests name it first. The lessons come from `notebooks/src/`, so a new
lesson is checked without editing this file.
"""

from __future__ import annotations

import ast
import importlib
import json
from typing import Any

import pytest
from scripts_support import lesson_code

from helpers.lessons import lesson_names, scenario_module
from helpers.replay.scenarios import all_scenarios, common, n07_qwen_today
from helpers.tools import ToolRegistry

LESSONS = lesson_names()
SCENARIOS = all_scenarios()


def literal_messages(cells: list[str]) -> list[tuple[str, str]]:
    """(role, content) of every `{"role": ..., "content": "..."}` literal in the cells."""
    found = []
    for source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if "role" in keys and "content" in keys:
                try:
                    role = ast.literal_eval(node.values[keys.index("role")])
                    content = ast.literal_eval(node.values[keys.index("content")])
                except ValueError:
                    continue
                found.append((role, content))
    return found


def scenario_prompts(name: str) -> set[tuple[str, str]]:
    """The system and user messages a lesson's scenarios start with."""
    return {
        (m["role"], m["content"])
        for scenario in SCENARIOS.get(name, [])
        for m in scenario.messages
        if m["role"] in ("system", "user") and isinstance(m.get("content"), str)
    }


def literal_questions(cells: list[str]) -> set[tuple[str, str]]:
    """("user", text) for every string literal of the cells: a question may sit in a list of
    (question, label) pairs that a cell turns into messages."""
    found = set()
    for source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found |= {
            ("user", node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
    return found


def prompts_from_elsewhere(name: str, cells: list[str]) -> set[tuple[str, str]]:
    """The user prompts a scenario module declares in `PROMPTS_FROM` ({code the lesson must
    contain: prompts that code sends}, e.g. a data file the lesson reads), when the lesson's code
    does contain that code."""
    module = importlib.import_module(f"helpers.replay.scenarios.{scenario_module(name)}")
    joined = "\n".join(cells)
    declared = getattr(module, "PROMPTS_FROM", {})
    absent = [marker for marker in declared if marker not in joined]
    assert not absent, f"{name}: PROMPTS_FROM names code the lesson does not contain: {absent}"
    return {("user", prompt) for prompts in declared.values() for prompt in prompts}


@pytest.mark.parametrize("name", [n for n in LESSONS if scenario_prompts(n)])
def test_lesson_prompts_match_its_scenarios(name):
    cells = lesson_code(name)
    written = set(literal_messages(cells)) | literal_questions(cells)
    written |= prompts_from_elsewhere(name, cells)
    missing = sorted(scenario_prompts(name) - written)
    assert not missing, f"{name}: scenarios send prompts no cell of the lesson writes: {missing}"


def definitions(name: str) -> dict[str, Any]:
    """What the lesson's `WEATHER = ...`, `FORECAST = ...`, `tools = [...]` and `dated_tool = {...}`
    cells define, run as written."""
    namespace: dict[str, Any] = {"ToolRegistry": ToolRegistry, "json": json}
    for source in lesson_code(name):
        if source.startswith(("WEATHER = ", "FORECAST = ", "tools = [", "dated_tool = {")):
            exec(compile(source, f"<{name}>", "exec"), namespace)  # the lesson's own cells
    return namespace


WEATHER_LESSONS = [n for n in LESSONS if "WEATHER" in definitions(n)]


def test_the_weather_lessons_are_found():
    assert len(WEATHER_LESSONS) >= 2, (
        "no lesson cell starts with `WEATHER = `: is the prefix stale?"
    )


@pytest.mark.parametrize("name", WEATHER_LESSONS)
def test_lesson_weather_tool_matches_the_scenarios(name):
    namespace = definitions(name)
    assert namespace["WEATHER"] == common.WEATHER
    for city in [*common.WEATHER, "Paris"]:
        assert namespace["get_weather"](city) == common.get_weather(city)


def sent_tools(name: str) -> list[list[dict[str, Any]]]:
    """The tool lists a lesson's scenarios send."""
    return [s.tools for s in SCENARIOS.get(name, []) if s.tools]


TOOLS_LESSONS = [n for n in LESSONS if "tools" in definitions(n) and sent_tools(n)]


def test_the_tools_lessons_are_found():
    assert len(TOOLS_LESSONS) >= 2, "no lesson cell starts with `tools = [`: is the prefix stale?"


@pytest.mark.parametrize("name", TOOLS_LESSONS)
def test_lesson_tools_are_what_its_scenarios_send(name):
    # Every lesson with a `tools = [...]` cell, the weather lessons and the others (07's forecast
    # tool, 08's): a drift would otherwise show up only as a replay 404 under nbval.
    assert definitions(name)["tools"] in sent_tools(name), (
        f"{name}: `tools` is not what its scenarios send"
    )


def test_lesson_08_dated_tool_is_what_its_scenarios_send():
    # Written twice, in the lesson's cell and as n08's DATED_TOOL (scenarios cannot import a
    # notebook); a drift would show up as a replay 404 in the strict-mode cells.
    name = "08_choosing_tools"
    sent = [tool for tools in sent_tools(name) for tool in tools]
    assert definitions(name)["dated_tool"] in sent, f"{name}: `dated_tool` is not what it sends"


def test_lesson_07_forecast_tool_matches_its_scenarios():
    # Lesson 07's forecast table and tool are written twice, in the lesson and in n07 (whose
    # `get_forecast` computes the recorded tool results).
    namespace = definitions("07_qwen_today")
    assert namespace["FORECAST"] == n07_qwen_today.FORECAST
    for args in [("Paris",), ("Oslo", 3, True), ("Rome", 5), ("Paris", 0)]:
        assert namespace["get_forecast"](*args) == n07_qwen_today.get_forecast(*args)
