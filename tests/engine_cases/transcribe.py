"""Write the engine case files (*.json beside this script) from data transcribed by hand.

The inputs, tool schemas and expected results below were copied from the engines' own parser
tests (Apache-2.0; repositories, paths and commits in LICENSE.md and in each file's "source").
Only their data is here, none of their test code. Run `python tests/engine_cases/transcribe.py`
after editing; the test (`tests/test_formats_engine_cases.py`) reads the JSON files.

A case: `text` (the raw model output) or `chunks` (the deltas the engine test fed), `tools`
(the request's tool list, or null), `reasoning_open` (True: the prompt opened <think>, as
vLLM's default "thinking on"), and what the engine test asserts: `calls` (name and arguments
object; arguments null = not asserted), `calls_raw` (exact arguments text), `ids`,
`arguments_exclude` (text no call's arguments may hold), `content` (null = empty),
`content_contains`, `content_excludes`, `reasoning`. A key that is absent is not asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent


def fn(name: str, properties: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
    }


def call(name: str, arguments: dict | None) -> dict:
    return {"name": name, "arguments": arguments}


def sourced(source: str, cases: list[dict], **defaults: object) -> list[dict]:
    """The cases of one engine test file: each names its source (after its id) and gets the
    `defaults` (e.g. the file's shared tool list) for the keys it does not set itself."""
    out = []
    for case in cases:
        out.append({"id": case["id"], "source": source, **case})
        for key, value in defaults.items():
            out[-1].setdefault(key, value)
    return out


# ------------------------------------------------------------------------------ vLLM Qwen XML

QX_SRC = "vllm-project/vllm tests/tool_parsers/test_qwen3_xml_coder_shared.py @00d0a333"
QC_SRC = "vllm-project/vllm tests/tool_parsers/test_qwen3coder_tool_parser.py @049d8df2"
SAMPLE_TOOLS = [
    fn(
        "get_current_weather",
        {
            "city": {"type": "string", "description": "The city name"},
            "state": {"type": "string", "description": "The state code"},
            "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]},
        },
    ),
    fn(
        "calculate_area",
        {
            "shape": {"type": "string"},
            "dimensions": {"type": "object"},
            "precision": {"type": "integer"},
        },
    ),
]
DALLAS = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
    "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n"
    "</function>\n</tool_call>"
)
DALLAS_ARGS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
RECT = (
    "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
    '<parameter=dimensions>\n{"width": 10,\n "height": 20}\n</parameter>\n'
    "<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>"
)
CIRCLE = (
    "Let me calculate that area for you.<tool_call>\n<function=calculate_area>\n"
    "<parameter=shape>\ncircle\n</parameter>\n<parameter=dimensions>\n"
    '{"radius": 15.5}\n</parameter>\n<parameter=precision>\n3\n</parameter>\n'
    "</function>\n</tool_call>"
)
ORLANDO = DALLAS.replace("Dallas", "Orlando").replace("TX", "FL")
TYPES_TOOL = [
    fn(
        "test_types",
        {
            "int_param": {"type": "integer"},
            "float_param": {"type": "float"},
            "bool_param": {"type": "boolean"},
            "str_param": {"type": "string"},
            "obj_param": {"type": "object"},
        },
    )
]
WRITE_FILE = [fn("write_file", {"path": {"type": "string"}, "content": {"type": "string"}})]
XML_TAGS_IN_CONTENT = (
    "char_deltas = [\n"
    '    "<tool_call>\\n",\n'
    '    "<parameter=query>\\n",\n'
    '    "\\n</parameter>\\n",\n'
    '    "</function>\\n",\n'
    "]\n"
)
PARAM_LIKE_LINES = (
    'TOOL_CALL_TEMPLATE = """\n</parameter>\n<parameter=new_string>\n'
    '#!/usr/bin/env python3\n</parameter>\n"""\n'
)
REAL_NAME_LITERAL = 'doc = """\n<parameter=path>\nliteral/value\n</parameter>\n"""\n'
FULL_NESTED = (
    'doc = """\n<tool_call>\n<function=write_file>\n<parameter=path>\nliteral/value.txt\n'
    '</parameter>\n<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>\n"""\n'
)
OUT_OF_SCHEMA = (
    'template = """\n<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n'
    '</function>\n</tool_call>\n"""\n'
)
WEATHER_CITY = [fn("get_weather", {"city": {"type": "string"}})]
TWO_IN_ONE = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
    "<parameter=city>\nLondon\n</parameter>\n</function>\n</tool_call>"
)


def write_file_call(path: str, content: str) -> str:
    return (
        "<tool_call>\n<function=write_file>\n"
        f"<parameter=path>\n{path}\n</parameter>\n"
        f"<parameter=content>\n{content}</parameter>\n</function>\n</tool_call>\n"
    )


def one_param(function: str, key: str, value: str) -> str:
    return f"<tool_call>\n<function={function}>\n<parameter={key}>{value}</parameter>\n</function>\n</tool_call>"


