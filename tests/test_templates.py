"""Offline Kimi-K2 / Qwen2.5 tokenizers with the official templates: golden renders, markers,
loading."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from helpers.i18n import reset_language, set_language
from helpers.paths import REPO_ROOT, TOKENIZERS_DIR
from helpers.templates import (
    MARKERS,
    TEMPLATE_FILES,
    MarkerToken,
    decode_tool_arguments,
    load_tokenizer,
    marker_tokens,
)

# ---------------------------------------------------------------------------------------------
# Facts: the marker ids the models publish in their tokenizer_config.json (how sure each one is:
# docs/notes.md, "Known gaps") and the two reference renders, written out here.
# ---------------------------------------------------------------------------------------------

KIMI_FACT_IDS = {  # id -> (token, special)
    163586: ("<|im_end|>", True),
    163587: ("<|im_user|>", True),
    163588: ("<|im_assistant|>", True),
    163594: ("<|im_system|>", True),
    163601: ("<|im_middle|>", True),
    163595: ("<|tool_calls_section_begin|>", False),
    163596: ("<|tool_calls_section_end|>", False),
    163597: ("<|tool_call_begin|>", False),
    163598: ("<|tool_call_argument_begin|>", False),
    163599: ("<|tool_call_end|>", False),
}
QWEN_FACT_IDS = {  # <tool_call> ids are marked unconfirmed in the facts
    151644: ("<|im_start|>", True),
    151645: ("<|im_end|>", True),
    151657: ("<tool_call>", False),
    151658: ("</tool_call>", False),
}
FACT_IDS = {"kimi-k2": KIMI_FACT_IDS, "qwen2.5": QWEN_FACT_IDS}

KIMI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather information. "
            "Call this tool when the user needs to get weather information",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string", "description": "City name"}},
            },
        },
    }
]
KIMI_REFERENCE_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": "What's the weather like in Beijing today? Let's check using the tool.",
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "functions.get_weather:0",
        "name": "get_weather",
        "content": '{"weather": "Sunny"}',
    },
]
# The facts show this render on ONE line with `\n` written literally: here they are newlines.
KIMI_REFERENCE = '<|im_system|>tool_declare<|im_middle|>\n  # Tools\n  [{"type": "function", "function": {"name": "get_weather", "description": "Get weather information. Call this tool when the user needs to get weather information", "parameters": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string", "description": "City name"}}}}}]<|im_end|><|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|><|im_user|>user<|im_middle|>What\'s the weather like in Beijing today? Let\'s check using the tool.<|im_end|><|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|><|im_end|><|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\n    {"weather": "Sunny"}<|im_end|><|im_assistant|>assistant<|im_middle|>'  # noqa: E501

QWEN_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The city and state, e.g. San Francisco, CA",
                    },
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["location"],
            },
        },
    }
]
QWEN_REFERENCE_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather like in Paris right now?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "arguments": {"location": "Paris, France", "unit": "celsius"},
                },
            }
        ],
    },
    {
        "role": "tool",
        "name": "get_current_weather",
        "content": '{"temperature": 22, "unit": "celsius", "condition": "sunny"}',
    },
]
QWEN_REFERENCE = """<|im_start|>system
You are Qwen, created by Alibaba Cloud. You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_current_weather", "description": "Get the current weather in a given location", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What's the weather like in Paris right now?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_current_weather", "arguments": {"location": "Paris, France", "unit": "celsius"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 22, "unit": "celsius", "condition": "sunny"}
</tool_response><|im_end|>
<|im_start|>assistant
"""  # noqa: E501

KIMI_DEFAULT_SYSTEM = "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
KIMI_DECLARE = KIMI_REFERENCE[: KIMI_REFERENCE.index("<|im_end|>") + len("<|im_end|>")]
QWEN_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
QWEN_TOOLS_INTRO = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
QWEN_TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
)


def call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    """An OpenAI-shaped tool call (no id when `call_id` is None)."""
    tool_call: dict[str, Any] = {
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    if call_id is not None:
        tool_call["id"] = call_id
    return tool_call


def tool(call_id: str, content: str, name: str | None = "get_weather") -> dict[str, Any]:
    """A tool-result message."""
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name is not None:
        message["name"] = name
    return message


@pytest.fixture(scope="module")
def kimi() -> Any:
    """The offline Kimi-K2 tokenizer."""
    return load_tokenizer("kimi-k2")


@pytest.fixture(scope="module")
def qwen() -> Any:
    """The offline Qwen2.5 tokenizer."""
    return load_tokenizer("qwen2.5")


def render(
    tokenizer: Any, messages: list[Any], tools: list[dict] | None = None, gen: bool = True
) -> str:
    """What the lessons call: apply_chat_template without tokenizing."""
    return tokenizer.apply_chat_template(
        messages, tools=tools, tokenize=False, add_generation_prompt=gen
    )


# ---------------------------------------------------------------------------------------------
# Kimi-K2 template
# ---------------------------------------------------------------------------------------------


def test_kimi_reference_render(kimi: Any) -> None:
    assert render(kimi, KIMI_REFERENCE_MESSAGES, KIMI_TOOLS) == KIMI_REFERENCE


def test_kimi_reference_render_with_dict_arguments_and_sdk_object(kimi: Any) -> None:
    from openai.types.chat import ChatCompletionMessage

    dict_args = json.loads(json.dumps(KIMI_REFERENCE_MESSAGES))
    dict_args[1]["tool_calls"][0]["function"]["arguments"] = {"city": "Beijing"}
    assert render(kimi, dict_args, KIMI_TOOLS) == KIMI_REFERENCE
    sdk = list(KIMI_REFERENCE_MESSAGES)
    sdk[1] = ChatCompletionMessage.model_validate(KIMI_REFERENCE_MESSAGES[1])
    if _transformers_version() >= (5, 21):  # reads an SDK message object like a dict
        assert render(kimi, sdk, KIMI_TOOLS) == KIMI_REFERENCE
    else:  # 5.20 (the newest on Python 3.10) refuses it; the lessons render dicts, read by all
        with pytest.raises(jinja2.exceptions.UndefinedError, match="has no attribute 'get'"):
            render(kimi, sdk, KIMI_TOOLS)


def _transformers_version() -> tuple[int, int]:
    import transformers

    major, minor = transformers.__version__.split(".")[:2]
    return int(major), int(minor)


def test_kimi_two_rounds_of_calls(kimi: Any) -> None:
    messages = [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "Beijing, then Moscow?"},
        {
            "role": "assistant",
            "tool_calls": [call("functions.get_weather:0", "get_weather", '{"city": "Beijing"}')],
        },  # noqa: E501
        tool("functions.get_weather:0", '{"weather": "Sunny"}'),
        {
            "role": "assistant",
            "content": "Beijing is sunny. Now Moscow.",
            "tool_calls": [call("functions.get_weather:1", "get_weather", '{"city": "Moscow"}')],
        },
        tool("functions.get_weather:1", '{"weather": "Snow"}'),
        {"role": "assistant", "content": "Beijing: sunny; Moscow: snow."},
    ]
    expected = (
        KIMI_DECLARE
        + "<|im_system|>system<|im_middle|>You are a weather bot.<|im_end|>"
        + "<|im_user|>user<|im_middle|>Beijing, then Moscow?<|im_end|>"
        + "<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|>"
        + "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        + '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
        + "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\n"
        + '    {"weather": "Sunny"}<|im_end|>'
        + "<|im_assistant|>assistant<|im_middle|>Beijing is sunny. Now Moscow."
        + "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:1"
        + '<|tool_call_argument_begin|>{"city": "Moscow"}<|tool_call_end|>'
        + "<|tool_calls_section_end|><|im_end|>"
        + "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:1\n"
        + '    {"weather": "Snow"}<|im_end|>'
        + "<|im_assistant|>assistant<|im_middle|>Beijing: sunny; Moscow: snow.<|im_end|>"
    )
    assert render(kimi, messages, KIMI_TOOLS, gen=False) == expected
    opened = render(kimi, messages, KIMI_TOOLS, gen=True)
    assert opened == expected + "<|im_assistant|>assistant<|im_middle|>"


def test_kimi_parallel_calls_content_and_non_ascii(kimi: Any) -> None:
    messages = [
        {"role": "user", "content": "Какая погода в Пекине и 上海?"},
        {
            "role": "assistant",
            "content": "Проверяю оба города.",
            "tool_calls": [
                call("get_weather:0", "get_weather", '{"city": "Пекин"}'),
                call("get_weather:1", "get_weather", {"city": "上海"}),
            ],
        },
        tool("get_weather:0", '{"погода": "солнечно"}'),
        tool("get_weather:1", '{"天气": "晴"}'),
    ]
    expected = (
        KIMI_DEFAULT_SYSTEM
        + "<|im_user|>user<|im_middle|>Какая погода в Пекине и 上海?<|im_end|>"
        + "<|im_assistant|>assistant<|im_middle|>Проверяю оба города.<|tool_calls_section_begin|>"
        + '<|tool_call_begin|>get_weather:0<|tool_call_argument_begin|>{"city": "Пекин"}'
        + "<|tool_call_end|>"
        + '<|tool_call_begin|>get_weather:1<|tool_call_argument_begin|>{"city": "上海"}'
        + "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"
        + "<|im_system|>get_weather<|im_middle|>## Return of get_weather:0\n"
        + '    {"погода": "солнечно"}<|im_end|>'
        + "<|im_system|>get_weather<|im_middle|>## Return of get_weather:1\n"
        + '    {"天气": "晴"}<|im_end|>'
        + "<|im_assistant|>assistant<|im_middle|>"
    )
    assert render(kimi, messages) == expected


def test_kimi_arguments_verbatim_strings_and_json_dicts(kimi: Any) -> None:
    odd = '{ "city" :"Beijing" }'  # model text is kept byte for byte, even invalid JSON
    broken = '{"city": "Beij'
    messages = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "tool_calls": [
                call("a:0", "f", odd),
                call("a:1", "f", broken),
                call("a:2", "f", {"q": "Пекин", "n": [1, 2]}),
            ],
        },
    ]
    out = render(kimi, messages, gen=False)
    assert f"<|tool_call_argument_begin|>{odd}<|tool_call_end|>" in out
    assert f"<|tool_call_argument_begin|>{broken}<|tool_call_end|>" in out
    assert '<|tool_call_argument_begin|>{"q": "Пекин", "n": [1, 2]}<|tool_call_end|>' in out
    assert out.endswith("<|tool_calls_section_end|><|im_end|>")


def test_kimi_ids_are_written_verbatim_and_a_missing_id_stays_empty(kimi: Any) -> None:
    """The official 0905 template writes `tool_call["id"]` and `tool_call_id` as given and invents
    nothing: a client that drops the ids sends the model a call and a result it cannot pair."""
    given = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call("c1", "a", "{}")]},
        tool("c1", "4"),
    ]
    out = render(kimi, given)
    assert "<|tool_call_begin|>c1<|tool_call_argument_begin|>" in out
    assert "## Return of c1\n    4<|im_end|>" in out
    missing = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call(None, "a", "{}")]},
        {"role": "tool", "name": "a", "content": "1"},
    ]
    out = render(kimi, missing, gen=False)
    assert "<|tool_call_begin|><|tool_call_argument_begin|>{}<|tool_call_end|>" in out
    assert out.endswith("<|im_system|>a<|im_middle|>## Return of \n    1<|im_end|>")


def test_kimi_generation_prompt_false_closes_the_last_turn(kimi: Any) -> None:
    """Every confirmed upstream version closes the last turn; continue_final_message leaves it open."""
    partial = [
        {"role": "user", "content": "Погода?"},
        {"role": "assistant", "content": "Погода в Пекине"},
    ]
    head = KIMI_DEFAULT_SYSTEM + "<|im_user|>user<|im_middle|>Погода?<|im_end|>"
    assert render(kimi, partial, gen=False) == (
        head + "<|im_assistant|>assistant<|im_middle|>Погода в Пекине<|im_end|>"
    )
    last_tool = render(kimi, KIMI_REFERENCE_MESSAGES, KIMI_TOOLS, gen=False)
    assert last_tool == KIMI_REFERENCE.removesuffix("<|im_assistant|>assistant<|im_middle|>")
    continued = kimi.apply_chat_template(partial, tokenize=False, continue_final_message=True)
    assert continued == head + "<|im_assistant|>assistant<|im_middle|>Погода в Пекине"


@pytest.mark.parametrize("name", ["kimi-k2", "qwen2.5"])
def test_dict_tool_result_prints_its_python_repr_like_upstream(
    name: str, kimi: Any, qwen: Any
) -> None:
    """A student who forgets json.dumps sees the repr in the prompt, as upstream renders it."""
    tokenizer = {"kimi-k2": kimi, "qwen2.5": qwen}[name]
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call("functions.get_weather:0", "get_weather", "{}")]},
        {
            "role": "tool",
            "tool_call_id": "functions.get_weather:0",
            "content": {"weather": "Sunny"},
        },
    ]
    out = render(tokenizer, messages)
    assert "{'weather': 'Sunny'}" in out
    if name == "kimi-k2":
        assert "## Return of functions.get_weather:0\n    {'weather': 'Sunny'}<|im_end|>" in out
    else:
        assert "<tool_response>\n{'weather': 'Sunny'}\n</tool_response>" in out


def test_kimi_no_tools_omits_declaration(kimi: Any) -> None:
    messages = [{"role": "user", "content": "Привет"}]
    expected = (
        KIMI_DEFAULT_SYSTEM
        + "<|im_user|>user<|im_middle|>Привет<|im_end|><|im_assistant|>assistant<|im_middle|>"
    )
    assert render(kimi, messages) == expected
    assert render(kimi, messages, tools=[]) == expected
    own_system = [{"role": "system", "content": "Ты — Кими."}, *messages]
    assert render(kimi, own_system) == (
        "<|im_system|>system<|im_middle|>Ты — Кими.<|im_end|>"
        + "<|im_user|>user<|im_middle|>Привет<|im_end|><|im_assistant|>assistant<|im_middle|>"
    )


def test_kimi_name_replaces_role_and_content_parts(kimi: Any) -> None:
    """Official 0905 behaviour: `name` replaces the role in the header; text parts are joined, an
    image part becomes the media placeholder (and a newline); a tool result's parts are NOT
    unpacked (the template prints the list's Python repr)."""
    messages = [
        {"role": "system", "content": "S"},
        {
            "role": "user",
            "name": "alice",
            "content": [
                {"type": "text", "text": "Hello, "},
                {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}},
                {"type": "text", "text": "Кими"},
            ],
        },
        {"role": "assistant", "name": "kimi", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "tool", "tool_call_id": "f:0", "content": [{"type": "text", "text": "42"}]},
    ]
    assert render(kimi, messages) == (
        "<|im_system|>system<|im_middle|>S<|im_end|>"
        "<|im_user|>alice<|im_middle|>Hello, "
        "<|media_start|>image<|media_content|><|media_pad|><|media_end|>\nКими<|im_end|>"
        "<|im_assistant|>kimi<|im_middle|>Hi<|im_end|>"
        "<|im_system|>tool<|im_middle|>## Return of f:0\n    [{'type': 'text', 'text': '42'}]"
        "<|im_end|><|im_assistant|>assistant<|im_middle|>"
    )


