"""Synthesis of the shipped cassettes: deterministic, current, faithful to each engine profile."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest
import requests

from helpers import catalog
from helpers.formats import parse_hermes, parse_kimi
from helpers.loop import ToolLoopLimitError, run_tool_loop
from helpers.paths import RECORDINGS_DIR
from helpers.replay import ReplayServer, canonical_request, request_key
from helpers.replay.__main__ import main as replay_cli
from helpers.replay.captures import CAPTURED_NOTE
from helpers.replay.profiles import MODEL_NAMES, PROFILES
from helpers.replay.scenarios import Scenario, Turn, all_scenarios
from helpers.replay.scenarios.common import (
    GUIDE_EXTRA,
    ONE_AT_A_TIME_PROMPT,
    QWEN_SYSTEM,
    TEMPERATURE_PROMPT,
    TEMPERATURE_TOOLS,
    WEATHER_PROMPT,
    WEATHER_TOOL,
    WEATHER_TOOLS,
    lesson_registry,
    user,
    weather_calls,
)
from helpers.replay.synthesize import SOURCE, ScenarioError, count_calls, main, play
from helpers.replay.validation import K3_MODELS, is_moonshot_model

SHIPPED = sorted(f"{notebook}.json" for notebook in all_scenarios())


def shipped(name: str) -> dict[str, Any]:
    """A shipped cassette, decoded."""
    return json.loads((RECORDINGS_DIR / name).read_text(encoding="utf-8"))


def shipped_interactions() -> list[dict[str, Any]]:
    """Every interaction of every shipped cassette, with its file name under `_file`."""
    return [{**item, "_file": name} for name in SHIPPED for item in shipped(name)["interactions"]]


def sse_data(interaction: dict[str, Any]) -> list[Any]:
    """The `data` of each recorded SSE event."""
    return [event["data"] for event in interaction["response"]["sse"]]


def reassemble(events: list[Any]) -> tuple[dict[str, Any], str | None]:
    """Glue streamed chat deltas by `index` into (message, finish_reason), independently of helpers."""
    content, calls, finish = "", {}, None
    for data in events:
        if data == "[DONE]":
            continue
        for choice in data["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    piece["index"],
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] += piece.get("id") or ""
                function = piece.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
            finish = choice["finish_reason"] or finish
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [calls[i] for i in sorted(calls)],
    }
    return message, finish


def plain(message: dict[str, Any]) -> dict[str, Any]:
    """A message in comparable form: null content as "", tool_calls listed, server-invented
    `chatcmpl-tool-` ids (random in vLLM, hashed from the request here) masked."""
    calls = [
        {
            **call,
            "id": "<hermes id>" if hermes_id(call["id"]) or local_id(call["id"]) else call["id"],
        }
        for call in message.get("tool_calls") or []
    ]
    return {"role": "assistant", "content": message.get("content") or "", "tool_calls": calls}


def local_id(call_id: str) -> bool:
    """An id lesson 07's engines invent (masked like hermes ids: hashed from the request)."""
    shapes = [*LOCAL_ID_SHAPES.values(), *STREAMED_ID_SHAPES.values()]
    return any(re.fullmatch(shape, call_id) for shape in shapes)


def streamed(scenario: Scenario, on: bool) -> Scenario:
    """The scenario with streaming switched on or off (interleaving only makes sense on)."""
    extra = {k: v for k, v in scenario.request_extra.items() if on or k != "stream_options"}
    turns = (
        scenario.turns if on else [dataclasses.replace(t, interleave=False) for t in scenario.turns]
    )
    return dataclasses.replace(scenario, stream=on, request_extra=extra, turns=turns)


def probe(engine: str, stream: bool = False) -> Scenario:
    """Two rounds of calls (two in parallel, then one) and an answer, on one engine profile."""
    provider = PROFILES[engine].providers[0]
    turns = [weather_calls("Beijing", "Shanghai"), weather_calls("Moscow"), Turn(content="Done.")]
    extra = GUIDE_EXTRA
    if is_moonshot_model(PROFILES[engine].model_name):
        # The platform's rules, which synthesis checks as the replay server does: the temperature
        # is fixed, and a thinking model's reasoning goes back with its calls.
        extra = {k: v for k, v in GUIDE_EXTRA.items() if k != "temperature"}
        turns = [dataclasses.replace(t, reasoning="Look it up.") for t in turns]
    elif PROFILES[engine].model_name in K3_MODELS:  # K3 always thinks; its reasoning goes back
        turns = [dataclasses.replace(turn, reasoning="Think.") for turn in turns]
    return Scenario(
        name="probe",
        provider=provider,
        engine=engine,
        messages=user("Weather in Beijing and Shanghai, then Moscow?"),
        tools=WEATHER_TOOLS,
        request_extra=extra,
        stream=stream,
        turns=turns,
    )