QWEN_XML = [
    {
        "id": "no_tools",
        "text": "This is a test response without any tool calls",
        "tools": None,
        "calls": [],
        "content": "This is a test response without any tool calls",
    },
    {
        "id": "single_tool",
        "text": DALLAS,
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", DALLAS_ARGS)],
        "content": None,
    },
    {
        "id": "single_tool_with_content",
        "text": "Sure! Let me check the weather for you." + DALLAS,
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", DALLAS_ARGS)],
        "content": "Sure! Let me check the weather for you.",
    },
    {
        "id": "single_tool_multiline_param",
        "text": RECT,
        "tools": SAMPLE_TOOLS,
        "calls": [
            call(
                "calculate_area",
                {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2},
            )
        ],
        "content": None,
    },
    {
        "id": "parallel_tools",
        "text": DALLAS + "\n" + ORLANDO,
        "tools": SAMPLE_TOOLS,
        "calls": [
            call("get_current_weather", DALLAS_ARGS),
            call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
        ],
        "content": None,
    },
    {
        "id": "tool_with_typed_params",
        "text": CIRCLE,
        "tools": SAMPLE_TOOLS,
        "calls": [
            call(
                "calculate_area",
                {"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3},
            )
        ],
        "content": "Let me calculate that area for you.",
    },
    {
        "id": "fallback_no_tags",
        "text": "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
        "<parameter=state>\nTX\n</parameter>\n</function>",
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", None)],
    },
    {
        "id": "type_conversion",
        "text": "<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n"
        "<parameter=float_param>\n3.14\n</parameter>\n<parameter=bool_param>\ntrue\n</parameter>\n"
        "<parameter=str_param>\nhello world\n</parameter>\n"
        '<parameter=obj_param>\n{"key": "value"}\n</parameter>\n</function>\n</tool_call>',
        "tools": TYPES_TOOL,
        "calls": [
            call(
                "test_types",
                {
                    "int_param": 42,
                    "float_param": 3.14,
                    "bool_param": True,
                    "str_param": "hello world",
                    "obj_param": {"key": "value"},
                },
            )
        ],
    },
    {
        "id": "complex_type_with_single_quote",
        "text": "<tool_call>\n<function=test_types>\n<parameter=obj_param>\n{'key': 'value'}\n"
        "</parameter>\n</function>\n</tool_call>",
        "tools": TYPES_TOOL,
        "calls": [call("test_types", {"obj_param": {"key": "value"}})],
    },
    {
        "id": "missing_closing_parameter_tag",
        "text": "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", DALLAS_ARGS)],
        "content_contains": ["Let me check the weather for you:"],
    },
    {
        "id": "streaming_incremental",
        "text": "I'll check the weather.<tool_call>\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n"
        "</function>\n</tool_call>",
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", {"city": "Dallas", "state": "TX"})],
        "content": "I'll check the weather.",
    },
    {
        "id": "malformed_xml_no_gt_delimiter",
        "text": "<tool_call>\n<function=get_current_weather\n<parameter=city>Dallas</parameter>\n"
        "</function>\n</tool_call>",
        "tools": SAMPLE_TOOLS,
    },
    {
        "id": "none_tool_calls_filtered",
        "text": "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n<tool_call>\n"
        "<function=get_current_weather>\n<parameter=city>Dallas</parameter>\n"
        "<parameter=state>TX</parameter>\n</function>\n</tool_call>",
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", {"city": "Dallas", "state": "TX"})],
    },
    {
        "id": "streaming_multi_param_single_chunk",
        "chunks": [
            "<tool_call>",
            "\n<function=get_current_weather>",
            "\n",
            "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>"
            "\n<parameter=unit>\nfahrenheit\n</parameter>",
            "\n</function>",
            "\n</tool_call>",
        ],
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", DALLAS_ARGS)],
    },
    {
        "id": "no_double_serialization_string_args",
        "text": one_param("greet", "message", "hello world"),
        "tools": [fn("greet", {"message": {"type": "string"}})],
        "calls": [call("greet", {"message": "hello world"})],
        "arguments_exclude": ['\\"hello world\\"'],
    },
    {
        "id": "streaming_speculative_decode_loss",
        "chunks": [
            "<tool_call>\n<function=test>\n",
            "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        ],
        "tools": SAMPLE_TOOLS,
        "calls": [call("test", {"city": "Paris"})],
    },
    {
        "id": "string_null_value_preserved",
        "text": one_param("search", "query", "null"),
        "tools": [fn("search", {"query": {"type": "string"}})],
        "calls": [call("search", {"query": "null"})],
    },
    {
        "id": "anyof_string_null_keeps_value_as_string",
        "text": one_param("set_code", "code", "42"),
        "tools": [fn("set_code", {"code": {"anyOf": [{"type": "string"}, {"type": "null"}]}})],
        "calls": [call("set_code", {"code": "42"})],
    },
    {
        "id": "anyof_integer_null_parses_as_int",
        "text": one_param("set_count", "count", "42"),
        "tools": [fn("set_count", {"count": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})],
        "calls": [call("set_count", {"count": 42})],
    },
    {
        "id": "anyof_object_param_not_double_encoded",
        "text": one_param("update_record", "data", '{"key": "value", "count": 42}'),
        "tools": [fn("update_record", {"data": {"anyOf": [{"type": "object"}, {"type": "null"}]}})],
        "calls": [call("update_record", {"data": {"key": "value", "count": 42}})],
    },
    {
        "id": "anyof_object_param_not_double_encoded_streaming",
        "chunks": [
            "<tool_call>",
            "\n<function=update_record>",
            '\n<parameter=data>{"key": "value", "count": 42}</parameter>',
            "\n</function>",
            "\n</tool_call>",
        ],
        "tools": [fn("update_record", {"data": {"anyOf": [{"type": "object"}, {"type": "null"}]}})],
        "calls": [call("update_record", {"data": {"key": "value", "count": 42}})],
    },
    {
        "id": "double_encoded_object_param",
        "text": "<tool_call>\n<function=process>\n<parameter=name>\nhello\n</parameter>\n"
        "<parameter=data>\n\"{'key': 'value', 'n': 1}\"\n</parameter>\n</function>\n</tool_call>\n",
        "tools": [fn("process", {"name": {"type": "string"}, "data": {"type": "object"}})],
        "calls": [call("process", {"name": "hello", "data": {"key": "value", "n": 1}})],
    },
    {
        "id": "content_with_xml_structural_tags",
        "text": write_file_call("test.py", XML_TAGS_IN_CONTENT),
        "tools": WRITE_FILE,
        "calls": [
            call("write_file", {"path": "test.py", "content": XML_TAGS_IN_CONTENT.rstrip("\n")})
        ],
    },
    {
        "id": "content_with_xml_structural_tags_streaming",
        "chunks": [
            "<tool_call>\n",
            "<function=write_file>\n",
            "<parameter=path>\ntest.py\n</parameter>\n",
            f"<parameter=content>\n{XML_TAGS_IN_CONTENT}</parameter>\n",
            "</function>\n",
            "</tool_call>\n",
        ],
        "tools": WRITE_FILE,
        "calls": [
            call("write_file", {"path": "test.py", "content": XML_TAGS_IN_CONTENT.rstrip("\n")})
        ],
    },
    {
        "id": "content_with_param_like_lines",
        "text": write_file_call("test_template.py", PARAM_LIKE_LINES),
        "tools": WRITE_FILE,
        "calls": [
            call(
                "write_file", {"path": "test_template.py", "content": PARAM_LIKE_LINES.rstrip("\n")}
            )
        ],
    },
    {
        "id": "content_with_param_like_lines_streaming",
        "chunks": [
            "<tool_call>\n",
            "<function=write_file>\n",
            "<parameter=path>\ntest_template.py\n</parameter>\n",
            '<parameter=content>\nTOOL_CALL_TEMPLATE = """\n',
            "</parameter>\n",
            "<parameter=new_string>\n",
            "#!/usr/bin/env python3\n",
            "</parameter>\n",
            '"""\n',
            "</parameter>\n",
            "</function>\n",
            "</tool_call>\n",
        ],
        "tools": WRITE_FILE,
        "calls": [
            call(
                "write_file", {"path": "test_template.py", "content": PARAM_LIKE_LINES.rstrip("\n")}
            )
        ],
    },
    {
        "id": "array_with_json_bool",
        "text": '<tool_call>\n<function=pick>\n<parameter=items>\n["a", "b", 1, true]\n</parameter>\n'
        "</function>\n</tool_call>",
        "tools": [fn("pick", {"items": {"type": "array"}})],
        "calls": [call("pick", {"items": ["a", "b", 1, True]})],
    },
    {
        "id": "two_tool_calls_in_one_streaming_chunk",
        "chunks": [TWO_IN_ONE],
        "tools": WEATHER_CITY,
        "calls": [call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "London"})],
    },
    {
        "id": "python_none_value_for_nullable_int",
        "text": one_param("set_count", "count", "None"),
        "tools": [fn("set_count", {"count": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})],
        "calls": [call("set_count", {"count": None})],
    },
    {
        "id": "streaming_two_tool_calls_plus_trailing_text_one_delta",
        "chunks": [TWO_IN_ONE + "\nAll done!"],
        "tools": WEATHER_CITY,
        "calls": [call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "London"})],
        "content_contains": ["All done!"],
    },
    {
        "id": "streaming_trailing_text_with_final_close_in_same_delta",
        "chunks": [
            "<tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>",
            "\n</tool_call>\nI hope this helps!",
        ],
        "tools": WEATHER_CITY,
        "calls": [call("get_weather", None)],
        "content_contains": ["I hope this helps!"],
    },
    {
        "id": "content_with_real_param_name_literal",
        "text": write_file_call("fixture.py", REAL_NAME_LITERAL).rstrip("\n"),
        "tools": WRITE_FILE,
        "calls": [
            call("write_file", {"path": "fixture.py", "content": REAL_NAME_LITERAL.rstrip("\n")})
        ],
    },
    {
        "id": "content_with_real_param_name_literal_streaming",
        "chunks": [
            "<tool_call>\n",
            "<function=write_file>\n",
            "<parameter=path>\nfixture.py\n</parameter>\n",
            '<parameter=content>\ndoc = """\n',
            "<parameter=path>\n",
            "literal/value\n",
            "</parameter>\n",
            '"""\n',
            "</parameter>\n",
            "</function>\n",
            "</tool_call>",
        ],
        "tools": WRITE_FILE,
        "calls": [
            call("write_file", {"path": "fixture.py", "content": REAL_NAME_LITERAL.rstrip("\n")})
        ],
    },
    {
        "id": "content_with_full_nested_tool_call",
        "text": write_file_call("fixture.py", FULL_NESTED).rstrip("\n"),
        "tools": WRITE_FILE,
        "calls": [call("write_file", {"path": "fixture.py", "content": FULL_NESTED.rstrip("\n")})],
    },
    {
        "id": "content_with_full_nested_tool_call_streaming",
        "chunks": [
            "<tool_call>\n",
            "<function=write_file>\n",
            "<parameter=path>\nfixture.py\n</parameter>\n",
            '<parameter=content>\ndoc = """\n',
            "<tool_call>\n",
            "<function=write_file>\n",
            "<parameter=path>\n",
            "literal/value.txt\n",
            "</parameter>\n",
            "<parameter=content>\n",
            "hello\n",
            "</parameter>\n",
            "</function>\n",
            "</tool_call>\n",
            '"""\n',
            "</parameter>\n",
            "</function>\n",
            "</tool_call>",
        ],
        "tools": WRITE_FILE,
        "calls": [call("write_file", {"path": "fixture.py", "content": FULL_NESTED.rstrip("\n")})],
    },
    {
        "id": "two_tools_second_with_out_of_schema_nested_literal",
        "text": "<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>"
        "\n\n" + write_file_call("fixture.py", OUT_OF_SCHEMA).rstrip("\n"),
        "tools": WRITE_FILE,
        "calls": [
            call("foo", {"bar": "baz"}),
            call("write_file", {"path": "fixture.py", "content": OUT_OF_SCHEMA.rstrip("\n")}),
        ],
    },
    {
        "id": "two_tools_second_with_out_of_schema_nested_literal_streaming",
        "chunks": [
            "<tool_call>\n<function=foo>\n",
            "<parameter=bar>baz</parameter>\n",
            "</function>\n</tool_call>",
            "\n\n",
            "<tool_call>\n<function=write_file>\n",
            "<parameter=path>\nfixture.py\n</parameter>\n",
            '<parameter=content>\ntemplate = """\n',
            "<tool_call>\n<function=foo>\n",
            "<parameter=bar>baz</parameter>\n",
            "</function>\n</tool_call>\n",
            '"""\n',
            "</parameter>\n",
            "</function>\n",
            "</tool_call>",
        ],
        "tools": WRITE_FILE,
        "calls": [
            call("foo", {"bar": "baz"}),
            call("write_file", {"path": "fixture.py", "content": OUT_OF_SCHEMA.rstrip("\n")}),
        ],
    },
    {
        "id": "jinja_template_phantom_tool_call_is_rejected",
        "text": "<tool_call>\n<function={{ tc.name }}>\n<parameter={{ k }}>\n{{ v }}\n</parameter>\n"
        "</function>\n</tool_call>\n\n<tool_call>\n<function=write_file>\n"
        "<parameter=path>\nout.txt\n</parameter>\n<parameter=content>\nhello\n</parameter>\n"
        "</function>\n</tool_call>",
        "tools": WRITE_FILE,
        "calls": [call("write_file", None)],
    },
    {
        "id": "inline_empty_tool_call_preserves_content_before_real_call",
        "text": "I'll show: <tool_call>example</tool_call>. Now real:\n<tool_call>\n<function=log>\n"
        "<parameter=msg>\nhi\n</parameter>\n</function>\n</tool_call>",
        "tools": [fn("log", {"msg": {"type": "string"}})],
        "calls": [call("log", None)],
        "content_contains": ["I'll show:", "Now real:"],
    },
    {
        "id": "anyof_string_null_with_null_literal_returns_none",
        "text": one_param("set_value", "optional", "null"),
        "tools": [fn("set_value", {"optional": {"anyOf": [{"type": "string"}, {"type": "null"}]}})],
        "calls": [call("set_value", {"optional": None})],
    },
    {
        "id": "anyof_string_null_with_None_literal_returns_none",
        "text": one_param("set_value", "optional", "None"),
        "tools": [fn("set_value", {"optional": {"anyOf": [{"type": "string"}, {"type": "null"}]}})],
        "calls": [call("set_value", {"optional": None})],
    },
]
# These three come from vLLM's other Qwen3-Coder test file (QC_SRC).
QWEN_CODER = [
    {
        "id": "anyof_type_conversion",
        "text": "<tool_call>\n<function=test_anyof>\n<parameter=anyof_int>\n5\n</parameter>\n"
        "<parameter=anyof_str>\nhello\n</parameter>\n"
        '<parameter=anyof_array>\n["a", "b", "c"]\n</parameter>\n'
        '<parameter=anyof_obj>\n{"key": "value"}\n</parameter>\n'
        "<parameter=type_as_array>\n42\n</parameter>\n"
        "<parameter=multi_non_null>\nsome text\n</parameter>\n</function>\n</tool_call>",
        "tools": [
            fn(
                "test_anyof",
                {
                    "anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                    "anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "anyof_array": {
                        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
                    },
                    "anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                    "type_as_array": {"type": ["integer", "null"]},
                    "multi_non_null": {
                        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
                    },
                },
            )
        ],
        "calls": [
            call(
                "test_anyof",
                {
                    "anyof_int": 5,
                    "anyof_str": "hello",
                    "anyof_array": ["a", "b", "c"],
                    "anyof_obj": {"key": "value"},
                    "type_as_array": 42,
                    "multi_non_null": "some text",
                },
            )
        ],
    },
    {
        "id": "anyof_type_conversion_streaming",
        "text": "<tool_call>\n<function=search_web>\n<parameter=query>\nvllm tool parser\n</parameter>\n"
        "<parameter=count>\n10\n</parameter>\n<parameter=verbose>\ntrue\n</parameter>\n"
        "</function>\n</tool_call>",
        "tools": [
            fn(
                "search_web",
                {
                    "query": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "count": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                    "verbose": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                },
            )
        ],
        "calls": [call("search_web", {"query": "vllm tool parser", "count": 10, "verbose": True})],
    },
    {
        "id": "streaming_missing_opening_tag",
        "text": "I'll check the weather for you.\n\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        "tools": SAMPLE_TOOLS,
        "calls": [call("get_current_weather", DALLAS_ARGS)],
        "content_contains": ["I'll check the weather for you."],
    },
]