# ---------------------------------------------------------------------------------------------
# Qwen2.5 template
# ---------------------------------------------------------------------------------------------


def test_qwen_reference_render(qwen: Any) -> None:
    assert render(qwen, QWEN_REFERENCE_MESSAGES, QWEN_TOOLS) == QWEN_REFERENCE


def test_qwen_string_arguments_are_encoded_twice_like_the_real_template(qwen: Any) -> None:
    openai_style = json.loads(json.dumps(QWEN_REFERENCE_MESSAGES))
    arguments = '{"location": "Paris, France", "unit": "celsius"}'
    openai_style[1]["tool_calls"][0]["function"]["arguments"] = arguments
    double = QWEN_REFERENCE.replace(
        '"arguments": {"location": "Paris, France", "unit": "celsius"}}',
        '"arguments": "{\\"location\\": \\"Paris, France\\", \\"unit\\": \\"celsius\\"}"}',
    )
    assert double != QWEN_REFERENCE
    assert render(qwen, openai_style, QWEN_TOOLS) == double
    # The fix vLLM applies: json.loads the arguments before templating.
    fixed = decode_tool_arguments(openai_style)
    assert render(qwen, fixed, QWEN_TOOLS) == QWEN_REFERENCE
    assert openai_style[1]["tool_calls"][0]["function"]["arguments"] == arguments  # not mutated


