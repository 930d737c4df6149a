"""Self-checks of lesson 12: the reference passes, plausible wrong answers are rejected with a hint
that names the failing input, and odd values never crash a check."""

from __future__ import annotations

import json

import pytest
from exercise_answers import solution
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers.arguments import validate_arguments
from helpers.exercises import n12
from helpers.tools import parse_arguments

LESSON = "12_measuring"


def test_the_reference_solutions_pass(capsys):
    f1 = solution(LESSON, "precision_recall_f1")
    assert verdict_of(capsys, n12.check_f1, f1).strip() == CORRECT
    accuracy = solution(LESSON, "schema_accuracy")
    assert verdict_of(capsys, n12.check_schema_accuracy, accuracy).strip() == CORRECT


# --- exercise 1: wrong answers a student writes -----------------------------------------------


def counts(expected, called):
    tp = sum(bool(e) and bool(c) for e, c in zip(expected, called, strict=True))
    fp = sum(bool(c) and not e for e, c in zip(expected, called, strict=True))
    fn = sum(bool(e) and not c for e, c in zip(expected, called, strict=True))
    return tp, fp, fn


def divides_by_zero(expected, called):
    tp, fp, fn = counts(expected, called)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return precision, recall, 2 * precision * recall / (precision + recall)


def swapped(expected, called):
    tp, fp, fn = counts(expected, called)
    precision = tp / (tp + fn) if tp + fn else 0.0
    recall = tp / (tp + fp) if tp + fp else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def arithmetic_mean(expected, called):
    tp, fp, fn = counts(expected, called)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, (precision + recall) / 2


def accuracy_as_precision(expected, called):
    right = sum(bool(e) == bool(c) for e, c in zip(expected, called, strict=True))
    precision = right / len(expected) if expected else 0.0
    tp, _, fn = counts(expected, called)
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def perfect_when_nothing_to_find(expected, called):
    tp, fp, fn = counts(expected, called)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def hard_coded(expected, called):
    return (1.0, 1.0, 1.0) if expected == called else (0.0, 0.0, 0.0)


