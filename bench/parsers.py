"""Cost of parsing streamed tool calls: our incremental parsers vs re-parsing on every delta.

Run: python bench/parsers.py   (about a minute and a half on 2 slow cores)
     python bench/parsers.py xml   (one format only: kimi, kimi-thinking, hermes or xml)

For Kimi-K2, Qwen/Hermes and Qwen3.5 XML outputs with 10, 100 and 1000 calls (arguments ~40
characters) and one call with a 1 MB argument, fed as 1-character deltas and as token-sized
deltas (each marker one delta, as real tokenizers emit them; other text in 4-character pieces),
it times:
  (a) stream  - our stream parser: feed every delta, then close;
  (b) reparse - append the delta to a buffer and batch-parse the whole buffer again on every
                delta (what common servers do while streaming);
  (c) once    - the batch parser on the full text, once.
(b) grows with the square of the output. When running it in full would take more than a few
seconds, it is ESTIMATED: the batch parse of the buffer is timed at 60 deltas spread evenly over
the stream and the times are summed with their stride; such cells are marked with "~" and "est.".
Times are CPU seconds of the benchmark process (`time.process_time`), the best of several runs
for short cases; the machine is shared and noisy, so compare ratios within one run.
"""

from __future__ import annotations

import gc
import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from helpers.formats import (
    HermesStreamParser,
    KimiStreamParser,
    ParseResult,
    parse_hermes,
    parse_kimi,
    render_hermes_tool_calls,
    render_kimi_tool_calls,
)
from helpers.formats.hermes import HERMES_TAGS
from helpers.formats.kimi import KIMI_MARKERS
from helpers.formats.qwen_xml import (
    QWEN_XML_TAGS,
    QwenXmlStreamParser,
    parse_qwen_xml,
    render_qwen_xml_tool_calls,
)

# CPU time of this process: other jobs on a shared machine disturb it far less than wall time.
clock = time.process_time

FULL_REPARSE_BUDGET_S = 6.0  # above this (estimated), (b) is estimated instead of run in full
SAMPLES = 60  # deltas timed to estimate (b)
CITIES = ["Beijing", "Paris", "Moscow", "Lima", "Cairo", "Oslo", "Hanoi", "Quito"]