def test_qwen_system_tools_content_parallel_calls_and_merged_results(qwen: Any) -> None:
    temperature = {"location": "San Francisco, CA, USA"}
    dated = {"location": "San Francisco, CA, USA", "date": "2024-10-01"}
    messages = [
        {"role": "system", "content": "Ты — помощник по погоде."},
        {"role": "user", "content": "Температура в Сан-Франциско сейчас и завтра?"},
        {
            "role": "assistant",
            "content": "Сейчас узнаю.",
            "tool_calls": [
                call("c0", "get_current_temperature", temperature),
                call("c1", "get_temperature_date", dated),
            ],
        },
        tool("c0", '{"temperature": 26.1}', name="get_current_temperature"),
        tool("c1", '{"temperature": 25.9, "город": "Сан-Франциско"}', name="get_temperature_date"),
        {"role": "assistant", "content": "Сейчас 26.1 °C, завтра 25.9 °C. 谢谢"},
    ]
    tool_lines = "".join("\n" + json.dumps(t, ensure_ascii=False) for t in QWEN_TOOLS * 2)
    expected = (
        "<|im_start|>system\nТы — помощник по погоде."
        + QWEN_TOOLS_INTRO
        + tool_lines
        + QWEN_TOOLS_OUTRO
        + "<|im_start|>user\nТемпература в Сан-Франциско сейчас и завтра?<|im_end|>\n"
        + "<|im_start|>assistant\nСейчас узнаю."
        + '\n<tool_call>\n{"name": "get_current_temperature", "arguments": '
        + '{"location": "San Francisco, CA, USA"}}\n</tool_call>'
        + '\n<tool_call>\n{"name": "get_temperature_date", "arguments": '
        + '{"location": "San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call><|im_end|>\n'
        + "<|im_start|>user"
        + '\n<tool_response>\n{"temperature": 26.1}\n</tool_response>'
        + '\n<tool_response>\n{"temperature": 25.9, "город": "Сан-Франциско"}\n</tool_response>'
        + "<|im_end|>\n"
        + "<|im_start|>assistant\nСейчас 26.1 °C, завтра 25.9 °C. 谢谢<|im_end|>\n"
    )
    assert render(qwen, messages, QWEN_TOOLS * 2, gen=False) == expected


