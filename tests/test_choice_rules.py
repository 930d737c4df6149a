"""The engine rules lesson 08 shows, one test each: the replay server's checks (Kimi K3's
`tool_choice` values, Moonshot's forced choices with thinking on), the profiles' answers that
synthesis allows (a named function on vLLM, on K3; `parallel_tool_calls: false` on llama.cpp with
a Hermes template), and refused turns recorded as the server's own error and counted as served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from helpers.replay.cassette import load_cassette, save_cassette
from helpers.replay.matching import canonical_request, request_key
from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import NAMED, WEATHER_TOOLS, user, weather_calls
from helpers.replay.server import ReplayServer, served_id
from helpers.replay.synthesize import ScenarioError, build_cassette, play
from helpers.replay.validation import (
    K3_REQUIRED_WITHOUT_TOOLS,
    NAMED_WITH_THINKING,
    REQUIRED_WITH_THINKING,
    ApiError,
    check_chat_request,
)

TWO_CALLS = Turn(tool_calls=[("get_weather", {"city": c}) for c in ("Beijing", "Shanghai")])
ONE_CALL = Turn(tool_calls=[("get_weather", {"city": "Beijing"})])


def body(model: str, **settings: Any) -> dict[str, Any]:
    """A chat request for `model` with the weather tool and `settings`."""
    return {"model": model, "messages": user("Weather?"), "tools": WEATHER_TOOLS} | settings


def refusal(request: dict[str, Any]) -> ApiError:
    """The error the replay server's checks give `request` (the test fails if they accept it)."""
    with pytest.raises(ApiError) as caught:
        check_chat_request(request)
    return caught.value


# --- Kimi K3: only auto / none / required; a named function is ignored ------------------------


@pytest.mark.parametrize("choice", ["auto", "none", "required", NAMED, None])
def test_k3_accepts_its_three_values_and_a_named_function(choice: Any) -> None:
    check_chat_request(body("kimi-k3", tool_choice=choice))


@pytest.mark.parametrize("choice", ["any", "function", "get_weather", "", 3, ["auto"]])
def test_k3_refuses_any_other_value(choice: Any) -> None:
    error = refusal(body("kimi-k3", tool_choice=choice))
    assert (error.status, error.param) == (400, "tool_choice")
    assert "'auto', 'none' or 'required'" in error.message


@pytest.mark.parametrize("tools", [None, []])
def test_k3_refuses_required_without_tools(tools: Any) -> None:
    request = body("kimi-k3", tool_choice="required")
    if tools is None:
        del request["tools"]
    else:
        request["tools"] = tools
    assert refusal(request).message == K3_REQUIRED_WITHOUT_TOOLS


def test_the_k3_rules_are_k3s_only() -> None:
    check_chat_request(body("moonshotai/Kimi-K2-Instruct", tool_choice="any"))  # not Moonshot's
    with pytest.raises(ApiError, match="incompatible with thinking"):
        check_chat_request(body("kimi-k2.6", tool_choice="required"))  # K2.6 refuses it


@pytest.mark.parametrize(
    ("choice", "message"), [("required", REQUIRED_WITH_THINKING), (NAMED, NAMED_WITH_THINKING)]
)
def test_k26_with_thinking_refuses_forced_choices_and_accepts_them_without(
    choice: Any, message: str
) -> None:
    assert refusal(body("kimi-k2.6", tool_choice=choice)).message == message
    check_chat_request(body("kimi-k2.6", tool_choice=choice, thinking={"type": "disabled"}))


# --- what synthesis lets each engine answer -----------------------------------------------------


def scenario(engine: str, *turns: Turn, provider: str = "kimi", **extra: Any) -> Scenario:
    """The two-city question on one engine with `extra` request settings, answered by `turns`."""
    return Scenario(
        name="rule",
        provider=provider,  # type: ignore[arg-type]
        engine=engine,
        messages=user("Do I need an umbrella in Beijing or in Shanghai today?"),
        tools=WEATHER_TOOLS,
        turns=list(turns),
        request_extra=extra,
    )


def test_vllm_holds_a_named_function_to_one_call() -> None:
    assert play("08_demo", scenario("vllm", ONE_CALL, tool_choice=NAMED))
    with pytest.raises(ScenarioError, match="vllm holds a named tool_choice to one call"):
        play("08_demo", scenario("vllm", TWO_CALLS, tool_choice=NAMED))


def test_k3_answers_a_named_function_as_auto_would() -> None:
    # K3 ignores the choice, so even a call of another tool may come back...
    other = Turn(tool_calls=[("get_time", {"city": "Beijing"})])
    assert play("08_demo", scenario("moonshot_k3", other, tool_choice=NAMED))
    # ...while an engine that keeps it (the default rule) refuses that reply.
    with pytest.raises(ScenarioError, match="names the tool 'get_weather'"):
        play("08_demo", scenario("vllm_thinking", other, tool_choice=NAMED))


