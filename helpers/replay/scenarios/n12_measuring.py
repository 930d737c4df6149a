"""Lesson 12: the pre-flight's battery on six engine profiles, a labelled set for tool-call F1,
and a slice of BFCL answered by a scripted model.

All of it is synthesized: the engines' answers follow what each engine documents (as in lesson
08: a setting no source describes is not recorded), and the BFCL answers are SCRIPTED, written
here to be mostly right with a few typical mistakes, so the lesson's scorer has something to find.
They measure the scorer and the formats, not any model's quality.

- Moonshot platform with Kimi-K2 (the default path; steps 3-6 ask it): `tool_choice="required"`
  is documented as unsupported but its error text is not, so it is not recorded (synthesis refuses
  to invent one); a named choice and `parallel_tool_calls: false` are not documented.
- vLLM (Kimi-K2 behind `kimi_k2`): named and `required` through structured output, and
  `parallel_tool_calls: false` keeps the first call only (vLLM's
  `maybe_filter_parallel_tool_calls` in `vllm/entrypoints/openai/utils.py`).
- Moonshot kimi-k2.6, thinking on: a forced `tool_choice` is refused with a 400 (lesson 08);
  `parallel_tool_calls: false` is not documented: not recorded.
- Moonshot kimi-k3: a named choice is ignored (the answer "auto" gives); `parallel_tool_calls`
  is not documented: not recorded.
- llama.cpp with a Qwen3 (Hermes) template: `false` still allows several calls (lesson 08's
  capture); a named function is not in our sources: not recorded.
- vLLM without `--tool-call-parser` (`no_parser`): the call stays text in `content`; the
  pre-flight stops after that first request.
- `stop_with_calls`: an engine that reports `finish_reason: "stop"` beside its calls.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import user
from helpers.verify import (
    NAMED_CHOICE,
    NO_TOOL_NEEDED,
    ONE_CITY,
    TOOL_RESULT,
    TOOLS,
    TWO_CITIES,
)

NOTEBOOK = "12_measuring"

THOUGHT = "The user asks about the weather: call the tool."
ANSWER = "It is sunny in Beijing, 21 °C."
ABOUT = "Beijing is the capital of China, known for the Forbidden City."
NO_TOOLS_ANSWER = "I will answer without tools: I cannot look the weather up here."


def calls(*pairs: tuple[str, str], thinks: bool = False, content: str | None = None) -> Turn:
    """One reply calling each (tool, city) pair."""
    reasoning = THOUGHT if thinks else None
    tool_calls = [(name, {"city": city}) for name, city in pairs]
    return Turn(content=content, tool_calls=tool_calls, reasoning=reasoning)


def words(text: str, thinks: bool = False) -> Turn:
    """A reply in words, no call."""
    return Turn(content=text, reasoning="No tool helps here." if thinks else None)


BEIJING = ("get_weather", "Beijing")
MOSCOW = ("get_weather", "Moscow")
REFUSED = Turn(refused=True)

# The battery's requests, by the name the lesson's table uses: (prompt, settings, stream).
BATTERY: dict[str, tuple[str, dict[str, Any], bool]] = {
    "stream": (ONE_CITY, {"stream_options": {"include_usage": True}}, True),
    "unneeded": (NO_TOOL_NEEDED, {}, False),
    "none": (ONE_CITY, {"tool_choice": "none"}, False),
    "required": (NO_TOOL_NEEDED, {"tool_choice": "required"}, False),
    "named": (ONE_CITY, {"tool_choice": NAMED_CHOICE}, False),
    "parallel": (TWO_CITIES, {}, False),
    "parallel-off": (TWO_CITIES, {"parallel_tool_calls": False}, False),
}


def engine_answers(thinks: bool) -> dict[str, Turn]:
    """What a correctly configured engine's model answers to each battery request."""
    return {
        "stream": calls(BEIJING, thinks=thinks),
        "unneeded": words(ABOUT, thinks),
        "none": words(NO_TOOLS_ANSWER, thinks),
        "required": calls(BEIJING, thinks=thinks),
        "named": calls(("get_time", "Beijing"), thinks=thinks),
        "parallel": calls(BEIJING, MOSCOW, thinks=thinks),
        "parallel-off": calls(BEIJING, thinks=thinks),
    }


