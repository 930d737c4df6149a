"""The engines' own published parser cases, run against `helpers.formats`.

The cases (inputs, tool schemas, what the engine's test asserts) are data transcribed from vLLM's
test files into `tests/engine_cases/*.json` (Apache-2.0, sources in `LICENSE.md` there). Every
case runs four ways: the batch parser, the stream parser fed the whole text, fed the deltas the
engine test used (when it gave any) and fed 3 characters at a time. Where we follow another
engine or keep our own rule, the case is in `DIFFERENCES` with the reason (also in
`docs/notes.md`), and the test checks that the difference is still there, so the list stays true.

`python tests/test_formats_engine_cases.py` prints the pass count per format (any checkout;
`-v` also lists the failing cases).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.formats import (
    HermesStreamParser,
    KimiStreamParser,
    QwenXmlStreamParser,
    parse_hermes,
    parse_kimi,
    parse_qwen_xml,
)
from helpers.streaming import ToolCallAccumulator

CASES_DIR = Path(__file__).parent / "engine_cases"

# Where our parsers knowingly differ from the engine test (the reason is in docs/notes.md).
DIFFERENCES = {
    "hermes/non_streaming_tool_call_invalid_json": (
        "a broken call is returned with what could be recovered and an error, not dropped"
    ),
    "hermes/non_streaming_bare_string_arguments": (
        "arguments given as a string are kept as the model wrote them (and reported), not "
        "JSON-encoded"
    ),
    "kimi/invalid_funcall_id_skipped": (
        "a call whose id is not name:N is returned with an error, not dropped"
    ),
    "kimi/bare_counter_multiple_tools_skips_unsafe_inference_ambiguous": (
        "a bare id whose tool cannot be inferred is returned with an empty name and an error"
    ),
    "kimi/bare_counter_multiple_tools_skips_unsafe_inference_malformed_json": (
        "a bare id whose tool cannot be inferred is returned with an empty name and an error"
    ),
    "kimi/streaming_content_after_tool_section": (
        "text after the tool-calls section is content, not dropped"
    ),
}


def load_cases() -> list[tuple[str, str, dict]]:
    """(format, case id, case) for every case of every file of K2/Qwen cases (the Kimi K3 file has
    its own shape and test, tests/test_formats_kimi_xtml.py)."""
    cases = []
    for path in sorted(CASES_DIR.glob("*.json")):
        if path.name.startswith("kimi_k3"):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        cases += [(data["format"], case["id"], case) for case in data["cases"]]
    return cases


def batch(fmt: str, text: str, case: dict) -> tuple[str, str, list[dict]]:
    """(content, reasoning, tool calls) from the batch parser."""
    tools, opened = case.get("tools"), case.get("reasoning_open")
    if fmt == "qwen_xml":
        result = parse_qwen_xml(text, tools, opened)
    elif fmt == "hermes":
        result = parse_hermes(text, opened)
    else:
        try:
            result = parse_kimi(text, opened, tools)
        except TypeError:  # an older checkout without `tools`
            result = parse_kimi(text, opened)
    return result.content, result.reasoning, result.tool_calls


def streamed(fmt: str, chunks: list[str], case: dict) -> tuple[str, str, list[dict]]:
    """(content, reasoning, tool calls) from the deltas of the stream parser."""
    tools, opened = case.get("tools"), case.get("reasoning_open")
    if fmt == "qwen_xml":
        parser: Any = QwenXmlStreamParser(tools, opened)
    elif fmt == "hermes":
        parser = HermesStreamParser(opened)
    else:
        try:
            parser = KimiStreamParser(opened, tools)
        except TypeError:
            parser = KimiStreamParser(opened)
    deltas = [delta for chunk in chunks for delta in parser.feed(chunk)] + parser.close()
    accumulator = ToolCallAccumulator()
    for delta in deltas:
        accumulator.add_delta(delta)
    reasoning = "".join(delta.get("reasoning_content", "") for delta in deltas)
    return accumulator.content or "", reasoning, accumulator.tool_calls


def problems(case: dict, content: str, reasoning: str, calls: list[dict]) -> list[str]:
    """What differs from the engine test's assertions (empty: the case passes)."""
    found = []
    if "calls" in case:
        names = [c["function"]["name"] for c in calls]
        if names != [c["name"] for c in case["calls"]]:
            found.append(f"calls {names} != {[c['name'] for c in case['calls']]}")
        else:
            for ours, expected in zip(calls, case["calls"], strict=True):
                if expected["arguments"] is None:
                    continue
                try:
                    value = json.loads(ours["function"]["arguments"])
                except ValueError:
                    found.append(f"{expected['name']} arguments are not JSON")
                    continue
                if value != expected["arguments"]:
                    found.append(
                        f"{expected['name']} arguments {value!r} != {expected['arguments']!r}"
                    )
    if "calls_raw" in case and [c["function"]["arguments"] for c in calls] != case["calls_raw"]:
        found.append(f"raw arguments {[c['function']['arguments'] for c in calls]}")
    if "ids" in case and [c["id"] for c in calls] != case["ids"]:
        found.append(f"ids {[c['id'] for c in calls]} != {case['ids']}")
    for text in case.get("arguments_exclude", []):
        if any(text in c["function"]["arguments"] for c in calls):
            found.append(f"arguments hold {text!r}")
    if "content" in case and content != (case["content"] or "").strip():
        found.append(f"content {content!r} != {case['content']!r}")
    found += [f"content lacks {t!r}" for t in case.get("content_contains", []) if t not in content]
    found += [f"content holds {t!r}" for t in case.get("content_excludes", []) if t in content]
    if "reasoning" in case and reasoning != (case["reasoning"] or "").strip():
        found.append(f"reasoning {reasoning!r} != {case['reasoning']!r}")
    return found


