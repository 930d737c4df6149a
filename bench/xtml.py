"""Is the Kimi K3 XTML stream parser linear? Time n and 10n, print the ratio.

Run: python bench/xtml.py   (about 30 s on 2 shared cores)

Linear code takes about 10x the time for 10x the input; code that re-reads what it has already
read on every delta (as vLLM's and SGLang's K3 parsers do: they search the accumulated text for
calls again at each delta) takes about 100x. Cases, each at two sizes:
  - many calls: a thinking output with N parallel calls (two typed arguments each), streamed in
    token-sized deltas (each special token one delta, other text 4 characters a delta);
  - one long string argument (a file being written), 4 characters a delta;
  - one long reasoning block, 4 characters a delta;
  - the same many-calls text fed as ONE delta (a server that sends everything at once);
  - for contrast, "re-parse per delta": `parse_kimi_xtml` over the whole text so far after every
    delta, what a server does without an incremental parser (smaller sizes: it is quadratic).
Times are CPU seconds of this process (`time.process_time`), best of 3, garbage collection off
while timing; the machine is shared, so read the ratios, not the absolute times. Before timing,
each case checks that streaming gives the same result as `parse_kimi_xtml` on the whole text.

Measured numbers, with an earlier run's, are in bench/README.md.
"""

from __future__ import annotations

from collections.abc import Callable

# bench/ is on sys.path when this runs as `python bench/xtml.py`
from linear import best_of
from parsers import token_deltas

from helpers.formats import KimiXtmlStreamParser, parse_kimi_xtml, render_kimi_xtml
from helpers.formats.kimi_xtml import XTML_TOKENS

OPENER = '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>'


def model_output(message: dict) -> str:
    """What K3 generates for an assistant message: its render after the generation prompt."""
    rendered = render_kimi_xtml([message], add_generation_prompt=False, thinking_effort=None)
    assert rendered.startswith(OPENER)
    return rendered[len(OPENER) :]


def many_calls(count: int) -> str:
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {
                "name": "get_weather",
                "arguments": {"city": f"City number {i}", "days": i % 7},
            },
        }
        for i in range(count)
    ]
    message = {
        "role": "assistant",
        "reasoning_content": "I will look up every city. " * 3,
        "content": "Checking.",
        "tool_calls": calls,
    }
    return model_output(message)


def long_argument(size: int) -> str:
    call = {"id": "w", "function": {"name": "write_file", "arguments": {"text": "x" * size}}}
    return model_output({"role": "assistant", "content": "", "tool_calls": [call]})


def long_reasoning(size: int) -> str:
    return model_output({"role": "assistant", "reasoning_content": "y" * size, "content": "ok"})


def tokens(text: str) -> list[str]:
    """Token-sized deltas: each special token one delta, other text 4 characters a delta."""
    return token_deltas(text, XTML_TOKENS)


def streaming(deltas: list[str]) -> Callable[[], object]:
    def work() -> object:
        parser = KimiXtmlStreamParser(opened="think")
        for delta in deltas:
            parser.feed(delta)
        parser.close()
        return parser.result

    return work


def reparsing(deltas: list[str]) -> Callable[[], object]:
    def work() -> object:
        so_far: list[str] = []
        result = None
        for delta in deltas:
            so_far.append(delta)
            result = parse_kimi_xtml("".join(so_far), opened="think")
        return result

    return work


def checked(deltas: list[str]) -> list[str]:
    """Make sure streaming the deltas gives the whole text's parse (and no errors)."""
    whole = parse_kimi_xtml("".join(deltas), opened="think")
    assert streaming(deltas)() == whole and not whole.errors, whole.errors[:3]
    return deltas


CASES: list[tuple[str, Callable[[int], list[str]], int, Callable]] = [
    ("stream, N calls, token deltas", lambda n: tokens(many_calls(n)), 300, streaming),
    ("stream, 1 string argument, 4-char deltas", lambda n: tokens(long_argument(n)), 100_000,
     streaming),
    ("stream, reasoning block, 4-char deltas", lambda n: tokens(long_reasoning(n)), 100_000,
     streaming),
    ("stream, N calls, ONE delta", lambda n: [many_calls(n)], 1_000, streaming),
    ("re-parse per delta, N calls (contrast)", lambda n: tokens(many_calls(n)), 10, reparsing),
]  # fmt: skip


def main() -> None:
    """Time every case at n and 10n and print a table with the ratio."""
    print("| case | n | deltas(n) | time(n) | time(10n) | ratio (linear ~10x, quadratic ~100x) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, make, size, how in CASES:
        small_deltas = checked(make(size))
        large_deltas = checked(make(10 * size))
        small = best_of(3, how(small_deltas))
        large = best_of(3, how(large_deltas))
        print(
            f"| {label} | {size:,} | {len(small_deltas):,} | {small * 1e3:.1f} ms "
            f"| {large * 1e3:.1f} ms | {large / small:.1f}x |"
        )


if __name__ == "__main__":
    main()
