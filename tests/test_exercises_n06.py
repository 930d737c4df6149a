"""The self-checks of lesson 06: a committed starter says "Not yet", a right answer "Correct!",
and the typical wrong answers get a hint in both languages."""

from __future__ import annotations

import copy
import json

import pytest
from exercise_answers import (
    normalize_calls_only,
    normalize_counter_per_message,
    normalize_in_place,
    reasoning_moonshot_only,
    reasoning_unguarded,
    solution,
)
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


reference_for_history = solution("06", "for_history")


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


reference_normalize = solution("06", "normalize_ids")


@pytest.mark.parametrize(
    "wrong",
    [lambda m: list(m), normalize_in_place, normalize_calls_only, normalize_counter_per_message],
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


reference_reasoning_of = solution("06", "reasoning_of")


@pytest.mark.parametrize(
    "wrong", [lambda c: (None, ""), reasoning_moonshot_only, reasoning_unguarded]
)
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