# --- files ---------------------------------------------------------------------------------------


def test_synthesis_is_byte_identical_across_runs(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path / "a")]) == 0
    assert main(["--out", str(tmp_path / "b")]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == SHIPPED == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        text = (tmp_path / "a" / name).read_bytes()
        assert text == (tmp_path / "b" / name).read_bytes(), name
        assert text.endswith(b"}\n")


def test_check_lists_stale_files_without_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--out", str(tmp_path), "--check"]) == 0
    stale = tmp_path / "02_sync_loop.json"
    stale.write_text("{}\n", encoding="utf-8")
    (tmp_path / "05_qwen_comparison.json").unlink()
    capsys.readouterr()
    assert main(["--out", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "02_sync_loop.json" in err and "05_qwen_comparison.json" in err
    assert "03_streaming.json" not in err
    assert stale.read_text(encoding="utf-8") == "{}\n"
    assert not (tmp_path / "05_qwen_comparison.json").exists()


def test_shipped_cassettes_are_up_to_date(capsys: pytest.CaptureFixture) -> None:
    status = replay_cli(["synthesize", "--check"])
    assert status == 0, "run `python -m helpers.replay synthesize`:\n" + capsys.readouterr().err


def test_every_cassette_says_it_is_synthesized() -> None:
    for name in SHIPPED:
        meta = shipped(name)["meta"]
        assert meta["notebook"] + ".json" == name
        captured = {label for note in meta.get("captured", []) for label in note["labels"]}
        # A cassette holding captures (data/captures/) says so, and names each captured label.
        assert meta["source"] == SOURCE + (CAPTURED_NOTE if captured else "")
        assert "synthesized" in meta["source"] and "not a capture" in meta["source"]
        assert captured <= {item["label"] for item in shipped(name)["interactions"]}
        assert meta["format"] == 1
        assert {p["name"] for p in meta["profiles"]} <= set(PROFILES) | {"completions"}
        labels = [item["label"] for item in shipped(name)["interactions"]]
        assert len(labels) == len(set(labels)), name


def test_lesson_tools_match_the_declared_schemas() -> None:
    assert lesson_registry().schemas == [WEATHER_TOOL, *TEMPERATURE_TOOLS]


# --- engine profiles -----------------------------------------------------------------------------


def hermes_id(call_id: str) -> bool:
    """vLLM hermes style: chatcmpl-tool-<32 hex>."""
    return re.fullmatch(r"chatcmpl-tool-[0-9a-f]{32}", call_id) is not None


EXPECTED_IDS = {
    "moonshot": (["get_weather:0", "get_weather:1"], ["get_weather:2"]),
    "vllm": (["functions.get_weather:0", "functions.get_weather:1"], ["functions.get_weather:2"]),
    "sglang": (["functions.get_weather:0", "functions.get_weather:1"], ["functions.get_weather:2"]),
    "stop_with_calls": (
        ["functions.get_weather:0", "functions.get_weather:1"],
        ["functions.get_weather:2"],
    ),
    "moonshot_thinking": (["get_weather:0", "get_weather:1"], ["get_weather:2"]),
    "vllm_thinking": (
        ["functions.get_weather:0", "functions.get_weather:1"],
        ["functions.get_weather:2"],
    ),
    "sglang_drift": (
        ["functions.get_weather:0", "functions.get_weather:1"],
        ["functions.get_weather:2"],
    ),
    "moonshot_k3": (["get_weather:0", "get_weather:1"], ["get_weather:2"]),
    "vllm_kimi_k3": (
        ["functions.get_weather:0", "functions.get_weather:1"],
        ["functions.get_weather:2"],
    ),
}
EXPECTED_FINISH = {
    "moonshot": "tool_calls",
    "vllm": "tool_calls",
    "sglang": "tool_calls",
    "stop_with_calls": "stop",
    "no_parser": "stop",
    "vllm_hermes": "tool_calls",
    "moonshot_thinking": "tool_calls",
    "vllm_thinking": "tool_calls",
    "sglang_drift": "tool_calls",
    "vllm_qwen3_coder": "tool_calls",
    "ollama": "tool_calls",
    "llamacpp": "tool_calls",
    "moonshot_k3": "tool_calls",
    "llamacpp_hermes": "tool_calls",
    "vllm_kimi_k3": "tool_calls",
}
# Lesson 07's engines invent ids in their documented shapes.
LOCAL_ID_SHAPES = {
    "vllm_qwen3_coder": r"chatcmpl-tool-[0-9a-f]{16}",
    "ollama": r"call_[a-z0-9]{8}",
    "llamacpp": r"[A-Za-z0-9]{32}",
    "llamacpp_hermes": r"[A-Za-z0-9]{32}",
}
# vLLM's qwen3_coder parser invents other ids when it streams: `call_` + uuid4().hex[:24].
STREAMED_ID_SHAPES = {"vllm_qwen3_coder": r"call_[0-9a-f]{24}"}


@pytest.mark.parametrize("engine", sorted(PROFILES))
def test_profile_ids_finish_reason_and_content(engine: str) -> None:
    rounds = play("probe", probe(engine))
    bodies = [item["response"]["body"] for item in rounds]
    messages = [body["choices"][0]["message"] for body in bodies]
    finishes = [body["choices"][0]["finish_reason"] for body in bodies]
    assert finishes == [EXPECTED_FINISH[engine], EXPECTED_FINISH[engine], "stop"]
    assert messages[2]["content"] == "Done."
    assert [item["request"]["path"].endswith("/chat/completions") for item in rounds] == [True] * 3
    default = engine in catalog.DEFAULT_ENGINES.values()
    assert rounds[0]["request"]["path"].startswith("/v1/" if default else f"/engines/{engine}/v1/")
    ids = [[call["id"] for call in m.get("tool_calls") or []] for m in messages[:2]]
    if engine == "no_parser":
        assert ids == [[], []]
        assert (
            "<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>"
            in (messages[0]["content"])
        )
        assert messages[1]["content"].startswith("<|tool_calls_section_begin|>")
        return
    if engine in LOCAL_ID_SHAPES:
        assert all(re.fullmatch(LOCAL_ID_SHAPES[engine], i) for i in ids[0] + ids[1])
        assert [len(i) for i in ids] == [2, 1]
        empty = PROFILES[engine].empty_content
        assert messages[0]["content"] == empty and messages[1]["content"] == empty
        return
    if engine == "vllm_hermes":
        flat = ids[0] + ids[1]
        assert all(hermes_id(i) for i in flat) and len(set(flat)) == 3
        assert play("probe", probe(engine)) == rounds  # derived from hashes, not random
    else:
        assert tuple(ids) == EXPECTED_IDS[engine]
    empty = "" if engine in ("moonshot", "moonshot_thinking", "moonshot_k3") else None
    assert messages[0]["content"] == empty and messages[1]["content"] == empty


def test_sglang_ids_count_the_calls_in_the_request_history() -> None:
    for item in play("probe", probe("sglang")):
        history = item["request"]["body"]["messages"]
        calls = item["response"]["body"]["choices"][0]["message"].get("tool_calls") or []
        for index, call in enumerate(calls):
            assert (
                call["id"] == f"functions.{call['function']['name']}:{count_calls(history) + index}"
            )


def test_stop_with_calls_says_stop_while_calls_are_present() -> None:
    items = [
        i for i in shipped_interactions() if "/engines/stop_with_calls/" in i["request"]["path"]
    ]
    first = items[0]["response"]["body"]["choices"][0]
    assert first["finish_reason"] == "stop" and first["message"]["tool_calls"]


def test_moonshot_ids_count_every_call_in_the_dialog() -> None:
    ids = [
        call["id"]
        for item in shipped_interactions()
        if item["label"].startswith("one-at-a-time/moonshot/")
        for call in item["response"]["body"]["choices"][0]["message"].get("tool_calls") or []
    ]
    assert ids == ["get_weather:0", "get_weather:1", "get_weather:2"]


# --- streaming -----------------------------------------------------------------------------------


def streamed_scenarios() -> list[tuple[str, Scenario]]:
    """Every shipped streamed scenario, plus the probe on every chat profile."""
    found = [(nb, s) for nb, scenarios in all_scenarios().items() for s in scenarios if s.stream]
    return found + [("probe", probe(engine, stream=True)) for engine in sorted(PROFILES)]


@pytest.mark.parametrize(
    ("notebook", "scenario"), streamed_scenarios(), ids=lambda v: getattr(v, "name", v)
)
def test_streams_reassemble_to_the_non_streamed_message(notebook: str, scenario: Scenario) -> None:
    stream_rounds = play(notebook, scenario)
    json_rounds = play(notebook, streamed(scenario, on=False))
    assert len(stream_rounds) == len(json_rounds) == len(scenario.turns)
    for got, want in zip(stream_rounds, json_rounds, strict=True):
        message, finish = reassemble(sse_data(got))
        choice = want["response"]["body"]["choices"][0]
        assert plain(message) == plain(choice["message"]), got["label"]
        assert finish == choice["finish_reason"]
        assert got["request"]["body"]["stream"] is True and "stream" not in want["request"]["body"]


def captured_labels() -> set[str]:
    """Labels of the shipped interactions that are captures of a real server, not synthesized."""
    return {
        label
        for name in SHIPPED
        for note in shipped(name)["meta"].get("captured", [])
        for label in note["labels"]
    }


def test_chunks_have_the_documented_shape() -> None:
    checked = 0
    for item in shipped_interactions():
        if "sse" not in item["response"] or not item["request"]["path"].endswith(
            "/chat/completions"
        ):
            continue
        if item["label"] in captured_labels():
            continue  # a real server's shapes: tests/test_real_engine.py checks those
        data = sse_data(item)
        assert data[-1] == "[DONE]"
        chunks = [d for d in data[:-1] if d["choices"]]
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        assert [c["choices"][0]["finish_reason"] is not None for c in chunks] == [False] * (
            len(chunks) - 1
        ) + [True]
        assert chunks[-1]["choices"][0]["delta"] == {}
        assert len({(c["id"], c["created"], c["object"]) for c in chunks}) == 1
        seen: set[int] = set()
        for chunk in chunks:
            for piece in chunk["choices"][0]["delta"].get("tool_calls", []):
                whole = any(  # a call in one chunk (Ollama, vLLM's kimi_k3)
                    f"/engines/{name}/" in item["request"]["path"]
                    for name, profile in PROFILES.items()
                    if profile.whole_calls
                )
                if piece["index"] not in seen:
                    assert set(piece) == {"index", "id", "type", "function"}
                    assert (piece["function"]["arguments"] != "") == whole
                    assert piece["function"]["name"]
                    seen.add(piece["index"])
                else:
                    assert set(piece) == {"index", "function"} and set(piece["function"]) == {
                        "arguments"
                    }
                    assert 1 <= len(piece["function"]["arguments"]) <= 7
        delays = [event["delay_ms"] for event in item["response"]["sse"]]
        assert 120 <= delays[0] <= 240 and all(15 <= d <= 40 for d in delays[1:])
        checked += 1
    assert checked >= 8


def test_interleaved_variant_alternates_the_calls() -> None:
    [item] = [
        i for i in shipped_interactions() if i["label"] == "parallel-interleaved/moonshot/round-1"
    ]
    order = [
        piece["index"]
        for data in sse_data(item)[:-1]
        for choice in data["choices"]
        for piece in choice["delta"].get("tool_calls", [])
    ]
    assert order[:4] == [0, 1, 0, 1] and order != sorted(order)
    message, _ = reassemble(sse_data(item))
    assert [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]] == [
        {"city": "Shanghai"},
        {"city": "Moscow"},
    ]


def test_usage_chunk_only_with_include_usage() -> None:
    with_usage = 0
    for item in shipped_interactions():
        if "sse" not in item["response"]:
            continue
        wanted = (item["request"]["body"].get("stream_options") or {}).get("include_usage") is True
        data = sse_data(item)[:-1]
        usage_chunks = [d for d in data if d["choices"] == []]
        if not wanted:
            assert usage_chunks == [] and all("usage" not in d for d in data), item["label"]
            continue
        with_usage += 1
        assert usage_chunks == [data[-1]]
        usage = data[-1]["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
        assert all(d["usage"] is None for d in data[:-1])
    assert with_usage >= 2  # at least lesson 03's two (lesson 12's pre-flight streams add more)


# --- completions and histories -------------------------------------------------------------------


def completions_scenarios() -> list[tuple[str, Scenario]]:
    """Every shipped `/completions` scenario."""
    return [
        (notebook, s)
        for notebook, scenarios in all_scenarios().items()
        for s in scenarios
        if s.api == "completions"
    ]


@pytest.mark.parametrize(
    ("notebook", "scenario"), completions_scenarios(), ids=lambda v: getattr(v, "provider", v)
)
def test_completion_texts_parse_back_to_the_declared_calls(
    notebook: str, scenario: Scenario
) -> None:
    parse = parse_kimi if scenario.provider == "kimi" else parse_hermes
    rounds = play(notebook, scenario)
    for item, turn in zip(rounds, scenario.turns, strict=True):
        body = item["response"]["body"]
        assert (
            body["object"] == "text_completion" and body["model"] == MODEL_NAMES[scenario.provider]
        )
        assert item["request"]["body"]["max_tokens"] == 512
        parsed = parse(body["choices"][0]["text"])
        assert parsed.errors == []
        assert parsed.content == (turn.content or "")
        declared = [(name, args) for name, args in turn.tool_calls]
        got = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in parsed.tool_calls
        ]
        assert got == declared
    prompts = [item["request"]["body"]["prompt"] for item in rounds]
    if scenario.provider == "kimi":
        call = "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        assert prompts[1].index(call) < prompts[1].index("## Return of functions.get_weather:0")
    else:  # arguments decoded before templating: a JSON object, not a JSON string
        assert '"arguments": {"city": "Beijing"}' in prompts[1]
        assert prompts[1].index("<tool_call>\n{") < prompts[1].index("<tool_response>")
    assert all(
        p.endswith(("<|im_assistant|>assistant<|im_middle|>", "<|im_start|>assistant\n"))
        for p in prompts
    )


def test_follow_up_requests_put_the_assistant_message_before_its_results() -> None:
    follow_ups = 0
    for item in shipped_interactions():
        messages = item["request"]["body"].get("messages", [])
        pending: list[str] = []
        for message in messages:
            if message["role"] == "tool":
                assert pending and message["tool_call_id"] == pending.pop(0), item["label"]
                follow_ups += 1
            else:
                assert pending == [], item["label"]
                if message["role"] == "assistant":
                    pending = [call["id"] for call in message.get("tool_calls", [])]
        assert pending == []
    assert follow_ups >= 15


def test_tool_error_content_comes_from_the_real_registry() -> None:
    [item] = [i for i in shipped_interactions() if i["label"] == "tool-error/moonshot/round-2"]
    assistant, tool = item["request"]["body"]["messages"][-2:]
    expected = lesson_registry().call(assistant["tool_calls"][0])
    assert tool == expected
    assert "city" in json.loads(tool["content"])["error"]


def test_scenarios_that_cannot_be_played_are_rejected() -> None:
    base = probe("moonshot")
    missing_result = dataclasses.replace(
        base, turns=[Turn(tool_calls=[("get_weather", {"city": "Oslo"})]), Turn(content="x")]
    )
    with pytest.raises(ScenarioError, match="1 call.*0 result"):
        play("t", missing_result)
    with pytest.raises(ScenarioError, match="must be last"):
        play("t", dataclasses.replace(base, turns=[Turn(content="a"), Turn(content="b")]))
    with pytest.raises(ScenarioError, match="interleave"):
        play("t", dataclasses.replace(base, turns=[Turn(content="a", interleave=True)]))
    with pytest.raises(ValueError, match="does not serve"):
        play("t", dataclasses.replace(base, engine="vllm_hermes"))


# --- end to end through the real replay server ---------------------------------------------------


def test_every_shipped_interaction_replays_exactly() -> None:
    items = shipped_interactions()
    with ReplayServer(RECORDINGS_DIR) as server:
        # Loading refuses two different answers to one request; identical repeats count once.
        keys = {
            request_key(canonical_request(i["request"]["path"], i["request"]["body"]))
            for i in items
        }
        assert len(server.interactions) == len(keys)
        for item in items:
            path, body = item["request"]["path"], item["request"]["body"]
            base_url = server.url + path[: path.index("/v1/") + len("/v1")]
            if path.endswith("/completions") and "/chat/" not in path:
                reply = requests.post(f"{base_url}/completions", json=body, timeout=10)
                assert reply.status_code == 200, reply.text
                assert reply.json() == item["response"]["body"], item["label"]
                continue
            client = openai.OpenAI(base_url=base_url, api_key="replay-needs-no-key", max_retries=0)
            sdk_body = {k: v for k, v in body.items() if k != "thinking"}  # not an SDK keyword
            extra = {"extra_body": {"thinking": body["thinking"]}} if "thinking" in body else {}
            if item["response"]["status"] != 200:  # a refusal the lesson shows (lesson 08)
                with pytest.raises(openai.APIStatusError) as refused:
                    client.chat.completions.create(**sdk_body, **extra)
                assert refused.value.status_code == item["response"]["status"], item["label"]
                assert refused.value.response.json() == item["response"]["body"], item["label"]
                continue
            result = client.chat.completions.create(**sdk_body, **extra)
            if body.get("stream"):
                got = [chunk.model_dump(exclude_unset=True) for chunk in result]
                assert got == sse_data(item)[:-1], item["label"]
            else:
                assert result.model_dump(exclude_unset=True) == item["response"]["body"], item[
                    "label"
                ]


def replay_client(server: ReplayServer, engine: str | None = None) -> openai.OpenAI:
    """An SDK client for the replay server (default engine or an engine profile)."""
    prefix = f"/engines/{engine}" if engine else ""
    return openai.OpenAI(base_url=f"{server.url}{prefix}/v1", api_key="k", max_retries=0)


def test_lesson_loops_run_on_the_cassettes() -> None:
    kimi, registry = MODEL_NAMES["kimi"], lesson_registry()
    weather = {"tools": WEATHER_TOOLS, **GUIDE_EXTRA}
    with ReplayServer(RECORDINGS_DIR) as server:
        for engine in (None, "vllm", "sglang", "stop_with_calls"):
            messages = user(WEATHER_PROMPT)
            final = run_tool_loop(
                replay_client(server, engine), messages, registry, model=kimi, **weather
            )
            assert final["content"] == "It's sunny in Beijing today."
            assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
        client = replay_client(server)
        usage = {"stream_options": {"include_usage": True}}
        final = run_tool_loop(
            client, user(WEATHER_PROMPT), registry, model=kimi, stream=True, **weather, **usage
        )
        assert final["content"] == "It's sunny in Beijing today."
        prompt = "Compare the weather in Shanghai and Moscow today."
        final = run_tool_loop(client, user(prompt), registry, model=kimi, stream=True, **weather)
        assert final["content"] == "Shanghai has light rain today, and Moscow has snow."
        with pytest.raises(ToolLoopLimitError):
            run_tool_loop(
                client, user(ONE_AT_A_TIME_PROMPT), registry, model=kimi, max_rounds=2, **weather
            )
        final = run_tool_loop(client, user(ONE_AT_A_TIME_PROMPT), registry, model=kimi, **weather)
        assert "Moscow has snow" in final["content"]
        qwen = {"tools": TEMPERATURE_TOOLS, **GUIDE_EXTRA}
        messages = [
            {"role": "system", "content": QWEN_SYSTEM},
            {"role": "user", "content": TEMPERATURE_PROMPT},
        ]
        final = run_tool_loop(client, messages, registry, model=MODEL_NAMES["qwen"], **qwen)
        assert "25.9" in final["content"] and len(messages[2]["tool_calls"]) == 2


def test_the_guides_stream_loop_without_the_assistant_message_is_refused() -> None:
    with ReplayServer(RECORDINGS_DIR) as server:
        client = replay_client(server)
        first = [
            item
            for item in shipped_interactions()
            if item["label"] == "weather-stream/moonshot/round-2"
        ]
        body = first[0]["request"]["body"]
        broken = [m for m in body["messages"] if m["role"] != "assistant"]
        with pytest.raises(openai.BadRequestError, match="role 'tool' must be a response"):
            client.chat.completions.create(**{**body, "messages": broken})
