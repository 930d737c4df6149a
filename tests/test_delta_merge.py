"""DeltaList (the stream parsers' delta merging): fragments joined once, whichever way it is read."""

from helpers.formats import KimiStreamParser, parse_kimi
from helpers.formats._common import DeltaList


def test_neighbouring_fragments_merge_and_read_joined_either_way():
    out = DeltaList()
    for piece in ["a", "b", "c"]:
        out.content(piece)
    out.call_header(0, "functions.f:0", "f")
    for piece in ['{"x"', ": 1", "}"]:
        out.arguments(0, piece)
    out.arguments(1, "{}")
    out.content("d")
    expected = [
        {"content": "abc"},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "functions.f:0",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]},
        {"content": "d"},
    ]
    assert list(out) == expected
    out.content("e")  # merging goes on after a read
    assert out.done() == expected[:-1] + [{"content": "de"}]


def test_one_big_delta_with_many_merges_equals_the_batch_parse():
    text = "word <|tool_calls_section_end|>" * 2000
    stream = KimiStreamParser()
    deltas = stream.feed(text) + stream.close()
    assert deltas == [{"content": parse_kimi(text).content}]
    assert stream.result == parse_kimi(text)
