"""Tests of helpers.formats for Kimi-K2: batch parser, stream parser, renderer, the guide's parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from helpers.formats import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    KIMI_MARKERS,
    SECTION_BEGIN,
    SECTION_END,
    KimiStreamParser,
    ParseResult,
    guide_extract_tool_call_info,
    kimi_name_from_id,
    parse_kimi,
    render_kimi_tool_calls,
)
from helpers.formats._common import MarkerSplitter
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

SB, SE, CB, AB, CE = SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END

GUIDE_EXAMPLE = f'{SB}{CB}functions.get_weather:0{AB}{{"city": "Beijing"}}{CE}{SE}'


def assert_stream_matches_batch(text: str, chunks: list[str]) -> None:
    """The streaming contract: any split gives the batch result, deltas well formed."""
    assert "".join(chunks) == text
    deltas = assert_stream_matches(KimiStreamParser(), parse_kimi(text), chunks)
    assert_deltas_well_formed(deltas)


def assert_deltas_well_formed(deltas: list[dict]) -> None:
    """Each delta is content or one tool-call piece; a call's first piece is its header."""
    started: set[int] = set()
    for delta in deltas:
        assert len(delta) == 1
        if "content" in delta:
            assert isinstance(delta["content"], str) and delta["content"]
            continue
        (piece,) = delta["tool_calls"]
        index = piece["index"]
        if index not in started:
            assert index == len(started)  # calls are announced in order, without gaps
            assert set(piece) == {"index", "id", "type", "function"}
            assert piece["type"] == "function"
            assert piece["function"]["arguments"] == ""
            assert set(piece["function"]) == {"name", "arguments"}
            started.add(index)
        else:
            assert set(piece) == {"index", "function"}
            assert set(piece["function"]) == {"arguments"}
            assert piece["function"]["arguments"]


# --------------------------------------------------------------------------- batch parser


def test_guide_example_parses_to_one_call() -> None:
    result = parse_kimi(GUIDE_EXAMPLE)
    assert result == ParseResult(
        "", [call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')], []
    )


def test_content_before_calls_and_names_with_dash_and_dot() -> None:
    text = (
        f"Let me check both.{SB}{CB}functions.get-weather:0{AB}{{}}{CE}"
        f"{CB}web.search:1{AB}{{}}{CE}{SE}"
    )
    result = parse_kimi(text)
    assert result.content == "Let me check both."
    assert [c["function"]["name"] for c in result.tool_calls] == ["get-weather", "web.search"]
    assert [c["id"] for c in result.tool_calls] == ["functions.get-weather:0", "web.search:1"]
    assert result.errors == []


def test_whitespace_between_every_marker_and_multiline_json() -> None:
    text = (
        f"  Sure.\n{SB}\n  {CB} functions.get_weather:0 \n{AB}\n"
        '{\n  "city": "Пекин",\n  "days": [1, 2]\n}\n'
        f"  {CE}\n\n{SE}\n"
    )
    result = parse_kimi(text)
    assert result.content == "Sure."
    assert result.tool_calls == [
        call(
            "functions.get_weather:0",
            "get_weather",
            '{\n  "city": "Пекин",\n  "days": [1, 2]\n}',
        )
    ]
    assert result.errors == []


def test_every_section_is_read_and_text_between_sections_is_content() -> None:
    text = (
        f"First.{SB}{CB}functions.a:0{AB}{{}}{CE}{SE} Then. "
        f"{SB}{CB}functions.b:1{AB}{{}}{CE}{SE} Done."
    )
    result = parse_kimi(text)
    assert result.content == "First. Then.  Done."
    assert [c["id"] for c in result.tool_calls] == ["functions.a:0", "functions.b:1"]
    assert result.errors == []


def test_missing_section_end_keeps_the_call_and_reports_it() -> None:
    text = f'{SB}{CB}functions.get_weather:0{AB}{{"city": "Beijing"}}{CE}'
    result = parse_kimi(text)
    assert result.tool_calls == [
        call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')
    ]
    assert len(result.errors) == 1
    assert SE in result.errors[0] and "cut off" in result.errors[0]


def test_call_cut_off_in_its_arguments_is_returned_and_reported() -> None:
    text = f'Checking.{SB}{CB}functions.get_weather:0{AB}{{"city": "Bei'
    result = parse_kimi(text)
    assert result.content == "Checking."
    assert result.tool_calls == [call("functions.get_weather:0", "get_weather", '{"city": "Bei')]
    label = "call 0 (id 'functions.get_weather:0')"
    assert any(e.startswith(label) and CE in e for e in result.errors)
    assert any(e.startswith(label) and "not valid JSON" in e for e in result.errors)
    assert any(SE in e for e in result.errors)


def test_call_cut_off_in_its_id_is_returned_without_arguments() -> None:
    result = parse_kimi(f"{SB}{CB}functions.get_wea")
    assert result.tool_calls == [call("functions.get_wea", "get_wea", "")]
    assert any("not of the form" in e for e in result.errors)
    assert any(f"no {AB}" in e for e in result.errors)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"city": Beijing}', "not valid JSON"),
        ('{"city": "Beijing"', "not valid JSON"),
        ('"Beijing"', "a string, not an object"),
        ("[1, 2]", "an array, not an object"),
        ("42", "a number, not an object"),
        ("null", "null, not an object"),
        ("", "arguments are empty"),
    ],
)
def test_bad_arguments_are_returned_and_reported(arguments: str, message: str) -> None:
    text = f"{SB}{CB}functions.f:3{AB}{arguments}{CE}{SE}"
    result = parse_kimi(text)
    assert result.tool_calls == [call("functions.f:3", "f", arguments)]
    assert len(result.errors) == 1
    assert result.errors[0].startswith("call 0 (id 'functions.f:3'): ")
    assert message in result.errors[0]


