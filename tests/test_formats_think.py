"""The shared `<think>` handling: the `ReasoningSplitter` (reasoning as a prefix, as vLLM's reasoning
parsers read it) and the `StreamParser` plumbing that turns reasoning into
`{"reasoning_content": ...}` deltas."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.formats import SECTION_BEGIN, KimiStreamParser, parse_kimi
from helpers.formats.think import THINK_CLOSE, THINK_OPEN, ReasoningSplitter
from helpers.i18n import reset_language, set_language
from tests.formats_support import FAST, split_at, stream

ENDS = ("<tool_call>",)
FOLLOWER = "<function="
KIMI_CALL = (
    f"{SECTION_BEGIN}<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
)


def split_streaming(
    chunks: list[str], ends=ENDS, reasoning_open=None, follower=None
) -> tuple[str, str, list]:
    """Run the splitter over chunks; return (reasoning stripped, visible, errors)."""
    splitter = ReasoningSplitter(ends, reasoning_open, follower)
    pieces = []
    for chunk in chunks:
        pieces += splitter.feed(chunk)
    pieces += splitter.close()
    reasoning = "".join(text for is_reasoning, text in pieces if is_reasoning)
    visible = "".join(text for is_reasoning, text in pieces if not is_reasoning)
    return reasoning.strip(), visible, splitter.errors


def split(text: str, ends=ENDS, reasoning_open=None, follower=None) -> tuple[str, str, list]:
    """The whole text as one delta."""
    return split_streaming([text], ends, reasoning_open, follower)


# ------------------------------------------------------------------------------------ examples


def test_explicit_block_is_reasoning_and_the_rest_is_visible():
    text = f"{THINK_OPEN}\nweigh it\n{THINK_CLOSE}\n\nIt is sunny."
    assert split(text) == ("weigh it", "\n\nIt is sunny.", [])


def test_close_without_open_means_the_prompt_opened_the_block():
    assert split(f"the user wants Paris{THINK_CLOSE}<tool_call>{{}}") == (
        "the user wants Paris",
        "<tool_call>{}",
        [],
    )


def test_tool_marker_ends_an_unclosed_block_and_the_calls_are_kept():
    text = f"{THINK_OPEN}call the tool <tool_call>{{}}</tool_call>"
    assert split(text) == ("call the tool", "<tool_call>{}</tool_call>", [])


def test_with_a_follower_only_a_real_call_ends_reasoning():
    # vLLM's qwen3 reasoning parser: <tool_call> ends reasoning when <function= comes next.
    mention = f"{THINK_OPEN}I could write <tool_call> here, but no.{THINK_CLOSE}Answer."
    assert split(mention, follower=FOLLOWER) == (
        "I could write <tool_call> here, but no.",
        "Answer.",
        [],
    )
    call = f"{THINK_OPEN}read it\n\n<tool_call>\n<function=bash>\n"
    assert split(call, follower=FOLLOWER) == ("read it", "<tool_call>\n<function=bash>\n", [])
    # Split anywhere, the decision is the same.
    assert split_streaming(list(call), follower=FOLLOWER) == split(call, follower=FOLLOWER)


def test_reasoning_is_a_prefix_and_later_tags_are_visible_text():
    text = f"{THINK_OPEN}plan{THINK_CLOSE}write <think>notes</think> to a file"
    assert split(text) == ("plan", "write <think>notes</think> to a file", [])
    late = f"{THINK_OPEN}plan<tool_call>{{}}</tool_call>{THINK_CLOSE}done"
    assert split(late) == ("plan", "<tool_call>{}</tool_call></think>done", [])


def test_explicit_choice_overrides_the_guess():
    text = f"answer{THINK_CLOSE}more"
    assert split(text, reasoning_open=False) == ("", text, [])
    assert split(f"all reasoning{THINK_CLOSE}", reasoning_open=True) == ("all reasoning", "", [])
    assert split(f"{THINK_OPEN}again{THINK_CLOSE}x", reasoning_open=True) == ("again", "x", [])
    reasoning, visible, errors = split("thinking and then cut", reasoning_open=True)
    assert (reasoning, visible) == ("thinking and then cut", "")
    assert len(errors) == 1 and THINK_CLOSE in errors[0]


def test_no_tags_at_all_is_plain_visible_text():
    assert split("Hello <b>there</b>") == ("", "Hello <b>there</b>", [])
    assert split("Hello <think>there</think>") == ("", "Hello <think>there</think>", [])


def test_a_nested_open_is_reported():
    text = f"{THINK_OPEN}one{THINK_OPEN}x{THINK_CLOSE}end"
    assert split(text) == (
        "onex",
        "end",
        [f"{THINK_OPEN} inside reasoning that is already open ignored"],
    )


def test_batch_parser_is_the_stream_parser_fed_once():
    text = f"{THINK_OPEN}plan{THINK_CLOSE}Let me check.{KIMI_CALL}"
    assert parse_kimi(text).reasoning == "plan"
    assert parse_kimi(text).content == "Let me check."


def test_errors_follow_the_language_in_force():
    try:
        set_language("ru")
        errors = split(f"{THINK_OPEN}x{THINK_OPEN}y")[2]
    finally:
        reset_language()
    assert len(errors) == 2 and all("рассужд" in e for e in errors)


# ------------------------------------------------------------- an independent reference, any split


def reference(text: str, reasoning_open, follower) -> tuple[str, str]:
    """The prefix rule written with string searches: (reasoning stripped, visible)."""
    lead = len(text) - len(text.lstrip())
    if text[lead:].startswith(THINK_OPEN):
        rest = text[lead + len(THINK_OPEN) :]
    elif reasoning_open is False:
        return "", text
    else:
        rest = text
    ends = [re.escape(THINK_CLOSE), re.escape(THINK_OPEN)]
    end = "<tool_call>" + (r"(?=\s*" + re.escape(follower) + ")" if follower else "")
    position, reasoning = 0, []
    for match in re.finditer("|".join([*ends, end]), rest):
        if match.group() == THINK_OPEN:
            if rest is text and reasoning_open is None:  # text, then <think>: not reasoning
                return "", text
            reasoning.append(rest[position : match.start()])
            position = match.end()
            continue
        reasoning.append(rest[position : match.start()])
        after = rest[match.end() :] if match.group() == THINK_CLOSE else rest[match.start() :]
        if rest is text and reasoning_open is None and match.group() != THINK_CLOSE:
            return "", text  # a call before any </think>: the text was visible from the start
        return "".join(reasoning).strip(), after
    if rest is text and reasoning_open is None:
        return "", text
    return ("".join(reasoning) + rest[position:]).strip(), ""


TOKENS = st.sampled_from(
    [THINK_OPEN, THINK_CLOSE, "<tool_call>", FOLLOWER, "</tool_call>", "<t", "</th", " ", "\n"]
    + ["plan", "é"]
)


@FAST
@given(
    parts=st.lists(TOKENS, max_size=14),
    cuts=st.lists(st.integers(0, 200), max_size=10),
    reasoning_open=st.sampled_from([None, True, False]),
    follower=st.sampled_from([None, FOLLOWER]),
)
def test_any_split_gives_the_reference_split(parts, cuts, reasoning_open, follower):
    text = "".join(parts)
    chunks = split_at(text, [c for c in cuts if c <= len(text)])
    reasoning, visible, _ = split_streaming(chunks, ENDS, reasoning_open, follower)
    assert (reasoning, visible) == reference(text, reasoning_open, follower)
    assert split_streaming(chunks, ENDS, reasoning_open, follower) == split(
        text, ENDS, reasoning_open, follower
    )


def test_known_start_passes_text_on_at_once_and_holds_back_at_most_a_tag():
    splitter = ReasoningSplitter(ENDS, reasoning_open=True)
    assert splitter.feed("Hello <thi") == [(True, "Hello ")]
    longest = max(len(t) for t in (THINK_OPEN, THINK_CLOSE, *ENDS))
    for char in "x" * 50 + "</thin":
        splitter.feed(char)
        assert len(splitter._splitter.pending) < longest
    assert splitter.feed("k>after") == [(False, "after")]
    assert splitter.feed("<think>" * 3) == [(False, "<think>" * 3)]  # after: passed through


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