# ----------------------------------------------------------------- vLLM qwen3 reasoning parser

QR_SRC = "vllm-project/vllm tests/reasoning/test_qwen3_reasoning_parser.py @049d8df2"
TOOL_CALL_BODY = (
    "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n"
    "</function>\n</tool_call>"
)
BASH = [call("bash", {"command": "cat /etc/hosts"})]


def reasoning_case(case_id, text, reasoning, content, calls=(), reasoning_open=True, chunks=None):
    case = {
        "id": case_id,
        "tools": None,
        "reasoning_open": reasoning_open,
        "reasoning": reasoning,
        "content": content,
        "calls": list(calls),
    }
    if chunks is None:
        case["text"] = text
    else:
        case["chunks"] = chunks
    return case


QWEN_REASONING = [
    reasoning_case(
        "without_start_token",
        "This is a reasoning section</think>This is the rest",
        "This is a reasoning section",
        "This is the rest",
    ),
    reasoning_case(
        "without_start_token_complete_reasoning",
        "This is a reasoning section</think>",
        "This is a reasoning section",
        None,
    ),
    reasoning_case(
        "with_think",
        "<think>This is a reasoning section</think>This is the rest",
        "This is a reasoning section",
        "This is the rest",
    ),
    reasoning_case("without_think", "This is the rest", "This is the rest", None),
    reasoning_case(
        "complete_reasoning",
        "<think>This is a reasoning section</think>",
        "This is a reasoning section",
        None,
    ),
    reasoning_case(
        "multiline_reasoning",
        "<think>This is a reasoning\nsection</think>This is the rest\nThat",
        "This is a reasoning\nsection",
        "This is the rest\nThat",
    ),
    reasoning_case(
        "only_open_tag", "<think>This is a reasoning section", "This is a reasoning section", None
    ),
    reasoning_case(
        "truncated_no_start_token",
        "This is a reasoning section",
        "This is a reasoning section",
        None,
    ),
    reasoning_case(
        "tool_call_no_think_end",
        "I need to read the file.\n\n" + TOOL_CALL_BODY,
        "I need to read the file.\n\n",
        None,
        BASH,
    ),
    reasoning_case(
        "tool_call_with_think_no_end",
        "<think>I need to read the file.\n\n" + TOOL_CALL_BODY,
        "I need to read the file.\n\n",
        None,
        BASH,
    ),
    reasoning_case(
        "start_token_grouped_with_text",
        None,
        "This is a reasoning section",
        "This is the rest",
        chunks=["<think>This is a reasoning section", "</think>", "This is the rest"],
    ),
    reasoning_case(
        "end_token_grouped_with_content",
        None,
        "reasoning section",
        "This is the rest",
        chunks=["reasoning section", "</think>This is the rest"],
    ),
    reasoning_case(
        "start_and_end_in_one_delta_no_content",
        None,
        "reasoning",
        None,
        chunks=["<think>reasoning</think>"],
    ),
    reasoning_case(
        "no_start_end_grouped_with_content",
        None,
        "reasoning section",
        "content",
        chunks=["reasoning section", "</think>content"],
    ),
    reasoning_case(
        "tool_call_implicit_reasoning_end",
        None,
        "I need to read the file.\n\n",
        None,
        [call("bash", {})],
        chunks=["I need to read the file.\n\n", "<tool_call>\n<function=bash>"],
    ),
    reasoning_case(
        "thinking_disabled_plain_content",
        "This is plain content",
        None,
        "This is plain content",
        reasoning_open=False,
    ),
    reasoning_case(
        "thinking_disabled_no_think_tokens",
        "Some output without think tokens",
        None,
        "Some output without think tokens",
        reasoning_open=False,
    ),
    reasoning_case(
        "thinking_disabled_with_tool_call",
        "I need to read the file.\n\n" + TOOL_CALL_BODY,
        None,
        "I need to read the file.\n\n",
        BASH,
        reasoning_open=False,
    ),
]
for case in QWEN_REASONING:
    case["note"] = (
        "The engine test checks the reasoning parser alone; its `content` is the text the tool "
        "parser then reads, so a tool-call body in it is given here as the calls it holds."
    )

