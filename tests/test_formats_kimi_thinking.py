"""Kimi thinking models in raw text: `parse_kimi` and `KimiStreamParser` split `<think>` off,
end an unclosed block at the tool markers, keep every call, and agree with each other."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.formats import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    SECTION_BEGIN,
    SECTION_END,
    KimiStreamParser,
    ParseResult,
    parse_kimi,
)
from helpers.i18n import reset_language
from tests.formats_support import FAST, call, split_at, stream

CALL_TEXT = (
    f'{SECTION_BEGIN}{CALL_BEGIN}functions.get_weather:0{ARGUMENT_BEGIN}{{"city": "Beijing"}}'
    f"{CALL_END}{SECTION_END}"
)
WEATHER = call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')


@pytest.fixture(autouse=True)
def english() -> None:
    """Error texts in English, whatever another test left set."""
    reset_language()


def test_think_block_then_content_then_calls() -> None:
    text = f"<think>The user asks about Beijing.</think>Let me check.{CALL_TEXT}<|im_end|>"
    result = parse_kimi(text.removesuffix("<|im_end|>"))
    assert result == ParseResult("Let me check.", [WEATHER], [], "The user asks about Beijing.")


def test_close_without_open_means_the_prompt_opened_it() -> None:
    result = parse_kimi(f"The prompt opened the block.</think>{CALL_TEXT}")
    assert result.reasoning == "The prompt opened the block."
    assert (result.content, result.tool_calls, result.errors) == ("", [WEATHER], [])


def test_section_begin_ends_unclosed_reasoning_and_the_call_is_read() -> None:
    result = parse_kimi(f"<think>Straight to the tool {CALL_TEXT}")
    assert result == ParseResult("", [WEATHER], [], "Straight to the tool")


def test_calls_inside_reasoning_are_returned_and_the_late_close_stays_visible() -> None:
    # As a provider once passed K2-Thinking output on: the section inside the think block. The
    # section ends the reasoning (vLLM's kimi_k2 reasoning parser); reasoning is a prefix only,
    # so the late </think> is visible text, not cut out.
    text = f"<think>I will look it up. {CALL_TEXT} </think>"
    result = parse_kimi(text)
    assert result.tool_calls == [WEATHER]
    assert result.reasoning == "I will look it up."
    assert (result.content, result.errors) == ("</think>", [])


def test_a_call_begun_inside_reasoning_without_a_section_is_kept_and_reported() -> None:
    text = (
        f'<think>Calling {CALL_BEGIN}functions.get_weather:0{ARGUMENT_BEGIN}{{"city": "Beijing"}}'
        f"{CALL_END}</think>Done."
    )
    result = parse_kimi(text)
    assert result.tool_calls == [WEATHER]
    assert result.reasoning == "Calling"
    # Each oddity is reported: the call outside a section, the text after it (the late
    # </think> is part of that text: reasoning ended at the call).
    assert result.errors[:2] == [
        f"{CALL_BEGIN} outside a tool-calls section: read as a call anyway",
        "text between tool calls ignored: '</think>Done.'",
    ]


def test_reasoning_cut_off_is_kept_and_reported() -> None:
    result = parse_kimi("<think>Still thinking when max_tokens hit")
    assert result.reasoning == "Still thinking when max_tokens hit"
    assert result.tool_calls == [] and result.content == ""
    assert result.errors == [
        "reasoning has no </think> at the end of the text (output cut off, e.g. by max_tokens?)"
    ]


def test_reasoning_open_says_where_the_output_starts() -> None:
    text = f"Looks up Beijing.{CALL_TEXT}"
    assert parse_kimi(text, reasoning_open=True).reasoning == "Looks up Beijing."
    assert parse_kimi(text).content == "Looks up Beijing."  # no tag: taken as visible text
    assert parse_kimi(text, reasoning_open=False).content == "Looks up Beijing."


def test_output_without_think_tags_parses_as_before() -> None:
    text = f"Let me check.{CALL_TEXT}"
    assert parse_kimi(text) == ParseResult("Let me check.", [WEATHER], [], "")


# --------------------------------------------------------------------------------- streaming


def test_stream_emits_reasoning_deltas_first_and_eagerly() -> None:
    parser = KimiStreamParser()
    assert parser.feed("<think>The user ") == [{"reasoning_content": "The user"}]
    assert parser.feed("asks.</think>Let") == [
        {"reasoning_content": " asks."},
        {"content": "Let"},
    ]
    deltas = parser.feed(f" me check.{CALL_TEXT}") + parser.close()
    assert deltas[0] == {"content": " me check."}
    assert deltas[1]["tool_calls"][0]["id"] == "functions.get_weather:0"
    assert parser.result == parse_kimi(f"<think>The user asks.</think>Let me check.{CALL_TEXT}")


def test_known_open_prompt_streams_reasoning_at_once() -> None:
    parser = KimiStreamParser(reasoning_open=True)
    assert parser.feed("Beijing, then") == [{"reasoning_content": "Beijing, then"}]


def test_unknown_start_waits_for_the_first_tag_then_releases_everything() -> None:
    parser = KimiStreamParser()
    assert parser.feed("It might be reasoning") == []
    assert parser.feed(f"</think>{SECTION_BEGIN}") == [
        {"reasoning_content": "It might be reasoning"}
    ]


def test_accumulated_stream_gives_reasoning_content_and_calls() -> None:
    text = f"<think>Check Beijing.</think>{CALL_TEXT}"
    _, accumulator, _ = stream(
        KimiStreamParser(), [text[i : i + 4] for i in range(0, len(text), 4)]
    )
    assert accumulator.reasoning == "Check Beijing."
    assert accumulator.tool_calls == [WEATHER]
    message = accumulator.assistant_message()
    assert message["reasoning_content"] == "Check Beijing."


# Raw text from think tags, Kimi markers, whole calls and ordinary text: every state.
PIECES = st.one_of(
    st.sampled_from(["<think>", "</think>", "<thi", "</", "nk>"]),
    st.sampled_from([SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END, CALL_TEXT]),
    st.sampled_from(["functions.f:1", '{"a": 1}', " ", "\n", "why ", "ok"]),
    st.text(max_size=5),
)
SOUP = st.lists(PIECES, max_size=25).map("".join)


@FAST
@given(text=SOUP, data=st.data(), reasoning_open=st.sampled_from([None, True, False]))
def test_stream_equals_batch_for_reasoning_and_calls_under_any_chunking(
    text: str, data: st.DataObject, reasoning_open: bool | None
) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=15))
    parser, accumulator, deltas = stream(KimiStreamParser(reasoning_open), split_at(text, cuts))
    expected = parse_kimi(text, reasoning_open)
    assert parser.result == expected
    assert accumulator.reasoning == expected.reasoning
    assert accumulator.content == expected.content
    assert accumulator.tool_calls == expected.tool_calls
    kinds = [key for delta in deltas for key in delta]
    assert set(kinds) <= {"reasoning_content", "content", "tool_calls"}


@FAST
@given(text=SOUP, reasoning_open=st.sampled_from([None, True, False]))
def test_one_character_deltas_equal_batch(text: str, reasoning_open: bool | None) -> None:
    parser, _, _ = stream(KimiStreamParser(reasoning_open), list(text))
    assert parser.result == parse_kimi(text, reasoning_open)


@FAST
@given(text=SOUP)
def test_no_call_marker_is_lost(text: str) -> None:
    # Every <|tool_call_begin|> becomes a call, inside reasoning or not.
    assert len(parse_kimi(text).tool_calls) == text.count(CALL_BEGIN)


# -------------------------------------------------- what vLLM's kimi_k2 parser also accepts


def test_the_singular_section_markers_are_read_too() -> None:
    text = (
        "Let me check.<|tool_call_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_section_end|>'
    )
    assert parse_kimi(text) == ParseResult("Let me check.", [WEATHER], [], "")


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
FILE_TOOL = {
    "type": "function",
    "function": {
        "name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def test_a_bare_numeric_id_gets_its_name_from_the_tools() -> None:
    text = (
        f"{SECTION_BEGIN}<|tool_call_begin|>0<|tool_call_argument_begin|>"
        '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    result = parse_kimi(text, tools=[FILE_TOOL, WEATHER_TOOL])
    expected = {
        "id": "0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
    }
    assert (result.tool_calls, result.errors) == ([expected], [])
    # Streamed, the name is known only at the call's end: header and arguments come together.
    parser, accumulator, deltas = stream(
        KimiStreamParser(tools=[FILE_TOOL, WEATHER_TOOL]),
        [text[i : i + 4] for i in range(0, len(text), 4)],
    )
    assert accumulator.tool_calls == [expected] and parser.result == result
    # Without tools there is nothing to infer from: the id is kept and the problem reported.
    bare = parse_kimi(text)
    assert bare.tool_calls[0]["id"] == "0" and len(bare.errors) == 1


def test_a_bare_id_that_fits_no_single_tool_is_kept_with_an_error() -> None:
    text = (
        f"{SECTION_BEGIN}<|tool_call_begin|>0<|tool_call_argument_begin|>"
        '{"nothing": 1}<|tool_call_end|><|tool_calls_section_end|>'
    )
    result = parse_kimi(text, tools=[FILE_TOOL, WEATHER_TOOL])
    assert result.tool_calls[0]["function"] == {"name": "", "arguments": '{"nothing": 1}'}
    assert len(result.errors) == 1 and "bare id" in result.errors[0]


@FAST
@given(
    bare=st.lists(st.booleans(), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 600), max_size=10),
)
def test_bare_ids_stream_like_the_whole_text_under_any_split(bare, cuts) -> None:
    calls = "".join(
        f"<|tool_call_begin|>{index if is_bare else f'functions.get_weather:{index}'}"
        f'<|tool_call_argument_begin|>{{"city": "C{index}"}}<|tool_call_end|>'
        for index, is_bare in enumerate(bare)
    )
    text = f"Checking.{SECTION_BEGIN}{calls}<|tool_calls_section_end|>"
    tools = [FILE_TOOL, WEATHER_TOOL]
    whole = parse_kimi(text, tools=tools)
    assert [c["function"]["name"] for c in whole.tool_calls] == ["get_weather"] * len(bare)
    parser, accumulator, _ = stream(
        KimiStreamParser(tools=tools), split_at(text, [c for c in cuts if c <= len(text)])
    )
    assert parser.result == whole
    assert accumulator.tool_calls == whole.tool_calls
