"""llama.cpp for real: the committed captures back what lesson 07 and the profile say, and the
series' own loop, accumulator and Hermes parser work against a live `llama-server`.

The `real_engine` tests need the binary that `python scripts/capture_llamacpp.py --build` builds
(about 9 minutes on two cores; see docs/real_engines.md) and are skipped with that command as the
reason when it is absent. The other tests read data/captures/llamacpp.json and always run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from openai import OpenAI
from scripts_support import script

from helpers.formats import parse_hermes, parse_qwen_xml
from helpers.i18n import reset_language, set_language
from helpers.loop import run_tool_loop
from helpers.paths import RECORDINGS_DIR
from helpers.replay import ReplayServer
from helpers.replay.captures import CAPTURES_DIR, load_capture, provenance
from helpers.replay.profiles import PROFILES
from helpers.replay.scenarios.n07_qwen_today import COMPARE_PROMPT, FORECAST_TOOLS, get_forecast
from helpers.streaming import ToolCallAccumulator
from helpers.tools import ToolRegistry

CAPTURE = load_capture(CAPTURES_DIR / "llamacpp.json")
LLAMA_ID = re.compile(r"[0-9A-Za-z]{32}")
CITIES = ["Paris", "Oslo"]


def observation(label: str) -> dict[str, Any]:
    [item] = [item for item in CAPTURE["observations"] if item["label"] == label]
    return item


def chunks(item: dict[str, Any]) -> list[dict[str, Any]]:
    events = [event["data"] for event in item["response"]["sse"]]
    assert events[-1] == "[DONE]"
    return events[:-1]


def lesson_streams() -> list[dict[str, Any]]:
    return CAPTURE["cassettes"]["07_qwen_today"]


def cities(tool_calls: list[dict[str, Any]]) -> list[str]:
    return [json.loads(call["function"]["arguments"])["city"] for call in tool_calls]


# --- what the committed captures show --------------------------------------------------------------


def test_the_capture_names_its_build_command_and_date() -> None:
    meta = CAPTURE["meta"]
    assert meta["commit"] == "0c1e57098" and meta["commit"] in meta["build"]
    assert meta["command"] == "python scripts/capture_llamacpp.py"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", meta["date"])
    assert "STEERED" in meta["model"]
    set_language("en")
    try:
        assert provenance("llamacpp") == (
            f"captured from llama.cpp 0c1e57098 (tiny steered model, {meta['date']})"
        )
        assert provenance("ollama").startswith("synthesized from the documented format of Ollama")
        set_language("ru")
        assert provenance("llamacpp").startswith("записано с настоящего llama.cpp 0c1e57098")
    finally:
        reset_language()


def test_the_lesson_cassette_serves_the_captures_unchanged() -> None:
    cassette = json.loads((RECORDINGS_DIR / "07_qwen_today.json").read_text(encoding="utf-8"))
    [note] = cassette["meta"]["captured"]
    assert note["labels"] == [item["label"] for item in lesson_streams()]
    served = {item["label"]: item for item in cassette["interactions"]}
    for item in lesson_streams():
        assert served[item["label"]] == item
    with ReplayServer(RECORDINGS_DIR) as server:
        client = OpenAI(base_url=f"{server.url}/engines/llamacpp/v1", api_key="k", max_retries=0)
        body = lesson_streams()[0]["request"]["body"]
        got = [c.model_dump(exclude_unset=True) for c in client.chat.completions.create(**body)]
    assert got == chunks(lesson_streams()[0])


@pytest.mark.parametrize("item", lesson_streams(), ids=lambda item: item["label"])
def test_captured_streams_have_llama_cpps_shape(item: dict[str, Any]) -> None:
    data = chunks(item)
    assert data[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert {c["system_fingerprint"] for c in data} == {PROFILES["llamacpp"].system_fingerprint}
    assert data[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    headers = [
        piece
        for c in data
        for piece in c["choices"][0]["delta"].get("tool_calls", [])
        if "id" in piece
    ]
    assert [h["index"] for h in headers] == [0, 1]  # two calls, flag or no flag
    for header in headers:
        assert LLAMA_ID.fullmatch(header["id"])
        assert header["function"]["name"] == "get_forecast"
        assert header["function"]["arguments"] == "{"  # the header carries a fragment
    accumulator = ToolCallAccumulator()
    for chunk in data:
        accumulator.add(chunk)
    assert cities(accumulator.tool_calls) == CITIES
    assert accumulator.reasoning_key == "reasoning_content"
    assert accumulator.reasoning == "Two cities, one day each: two calls."


def test_whole_replies_have_empty_content_and_ignore_parallel_false() -> None:
    for label in ("no-stream", "parallel-false"):
        message = observation(label)["response"]["body"]["choices"][0]["message"]
        assert message["content"] == ""
        assert cities(message["tool_calls"]) == CITIES
    assert observation("parallel-false")["request"]["body"]["parallel_tool_calls"] is False


def test_a_call_cut_before_its_name_is_complete_is_dropped() -> None:
    choice = observation("cut-in-name")["response"]["body"]["choices"][0]
    assert choice["finish_reason"] == "length" and "tool_calls" not in choice["message"]
    streamed = chunks(observation("cut-in-name-stream"))
    assert not any("tool_calls" in c["choices"][0]["delta"] for c in streamed)
    cut = observation("cut-in-arguments")["response"]["body"]["choices"][0]
    assert cut["finish_reason"] == "length"
    assert [c["function"]["arguments"] for c in cut["message"]["tool_calls"]] == ['{"city":"Paris']


def test_no_jinja_with_tools_is_a_server_error() -> None:
    response = observation("no-jinja-with-tools")["response"]
    assert response["status"] == 500
    assert response["body"]["error"]["message"] == "tools param requires --jinja flag"


def test_qwen3_5_xml_calls_arrive_as_compact_typed_json() -> None:
    message = observation("qwen3.5/no-stream")["response"]["body"]["choices"][0]["message"]
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [
        '{"city":"Paris","days":1}',
        '{"city":"Oslo","days":1}',
    ]
    # With the XML format, parallel_tool_calls: false does limit the reply to one call.
    single = observation("qwen3.5/parallel-false")["response"]["body"]["choices"][0]["message"]
    assert cities(single["tool_calls"]) == ["Paris"]
    accumulator = ToolCallAccumulator()
    for chunk in chunks(observation("qwen3.5/stream")):
        accumulator.add(chunk)
    assert [c["function"]["arguments"] for c in accumulator.tool_calls] == [
        c["function"]["arguments"] for c in message["tool_calls"]
    ]


def test_the_captured_tool_loop_ends_with_the_answer() -> None:
    first, second = (observation(f"tool-loop/round-{n}") for n in (1, 2))
    messages = second["request"]["body"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in messages[2:]] == [
        c["id"] for c in first["response"]["body"]["choices"][0]["message"]["tool_calls"]
    ]
    answer = second["response"]["body"]["choices"][0]
    assert answer["finish_reason"] == "stop"
    assert answer["message"]["content"] == "Tomorrow Paris will be sunny, while Oslo gets snow."


# --- against the live binary -----------------------------------------------------------------------

capture = script("capture_llamacpp")
BINARY = capture.server_binary()
real_engine = pytest.mark.real_engine
needs_binary = pytest.mark.skipif(
    not BINARY.is_file(),
    reason=f"no llama-server at {BINARY}: build it with `python scripts/capture_llamacpp.py "
    "--build` (about 9 min on 2 cores), or point $LLAMA_SERVER at one",
)


def serving(model: str) -> Iterator[str]:
    """A running llama-server with a steered model (written first when missing)."""
    spec = capture.MODELS[model]
    if not spec.path().is_file():
        pytest.importorskip("gguf", reason="pip install -r requirements-capture.txt")
        capture.write_gguf(spec)
    with capture.serve(spec) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    """llama-server with the Qwen3 model (Hermes JSON calls)."""
    yield from serving("qwen3")


@pytest.fixture(scope="module")
def live_xml() -> Iterator[str]:
    """llama-server with the Qwen3.5 model (XML calls)."""
    yield from serving("qwen3.5")


def raw_completion(
    base_url: str, messages: list[dict[str, Any]], max_tokens: int
) -> tuple[str, str]:
    """The prompt llama-server's own chat template renders for `messages` and the forecast tool, and
    the raw text the model writes after it on /completions (no tool-call parser in between)."""
    root = base_url.removesuffix("/v1")
    rendered = requests.post(
        f"{root}/apply-template", json={"messages": messages, "tools": FORECAST_TOOLS}, timeout=60
    )
    rendered.raise_for_status()
    prompt = rendered.json()["prompt"]
    raw = requests.post(
        f"{root}/completions", json={"prompt": prompt, "max_tokens": max_tokens}, timeout=120
    )
    raw.raise_for_status()
    return prompt, raw.json()["content"]


def parsed_by_the_server(base_url: str, model: str, messages: list[dict[str, Any]]) -> list[dict]:
    """The tool calls llama-server's own parser finds in its reply on the chat endpoint."""
    client = OpenAI(base_url=base_url, api_key="no-key", max_retries=0)
    reply = client.chat.completions.create(model=model, messages=messages, tools=FORECAST_TOOLS)
    return [call.model_dump() for call in reply.choices[0].message.tool_calls]


