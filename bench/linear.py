"""Is assembling a streamed answer linear in its length? Time n and 10n, print the ratio.

Run: python bench/linear.py          (a few seconds on 2 slow cores; n = 100 KB, 10n = 1 MB)
     python bench/linear.py --big    (every n ten times larger, e.g. 1 MB vs 10 MB: the size of
                                      the reported cases)

Linear code takes about 10x the time for 10x the text; code that re-copies the text it has
gathered on every fragment (`text += fragment` on a dict value, which CPython cannot do in
place) takes about 100x. Three cases, each at two sizes:
  - ToolCallAccumulator: one call whose arguments arrive in 4-character fragments;
  - KimiStreamParser / HermesStreamParser: ONE big delta (a server that sends the whole text at
    once, or the parser playground) whose content is cut by stray markers into many pieces, which
    the parser merges into one content delta;
  - Kimi, Hermes and Qwen XML stream parsers on pathological input, as ONE delta: many calls
    (the case that took 47 s for 10 MB, 111x for 10x input, before DeltaList stopped copying its
    list on every delta), one call with a long argument, content full of near-markers (a
    marker's first characters, held back and released again), and for Qwen XML a value full of
    literal `</parameter>` (each one held until the next text shows it is not structural).
Times are CPU seconds of this process (`time.process_time`), best of 3; the machine is shared,
so read the ratios, not the absolute times.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable

from helpers.formats import (
    HermesStreamParser,
    KimiStreamParser,
    QwenXmlStreamParser,
    render_hermes_tool_calls,
    render_kimi_tool_calls,
    render_qwen_xml_tool_calls,
)
from helpers.streaming import ToolCallAccumulator

clock = time.process_time


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The shortest CPU time of `runs` calls of `work` (garbage collection off while timing)."""
    times = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        start = clock()
        work()
        times.append(clock() - start)
        gc.enable()
    return min(times)


def accumulate(size: int) -> Callable[[], object]:
    """One call with `size` characters of arguments, fed to the accumulator 4 characters a delta."""
    arguments = json.dumps({"text": "x" * (size - 12)})
    header = {
        "tool_calls": [
            {
                "index": 0,
                "id": "functions.write:0",
                "type": "function",
                "function": {"name": "write", "arguments": ""},
            }
        ]
    }
    pieces = [
        {"tool_calls": [{"index": 0, "function": {"arguments": arguments[i : i + 4]}}]}
        for i in range(0, len(arguments), 4)
    ]

    def work() -> object:
        accumulator = ToolCallAccumulator()
        accumulator.add_delta(header)
        for piece in pieces:
            accumulator.add_delta(piece)
        assert accumulator.tool_calls[0]["function"]["arguments"] == arguments
        return accumulator

    return work


def one_big_delta(parser: type, stray_marker: str, size: int) -> Callable[[], object]:
    """Content words cut by a marker that emits no delta, fed as ONE delta of about `size` chars."""
    word = "word "
    text = (word + stray_marker) * (size // (len(word) + len(stray_marker)))

    def work() -> object:
        stream = parser()
        deltas = stream.feed(text) + stream.close()
        assert len(deltas) == 1 and "content" in deltas[0]
        return deltas

    return work


def repeat_to(size: int, piece: str) -> str:
    """`piece` repeated to about `size` characters."""
    return piece * max(1, size // len(piece))


def many_calls(render: Callable[..., str], size: int) -> str:
    """Rendered small calls, about `size` characters in all."""
    one = render([_call(0)])
    count = max(1, size // len(one))
    return render([_call(i) for i in range(count)])


def _call(index: int) -> dict:
    """A small call with a Kimi-style id (the other renderers ignore the id)."""
    arguments = json.dumps({"city": "Paris", "days": index % 7})
    return {
        "id": f"functions.get_weather:{index}",
        "function": {"name": "get_weather", "arguments": arguments},
    }


def long_argument(render: Callable[..., str], size: int) -> str:
    """One call whose string argument is about `size` characters."""
    arguments = json.dumps({"text": "word " * (size // 5)})
    return render(
        [{"id": "functions.write:0", "function": {"name": "write", "arguments": arguments}}]
    )


def once(parser: type, text: str) -> Callable[[], object]:
    """Feed `text` to a new `parser` as ONE delta and close it."""

    def work() -> object:
        stream = parser()
        return stream.feed(text) + stream.close()

    return work


PARSERS = [
    ("Kimi", KimiStreamParser, render_kimi_tool_calls, "<|tool_call "),
    ("Hermes", HermesStreamParser, render_hermes_tool_calls, "<tool_cal "),
    ("Qwen XML", QwenXmlStreamParser, render_qwen_xml_tool_calls, "<paramete "),
]
PATHOLOGICAL = (
    [
        (f"{name}: many calls, one delta", lambda n, p=parser, r=render: once(p, many_calls(r, n)))
        for name, parser, render, _ in PARSERS
    ]
    + [
        (
            f"{name}: one long argument, one delta",
            lambda n, p=parser, r=render: once(p, long_argument(r, n)),
        )
        for name, parser, render, _ in PARSERS
    ]
    + [
        (
            f"{name}: near-markers in content, one delta",
            lambda n, p=parser, m=near: once(p, repeat_to(n, m)),
        )
        for name, parser, _, near in PARSERS
    ]
    + [
        (
            "Qwen XML: a value full of literal </parameter>",
            lambda n: once(
                QwenXmlStreamParser,
                "<tool_call>\n<function=f>\n<parameter=x>\n"
                + repeat_to(n, "a </parameter> b ")
                + "\n</parameter>\n</function>\n</tool_call>",
            ),
        ),
    ]
)

CASES = [
    ("ToolCallAccumulator, arguments in 4-char deltas", accumulate, 100_000),
    (
        "KimiStreamParser, one delta, content between stray markers",
        lambda n: one_big_delta(KimiStreamParser, "<|tool_calls_section_end|>", n),
        200_000,
    ),
    (
        "HermesStreamParser, one delta, content between stray </tool_call>",
        lambda n: one_big_delta(HermesStreamParser, "</tool_call>", n),
        200_000,
    ),
]


def main() -> None:
    """Time every case at n and 10n characters and print a table with the ratio."""
    scale = 10 if "--big" in sys.argv else 1
    runs = 1 if "--big" in sys.argv else 3
    print("| case | n chars | time(n) | time(10n) | ratio (linear ~10x, quadratic ~100x) |")
    print("|---|---:|---:|---:|---:|")
    for label, make, size in [*CASES, *((label, make, 100_000) for label, make in PATHOLOGICAL)]:
        size *= scale
        small = best_of(runs, make(size))
        large = best_of(runs, make(10 * size))
        print(
            f"| {label} | {size:,} | {small * 1e3:.1f} ms | {large * 1e3:.1f} ms "
            f"| {large / small:.1f}x |"
        )


if __name__ == "__main__":
    main()
