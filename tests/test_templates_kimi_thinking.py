"""The offline Kimi-K2-Thinking template: the two published reference renders byte for byte, and
the rules they show (compact tools JSON, reasoning kept only in the current tool loop)."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.formats import parse_kimi
from helpers.paths import TOKENIZERS_DIR
from helpers.templates import MARKERS, TEMPLATE_FILES, load_tokenizer

# The reference renders of the K2-Thinking template (a mirror of the official one, with the
# official compact `tojson(separators=(',', ':'))`), for the reference conversation.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather information. Call this tool when the user needs to get "
            "weather information",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string", "description": "City name"}},
            },
        },
    }
]
QUESTION = "What's the weather like in Beijing today? Let's check using the tool."
REASONING = "The user asks about Beijing; call the weather tool."
CALL = {
    "id": "functions.get_weather:0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}
CONVERSATION = [
    {"role": "user", "content": QUESTION},
    {"role": "assistant", "content": "", "reasoning_content": REASONING, "tool_calls": [CALL]},
    {
        "role": "tool",
        "tool_call_id": "functions.get_weather:0",
        "name": "get_weather",
        "content": '{"weather": "Sunny"}',
    },
]
EARLIER = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!", "reasoning_content": "greet back"},
]

HEAD = (
    '<|im_system|>tool_declare<|im_middle|>[{"type":"function","function":{"name":"get_weather",'
    '"description":"Get weather information. Call this tool when the user needs to get weather '
    'information","parameters":{"type":"object","required":["city"],"properties":{"city":'
    '{"type":"string","description":"City name"}}}}}]<|im_end|><|im_system|>system<|im_middle|>'
    "You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
)
CURRENT_LOOP = (
    "<|im_user|>user<|im_middle|>What's the weather like in Beijing today? Let's check using the "
    "tool.<|im_end|><|im_assistant|>assistant<|im_middle|><think>The user asks about Beijing; call "
    "the weather tool.</think><|tool_calls_section_begin|><|tool_call_begin|>"
    'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|>'
    "<|tool_calls_section_end|><|im_end|><|im_system|>get_weather<|im_middle|>## Return of "
    'functions.get_weather:0\n{"weather": "Sunny"}<|im_end|><|im_assistant|>assistant<|im_middle|>'
)
REFERENCE = HEAD + CURRENT_LOOP
REFERENCE_AFTER_EARLIER_TURN = (
    HEAD
    + "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>"
    + "<think></think>Hello!<|im_end|>"
    + CURRENT_LOOP
)


@pytest.fixture(scope="module")
def thinking() -> Any:
    """The offline K2-Thinking tokenizer."""
    return load_tokenizer("kimi-k2-thinking")


def render(tokenizer: Any, messages: list[dict], **kwargs: Any) -> str:
    """The prompt text for `messages` with the reference tools."""
    kwargs.setdefault("add_generation_prompt", True)
    return tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, **kwargs)


def test_reference_render(thinking: Any) -> None:
    assert render(thinking, CONVERSATION) == REFERENCE


def test_reference_render_after_an_earlier_finished_exchange(thinking: Any) -> None:
    assert render(thinking, EARLIER + CONVERSATION) == REFERENCE_AFTER_EARLIER_TURN


def test_reasoning_is_kept_through_the_whole_current_tool_loop(thinking: Any) -> None:
    second = {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Sunny. Now Shanghai.",
        "tool_calls": [{**CALL, "id": "functions.get_weather:1"}],
    }
    result = {**CONVERSATION[2], "tool_call_id": "functions.get_weather:1"}
    prompt = render(thinking, EARLIER + CONVERSATION + [second, result])
    assert prompt.count("<think></think>") == 1  # only the finished earlier turn
    assert f"<think>{REASONING}</think>" in prompt
    assert "<think>Sunny. Now Shanghai.</think>" in prompt


def test_a_finished_answer_moves_the_split_and_drops_older_reasoning(thinking: Any) -> None:
    answer = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Say it."}
    prompt = render(thinking, CONVERSATION + [answer, {"role": "user", "content": "Thanks"}])
    assert REASONING not in prompt and "Say it." not in prompt
    assert prompt.count("<think></think>") == 2


def test_missing_reasoning_in_the_loop_renders_an_empty_block(thinking: Any) -> None:
    stripped = [{k: v for k, v in m.items() if k != "reasoning_content"} for m in CONVERSATION]
    assert render(thinking, stripped) == REFERENCE.replace(
        f"<think>{REASONING}</think>", "<think></think>"
    )


def test_generation_prompt_has_no_think_and_the_rendered_turn_parses_back(thinking: Any) -> None:
    prompt = render(thinking, CONVERSATION)
    assert prompt.endswith("<|im_assistant|>assistant<|im_middle|>")
    turn = prompt.split("<|im_assistant|>assistant<|im_middle|>")[1].split("<|im_end|>")[0]
    parsed = parse_kimi(turn)
    assert (parsed.reasoning, parsed.tool_calls, parsed.errors) == (REASONING, [CALL], [])
    closed = render(thinking, CONVERSATION, add_generation_prompt=False)
    assert closed == REFERENCE.removesuffix("<|im_assistant|>assistant<|im_middle|>")


def test_differs_from_the_0905_template_only_where_documented(thinking: Any) -> None:
    instruct = load_tokenizer("kimi-k2")
    plain = [{k: v for k, v in m.items() if k != "reasoning_content"} for m in CONVERSATION]
    old = render(instruct, plain)
    assert "# Tools" in old and "# Tools" not in render(thinking, plain)
    assert '## Return of functions.get_weather:0\n    {"weather"' in old
    assert '## Return of functions.get_weather:0\n{"weather"' in render(thinking, plain)


def test_markers_and_folder(thinking: Any) -> None:
    for marker in MARKERS["kimi-k2-thinking"]:
        assert thinking.encode(marker.token, add_special_tokens=False) == [marker.id]
    template = TEMPLATE_FILES["kimi-k2-thinking"].read_text(encoding="utf-8")
    folder = TOKENIZERS_DIR / "kimi-k2-thinking"
    assert (folder / "chat_template.jinja").read_text(encoding="utf-8") == template
    assert thinking.chat_template == template
    assert "Kimi-K2-Thinking" in (folder / "README.md").read_text(encoding="utf-8")