def make_calls(count: int) -> list[dict[str, Any]]:
    """`count` realistic calls; each arguments text is about 40 characters."""
    calls = []
    for i in range(count):
        arguments = json.dumps({"city": f"{CITIES[i % len(CITIES)]} {i:05d}", "unit": "celsius"})
        calls.append(
            {
                "id": f"functions.get_weather:{i}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
        )
    return calls


def huge_call() -> list[dict[str, Any]]:
    """One call whose arguments are about 1 MB of JSON."""
    arguments = json.dumps({"path": "notes.txt", "text": "lorem ipsum dolor " * 58_254})
    return [
        {
            "id": "functions.write_file:0",
            "type": "function",
            "function": {"name": "write_file", "arguments": arguments},
        }
    ]


def token_deltas(text: str, markers: tuple[str, ...], size: int = 4) -> list[str]:
    """Deltas like a tokenizer's: each marker alone, other text in `size`-character pieces."""
    deltas: list[str] = []
    splitter = re.compile("(" + "|".join(re.escape(marker) for marker in markers) + ")")
    for piece in splitter.split(text):
        if piece in markers:
            deltas.append(piece)
        else:
            deltas += [piece[i : i + size] for i in range(0, len(piece), size)]
    return deltas


def best_time(
    fn: Callable[[], object], min_total_s: float = 1.0, max_runs: int = 5, collect: bool = True
) -> float:
    """Best CPU time of a few runs (one run when a single run is already long)."""
    best = float("inf")
    spent = 0.0
    runs = 0
    while runs < max_runs and (runs == 0 or spent < min_total_s):
        if collect:
            gc.collect()  # start each run from the same heap state
        start = clock()
        fn()
        elapsed = clock() - start
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
    return best


def run_stream(parser_class: type, deltas: list[str]) -> ParseResult:
    """(a): feed every delta to a stream parser, close it, return its result."""
    parser = parser_class()
    for delta in deltas:
        parser.feed(delta)
    parser.close()
    return parser.result


def run_reparse(parse: Callable[[str], ParseResult], deltas: list[str]) -> None:
    """(b): grow a buffer and batch-parse all of it after every delta."""
    buffer = ""
    for delta in deltas:
        buffer += delta
        parse(buffer)


def estimate_reparse(parse: Callable[[str], ParseResult], deltas: list[str]) -> float:
    """Estimate (b) by timing the parse at evenly spread deltas and summing with the stride."""
    ends = []
    total = 0
    for delta in deltas:
        total += len(delta)
        ends.append(total)
    text = "".join(deltas)
    stride = len(deltas) / SAMPLES
    estimate = 0.0
    for k in range(SAMPLES):
        index = min(len(deltas) - 1, int((k + 0.5) * stride))
        prefix = text[: ends[index]]
        estimate += (
            best_time(
                lambda prefix=prefix: parse(prefix), min_total_s=0.0, max_runs=3, collect=False
            )
            * stride
        )
    return estimate


def measure(
    parse: Callable[[str], ParseResult], parser_class: type, text: str, deltas: list[str]
) -> dict[str, Any]:
    """Time (a), (b) and (c) for one text split into deltas; check (a) agrees with (c)."""
    assert run_stream(parser_class, deltas) == parse(text), "stream and batch disagree"
    stream_s = best_time(lambda: run_stream(parser_class, deltas))
    once_s = best_time(lambda: parse(text))
    estimate = estimate_reparse(parse, deltas)
    if estimate <= FULL_REPARSE_BUDGET_S:
        reparse_s, estimated = best_time(lambda: run_reparse(parse, deltas), max_runs=3), False
    else:
        reparse_s, estimated = estimate, True
    return {
        "estimate": estimate,
        "deltas": len(deltas),
        "chars": len(text),
        "stream": stream_s,
        "reparse": reparse_s,
        "estimated": estimated,
        "once": once_s,
    }


def seconds(value: float) -> str:
    """Human-readable duration."""
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def bench_format(
    title: str,
    parse: Callable[[str], ParseResult],
    parser_class: type,
    render: Callable[..., str],
    markers: tuple[str, ...],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Run every case of one format and print its table."""
    cases = {
        "10 calls": render(make_calls(10), "Let me look these up."),
        "100 calls": render(make_calls(100), "Let me look these up."),
        "1000 calls": render(make_calls(1000), "Let me look these up."),
        "1 MB argument": render(huge_call(), "Saving the file."),
    }
    results: dict[tuple[str, str], dict[str, Any]] = {}
    print(f"\n## {title}\n")
    print(
        "| case | deltas | chars | (a) stream | (a) per delta "
        "| (b) reparse every delta | (c) once | (b)/(a) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, text in cases.items():
        for split_name, deltas in (("1-char", list(text)), ("token", token_deltas(text, markers))):
            row = measure(parse, parser_class, text, deltas)
            results[(case, split_name)] = row
            mark = "~" if row["estimated"] else ""
            note = " (est.)" if row["estimated"] else ""
            print(
                f"| {case}, {split_name} | {row['deltas']:,} | {row['chars']:,} "
                f"| {seconds(row['stream'])} | {row['stream'] / row['deltas'] * 1e6:.2f} us "
                f"| {mark}{seconds(row['reparse'])}{note} "
                f"| {seconds(row['once'])} | {mark}{row['reparse'] / row['stream']:,.0f}x |",
                flush=True,
            )
    checks = [
        f"{row['estimate'] / row['reparse']:.2f}"
        for row in results.values()
        if not row["estimated"]
    ]
    print(f"\nestimator check, estimate / full run where (b) ran in full: {', '.join(checks)}\n")
    for split_name in ("1-char", "token"):
        big, small = results[("1000 calls", split_name)], results[("100 calls", split_name)]
        est = " (est.)" if big["estimated"] or small["estimated"] else ""
        stream_growth = big["stream"] / small["stream"]
        print(
            f"- {split_name} deltas, 1000 vs 100 calls: (a) grew x{stream_growth:.1f}, "
            f"(b) grew x{big['reparse'] / small['reparse']:.0f}{est}; "
            f"at 1000 calls (b)/(a) = {big['reparse'] / big['stream']:,.0f}x{est}"
        )
    return results


def render_kimi_thinking(calls: list[dict[str, Any]], content: str = "") -> str:
    """Kimi thinking-model output: a `<think>` block (one sentence per call), then the calls."""
    reasoning = "Weigh the next city before calling the tool. " * len(calls)
    return f"<think>{reasoning}</think>" + render_kimi_tool_calls(calls, content)


FORMATS: dict[str, tuple[str, Callable[[str], ParseResult], type, Callable[..., str], tuple]] = {
    "kimi": (
        "Kimi-K2 (parse_kimi / KimiStreamParser)",
        parse_kimi,
        KimiStreamParser,
        render_kimi_tool_calls,
        KIMI_MARKERS,
    ),
    "kimi-thinking": (
        "Kimi thinking model (<think> block, then calls)",
        parse_kimi,
        KimiStreamParser,
        render_kimi_thinking,
        (*KIMI_MARKERS, "<think>", "</think>"),
    ),
    "hermes": (
        "Qwen / Hermes (parse_hermes / HermesStreamParser)",
        parse_hermes,
        HermesStreamParser,
        render_hermes_tool_calls,
        HERMES_TAGS,
    ),
    "xml": (
        "Qwen3.5 XML (parse_qwen_xml / QwenXmlStreamParser)",
        parse_qwen_xml,
        QwenXmlStreamParser,
        render_qwen_xml_tool_calls,
        QWEN_XML_TAGS,
    ),
}


def main() -> None:
    """Run the benchmarks of the formats named on the command line (all by default)."""
    started = time.perf_counter()
    chosen = sys.argv[1:] or list(FORMATS)
    unknown = sorted(set(chosen) - set(FORMATS))
    if unknown:
        sys.exit(f"unknown format(s) {unknown}; choose from {sorted(FORMATS)}")
    print(f"Python {sys.version.split()[0]}; CPU times of this process, best of up to 5 runs.")
    for name in chosen:
        bench_format(*FORMATS[name])
    print(f"\nwhole benchmark: {time.perf_counter() - started:.0f} s wall time")


if __name__ == "__main__":
    main()
