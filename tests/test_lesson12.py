"""Lesson 12's figures recomputed independently, and the pre-flight on the replay's engine profiles.

The figures the committed notebooks print (tool-call F1, schema accuracy, the AST table, the
Wilson intervals) are recomputed here from the data themselves: the recorded answers in
data/recordings/12_measuring.json and the BFCL slice, with code of this file's own (not the
lesson's cells, not the scenario module), then compared with the numbers in the notebooks'
outputs. The pre-flight runs against the real replay server's engine profiles.
"""

from __future__ import annotations

import json
import math
import re
from statistics import NormalDist

import pytest

from helpers import verify
from helpers.paths import DATA_DIR, NOTEBOOKS_DIR
from helpers.replay.server import ReplayServer

CASSETTE = DATA_DIR / "recordings" / "12_measuring.json"
PATHS = {  # where the replay server serves each engine the F1 step asks
    "moonshot": "/v1/chat/completions",
    "stop_with_calls": "/engines/stop_with_calls/v1/chat/completions",
}


def outputs(lang: str) -> str:
    """Every text output of the committed lesson, joined."""
    notebook = json.loads((NOTEBOOKS_DIR / lang / "12_measuring.ipynb").read_text(encoding="utf-8"))
    return "\n".join(
        "".join(output.get("text", ""))
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )


def recorded() -> list[dict]:
    return json.loads(CASSETTE.read_text(encoding="utf-8"))["interactions"]


def bfcl_replies() -> dict[str, list[dict]]:
    """item question -> the calls the recorded reply made (vLLM path, non-streamed)."""
    items = {
        item["question"]: item
        for item in json.loads((DATA_DIR / "bfcl" / "slice.json").read_text())
    }
    found = {}
    for interaction in recorded():
        body = interaction["request"]["body"]
        question = body["messages"][0]["content"]
        if question in items and len(body["messages"]) == 1:
            message = interaction["response"]["body"]["choices"][0]["message"]
            found[items[question]["id"]] = message.get("tool_calls") or []
    return found


def same_string(a: str, b: str) -> bool:
    keep = re.compile(r"[^0-9a-zа-яё]")
    return keep.sub("", a.lower()) == keep.sub("", b.lower())


def value_matches(value, allowed, json_type) -> bool:
    if json_type in ("integer", "number") and (
        isinstance(value, bool) or not isinstance(value, int | float)
    ):
        return False
    if json_type == "integer" and isinstance(value, float):
        return False
    if json_type == "string" and not isinstance(value, str):
        return False
    if json_type == "boolean" and not isinstance(value, bool):
        return False
    for option in allowed:
        if isinstance(option, str) and isinstance(value, str) and same_string(option, value):
            return True
        if (
            not isinstance(option, str)
            and not isinstance(value, str)
            and option == value
            and type(option) is not bool
        ):
            return True
        if isinstance(option, bool) and value is option:
            return True
    return False


def one_call_right(call: dict, truth: dict, function: dict) -> bool:
    ((name, params),) = truth.items()
    if call["function"]["name"] != name:
        return False
    try:
        arguments = json.loads(call["function"]["arguments"])
    except ValueError:
        return False
    types = {key: spec.get("type") for key, spec in function["parameters"]["properties"].items()}
    types = {k: {"float": "number", "dict": "object"}.get(v, v) for k, v in types.items()}
    for key in arguments:
        if key not in params:
            return False
    for key, allowed in params.items():
        if key in arguments:
            if not value_matches(arguments[key], [a for a in allowed if a != ""], types.get(key)):
                return False
        elif "" not in allowed:
            return False
    return True


def item_right(item: dict, calls: list[dict]) -> bool:
    truth = item["ground_truth"]
    if not truth:
        return not calls
    if len(calls) != len(truth):
        return False
    functions = {f["name"]: f for f in item["functions"]}
    # every assignment of calls to truths (tiny sizes): some permutation must fit
    from itertools import permutations

    return any(
        all(
            one_call_right(c, t, functions[next(iter(t))])
            for c, t in zip(order, truth, strict=True)
        )
        for order in permutations(calls)
    )


def test_the_ast_table_matches_an_independent_scorer():
    items = json.loads((DATA_DIR / "bfcl" / "slice.json").read_text())
    replies = bfcl_replies()
    assert set(replies) == {item["id"] for item in items}
    right = {item["id"]: item_right(item, replies[item["id"]]) for item in items}
    for category in ("simple", "parallel", "irrelevance"):
        ids = [item["id"] for item in items if item["category"] == category]
        row = f"{category}  *{sum(right[i] for i in ids)} / {len(ids)}"
        assert re.search(row, outputs("en")), row
        assert re.search(row, outputs("ru")), row
    wrong = ", ".join(i for i in right if not right[i])
    assert f"wrong: {wrong}" in outputs("en")
    assert f"неверны: {wrong}" in outputs("ru")
    assert sum(right.values()) == 22  # the scripted model's six mistakes (data/bfcl/README.md)