# ------------------------------------------------------------------------------ vLLM Hermes

H_SRC = "vllm-project/vllm tests/tool_parsers/test_hermes_tool_parser.py @0eb73d6a"
TRIGGER = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>'
HERMES = [
    {
        "id": "streaming_just_forward_text",
        "text": "This is some prior text that has nothing to do with tool calling.",
        "calls": [],
        "content": "This is some prior text that has nothing to do with tool calling.",
    },
    {
        "id": "streaming_failure_case_bug_19056",
        "text": TRIGGER,
        "calls": [call("final_answer", {"trigger": True})],
        "calls_raw": ['{"trigger": true}'],
    },
    {
        "id": "streaming",
        "text": '<tool_call>{"name": "get_current_temperature","arguments": {"location":'
        '"San Francisco, California, United States", "unit": "celsius"}}</tool_call>',
        "calls": [
            call(
                "get_current_temperature",
                {"location": "San Francisco, California, United States", "unit": "celsius"},
            )
        ],
    },
    {
        "id": "streaming_tool_call_with_stream_interval",
        "text": '<tool_call>{"name": "get_current_temperature", "arguments": {"location": '
        '"San Francisco", "unit": "celsius"}}</tool_call>',
        "calls": [
            call("get_current_temperature", {"location": "San Francisco", "unit": "celsius"})
        ],
    },
    {
        "id": "streaming_content_then_tool_call",
        "text": 'Sure, let me check the weather.<tool_call>{"name": "get_weather", '
        '"arguments": {"city": "NYC"}}</tool_call>',
        "calls": [call("get_weather", {"city": "NYC"})],
        "content": "Sure, let me check the weather.",
    },
    {
        "id": "streaming_multiple_tool_calls",
        "text": '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call>'
        '<tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>',
        "calls": [call("search", {"q": "cats"}), call("search", {"q": "dogs"})],
    },
    {
        "id": "streaming_just_forward_text_with_stream_interval",
        "text": "This is plain text with no tool calling involved.",
        "calls": [],
        "content": "This is plain text with no tool calling involved.",
    },
    {
        "id": "non_streaming_no_tool_call",
        "text": "This is not a tool call.",
        "calls": [],
    },
    {
        "id": "non_streaming_tool_call_between_tags",
        "text": TRIGGER,
        "calls": [call("final_answer", {"trigger": True})],
        "calls_raw": ['{"trigger": true}'],
    },
    {
        "id": "non_streaming_tool_call_until_eos",
        "text": '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}',
        "calls": [call("final_answer", {"trigger": True})],
        "calls_raw": ['{"trigger": true}'],
    },
    {
        "id": "non_streaming_tool_call_invalid_json",
        "text": '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}',
        "calls": [],
    },
    {
        "id": "non_streaming_serialized_arguments",
        "text": '<tool_call>\n{"name": "get_db_config", "arguments": '
        '"{\\"param\\": \\"max_connections\\"}"}\n</tool_call>',
        "calls": [call("get_db_config", {"param": "max_connections"})],
    },
    {
        "id": "non_streaming_bare_string_arguments",
        "text": '<tool_call>\n{"name": "do_thing", "arguments": "hello"}\n</tool_call>',
        "calls": [call("do_thing", "hello")],
    },
]