def test_qwen_two_rounds_of_calls(qwen: Any) -> None:
    messages = [
        {"role": "user", "content": "Paris, then Rome?"},
        {
            "role": "assistant",
            "tool_calls": [call("a", "get_current_weather", {"location": "Paris"})],
        },
        tool("a", "sunny"),
        {
            "role": "assistant",
            "tool_calls": [call("b", "get_current_weather", {"location": "Rome"})],
        },
        tool("b", "rain"),
        {"role": "assistant", "content": "Paris: sunny. Rome: rain."},
        {"role": "user", "content": "Thanks!"},
    ]
    expected = (
        "<|im_start|>system\n"
        + QWEN_DEFAULT_SYSTEM
        + QWEN_TOOLS_INTRO
        + "\n"
        + json.dumps(QWEN_TOOLS[0])
        + QWEN_TOOLS_OUTRO
        + "<|im_start|>user\nParis, then Rome?<|im_end|>\n"
        + "<|im_start|>assistant\n<tool_call>\n"
        + '{"name": "get_current_weather", "arguments": {"location": "Paris"}}\n</tool_call><|im_end|>\n'
        + "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
        + "<|im_start|>assistant\n<tool_call>\n"
        + '{"name": "get_current_weather", "arguments": {"location": "Rome"}}\n</tool_call><|im_end|>\n'
        + "<|im_start|>user\n<tool_response>\nrain\n</tool_response><|im_end|>\n"
        + "<|im_start|>assistant\nParis: sunny. Rome: rain.<|im_end|>\n"
        + "<|im_start|>user\nThanks!<|im_end|>\n"
        + "<|im_start|>assistant\n"
    )
    assert render(qwen, messages, QWEN_TOOLS) == expected