def test_errors_name_the_call_by_index_and_id() -> None:
    text = f"{SB}{CB}functions.ok:0{AB}{{}}{CE}{CB}functions.bad:1{AB}{{oops{CE}{SE}"
    result = parse_kimi(text)
    assert len(result.tool_calls) == 2
    assert len(result.errors) == 1
    assert result.errors[0].startswith("call 1 (id 'functions.bad:1'): arguments are not valid")


def test_text_between_calls_is_reported_not_content() -> None:
    text = f"Hi{SB}{CB}a:0{AB}{{}}{CE} I will also {CB}b:1{AB}{{}}{CE}\n \n{SE}"
    result = parse_kimi(text)
    assert result.content == "Hi"
    assert len(result.tool_calls) == 2
    assert result.errors == ["text between tool calls ignored: 'I will also'"]


def test_long_stray_text_is_shortened_in_the_error() -> None:
    result = parse_kimi(f"{SB}{'x' * 5000}{SE}")
    assert len(result.errors) == 1
    assert len(result.errors[0]) < 120
    assert result.errors[0].endswith("x…[+4940 chars]'")  # it says how much was left out


@pytest.mark.parametrize(
    ("call_id", "name"),
    [("get_weather", "get_weather"), ("functions.get_weather", "get_weather"), ("a b:0", "a b")],
)
def test_id_without_index_is_reported_with_a_guessed_name(call_id: str, name: str) -> None:
    result = parse_kimi(f"{SB}{CB}{call_id}{AB}{{}}{CE}{SE}")
    assert result.tool_calls == [call(call_id, name, "{}")]
    assert result.errors == [
        f"call 0 (id {call_id!r}): the id is not of the form 'functions.name:N'; "
        f"name guessed as {name!r}"
    ]


def test_empty_id_is_reported() -> None:
    result = parse_kimi(f"{SB}{CB} {AB}{{}}{CE}{SE}")
    assert result.tool_calls == [call("", "", "{}")]
    assert result.errors == ["call 0 (id ''): the id is empty, so there is no function name"]


