"""Tests of helpers.formats.qwen_xml: the Qwen3-Coder / Qwen3.5 XML tool-call format."""

from __future__ import annotations

import ast
import json
import re
import warnings

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from helpers.formats import (
    ParseResult,
    QwenXmlStreamParser,
    convert_parameter,
    parse_qwen_xml,
    render_hermes_tool_calls,
    render_qwen_xml_tool_calls,
)
from helpers.formats.qwen_xml import QWEN_XML_TAGS
from helpers.i18n import reset_language, set_language
from tests.formats_support import FAST, NAMES, assert_stream_matches, call, split_at, stream

# --------------------------------------------------------------------------- a vLLM oracle
# An independent re-implementation of how vLLM's `qwen3_coder` parser reads a whole, well-behaved
# output (vllm/tool_parsers/qwen3coder_tool_parser.py @00d0a333): its regular expressions and
# its conversions, written from the documented behaviour. Values holding tag-like text are left
# to vLLM's own published cases (tests/engine_cases/, test_formats_engine_cases.py).

_V_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$", re.DOTALL)
_V_FUNCTION = re.compile(r"<function=(.*?)</function>|<function=(.*)$", re.DOTALL)
_V_PARAMETER = re.compile(
    r"<parameter=(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|$)", re.DOTALL
)


def _v_convert(value: str, key: str, config: dict) -> object:
    """vLLM's `_convert_param_value` (@00d0a333), written out branch by branch."""
    if key not in config:
        return value
    kind = str(config[key].get("type", "string")).strip().lower()
    if kind in ("string", "str", "text", "varchar", "char", "enum"):
        return value
    if value.lower() in ("null", "none"):
        return None
    if kind.startswith(("int", "uint", "long", "short", "unsigned")):
        try:
            return int(value)
        except ValueError:
            return value
    if kind.startswith(("num", "float")):
        try:
            number = float(value)
            return number if number - int(number) != 0 else int(number)
        except (ValueError, OverflowError):
            return value
    if kind in ("boolean", "bool", "binary"):
        return value.lower() == "true"
    if kind in ("object", "array", "arr") or kind.startswith(("dict", "list")):
        try:
            return json.loads(value)
        except ValueError:
            pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def vllm_qwen3_coder(text: str, tools: list[dict] | None) -> tuple[str | None, list[tuple]]:
    """(content, [(name, arguments object)]) as vLLM's qwen3_coder parser extracts them."""
    if "<function=" not in text:
        return text, []
    blocks = [a or b for a, b in _V_CALL.findall(text)] or [text]
    functions = [a or b for block in blocks for a, b in _V_FUNCTION.findall(block)]
    calls = []
    for function in functions:
        name, body = function[: function.index(">")], function[function.index(">") + 1 :]
        config = {}
        for tool in tools or []:
            if tool["function"]["name"] == name:
                config = tool["function"].get("parameters", {}).get("properties", {})
        arguments = {}
        for match in _V_PARAMETER.findall(body):
            key, value = match[: match.index(">")], match[match.index(">") + 1 :]
            value = value.removeprefix("\n").removesuffix("\n")
            arguments[key] = _v_convert(value, key, config) if tools is not None else value
        calls.append((name, json.loads(json.dumps(arguments))))  # vLLM sends json.dumps(...)
    start = text.find("<tool_call>")
    content = text[: start if start >= 0 else text.find("<function=")]
    return content or None, calls


def ours(text: str, tools: list[dict] | None = None) -> tuple[str | None, list[tuple]]:
    """The same view of `parse_qwen_xml` (content None when empty, arguments loaded)."""
    result = parse_qwen_xml(text, tools)
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.tool_calls
    ]
    return result.content or None, calls


# --------------------------------------------------------------------------- cases

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                    "lat": {"type": "number"},
                    "hours": {"type": "array"},
                    "filters": {"type": "object"},
                },
            },
        },
    },
    {"type": "function", "function": {"name": "note", "parameters": {"type": "object"}}},
]

FACTS_EXAMPLE = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)