def registry() -> ToolRegistry:
    tools = ToolRegistry()
    tools.register(get_forecast, schema=FORECAST_TOOLS[0])
    return tools


@real_engine
@needs_binary
@pytest.mark.parametrize("stream", [False, True])
def test_the_tool_loop_runs_against_llama_server(live: str, stream: bool) -> None:
    client = OpenAI(base_url=live, api_key="no-key", max_retries=0)
    messages = [{"role": "user", "content": COMPARE_PROMPT}]
    final = run_tool_loop(client, messages, registry(), model="qwen3-tiny-steered", stream=stream)
    assert final["content"] == "Tomorrow Paris will be sunny, while Oslo gets snow."
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert cities(messages[1]["tool_calls"]) == CITIES
    assert all(LLAMA_ID.fullmatch(call["id"]) for call in messages[1]["tool_calls"])
    assert [json.loads(m["content"])["days"] for m in messages[2:4]] == [["Sunny"], ["Snow"]]


@real_engine
@needs_binary
def test_the_accumulator_assembles_a_live_stream(live: str) -> None:
    client = OpenAI(base_url=live, api_key="no-key", max_retries=0)
    stream = client.chat.completions.create(
        model="qwen3-tiny-steered",
        messages=[{"role": "user", "content": COMPARE_PROMPT}],
        tools=FORECAST_TOOLS,
        stream=True,
    )
    accumulator = ToolCallAccumulator()
    for chunk in stream:
        accumulator.add(chunk)
    assert accumulator.finish_reason == "tool_calls"
    assert cities(accumulator.tool_calls) == CITIES
    assert [json.loads(c["function"]["arguments"])["days"] for c in accumulator.tool_calls] == [
        1,
        1,
    ]