def test_llamacpp_hermes_keeps_several_calls_with_parallel_off() -> None:
    off = {"parallel_tool_calls": False}
    assert play("08_demo", scenario("llamacpp_hermes", TWO_CALLS, provider="qwen", **off))
    with pytest.raises(ScenarioError, match="at most one call per reply"):
        play("08_demo", scenario("vllm_hermes", TWO_CALLS, provider="qwen", **off))


# --- refused turns: recorded as the server's own error -------------------------------------------


def test_a_refused_turn_records_the_error_the_server_gives() -> None:
    [played] = play("08_demo", scenario("moonshot_k3", Turn(refused=True), tool_choice="any"))
    response = played["response"]
    expected = refusal(played["request"]["body"])
    assert response == {"status": 400, "headers": expected.headers, "body": expected.body()}


def test_a_refused_turn_the_engine_accepts_stops_synthesis() -> None:
    with pytest.raises(ScenarioError, match="declared refused, but moonshot_k3 accepts"):
        play("08_demo", scenario("moonshot_k3", Turn(refused=True), tool_choice=NAMED))


def test_a_reply_the_engine_refuses_stops_synthesis_naming_the_error() -> None:
    with pytest.raises(ScenarioError, match="incompatible with thinking enabled.*refused=True"):
        play("08_demo", scenario("moonshot_thinking", TWO_CALLS, tool_choice="required"))


def test_a_refused_turn_is_the_last_and_empty() -> None:
    early = scenario("moonshot_k3", Turn(refused=True), weather_calls("Beijing"))
    with pytest.raises(ScenarioError, match="a refused turn is the last one"):
        play("08_demo", early)
    with pytest.raises(ScenarioError, match="a refused turn is the last one"):
        play("08_demo", scenario("moonshot_k3", Turn(refused=True, content="no")))


def test_the_server_answers_a_recorded_refusal_and_counts_it_served(tmp_path: Path) -> None:
    refused = scenario("moonshot_k3", Turn(refused=True), tool_choice="any")
    path = tmp_path / "08_demo.json"
    save_cassette(path, build_cassette("08_demo", "n08_demo", [refused]))
    request = load_cassette(path).interactions[0].request
    with ReplayServer(path) as server:
        answer = requests.post(server.url + request["path"], json=request["body"], timeout=10)
        assert answer.status_code == 400
        assert answer.json() == load_cassette(path).interactions[0].response["body"]
        key = served_id(request_key(canonical_request(request["path"], request["body"])))
        assert server.served == {key: 1}
        other = dict(request["body"], tool_choice="anything")  # refused too, but not recorded
        assert (
            requests.post(server.url + request["path"], json=other, timeout=10).status_code == 400
        )
        assert server.served == {key: 1}


# --- the lesson's table is the cassette's answers ------------------------------------------------


def recorded_outcome(response: dict[str, Any]) -> str:
    """What the lesson's `outcome` makes of one recorded answer (English labels)."""
    if response["status"] == 400:
        return "refused (400)"
    calls = response["body"]["choices"][0]["message"].get("tool_calls") or []
    return {0: "text", 1: "1 call"}.get(len(calls), f"{len(calls)} calls")


def test_the_lessons_table_shows_what_the_cassette_records() -> None:
    import json

    from helpers.paths import NOTEBOOKS_DIR, RECORDINGS_DIR
    from helpers.replay.scenarios.n08_choosing_tools import ANSWERS, SETTINGS

    columns = {"moonshot_thinking": 1, "moonshot_k3": 2, "vllm": 3, "llamacpp_hermes": 4}
    columns["ollama"] = 5
    nb = json.loads((NOTEBOOKS_DIR / "en" / "08_choosing_tools.ipynb").read_text("utf-8"))
    table = next(
        "".join(o["text"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and "compare_table(rows" in "".join(c["source"])
        for o in c["outputs"]
    )
    cells = [
        [cell.strip() for cell in line.split("  ") if cell.strip()]
        for line in table.splitlines()[2:]
    ]
    assert len(cells) == len(SETTINGS) and all(len(row) == 6 for row in cells)
    recorded = {
        tuple(item["label"].split("/")[:2]): recorded_outcome(item["response"])
        for item in json.loads((RECORDINGS_DIR / "08_choosing_tools.json").read_text("utf-8"))[
            "interactions"
        ]
    }
    for (_, engine, _), rows in ANSWERS.items():
        for row_number, row in enumerate(SETTINGS):
            expected = recorded.get((f"choice-{row}", engine), "not recorded (404)")
            assert cells[row_number][columns[engine]] == expected, (engine, row)
            assert (row in rows) == (expected != "not recorded (404)")
