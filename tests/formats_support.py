"""What the format tests share: expected calls, stream driving and its contract, strategies."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from helpers.formats import ParseResult
from helpers.formats.stream import StreamParser
from helpers.streaming import ToolCallAccumulator

FAST = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def message_like_json(leaves: st.SearchStrategy, keys: list[str]) -> st.SearchStrategy:
    """Nested lists and objects of `leaves`, the objects keyed by the given field names of
    OpenAI messages, deltas or calls (so the shapes a reader looks for come up often)."""
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=4)
        ),
        max_leaves=10,
    )


def call(call_id: str, name: str, arguments: str | dict) -> dict:
    """An OpenAI-shaped tool call (its arguments are JSON text; a renderer also takes a dict)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def split_at(text: str, cuts: list[int]) -> list[str]:
    """Cut text at the given positions (any order, duplicates allowed)."""
    points = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(points, points[1:], strict=False)]


def stream(
    parser: StreamParser, chunks: list[str]
) -> tuple[StreamParser, ToolCallAccumulator, list[dict]]:
    """Feed chunks to a stream parser, close it, and accumulate every delta."""
    deltas: list[dict] = []
    for chunk in chunks:
        deltas += parser.feed(chunk)
    deltas += parser.close()
    accumulator = ToolCallAccumulator()
    for delta in deltas:
        accumulator.add_delta(delta)
    return parser, accumulator, deltas


def assert_stream_matches(
    parser: StreamParser, expected: ParseResult, chunks: list[str]
) -> list[dict]:
    """The streaming contract of the K2 / Qwen parsers: fed any split of a text, `parser` gives
    deltas that add up to the batch result `expected` (reasoning, content, calls), the same
    `.result`, and announces each call once, in order, with empty arguments. Returns the deltas."""
    parser, accumulator, deltas = stream(parser, chunks)
    assert "".join(d.get("reasoning_content", "") for d in deltas) == expected.reasoning
    assert accumulator.content == expected.content
    assert accumulator.tool_calls == expected.tool_calls
    assert parser.result == expected
    headers = [d["tool_calls"][0] for d in deltas if "id" in d.get("tool_calls", [{}])[0]]
    assert [h["index"] for h in headers] == list(range(len(expected.tool_calls)))
    assert all(h["function"]["arguments"] == "" for h in headers)
    return deltas


# Random JSON for call arguments, and function names with `-` and `.`.
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ARGUMENT_OBJECTS = st.dictionaries(st.text(max_size=10), _JSON_VALUES, max_size=5)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