@pytest.mark.parametrize("marker", [SE, AB, CE])
def test_stray_marker_in_content_is_dropped_and_reported(marker: str) -> None:
    result = parse_kimi(f"Hello {marker}world")
    assert result.content == "Hello world"
    assert result.tool_calls == []
    assert len(result.errors) == 1 and marker in result.errors[0]


def test_call_without_section_begin_is_read_and_reported() -> None:
    result = parse_kimi(f"Hi {CB}functions.f:0{AB}{{}}{CE}{SE} bye")
    assert result.content == "Hi  bye"
    assert result.tool_calls == [call("functions.f:0", "f", "{}")]
    assert result.errors == [f"{CB} outside a tool-calls section: read as a call anyway"]


def test_next_call_begin_closes_a_call_without_end() -> None:
    result = parse_kimi(f"{SB}{CB}a:0{AB}{{}}{CB}b:1{AB}{{}}{CE}{SE}")
    assert [c["id"] for c in result.tool_calls] == ["a:0", "b:1"]
    assert result.errors == [f"call 0 (id 'a:0'): no {CE} before the next {CB}"]


def test_a_missing_call_end_is_reported_in_russian_too() -> None:
    set_language("ru")  # "before the next ..." used to stay English inside a Russian message
    try:
        result = parse_kimi(f"{SB}{CB}a:0{AB}{{}}{CB}b:1{AB}{{}}{SE}")
    finally:
        reset_language()
    assert result.errors == [
        f"вызов 0 (id 'a:0'): нет {CE} перед следующим {CB}",
        f"вызов 1 (id 'b:1'): нет {CE} перед {SE}",
    ]


def test_nested_markers_are_ignored_and_reported() -> None:
    text = f"{SB}{SB}{CB}a:0{AB}{{{SB}}}{AB}{CE}{CE}{SE}{SE}"
    result = parse_kimi(text)
    assert result.tool_calls == [call("a:0", "a", "{}")]
    assert result.errors == [
        f"{SB} inside an open section ignored",
        f"call 0: unexpected {SB} inside the call ignored",
        f"call 0: unexpected {AB} inside the call ignored",
        f"{CE} between calls ignored",
        f"{SE} without an open section ignored",
    ]


def test_plain_text_and_empty_text() -> None:
    assert parse_kimi("") == ParseResult("", [], [])
    assert parse_kimi("  The weather is sunny.\n") == ParseResult("The weather is sunny.", [], [])


FAILURE_INPUTS = [
    SB,
    SE,
    CB,
    AB,
    CE,
    SB + SE + SB,
    SB + CB + CE + SE,
    CB + AB + CE,
    SB + CB + AB,
    SB + CB + "functions.f:0" + AB + '{"a": [1, {"b": ',
    SB + CB + "functions.f:0" + AB + "{not json}" + CE + SE,
    SB + CB + "functions.f:0" + AB + '"just a string"' + CE + SE,
    SB + "garbage" + SE,
    SB + CB + CB + AB + AB + CE + CE + SE + SE,
    SE + CE + AB + CB + SB,
    "<|tool_calls_section_begin|" + CB + "x:0" + AB + "{}",
    SB + CB + "f:0" + AB + "[" * 5000 + CE + SE,
    SB + CB + "f:0" + AB + "1" * 5000 + CE + SE,
]


@pytest.mark.parametrize("text", FAILURE_INPUTS)
def test_failure_inputs_give_errors_never_exceptions(text: str) -> None:
    result = parse_kimi(text)
    assert isinstance(result, ParseResult)
    assert result.errors
    assert all(isinstance(error, str) and error for error in result.errors)
    assert_stream_matches_batch(text, list(text))  # one character at a time


@pytest.mark.parametrize(
    ("call_id", "name"),
    [
        ("functions.get_weather:0", "get_weather"),
        ("get_weather:12", "get_weather"),
        ("functions.get-weather:0", "get-weather"),
        ("functions.web.search:3", "web.search"),
        ("web.search:3", "web.search"),
        ("functions.a:1:2", "a:1"),
        ("get_weather", "get_weather"),
        ("functions.x:y", "x:y"),
        ("", ""),
    ],
)
def test_kimi_name_from_id(call_id: str, name: str) -> None:
    assert kimi_name_from_id(call_id) == name