def test_qwen_no_tools_default_and_own_system(qwen: Any) -> None:
    messages = [{"role": "user", "content": "Привет, 你好"}]
    expected = (
        f"<|im_start|>system\n{QWEN_DEFAULT_SYSTEM}<|im_end|>\n"
        "<|im_start|>user\nПривет, 你好<|im_end|>\n<|im_start|>assistant\n"
    )
    assert render(qwen, messages) == expected
    assert render(qwen, messages, tools=[]) == expected
    own = [{"role": "system", "content": "Be brief."}, *messages]
    assert render(qwen, own, gen=False) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nПривет, 你好<|im_end|>\n"
    )


def test_qwen_sdk_message_object_renders_like_its_dict(qwen: Any) -> None:
    from openai.types.chat import ChatCompletionMessage

    as_dict = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("call_1", "get_current_weather", '{"location": "Paris"}')],
    }
    head = [QWEN_REFERENCE_MESSAGES[0]]
    sdk = ChatCompletionMessage.model_validate(as_dict)
    out = render(qwen, [*head, sdk], QWEN_TOOLS, gen=False)
    assert out == render(qwen, [*head, as_dict], QWEN_TOOLS, gen=False)
    assert out.endswith(
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_current_weather", '
        '"arguments": "{\\"location\\": \\"Paris\\"}"}\n</tool_call><|im_end|>\n'
    )