# ------------------------------------------------------------------------------- vLLM Kimi

K_SRC = "vllm-project/vllm tests/tool_parsers/test_kimi_k2_tool_parser.py @0825a6c3"
SB, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
TB, TE, AB = "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>"
WEATHER_TOOL = fn("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}})
READ_FILE_TOOL = fn("read_file", {"path": {"type": "string"}})
BOOK_FLIGHT_TOOL = fn("book_flight", {"city": {"type": "string"}})


def k_tool(tool_id: str, args: str) -> str:
    return f"{TB}{tool_id} {AB}{args}{TE}"


def k_wrap(*tools: str) -> str:
    return SB + "".join(tools) + SE


def k_deltas(content: str, tools: list[tuple[str, str]]) -> list[str]:
    deltas = [content, SB]
    for tool_id, args in tools:
        deltas += [TB, f"{tool_id} ", AB, f"{args} ", TE]
    return [*deltas, SE]


KIMI = [
    {
        "id": "no_tools",
        "text": "This is a test",
        "calls": [],
        "content": "This is a test",
    },
    {
        "id": "single_tool_call",
        "text": "I'll check. " + k_wrap(k_tool("functions.get_weather:0", '{"city": "Beijing"}')),
        "calls": [call("get_weather", {"city": "Beijing"})],
        "content": "I'll check. ",
    },
    {
        "id": "parallel_tool_calls",
        "text": "Compare weather. "
        + k_wrap(
            k_tool("functions.get_weather:0", '{"city": "Beijing"}'),
            k_tool("functions.get_weather:1", '{"city": "Shanghai"}'),
        ),
        "calls": [
            call("get_weather", {"city": "Beijing"}),
            call("get_weather", {"city": "Shanghai"}),
        ],
        "content": "Compare weather. ",
    },
    {
        "id": "three_tool_calls",
        "text": "Multiple tasks. "
        + k_wrap(
            k_tool("functions.get_weather:0", '{"city": "New York"}'),
            k_tool("functions.get_news:1", '{"topic": "technology"}'),
            k_tool(
                "functions.send_email:2", '{"to": "user@example.com", "subject": "Daily Update"}'
            ),
        ),
        "calls": [
            call("get_weather", {"city": "New York"}),
            call("get_news", {"topic": "technology"}),
            call("send_email", {"to": "user@example.com", "subject": "Daily Update"}),
        ],
        "content": "Multiple tasks. ",
    },
    {
        "id": "angle_brackets_in_json",
        "text": "Process HTML. "
        + k_wrap(k_tool("functions.process_html:0", '{"html": "<div>content</div>"}')),
        "calls": [call("process_html", {"html": "<div>content</div>"})],
        "content": "Process HTML. ",
    },
    {
        "id": "multiline_json",
        "text": "Formatted. "
        + k_wrap(k_tool("functions.process_data:0", '{\n  "name": "test",\n  "value": 123\n}')),
        "calls": [call("process_data", {"name": "test", "value": 123})],
        "content": "Formatted. ",
    },
    {
        "id": "no_functions_prefix",
        "text": "No prefix. " + k_wrap(k_tool("get_weather:0", '{"city": "Tokyo"}')),
        "calls": [call("get_weather", {"city": "Tokyo"})],
        "content": "No prefix. ",
    },
    {
        "id": "empty_arguments",
        "text": "Empty args. " + k_wrap(k_tool("functions.test:0", "{}")),
        "calls": [call("test", {})],
        "content": "Empty args. ",
    },
    {
        "id": "invalid_json_still_extracted",
        "text": "Help. "
        + SB
        + k_tool("functions.bad:0", '{"city": "Beijing"')
        + k_tool("functions.good:1", '{"city": "Shanghai"}')
        + SE,
        "calls": [call("bad", None), call("good", None)],
    },
    {
        "id": "invalid_funcall_id_skipped",
        "text": "Help. "
        + SB
        + k_tool("functions.invalid.0", '{"city": "Beijing"}')
        + k_tool("functions.valid:1", '{"city": "Shanghai"}')
        + SE,
        "calls": [call("valid", None)],
    },
    {
        "id": "native_id_extracted",
        "text": "Checking weather. "
        + k_wrap(k_tool("functions.get_weather:0", '{"city": "Tokyo"}')),
        "calls": [call("get_weather", {"city": "Tokyo"})],
        "ids": ["functions.get_weather:0"],
    },
    {
        "id": "bare_counter",
        "tools": [WEATHER_TOOL],
        "text": "Let me check. " + k_wrap(k_tool("0", '{"city": "Tokyo", "unit": "celsius"}')),
        "calls": [call("get_weather", {"city": "Tokyo", "unit": "celsius"})],
        "ids": ["0"],
        "content": "Let me check. ",
    },
    {
        "id": "bare_counter_single_tool_invalid_json_still_extracted",
        "tools": [WEATHER_TOOL],
        "text": "Let me check. " + k_wrap(k_tool("0", '{"city": "Tokyo"')),
        "calls": [call("get_weather", None)],
        "ids": ["0"],
        "calls_raw": ['{"city": "Tokyo"'],
    },
    {
        "id": "bare_counter_multiple_tools_infers_by_args",
        "tools": [READ_FILE_TOOL, WEATHER_TOOL],
        "text": "Let me check. " + k_wrap(k_tool("0", '{"city": "Tokyo", "unit": "celsius"}')),
        "calls": [call("get_weather", {"city": "Tokyo", "unit": "celsius"})],
        "ids": ["0"],
    },
    {
        "id": "bare_counter_multiple_tools_skips_unsafe_inference_ambiguous",
        "tools": [WEATHER_TOOL, BOOK_FLIGHT_TOOL],
        "text": "Let me check. " + k_wrap(k_tool("0", '{"city": "Tokyo"}')),
        "calls": [],
    },
    {
        "id": "bare_counter_multiple_tools_skips_unsafe_inference_malformed_json",
        "tools": [WEATHER_TOOL, BOOK_FLIGHT_TOOL],
        "text": "Let me check. " + k_wrap(k_tool("0", '{"city": "Tokyo"')),
        "calls": [],
    },
    {
        "id": "streaming_single_tool_call",
        "chunks": k_deltas("I'll help. ", [("functions.get_weather:0", '{"city": "Beijing"}')]),
        "calls": [call("get_weather", {"city": "Beijing"})],
        "ids": ["functions.get_weather:0"],
    },
    {
        "id": "streaming_multiple_tool_calls",
        "chunks": k_deltas(
            "Compare weather. ",
            [
                ("functions.get_weather:0", '{"city": "Tokyo"}'),
                ("functions.get_weather:1", '{"city": "NYC"}'),
            ],
        ),
        "calls": [call("get_weather", {"city": "Tokyo"}), call("get_weather", {"city": "NYC"})],
        "ids": ["functions.get_weather:0", "functions.get_weather:1"],
    },
    {
        "id": "streaming_bare_counter",
        "tools": [WEATHER_TOOL],
        "chunks": k_deltas("I'll help. ", [("0", '{"city": "Beijing"}')]),
        "calls": [call("get_weather", {"city": "Beijing"})],
        "ids": ["0"],
    },
    {
        "id": "streaming_bare_counter_multiple_tools_infers_by_args",
        "tools": [READ_FILE_TOOL, WEATHER_TOOL],
        "chunks": k_deltas("I'll help. ", [("0", '{"city": "Beijing", "unit": "celsius"}')]),
        "calls": [call("get_weather", {"city": "Beijing", "unit": "celsius"})],
        "ids": ["0"],
    },
    {
        "id": "streaming_content_before_tools",
        "chunks": k_deltas(
            "I'll check the weather. ", [("functions.get_weather:0", '{"city": "Tokyo"}')]
        ),
        "calls": [call("get_weather", {"city": "Tokyo"})],
        "content_contains": ["check the weather"],
        "content_excludes": [SB, SE, TB, TE, AB, "get_weather", "Tokyo"],
    },
    {
        "id": "streaming_no_tool_calls",
        "chunks": ["This is just ", "regular text ", "without tools."],
        "calls": [],
        "content": "This is just regular text without tools.",
    },
    {
        "id": "streaming_incremental_arguments",
        "chunks": [
            "Help. ",
            SB,
            TB,
            "functions.get_weather:0 ",
            AB,
            '{"ci',
            'ty": "Be',
            'ijing"}',
            " ",
            TE,
            SE,
        ],
        "calls": [call("get_weather", {"city": "Beijing"})],
    },
    {
        "id": "streaming_noise_between_markers_suppressed",
        "chunks": [
            "Reasoning. ",
            SB,
            " spurious noise ",
            TB,
            "functions.test:0 ",
            AB,
            '{"k": "v"} ',
            TE,
            SE,
        ],
        "calls": [call("test", {"k": "v"})],
        "content_excludes": ["spurious", "noise"],
    },
    {
        "id": "streaming_empty_tool_section",
        "chunks": ["Reasoning. ", SB, SE],
        "calls": [],
    },
    {
        "id": "streaming_three_different_tools",
        "chunks": k_deltas(
            "Multiple tasks. ",
            [
                ("functions.get_weather:0", '{"city": "NYC"}'),
                ("functions.get_news:1", '{"topic": "tech"}'),
                ("functions.send_email:2", '{"to": "a@b.com"}'),
            ],
        ),
        "calls": [call("get_weather", None), call("get_news", None), call("send_email", None)],
        "ids": ["functions.get_weather:0", "functions.get_news:1", "functions.send_email:2"],
    },
    {
        "id": "streaming_truncated_tool_call_no_end_marker",
        "chunks": ["I'll check. ", SB, TB, "functions.get_weather:0 ", AB, '{"city": "Bei'],
        "calls": [call("get_weather", None)],
        "ids": ["functions.get_weather:0"],
        "calls_raw": ['{"city": "Bei'],
        "content_excludes": [SB, SE, TB, TE, AB],
    },
    {
        "id": "streaming_content_after_tool_section",
        "chunks": [
            "Before. ",
            SB,
            TB,
            "functions.get_weather:0 ",
            AB,
            '{"city": "Tokyo"} ',
            TE,
            SE,
            " After tools.",
        ],
        "calls": [call("get_weather", {"city": "Tokyo"})],
        "content_excludes": ["After tools."],
    },
]

# ------------------------------------------------------------------------- SGLang Qwen3 Coder

SG_SRC = (
    "sgl-project/sglang test/registered/function_call/test_qwen3_coder_detector/test_cases.py "
    "@2c5fa031 (tools: test_fixtures.py @4e563f39)"
)
SG_TOOLS = [
    fn(
        "get_current_weather",
        {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
    ),
    fn("sql_interpreter", {"query": {"type": "string"}, "dry_run": {"type": "boolean"}}),
    fn(
        "TodoWrite",
        {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}, "status": {"type": "string"}},
                    "required": ["content", "status"],
                },
            }
        },
    ),
]
BOSTON = (
    "<function=get_current_weather>\n<parameter=location>Boston</parameter>\n"
    "<parameter=unit>celsius</parameter>\n<parameter=days>3</parameter>\n</function>"
)
BOSTON_ARGS = {"location": "Boston", "unit": "celsius", "days": 3}
SGLANG = [
    {
        "id": "plain_text",
        "text": "This is plain text test",
        "calls": [],
        "content": "This is plain text test",
    },
    {
        "id": "single_tool_call",
        "text": BOSTON,
        "calls": [call("get_current_weather", BOSTON_ARGS)],
        "content": "",
    },
    {
        "id": "single_tool_call_with_text",
        "text": "Text prefix + tool call test\n\n" + BOSTON,
        "calls": [call("get_current_weather", BOSTON_ARGS)],
        "content": "Text prefix + tool call test\n    \n",
    },
    {
        "id": "double_tool_call",
        "text": "Text prefix + double tool call test\n\n<function=get_current_weather>\n"
        "<parameter=location>New York</parameter>\n</function>\n<function=sql_interpreter>\n"
        "<parameter=query>SELECT * FROM users</parameter>\n<parameter=dry_run>True</parameter>\n"
        "</function>\n",
        "calls": [
            call("get_current_weather", {"location": "New York"}),
            call("sql_interpreter", {"query": "SELECT * FROM users", "dry_run": True}),
        ],
        "content": "Text prefix + double tool call test\n\n",
    },
    {
        "id": "random_fragmentation",
        "text": "Text prefix + random fragmentation stress test\n\n<function=get_current_weather>\n"
        "<parameter=location>San Francisco</parameter>\n</function>",
        "calls": [call("get_current_weather", {"location": "San Francisco"})],
        "content": "Text prefix + random fragmentation stress test\n\n",
    },
    {
        "id": "implicit_parameter_close",
        "text": "Text prefix + implicit parameter close test\n\n<function=get_current_weather>\n"
        "<parameter=location>Paris\n<parameter=unit>celsius\n<parameter=days>3\n</function>",
        "calls": [call("get_current_weather", {"location": "Paris", "unit": "celsius", "days": 3})],
        "content": "Text prefix + implicit parameter close test\n\n",
    },
    {
        "id": "complex_schema",
        "text": "Text prefix + complex schema tool call test\n\n<function=TodoWrite>\n<parameter=todos>\n"
        '[\n {"content": "Buy a new car", "status": \'pending\'},\n'
        ' {"content": "Buy a new house", "status": "completed"}\n]\n</parameter>\n</function>\n\n',
        "calls": [
            call(
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Buy a new car", "status": "pending"},
                        {"content": "Buy a new house", "status": "completed"},
                    ]
                },
            )
        ],
        "content": "Text prefix + complex schema tool call test\n\n",
    },
]