# --------------------------------------------------------------------------- property tests

WHITESPACE = st.sampled_from(["", " ", "\n", "\n  ", "\t", " \n\n "])


def contains_marker(text: str) -> bool:
    """True when a Kimi marker or a `<think>` tag occurs in text (so it is not plain text)."""
    return any(marker in text for marker in (*KIMI_MARKERS, "<think>", "</think>"))


@st.composite
def kimi_calls(draw: st.DrawFn) -> list[dict]:
    """Random well-formed tool calls: names with - and ., ids with or without the prefix."""
    calls = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(NAMES)
        assume(not name.startswith("functions."))
        prefix = draw(st.sampled_from(["functions.", ""]))
        call_id = f"{prefix}{name}:{draw(st.integers(0, 10**6))}"
        indent = draw(st.sampled_from([None, 2]))
        arguments = json.dumps(draw(ARGUMENT_OBJECTS), ensure_ascii=False, indent=indent)
        assume(not contains_marker(arguments))
        calls.append(call(call_id, name, arguments))
    return calls


CONTENT = st.text(max_size=40).filter(lambda text: not contains_marker(text))


@FAST
@given(calls=kimi_calls(), content=CONTENT)
def test_render_then_parse_round_trips(calls: list[dict], content: str) -> None:
    text = render_kimi_tool_calls(calls, content)
    assert parse_kimi(text) == ParseResult(content.strip(), calls, [])


@FAST
@given(calls=kimi_calls(), content=CONTENT, data=st.data())
def test_whitespace_between_markers_does_not_change_the_calls(
    calls: list[dict], content: str, data: st.DataObject
) -> None:
    def gap() -> str:
        return data.draw(WHITESPACE)

    pieces = [content, gap(), SB]
    for c in calls:
        pieces += [gap(), CB, gap(), c["id"], gap(), AB, gap(), c["function"]["arguments"]]
        pieces += [gap(), CE]
    pieces += [gap(), SE, gap()]
    assert parse_kimi("".join(pieces)) == ParseResult(content.strip(), calls, [])


# Text made of markers, pieces of markers and ordinary text: every state and transition.
SOUP_PIECES = st.one_of(
    st.sampled_from(KIMI_MARKERS),
    st.sampled_from(["<|tool_call", "<|", "<", "|>", "_end|>", "<|tool_calls_section_"]),
    st.sampled_from(["functions.get_weather:0", "get-news:1", "bad id", '{"a": 1}', "{", "}"]),
    st.sampled_from([" ", "\n", "  \n", "\u3000", "x"]),
    st.text(max_size=6),
)
SOUP = st.lists(SOUP_PIECES, max_size=30).map("".join)


@FAST
@given(text=SOUP, data=st.data())
def test_any_split_gives_the_batch_result(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    assert_stream_matches_batch(text, split_at(text, cuts))


@FAST
@given(text=SOUP)
def test_one_character_deltas_give_the_batch_result(text: str) -> None:
    assert_stream_matches_batch(text, list(text))


@FAST
@given(calls=kimi_calls(), content=CONTENT, data=st.data())
def test_streamed_realistic_output_gives_the_calls(
    calls: list[dict], content: str, data: st.DataObject
) -> None:
    text = render_kimi_tool_calls(calls, content)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    _, accumulator, _ = stream(KimiStreamParser(), split_at(text, cuts))
    assert accumulator.content == content.strip()
    assert accumulator.tool_calls == calls


@FAST
@given(text=st.text(max_size=200) | SOUP)
def test_garbage_never_raises(text: str) -> None:
    result = parse_kimi(text)
    assert isinstance(result.content, str)
    assert result.content == result.content.strip()
    for tool_call in result.tool_calls:
        assert set(tool_call) == {"id", "type", "function"}
        assert isinstance(tool_call["function"]["arguments"], str)
    assert all(isinstance(error, str) for error in result.errors)


# --------------------------------------------------------------------------- stream specifics


def test_first_delta_of_a_call_carries_id_and_name_then_fragments_follow() -> None:
    parser = KimiStreamParser()
    assert parser.feed(f"Hi{SB}{CB}functions.get_weather:0") == [{"content": "Hi"}]
    assert parser.feed(f'{AB}{{"city": ') == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]},
    ]
    assert parser.feed('"Beijing"}') == [
        {"tool_calls": [{"index": 0, "function": {"arguments": ' "Beijing"}'}}]}
    ]
    assert parser.feed(f"{CE}{SE}") == []
    assert parser.close() == []
    assert parser.result == parse_kimi(
        f'Hi{SB}{CB}functions.get_weather:0{AB}{{"city": "Beijing"}}{CE}{SE}'
    )