def test_decode_tool_arguments_keeps_invalid_json_and_other_messages() -> None:
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call("a", "f", '{"q": 1}'), call("b", "f", "{bad")]},
    ]
    decoded = decode_tool_arguments(messages)
    assert decoded[0] == messages[0]
    assert [c["function"]["arguments"] for c in decoded[1]["tool_calls"]] == [{"q": 1}, "{bad"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"q": 1}'
    from openai.types.chat import ChatCompletionMessage

    sdk = ChatCompletionMessage.model_validate({**messages[1], "content": None})
    assert decode_tool_arguments([sdk])[0]["tool_calls"] == decoded[1]["tool_calls"]


# ---------------------------------------------------------------------------------------------
# Tokenizers: markers, special flags, round trip
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kimi-k2", "qwen2.5"])
def test_markers_are_single_tokens_with_documented_ids(name: str, kimi: Any, qwen: Any) -> None:
    tokenizer = {"kimi-k2": kimi, "qwen2.5": qwen}[name]
    facts = FACT_IDS[name]
    assert {m.token: m.id for m in MARKERS[name]} == {t: i for i, (t, _) in facts.items()}
    for token_id, (token, special) in facts.items():
        assert tokenizer.encode(token, add_special_tokens=False) == [token_id]
        assert tokenizer.convert_ids_to_tokens(token_id) == token
        assert tokenizer.added_tokens_decoder[token_id].special is special
    assert marker_tokens(tokenizer) == [
        MarkerToken(token, token_id, special)
        for token_id, (token, special) in sorted(facts.items())
    ]


def test_skip_special_tokens_keeps_tool_markers_drops_turn_markers(kimi: Any, qwen: Any) -> None:
    for tokenizer, prompt, name in (
        (kimi, KIMI_REFERENCE, "kimi-k2"),
        (qwen, QWEN_REFERENCE, "qwen2.5"),
    ):
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        assert tokenizer.decode(ids) == prompt
        expected = prompt
        for token, special in FACT_IDS[name].values():
            if special:
                expected = expected.replace(token, "")
        assert tokenizer.decode(ids, skip_special_tokens=True) == expected
        assert "<|tool_call_begin|>" in expected or "<tool_call>" in expected


def test_rendered_prompt_uses_marker_ids(kimi: Any) -> None:
    ids = kimi.apply_chat_template(
        KIMI_REFERENCE_MESSAGES, tools=KIMI_TOOLS, add_generation_prompt=True, tokenize=True
    )
    ids = list(ids["input_ids"]) if not isinstance(ids, list) else ids
    assert kimi.decode(ids) == KIMI_REFERENCE
    assert ids[0] == 163594 and ids[-1] == 163601
    for token_id in (163595, 163596, 163597, 163598, 163599):
        assert ids.count(token_id) == 1
    assert ids.count(163586) == 5 and ids.count(163601) == 6