def without(answers: dict[str, Turn], *rows: str) -> dict[str, Turn]:
    """The answers with `rows` left out (not recorded: no source says what the engine does)."""
    return {row: turn for row, turn in answers.items() if row not in rows}


# (provider, engine, thinks) -> the battery's answers; lesson 12's table has one column each.
ENGINES: dict[tuple[str, str, bool], dict[str, Turn]] = {
    ("kimi", "moonshot", False): without(
        engine_answers(False), "required", "named", "parallel-off"
    ),
    ("kimi", "vllm", False): engine_answers(False),
    ("kimi", "moonshot_thinking", True): {
        **without(engine_answers(True), "parallel-off"),
        "required": REFUSED,
        "named": REFUSED,
    },
    ("kimi", "moonshot_k3", True): {
        **without(engine_answers(True), "parallel-off"),
        "named": calls(BEIJING, thinks=True),  # ignored: the answer "auto" gives
    },
    ("qwen", "llamacpp_hermes", True): {
        **without(engine_answers(True), "named"),
        "parallel-off": calls(BEIJING, MOSCOW, thinks=True),  # `false` still allows several
    },
    ("kimi", "stop_with_calls", False): engine_answers(False),
    ("kimi", "no_parser", False): {},  # only the first request: the pre-flight stops there
}

# Step 3: more labelled questions for tool-call F1 (with the battery's ONE_CITY, TWO_CITIES and
# NO_TOOL_NEEDED): the prompt -> the model's answer.
TIME_PROMPT = "What time is it in Moscow now?"
SUM_PROMPT = "What is 2 + 2?"
F1_EXTRA: dict[str, Turn] = {
    TIME_PROMPT: calls(("get_time", "Moscow")),
    SUM_PROMPT: words("2 + 2 = 4."),
}
F1_ENGINES = ("moonshot", "stop_with_calls")


def asked(
    name: str, provider: str, engine: str, prompt: str, turns: list[Turn], **fields: Any
) -> Scenario:
    """One conversation of the lesson: `prompt` with the pre-flight's tools to `engine`."""
    return Scenario(
        name=name,
        provider=provider,  # type: ignore[arg-type]
        engine=engine,
        messages=user(prompt),
        tools=TOOLS,
        turns=turns,
        **fields,
    )


def battery_scenarios() -> list[Scenario]:
    """The pre-flight's requests, engine by engine, as `helpers.verify` sends them."""
    scenarios = []
    for (provider, engine, thinks), answers in ENGINES.items():
        first = calls(BEIJING, thinks=thinks)
        # round 2 too, except where the pre-flight stops after round 1 (no parser)
        plain = (
            [first]
            if engine == "no_parser"
            else [
                replace(first, results=[TOOL_RESULT]),
                words(ANSWER, thinks),
            ]
        )
        scenarios.append(asked(f"verify-plain-{engine}", provider, engine, ONE_CITY, plain))
        for row, turn in answers.items():
            prompt, settings, stream = BATTERY[row]
            scenarios.append(
                asked(
                    f"verify-{row}-{engine}",
                    provider,
                    engine,
                    prompt,
                    [turn],
                    stream=stream,
                    request_extra=settings,
                )
            )
    return scenarios


def f1_scenarios() -> list[Scenario]:
    """Step 3's extra labelled questions on the two engines the lesson compares."""
    return [
        asked(f"f1-{number}-{engine}", "kimi", engine, prompt, [turn])
        for engine in F1_ENGINES
        for number, (prompt, turn) in enumerate(F1_EXTRA.items(), 1)
    ]


# --- step 5: a slice of BFCL, answered by a scripted model ----------------------------------------