def test_partial_marker_at_a_chunk_end_is_held_back() -> None:
    parser = KimiStreamParser(reasoning_open=False)  # known start: no text waits for a tag
    assert parser.feed("Sure <|tool_calls_sec") == [{"content": "Sure"}]
    assert parser.feed("tion_begin|><|tool_call_be") == []
    assert parser.feed("gin|>f:0<|tool_call_argument") == []
    deltas = parser.feed("_begin|>{}<|tool_call_e")
    assert deltas[0]["tool_calls"][0]["id"] == "f:0"
    assert deltas[1] == {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}
    assert parser.feed("nd|>") == []


def test_held_back_text_that_is_no_marker_is_released() -> None:
    parser = KimiStreamParser(reasoning_open=False)  # known start: no text waits for a tag
    assert parser.feed("a <|tool_ca") == [{"content": "a"}]
    assert parser.feed("t is not a marker") == [{"content": " <|tool_cat is not a marker"}]
    assert parser.feed(" <|tool") == []
    assert parser.close() == [{"content": " <|tool"}]
    assert parser.result.content == "a <|tool_cat is not a marker <|tool"


def test_trailing_whitespace_is_held_until_more_text_comes() -> None:
    parser = KimiStreamParser(reasoning_open=False)  # known start: no text waits for a tag
    assert parser.feed("  \n ") == []
    assert parser.feed("Hello ") == [{"content": "Hello"}]
    assert parser.feed("\n") == []
    assert parser.feed("world\n") == [{"content": " \nworld"}]
    assert parser.close() == []
    assert parser.result.content == "Hello \nworld"


def test_marker_splitter_never_holds_more_than_a_marker() -> None:
    splitter = MarkerSplitter(KIMI_MARKERS)
    longest = max(len(marker) for marker in KIMI_MARKERS)
    text = GUIDE_EXAMPLE * 3 + "<|" * 50 + "<|tool_calls_section_begin"
    pieces = []
    for char in text:
        pieces += splitter.feed(char)
        assert len(splitter.pending) < longest
    pieces += splitter.close()
    assert "".join(piece for _, piece in pieces) == text
    assert [piece for is_marker, piece in pieces if is_marker].count(SB) == 3


def test_result_needs_close_and_feed_after_close_fails() -> None:
    parser = KimiStreamParser()
    parser.feed("hi")
    with pytest.raises(RuntimeError):
        _ = parser.result
    parser.close()
    assert parser.close() == []
    with pytest.raises(RuntimeError):
        parser.feed("more")


def test_one_megabyte_argument_streams_in_small_deltas() -> None:
    arguments = json.dumps({"text": "ю" * 1_000_000}, ensure_ascii=False)
    text = f"{SB}{CB}functions.save:0{AB}{arguments}{CE}{SE}"
    chunks = [text[i : i + 4096] for i in range(0, len(text), 4096)]
    parser, accumulator, deltas = stream(KimiStreamParser(), chunks)
    assert accumulator.tool_calls == [call("functions.save:0", "save", arguments)]
    assert parser.result.errors == []
    assert len(deltas) > 200  # the arguments really came in pieces


