"""The self-checks of lessons 03-05: a committed starter says "Not yet", a right answer "Correct!"."""

from __future__ import annotations

import json
import re

import pytest
from exercise_answers import (
    glue_to_latest,
    guide_assemble,
    no_function_guard,
    repair_after,
    repair_in_place,
    repair_without_calls,
    solution,
)
from verdicts import CORRECT
from verdicts import assert_not_yet_in_both as assert_not_yet
from verdicts import verdict_on as verdict_of

from helpers import guide_extract_tool_call_info
from helpers.exercises import n03, n04, n05

# --- lesson 03 -----------------------------------------------------------------------------------


def starter_assemble(chunks):
    return []


reference_assemble = solution("03", "assemble_tool_calls")


@pytest.mark.parametrize("wrong", [starter_assemble, guide_assemble, glue_to_latest])
def test_assemble_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n03.check_assemble, wrong, capsys))


def test_assemble_accepts_the_reference(capsys) -> None:
    assert verdict_of(n03.check_assemble, reference_assemble, capsys) == CORRECT + "\n"


def test_guide_assemble_fails_on_the_usage_chunk_with_its_name(capsys) -> None:
    out = verdict_of(n03.check_assemble, guide_assemble, capsys)
    assert "IndexError" in out or "AttributeError" in out or "expected" in out


def test_sample_streams_exercise_what_they_claim() -> None:
    streams = n03.sample_streams()
    interleaved = streams["interleaved calls with a usage chunk"]
    assert interleaved[-1].choices == [] and interleaved[-1].usage.total_tokens == 110
    calls = reference_assemble(interleaved)
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"city": "Shanghai"},
        {"city": "Moscow"},
    ]
    no_function = streams["a delta without function"]
    assert any(
        piece.function is None
        for chunk in no_function
        for piece in (chunk.choices[0].delta.tool_calls or [])
    )


repair_reference = solution("03", "repair")


@pytest.mark.parametrize(
    "wrong",
    [lambda m, c, t: list(m), repair_in_place, repair_after, repair_without_calls],
    ids=["starter", "in-place", "after", "no-calls"],
)
def test_history_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n03.check_history, wrong, capsys))


def test_history_accepts_the_reference(capsys) -> None:
    assert verdict_of(n03.check_history, repair_reference, capsys) == CORRECT + "\n"


def test_usage(capsys) -> None:
    assert_not_yet(verdict_of(n03.check_usage, lambda chunks: 0, capsys))
    assert_not_yet(
        verdict_of(n03.check_usage, lambda chunks: chunks[-1].usage.total_tokens, capsys)
    )

    reference = solution("03", "total_tokens")
    assert verdict_of(n03.check_usage, reference, capsys) == CORRECT + "\n"


# --- lesson 04 -----------------------------------------------------------------------------------


name_reference = solution("04", "name_from_id")


@pytest.mark.parametrize(
    "wrong",
    [
        lambda c: c.split(".")[1].split(":")[0],  # the guide's
        lambda c: c.split(".")[-1].split(":")[0],  # loses the part before a dot in the name
        lambda c: c.removeprefix("functions.").split(":")[0].replace("-", "_"),
    ],
    ids=["guide", "last-dot", "dash-replaced"],
)
def test_name_from_id_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n04.check_name_from_id, wrong, capsys))


def test_name_from_id_accepts_the_reference(capsys) -> None:
    assert verdict_of(n04.check_name_from_id, name_reference, capsys) == CORRECT + "\n"


extract_reference = solution("04", "extract_tool_calls")


def test_extract_rejects_the_guides_extractor(capsys) -> None:
    assert_not_yet(verdict_of(n04.check_extract, guide_extract_tool_call_info, capsys))


def test_extract_accepts_the_reference(capsys) -> None:
    assert verdict_of(n04.check_extract, extract_reference, capsys) == CORRECT + "\n"


def test_extract_cases_include_every_defect_of_the_guide() -> None:
    cases = n04.extract_cases()
    with pytest.raises(IndexError):
        guide_extract_tool_call_info(cases["cut off by max_tokens"])
    assert len(guide_extract_tool_call_info(cases["second section"])) == 1
    assert guide_extract_tool_call_info(cases["'-' in the name"]) == []


# --- lesson 05 -----------------------------------------------------------------------------------


hermes_reference = solution("05", "hermes_calls")


def test_hermes_calls(capsys) -> None:
    assert_not_yet(verdict_of(n05.check_hermes_calls, lambda text: [], capsys))
    first_only = lambda text: hermes_reference(text)[:1]  # noqa: E731
    assert_not_yet(verdict_of(n05.check_hermes_calls, first_only, capsys))
    assert verdict_of(n05.check_hermes_calls, hermes_reference, capsys) == CORRECT + "\n"


