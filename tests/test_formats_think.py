"""The shared `<think>` handling: batch `split_reasoning`, incremental `ReasoningSplitter`, and the
`StreamParser` plumbing that turns reasoning into `{"reasoning_content": ...}` deltas."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.formats import SECTION_BEGIN, KimiStreamParser, parse_kimi
from helpers.formats.think import (
    THINK_CLOSE,
    THINK_OPEN,
    ReasoningSplitter,
    split_reasoning,
)
from helpers.i18n import reset_language, set_language
from tests.formats_support import FAST, split_at, stream

ENDS = ("<tool_call>",)
KIMI_CALL = (
    f"{SECTION_BEGIN}<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
)


def split_streaming(chunks: list[str], ends=ENDS, reasoning_open=None) -> tuple[str, str, list]:
    """Run the incremental splitter over chunks; return (raw reasoning, visible, errors)."""
    splitter = ReasoningSplitter(ends, reasoning_open)
    pieces = []
    for chunk in chunks:
        pieces += splitter.feed(chunk)
    pieces += splitter.close()
    reasoning = "".join(text for is_reasoning, text in pieces if is_reasoning)
    visible = "".join(text for is_reasoning, text in pieces if not is_reasoning)
    return reasoning, visible, splitter.errors


# ------------------------------------------------------------------------------------ examples


def test_explicit_block_is_reasoning_and_the_rest_is_visible():
    split = split_reasoning(f"{THINK_OPEN}\nweigh it\n{THINK_CLOSE}\n\nIt is sunny.", ENDS)
    assert (split.reasoning, split.visible, split.errors) == ("weigh it", "\n\nIt is sunny.", [])


def test_close_without_open_means_the_prompt_opened_the_block():
    split = split_reasoning(f"the user wants Paris{THINK_CLOSE}<tool_call>{{}}", ENDS)
    assert split.reasoning == "the user wants Paris"
    assert split.visible == "<tool_call>{}"
    assert split.errors == []


def test_tool_marker_ends_an_unclosed_block_and_the_calls_are_kept():
    split = split_reasoning(f"{THINK_OPEN}call the tool <tool_call>{{}}</tool_call>", ENDS)
    assert split.reasoning == "call the tool"
    assert split.visible == "<tool_call>{}</tool_call>"
    assert split.errors == []


def test_close_after_an_implicit_end_is_reported_not_lost():
    text = f"{THINK_OPEN}plan<tool_call>{{}}</tool_call>{THINK_CLOSE}done"
    split = split_reasoning(text, ENDS)
    assert split.reasoning == "plan"
    assert split.visible == "<tool_call>{}</tool_call>done"
    assert split.errors == [f"{THINK_CLOSE} outside reasoning ignored"]


def test_explicit_choice_overrides_the_guess():
    text = f"answer{THINK_CLOSE}more"
    assert split_reasoning(text, ENDS, reasoning_open=False).reasoning == ""
    assert split_reasoning(text, ENDS, reasoning_open=False).visible == "answermore"
    assert split_reasoning(f"all reasoning{THINK_CLOSE}", ENDS, reasoning_open=True).visible == ""
    opened = split_reasoning("thinking and then cut", ENDS, reasoning_open=True)
    assert opened.reasoning == "thinking and then cut"
    assert len(opened.errors) == 1 and THINK_CLOSE in opened.errors[0]


def test_no_tags_at_all_is_plain_visible_text():
    split = split_reasoning("Hello <b>there</b>", ENDS)
    assert (split.reasoning, split.visible, split.errors) == ("", "Hello <b>there</b>", [])


def test_blocks_are_joined_by_a_newline_and_a_nested_open_is_reported():
    text = f"{THINK_OPEN}one{THINK_OPEN}x{THINK_CLOSE}mid{THINK_OPEN}two{THINK_CLOSE}end"
    split = split_reasoning(text, ENDS)
    assert split.reasoning == "onex\ntwo"
    assert split.visible == "midend"
    assert split.errors == [f"{THINK_OPEN} inside reasoning that is already open ignored"]


def test_batch_parser_is_the_shared_split_plus_the_format():
    text = f"{THINK_OPEN}plan{THINK_CLOSE}Let me check.{KIMI_CALL}"
    split = split_reasoning(text, (SECTION_BEGIN, "<|tool_call_begin|>"))
    assert parse_kimi(text).reasoning == split.reasoning == "plan"
    assert parse_kimi(text).content == "Let me check."


def test_errors_follow_the_language_in_force():
    try:
        set_language("ru")
        errors = split_reasoning(f"x{THINK_OPEN}y", ENDS, reasoning_open=False).errors
    finally:
        reset_language()
    assert len(errors) == 1 and "рассужд" in errors[0]


# ------------------------------------------------------------------- stream == batch, any split

TOKENS = st.sampled_from(
    [THINK_OPEN, THINK_CLOSE, "<tool_call>", "</tool_call>", "<t", "</th", " ", "\n", "plan", "é"]
)


@FAST
@given(
    parts=st.lists(TOKENS, max_size=14),
    cuts=st.lists(st.integers(0, 200), max_size=10),
    reasoning_open=st.sampled_from([None, True, False]),
)
def test_incremental_splitter_agrees_with_the_batch_for_any_split(parts, cuts, reasoning_open):
    text = "".join(parts)
    chunks = split_at(text, [c for c in cuts if c <= len(text)])
    expected = split_reasoning(text, ENDS, reasoning_open)
    reasoning, visible, errors = split_streaming(chunks, ENDS, reasoning_open)
    assert reasoning.strip() == expected.reasoning
    assert visible == expected.visible
    assert errors == expected.errors


def test_known_start_passes_text_on_at_once_and_holds_back_at_most_a_tag():
    splitter = ReasoningSplitter(ENDS, reasoning_open=False)
    assert splitter.feed("Hello <thi") == [(False, "Hello ")]
    assert splitter.feed("nk>why") == [(True, "why")]
    longest = max(len(t) for t in (THINK_OPEN, THINK_CLOSE, *ENDS))
    for char in "x" * 50 + "</thin":
        splitter.feed(char)
        assert len(splitter._splitter.pending) < longest


def test_unknown_start_waits_for_the_first_tag():
    splitter = ReasoningSplitter(ENDS)
    assert splitter.feed("maybe reasoning") == []
    assert splitter.feed(f" after all{THINK_CLOSE}Hi") == [
        (True, "maybe reasoning after all"),
        (False, "Hi"),
    ]


# ------------------------------------------------------------- plumbing in StreamParser (Kimi)


def batch(text: str, reasoning_open: bool | None = None):
    return parse_kimi(text, reasoning_open)


@pytest.mark.parametrize(
    "text",
    [
        f"{THINK_OPEN}The user asks about Beijing.{THINK_CLOSE}Let me check.{KIMI_CALL}",
        f"The prompt opened it.{THINK_CLOSE}{KIMI_CALL}",
        f"{THINK_OPEN}no close, straight to the calls {KIMI_CALL}",
        f"{THINK_OPEN}cut off mid-thought",
        "Plain answer, no reasoning.",
    ],
)
def test_stream_parser_emits_reasoning_deltas_that_add_up_to_the_batch(text):
    expected = batch(text)
    for size in (1, 3, 7, len(text)):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        parser, accumulator, deltas = stream(KimiStreamParser(), chunks)
        assert parser.result == expected
        assert "".join(d.get("reasoning_content", "") for d in deltas) == expected.reasoning
        assert accumulator.content == expected.content
        assert accumulator.tool_calls == expected.tool_calls


def test_reasoning_comes_before_the_calls_in_the_stream():
    text = f"{THINK_OPEN}think first{THINK_CLOSE}{KIMI_CALL}"
    _, _, deltas = stream(KimiStreamParser(), [text[i : i + 5] for i in range(0, len(text), 5)])
    kinds = [next(iter(d)) for d in deltas]
    assert kinds[0] == "reasoning_content" and "tool_calls" in kinds
    assert kinds.index("tool_calls") > max(
        i for i, k in enumerate(kinds) if k == "reasoning_content"
    )


@FAST
@given(
    parts=st.lists(
        st.sampled_from([THINK_OPEN, THINK_CLOSE, KIMI_CALL, SECTION_BEGIN, "why ", "\n", "ok"]),
        max_size=8,
    ),
    cuts=st.lists(st.integers(0, 600), max_size=12),
    reasoning_open=st.sampled_from([None, True, False]),
)
def test_kimi_with_reasoning_stream_equals_batch_for_any_split(parts, cuts, reasoning_open):
    text = "".join(parts)
    chunks = split_at(text, [c for c in cuts if c <= len(text)])
    parser, accumulator, _ = stream(KimiStreamParser(reasoning_open), chunks)
    assert parser.result == batch(text, reasoning_open)


@pytest.mark.parametrize(
    "parse, text",
    [
        ("kimi", f"{SECTION_BEGIN}<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{{"),
        ("hermes", '<tool_call>\n{"name": "f", "arguments": {'),
        ("qwen_xml", "<tool_call>\n<function=f>\n<parameter=x>\n1"),
    ],
)
def test_every_parsers_diagnostics_follow_the_language_in_force(parse, text):
    """Parser errors are shown to students: the Russian edition gets them in Russian."""
    from helpers.formats import parse_hermes
    from helpers.formats.qwen_xml import parse_qwen_xml

    parser = {"kimi": parse_kimi, "hermes": parse_hermes, "qwen_xml": parse_qwen_xml}[parse]
    english = parser(text).errors
    try:
        set_language("ru")
        russian = parser(text).errors
    finally:
        reset_language()
    assert english and len(russian) == len(english)
    for message in russian:
        assert any("а" <= ch <= "я" for ch in message), message
        assert " the " not in message and "ignored" not in message, message