# --------------------------------------------------------------------------- renderer


def test_render_matches_the_documented_format() -> None:
    calls = [
        call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}'),
        call("functions.get_news:1", "get_news", '{"content": "Los Angeles today"}'),
    ]
    assert render_kimi_tool_calls(calls, "Let me see.") == (
        f'Let me see.{SB}{CB}functions.get_weather:0{AB}{{"city": "Beijing"}}{CE}'
        f'{CB}functions.get_news:1{AB}{{"content": "Los Angeles today"}}{CE}{SE}'
    )


def test_render_without_calls_is_the_content_and_dict_arguments_become_json() -> None:
    assert render_kimi_tool_calls([], "Just text.") == "Just text."
    rendered = render_kimi_tool_calls([call("f:0", "f", {"город": "Пекин"})])  # type: ignore[arg-type]
    assert rendered == f'{SB}{CB}f:0{AB}{{"город": "Пекин"}}{CE}{SE}'


# --------------------------------------------------------------------------- the guide's parser


def test_guide_parser_reads_its_own_example() -> None:
    assert guide_extract_tool_call_info(GUIDE_EXAMPLE) == [
        call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')
    ]
    assert guide_extract_tool_call_info("No tools needed.") == []


def test_guide_defect_second_section_is_ignored() -> None:
    text = GUIDE_EXAMPLE + f"More.{SB}{CB}functions.get_news:1{AB}{{}}{CE}{SE}"
    assert [c["id"] for c in guide_extract_tool_call_info(text)] == ["functions.get_weather:0"]
    assert [c["id"] for c in parse_kimi(text).tool_calls] == [
        "functions.get_weather:0",
        "functions.get_news:1",
    ]


def test_guide_defect_missing_section_end_raises_index_error() -> None:
    text = f'{SB}{CB}functions.get_weather:0{AB}{{"city": "Beijing"}}{CE}'  # max_tokens hit
    with pytest.raises(IndexError):
        guide_extract_tool_call_info(text)
    result = parse_kimi(text)
    assert result.tool_calls == [
        call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')
    ]
    assert result.errors


def test_guide_defect_id_with_dash_is_silently_skipped() -> None:
    text = f"{SB}{CB}functions.get-weather:0{AB}{{}}{CE}{CB}functions.get_news:1{AB}{{}}{CE}{SE}"
    assert [c["id"] for c in guide_extract_tool_call_info(text)] == ["functions.get_news:1"]
    assert [c["function"]["name"] for c in parse_kimi(text).tool_calls] == [
        "get-weather",
        "get_news",
    ]


def test_guide_defect_names_and_ids_it_misreads() -> None:
    dotted = f"{SB}{CB}functions.web.search:0{AB}{{}}{CE}{SE}"
    assert guide_extract_tool_call_info(dotted)[0]["function"]["name"] == "web"
    assert parse_kimi(dotted).tool_calls[0]["function"]["name"] == "web.search"
    moonshot_id = f"{SB}{CB}get_weather:0{AB}{{}}{CE}{SE}"  # the Moonshot API's id style
    with pytest.raises(IndexError):
        guide_extract_tool_call_info(moonshot_id)


@FAST
@given(data=st.data())
def test_guide_parser_agrees_with_ours_on_what_it_was_written_for(data: st.DataObject) -> None:
    names = data.draw(st.lists(st.from_regex(r"[A-Za-z_]\w{0,10}", fullmatch=True), max_size=4))
    calls = [
        call(f"functions.{name}:{i}", name, json.dumps(data.draw(ARGUMENT_OBJECTS)))
        for i, name in enumerate(names)
    ]
    assume(not any(contains_marker(c["function"]["arguments"]) for c in calls))
    text = render_kimi_tool_calls(calls, data.draw(CONTENT)) or SB + SE
    assert guide_extract_tool_call_info(text) == parse_kimi(text).tool_calls