unparsed_reference = solution("05", "has_unparsed_calls")


@pytest.mark.parametrize(
    "wrong",
    [
        lambda m: False,
        lambda m: "<tool_call>" in (m.get("content") or ""),  # misses Kimi-K2
        lambda m: not m.get("tool_calls"),  # a plain answer is not a missing parser
    ],
    ids=["starter", "qwen-only", "no-calls"],
)
def test_unparsed_rejects_wrong_answers(wrong, capsys) -> None:
    assert_not_yet(verdict_of(n05.check_unparsed, wrong, capsys))


def test_unparsed_accepts_the_reference(capsys) -> None:
    assert verdict_of(n05.check_unparsed, unparsed_reference, capsys) == CORRECT + "\n"


def test_a_crashing_answer_is_a_hint_not_a_crash(capsys) -> None:
    out = verdict_of(n05.check_unparsed, lambda m: m["missing"], capsys)
    assert_not_yet(out)
    assert "KeyError" in out


# --- issue 11: a learner's exception becomes a reason, wrong answers are rejected -----------------


def no_usage_guard(chunks):
    """Guards `function` but not the usage chunk's empty `choices`."""
    tool_calls = []
    for chunk in chunks:
        for piece in chunk.choices[0].delta.tool_calls or []:
            while len(tool_calls) <= piece.index:
                tool_calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            tool_calls[piece.index]["id"] += piece.id or ""
            if piece.function:
                tool_calls[piece.index]["function"]["arguments"] += piece.function.arguments or ""
                tool_calls[piece.index]["function"]["name"] += piece.function.name or ""
    return tool_calls


def test_assemble_without_a_usage_guard_is_told_about_choices(capsys) -> None:
    out = verdict_of(n03.check_assemble, no_usage_guard, capsys)
    assert_not_yet(out)
    assert "`IndexError: list index out of range`" in out and "choices: []" in out


def test_assemble_without_a_function_guard_is_told_about_function(capsys) -> None:
    out = verdict_of(n03.check_assemble, no_function_guard, capsys)
    assert_not_yet(out)
    assert "AttributeError" in out and "piece.function" in out


def test_usage_from_the_last_chunk_is_told_why(capsys) -> None:
    out = verdict_of(n03.check_usage, lambda chunks: chunks[-1].usage.total_tokens, capsys)
    assert_not_yet(out)
    assert "AttributeError" in out and "usage" in out and "None" in out and "chunks[-1]" in out


def test_history_quotes_the_server_in_its_own_words(capsys) -> None:
    out = verdict_of(n03.check_history, lambda messages, content, calls: list(messages), capsys)
    assert_not_yet(out)
    assert "«Invalid parameter: messages with role 'tool'" in out


def test_name_from_id_crash_names_the_id(capsys) -> None:
    out = verdict_of(n04.check_name_from_id, lambda c: c.split(".")[1].split(":")[0], capsys)
    assert "get_weather:0" in out and "IndexError" in out


def test_extract_crash_names_the_variant_in_both_languages(capsys) -> None:
    def crashes_when_cut(text):
        if "<|tool_calls_section_begin|>" in text and "<|tool_calls_section_end|>" not in text:
            return guide_extract_tool_call_info(text)  # IndexError
        return extract_reference(text)

    out = verdict_of(n04.check_extract, crashes_when_cut, capsys)
    en, ru = out.splitlines()
    assert "IndexError" in en and "cut off by max_tokens" in en
    assert "обрез" in ru


def test_hermes_greedy_regex_is_told_why(capsys) -> None:
    def greedy(text):
        blocks = re.findall(r"<tool_call>(.*)</tool_call>", text, re.DOTALL)
        return [(json.loads(b)["name"], json.loads(b)["arguments"]) for b in blocks]

    out = verdict_of(n05.check_hermes_calls, greedy, capsys)
    assert_not_yet(out)
    assert "JSONDecodeError" in out and ".*?" in out


def test_unparsed_must_look_at_tool_calls(capsys) -> None:
    def markers_only(message):
        content = message.get("content") or ""
        return "<|tool_call_begin|>" in content or "<tool_call>" in content

    assert_not_yet(verdict_of(n05.check_unparsed, markers_only, capsys))


def test_unparsed_content_none_is_told_why(capsys) -> None:
    def no_none_guard(message):
        content = message["content"]
        markup = "<|tool_call_begin|>" in content or "<tool_call>" in content
        return markup and not message.get("tool_calls")

    out = verdict_of(n05.check_unparsed, no_none_guard, capsys)
    assert_not_yet(out)
    assert "TypeError" in out and 'message.get("content") or ""' in out