def test_schema_accuracy_matches(tmp_path):
    import jsonschema

    items = {
        item["id"]: item for item in json.loads((DATA_DIR / "bfcl" / "slice.json").read_text())
    }
    valid = total = 0
    for item_id, calls in bfcl_replies().items():
        functions = {f["name"]: f for f in items[item_id]["functions"]}
        for call in calls:
            total += 1
            schema = json.loads(
                json.dumps(functions[call["function"]["name"]]["parameters"])
                .replace('"dict"', '"object"')
                .replace('"float"', '"number"')
            )
            schema["additionalProperties"] = False
            try:
                jsonschema.validate(json.loads(call["function"]["arguments"]), schema)
                valid += 1
            except (ValueError, jsonschema.ValidationError):
                pass
    assert f"schema accuracy: {valid} of {total} calls = {valid / total:.0%}" in outputs("en")
    assert f"верны по схеме: {valid} из {total} вызовов" in outputs("ru")


def test_f1_rows_match_the_recorded_answers():
    labelled = {
        verify.ONE_CITY: True,
        verify.TWO_CITIES: True,
        "What time is it in Moscow now?": True,
        verify.NO_TOOL_NEEDED: False,
        "What is 2 + 2?": False,
    }
    for engine, label in (("moonshot", "K2"), ("stop_with_calls", "stop")):
        by_finish, by_calls = [], []
        for question, needs in labelled.items():
            (reply,) = [
                i["response"]["body"]["choices"][0]
                for i in recorded()
                if i["request"]["path"] == PATHS[engine]
                and i["request"]["body"]["messages"] == [{"role": "user", "content": question}]
                and set(i["request"]["body"]) == {"model", "messages", "tools"}
            ]
            by_finish.append((needs, reply["finish_reason"] == "tool_calls"))
            by_calls.append((needs, bool(reply["message"].get("tool_calls"))))
        for rule, pairs in (("finish_reason", by_finish), ("tool_calls", by_calls)):
            tp = sum(e and c for e, c in pairs)
            fp = sum(c and not e for e, c in pairs)
            fn = sum(e and not c for e, c in pairs)
            f1 = 2 * tp / (2 * tp + fp + fn)
            row = rf"{rule}\s+{tp}\s+{fp}\s+{fn}\s+{f1:.1f}"
            assert re.search(row, outputs("en")), (label, row)


@pytest.mark.parametrize(("k", "n"), [(18, 20), (20, 20), (22, 28), (180, 200)])
def test_wilson_intervals_match_the_textbook_formula(k, n):
    z = NormalDist().inv_cdf(0.975)
    p = k / n
    denominator = 1 + z**2 / n
    centre = p + z**2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n * n))
    low, high = (centre - spread) / denominator, (centre + spread) / denominator
    line = f"{k:>3} of {n:<3} = {p:4.0%}   95 % interval {low:4.0%} - {high:4.0%}"
    assert line in outputs("en"), line
    if (k, n) == (18, 20):
        assert (round(low, 3), round(high, 3)) == (0.699, 0.972)  # the reference block's figures


@pytest.fixture(scope="module")
def replay():
    with ReplayServer(CASSETTE) as running:
        yield running


def statuses(replay, engine: str, model_name: str) -> dict[str, str]:
    found = verify.run(f"{replay.url}/lessons/12_measuring/engines/{engine}/v1", model_name)
    return {check.name: check.status for check in found}


def test_preflight_passes_a_correctly_configured_engine(replay):
    found = verify.run(
        f"{replay.url}/lessons/12_measuring/engines/vllm/v1", "moonshotai/Kimi-K2-Instruct"
    )
    assert verify.exit_status(found) == 0
    assert {check.status for check in found} <= {"PASS", "N/A"}


@pytest.mark.parametrize(
    ("engine", "model_name", "check", "status"),
    [
        ("no_parser", "moonshotai/Kimi-K2-Instruct", "tool calls arrive in tool_calls", "FAIL"),
        ("moonshot_thinking", "kimi-k2.6", 'tool_choice="required"', "N/A"),
        ("moonshot_thinking", "kimi-k2.6", "reasoning sent and accepted back in round 2", "PASS"),
        ("moonshot_k3", "kimi-k3", "tool_choice={get_time}", "FAIL"),
        ("llamacpp_hermes", "Qwen3-8B-Q8_0.gguf", "parallel_tool_calls=false", "FAIL"),
        ("llamacpp_hermes", "Qwen3-8B-Q8_0.gguf", "tool_choice={get_time}", "N/R"),
        ("stop_with_calls", "moonshotai/Kimi-K2-Instruct", "finish_reason with calls", "WARN"),
    ],
)
def test_each_profile_shows_its_known_difference(replay, engine, model_name, check, status):
    assert statuses(replay, engine, model_name)[check] == status


def test_preflight_stays_within_its_request_bound(replay, monkeypatch):
    counted = []
    original = verify.Endpoint._budget

    def counting(self):
        counted.append(1)
        original(self)

    monkeypatch.setattr(verify.Endpoint, "_budget", counting)
    verify.run(f"{replay.url}/lessons/12_measuring/engines/vllm/v1", "moonshotai/Kimi-K2-Instruct")
    assert 0 < len(counted) <= 40
