"""Self-checks of lesson 08: the references pass, plausible mistakes get a hint in both languages."""

from __future__ import annotations

import copy

import pytest
from verdicts import CORRECT, assert_not_yet_in_both, verdict_of

from helpers.exercises import n08
from helpers.replay.scenarios.n08_choosing_tools import DATED_TOOL, NAMED


def not_yet(capsys, check, *args):
    """The printed verdicts of a failing check; the Russian hint must be there."""
    out = verdict_of(capsys, check, *args)
    assert_not_yet_in_both(out)
    english, russian = out.strip().split("\n")
    assert russian.startswith("Пока нет:"), out
    return english


# --- exercise 1: exactly one call on vLLM ------------------------------------------------------


def test_a_named_function_is_exactly_one_call_on_vllm(capsys):
    assert verdict_of(capsys, n08.check_one_call, {"tool_choice": NAMED}).strip() == CORRECT
    capped = {"tool_choice": NAMED, "parallel_tool_calls": False}
    assert verdict_of(capsys, n08.check_one_call, capped).strip() == CORRECT


def test_required_with_parallel_calls_off_is_one_call_on_vllm(capsys):
    """Step 2's advice: a grammar forces a call, and vLLM keeps only the first one when
    parallel_tool_calls is false (`maybe_filter_parallel_tool_calls`)."""
    settings = {"tool_choice": "required", "parallel_tool_calls": False}
    assert verdict_of(capsys, n08.check_one_call, settings).strip() == CORRECT


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        ({"tool_choice": "auto"}, '"auto"'),  # the committed starter
        ({"tool_choice": "auto", "parallel_tool_calls": False}, "only cap"),
        ({}, '"auto"'),
        ({"tool_choice": "required"}, "at least one"),
        ({"tool_choice": "required", "parallel_tool_calls": "false"}, "takes a bool"),
        ({"tool_choice": "required", "parallel_tool_calls": 0}, "takes a bool"),
        ({"tool_choice": "none"}, "forbids"),
        ({"tool_choice": "get_weather"}, "is not a value"),
        ({"tool_choice": {"function": {"name": "get_weather"}}}, '"type": "function"'),
        ({"tool_choice": {"type": "function", "function": {"name": "weather"}}}, "'weather'"),
        ({"tool_choice": {"type": "function", "name": "get_weather"}}, "None"),
        ("required", "dict"),
    ],
)
def test_settings_that_do_not_force_one_call_get_a_hint(capsys, wrong, hint):
    assert hint in not_yet(capsys, n08.check_one_call, wrong)


# --- exercise 2: who refuses a named function, who ignores it ----------------------------------


def test_k26_refuses_and_k3_ignores_a_named_function(capsys):
    out = verdict_of(capsys, n08.check_named_choice, {"Moonshot K2.6"}, {"Moonshot K3"})
    assert out.strip() == CORRECT
    as_lists = verdict_of(capsys, n08.check_named_choice, ["Moonshot K2.6"], ("Moonshot K3",))
    assert as_lists.strip() == CORRECT


@pytest.mark.parametrize(
    ("refuses", "ignores", "hint"),
    [
        (set(), set(), "fill both sets"),  # the committed starter
        ({"Moonshot K2.6", "Moonshot K3"}, set(), "K3 does not refuse"),
        ({"Moonshot K3"}, {"Moonshot K2.6"}, "K3 does not refuse"),
        ({"Moonshot K2.6"}, {"Moonshot K3", "vLLM"}, "vLLM keeps"),
        ({"Moonshot K2.6", "vLLM"}, {"Moonshot K3"}, "vLLM keeps"),
        (set(), {"Moonshot K3"}, "K2.6 with thinking on"),
        ({"Moonshot K2.6"}, set(), "which one ignored"),
        ({"moonshot k2.6"}, {"Moonshot K3"}, "use the names"),
        ("Moonshot K2.6", {"Moonshot K3"}, "set of engine names"),
    ],
)
def test_wrong_predictions_get_a_hint(capsys, refuses, ignores, hint):
    assert hint in not_yet(capsys, n08.check_named_choice, refuses, ignores)


# --- exercise 3: a schema Moonshot accepts in strict mode --------------------------------------


def fixed_tool():
    tool = copy.deepcopy(DATED_TOOL)
    tool["function"]["parameters"]["properties"]["date"] = {
        "type": "string",
        "description": "The date as YYYY-MM-DD",
    }
    return tool


def test_a_described_date_passes_in_strict_mode(capsys):
    assert verdict_of(capsys, n08.check_strict_tool, fixed_tool()).strip() == CORRECT


def _with(change):
    tool = fixed_tool()
    change(tool)
    return tool


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (copy.deepcopy(DATED_TOOL), "format is not supported"),  # the committed starter
        (_with(lambda t: t["function"].update(strict=False)), "leave strict out"),
        (_with(lambda t: t["function"].update(strict="false")), "leave strict out"),
        (_with(lambda t: t.update(strict=False)), "leave strict out"),
        (
            _with(lambda t: t["function"]["parameters"]["properties"]["date"].update(title="Date")),
            "title is not supported",
        ),
        (_with(lambda t: t["function"]["parameters"]["properties"].pop("date")), "both parameters"),
        (
            _with(
                lambda t: t["function"]["parameters"]["properties"].update(date={"type": "string"})
            ),
            "description",
        ),
        (_with(lambda t: t["function"].update(name="weather")), "keep the tool's shape"),
        ([fixed_tool()], "keep the tool's shape"),
    ],
)
def test_schemas_moonshot_refuses_or_half_fixes_get_a_hint(capsys, wrong, hint):
    assert hint in not_yet(capsys, n08.check_strict_tool, wrong)


def test_the_check_does_not_change_the_students_tool(capsys):
    tool = copy.deepcopy(DATED_TOOL)
    not_yet(capsys, n08.check_strict_tool, tool)
    assert tool == DATED_TOOL
