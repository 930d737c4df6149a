"""Declarative scenarios behind the shipped cassettes: what the model "says", turn by turn.

A `Scenario` is one conversation as a notebook runs it: the first messages, the tools, how the
request is sent, and a list of `Turn`s, i.e. what the model answers each time it is asked.
`python -m helpers.replay synthesize` plays the client's part (it appends the assistant message,
then one tool message per call, exactly like `run_tool_loop`) and writes every request/response
pair into `data/recordings/<notebook>.json`. One module per notebook, named after its lesson
(`nNN_name.py` for `notebooks/src/NN_name.py`, with `NOTEBOOK = "NN_name"`); read it to know
what the cassette contains.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

from helpers.lessons import lesson_names, lesson_of_module, scenario_module

Arguments = dict[str, Any] | str
"""Call arguments: a dict (written as JSON text) or the exact text the model wrote."""


class _RunTool:
    """Sentinel result: use the content the lesson's real `ToolRegistry` returns for the call."""

    def __repr__(self) -> str:
        """Readable in scenario listings."""
        return "RUN_TOOL"


RUN_TOOL: Any = _RunTool()


@dataclass(frozen=True)
class Turn:
    """One model reply: text, calls, and the tool results the client sends back for them."""

    content: str | None = None
    tool_calls: list[tuple[str, Arguments]] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    finish_reason: str | None = None  # None: what the engine profile reports
    interleave: bool = False  # streaming only: alternate argument fragments of parallel calls
    reasoning: str | None = None  # thinking profiles: what the model thought before answering
    request: dict[str, Any] = field(default_factory=dict)
    """Settings of the request that asks for this reply, over `Scenario.request_extra` (e.g.
    `{"tool_choice": "none"}` in the last round); a value of None leaves the setting out."""
    refused: bool = False
    """The engine answers this request with an HTTP error instead of a reply: synthesis records
    the error the replay server's own checks give (`helpers.replay.validation`), and refuses the
    scenario when those checks accept the request. A refused turn is the last one."""


@dataclass(frozen=True)
class Scenario:
    """One conversation as a notebook sends it, with the model's replies as `turns`."""

    name: str
    provider: Literal["kimi", "qwen"]
    messages: list[dict[str, Any]]
    turns: list[Turn]
    tools: list[dict[str, Any]] | None = None
    engine: str | None = None  # None: the provider's default engine (served at /v1)
    api: Literal["chat", "completions"] = "chat"
    stream: bool = False
    request_extra: dict[str, Any] = field(default_factory=dict)
    decode_arguments: bool = False  # completions: json.loads call arguments before templating


def scenario_modules() -> tuple[str, ...]:
    """One scenario module per lesson source, by name: `notebooks/src/02_sync_loop.py` ->
    `n02_sync_loop` (no list to edit: a new lesson is registered by its file name)."""
    return tuple(scenario_module(name) for name in lesson_names())


def all_scenarios(modules: tuple[str, ...] | None = None) -> dict[str, list[Scenario]]:
    """Every notebook's scenarios, keyed by notebook name, in lesson order."""
    result: dict[str, list[Scenario]] = {}
    for module_name in scenario_modules() if modules is None else modules:
        full_name = f"{__name__}.{module_name}"
        try:
            module = importlib.import_module(full_name)
        except ModuleNotFoundError as exc:
            if exc.name != full_name:
                raise
            raise LookupError(
                f"lesson {lesson_of_module(module_name)} has no scenario module "
                f"helpers/replay/scenarios/{module_name}.py: create it (see docs/authoring.md)"
            ) from exc
        if module.NOTEBOOK != lesson_of_module(module_name):
            raise ValueError(
                f"{module_name}.py says NOTEBOOK = {module.NOTEBOOK!r}; "
                f"its file name makes it {lesson_of_module(module_name)!r}"
            )
        result[module.NOTEBOOK] = list(module.SCENARIOS)
    return result
