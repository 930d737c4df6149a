"""Lesson 07's engine profiles as synthesized: Qwen3.5 behind vLLM, Ollama and llama.cpp."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from helpers.replay.modes import ENGINES
from helpers.replay.profiles import PROFILES, replay_model
from helpers.replay.scenarios import Scenario
from helpers.replay.scenarios.common import user
from helpers.replay.scenarios.n07_qwen_today import FORECAST_TOOLS, TWO_CITIES
from helpers.replay.synthesize import play
from helpers.streaming import ToolCallAccumulator


def streamed(engine: str, **extra: Any) -> list[dict[str, Any]]:
    """The chunks one two-call streamed reply of `engine` is made of ([DONE] left out)."""
    scenario = Scenario(
        name="probe",
        provider="qwen",
        engine=engine,
        messages=user("Paris and Oslo?"),
        tools=FORECAST_TOOLS,
        turns=[TWO_CITIES],
        stream=True,
        request_extra=extra,
    )
    [item] = play("probe", scenario)
    return [event["data"] for event in item["response"]["sse"] if event["data"] != "[DONE]"]


def call_deltas(chunks: list[dict]) -> list[dict]:
    return [d for c in chunks for d in c["choices"][0]["delta"].get("tool_calls", [])]


def test_every_new_profile_is_reachable_through_connect() -> None:
    for engine in ("vllm_qwen3_coder", "ollama", "llamacpp"):
        assert engine in ENGINES and "qwen" in PROFILES[engine].providers
    assert replay_model("qwen", "vllm_qwen3_coder") == "Qwen/Qwen3.5-4B"
    assert replay_model("qwen", "ollama") == "qwen3:0.6b"
    assert replay_model("qwen", "llamacpp") == "qwen3-tiny-steered"  # the captured model's alias
    assert replay_model("qwen") == "Qwen/Qwen2.5-7B-Instruct"


def test_ollama_sends_each_call_whole_in_one_chunk_and_an_empty_finish_delta() -> None:
    chunks = streamed("ollama")
    deltas = call_deltas(chunks)
    assert [d["index"] for d in deltas] == [0, 1]
    assert all(json.loads(d["function"]["arguments"]) for d in deltas)  # complete JSON at once
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    assert {c["system_fingerprint"] for c in chunks} == {"fp_ollama"}
    reasoning = [
        c["choices"][0]["delta"] for c in chunks if "reasoning" in c["choices"][0]["delta"]
    ]
    assert reasoning and all("reasoning_content" not in d for d in reasoning)


def test_vllm_qwen3_coder_streams_call_ids_of_24_hex() -> None:
    # vLLM's qwen3_coder parser: `call_` + uuid4().hex[:24] when streaming; a whole answer gets
    # the server's `chatcmpl-tool-<16 hex>` (test_synthesize.LOCAL_ID_SHAPES)
    ids = [d["id"] for d in call_deltas(streamed("vllm_qwen3_coder")) if "id" in d]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)


@pytest.mark.parametrize("engine", ["vllm_qwen3_coder", "ollama", "llamacpp"])
def test_streams_assemble_to_complete_calls(engine: str) -> None:
    accumulator = ToolCallAccumulator()
    for chunk in streamed(engine, parallel_tool_calls=True):
        accumulator.add(chunk)
    assert accumulator.finish_reason == "tool_calls"
    cities = [json.loads(c["function"]["arguments"])["city"] for c in accumulator.tool_calls]
    assert cities == ["Paris", "Oslo"]
