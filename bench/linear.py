"""Is assembling a streamed answer linear in its length? Time n and 10n, print the ratio.

Run: python bench/linear.py   (about 20 s on 2 slow cores)

Linear code takes about 10x the time for 10x the text; code that re-copies the text it has
gathered on every fragment (`text += fragment` on a dict value, which CPython cannot do in
place) takes about 100x. Three cases, each at two sizes:
  - ToolCallAccumulator: one call whose arguments arrive in 4-character fragments;
  - KimiStreamParser / HermesStreamParser: ONE big delta (a server that sends the whole text at
    once, or the parser playground) whose content is cut by stray markers into many pieces, which
    the parser merges into one content delta.
Times are CPU seconds of this process (`time.process_time`), best of 3; the machine is shared,
so read the ratios, not the absolute times.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable

from helpers.formats import HermesStreamParser, KimiStreamParser
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
    print("| case | n chars | time(n) | time(10n) | ratio (linear ~10x, quadratic ~100x) |")
    print("|---|---:|---:|---:|---:|")
    for label, make, size in CASES:
        small = best_of(3, make(size))
        large = best_of(3, make(10 * size))
        print(
            f"| {label} | {size:,} | {small * 1e3:.1f} ms | {large * 1e3:.1f} ms "
            f"| {large / small:.1f}x |"
        )


if __name__ == "__main__":
    main()
