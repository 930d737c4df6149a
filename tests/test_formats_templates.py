"""The renderers write exactly what the offline chat templates put in an assistant turn."""

from __future__ import annotations

import functools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from helpers.formats import (
    parse_hermes,
    parse_kimi,
    render_hermes_tool_calls,
    render_kimi_tool_calls,
    render_qwen_xml_tool_calls,
)
from helpers.templates import decode_tool_arguments, load_tokenizer
from tests.formats_support import call

SOME = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

KIMI_ASSISTANT = "<|im_assistant|>assistant<|im_middle|>"
QWEN_ASSISTANT = "<|im_start|>assistant\n"


@functools.cache
def tokenizer(name: str) -> Any:
    """The offline tokenizer, loaded once for the whole module."""
    return load_tokenizer(name)


def prompt(name: str, calls: list[dict], content: str, decode: bool = False) -> str:
    """The whole text the offline template `name` renders for "hi" and one assistant turn; with
    `decode`, JSON-text arguments are loaded first, as vLLM does for Qwen's templates."""
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": content, "tool_calls": calls},
    ]
    if decode:
        messages = decode_tool_arguments(messages)
    return tokenizer(name).apply_chat_template(messages, tokenize=False)


def kimi_turn(calls: list[dict], content: str) -> str:
    """What the Kimi-K2 template writes after the assistant header, without its `<|im_end|>`."""
    turn = prompt("kimi-k2", calls, content).rsplit(KIMI_ASSISTANT, 1)[1]
    assert turn.endswith("<|im_end|>")
    return turn.removesuffix("<|im_end|>")


def qwen_turn(calls: list[dict], content: str) -> str:
    """What the Qwen2.5 template writes after `<|im_start|>assistant\\n`, without `<|im_end|>`."""
    turn = prompt("qwen2.5", calls, content, decode=True).rsplit(QWEN_ASSISTANT, 1)[1]
    assert turn.endswith("<|im_end|>\n")
    return turn.removesuffix("<|im_end|>\n")


def qwen35_turn(calls: list[dict], content: str) -> str:
    """What the official Qwen3.5 template writes for the assistant's calls after the empty think
    block it puts into every turn after the last user message (arguments decoded, as vLLM does)."""
    turn = prompt("qwen3.5", calls, content, decode=True).rsplit(QWEN_ASSISTANT, 1)[1]
    assert turn.startswith("<think>\n\n</think>\n\n") and turn.endswith("<|im_end|>\n")
    return turn.removeprefix("<think>\n\n</think>\n\n").removesuffix("<|im_end|>\n")


CALLS = [
    call("functions.get_weather:0", "get_weather", '{"city": "Пекин"}'),
    call("functions.get-news:1", "get-news", '{"q": [1, {"a": null}], "n": 2.5}'),
]


def test_kimi_render_equals_the_template_turn() -> None:
    for content in ("", "Let me check."):
        assert render_kimi_tool_calls(CALLS, content) == kimi_turn(CALLS, content)


def test_hermes_render_equals_the_template_turn() -> None:
    for content in ("", "Let me check."):
        assert render_hermes_tool_calls(CALLS, content) == qwen_turn(CALLS, content)


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
ARGUMENTS = st.dictionaries(
    st.text(max_size=6),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.integers()),
    max_size=4,
)
CONTENT = st.text(st.characters(blacklist_characters="<>|"), max_size=30)


@st.composite
def calls_strategy(draw: st.DrawFn) -> list[dict]:
    """A few calls with Kimi-style ids and canonical JSON arguments."""
    return [
        call(f"functions.{name}:{i}", name, json.dumps(draw(ARGUMENTS), ensure_ascii=False))
        for i, name in enumerate(draw(st.lists(NAMES, min_size=1, max_size=3)))
    ]


@SOME
@given(calls=calls_strategy(), content=CONTENT)
def test_renders_follow_the_templates_and_parse_back(calls: list[dict], content: str) -> None:
    kimi_text = kimi_turn(calls, content)
    assert render_kimi_tool_calls(calls, content) == kimi_text
    parsed = parse_kimi(kimi_text)
    assert (parsed.tool_calls, parsed.errors) == (calls, [])

    qwen_text = qwen_turn(calls, content)
    assert render_hermes_tool_calls(calls, content) == qwen_text
    parsed = parse_hermes(qwen_text)
    assert [c["function"] for c in parsed.tool_calls] == [c["function"] for c in calls]
    assert parsed.errors == []


# Qwen3.5: the official template writes objects and lists with `tojson` and every other value
# with Jinja's `| string`, so a boolean is `True` and null is `None` (not JSON's `true` / `null`).
XML_ARGUMENTS = st.dictionaries(
    st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_characters="<>"), max_size=8)
    | st.lists(st.integers() | st.booleans(), max_size=3)
    | st.dictionaries(st.text(max_size=3), st.none() | st.integers(), max_size=2),
    max_size=4,
)


def test_qwen_xml_render_writes_scalars_as_the_official_template() -> None:
    calls = [call("c0", "f", '{"on": true, "off": false, "none": null, "x": 2.5}')]
    rendered = render_qwen_xml_tool_calls(calls)
    assert rendered == qwen35_turn(calls, "")
    assert "\nTrue\n" in rendered and "\nFalse\n" in rendered and "\nNone\n" in rendered


@SOME
@given(arguments=st.lists(XML_ARGUMENTS, min_size=1, max_size=3), content=CONTENT)
def test_qwen_xml_render_equals_the_official_qwen35_turn(
    arguments: list[dict], content: str
) -> None:
    calls = [
        call(f"c{i}", "get_forecast", json.dumps(value, ensure_ascii=False))
        for i, value in enumerate(arguments)
    ]
    assert render_qwen_xml_tool_calls(calls, content.strip()) == qwen35_turn(calls, content.strip())