BFCL_SLICE = Path(__file__).resolve().parents[3] / "data" / "bfcl" / "slice.json"
BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def bfcl_items() -> list[dict[str, Any]]:
    """The 28 BFCL items lesson 12 scores (data/bfcl/README.md says which and why)."""
    return json.loads(BFCL_SLICE.read_text(encoding="utf-8"))


def bfcl_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter schema in JSON Schema's words ("dict" -> "object", "float" -> "number")."""
    out = dict(schema, type=BFCL_TYPES.get(schema["type"], schema["type"]))
    if "properties" in schema:
        out["properties"] = {key: bfcl_schema(value) for key, value in schema["properties"].items()}
    if "items" in schema:
        out["items"] = bfcl_schema(schema["items"])
    return out


def bfcl_tools(item: dict[str, Any]) -> list[dict[str, Any]]:
    """An item's functions as OpenAI-style `tools=`."""
    return [
        {
            "type": "function",
            "function": {
                "name": function["name"],
                "description": function["description"],
                "parameters": bfcl_schema(function["parameters"]),
            },
        }
        for function in item["functions"]
    ]


# The scripted model's mistakes: item id -> the call list it writes instead of the right one.
SCRIPTED_MISTAKES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # leaves out a parameter the answer needs (root_type "all" has no "" among its values)
    "simple_python_5": [("solve_quadratic", {"a": 3, "b": -11, "c": -4})],
    # a value that is not one of the allowed ones
    "simple_python_7": [("calculate_circumference", {"radius": 4, "unit": "cm"})],
    # a number written as text: the wrong type
    "simple_python_25": [("calculate_final_velocity", {"height": "150"})],
    # three of the four calls the question asks for
    "parallel_33": [
        ("get_president_and_vp", {"year": 1980, "position": "president"}),
        ("get_president_and_vp", {"year": 2016, "position": "president"}),
        ("get_president_and_vp", {"year": 1975, "position": "vice president"}),
    ],
    # calls a tool that does not fit the question (irrelevance: no call is right)
    "irrelevance_9": [
        ("CalculateTax", {"annual_income": 1.0, "tax_rate": 3.0, "other_deductions": 0.0})
    ],
    "irrelevance_12": [("prime_numbers_in_range", {"start": 1, "end": 100})],
}
DECLINE = "None of the available tools can answer this."


def scripted_calls(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the scripted model writes for an item: the first allowed value of each
    parameter of the ground truth (leaving out the optional ones), unless it makes a mistake."""
    if item["id"] in SCRIPTED_MISTAKES:
        return SCRIPTED_MISTAKES[item["id"]]
    written = []
    for expected in item["ground_truth"]:
        ((name, parameters),) = expected.items()
        arguments = {
            key: next(value for value in allowed if value != "")
            for key, allowed in parameters.items()
            if any(value != "" for value in allowed)
        }
        written.append((name, arguments))
    return written


def bfcl_scenarios() -> list[Scenario]:
    """One request per BFCL item to the Moonshot platform (Kimi-K2), answered by the scripted
    model."""
    scenarios = []
    for item in bfcl_items():
        written = scripted_calls(item)
        turn = Turn(tool_calls=list(written)) if written else Turn(content=DECLINE)
        scenarios.append(
            Scenario(
                name=f"bfcl-{item['id']}",
                provider="kimi",
                engine="moonshot",
                messages=user(item["question"]),
                tools=bfcl_tools(item),
                turns=[turn],
            )
        )
    return scenarios


PROMPTS_FROM: dict[str, list[str]] = {
    # the pre-flight's own battery, which step 1 runs and step 3 reuses
    "verify.run(": [ONE_CITY, TWO_CITIES, NO_TOOL_NEEDED],
    # the questions of the BFCL slice, which step 4 reads
    '"bfcl" / "slice.json"': [item["question"] for item in bfcl_items()],
}
"""What lesson 12 sends that its cells do not spell out (tests/test_lesson_drift.py checks it)."""

SCENARIOS: list[Scenario] = [*battery_scenarios(), *f1_scenarios(), *bfcl_scenarios()]
