"""Tests of helpers.formats.kimi_xtml: Kimi K3's XTML output parser, stream parser and renderer.

Three kinds of reference: hold-out cases from vLLM's and SGLang's K3 parser tests
(`tests/engine_cases/kimi_k3_cases.json`), llama.cpp's K3 chat template
(`data/templates/kimi_k3.jinja`) rendered by transformers' Jinja, and the parsers' own contract
(render -> parse gives the calls back; any chunking of a stream gives the whole parse).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from helpers.formats import KimiXtmlStreamParser, ParseResult, parse_kimi_xtml, render_kimi_xtml
from helpers.formats.kimi_xtml import (
    CLOSE,
    END_OF_MSG,
    OPEN,
    SEP,
    XTML_TOKENS,
    close_tag,
    escape_attr,
    open_tag,
    unescape_attr,
)
from helpers.paths import DATA_DIR
from tests.formats_support import FAST, NAMES, call, split_at, stream

CASES_FILE = Path(__file__).parent / "engine_cases" / "kimi_k3_cases.json"
TEMPLATE_FILE = DATA_DIR / "templates" / "kimi_k3.jinja"

THINK_CLOSE = close_tag("think")
RESPONSE_OPEN = open_tag("response")
RESPONSE_CLOSE = close_tag("response")
TOOLS_OPEN = open_tag("tools")
TOOLS_CLOSE = close_tag("tools")
MESSAGE_CLOSE = close_tag("message")


def xcall(tool: str, index: int, *arguments: tuple[str, str, str]) -> str:
    """One call element with typed arguments (key, type, raw value), as K3 writes it."""
    body = "".join(
        open_tag("argument", [("key", k), ("type", t)]) + v + close_tag("argument")
        for k, t, v in arguments
    )
    return open_tag("call", [("tool", tool), ("index", index)]) + body + close_tag("call")


def streamed(text: str, cuts: list[int], **kwargs) -> tuple[KimiXtmlStreamParser, object, list]:
    return stream(KimiXtmlStreamParser(**kwargs), split_at(text, cuts))


def decoded_calls(calls: list[dict]) -> list[dict]:
    return [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in calls
    ]


# --------------------------------------------------------------------------- the parser


WEATHER = (
    "The user wants two cities." + THINK_CLOSE + RESPONSE_OPEN + "Checking both." + RESPONSE_CLOSE
    + TOOLS_OPEN
    + xcall("get_weather", 1, ("city", "string", "Paris"), ("days", "number", "3"))
    + xcall("get_weather", 2, ("city", "string", "Rome"), ("units", "null", "null"))
    + TOOLS_CLOSE + MESSAGE_CLOSE
)  # fmt: skip


def test_a_thinking_output_with_two_calls():
    result = parse_kimi_xtml(WEATHER, opened="think")
    assert result == ParseResult(
        content="Checking both.",
        tool_calls=[
            call("functions.get_weather:0", "get_weather", '{"city": "Paris", "days": 3}'),
            call("functions.get_weather:1", "get_weather", '{"city": "Rome", "units": null}'),
        ],
        errors=[],
        reasoning="The user wants two cities.",
    )
    assert parse_kimi_xtml(WEATHER) == result  # opened=None: the first tag says "think"


def test_call_offset_keeps_ids_unique_across_turns():
    result = parse_kimi_xtml(WEATHER, call_offset=5)
    assert [c["id"] for c in result.tool_calls] == [
        "functions.get_weather:5",
        "functions.get_weather:6",
    ]


def test_string_values_are_raw_and_other_types_are_json():
    text = (
        TOOLS_OPEN
        + xcall(
            "f",
            1,
            ("code", "string", ' print("a\\n") \n'),
            ("n", "number", "-1.5e3"),
            ("ok", "boolean", "false"),
            ("items", "array", '[1,"two",{"x":null}]'),
            ("opts", "object", '{"a": {"b": [true]}}'),
            ("tag", "string", "<b>&amp;</b>"),
        )
        + TOOLS_CLOSE
    )
    (only,) = parse_kimi_xtml(text).tool_calls
    assert json.loads(only["function"]["arguments"]) == {
        "code": ' print("a\\n") \n',
        "n": -1500.0,
        "ok": False,
        "items": [1, "two", {"x": None}],
        "opts": {"a": {"b": [True]}},
        "tag": "<b>&amp;</b>",  # values are never unescaped: only attributes are
    }


def test_a_json_block_is_kept_as_written():
    block = open_tag("json", [("type", "object")]) + '{"city": "Paris",  "days": 3}'
    text = TOOLS_OPEN + open_tag("call", [("tool", "w"), ("index", 1)]) + block
    text += close_tag("json") + close_tag("call") + TOOLS_CLOSE
    result = parse_kimi_xtml(text)
    assert result.tool_calls == [call("functions.w:0", "w", '{"city": "Paris",  "days": 3}')]
    assert result.errors == []


def test_attribute_escapes_are_undone_in_one_pass():
    assert unescape_attr(escape_attr('a&b "c" &quot;')) == 'a&b "c" &quot;'
    assert escape_attr('x"&') == "x&quot;&amp;"
    text = TOOLS_OPEN + xcall("a&quot;b", 1, ('k&"', "string", "v")) + TOOLS_CLOSE
    assert 'tool="a&amp;quot;b"' in text and 'key="k&amp;&quot;"' in text
    (only,) = parse_kimi_xtml(text).tool_calls
    assert only["function"]["name"] == "a&quot;b"
    assert json.loads(only["function"]["arguments"]) == {'k&"': "v"}


@pytest.mark.parametrize(
    ("opened", "text", "reasoning", "content"),
    [
        ("think", "deep" + THINK_CLOSE + RESPONSE_OPEN + "hi" + RESPONSE_CLOSE, "deep", "hi"),
        ("response", "hi" + RESPONSE_CLOSE + MESSAGE_CLOSE, "", "hi"),
        (None, "plain text, no tags", "", "plain text, no tags"),
        ("think", "plain text, no tags", "plain text, no tags", ""),
        (None, open_tag("message", [("role", "assistant")]) + RESPONSE_OPEN + "x", "", "x"),
    ],
)
def test_where_the_output_starts(opened, text, reasoning, content):
    result = parse_kimi_xtml(text, opened=opened)
    assert (result.reasoning, result.content) == (reasoning, content)


def test_opened_must_be_a_block_name():
    with pytest.raises(ValueError, match="opened"):
        KimiXtmlStreamParser(opened="message")


def test_tools_without_the_think_transition_end_the_reasoning():
    # vllm#53246: the model leaves out <|close|>think<|sep|> and starts its calls
    text = "let me call" + TOOLS_OPEN + xcall("f", 1, ("a", "string", "1")) + TOOLS_CLOSE
    result = parse_kimi_xtml(text, opened="think")
    assert result.reasoning == "let me call"
    assert decoded_calls(result.tool_calls) == [{"name": "f", "arguments": {"a": "1"}}]
    assert len(result.errors) == 1 and "think" in result.errors[0]


# ------------------------------------------------------------------ bad input: errors, no loss


def test_a_cut_off_call_is_not_returned_but_reported_and_whole_calls_are_kept():
    text = TOOLS_OPEN + xcall("first", 1, ("a", "string", "ok"))
    text += open_tag("call", [("tool", "second"), ("index", 2)])
    text += open_tag("argument", [("key", "path"), ("type", "string")]) + "/tmp/fi"
    result = parse_kimi_xtml(text)
    assert decoded_calls(result.tool_calls) == [{"name": "first", "arguments": {"a": "ok"}}]
    assert any("second" in e and "NOT returned" in e and "/tmp/fi" in e for e in result.errors)
    assert any("tools block not closed" in e for e in result.errors)


@pytest.mark.parametrize("closer", [TOOLS_CLOSE, MESSAGE_CLOSE, END_OF_MSG])
def test_a_call_closed_by_an_outer_tag_is_not_whole(closer):
    text = TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 1)]) + closer
    result = parse_kimi_xtml(text)
    assert result.tool_calls == []
    assert any("NOT returned" in e for e in result.errors)


def test_unknown_type_bad_json_and_type_mismatch_are_reported_values_kept():
    text = (
        TOOLS_OPEN
        + xcall(
            "f",
            1,
            ("a", "integer", "2"),
            ("b", "object", "{not json"),
            ("c", "boolean", "1"),
            ("d", "weird", "not json either"),
        )
        + TOOLS_CLOSE
    )
    result = parse_kimi_xtml(text)
    assert decoded_calls(result.tool_calls) == [
        {"name": "f", "arguments": {"a": 2, "b": "{not json", "c": 1, "d": "not json either"}}
    ]
    joined = "\n".join(result.errors)
    assert "unknown type 'integer'" in joined
    assert "type 'object' but the value is not valid JSON" in joined
    assert "type 'boolean' does not match" in joined
    assert "unknown type 'weird'" in joined
    assert len(result.errors) == 4


def test_missing_name_key_and_type_and_duplicate_keys():
    no_name = open_tag("call", [("index", 1)]) + close_tag("call")
    text = TOOLS_OPEN + no_name + xcall("g", 2, ("k", "string", "1"), ("k", "string", "2"))
    text += open_tag("call", [("tool", "h"), ("index", 3)])
    text += open_tag("argument") + "v" + close_tag("argument") + close_tag("call") + TOOLS_CLOSE
    result = parse_kimi_xtml(text)
    assert decoded_calls(result.tool_calls) == [
        {"name": "g", "arguments": {"k": "2"}},
        {"name": "h", "arguments": {"": "v"}},
    ]
    assert [c["id"] for c in result.tool_calls] == ["functions.g:0", "functions.h:1"]
    joined = "\n".join(result.errors)
    for fragment in ("no tool name", "given twice", "no key attribute", "no type attribute"):
        assert fragment in joined


def test_a_json_block_that_is_not_an_object_is_returned_with_an_error():
    text = TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 1)])
    text += open_tag("json", [("type", "object")]) + "[1, 2" + close_tag("json") + close_tag("call")
    result = parse_kimi_xtml(text + TOOLS_CLOSE)
    assert result.tool_calls == [call("functions.f:0", "f", "[1, 2")]
    assert any("json block is not valid JSON" in e for e in result.errors)


def test_a_value_containing_the_closing_marker_is_recovered_when_text_follows():
    value = f"a{close_tag('argument')}b"
    text = TOOLS_OPEN + xcall("f", 1, ("code", "string", value), ("n", "number", "1"))
    result = parse_kimi_xtml(text + TOOLS_CLOSE)
    assert decoded_calls(result.tool_calls) == [{"name": "f", "arguments": {"code": value, "n": 1}}]
    assert len(result.errors) == 1 and "cannot be told from the closing marker" in result.errors[0]
    # a value ending with the marker: a second closing marker follows it directly
    text = TOOLS_OPEN + xcall("f", 1, ("code", "string", f"x{close_tag('argument')}  "))
    result = parse_kimi_xtml(text + TOOLS_CLOSE)
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {
        "code": f"x{close_tag('argument')}  "
    }
    assert len(result.errors) == 1


def test_a_json_block_containing_its_closing_marker_is_recovered_too():
    body = '{"code": "a' + close_tag("json") + 'b"}'
    text = TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 1)])
    text += open_tag("json", [("type", "object")]) + body + close_tag("json") + close_tag("call")
    result = parse_kimi_xtml(text + TOOLS_CLOSE)
    assert result.tool_calls == [call("functions.f:0", "f", body)]
    assert len(result.errors) == 1 and close_tag("json") in result.errors[0]


def test_an_unclosed_argument_before_the_call_closes_keeps_its_value():
    text = TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 1)])
    text += open_tag("argument", [("key", "a"), ("type", "string")]) + "v" + close_tag("call")
    result = parse_kimi_xtml(text + TOOLS_CLOSE)
    assert decoded_calls(result.tool_calls) == [{"name": "f", "arguments": {"a": "v"}}]
    assert len(result.errors) == 1 and "not closed before" in result.errors[0]


def test_problems_name_the_call_and_the_argument():
    untyped = open_tag("argument", [("key", "a")]) + "v" + close_tag("argument")
    unclosed = open_tag("argument", [("key", "b"), ("type", "string")]) + "w"
    text = TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 2)]) + untyped + unclosed
    text += close_tag("call") + open_tag("call", [("tool", "g"), ("index", 2)]) + TOOLS_CLOSE
    assert parse_kimi_xtml(text).errors == [
        f"call 1 (f): argument 'b' not closed before {close_tag('call')}",
        "call 1 (f), argument 'a': no type attribute; read as a string",
        "call 1 (f): index='2', expected '1'",
        f"call 2 (g): no {close_tag('call')} before {TOOLS_CLOSE}: the call is not whole and is "
        "NOT returned (read so far: no arguments)",
    ]


def test_stray_tags_and_text_are_reported_and_skipped():
    text = TOOLS_OPEN + "junk" + close_tag("call") + xcall("f", 1) + SEP + TOOLS_CLOSE
    text += MESSAGE_CLOSE + "after the end"
    result = parse_kimi_xtml(text)
    assert decoded_calls(result.tool_calls) == [{"name": "f", "arguments": {}}]
    joined = "\n".join(result.errors)
    assert "'junk'" in joined and "'after the end'" in joined
    assert f"unexpected {close_tag('call')!r}" in joined and f"unexpected {SEP!r}" in joined


def test_literal_tokens_inside_raw_blocks_stay_text():
    # inside response only <|close|>response, <|close|>message and <|open|>tools mean something
    literal = f"write {OPEN}call{SEP} or {CLOSE}think{SEP} {SEP} {CLOSE}resp{SEP} {OPEN}tool{SEP}"
    result = parse_kimi_xtml(RESPONSE_OPEN + literal + RESPONSE_CLOSE)
    assert result.content == literal
    assert result.errors == []
    value = f"{CLOSE}call {CLOSE}argumen{SEP}{OPEN}argument{SEP}"
    result = parse_kimi_xtml(TOOLS_OPEN + xcall("f", 1, ("v", "string", value)) + TOOLS_CLOSE)
    assert decoded_calls(result.tool_calls) == [{"name": "f", "arguments": {"v": value}}]
    assert result.errors == []


def test_index_attributes_are_checked():
    text = TOOLS_OPEN + xcall("f", 1) + xcall("f", 1) + TOOLS_CLOSE
    result = parse_kimi_xtml(text)
    assert len(result.tool_calls) == 2
    assert result.errors == ["call 2 (f): index='1', expected '2'"]


def test_errors_follow_the_notebook_language():
    from helpers.i18n import reset_language, set_language

    set_language("ru")
    try:
        result = parse_kimi_xtml(TOOLS_OPEN + open_tag("call", [("tool", "f"), ("index", 1)]))
    finally:
        reset_language()
    assert any("НЕ возвращён" in e for e in result.errors)


# --------------------------------------------------------------------------- streaming


def test_a_call_is_emitted_whole_only_when_its_close_arrives():
    parser = KimiXtmlStreamParser(opened="think")
    before_close, rest = WEATHER.split(close_tag("call"), 1)
    deltas = parser.feed(before_close)
    assert not any("tool_calls" in d for d in deltas)
    assert {"reasoning_content": "The user wants two cities."} in deltas
    assert {"content": "Checking both."} in deltas
    deltas = parser.feed(close_tag("call"))
    assert deltas == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"city": "Paris", "days": 3}',
                    },
                }
            ]
        }
    ]
    parser.feed(rest)
    parser.close()
    assert parser.result == parse_kimi_xtml(WEATHER)


def test_feed_after_close_and_result_before_close():
    parser = KimiXtmlStreamParser()
    with pytest.raises(RuntimeError):
        parser.result  # noqa: B018
    parser.close()
    assert parser.close() == []
    with pytest.raises(RuntimeError):
        parser.feed("x")


# ------------------------------------------------------------------ hold-out cases (vLLM, SGLang)

CASES = json.loads(CASES_FILE.read_text(encoding="utf-8"))


def _case_text(case: dict) -> str:
    return case["text"] if "text" in case else "".join(case["stream"]["chunks"])


def _case_chunkings(case: dict) -> list[list[str]]:
    text = _case_text(case)
    spec = case.get("stream", {})
    chunkings = [list(spec["chunks"])] if "chunks" in spec else []
    for size in spec.get("chunk_sizes", []):
        chunkings.append([text[i : i + size] for i in range(0, len(text), size)] or [""])
    chunkings += [list(text), [text]]  # one character at a time, and whole
    return chunkings


def _observed(result: ParseResult, expect: dict) -> dict:
    """The parts of a result that the case asserts."""
    seen: dict = {}
    if "content" in expect:
        seen["content"] = result.content
    if "reasoning" in expect:
        seen["reasoning"] = result.reasoning
    if "calls" in expect:
        seen["calls"] = decoded_calls(result.tool_calls)
    return seen


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda case: case["id"])
def test_engine_hold_out_case(case):
    expect = case["expect"]
    wanted = {**expect, **case.get("ours", {})}
    assert set(wanted) == set(expect), "a difference must restate only asserted fields"
    if "ours" in case:  # a deliberate difference: it must really differ, and have a reason
        assert wanted != expect and case["why"]
    whole = parse_kimi_xtml(_case_text(case), opened=case["opened"])
    assert _observed(whole, wanted) == wanted
    for chunks in _case_chunkings(case):
        parser = KimiXtmlStreamParser(opened=case["opened"])
        parser, accumulator, _ = stream(parser, chunks)
        assert parser.result == whole
        assert _observed(parser.result, wanted) == wanted
        assert accumulator.content == whole.content
        assert accumulator.reasoning == whole.reasoning
        assert accumulator.tool_calls == whole.tool_calls


def test_hold_out_cases_name_their_sources():
    sources = CASES["sources"]
    assert {c["source"] for c in CASES["cases"]} == set(sources)
    for source in sources.values():
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["license"] == "Apache-2.0"
    assert (CASES_FILE.parent / "kimi_k3_cases.LICENSE.md").exists()


# --------------------------------------------------------------------------- the renderer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": 'Weather for a city & "quotes" <ok>',
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calc",
            "description": "Evaluate an expression.",
            "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}},
        },
    },
]


PARALLEL = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Weather in Paris, and 6*7?"},
    {
        "role": "assistant",
        "reasoning_content": "Both tools, at once.",
        "content": "",
        "tool_calls": [
            call("w1", "get_weather", {"city": "Paris", "days": 2}),
            call("c1", "calc", {"expr": "6*7"}),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "42"},
    {"role": "tool", "tool_call_id": "w1", "content": '{"temp": 21}'},
    {"role": "assistant", "reasoning_content": "Done.", "content": "21 °C; 42."},
    {"role": "user", "content": "Again, in Oslo? 🌧"},
]


def test_the_render_of_a_conversation_with_parallel_calls_and_results():
    text = render_kimi_xtml(PARALLEL, tools=TOOLS)
    declare = open_tag("message", [("role", "system"), ("type", "tool-declare")])
    assert text.startswith(declare + "# Tools\nHere are the available tools")
    tools_json = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(tools_json) == TOOLS
    assert tools_json == json.dumps(TOOLS, sort_keys=True, separators=(",", ":"))
    assert "thinking_effort=max" in text
    assert text.count(END_OF_MSG) == 2 + len(PARALLEL)  # + declaration + effort
    assert (
        xcall("get_weather", 1, ("city", "string", "Paris"), ("days", "number", "2"))
        + xcall("calc", 2, ("expr", "string", "6*7"))
    ) in text
    # results in the order of the calls, each with its call's tool and index
    first = text.index(
        open_tag("message", [("role", "tool"), ("tool", "get_weather"), ("index", 1)])
    )
    second = text.index(open_tag("message", [("role", "tool"), ("tool", "calc"), ("index", 2)]))
    assert first < second
    assert "w1" not in text and "c1" not in text  # no ids in K3's text
    assert text.endswith(open_tag("message", [("role", "assistant")]) + open_tag("think"))
    assert "<|open|>think<|sep|>Both tools, at once.<|close|>think<|sep|>" in text


def test_thinking_off_opens_the_response_and_drops_think_blocks():
    text = render_kimi_xtml(PARALLEL, tools=TOOLS, thinking=False)
    assert open_tag("think") not in text and "thinking_effort" not in text
    assert text.endswith(open_tag("message", [("role", "assistant")]) + RESPONSE_OPEN)


@pytest.mark.parametrize(
    ("choice", "sentence"),
    [
        ("required", "You MUST call tools in the next message."),
        ("none", "You MUST NOT call any tools in the next message."),
    ],
)
def test_tool_choice_is_a_system_option_message(choice, sentence):
    text = render_kimi_xtml([{"role": "user", "content": "hi"}], tools=TOOLS, tool_choice=choice)
    option = open_tag("message", [("role", "system"), ("type", "tool-choice")])
    assert option + f"The system is invoked with `tool_choice={choice}`.\n{sentence}" in text
    assert text.index(option) > text.index(open_tag("message", [("role", "user")]))


@pytest.mark.parametrize("choice", ["auto", None, {"type": "function", "function": {"name": "x"}}])
def test_auto_and_named_choices_write_nothing(choice):
    messages = [{"role": "user", "content": "hi"}]
    assert render_kimi_xtml(messages, tool_choice=choice) == render_kimi_xtml(messages)
    assert "tool-choice" not in render_kimi_xtml(messages, tool_choice=choice)


def test_renderer_errors():
    with pytest.raises(ValueError, match="role 'developer'"):
        render_kimi_xtml([{"role": "developer", "content": "x"}])
    with pytest.raises(ValueError, match="thinking_effort"):
        render_kimi_xtml([], thinking_effort="medium")
    with pytest.raises(ValueError, match="tool name"):
        render_kimi_xtml([{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}])
    bad = {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": {}}}]}
    with pytest.raises(ValueError, match="no function name"):
        render_kimi_xtml([bad])


def test_json_text_arguments_render_as_typed_elements_other_text_as_a_json_block():
    as_dict = {"role": "assistant", "tool_calls": [call("a", "f", {"x": 1, "s": "t"})]}
    as_text = {"role": "assistant", "tool_calls": [call("a", "f", '{"x": 1, "s": "t"}')]}
    assert render_kimi_xtml([as_text]) == render_kimi_xtml([as_dict])
    broken = {"role": "assistant", "tool_calls": [call("a", "f", '{"x": 1')]}
    assert open_tag("json", [("type", "object")]) + '{"x": 1' + close_tag("json") in (
        render_kimi_xtml([broken])
    )


# ------------------------------------------------------- against llama.cpp's Kimi-K3.jinja


def render_template(messages, tools=None, **kwargs) -> str:
    """llama.cpp's K3 template, rendered by transformers' Jinja environment."""
    from helpers._hf import import_transformers

    import_transformers()
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        conversations=[messages],
        tools=tools,
        chat_template=TEMPLATE_FILE.read_text(encoding="utf-8"),
        **kwargs,
    )
    return rendered[0]


SIMPLE = [{"role": "user", "content": "Hello"}]
ONE_CALL_ROUND = [
    {"role": "user", "name": "ann", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [call("x", "get_weather", {"city": "Paris"})]},
    {"role": "tool", "tool_call_id": "x", "content": "sunny"},
]  # fmt: skip
UNMATCHED_RESULTS = [
    {"role": "user", "content": "two things"},
    {"role": "assistant", "tool_calls": [call("a", "calc", {"expr": "1"}), call("b", "calc", {"expr": "2"})]},
    {"role": "tool", "name": "calc", "content": "1"},
    {"role": "tool", "content": [{"type": "text", "text": "2"}]},
    {"role": "system", "tools": [TOOLS[1]], "content": ""},
    {"role": "assistant", "reasoning": "  ", "content": [{"type": "text", "text": "ok"}]},
]  # fmt: skip
CONVERSATIONS = {
    "simple": (SIMPLE, None),
    "parallel-calls-and-results": (PARALLEL, TOOLS),
    "one-call-round": (ONE_CALL_ROUND, TOOLS),
    "results-by-position-dynamic-tools": (UNMATCHED_RESULTS, TOOLS),
}
OPTIONS = {
    "thinking": {},
    "no-thinking": {"thinking": False},
    "low-effort-required": {"thinking_effort": "low", "tool_choice": "required"},
    "no-effort-none-choice": {"thinking_effort": None, "tool_choice": "none"},
    "history-only": {"add_generation_prompt": False},
    "json-schema": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "a", "schema": {"type": "object", "required": ["b"]}},
        }
    },
    "json-object": {"response_format": {"type": "json_object"}},
}


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
@pytest.mark.parametrize("conversation", CONVERSATIONS.values(), ids=CONVERSATIONS.keys())
def test_render_matches_llama_cpp_template(conversation, options):
    messages, tools = conversation
    kwargs = {"add_generation_prompt": True, **options}
    assert render_kimi_xtml(messages, tools=tools, **kwargs) == render_template(
        messages, tools=tools, **kwargs
    )


def test_known_difference_key_order_ignores_case_in_the_template():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"B": 1, "a": 2}}}]
    ours = render_kimi_xtml(SIMPLE, tools=tools)
    theirs = render_template(SIMPLE, tools=tools, add_generation_prompt=True)
    assert '"parameters":{"B":1,"a":2}' in ours  # sort_keys: by code point
    assert '"parameters":{"a":2,"B":1}' in theirs  # Jinja's dictsort ignores case
    assert ours.replace('{"B":1,"a":2}', '{"a":2,"B":1}') == theirs


def test_known_difference_non_string_values_are_compact_json():
    arguments = {"opts": {"a": 1, "b": [1, 2]}, "n": 3}
    messages = [{"role": "assistant", "tool_calls": [call("i", "f", arguments)]}]
    ours = render_kimi_xtml(messages, add_generation_prompt=False)
    theirs = render_template(messages, add_generation_prompt=False)
    assert '"object"<|sep|>{"a":1,"b":[1,2]}<|close|>' in ours
    assert '"object"<|sep|>{"a": 1, "b": [1, 2]}<|close|>' in theirs
    assert ours.replace('{"a":1,"b":[1,2]}', '{"a": 1, "b": [1, 2]}') == theirs


def test_known_difference_json_text_arguments():
    messages = [{"role": "assistant", "tool_calls": [call("i", "f", '{"city": "Paris"}')]}]
    theirs = render_template(messages, add_generation_prompt=False)
    assert open_tag("json", [("type", "object")]) + '{"city": "Paris"}' in theirs
    assert render_kimi_xtml(messages, add_generation_prompt=False) == render_template(
        [{"role": "assistant", "tool_calls": [call("i", "f", {"city": "Paris"})]}],
        add_generation_prompt=False,
    )


# --------------------------------------------------------------------------- properties

_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"]) | st.sampled_from(["<", "|", ">", "&", '"', "\n"]),
    max_size=12,
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_TEXT, children, max_size=3),
    max_leaves=8,
)
_ARGUMENTS = st.dictionaries(_TEXT, _VALUES, max_size=4)
# Raw blocks cannot hold their own closing marker; anything else, literal tokens included, is fine.
_BODY = st.text(max_size=20).filter(lambda t: CLOSE not in t and OPEN not in t)


@st.composite
def assistant_turns(draw) -> dict:
    calls = draw(
        st.lists(st.tuples(NAMES, _ARGUMENTS), max_size=4).map(
            lambda items: [call(f"id{i}", n, a) for i, (n, a) in enumerate(items)]
        )
    )
    message = {"role": "assistant", "content": draw(_BODY), "reasoning_content": draw(_BODY)}
    if calls:
        message["tool_calls"] = calls
    return message


def _free_of_the_known_ambiguity(message: dict) -> bool:
    """A value holding `<|close|>` could hold `<|close|>argument<|sep|>`, and a key holding any
    token text ends its tag header (both in the module doc)."""
    if CLOSE in json.dumps(message, ensure_ascii=False):
        return False
    arguments = [c["function"]["arguments"] for c in message.get("tool_calls", [])]
    keys = [k for a in arguments for k in (a if isinstance(a, dict) else json.loads(a))]
    return not any(token in key for key in keys for token in XTML_TOKENS)


def test_a_key_holding_a_token_text_is_reported_not_returned_silently() -> None:
    # The second known ambiguity: `<|open|>` inside an attribute ends the header as text.
    turn = {"role": "assistant", "content": ""}
    turn["tool_calls"] = [call("id0", "A", {"<|open|>": None, "city": "Paris"})]
    rendered = render_kimi_xtml([turn], add_generation_prompt=False, thinking=False)
    opener = open_tag("message", [("role", "assistant")]) + open_tag("response")
    result = parse_kimi_xtml(rendered[len(opener) :], opened="response")
    assert any("could not read" in error for error in result.errors)
    assert decoded_calls(result.tool_calls) == [{"name": "A", "arguments": {"city": "Paris"}}]


@FAST
@given(turn=assistant_turns(), thinking=st.booleans(), offset=st.integers(0, 5))
def test_round_trip_render_then_parse_gives_the_calls_back(turn, thinking, offset):
    assume(_free_of_the_known_ambiguity(turn))
    rendered = render_kimi_xtml(
        [turn], add_generation_prompt=False, thinking=thinking, thinking_effort=None
    )
    opener = open_tag("message", [("role", "assistant")]) + open_tag(
        "think" if thinking else "response"
    )
    assert rendered.startswith(opener)
    output = rendered[len(opener) :]  # what the model generates after the generation prompt
    result = parse_kimi_xtml(output, opened="think" if thinking else "response", call_offset=offset)
    assert result.errors == []
    calls = turn.get("tool_calls", [])
    assert decoded_calls(result.tool_calls) == [
        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in calls
    ]
    assert [c["id"] for c in result.tool_calls] == [
        f"functions.{c['function']['name']}:{offset + i}" for i, c in enumerate(calls)
    ]
    assert result.content == turn["content"].strip()
    assert result.reasoning == (turn["reasoning_content"].strip() if thinking else "")


_PIECES = st.sampled_from(
    [OPEN, CLOSE, SEP, END_OF_MSG, "think", "response", "tools", "message", "argument", "json",
     'call tool="f" index="1"', 'argument key="k" type="string"', 'argument key="n" type="number"',
     'json type="object"', "call", " ", "x", "{", "1", "<|", "&amp;", "resp", "argumen", "tool"]
)  # fmt: skip


@st.composite
def xtml_soup(draw) -> str:
    """Mostly-XTML text: rendered turns cut, spliced and sprinkled with tokens and words."""
    base = render_kimi_xtml([draw(assistant_turns())], add_generation_prompt=False)
    pieces = draw(st.lists(_PIECES, max_size=12))
    cut = draw(st.integers(0, len(base)))
    where = draw(st.integers(0, cut))
    return base[:where] + "".join(pieces) + base[where:cut]


@FAST
@given(
    text=xtml_soup(),
    cuts=st.lists(st.integers(0, 400), max_size=12),
    opened=st.sampled_from([None, "think", "response"]),
)
def test_any_chunked_stream_equals_the_whole_parse(text, cuts, opened):
    whole = parse_kimi_xtml(text, opened=opened)
    parser, accumulator, deltas = streamed(text, [c % (len(text) + 1) for c in cuts], opened=opened)
    assert parser.result == whole
    assert accumulator.content == whole.content
    assert accumulator.reasoning == whole.reasoning
    assert accumulator.tool_calls == whole.tool_calls
    # every call arrives in exactly one delta, whole
    call_deltas = [piece for d in deltas for piece in d.get("tool_calls", [])]
    assert [p["function"]["arguments"] for p in call_deltas] == [
        c["function"]["arguments"] for c in whole.tool_calls
    ]


@FAST
@given(text=st.text(max_size=60), opened=st.sampled_from([None, "think", "response"]))
def test_plain_text_never_loses_a_character(text, opened):
    result = parse_kimi_xtml(text, opened=opened)
    if not any(token in text for token in (OPEN, CLOSE, SEP, END_OF_MSG)):
        assert (result.reasoning if opened == "think" else result.content) == text.strip()
        assert result.tool_calls == []


# ------------------------------------------------------------- an independent engine oracle
# How vLLM's and SGLang's `kimi_k3` parsers read a whole output, re-written here from their
# documented behaviour (facts sheet and the parsers' docstrings): the first tools block, every
# `call` up to the first `<|close|>call<|sep|>`, every `argument` up to the first
# `<|close|>argument<|sep|>`, strings raw, other types JSON (raw text when it is not JSON),
# attributes unescaped `&quot;` then `&amp;`. They do not read `json` blocks.

_O_CALL = re.compile(
    r"<\|open\|>call\s+((?:(?!<\|sep\|>).)*?)<\|sep\|>(.*?)<\|close\|>call<\|sep\|>", re.DOTALL
)
_O_ARG = re.compile(
    r"<\|open\|>argument\s+((?:(?!<\|sep\|>).)*?)<\|sep\|>(.*?)<\|close\|>argument<\|sep\|>",
    re.DOTALL,
)
_O_ATTR = re.compile(r'(\w+)="([^"]*)"')


def oracle_calls(text: str) -> list[dict]:
    start = text.find(TOOLS_OPEN)
    if start < 0:
        return []
    section = text[start + len(TOOLS_OPEN) :]
    end = section.find(TOOLS_CLOSE)
    section = section if end < 0 else section[:end]
    calls = []
    for attrs, body in _O_CALL.findall(section):
        names = {
            k: v.replace("&quot;", '"').replace("&amp;", "&") for k, v in _O_ATTR.findall(attrs)
        }
        arguments = {}
        for arg_attrs, raw in _O_ARG.findall(body):
            a = {
                k: v.replace("&quot;", '"').replace("&amp;", "&")
                for k, v in _O_ATTR.findall(arg_attrs)
            }
            if a.get("type", "string") == "string":
                arguments[a.get("key", "")] = raw
            else:
                try:
                    arguments[a.get("key", "")] = json.loads(raw)
                except ValueError:
                    arguments[a.get("key", "")] = raw
        if names.get("tool"):
            calls.append({"name": names["tool"], "arguments": arguments})
    return calls


@FAST
@given(turn=assistant_turns(), thinking=st.booleans())
def test_well_formed_outputs_read_as_the_engines_read_them(turn, thinking):
    assume(_free_of_the_known_ambiguity(turn))
    text = render_kimi_xtml(
        [turn], add_generation_prompt=False, thinking=thinking, thinking_effort=None
    )
    result = parse_kimi_xtml(text)  # the whole assistant message, from its open tag
    assert result.errors == []
    assert decoded_calls(result.tool_calls) == oracle_calls(text)
    for engine_call, ours in zip(oracle_calls(text), result.tool_calls, strict=True):
        # the arguments text itself is what the engines send: json.dumps(..., ensure_ascii=False)
        assert ours["function"]["arguments"] == json.dumps(
            engine_call["arguments"], ensure_ascii=False
        )