@real_engine
@needs_binary
def test_parse_hermes_reads_the_raw_text_llama_server_writes(live: str) -> None:
    messages = [{"role": "user", "content": COMPARE_PROMPT}]
    prompt, text = raw_completion(live, messages, max_tokens=200)
    assert prompt.endswith("<|im_start|>assistant\n")  # Qwen3's template, rendered by the server
    assert text.startswith("<think>") and text.count("<tool_call>") == 2
    result = parse_hermes(text)
    assert not result.errors
    assert [call["function"]["name"] for call in result.tool_calls] == ["get_forecast"] * 2
    assert cities(result.tool_calls) == CITIES
    # The server's own parse of the same text (chat endpoint) finds the same calls. It passes
    # the model's argument text on as written ('{"city":"Paris","days": 1}'); parse_hermes
    # re-serializes it, so the two agree as JSON values, not as strings.
    server_calls = parsed_by_the_server(live, "qwen3-tiny-steered", messages)
    assert [json.loads(c["function"]["arguments"]) for c in server_calls] == [
        json.loads(c["function"]["arguments"]) for c in result.tool_calls
    ]
    assert server_calls[0]["function"]["arguments"] in text  # verbatim from the raw text


@real_engine
@needs_binary
def test_parse_qwen_xml_reads_the_raw_text_llama_server_writes(live_xml: str) -> None:
    messages = [{"role": "user", "content": COMPARE_PROMPT}]
    prompt, text = raw_completion(live_xml, messages, max_tokens=300)
    assert prompt.endswith("<|im_start|>assistant\n<think>\n")  # Qwen3.5 opens the reasoning
    assert "<think>" not in text and text.count("<function=get_forecast>") == 2
    result = parse_qwen_xml(text, FORECAST_TOOLS, reasoning_open=True)
    assert not result.errors
    assert result.reasoning.strip() == "Two cities, one day each: two calls."
    assert [json.loads(c["function"]["arguments"]) for c in result.tool_calls] == [
        {"city": "Paris", "days": 1},
        {"city": "Oslo", "days": 1},
    ]  # `days` typed as an integer by the schema, as the server does
    server_calls = parsed_by_the_server(live_xml, "qwen3.5-tiny-steered", messages)
    assert [json.loads(c["function"]["arguments"]) for c in server_calls] == [
        json.loads(c["function"]["arguments"]) for c in result.tool_calls
    ]


@real_engine
@needs_binary
def test_the_tool_loop_runs_against_llama_server_with_xml_calls(live_xml: str) -> None:
    client = OpenAI(base_url=live_xml, api_key="no-key", max_retries=0)
    messages = [{"role": "user", "content": COMPARE_PROMPT}]
    final = run_tool_loop(client, messages, registry(), model="qwen3.5-tiny-steered", stream=True)
    assert final["content"] == "Tomorrow Paris will be sunny, while Oslo gets snow."
    assert cities(messages[1]["tool_calls"]) == CITIES
