"""The self-checks of lesson 06: a committed starter says "Not yet", a right answer "Correct!",
and the typical wrong answers get a hint in both languages."""

from __future__ import annotations

import copy
import json

import pytest
from scripts_support import lesson_code
from verdicts import CORRECT
from verdicts import assert_not_yet_in_both as assert_not_yet
from verdicts import verdict_on as verdict_of

from helpers.exercises import n06
from helpers.replay.scenarios import common
from helpers.replay.scenarios.n06_thinking_models import FOREIGN_ID, earlier_exchange

# --- exercise 1 ------------------------------------------------------------------------------------


def starter_for_history(message):
    return {
        "role": "assistant",
        "content": message.get("content"),
        "tool_calls": message.get("tool_calls"),
    }


def reference_for_history(message):
    kept = {"role": "assistant", "content": message.get("content")}
    for key in ("reasoning_content", "reasoning"):
        if message.get(key):
            kept[key] = message[key]
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    return kept


def always_reasoning_content(message):
    """Renames vLLM's `reasoning`: Moonshot passes, the vLLM answer loses its name."""
    kept = starter_for_history(message)
    text = message.get("reasoning_content") or message.get("reasoning")
    if text:
        kept["reasoning_content"] = text
    return kept


def whole_message(message):
    """Appends the server's message as is: nulls like `refusal` are harmless here."""
    return copy.deepcopy(message)


@pytest.mark.parametrize("wrong", [starter_for_history, always_reasoning_content])
def test_history_message_rejects_answers_that_lose_or_rename_reasoning(wrong, capsys) -> None:
    out = verdict_of(n06.check_history_message, wrong, capsys)
    assert_not_yet(out)
    assert "reasoning" in out.splitlines()[0]


@pytest.mark.parametrize("right", [reference_for_history, whole_message])
def test_history_message_accepts_right_answers(right, capsys) -> None:
    assert verdict_of(n06.check_history_message, right, capsys) == CORRECT + "\n"


def test_history_message_names_a_crash(capsys) -> None:
    out = verdict_of(n06.check_history_message, lambda message: message["missing"], capsys)
    assert_not_yet(out)
    assert "KeyError" in out


# --- exercise 2 ------------------------------------------------------------------------------------


def reference_normalize(messages):
    renamed, k, result = {}, 0, []
    for message in copy.deepcopy(messages):
        for tool_call in message.get("tool_calls") or []:
            new_id = f"functions.{tool_call['function']['name']}:{k}"
            renamed[tool_call["id"]], tool_call["id"], k = new_id, new_id, k + 1
        if message["role"] == "tool":
            message["tool_call_id"] = renamed.get(message["tool_call_id"], message["tool_call_id"])
        result.append(message)
    return result


def in_place(messages):
    """Right ids, but the caller's history is changed."""
    for message in messages:
        for k, tool_call in enumerate(message.get("tool_calls") or []):
            tool_call["id"] = f"functions.get_weather:{k}"
    return messages


def calls_only(messages):
    """Renames the calls and forgets the tool_call_id of the results."""
    result, k = copy.deepcopy(messages), 0
    for message in result:
        for tool_call in message.get("tool_calls") or []:
            tool_call["id"] = f"functions.{tool_call['function']['name']}:{k}"
            k += 1
    return result


def counter_per_message(messages):
    """Restarts the counter in every message (the guide-era Moonshot habit)."""
    renamed, result = {}, copy.deepcopy(messages)
    for message in result:
        for k, tool_call in enumerate(message.get("tool_calls") or []):
            new_id = f"functions.{tool_call['function']['name']}:{k}"
            renamed[tool_call["id"]], tool_call["id"] = new_id, new_id
        if message["role"] == "tool":
            message["tool_call_id"] = renamed.get(message["tool_call_id"])
    return result


@pytest.mark.parametrize(
    "wrong",
    [lambda m: list(m), in_place, calls_only, counter_per_message],
    ids=["starter", "in-place", "calls-only", "counter-per-message"],
)
def test_normalize_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n06.check_normalize, wrong, capsys))


def test_normalize_accepts_the_reference(capsys) -> None:
    assert verdict_of(n06.check_normalize, reference_normalize, capsys) == CORRECT + "\n"


def test_id_histories_hold_what_the_exercise_claims() -> None:
    histories = n06.id_histories()
    ids = [c["id"] for m in histories["OpenAI-style ids"] for c in m.get("tool_calls") or []]
    assert all(i.startswith("call_") for i in ids)
    parallel = histories["two calls in one message"]
    assert len(parallel[1]["tool_calls"]) == 2
    assert [m["tool_call_id"] for m in parallel[2:4]] == ["get_weather:1", "get_weather:0"]


# --- exercise 3 ------------------------------------------------------------------------------------


def reference_reasoning_of(chunks):
    name, text = None, ""
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        for key in ("reasoning_content", "reasoning"):
            piece = getattr(delta, key, None)
            if piece:
                name, text = name or key, text + piece
    return name, text


def moonshot_only(chunks):
    """Knows only Moonshot's name."""
    text = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    return ("reasoning_content", text) if text else (None, "")


def unguarded(chunks):
    """Reads chunk.choices[0] on the usage chunk too."""
    name, text = None, ""
    for chunk in chunks:
        delta = chunk.choices[0].delta
        for key in ("reasoning_content", "reasoning"):
            if getattr(delta, key, None):
                name, text = name or key, text + getattr(delta, key)
    return name, text


@pytest.mark.parametrize("wrong", [lambda c: (None, ""), moonshot_only, unguarded])
def test_reasoning_of_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n06.check_reasoning_of, wrong, capsys))


def test_reasoning_of_accepts_the_reference(capsys) -> None:
    assert verdict_of(n06.check_reasoning_of, reference_reasoning_of, capsys) == CORRECT + "\n"


# --- the lesson's own code agrees with the checks and the scenarios ------------------------------


def test_lesson_tool_prompts_and_history_match_the_scenarios() -> None:
    from helpers import ToolRegistry

    cells = lesson_code("06_thinking_models")
    namespace: dict = {"ToolRegistry": ToolRegistry}
    for prefix in ("WEATHER = ", "tools = ["):
        source = next(cell for cell in cells if cell.startswith(prefix))
        exec(compile(source, "<06_thinking_models>", "exec"), namespace)
    assert namespace["WEATHER"] == common.WEATHER
    assert namespace["tools"] == common.WEATHER_TOOLS
    code = "\n".join(cells)
    for prompt in (common.ONE_AT_A_TIME_PROMPT, common.WEATHER_PROMPT):
        assert json.dumps(prompt) in code
    assert f'foreign_id = "{FOREIGN_ID}"' in code
    # The drift history the lesson builds is the one the cassette recorded.
    call_cell = next(cell for cell in cells if cell.startswith("tokenizer = load_tokenizer"))
    history_cell = next(cell for cell in cells if cell.startswith("foreign_id = "))
    scope: dict = {"load_tokenizer": lambda name: None}
    exec(compile(call_cell.split("prompt = ")[0], "<06>", "exec"), scope)
    exec(compile(history_cell, "<06>", "exec"), scope)
    assert scope["history"] == earlier_exchange(FOREIGN_ID)


def test_lesson_solutions_are_the_ones_tested() -> None:
    code = "\n".join(lesson_code("06_thinking_models"))
    for text in (
        'renamed[tool_call["id"]], tool_call["id"], k = new_id, new_id, k + 1',
        "name, text = name or key, text + piece",
        "kept[key] = message[key]",
    ):
        assert text in code