def xml_call(name: str, **params: str) -> str:
    """One well-formed call as the template writes it, values as given (text)."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


VLLM_CASES = {
    "the documented example": FACTS_EXAMPLE,
    "typed values": xml_call(
        "get_weather",
        city="Paris",
        days="3",
        metric="true",
        lat="48.0",
        hours="[6, 12]",
        filters='{"rain": true}',
    ),
    "Python literals in containers": xml_call(
        "get_weather", hours="(1, 2)", filters="{'wind': None, 'sun': True}"
    ),
    "failed conversions degenerate to strings": xml_call(
        "get_weather", days="three", lat="nan", hours="[oops", filters="{bad"
    ),
    "booleans other than true": xml_call("get_weather", metric="yes")
    + "\n"
    + xml_call("get_weather", metric="TRUE"),
    "null for every type but strings": xml_call(
        "get_weather", city="null", days="NULL", hours="None"
    ),
    "parameter not in the schema": xml_call("get_weather", extra="42", city="Oslo"),
    "function not in the tools": xml_call("unknown", days="3"),
    "several calls": "Checking both.\n\n"
    + xml_call("get_weather", city="Paris")
    + "\n"
    + xml_call("get_weather", city="Lima", days="2"),
    "newlines in values": xml_call("note", text="line one\nline two\n\n  indented"),
    "only one newline stripped each side": "<tool_call>\n<function=note>\n<parameter=text>\n\n"
    "padded\n\n</parameter>\n</function>\n</tool_call>",
    "unclosed last call": FACTS_EXAMPLE
    + "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n",
    "unclosed parameter at the end": "<tool_call>\n<function=get_weather>\n<parameter=city>\nRo",
    "parameter closed by the next one": "<tool_call>\n<function=get_weather>\n"
    "<parameter=city>\nOslo\n<parameter=days>\n4\n</parameter>\n</function>\n</tool_call>",
    "bare function blocks": "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n<function=note>\n</function>",
    "a call with no parameters": "<tool_call>\n<function=note>\n</function>\n</tool_call>",
    "no calls at all": "It is sunny in Paris.",
}


@pytest.mark.parametrize("tools", [TOOLS, None], ids=["with tools", "without tools"])
@pytest.mark.parametrize("case", sorted(VLLM_CASES))
def test_agrees_with_vllm_qwen3_coder(case: str, tools: list | None) -> None:
    text = VLLM_CASES[case]
    content, calls = vllm_qwen3_coder(text, tools)
    assert ours(text, tools) == (content.strip() if content else None, calls)


def test_the_documented_example_types_days_as_an_integer() -> None:
    result = parse_qwen_xml(FACTS_EXAMPLE, TOOLS)
    assert result == ParseResult(
        "", [call("call_0", "get_weather", '{"city": "Paris", "days": 3}')]
    )
    assert parse_qwen_xml(FACTS_EXAMPLE).tool_calls[0]["function"]["arguments"] == (
        '{"city": "Paris", "days": "3"}'
    )


def test_typed_values_match_the_documented_rules() -> None:
    _, [(_, arguments)] = ours(VLLM_CASES["typed values"], TOOLS)
    assert arguments == {
        "city": "Paris",
        "days": 3,
        "metric": True,
        "lat": 48,  # a whole number is reduced to an int
        "hours": [6, 12],
        "filters": {"rain": True},
    }
    assert isinstance(arguments["lat"], int)


def test_conversion_notes_go_to_errors() -> None:
    result = parse_qwen_xml(VLLM_CASES["failed conversions degenerate to strings"], TOOLS)
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {
        "days": "three",
        "lat": "nan",
        "hours": "[oops",
        "filters": "{bad",
    }
    assert len(result.errors) == 4
    assert any("'three' is not an integer" in e for e in result.errors)
    unknown = parse_qwen_xml(VLLM_CASES["parameter not in the schema"], TOOLS)
    assert unknown.errors == [
        "call 0 (id 'call_0', 'get_weather'), parameter 'extra': "
        "is not in the tool's schema; kept as a string"
    ]


def test_unclosed_call_is_parsed_and_reported() -> None:
    result = parse_qwen_xml(VLLM_CASES["unclosed last call"], TOOLS)
    assert [c["id"] for c in result.tool_calls] == ["call_0", "call_1"]
    assert result.tool_calls[1]["function"]["arguments"] == '{"city": "Rome"}'
    assert len(result.errors) == 2
    assert "no </function> at the end of the text" in result.errors[0]
    assert "<tool_call> block without </tool_call>" in result.errors[1]


def test_content_is_the_text_outside_the_calls() -> None:
    text = "Before.\n" + FACTS_EXAMPLE + "\nAfter."
    assert parse_qwen_xml(text).content == "Before.\n\nAfter."


def test_a_repeated_parameter_keeps_the_last_value_and_is_reported() -> None:
    text = (
        "<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>"
    )
    result = parse_qwen_xml(text)
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"a": "2"}
    assert result.errors == [
        "call 0 (id 'call_0', 'f'), parameter 'a': written twice; the last value wins"
    ]


@pytest.mark.parametrize(
    "value",
    ["[" * 5000, "(" * 200 + ")" * 200, "1" * 6000, "{'a': " * 300, "[" + "1," * 20000 + "]"],
)
def test_literal_eval_is_guarded(value: str) -> None:
    converted, note = convert_parameter(value, "filters", {"filters": {"type": "object"}})
    assert converted == value and note and "kept as a string" in note


def test_convert_parameter_never_evaluates_code() -> None:
    value = "__import__('os').system('echo hi')"
    assert convert_parameter(value, "x", {"x": {"type": "object"}})[0] == value


FAILURE_INPUTS = [
    "<tool_call>",
    "</tool_call>",
    "</function>",
    "</parameter>",
    "<parameter=x>1</parameter>",
    "<function=",
    "<function=f",
    "<function=f<parameter=x>1</parameter></function>",
    "<tool_call><tool_call><function=f></function></tool_call>",
    "<tool_call>junk<function=f>junk</function>junk</tool_call>",
    "<function=f><parameter=x</function>",
    "<function=get_weather><parameter=filters>" + "[" * 3000 + "</parameter></function>",
]


@pytest.mark.parametrize("text", FAILURE_INPUTS)
def test_failure_inputs_give_errors_never_exceptions(text: str) -> None:
    result = parse_qwen_xml(text, TOOLS)
    assert result.errors
    assert all(isinstance(error, str) and error for error in result.errors)
    for call_ in result.tool_calls:
        json.loads(call_["function"]["arguments"])  # always a JSON object text
    assert_stream_matches_batch(text, list(text), TOOLS)


# --------------------------------------------------------------------------- renderer


def test_render_equals_the_documented_example() -> None:
    calls = [call("x", "get_weather", '{"city": "Paris", "days": 3}')]
    assert render_qwen_xml_tool_calls(calls) == FACTS_EXAMPLE


def test_render_with_content_and_two_calls() -> None:
    calls = [call("a", "f", '{"x": "é", "n": [1, 2]}'), call("b", "g", "{}")]
    assert render_qwen_xml_tool_calls(calls, "Let me look.") == (
        "Let me look.\n\n<tool_call>\n<function=f>\n<parameter=x>\né\n</parameter>\n"
        "<parameter=n>\n[1, 2]\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=g>\n</function>\n</tool_call>"
    )


def test_render_rejects_arguments_that_are_not_an_object() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        render_qwen_xml_tool_calls([call("a", "f", "{oops")])
    with pytest.raises(ValueError, match="must be a JSON object"):
        render_qwen_xml_tool_calls([call("a", "f", "[1]")])


def test_render_errors_follow_the_notebook_language() -> None:
    set_language("ru")  # lessons 05 and 07 call the renderers in the Russian edition too
    try:
        with pytest.raises(ValueError, match="некорректный JSON"):
            render_qwen_xml_tool_calls([call("a", "f", "{oops")])
        with pytest.raises(ValueError, match="должны быть JSON-объектом"):
            render_qwen_xml_tool_calls([call("a", "f", "[1]")])
        with pytest.raises(ValueError, match="некорректный JSON"):
            render_hermes_tool_calls([call("a", "f", "{oops")])
    finally:
        reset_language()


# --------------------------------------------------------------------------- properties


def assert_stream_matches_batch(
    text: str, chunks: list[str], tools: list | None = None, reasoning_open: bool | None = None
) -> None:
    """The streaming contract: any split gives the batch result, deltas and `.result` alike."""
    expected = parse_qwen_xml(text, tools, reasoning_open)
    assert_stream_matches(QwenXmlStreamParser(tools, reasoning_open), expected, chunks)


def contains_tag(text: str) -> bool:
    """True when an XML tag of the format (or a think tag) occurs in text."""
    return any(tag in text for tag in (*QWEN_XML_TAGS, "<think>", "</think>"))


KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
VALUES = st.one_of(
    st.text(max_size=20),
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 99), max_size=3),
    st.dictionaries(KEYS, st.text(max_size=5), max_size=2),
)


@st.composite
def xml_calls(draw: st.DrawFn) -> list[dict]:
    """Random calls with ids as the parser invents them; values of several JSON types."""
    calls = []
    for index in range(draw(st.integers(0, 3))):
        arguments = draw(st.dictionaries(KEYS, VALUES, max_size=4))
        text = json.dumps(arguments, ensure_ascii=False)
        assume(not contains_tag(text) and ">" not in draw(NAMES))
        calls.append(call(f"call_{index}", draw(NAMES), text))
    return calls


def typed_tools(calls: list[dict]) -> list[dict]:
    """A tool list whose schemas give every rendered parameter the type of its value."""
    kinds = {bool: "boolean", int: "integer", list: "array", dict: "object", str: "string"}
    tools = []
    for c in calls:
        arguments = json.loads(c["function"]["arguments"])
        properties = {
            k: {"type": "null" if v is None else kinds.get(type(v), "string")}
            for k, v in arguments.items()
        }
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "parameters": {"properties": properties},
                },
            }
        )
    return tools


CONTENT = st.text(max_size=40).filter(lambda text: not contains_tag(text))


@FAST
@given(calls=xml_calls(), content=CONTENT)
def test_render_then_parse_round_trips_with_the_schema(calls: list[dict], content: str) -> None:
    # One name per call so each schema is its own; strings that look like null are skipped.
    names = [c["function"]["name"] for c in calls]
    assume(len(set(names)) == len(names))
    for c in calls:
        values = json.loads(c["function"]["arguments"]).values()
        assume(all(not (isinstance(v, str) and v.lower() == "null") for v in values))
    text = render_qwen_xml_tool_calls(calls, content)
    result = parse_qwen_xml(text, typed_tools(calls))
    assert result.content == content.strip()
    assert result.errors == []
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.tool_calls
    ] == [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@FAST
@given(content=CONTENT, data=st.data())
def test_string_values_round_trip_without_tools(content: str, data: st.DataObject) -> None:
    arguments = data.draw(st.dictionaries(KEYS, st.text(max_size=20), max_size=4))
    assume(not any(contains_tag(v) for v in arguments.values()))
    calls = [call("call_0", "f", json.dumps(arguments))]
    result = parse_qwen_xml(render_qwen_xml_tool_calls(calls, content))
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == arguments


SOUP_PIECES = st.one_of(
    st.sampled_from((*QWEN_XML_TAGS, "<think>", "</think>")),
    st.sampled_from(["<tool_c", "<function", "</param", "<", "</", ">", "=", "f>", "x>"]),
    # declared names (TOOLS), so tags inside values meet the schema filter both ways
    st.sampled_from(
        ["get_weather>", "city>", "days>", "<parameter=city>", "<function=get_weather>"]
    ),
    st.sampled_from(["3", "true", "null", "[1, 2]", "{'a': 1}", "Paris"]),
    st.sampled_from([" ", "\n", "\u3000", "x"]),
    st.text(max_size=6),
)
SOUP = st.lists(SOUP_PIECES, max_size=30).map("".join)


@FAST
@given(text=SOUP, data=st.data())
def test_any_split_gives_the_batch_result(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    reasoning_open = data.draw(st.sampled_from([None, True, False]))
    assert_stream_matches_batch(text, split_at(text, cuts), TOOLS, reasoning_open)
    assert_stream_matches_batch(text, split_at(text, cuts), None, reasoning_open)


@FAST
@given(calls=xml_calls(), content=CONTENT, data=st.data())
def test_streamed_realistic_output_gives_the_calls(
    calls: list[dict], content: str, data: st.DataObject
) -> None:
    text = render_qwen_xml_tool_calls(calls, content)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    assert_stream_matches_batch(text, split_at(text, cuts), typed_tools(calls))


@FAST
@given(text=st.text(max_size=200) | SOUP)
def test_garbage_never_raises(text: str) -> None:
    result = parse_qwen_xml(text, TOOLS)
    assert result.content == result.content.strip()
    assert [c["id"] for c in result.tool_calls] == [
        f"call_{i}" for i in range(len(result.tool_calls))
    ]
    for c in result.tool_calls:
        assert isinstance(json.loads(c["function"]["arguments"]), dict)


# --------------------------------------------------------------------------- stream specifics


def test_header_is_sent_at_the_name_and_each_parameter_when_the_next_tag_shows_it_ended() -> None:
    # A </parameter> ends the value only if a declared parameter, </function> or the end of the
    # text follows it (vLLM's rule, so that a value may hold "</parameter>" as text).
    parser = QwenXmlStreamParser(TOOLS)
    assert parser.feed("Checking.\n\n<tool_call>\n<function=get_wea") == [{"content": "Checking."}]
    assert parser.feed("ther>\n<parameter=city>\nPar") == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    ]
    assert parser.feed("is\n</parameter>\n<param") == []
    assert parser.feed("eter=days>\n3\n</parameter>\n</function>") == [
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris", "days": 3}'}}]}
    ]
    assert parser.feed("\n</tool_call>") == []
    assert parser.close() == []
    assert parser.result.errors == []


# --------------------------------------------------------------------------- thinking (Qwen3.5)

QWEN35_OUTPUT = (  # the generation prompt ended with "<think>\n": the output starts inside it
    "The user wants Paris.\n</think>\n\n" + FACTS_EXAMPLE
)


def test_qwen35_output_starts_inside_the_reasoning() -> None:
    result = parse_qwen_xml(QWEN35_OUTPUT, TOOLS)
    assert result.reasoning == "The user wants Paris."
    assert result.content == ""
    assert result.tool_calls == [call("call_0", "get_weather", '{"city": "Paris", "days": 3}')]
    assert result.errors == []
    assert parse_qwen_xml(QWEN35_OUTPUT, TOOLS, reasoning_open=True) == result


def test_an_unclosed_think_ends_at_the_tool_call() -> None:
    result = parse_qwen_xml("<think>\nI should call it.\n" + FACTS_EXAMPLE, TOOLS)
    assert result.reasoning == "I should call it."
    assert len(result.tool_calls) == 1 and result.errors == []


def test_without_think_tags_nothing_is_reasoning() -> None:
    assert parse_qwen_xml(FACTS_EXAMPLE).reasoning == ""
    assert parse_qwen_xml("plain answer", reasoning_open=True).reasoning == "plain answer"


def test_reasoning_streams_as_reasoning_content_deltas_first() -> None:
    parser = QwenXmlStreamParser(TOOLS, reasoning_open=True)
    deltas = parser.feed("The user wants ") + parser.feed("Paris.\n</think>\n\n")
    deltas += parser.feed(FACTS_EXAMPLE) + parser.close()
    assert deltas[0] == {"reasoning_content": "The user wants"}
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "The user wants Paris."
    assert [d for d in deltas if "tool_calls" in d][0]["tool_calls"][0]["id"] == "call_0"


@FAST
@given(calls=xml_calls(), content=CONTENT, thought=CONTENT, data=st.data())
def test_streamed_thinking_output_gives_the_reasoning_and_the_calls(
    calls: list[dict], content: str, thought: str, data: st.DataObject
) -> None:
    text = thought + "\n</think>\n\n" + render_qwen_xml_tool_calls(calls, content)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    assert_stream_matches_batch(text, split_at(text, cuts), typed_tools(calls))
    result = parse_qwen_xml(text, typed_tools(calls))
    assert (result.reasoning, result.content) == (thought.strip(), content.strip())


# ------------------------------------------------ conversions of vLLM @00d0a333, and exact ints


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        ({"type": "integer"}, "12345678901234567891", 12345678901234567891),  # beyond 2**53
        ({"type": "number"}, "12345678901234567891", 12345678901234567891),  # no float trip
        ({"type": "number"}, "2.50", 2.5),
        ({"type": "number"}, "1e3", 1000),
        ({"type": "integer"}, "None", None),
        ({"type": "integer"}, "null", None),
        ({"type": "string"}, "null", "null"),
        ({"type": "string"}, "None", "None"),
        ({"type": ["string", "null"]}, "None", None),
        ({"type": ["integer", "null"]}, "7", 7),
        ({"anyOf": [{"type": "null"}, {"type": "integer"}]}, "7", 7),
        ({"oneOf": [{"type": "boolean"}, {"type": "null"}]}, "True", True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "null", None),
        ({"type": "object"}, "\"{'k': 'v'}\"", {"k": "v"}),  # a Python repr in JSON quotes
        ({"type": "array"}, "[1, true, null]", [1, True, None]),
    ],
)
def test_convert_parameter_follows_vllm(schema: dict, text: str, expected: object) -> None:
    value, note = convert_parameter(text, "x", {"x": schema})
    assert (value, type(value), note) == (expected, type(expected), None)


def test_a_big_integer_keeps_every_digit_in_the_arguments() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}},
        }
    ]
    text = "<tool_call>\n<function=f>\n<parameter=n>\n9007199254740993\n</parameter>\n</function>\n</tool_call>"
    assert (
        parse_qwen_xml(text, tools).tool_calls[0]["function"]["arguments"]
        == '{"n": 9007199254740993}'
    )


def test_a_value_may_hold_tags_as_text() -> None:
    # A file written through a tool may itself hold tool-call markup (vLLM's cases).
    tools = [
        {
            "type": "function",
            "function": {
                "name": "write",
                "parameters": {
                    "properties": {"path": {"type": "string"}, "body": {"type": "string"}}
                },
            },
        }
    ]
    body = (
        "</parameter>\n<parameter=other>\nx\n</parameter>\n<tool_call>\n<function=g>\n</function>"
    )
    text = xml_call("write", path="a.txt", body=body)
    result = parse_qwen_xml(text, tools)
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {
        "path": "a.txt",
        "body": body,
    }
    assert len(result.errors) == 1 and "no parameter 'other'" in result.errors[0]
    for size in (1, 2, 7):
        parser, _, _ = stream(
            QwenXmlStreamParser(tools), [text[i : i + size] for i in range(0, len(text), size)]
        )
        assert parser.result == result


def test_a_name_that_cannot_be_a_function_is_dropped_and_reported() -> None:
    text = "<tool_call>\n<function={{ tc.name }}>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>"
    result = parse_qwen_xml(text)
    assert result.tool_calls == []
    assert len(result.errors) == 1 and "dropped" in result.errors[0]


def test_reasoning_that_mentions_tool_call_stays_reasoning() -> None:
    text = "I would use <tool_call> later.\n</think>\n\n" + FACTS_EXAMPLE
    result = parse_qwen_xml(text, TOOLS, reasoning_open=True)
    assert result.reasoning == "I would use <tool_call> later."
    assert [c["function"]["name"] for c in result.tool_calls] == ["get_weather"]


def test_an_undeclared_parameter_after_a_close_is_text_and_says_so() -> None:
    # vLLM's schema filter: <parameter=extra> after </parameter> is text when `extra` is unknown.
    result = parse_qwen_xml(xml_call("get_weather", city="Oslo", extra="42"), TOOLS)
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {
        "city": "Oslo\n</parameter>\n<parameter=extra>\n42"
    }
    assert len(result.errors) == 1 and "no parameter 'extra'" in result.errors[0]


def test_a_python_literal_with_an_odd_escape_is_read_without_a_warning() -> None:
    # ast.literal_eval warns "invalid escape sequence '\<'" (a SyntaxWarning or DeprecationWarning,
    # by Python version); the parser reads the value and the student sees no warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, _ = convert_parameter(r"{'path': 'a\<b'}", "q", {"q": {"type": "object"}})
    assert value == {"path": "a\\<b"}
    assert [str(w.message) for w in caught] == []
