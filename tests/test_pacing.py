"""Paced replay (`LLM_REPLAY_PACE=1`, helpers/replay/pacing.py): chunks wait for their tokens.

One test waits on purpose: lesson 03's step-7 stream through a paced server, once (about 4 s).
The others compute the delays without sleeping."""

from __future__ import annotations

import copy
import json
import time

import openai

from helpers.paths import RECORDINGS_DIR
from helpers.replay import ReplayServer, pacing

LESSON_03 = RECORDINGS_DIR / "03_streaming.json"


def _recording(label: str) -> dict:
    cassette = json.loads(LESSON_03.read_text(encoding="utf-8"))
    return next(item for item in cassette["interactions"] if item["label"] == label)


STEP_7 = "parallel-stream/moonshot/round-1"  # "Compare the weather in Beijing and Shanghai today."


def _events(contents: list[str], arguments: list[str]) -> list[dict]:
    """A stream: the role, text pieces, one call cut into `arguments`, the finish, [DONE]."""
    chunks = [{"role": "assistant", "content": ""}] + [{"content": c} for c in contents]
    chunks.append({"tool_calls": [{"index": 0, "id": "get_weather:0", "type": "function",
                                   "function": {"name": "get_weather", "arguments": ""}}]})  # fmt: skip
    chunks += [{"tool_calls": [{"index": 0, "function": {"arguments": a}}]} for a in arguments]
    events = [{"data": {"choices": [{"index": 0, "delta": d, "finish_reason": None}]}}
              for d in chunks]  # fmt: skip
    events.append({"data": {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}})
    return events + [{"data": "[DONE]"}]


BODY = {"messages": [{"role": "user", "content": "Weather in Beijing?"}], "tools": []}


def test_token_counts_of_words_json_and_russian():
    assert pacing.count_tokens("Let me check both cities.") == 6  # 5 words and the full stop
    assert pacing.count_tokens('{"city": "Beijing"}') == 6  # {"  city  ":  space  "Beijing  "}
    assert pacing.count_tokens("Погода в Пекине") == 3
    assert pacing.count_tokens("") == 0
    assert pacing.count_tokens("2026") == 2  # numbers in groups of up to three digits


def test_the_wait_does_not_depend_on_how_the_text_was_cut():
    """Synthesis may cut a text anywhere: the stream's total wait is that of its tokens."""
    coarse = _events(["Let me check."], ['{"city": "Beijing"}'])
    fine = _events(["Let", " me", " che", "ck", "."], ['{"c', 'ity": ', '"Bei', "jing", '"}'])
    assert len(fine) > len(coarse)
    assert (
        abs(sum(pacing.stream_delays(BODY, fine)) - sum(pacing.stream_delays(BODY, coarse))) < 1e-9
    )
    # 4 text tokens, 6 argument tokens, the call's name (2) and markup, the end-of-turn token
    tokens = 4 + 6 + 2 + pacing.CALL_MARKUP + 1
    first = pacing.stream_delays(BODY, coarse)[0]
    assert abs(sum(pacing.stream_delays(BODY, coarse)) - first - tokens * pacing.TOKEN_S) < 1e-9


def test_the_stored_delays_are_not_used():
    item = _recording(STEP_7)
    body, events = item["request"]["body"], item["response"]["sse"]
    zero = [{**event, "delay_ms": 0} for event in events]
    slow = [{**event, "delay_ms": 5000} for event in events]
    assert pacing.stream_delays(body, zero) == pacing.stream_delays(body, slow)


def test_the_first_chunk_waits_for_the_prompt_up_to_a_cap():
    events = _events(["Hi"], ["{}"])
    short = pacing.stream_delays(BODY, events)[0]
    longer = copy.deepcopy(BODY)
    longer["messages"][0]["content"] += " Please answer briefly and use the tool."
    assert pacing.stream_delays(longer, events)[0] > short
    huge = {"messages": [{"role": "user", "content": "word " * 5000}]}
    assert pacing.stream_delays(huge, events)[0] == pacing.FIRST_CHUNK_MAX_S
    assert pacing.stream_delays(BODY, events)[-1] == 0  # [DONE] carries no token


def test_lesson_03_step_7_stream_lasts_at_least_3_s_when_paced():
    """The stream a teacher shows in lesson 03 step 7, through a paced server, with the SDK."""
    item = _recording(STEP_7)
    body = item["request"]["body"]
    with ReplayServer(LESSON_03, pace=True) as running:
        with openai.OpenAI(base_url=f"{running.url}/v1", api_key="k", max_retries=0) as client:
            started = time.monotonic()
            arrived = [time.monotonic() for _ in client.chat.completions.create(**body)]
    assert len(arrived) == 18  # 19 events with [DONE]
    assert arrived[-1] - started >= 3.0  # a lower bound only: a busy machine is slower still
    # the chunks come spread out (the typing), not in one burst after the first wait
    assert arrived[-1] - arrived[0] >= 1.5
