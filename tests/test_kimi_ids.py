"""normalize_kimi_ids: a copy of the history with Kimi-native ids, tool results following calls."""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from openai.types.chat import ChatCompletion

from helpers import normalize_kimi_ids
from tests.fakes import completion

USER = {"role": "user", "content": "Weather in Beijing and Moscow?"}


def assistant(*calls, content=None):
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}}
            for i, n in calls
        ],
    }


def tool(call_id, content="{}"):
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def ids(messages):
    return [
        [c["id"] for c in m["tool_calls"]] if m.get("tool_calls") else m.get("tool_call_id")
        for m in messages
    ]


def test_foreign_ids_become_native_and_results_follow_their_calls():
    history = [
        USER,
        assistant(
            ("call_59adf5614cfe4f4b8a71be54", "get_weather"),
            ("call_x", "get_time"),
            content="Checking.",
        ),
        tool("call_x", "12:00"),  # results may come in any order
        tool("call_59adf5614cfe4f4b8a71be54", "Sunny"),
        {"role": "assistant", "content": "Sunny at noon."},
        {"role": "user", "content": "And Moscow?"},
        assistant(("0", "get_weather")),
        tool("0", "Snow"),
    ]
    out = normalize_kimi_ids(history)
    assert ids(out) == [
        None,
        ["functions.get_weather:0", "functions.get_time:1"],
        "functions.get_time:1",
        "functions.get_weather:0",
        None,
        None,
        ["functions.get_weather:2"],
        "functions.get_weather:2",
    ]
    assert [m.get("content") for m in out] == [m.get("content") for m in history]
    assert out[1]["tool_calls"][1]["function"] == {"name": "get_time", "arguments": "{}"}


def test_ids_repeated_every_round_pair_with_the_latest_call():
    # Moonshot's API answers `get_weather:0` in every round: each result belongs to its own round.
    history = [
        USER,
        assistant(("get_weather:0", "get_weather")),
        tool("get_weather:0"),
        assistant(("get_weather:0", "get_weather")),
        tool("get_weather:0"),
    ]
    assert ids(normalize_kimi_ids(history))[1:] == [
        ["functions.get_weather:0"],
        "functions.get_weather:0",
        ["functions.get_weather:1"],
        "functions.get_weather:1",
    ]


def test_a_late_result_for_an_earlier_round_still_finds_its_call():
    history = [USER, assistant(("a", "f")), assistant(("b", "g")), tool("b"), tool("a")]
    assert ids(normalize_kimi_ids(history))[3:] == ["functions.g:1", "functions.f:0"]


def test_two_calls_sharing_one_id_are_answered_in_order():
    history = [USER, assistant(("", "f"), ("", "g")), tool(""), tool("")]
    assert ids(normalize_kimi_ids(history))[2:] == ["functions.f:0", "functions.g:1"]


def test_unknown_and_missing_ids_are_left_alone():
    history = [
        USER,
        tool("orphan"),
        assistant((None, "f")),
        tool("nowhere"),
        {"role": "tool", "content": "no id at all"},
        {"role": "tool", "tool_call_id": 7},
    ]
    out = normalize_kimi_ids(history)
    assert ids(out) == [None, "orphan", ["functions.f:0"], "nowhere", None, 7]


def test_the_input_is_never_mutated_and_the_output_shares_nothing():
    history = [USER, assistant(("call_1", "get_weather")), tool("call_1")]
    before = copy.deepcopy(history)
    out = normalize_kimi_ids(history)
    assert history == before
    out[1]["tool_calls"][0]["function"]["name"] = "changed"
    out[0]["content"] = "changed"
    assert history == before


def test_sdk_messages_in_the_history_become_dicts():
    body = completion(None, [("call_1", "get_weather", '{"city": "Beijing"}')], "tool_calls")
    sdk_message = ChatCompletion.model_validate(body).choices[0].message
    out = normalize_kimi_ids([USER, sdk_message, tool("call_1")])
    assert isinstance(out[1], dict) and out[1]["role"] == "assistant"
    assert out[1]["tool_calls"][0]["id"] == "functions.get_weather:0"
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Beijing"}'
    assert out[2]["tool_call_id"] == "functions.get_weather:0"
    assert sdk_message.tool_calls[0].id == "call_1"


def test_reasoning_and_other_fields_are_kept():
    message = assistant(("x", "f")) | {"reasoning_content": "think", "name": "kimi"}
    out = normalize_kimi_ids([message, tool("x") | {"name": "f"}])
    assert out[0]["reasoning_content"] == "think" and out[0]["name"] == "kimi"
    assert out[1] == {"role": "tool", "tool_call_id": "functions.f:0", "content": "{}", "name": "f"}


names = st.from_regex(r"[a-z][a-z_]{2,8}", fullmatch=True)
foreign = st.one_of(
    st.just(""), st.from_regex(r"(call_[0-9a-f]{6}|[a-z]{1,4}:[0-9]|[0-9])", fullmatch=True)
)


@st.composite
def histories(draw):
    """Rounds of calls with arbitrary (possibly repeated) ids, each answered in a shuffled order."""
    history = [USER]
    for _ in range(draw(st.integers(0, 4))):
        calls = draw(
            st.lists(st.tuples(foreign, names), min_size=1, max_size=3, unique_by=lambda c: c[0])
        )
        history.append(assistant(*calls))
        history += [tool(i) for i, _ in draw(st.permutations(calls))]
    return history


@settings(max_examples=examples(200), deadline=None)
@given(histories())
def test_every_result_follows_its_call_and_normalizing_twice_changes_nothing(history):
    out = normalize_kimi_ids(history)
    counter = 0
    for before, after in zip(history, out, strict=True):
        if before["role"] == "assistant":
            new = {}
            for old_call, new_call in zip(before["tool_calls"], after["tool_calls"], strict=True):
                assert new_call["id"] == f"functions.{old_call['function']['name']}:{counter}"
                new[old_call["id"]] = new_call["id"]
                counter += 1
        elif before["role"] == "tool":
            assert after["tool_call_id"] == new[before["tool_call_id"]]
    assert normalize_kimi_ids(out) == out