def run(fmt: str, case: dict) -> dict[str, list[str]]:
    """The problems of a case in each way of feeding it."""
    text = case["text"] if "text" in case else "".join(case["chunks"])
    ways = {
        "batch": lambda: batch(fmt, text, case),
        "stream, whole": lambda: streamed(fmt, [text], case),
        "stream, 3 characters a delta": lambda: streamed(
            fmt, [text[i : i + 3] for i in range(0, len(text), 3)], case
        ),
    }
    if "chunks" in case:
        ways["stream, the engine test's deltas"] = lambda: streamed(fmt, case["chunks"], case)
    results = {}
    for way, parse in ways.items():
        try:
            results[way] = problems(case, *parse())
        except Exception as exc:  # a crash is a failure of the case, reported as such
            results[way] = [f"raised {type(exc).__name__}: {exc}"]
    return results


CASES = load_cases()


def test_the_case_files_are_present_and_cover_three_formats() -> None:
    assert {fmt for fmt, _, _ in CASES} == {"qwen_xml", "hermes", "kimi"}
    assert len(CASES) >= 100
    assert (CASES_DIR / "LICENSE.md").is_file()
    known = {f"{fmt}/{case_id}" for fmt, case_id, _ in CASES}
    assert set(DIFFERENCES) <= known


@pytest.mark.parametrize(("fmt", "case_id", "case"), CASES, ids=[f"{f}/{i}" for f, i, _ in CASES])
def test_engine_case(fmt: str, case_id: str, case: dict) -> None:
    results = run(fmt, case)
    key = f"{fmt}/{case_id}"
    if key in DIFFERENCES:
        # The difference is real in every way of feeding, and the same in each.
        assert all(results.values()), results
        assert len({tuple(found) for found in results.values()}) == 1, results
    else:
        assert results == {way: [] for way in results}


def main() -> None:
    """Print how many cases pass in every way of feeding, per format (for before/after counts)."""
    totals: dict[str, list[int]] = {}
    for fmt, case_id, case in CASES:
        results = run(fmt, case)
        ok = not any(results.values())
        totals.setdefault(fmt, [0, 0])
        totals[fmt][0] += ok
        totals[fmt][1] += 1
        if not ok and "-v" in sys.argv:
            print(f"  FAIL {fmt}/{case_id}: {results}")
    for fmt, (passed, total) in totals.items():
        print(f"{fmt}: {passed} of {total} cases pass")


if __name__ == "__main__":
    main()