# ------------------------------------------------------------------------------ SGLang Kimi

SK_SRC = "sgl-project/sglang test/registered/function_call/test_kimik2_detector.py @0d4564a1"
PATH_SCHEMA = {"path": {"type": "string", "description": "File path"}}
SK_TOOLS = [
    fn("ReadFile", PATH_SCHEMA),
    fn("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}}),
]
READ_TEST = f'{TB}functions.ReadFile:0{AB}{{"path": "/test.py"}}{TE}'
SGLANG_KIMI = [
    {
        "id": "single_tool_call",
        "text": SB + READ_TEST + SE,
        "calls": [call("ReadFile", {"path": "/test.py"})],
        "calls_raw": ['{"path": "/test.py"}'],
        "content": "",
    },
    {
        "id": "multiple_tool_calls",
        "text": SB
        + f'{TB}functions.ReadFile:0{AB}{{"path": "/a.py"}}{TE}'
        + f'{TB}functions.get_weather:1{AB}{{"city": "Tokyo"}}{TE}'
        + SE,
        "calls": [call("ReadFile", None), call("get_weather", {"city": "Tokyo"})],
        "calls_raw": ['{"path": "/a.py"}', '{"city": "Tokyo"}'],
    },
    {
        "id": "non_streaming_tool_index_is_local",
        "text": SB
        + f'{TB}functions.ReadFile:5{AB}{{"path": "/a.py"}}{TE}'
        + f'{TB}functions.get_weather:6{AB}{{"city": "Tokyo"}}{TE}'
        + SE,
        "calls": [call("ReadFile", None), call("get_weather", None)],
    },
    {
        "id": "normal_text_before_tool_call",
        "text": "Let me check the file." + SB + READ_TEST + SE,
        "calls": [call("ReadFile", None)],
        "content": "Let me check the file.",
    },
    {
        "id": "no_tool_call",
        "text": "Just a normal response.",
        "calls": [],
        "content": "Just a normal response.",
    },
    {
        "id": "hyphenated_name_non_streaming",
        "text": SB
        + f'{TB}functions.mcp__portal__search-documents:0{AB}{{"path": "/docs"}}{TE}'
        + SE,
        "tools": [fn("mcp__portal__search-documents", PATH_SCHEMA), fn("list-files", PATH_SCHEMA)],
        "calls": [call("mcp__portal__search-documents", None)],
    },
    {
        "id": "hyphenated_name_streaming",
        "chunks": [SB + f"{TB}functions.list-files:0{AB}" + '{"path', '": "/home"}', TE, SE],
        "tools": [fn("mcp__portal__search-documents", PATH_SCHEMA), fn("list-files", PATH_SCHEMA)],
        "calls": [call("list-files", {"path": "/home"})],
    },
    {
        "id": "streaming_trailing_literal_left_angle_is_not_dropped",
        "chunks": ["normal text <"],
        "tools": [],
        "content": "normal text <",
    },
    {
        "id": "streaming_single_tool_call",
        "chunks": [SB + f"{TB}functions.ReadFile:0{AB}" + "{", '"path": "/test.py"', "}", TE + SE],
        "calls": [call("ReadFile", None)],
        "calls_raw": ['{"path": "/test.py"}'],
    },
    {
        "id": "streaming_multiple_tool_calls",
        "chunks": [
            SB + f'{TB}functions.ReadFile:0{AB}{{"path": "/a.py"}}',
            TE,
            f'{TB}functions.get_weather:1{AB}{{"city": "Paris"}}',
            TE,
            SE,
        ],
        "calls": [call("ReadFile", None), call("get_weather", {"city": "Paris"})],
    },
    {
        "id": "no_leak_in_non_tool_text",
        "chunks": ["normal text" + SE],
        "tools": [fn("ReadFile", PATH_SCHEMA)],
        "content_contains": ["normal text"],
        "content_excludes": [SE],
    },
    {
        "id": "no_leak_of_argument_begin_token",
        "chunks": ["text" + AB + "more"],
        "tools": [fn("ReadFile", PATH_SCHEMA)],
        "content_excludes": [AB],
    },
    {
        "id": "reasoning_normal_with_think_end",
        "text": "<think>I need to check the file.</think>" + SB + READ_TEST + SE,
        "reasoning": "I need to check the file.",
        "calls": [call("ReadFile", {"path": "/test.py"})],
    },
    {
        "id": "reasoning_tool_call_inside_think_without_close_tag",
        "text": "<think>Let me read this file..." + SB + READ_TEST + SE,
        "reasoning": "Let me read this file...",
        "calls": [call("ReadFile", {"path": "/test.py"})],
    },
    {
        "id": "reasoning_none_just_tool_call",
        "text": SB + f'{TB}functions.ReadFile:0{AB}{{"path": "/x"}}{TE}' + SE,
        "reasoning": "",
        "calls": [call("ReadFile", {"path": "/x"})],
    },
]

FILES = {
    "sglang_kimik2.json": ("kimi", sourced(SK_SRC, SGLANG_KIMI, tools=SK_TOOLS)),
    "sglang_qwen3_coder.json": ("qwen_xml", sourced(SG_SRC, SGLANG, tools=SG_TOOLS)),
    "vllm_qwen_xml.json": (
        "qwen_xml",
        sourced(QX_SRC, QWEN_XML) + sourced(QC_SRC, QWEN_CODER) + sourced(QR_SRC, QWEN_REASONING),
    ),
    "vllm_hermes.json": ("hermes", sourced(H_SRC, HERMES)),
    "vllm_kimi_k2.json": ("kimi", sourced(K_SRC, KIMI)),
}

if __name__ == "__main__":
    for name, (fmt, cases) in FILES.items():
        data = {
            "format": fmt,
            "licence": "Apache-2.0; see LICENSE.md beside this file",
            "cases": cases,
        }
        (HERE / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
        print(name, len(cases))