ALL_MARKERS = sorted({token for ids in FACT_IDS.values() for token, _ in ids.values()})
TEXTS = st.lists(st.one_of(st.text(), st.sampled_from(ALL_MARKERS)), max_size=6).map("".join)


@settings(max_examples=examples(150), deadline=None)
@given(text=TEXTS)
def test_encode_decode_round_trip(kimi: Any, qwen: Any, text: str) -> None:
    for tokenizer in (kimi, qwen):
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert tokenizer.decode(ids) == text
        assert set(ids) <= set(tokenizer.get_vocab().values())


# ---------------------------------------------------------------------------------------------
# Loading: never touches the network
# ---------------------------------------------------------------------------------------------


def test_local_load_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, with every way to open a socket blocked and HF_HUB_OFFLINE unset: the
    offline tokenizers load and render, and nothing even tries to connect."""
    import socket

    attempts: list[str] = []

    def blocked(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args)[:200])
        raise OSError("network disabled by the test")

    for target, name in (
        (socket.socket, "connect"),
        (socket.socket, "connect_ex"),
        (socket, "create_connection"),
        (socket, "getaddrinfo"),
    ):
        monkeypatch.setattr(target, name, blocked)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for name in ("kimi-k2", "qwen2.5", "kimi-k2-thinking", "qwen3", "qwen3.5"):
        tokenizer = load_tokenizer(name)
        assert type(tokenizer).__name__ == "TokenizersBackend"
        tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert attempts == []


def test_unknown_names_are_rejected_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="'kimi-k2', 'qwen2.5'"):
        load_tokenizer("kimi")
    set_language("ru")  # a student's typo in the Russian edition gets a Russian message
    try:
        with pytest.raises(
            ValueError, match="Неизвестный токенизатор 'kimi'.*'kimi-k2', 'qwen2.5'"
        ):
            load_tokenizer("kimi")
    finally:
        reset_language()


# ---------------------------------------------------------------------------------------------
# The committed folders: reproducible, small, carrying the template files
# ---------------------------------------------------------------------------------------------


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a folder (recursively) by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_build_is_reproducible_and_committed_files_are_up_to_date(tmp_path: Path) -> None:
    script = REPO_ROOT / "scripts" / "build_tokenizers.py"
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    for run in ("a", "b"):
        subprocess.run(
            [sys.executable, str(script), "--out", str(tmp_path / run)],
            cwd=tmp_path,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
    for name in MARKERS:
        built = folder_bytes(tmp_path / "a" / name)
        assert set(built) == {
            "README.md",
            "chat_template.jinja",
            "tokenizer.json",
            "tokenizer_config.json",
        }
        assert built == folder_bytes(tmp_path / "b" / name)
        assert built == folder_bytes(TOKENIZERS_DIR / name), (
            "run python scripts/build_tokenizers.py"
        )


@pytest.mark.parametrize("name", ["kimi-k2", "qwen2.5"])
def test_folders_are_small_and_carry_the_template(name: str, kimi: Any, qwen: Any) -> None:
    folder = TOKENIZERS_DIR / name
    assert sum(len(b) for b in folder_bytes(folder).values()) < 200_000
    template = TEMPLATE_FILES[name].read_text(encoding="utf-8")
    assert (folder / "chat_template.jinja").read_text(encoding="utf-8") == template
    assert {"kimi-k2": kimi, "qwen2.5": qwen}[name].chat_template == template
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "not** the real" in readme and "data/templates/README.md" in readme
    for token_id, _ in FACT_IDS[name].items():
        assert str(token_id) in readme
    assert ("unconfirmed" in readme) == (name == "qwen2.5")


def test_local_load_sets_hf_hub_offline_only_while_it_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import helpers.templates as templates

    loader = templates.tokenizer_class(templates.local_tokenizer_dir("qwen2.5"))
    seen: list[str | None] = []
    real = loader.from_pretrained

    def from_pretrained(source: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(os.environ.get("HF_HUB_OFFLINE"))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(loader, "from_pretrained", from_pretrained)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    load_tokenizer("qwen2.5")
    assert seen == ["1"] and "HF_HUB_OFFLINE" not in os.environ
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    load_tokenizer("qwen2.5")
    assert seen[-1] == "1" and os.environ["HF_HUB_OFFLINE"] == "0"