def returns_a_dict(expected, called):
    return {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def rounded_to(digits):
    def precision_recall_f1(expected, called):
        return tuple(round(value, digits) for value in n12.reference_f1(expected, called))

    precision_recall_f1.__name__ = f"rounded_to_{digits}"
    return precision_recall_f1


def counts_agreement(expected, called):
    """Counts agreement (true negatives too) as right calls."""
    pairs = list(zip(expected, called, strict=True))
    right = sum(1 for e, c in pairs if bool(e) == bool(c))
    extra = sum(1 for e, c in pairs if c and not e)
    missed = sum(1 for e, c in pairs if e and not c)
    precision = right / (right + extra) if right + extra else 0.0
    recall = right / (right + missed) if right + missed else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def percentages(expected, called):
    return tuple(100 * value for value in n12.reference_f1(expected, called))


F1_WRONG = [
    (divides_by_zero, "ZeroDivisionError", "ZeroDivisionError", "'stop'"),
    (swapped, "swapped", "перепутаны", "one extra call"),
    (arithmetic_mean, "harmonic mean", "среднее гармоническое", "one extra call"),
    (accuracy_as_precision, "denominator is zero", "знаменатель точности", "'stop'"),
    (perfect_when_nothing_to_find, "denominator is zero", "знаменатель точности", "'stop'"),
    (hard_coded, "one extra call", "один лишний вызов", "one extra call"),
    (returns_a_dict, "tuple of three", "кортеж из трёх", "the lesson's vLLM column"),
    (percentages, "not a percentage", "а не проценты", "the lesson's vLLM column"),
    # a fresh student's (checks, 2026-12-02): both were answered with another rule's hint before
    (rounded_to(3), "not rounded", "без округления", "one extra call"),
    (
        counts_agreement,
        "denominator is zero",
        "знаменатель точности равен нулю",
        "'stop'",
    ),
]


@pytest.mark.parametrize(
    ("answer", "en", "ru", "case"), F1_WRONG, ids=[w[0].__name__ for w in F1_WRONG]
)
def test_f1_wrong_answers_get_a_hint_naming_the_case(capsys, answer, en, ru, case):
    out = verdict_of(capsys, n12.check_f1, answer)
    assert out.startswith(NOT_YET), out
    assert en in out and ru in out, out
    assert case in out, out


# --- exercise 2 ---------------------------------------------------------------------------------


def schemas_of(tools):
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def crashes_on_bad_json(tool_calls, tools):
    schemas = schemas_of(tools)
    fits = sum(
        not validate_arguments(
            json.loads(c["function"]["arguments"]), schemas[c["function"]["name"]]
        )
        for c in tool_calls
    )
    return fits / len(tool_calls) if tool_calls else 0.0


def unknown_tool_fits(tool_calls, tools):
    schemas = schemas_of(tools)
    fits = 0
    for call in tool_calls:
        arguments, problem = parse_arguments(call["function"]["arguments"])
        schema = schemas.get(call["function"]["name"])
        if not problem and (schema is None or not validate_arguments(arguments, schema)):
            fits += 1
    return fits / len(tool_calls) if tool_calls else 0.0


def json_only(tool_calls, tools):
    fits = sum(parse_arguments(c["function"]["arguments"])[1] is None for c in tool_calls)
    return fits / len(tool_calls) if tool_calls else 0.0


def as_percent(tool_calls, tools):
    return 100 * n12.reference_schema_accuracy(tool_calls, tools)


def divides_by_tools(tool_calls, tools):
    schemas = schemas_of(tools)
    fits = 0
    for call in tool_calls:
        arguments, problem = parse_arguments(call["function"]["arguments"])
        name = call["function"]["name"]
        if not problem and name in schemas and not validate_arguments(arguments, schemas[name]):
            fits += 1
    return fits / len(tools) if tools else 0.0


def reads_with_json_loads(tool_calls, tools):
    """json.loads instead of parse_arguments: empty text (a call without arguments) fails."""
    schemas = schemas_of(tools)
    fits = 0
    for call in tool_calls:
        try:
            arguments = json.loads(call["function"]["arguments"])
        except json.JSONDecodeError:
            continue
        name = call["function"]["name"]
        if name in schemas and not validate_arguments(arguments, schemas[name]):
            fits += 1
    return fits / len(tool_calls) if tool_calls else 0.0


def share_rounded(tool_calls, tools):
    return round(n12.reference_schema_accuracy(tool_calls, tools), 2)


def empty_is_perfect(tool_calls, tools):
    return n12.reference_schema_accuracy(tool_calls, tools) if tool_calls else 1.0


def counts_valid_calls(tool_calls, tools):
    schemas = schemas_of(tools)
    return sum(
        1
        for c in tool_calls
        if c["function"]["name"] in schemas
        and not parse_arguments(c["function"]["arguments"])[1]
        and not validate_arguments(
            parse_arguments(c["function"]["arguments"])[0], schemas[c["function"]["name"]]
        )
    )


def reads_the_call_flat(tool_calls, tools):
    """Reads call["name"] and call["arguments"]: the name and arguments sit in call["function"]."""
    schemas = schemas_of(tools)
    fits = 0
    for call in tool_calls:
        arguments, problem = parse_arguments(call["arguments"])
        if not problem and call["name"] in schemas:
            fits += not validate_arguments(arguments, schemas[call["name"]])
    return fits / len(tool_calls) if tool_calls else 0.0


def floor_divides(tool_calls, tools):
    """// instead of /: a share below 1 becomes 0."""
    schemas = schemas_of(tools)
    fits = 0
    for call in tool_calls:
        arguments, problem = parse_arguments(call["function"]["arguments"])
        name = call["function"]["name"]
        if not problem and name in schemas and not validate_arguments(arguments, schemas[name]):
            fits += 1
    return fits // len(tool_calls) if tool_calls else 0


SCHEMA_WRONG = [
    (crashes_on_bad_json, "JSONDecodeError", "JSONDecodeError", "arguments that are not JSON"),
    (unknown_tool_fits, "does not fit", "не подходит", "a tool that is not in tools"),
    (json_only, "does not fit", "не подходит", "a tool that is not in tools"),
    (as_percent, "not a percentage", "а не проценты", "a valid call"),
    (divides_by_tools, "This call fits", "подходит под схему", "a valid call"),
    (empty_is_perfect, "no calls", "вызовов нет", "no calls"),
    (counts_valid_calls, "number of calls", "число вызовов", "all the calls above together"),
    # a fresh student's (checks, 2026-12-02): json.loads passed every case before
    (
        reads_with_json_loads,
        "This call fits",
        "подходит под схему",
        "empty arguments text for a tool without parameters",
    ),
    (share_rounded, "not rounded", "без округления", "all the calls above together"),
    # a second pass (h-checks): both got a hint about another mistake before
    (reads_the_call_flat, 'inside call["function"]', 'внутри call["function"]', "a valid call"),
    (floor_divides, "divide with /", "делите через /", "all the calls above together"),
]


@pytest.mark.parametrize(
    ("answer", "en", "ru", "case"), SCHEMA_WRONG, ids=[w[0].__name__ for w in SCHEMA_WRONG]
)
def test_schema_accuracy_wrong_answers_get_a_hint_naming_the_case(capsys, answer, en, ru, case):
    out = verdict_of(capsys, n12.check_schema_accuracy, answer)
    assert out.startswith(NOT_YET), out
    assert en in out and ru in out, out
    assert case in out, out


# --- odd values never crash a check ---------------------------------------------------------------


class Liar:
    def __eq__(self, other):
        return True

    def __float__(self):
        raise RuntimeError("no")

    def __len__(self):
        return 3

    def __iter__(self):
        raise RuntimeError("no")


ODD = [None, 1, "x", [], {}, Liar(), (x for x in range(3)), "x" * 100_000]


@pytest.mark.parametrize("check", [n12.check_f1, n12.check_schema_accuracy])
@pytest.mark.parametrize("value", ODD, ids=lambda v: type(v).__name__)
def test_odd_values_and_odd_results_get_not_yet(capsys, check, value):
    assert verdict_of(capsys, check, value).startswith(NOT_YET)
    assert verdict_of(capsys, check, lambda *args: value).startswith(NOT_YET)


def test_the_batteries_are_large_and_deterministic():
    assert len(n12.f1_cases()) >= 20 and n12.f1_cases() == n12.f1_cases()
    assert len(n12.schema_cases()) >= 20 and n12.schema_cases() == n12.schema_cases()
