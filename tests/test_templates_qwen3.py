"""Golden renders of the offline Qwen3 and Qwen3.5 chat templates (lesson 07).

Expected texts are written from the documented template rules (Qwen3: the Qwen3-0.6B template;
Qwen3.5: the official Qwen3.5 template as llama.cpp and alibaba/rtp-llm vendor it, issue 18), not
read back from the renderer. Each test names the rule it checks.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from helpers.formats import parse_hermes, parse_qwen_xml
from helpers.templates import MARKERS, decode_tool_arguments, load_tokenizer

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
TOOL_JSON = json.dumps(TOOL, ensure_ascii=False)
QUESTION = {"role": "user", "content": "Weather in Paris for 3 days?"}


def assistant(arguments: Any, content: str = "", reasoning: str | None = None) -> dict:
    """An assistant message with one get_weather call."""
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
        ],
    }
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return message


RESULT = {"role": "tool", "tool_call_id": "c0", "content": '{"weather": "Sunny"}'}


@pytest.fixture(scope="module")
def qwen3() -> Any:
    return load_tokenizer("qwen3")


@pytest.fixture(scope="module")
def qwen35() -> Any:
    return load_tokenizer("qwen3.5")


def render(tokenizer: Any, messages: list, **kwargs: Any) -> str:
    return tokenizer.apply_chat_template(messages, tools=[TOOL], tokenize=False, **kwargs)


QWEN3_TOOLS_BLOCK = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    f"{TOOL_JSON}\n</tools>\n\nFor each function call, return a json object with function name "
    "and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
)

# ------------------------------------------------------------------------------------- Qwen3


def test_qwen3_no_default_system_prompt_and_the_hermes_tools_block(qwen3: Any) -> None:
    text = render(qwen3, [QUESTION], add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\n"
        + QWEN3_TOOLS_BLOCK
        + "<|im_start|>user\nWeather in Paris for 3 days?<|im_end|>\n<|im_start|>assistant\n"
    )
    plain = qwen3.apply_chat_template([QUESTION], tokenize=False)
    assert plain == "<|im_start|>user\nWeather in Paris for 3 days?<|im_end|>\n"


def test_qwen3_system_prompt_comes_before_the_tools(qwen3: Any) -> None:
    text = render(qwen3, [{"role": "system", "content": "Be brief."}, QUESTION])
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n\n")


def test_qwen3_enable_thinking_false_adds_an_empty_think_block(qwen3: Any) -> None:
    on = render(qwen3, [QUESTION], add_generation_prompt=True)
    off = render(qwen3, [QUESTION], add_generation_prompt=True, enable_thinking=False)
    assert on.endswith("<|im_start|>assistant\n")
    assert off == on + "<think>\n\n</think>\n\n"


def test_qwen3_reasoning_kept_after_the_last_user_query_only(qwen3: Any) -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!", "reasoning_content": "greet back"},
        QUESTION,
        assistant({"city": "Paris", "days": 3}, reasoning="Need the tool."),
        RESULT,
    ]
    text = render(qwen3, messages, add_generation_prompt=True)
    assert "greet back" not in text  # before the last query: reasoning dropped
    assert "<|im_start|>assistant\nHello!<|im_end|>\n" in text
    assert (
        "<|im_start|>assistant\n<think>\nNeed the tool.\n</think>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\n"
        '{"weather": "Sunny"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
    ) in text


def test_qwen3_think_in_content_is_split_off(qwen3: Any) -> None:
    message = assistant({"city": "Paris"}, content="<think>\nhmm\n</think>\n\nChecking.")
    text = render(qwen3, [QUESTION, message, RESULT])
    assert "<|im_start|>assistant\n<think>\nhmm\n</think>\n\nChecking.\n<tool_call>\n" in text


def test_qwen3_string_arguments_verbatim_dicts_tojson(qwen3: Any) -> None:
    as_string = render(qwen3, [QUESTION, assistant('{"city": "Paris"}'), RESULT])
    as_dict = render(qwen3, [QUESTION, assistant({"city": "Paris"}), RESULT])
    assert '{"name": "get_weather", "arguments": {"city": "Paris"}}' in as_string
    assert as_string == as_dict  # no double encoding, unlike Qwen2.5


def test_qwen3_rendered_call_is_what_parse_hermes_reads(qwen3: Any) -> None:
    text = render(qwen3, [QUESTION, assistant({"city": "Paris"}, reasoning="r"), RESULT])
    turn = text.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    result = parse_hermes(turn)
    assert result.reasoning == "r"
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}


# ----------------------------------------------------------------------------------- Qwen3.5
# Unconfirmed: the Qwen3.5 rules come from a mirror of the Qwen3.5-4B template.


def test_qwen35_tools_block_first_then_the_system_prompt(qwen35: Any) -> None:
    text = render(qwen35, [{"role": "system", "content": "Be brief."}, QUESTION])
    assert text.startswith(
        "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n"
        f"{TOOL_JSON}\n</tools>\n\nIf you choose to call a function ONLY reply in the following "
        "format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n"
        "<parameter=example_parameter_1>\nvalue_1\n</parameter>"
    )
    assert "\n</IMPORTANT>\n\nBe brief.<|im_end|>\n<|im_start|>user\n" in text


def test_qwen35_no_default_system_prompt(qwen35: Any) -> None:
    plain = qwen35.apply_chat_template([QUESTION], tokenize=False)
    assert plain == "<|im_start|>user\nWeather in Paris for 3 days?<|im_end|>\n"


def test_qwen35_generation_prompt_opens_think(qwen35: Any) -> None:
    on = render(qwen35, [QUESTION], add_generation_prompt=True)
    off = render(qwen35, [QUESTION], add_generation_prompt=True, enable_thinking=False)
    assert on.endswith("<|im_start|>assistant\n<think>\n")
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_qwen35_xml_calls_reasoning_and_merged_results(qwen35: Any) -> None:
    second = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": None}},
    }
    message = assistant({"city": "Paris", "days": 3}, content="Checking.", reasoning="Two cities.")
    message["tool_calls"].append(second)
    results = [RESULT, {"role": "tool", "tool_call_id": "c1", "content": "Snow"}]
    text = render(qwen35, [QUESTION, message, *results], add_generation_prompt=True)
    assert text.endswith(
        "<|im_start|>assistant\n<think>\nTwo cities.\n</think>\n\nChecking.\n\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
        "<parameter=days>\nNone\n</parameter>\n</function>\n</tool_call><|im_end|>\n"
        '<|im_start|>user\n<tool_response>\n{"weather": "Sunny"}\n</tool_response>\n'
        "<tool_response>\nSnow\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"
    )


def test_qwen35_empty_think_block_in_every_assistant_turn_after_the_last_user_message(
    qwen35: Any,
) -> None:
    """Official rule: after the last user query every assistant turn gets <think>...</think>, an
    EMPTY one when there was no reasoning; turns before that query get none."""
    first = assistant({"city": "Paris"})
    answer = {"role": "assistant", "content": "Sunny."}
    follow_up = {"role": "user", "content": "And Oslo?"}
    second = assistant({"city": "Oslo"}, reasoning="")
    messages = [QUESTION, first, RESULT, answer, follow_up, second, RESULT]
    text = render(qwen35, messages)
    before, after = text.split("<|im_start|>user\nAnd Oslo?<|im_end|>\n")
    assert "<think>" not in before
    assert "<|im_start|>assistant\n<tool_call>\n<function=get_weather>\n" in before
    assert after.startswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=get_weather>\n"
    )
    no_field = render(qwen35, [QUESTION, assistant({"city": "Paris"}), RESULT])
    assert "<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>" in no_field


def test_qwen35_scalar_arguments_are_written_with_jinja_string(qwen35: Any) -> None:
    """Official rule: scalars go through `| string` (Python spellings `True`, `None`), strings as
    they are, mappings and lists through `tojson` (JSON spellings inside them)."""
    arguments = {"flag": True, "off": False, "none": None, "n": 1.5, "s": "true"}
    arguments |= {"items": [1, True], "nested": {"k": None}}
    text = render(qwen35, [QUESTION, assistant(arguments), RESULT])
    text = text[text.rindex("<|im_start|>assistant") :]  # not the example in the tools block
    values = dict(re.findall(r"<parameter=(\w+)>\n(.*?)\n</parameter>", text))
    assert values == {
        "flag": "True",
        "off": "False",
        "none": "None",
        "n": "1.5",
        "s": "true",
        "items": "[1, true]",
        "nested": '{"k": null}',
    }


def test_qwen35_string_arguments_stop_the_render(qwen35: Any) -> None:
    """The template iterates `arguments|items`: an OpenAI JSON string is not a mapping."""
    messages = [QUESTION, assistant('{"city": "Paris"}'), RESULT]
    with pytest.raises(TypeError, match="Can only get item pairs from a mapping"):
        render(qwen35, messages)
    assert "<parameter=city>\nParis\n" in render(qwen35, decode_tool_arguments(messages))


def test_qwen35_documented_errors(qwen35: Any) -> None:
    with pytest.raises(Exception, match="No user query found in messages."):
        render(qwen35, [{"role": "system", "content": "x"}])
    with pytest.raises(Exception, match="System message must be at the beginning."):
        render(qwen35, [QUESTION, {"role": "system", "content": "x"}])


def test_qwen35_rendered_turn_is_what_parse_qwen_xml_reads(qwen35: Any) -> None:
    prompt = render(qwen35, [QUESTION], add_generation_prompt=True)
    full = render(qwen35, [QUESTION, assistant({"city": "Paris", "days": 3}, reasoning="r")])
    output = full[len(prompt) :].removesuffix("<|im_end|>\n")  # what the model generated
    result = parse_qwen_xml(output, [TOOL], reasoning_open=True)
    assert result.reasoning == "r"
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"city": "Paris", "days": 3}


# ----------------------------------------------------------------------------------- markers


@pytest.mark.parametrize("name", ["qwen3", "qwen3.5"])
def test_think_and_tool_markers_are_single_non_special_tokens(name: str) -> None:
    tokenizer = load_tokenizer(name)
    ids = {m.token: m.id for m in MARKERS[name]}
    assert ids["<tool_call>"] == 151657 and ids["</tool_call>"] == 151658
    for token in ("<think>", "</think>", "<tool_call>", "</tool_call>"):
        assert tokenizer.encode(token) == [ids[token]]
    text = "<think>\nr\n</think>\n\n<tool_call>\n{}\n</tool_call><|im_end|>"
    decoded = tokenizer.decode(tokenizer.encode(text), skip_special_tokens=True)
    assert decoded == text.removesuffix("<|im_end|>")
    readme = (load_tokenizer.__globals__["TOKENIZERS_DIR"] / name / "README.md").read_text()
    assert "unconfirmed" in readme
