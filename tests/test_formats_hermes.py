"""Tests of helpers.formats for Qwen2.5 (Hermes style): batch and stream parsers, renderer."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from helpers.formats import (
    HermesStreamParser,
    ParseResult,
    parse_hermes,
    render_hermes_tool_calls,
)
from helpers.i18n import reset_language, set_language
from tests.formats_support import (
    ARGUMENT_OBJECTS,
    FAST,
    NAMES,
    assert_stream_matches,
    call,
    split_at,
    stream,
)

OPEN, CLOSE = "<tool_call>", "</tool_call>"

# The assistant turn of the Qwen2.5 template example (facts/qwen.md), after "<|im_start|>assistant\n".
QWEN_EXAMPLE = (
    "<tool_call>\n"
    '{"name": "get_current_weather", "arguments": {"location": "Paris, France", "unit": "celsius"}}\n'
    "</tool_call>"
)


def assert_stream_matches_batch(
    text: str, chunks: list[str], reasoning_open: bool | None = None
) -> None:
    """The streaming contract: any split gives the batch result, reasoning included."""
    expected = parse_hermes(text, reasoning_open)
    assert_stream_matches(HermesStreamParser(reasoning_open), expected, chunks)


# --------------------------------------------------------------------------- batch parser


def test_qwen_template_example_parses() -> None:
    result = parse_hermes(QWEN_EXAMPLE)
    assert result == ParseResult(
        "",
        [
            call(
                "call_0",
                "get_current_weather",
                '{"location": "Paris, France", "unit": "celsius"}',
            )
        ],
        [],
    )


def test_content_and_two_parallel_calls_with_invented_ids() -> None:
    text = (
        "Let me check.\n<tool_call>\n"
        '{"name": "get_current_temperature", "arguments": {"location": "San Francisco"}}\n'
        "</tool_call>\n<tool_call>\n"
        '{"name": "get_temperature_date", "arguments": {"location": "Сан-Франциско", '
        '"date": "2024-10-01"}}\n</tool_call>'
    )
    result = parse_hermes(text)
    assert result.content == "Let me check."
    assert [c["id"] for c in result.tool_calls] == ["call_0", "call_1"]
    assert result.tool_calls[1]["function"]["arguments"] == (
        '{"location": "Сан-Франциско", "date": "2024-10-01"}'
    )
    assert result.errors == []


def test_string_arguments_are_kept_as_written() -> None:
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    assert parse_hermes(text).tool_calls == [call("call_0", "f", '{"a": 1}')]
    assert parse_hermes(text).errors == []


def test_text_after_the_calls_is_content_too() -> None:
    text = f'Before {OPEN}{{"name": "f", "arguments": {{}}}}{CLOSE} after.'
    assert parse_hermes(text).content == "Before  after."


def test_unclosed_last_call_is_parsed_and_reported() -> None:
    text = f'Checking.\n{OPEN}\n{{"name": "f", "arguments": {{"city": "Paris"}}}}\n'
    result = parse_hermes(text)
    assert result.content == "Checking."
    assert result.tool_calls == [call("call_0", "f", '{"city": "Paris"}')]
    assert len(result.errors) == 1
    assert result.errors[0].startswith(f"call 0 (id 'call_0'): no {CLOSE}")


def test_cut_off_json_keeps_the_name_and_the_raw_arguments() -> None:
    text = f'{OPEN}\n{{"name": "get_weather", "arguments": {{"city": "Par'
    result = parse_hermes(text)
    assert result.tool_calls == [call("call_0", "get_weather", '{"city": "Par')]
    assert any("not valid JSON" in e and "'get_weather'" in e for e in result.errors)
    assert any(CLOSE in e for e in result.errors)


def test_broken_outer_json_with_good_arguments_recovers_both() -> None:
    text = f'{OPEN}{{"name": "f", "arguments": {{"a": [1, 2]}}}} trailing}}{CLOSE}'
    result = parse_hermes(text)
    assert result.tool_calls == [call("call_0", "f", '{"a": [1, 2]}')]
    assert len(result.errors) == 1 and "not valid JSON" in result.errors[0]


@pytest.mark.parametrize(
    ("body", "name", "arguments", "message"),
    [
        ("{'name': 'f', 'arguments': {}}", "", "", "not valid JSON"),  # Python dict style
        ("", "", "", "the call is empty"),
        ('["f", {}]', "", "", "not an object"),
        ('{"arguments": {}}', "", "{}", 'no string "name"'),
        ('{"name": "f"}', "f", "{}", 'no "arguments"'),
        ('{"name": "f", "arguments": [1]}', "f", "[1]", "an array, not an object"),
        ('{"name": "f", "arguments": "not json"}', "f", "not json", "not valid JSON"),
    ],
)
def test_bad_calls_are_returned_and_reported(
    body: str, name: str, arguments: str, message: str
) -> None:
    result = parse_hermes(f"Text {OPEN}\n{body}\n{CLOSE}")
    assert result.content == "Text"
    assert result.tool_calls == [call("call_0", name, arguments)]
    assert len(result.errors) == 1
    assert result.errors[0].startswith("call 0 (id 'call_0'): ")
    assert message in result.errors[0]


def test_stray_close_tag_is_dropped_and_reported() -> None:
    result = parse_hermes(f"Hello {CLOSE}world")
    assert result == ParseResult("Hello world", [], [f"{CLOSE} without an open {OPEN} ignored"])


def test_open_tag_inside_a_block_starts_a_new_call() -> None:
    text = (
        f'{OPEN}{{"name": "a", "arguments": {{}}}}{OPEN}{{"name": "b", "arguments": {{}}}}{CLOSE}'
    )
    result = parse_hermes(text)
    assert [c["function"]["name"] for c in result.tool_calls] == ["a", "b"]
    assert result.errors == [f"call 0 (id 'call_0'): no {CLOSE} before the next {OPEN}"]


def test_plain_text_and_empty_text() -> None:
    assert parse_hermes("") == ParseResult("", [], [])
    assert parse_hermes(" The answer is 42. \n") == ParseResult("The answer is 42.", [], [])


FAILURE_INPUTS = [
    OPEN,
    CLOSE,
    OPEN + CLOSE,
    OPEN + OPEN + CLOSE + CLOSE,
    CLOSE + OPEN,
    OPEN + "{" * 3000 + CLOSE,
    OPEN + '{"name": ' + "[" * 3000 + CLOSE,
    OPEN + '{"name": "f", "arguments": ' + "[" * 3000 + CLOSE,
    OPEN + '{"name": "\\x", "arguments": {}' + CLOSE,
    OPEN + '{"name": "f", "arguments": {"n": ' + "1" * 5000 + "}}" + CLOSE,
    OPEN + "null" + CLOSE,
    "<tool_call" + OPEN + "garbage",
]


@pytest.mark.parametrize("text", FAILURE_INPUTS)
def test_failure_inputs_give_errors_never_exceptions(text: str) -> None:
    result = parse_hermes(text)
    assert result.errors
    assert all(isinstance(error, str) and error for error in result.errors)
    assert_stream_matches_batch(text, list(text))


# --------------------------------------------------------------------------- renderer


def test_render_equals_the_template_example() -> None:
    calls = [call("x", "get_current_weather", '{"location": "Paris, France", "unit": "celsius"}')]
    assert render_hermes_tool_calls(calls) == QWEN_EXAMPLE


def test_render_with_content_and_two_calls() -> None:
    calls = [call("a", "f", '{"x": "é"}'), call("b", "g", "{}")]
    assert render_hermes_tool_calls(calls, "THIS IS CONTENT") == (
        'THIS IS CONTENT\n<tool_call>\n{"name": "f", "arguments": {"x": "é"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>'
    )


def test_render_reformats_arguments_like_tojson() -> None:
    calls = [call("a", "f", '{"x":1,\n "y": "\\u00e9"}')]
    assert render_hermes_tool_calls(calls) == (
        '<tool_call>\n{"name": "f", "arguments": {"x": 1, "y": "é"}}\n</tool_call>'
    )


def test_render_without_calls_is_the_content() -> None:
    assert render_hermes_tool_calls([], "Hi.") == "Hi."


def test_render_rejects_arguments_that_are_not_json() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        render_hermes_tool_calls([call("a", "f", "{oops")])


# --------------------------------------------------------------------------- property tests


def contains_tag(text: str) -> bool:
    """True when a Hermes tag (or a Qwen3 think tag) occurs in text."""
    return any(tag in text for tag in (OPEN, CLOSE, "<think>", "</think>"))


@st.composite
def hermes_calls(draw: st.DrawFn) -> list[dict]:
    """Random calls with ids as parse_hermes invents them and canonical JSON arguments."""
    calls = []
    for index in range(draw(st.integers(0, 4))):
        arguments = json.dumps(draw(ARGUMENT_OBJECTS), ensure_ascii=False)
        assume(not contains_tag(arguments))
        calls.append(call(f"call_{index}", draw(NAMES), arguments))
    return calls


CONTENT = st.text(max_size=40).filter(lambda text: not contains_tag(text))


@FAST
@given(calls=hermes_calls(), content=CONTENT)
def test_render_then_parse_round_trips(calls: list[dict], content: str) -> None:
    text = render_hermes_tool_calls(calls, content)
    assert parse_hermes(text) == ParseResult(content.strip(), calls, [])


SOUP_PIECES = st.one_of(
    st.sampled_from([OPEN, CLOSE, "<tool_c", "</tool", "<", "</", ">", "<think>", "</think>"]),
    st.sampled_from(['{"name": "f", "arguments": {"a": 1}}', '{"name": "g"', "{", "}", '"x"']),
    st.sampled_from([" ", "\n", "\u3000", "x"]),
    st.text(max_size=6),
)
SOUP = st.lists(SOUP_PIECES, max_size=30).map("".join)


@FAST
@given(text=SOUP, data=st.data())
def test_any_split_gives_the_batch_result(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    assert_stream_matches_batch(
        text, split_at(text, cuts), data.draw(st.sampled_from([None, True, False]))
    )


@FAST
@given(calls=hermes_calls(), content=CONTENT, data=st.data())
def test_streamed_realistic_output_gives_the_calls(
    calls: list[dict], content: str, data: st.DataObject
) -> None:
    text = render_hermes_tool_calls(calls, content)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    assert_stream_matches_batch(text, split_at(text, cuts))
    _, accumulator, _ = stream(HermesStreamParser(), split_at(text, cuts))
    assert (accumulator.content, accumulator.tool_calls) == (content.strip(), calls)


@FAST
@given(text=st.text(max_size=200) | SOUP)
def test_garbage_never_raises(text: str) -> None:
    result = parse_hermes(text)
    assert result.content == result.content.strip()
    assert [c["id"] for c in result.tool_calls] == [
        f"call_{i}" for i in range(len(result.tool_calls))
    ]
    assert all(isinstance(c["function"]["arguments"], str) for c in result.tool_calls)


# --------------------------------------------------------------------------- stream specifics


def test_content_streams_before_the_call_and_a_partial_tag_is_held() -> None:
    parser = HermesStreamParser(reasoning_open=False)  # the prompt did not open a <think>
    assert parser.feed("Let me check") == [{"content": "Let me check"}]
    assert parser.feed(".\n<tool_c") == [{"content": "."}]
    assert parser.feed('all>\n{"name": "f", ') == []
    assert parser.feed('"arguments": {"a": 1}}\n</tool_') == []
    assert parser.feed("call>") == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]},
    ]
    assert parser.close() == []
    assert parser.result.errors == []


def test_unclosed_call_is_emitted_at_close() -> None:
    parser = HermesStreamParser()
    assert parser.feed('<tool_call>{"name": "f", "arguments": {}}') == []
    deltas = parser.close()
    assert deltas[0]["tool_calls"][0]["id"] == "call_0"
    assert parser.result.errors == [
        f"call 0 (id 'call_0'): no {CLOSE} at the end of the text (output cut off, e.g. by "
        "max_tokens?)"
    ]


def test_hermes_result_needs_close() -> None:
    parser = HermesStreamParser()
    with pytest.raises(RuntimeError):
        _ = parser.result
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("x")


# --------------------------------------------------------------------------- Qwen3 thinking

QWEN3_OUTPUT = (  # the Qwen3 template's format (facts: the illustrative thinking output)
    "<think>\nThe user wants the temperature now.\n</think>\n\n" + QWEN_EXAMPLE
)


def test_qwen3_think_block_goes_to_reasoning() -> None:
    result = parse_hermes(QWEN3_OUTPUT)
    assert result.reasoning == "The user wants the temperature now."
    assert result.content == ""
    assert [c["function"]["name"] for c in result.tool_calls] == ["get_current_weather"]
    assert result.errors == []


def test_qwen3_close_without_open_means_the_prompt_opened_it() -> None:
    result = parse_hermes("Thinking-2507 starts inside.\n</think>\n\nIt is 22 degrees.")
    assert (result.reasoning, result.content) == (
        "Thinking-2507 starts inside.",
        "It is 22 degrees.",
    )


def test_qwen3_unclosed_think_ends_at_the_tool_call() -> None:
    result = parse_hermes("<think>\nI need the tool.\n" + QWEN_EXAMPLE)
    assert result.reasoning == "I need the tool."
    assert len(result.tool_calls) == 1 and result.errors == []


def test_qwen3_empty_think_block_of_enable_thinking_false() -> None:
    result = parse_hermes("<think>\n\n</think>\n\nHello.")
    assert (result.reasoning, result.content, result.errors) == ("", "Hello.", [])


def test_qwen3_stream_sends_reasoning_content_deltas_first() -> None:
    parser = HermesStreamParser()
    chunks = [QWEN3_OUTPUT[i : i + 7] for i in range(0, len(QWEN3_OUTPUT), 7)]
    deltas = [d for chunk in chunks for d in parser.feed(chunk)] + parser.close()
    assert "reasoning_content" in deltas[0]
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    assert reasoning == "The user wants the temperature now."
    assert parser.result.tool_calls[0]["function"]["name"] == "get_current_weather"


# ------------------------------------------------- several objects in one block (llama.cpp)


def test_several_objects_in_one_block_are_several_calls() -> None:
    # llama.cpp's grammar lets a model write two call objects inside one <tool_call> block, and
    # llama-server returns them as two calls; so does parse_hermes (it used to report an error).
    text = (
        "<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '{"name": "get_time", "arguments": {"zone": "CET"}}\n'
        "</tool_call>"
    )
    result = parse_hermes(text)
    assert result == ParseResult(
        "",
        [
            call("call_0", "get_weather", '{"city": "Paris"}'),
            call("call_1", "get_time", '{"zone": "CET"}'),
        ],
        [],
    )
    for size in (1, 5, len(text)):
        parser, accumulator, _ = stream(
            HermesStreamParser(), [text[i : i + size] for i in range(0, len(text), size)]
        )
        assert parser.result == result
        assert accumulator.tool_calls == result.tool_calls


def test_an_object_followed_by_garbage_stays_one_broken_call() -> None:
    text = '<tool_call>{"name": "f", "arguments": {}} trailing words</tool_call>'
    result = parse_hermes(text)
    assert [c["function"]["name"] for c in result.tool_calls] == ["f"]
    assert len(result.errors) == 1 and "not valid JSON" in result.errors[0]


@FAST
@given(
    first=ARGUMENT_OBJECTS,
    second=ARGUMENT_OBJECTS,
    names=st.tuples(NAMES, NAMES),
    cuts=st.lists(st.integers(0, 400), max_size=8),
)
def test_two_objects_in_a_block_round_trip_under_any_split(first, second, names, cuts) -> None:
    objects = [
        json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        for name, arguments in zip(names, (first, second), strict=True)
    ]
    text = "<tool_call>\n" + "\n".join(objects) + "\n</tool_call>"
    result = parse_hermes(text)
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.tool_calls
    ] == [
        (names[0], first),
        (names[1], second),
    ]
    parser, _, _ = stream(HermesStreamParser(), split_at(text, [c for c in cuts if c <= len(text)]))
    assert parser.result == result


@pytest.mark.parametrize("language", ["en", "ru"])
def test_junk_inside_a_block_is_quoted_in_the_error(language: str) -> None:
    # json's "Extra data: line 2 column 1 (char 31)" names a position only; the reader needs the text.
    set_language(language)
    try:
        text = '<tool_call>\n{"name": "f", "arguments": {}}\nstray words</tool_call>'
        result = parse_hermes(text)
        assert len(result.errors) == 1 and "'stray words'" in result.errors[0]
        assert result.tool_calls[0]["function"]["name"] == "f"  # the call is still recovered
    finally:
        reset_language()
