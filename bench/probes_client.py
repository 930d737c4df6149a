"""Reliability probes for the client side: the stream parsers and the tool loop.

Groups (see `bench/probes.py` for the runner and what counts as a crash or a data loss):
- "parsers": every raw-format stream parser in `helpers/formats/` (Kimi K2 with and without
  `<think>`, Hermes / Qwen3 `<tool_call>`, Qwen3.5 XML, Kimi K3 XTML, the `<think>` splitter on its
  own) and the streamed-answer accumulator (`helpers/streaming.py`):
  * round trip: the package's own renderers write random calls (odd names, arguments with
    unicode, quotes, backslashes, other formats' markers, huge values), the text is cut into
    deltas (1 character, random sizes, one delta); the stream must add up to the batch parse and
    the batch parse must give back the calls, content and reasoning that were rendered;
  * damage: a rendered sample cut at every position, with sentinel words, markers and random
    characters inserted, with tags removed: nothing may raise, stream and batch must agree, the
    calls before a cut must come back intact, and every inserted word must come back somewhere
    (content, reasoning, a call) or the parse must report an error;
  * size: many calls and one huge argument in ONE delta, at n and 10n characters (1 MB / 10 MB,
    quick 100 KB / 1 MB, the generators of `bench/linear.py`); the ratio is a note, and in the
    full run (never in quick mode, which the tests use) above 30x it counts as a crash (linear
    code takes ~10x, code that re-copies its buffer ~100x);
  * accumulator: completions cut into chunks the way real servers send them (ids and names
    repeated, no index, object arguments, interleaved parallel calls, usage inside the choice),
    and chunks with fields of the wrong type: the sum must be the completion, and a broken chunk
    may only raise `MalformedChunkError` or `StreamErrorEvent`.
- "tools/loop": `run_tool_loop` with a real `openai.OpenAI` client whose HTTP transport is an
  `httpx.MockTransport` (so the SDK's own request encoding, SSE parsing and stream closing run):
  hostile tools (raising Exception, KeyboardInterrupt or SystemExit mid-batch, returning objects
  JSON cannot hold, lone surrogates, huge strings, sleeping), hostile calls (unknown names, bad
  JSON, JSON that is not an object, missing and extra parameters, duplicate ids, many parallel
  calls), hostile servers (malformed chunks, invalid JSON in an event, a connection cut mid-call,
  an empty stream, error events and statuses, `max_tokens` mid-call) and `max_rounds`. After each
  case `messages` must be a conversation a server accepts (every call answered exactly once,
  nothing appended twice, nothing changed), each request must have been encodable, an error must
  be a `ToolLoopError` with a sentence, and every SDK stream must have been closed.

Run: python bench/probes.py --group parsers --group tools/loop [--quick]
Inputs come from `random.Random(SEED)`, so a run is reproducible.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import gc
import json
import random
import re
import signal
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import linear
import openai
from probes import Outcome, Probe

from helpers.formats import (
    KIMI_MARKERS,
    HermesStreamParser,
    KimiStreamParser,
    QwenXmlStreamParser,
    render_hermes_tool_calls,
    render_kimi_tool_calls,
    render_qwen_xml_tool_calls,
)
from helpers.formats.guide import guide_extract_tool_call_info
from helpers.formats.kimi_xtml import XTML_TOKENS, KimiXtmlStreamParser, render_kimi_xtml
from helpers.formats.think import ReasoningSplitter
from helpers.i18n import language, reset_language, set_language
from helpers.loop import ToolLoopError, run_tool_loop
from helpers.streaming import MalformedChunkError, StreamErrorEvent, ToolCallAccumulator
from helpers.tools import ToolRegistry
from tests.fakes import chunks_for
from tests.fakes import completion as completion_body  # (content, calls, finish_reason)

SEED = 2207
print(f"probes_client: seed {SEED}")


# ---------------------------------------------------------------------------------------------
# Shared plumbing
# ---------------------------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the alarm when one input takes longer than its limit (a BaseException, so that
    no `except Exception` in the code under test swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `Hang` in this thread after `seconds` (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def short(value: Any, limit: int = 100) -> str:
    """repr(value) cut to `limit` characters, for a report line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exception_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ fails (a probe case on its own)
        text = "(its str() fails)"
    return f"{type(exc).__name__}: {short(text, 160)}"


class Report:
    """An `Outcome` being filled; `done()` folds the lines that repeat."""

    def __init__(self) -> None:
        self.outcome = Outcome()

    def crash(self, line: str) -> None:
        self.outcome.crashes.append(line)

    def loss(self, line: str) -> None:
        self.outcome.losses.append(line)

    def done(self) -> Outcome:
        """The outcome; repeated lines (the same defect on many inputs) are counted once each,
        with the number of inputs that showed it."""
        for kind in ("crashes", "losses"):
            counts = Counter(getattr(self.outcome, kind))  # first-seen order, as before
            lines = [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]
            setattr(self.outcome, kind, lines)
        return self.outcome


# ---------------------------------------------------------------------------------------------
# Parsers: random calls, rendered by the package's renderers
# ---------------------------------------------------------------------------------------------

# Pieces random strings are made of: unicode, quotes, backslashes, JSON and escape look-alikes,
# and markers of every format (each format leaves out the ones it documents as ambiguous).
PIECES = [
    "a",
    "word",
    " ",
    "  ",
    "\n",
    "\t",
    "é",
    "日本語",
    "🙂",
    "\u200b",
    '"',
    "'",
    "\\",
    "\\n",
    "\\u00e9",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "null",
    "<",
    ">",
    "&amp;",
    "&quot;",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=x>",
    "</parameter>",
    *KIMI_MARKERS,
    *XTML_TOKENS,
    "<|open|>argument",
    "<|close|>argument<|sep|>",
    "<|im_end|>",
]
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"


def random_string(rng: random.Random, forbidden: tuple[str, ...], size: int = 8) -> str:
    """A string of up to `size` pieces with no forbidden substring (rebuilt until it has none)."""
    while True:
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, size)))
        if not any(bad in text for bad in forbidden):
            return text


def random_name(rng: random.Random) -> str:
    first = rng.choice(NAME_CHARS[:53])
    return first + "".join(rng.choice(NAME_CHARS) for _ in range(rng.randint(0, 20)))


def random_value(rng: random.Random, forbidden: tuple[str, ...], depth: int = 0) -> Any:
    kind = rng.choice(["str", "str", "int", "float", "bool", "null", "list", "dict"])
    if depth > 2 and kind in ("list", "dict"):
        kind = "str"
    if kind == "str":
        return random_string(rng, forbidden)
    if kind == "int":
        return rng.choice([0, -1, 7, 2**53 + 1, -(10**20), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -2.25, 1e-7, 3.0e21, round(rng.uniform(-1e6, 1e6), 3)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_value(rng, forbidden, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        random_string(rng, forbidden, 3): random_value(rng, forbidden, depth + 1)
        for _ in range(rng.randint(0, 4))
    }


class Format:
    """How to render and parse one raw format, and what it cannot carry inside a value."""

    name: str
    forbidden: tuple[str, ...]  # substrings that may not appear in a value (documented limits)
    prose_forbidden: tuple[str, ...]  # ... nor in content or reasoning
    identifier_keys = False  # argument keys must be identifiers (Qwen XML tag names)
    ids_in_text = False  # the text carries the call ids (Kimi K2)

    def render(self, calls: list[dict], content: str, reasoning: str | None) -> str:
        raise NotImplementedError

    def parser(self, opened: bool | None = None) -> Any:
        """A new stream parser; `opened`: the prompt opened the reasoning block (None: unknown)."""
        raise NotImplementedError

    def prompt_opened(self, text: str) -> str:
        """The text as a model writes it when the generation prompt opened the reasoning block."""
        return text.replace("<think>", "", 1)

    def expected_id(self, index: int, name: str) -> str:
        raise NotImplementedError

    def independent_calls(self, text: str, calls: list[dict]) -> list[tuple[str, Any]] | None:
        """(name, arguments) of each call in well-formed `text` as a second implementation,
        not the package's parser, reads them; None when there is none for this text."""
        return None


def _think(reasoning: str | None) -> str:
    return "" if reasoning is None else f"<think>{reasoning}</think>"


THINK_TAGS = ("<think>", "</think>")


class Kimi(Format):
    name = "Kimi K2"
    forbidden = KIMI_MARKERS  # special tokens: a model cannot write them inside a value
    prose_forbidden = KIMI_MARKERS + THINK_TAGS
    ids_in_text = True

    def render(self, calls, content, reasoning):
        return _think(reasoning) + render_kimi_tool_calls(calls, content)

    def parser(self, opened=None):
        return KimiStreamParser(opened)

    def expected_id(self, index, name):
        return f"functions.{name}:{index}"

    def independent_calls(self, text, calls):
        """The guide's regex parser: right on well-formed text, unless a name holds `.` or `-`
        (its documented defects: the name cut at a dot, an id with `-` skipped)."""
        if any(not re.fullmatch(r"\w+", call["function"]["name"]) for call in calls):
            return None
        found = guide_extract_tool_call_info(text)
        return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in found]


# Hermes' block: JSON between the tags; a value cannot hold `</tool_call>` (Hermes.forbidden).
_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


class Hermes(Format):
    name = "Hermes"
    forbidden = ("<tool_call>", "</tool_call>")  # the block ends at the first </tool_call>
    prose_forbidden = forbidden + THINK_TAGS

    def render(self, calls, content, reasoning):
        prefix = _think(reasoning) + "\n\n" if reasoning is not None else ""
        return prefix + render_hermes_tool_calls(calls, content)

    def parser(self, opened=None):
        return HermesStreamParser(opened)

    def expected_id(self, index, name):
        return f"call_{index}"

    def independent_calls(self, text, calls):
        """Each `<tool_call>` body read by `json`, as the format defines it."""
        bodies = [json.loads(body) for body in _HERMES_BLOCK.findall(text)]
        return [(body["name"], body["arguments"]) for body in bodies]


def _schema_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


class QwenXml(Format):
    name = "Qwen XML"
    # Inside a value a tag is text unless it is structural; these make it structural or open a
    # literal call (see QwenXmlStreamParser): the documented ambiguity.
    forbidden = ("<tool_call>", "</tool_call>", "</function>", "<function=", "<parameter=")
    prose_forbidden = forbidden + ("</parameter>",) + THINK_TAGS
    identifier_keys = True

    def __init__(self) -> None:
        self.tools: list[dict] = []

    def render(self, calls, content, reasoning):
        # The schema types every value, so that the parse can give back the JSON types.
        self.tools = []
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            properties = {key: {"type": _schema_type(v)} for key, v in arguments.items()}
            self.tools.append(
                {
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "parameters": {"type": "object", "properties": properties},
                    },
                }
            )
        prefix = _think(reasoning) + "\n\n" if reasoning is not None else ""
        return prefix + render_qwen_xml_tool_calls(calls, content)

    def parser(self, opened=None):
        return QwenXmlStreamParser(self.tools or None, opened)

    def expected_id(self, index, name):
        return f"call_{index}"


class Xtml(Format):
    name = "Kimi K3 XTML"
    # The four tokens are special tokens: a model cannot write them inside a value or a key
    # (a value holding `<|close|>argument<|sep|>` is the documented ambiguity).
    forbidden = XTML_TOKENS
    prose_forbidden = XTML_TOKENS + THINK_TAGS

    def render(self, calls, content, reasoning):
        message: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": calls}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return render_kimi_xtml(
            [message],
            add_generation_prompt=False,
            thinking=reasoning is not None,
            thinking_effort=None,
        )

    def parser(self, opened=None):
        return KimiXtmlStreamParser("think" if opened else None)

    def prompt_opened(self, text):
        return text.removeprefix('<|open|>message role="assistant"<|sep|><|open|>think<|sep|>')

    def expected_id(self, index, name):
        return f"functions.{name}:{index}"


FORMATS: list[Format] = [Kimi(), Hermes(), QwenXml(), Xtml()]


def random_turn(
    rng: random.Random, fmt: Format, huge: int = 0
) -> tuple[list[dict], str, str | None]:
    """Random calls (0..5; with `huge`, one argument of `huge` characters), content, reasoning."""
    calls = []
    for index in range(rng.choice([0, 1, 1, 2, 3, 5])):
        name = random_name(rng)
        arguments: dict[str, Any] = {}
        for position in range(rng.randint(0, 4)):
            if fmt.identifier_keys:
                key = f"k{position}_" + random_name(rng).replace(".", "").replace("-", "")
            else:
                key = random_string(rng, fmt.forbidden, 3)
            arguments[key] = random_value(rng, fmt.forbidden)
        if huge and index == 0:
            arguments["big"] = (random_string(rng, fmt.forbidden, 40) + "x") * (huge // 40)
        calls.append(
            {
                "id": fmt.expected_id(index, name),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        )
    content = rng.choice(["", random_string(rng, fmt.prose_forbidden, 12)])
    reasoning = rng.choice([None, random_string(rng, fmt.prose_forbidden, 12)])
    return calls, content, reasoning


def chunkings(rng: random.Random, text: str, one_char: bool) -> list[tuple[str, list[str]]]:
    """The ways a text is cut into deltas: whole, random small and large pieces, 1 character."""
    ways = [("one delta", [text])]
    for label, top in (("random 1..7", 7), ("random 1..400", 400)):
        cuts, pos = [], 0
        while pos < len(text):
            step = rng.randint(1, top)
            cuts.append(text[pos : pos + step])
            pos += step
        ways.append((label, cuts))
    if one_char and len(text) <= 20_000:
        ways.append(("1 char", list(text)))
    return ways


def drive(parser: Any, chunks: list[str]) -> tuple[Any, ToolCallAccumulator]:
    """Feed the chunks, close, and add every delta up (what a client of the parser sees)."""
    accumulator = ToolCallAccumulator()
    for chunk in chunks:
        for delta in parser.feed(chunk):
            accumulator.add_delta(delta)
    for delta in parser.close():
        accumulator.add_delta(delta)
    return parser.result, accumulator


def stream_vs_batch(
    fmt: Format,
    text: str,
    chunks: list[str],
    label: str,
    report: Report,
    opened: bool | None = None,
) -> Any:
    """Parse `text` whole and as `chunks`; report a difference as a loss; return the batch."""
    batch = fmt.parser(opened).parse_whole(text)
    result, accumulator = drive(fmt.parser(opened), chunks)
    where = f"{fmt.name}, {label}"
    if accumulator.content != batch.content:
        report.loss(f"{where}: streamed content differs from the batch parse")
    if accumulator.reasoning != batch.reasoning:
        report.loss(f"{where}: streamed reasoning differs from the batch parse")
    if accumulator.tool_calls != batch.tool_calls:
        report.loss(f"{where}: streamed tool calls differ from the batch parse")
    if result != batch:
        report.loss(f"{where}: .result after the stream differs from the batch parse")
    return batch


def same_call(parsed: dict, original: dict, fmt: Format, index: int) -> str | None:
    """What differs between a parsed call and the call that was rendered, or None."""
    name = original["function"]["name"]
    if parsed["function"]["name"] != name:
        return f"name {short(parsed['function']['name'], 40)} instead of {short(name, 40)}"
    if parsed["id"] != fmt.expected_id(index, name):
        return f"id {short(parsed['id'], 40)}"
    try:
        got = json.loads(parsed["function"]["arguments"])
    except ValueError:
        return "arguments that are not JSON: " + short(parsed["function"]["arguments"], 60)
    if got != json.loads(original["function"]["arguments"]):
        return "arguments " + short(parsed["function"]["arguments"], 80)
    return None


def check_round_trip(
    fmt: Format, rng: random.Random, huge: int, one_char: bool, report: Report
) -> int:
    """Render one random turn, parse it in every chunking; return the number of parses."""
    calls, content, reasoning = random_turn(rng, fmt, huge)
    text = fmt.render(calls, content, reasoning)
    opened = None
    if reasoning is not None and rng.random() < 0.5:  # Qwen3.5 / K3: the prompt opened it
        text, opened = fmt.prompt_opened(text), rng.choice([True, None])
    runs = 0
    batch = None
    for label, chunks in chunkings(rng, text, one_char):
        runs += 1
        with time_limit(60):
            batch = stream_vs_batch(fmt, text, chunks, f"{label}, opened={opened}", report, opened)
    assert batch is not None
    where = f"{fmt.name} round trip"
    if batch.errors:
        report.loss(f"{where}: errors on the renderer's own output: {short(batch.errors[0])}")
    if batch.content != content.strip():
        report.loss(f"{where}: content {short(batch.content, 60)} instead of {short(content, 60)}")
    if batch.reasoning != (reasoning or "").strip():
        report.loss(f"{where}: reasoning {short(batch.reasoning, 60)} not {short(reasoning, 60)}")
    if len(batch.tool_calls) != len(calls):
        report.loss(f"{where}: {len(batch.tool_calls)} calls back of {len(calls)}")
    for index, (parsed, original) in enumerate(zip(batch.tool_calls, calls, strict=False)):
        problem = same_call(parsed, original, fmt, index)
        if problem:
            report.loss(f"{where}: call {index}: {problem}")
    independent = fmt.independent_calls(text, calls)
    if independent is not None:
        ours = [(c["function"]["name"], _json_or_text(c)) for c in batch.tool_calls]
        if ours != independent:
            report.loss(f"{where}: the calls differ from an independent parse: {short(ours)}")
    return runs


def _json_or_text(call: dict) -> Any:
    """A parsed call's arguments as JSON, or as the raw text when they are not JSON."""
    try:
        return json.loads(call["function"]["arguments"])
    except ValueError:
        return call["function"]["arguments"]


def probe_round_trip(fmt: Format) -> Callable[[bool], Outcome]:
    def run(quick: bool) -> Outcome:
        rng = random.Random(f"{SEED}-round-{fmt.name}")
        report = Report()
        turns = 60 if quick else 300
        for turn in range(turns):
            huge = rng.choice([0, 0, 0, 5_000 if quick else 100_000])
            try:
                report.outcome.runs += check_round_trip(fmt, rng, huge, turn % 4 == 0, report)
            except Hang as exc:
                report.crash(f"{fmt.name} round trip: hang ({exc})")
            except Exception as exc:
                report.crash(f"{fmt.name} round trip raised {exception_line(exc)}")
        return report.done()

    return run


# --- damaged text ---------------------------------------------------------------------------

SENTINEL = "Zq{}Zq"


def damage_samples(fmt: Format, rng: random.Random) -> list[tuple[list[dict], str, str]]:
    """A few small turns (with content, reasoning and 2-3 calls) to render and damage."""
    samples = []
    while len(samples) < 3:
        calls, content, reasoning = random_turn(rng, fmt)
        if len(calls) < 2:
            continue
        content = content or "Let me check."
        reasoning = reasoning if reasoning is not None else "I should call tools."
        samples.append((calls, content, reasoning))
    return samples


def found_anywhere(word: str, result: Any) -> bool:
    """Whether `word` came back in content, reasoning, a call or an error message."""
    fields = [result.content, result.reasoning, *result.errors]
    for call in result.tool_calls:
        fields += [call["id"], call["function"]["name"], call["function"]["arguments"]]
    return any(word in text for text in fields)


def check_damaged(fmt: Format, text: str, rng: random.Random, label: str, report: Report) -> Any:
    """Parse a damaged text whole and in random chunks: no exception, stream equals batch."""
    chunks = chunkings(rng, text, one_char=False)[rng.randint(0, 2)][1]
    with time_limit(30):
        return stream_vs_batch(fmt, text, chunks, label, report)


def probe_damage(fmt: Format) -> Callable[[bool], Outcome]:
    def run(quick: bool) -> Outcome:
        rng = random.Random(f"{SEED}-damage-{fmt.name}")
        report = Report()
        markers = [p for p in PIECES if p.startswith("<")]
        for calls, content, reasoning in damage_samples(fmt, rng):
            text = fmt.render(calls, content, reasoning)  # (Qwen XML: the tools of this sample)
            cases: list[tuple[str, str, list[str]]] = []
            step = 3 if quick else 1
            # Cut at every position: the calls before the cut must come back intact.
            for cut in range(0, len(text), step):
                cases.append(("cut", text[:cut], []))
            # Sentinel words, markers and random characters inserted anywhere.
            for case in range(60 if quick else 600):
                damaged, words = text, []
                for n in range(rng.randint(1, 4)):
                    pos = rng.randint(0, len(damaged))
                    kind = rng.random()
                    if kind < 0.5:
                        piece = SENTINEL.format(f"{case}x{n}")
                        words.append(piece)
                    elif kind < 0.8:
                        piece = rng.choice(markers)
                    else:
                        piece = "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(3))
                    damaged = damaged[:pos] + piece + damaged[pos:]
                cases.append(("insert", damaged, words))
            found = [
                (start, start + len(marker))
                for marker in set(markers) | set(fmt.forbidden)
                for start in range(len(text))
                if text.startswith(marker, start)
            ]
            # A sentinel word right before and right after every marker (between calls, inside
            # a section, at a call's edges: where a parser is most tempted to drop text).
            for start, end in found:
                for pos in (start, end):
                    word = SENTINEL.format(f"m{pos}")
                    cases.append(("insert at a marker", text[:pos] + word + text[pos:], [word]))
            # Tags removed (unbalanced): every marker occurrence, one at a time.
            cases += [("unbalanced", text[:start] + text[end:], []) for start, end in found]
            for kind, damaged, words in cases:
                report.outcome.runs += 1
                try:
                    result = check_damaged(fmt, damaged, rng, f"damage ({kind})", report)
                except Hang as exc:
                    report.crash(f"{fmt.name}, damage ({kind}): hang ({exc}) on {short(damaged)}")
                    continue
                except Exception as exc:
                    report.crash(
                        f"{fmt.name}, damage ({kind}) raised {exception_line(exc)} "
                        f"on {short(damaged, 300)}"
                    )
                    continue
                for word in words:  # (a later insertion may have cut a word: not counted)
                    # Text that is not a call comes back as content or a reported error (the
                    # parsers' contract): a word may vanish only with an error said.
                    if word in damaged and not found_anywhere(word, result) and not result.errors:
                        report.loss(
                            f"{fmt.name}: inserted {word!r} came back nowhere: "
                            f"{short(damaged, 400)}"
                        )
                if kind == "cut":
                    report_cut_calls(fmt, calls, result, damaged, report)
        return report.done()

    return run


def report_cut_calls(
    fmt: Format, calls: list[dict], result: Any, text: str, report: Report
) -> None:
    """A text cut short: the calls before the last one returned must be the rendered ones."""
    complete = result.tool_calls if isinstance(fmt, Xtml) else result.tool_calls[:-1]
    for index, parsed in enumerate(complete):
        problem = same_call(parsed, calls[index], fmt, index) if index < len(calls) else "extra"
        if problem:
            report.loss(
                f"{fmt.name}, cut: call {index} before the cut came back changed ({problem}) "
                f"from {short(text[-80:])}"
            )


# --- the <think> splitter on its own ----------------------------------------------------------


def probe_think_splitter(quick: bool) -> Outcome:
    """Random text of think tags, tool markers and words, through `ReasoningSplitter`: any split
    gives the same reasoning and visible text as one delta, and no text is lost (what comes out
    is the input minus the tags the splitter documents as consumed)."""
    rng = random.Random(f"{SEED}-think")
    report = Report()
    words = ["a", " ", "\n", "word", "<think>", "</think>", "<tool_call>", "<function=", "<", "/"]
    setups = [
        (("<tool_call>",), None),
        (("<tool_call>",), "<function="),
        (("<|tool_calls_section_begin|>", "<|tool_call_begin|>"), None),
    ]
    for case in range(300 if quick else 3000):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        ends, follower = rng.choice(setups)
        opened = rng.choice([None, True, False])
        outputs = []
        for label, chunks in chunkings(rng, text, one_char=True):
            report.outcome.runs += 1
            splitter = ReasoningSplitter(ends, opened, follower)
            try:
                with time_limit(10):
                    pieces = [p for c in chunks for p in splitter.feed(c)] + splitter.close()
            except Exception as exc:
                report.crash(f"think splitter raised {exception_line(exc)} on {short(text)}")
                break
            reasoning = "".join(t for is_r, t in pieces if is_r)
            visible = "".join(t for is_r, t in pieces if not is_r)
            outputs.append((label, reasoning, visible, splitter.errors))
            # Only the think tags (and whitespace before the block) may disappear.
            if visible_chars(reasoning + visible) != visible_chars(text):
                report.loss(f"think splitter lost text (case {case}, {label}): {short(text)}")
        if any(o[1:] != outputs[0][1:] for o in outputs[1:]):
            report.loss(f"think splitter: a split changed the result (case {case}): {short(text)}")
    return report.done()


def visible_chars(text: str) -> str:
    """The text without think tags and whitespace."""
    return "".join(text.replace("<think>", "").replace("</think>", "").split())


# --- pathological sizes -----------------------------------------------------------------------


def probe_sizes(quick: bool) -> Outcome:
    """Many calls / one huge argument / near-markers in ONE delta, at n and 10n characters."""
    report = Report()
    n = 100_000 if quick else 1_000_000
    cases = [(label, make) for label, make, _ in linear.CASES[1:]]  # content between markers
    cases += [(label, make) for label, make in linear.PATHOLOGICAL]
    cases.append(
        (
            "Kimi K3 XTML: many calls, one delta",
            lambda size: linear.once(KimiXtmlStreamParser, xtml_many_calls(size)),
        )
    )
    cases.append(("Kimi K2 with <think>: long reasoning, one delta", kimi_long_reasoning))
    cases.append(("ToolCallAccumulator: arguments in 4-char deltas", linear.accumulate))
    notes = []
    for label, make in cases:
        report.outcome.runs += 2
        try:
            with time_limit(120):
                small = measure(make(n), 2)
                large = measure(make(10 * n), 1)
        except Hang as exc:
            report.crash(f"{label}: hang ({exc})")
            continue
        except Exception as exc:
            report.crash(f"{label} raised {exception_line(exc)}")
            continue
        ratio = large / max(small, 1e-4)
        times = f"{small * 1e3:.1f} ms, 10x {large * 1e3:.1f} ms"
        notes.append(f"{label}: {n:,} chars {times}, {ratio:.1f}x")
        if ratio > 30 and not quick:  # a verdict on a time only in the benchmark, never in a test
            report.crash(f"{label}: {ratio:.0f}x the time for 10x the input (not linear)")
    report.outcome.notes = notes
    return report.done()


def measure(work: Callable[[], object], runs: int) -> float:
    """CPU seconds of one `work()`, best of `runs` (garbage collection off, as in
    `bench/linear.py`); a fast one is repeated to last ~20 ms, so that a ratio is not the
    clock's resolution divided by itself."""
    gc.collect()
    gc.disable()
    try:
        start = linear.clock()
        work()
        best = linear.clock() - start
        repeat = max(1, int(0.02 / max(best, 1e-6)))
        for _ in range(runs - 1 if repeat == 1 else runs):
            start = linear.clock()
            for _ in range(repeat):
                work()
            best = min(best, (linear.clock() - start) / repeat)
        return best
    finally:
        gc.enable()


def xtml_many_calls(size: int) -> str:
    one = {"id": "x", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    first = render_kimi_xtml(
        [{"role": "assistant", "content": "", "tool_calls": [one]}],
        add_generation_prompt=False,
        thinking=False,
    )
    count = max(1, size // len(first))
    return render_kimi_xtml(
        [{"role": "assistant", "content": "", "tool_calls": [one] * count}],
        add_generation_prompt=False,
        thinking=False,
    )


def kimi_long_reasoning(size: int) -> Callable[[], object]:
    text = (
        "<think>"
        + linear.repeat_to(size, "hmm <thin ")
        + "</think>"
        + linear.many_calls(render_kimi_tool_calls, 2_000)
    )
    return linear.once(KimiStreamParser, text)


# --- the accumulator --------------------------------------------------------------------------


def message_chunks(rng: random.Random, message: dict, style: str) -> list[dict]:
    """The chunk dicts a server of the given style sends for `message`."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    deltas: list[dict] = [{"role": "assistant"}]

    def pieces(text: str) -> list[str]:
        out, pos = [], 0
        while pos < len(text):
            step = rng.randint(1, 9)
            out.append(text[pos : pos + step])
            pos += step
        return out

    for piece in pieces(message.get("reasoning_content") or ""):
        deltas.append({"reasoning_content": piece})
    for piece in pieces(message.get("content") or ""):
        deltas.append({"content": piece})
    calls = message.get("tool_calls") or []
    fragments: list[list[dict]] = []
    for index, call in enumerate(calls):
        function = call["function"]
        head: dict[str, Any] = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        if style == "no index":
            del head["index"]
        if style == "object arguments":
            head["function"]["arguments"] = json.loads(function["arguments"])
            fragments.append([head])
            continue
        frags = [head]
        for piece in pieces(function["arguments"]):
            frag: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if style == "repeated id and name":
                frag["id"] = call["id"]
                frag["type"] = "function"
                frag["function"]["name"] = function["name"]
            if style == "no index":
                del frag["index"]
            frags.append(frag)
        fragments.append(frags)
    if style == "interleaved":
        while any(fragments):
            frags = rng.choice([f for f in fragments if f])
            deltas.append({"tool_calls": [frags.pop(0)]})
    else:
        deltas += [{"tool_calls": [frag]} for frags in fragments for frag in frags]
    usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    chunks = [base | {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    last: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    if style == "usage in choice":
        last["usage"] = usage
        chunks.append(base | {"choices": [last]})
    else:
        chunks.append(base | {"choices": [last]})
        chunks.append(base | {"choices": [], "usage": usage})
    return chunks


BAD_VALUES: list[Any] = ["x", 3, 2.5, True, None, [], {}, ["x"], [{"a": 1}], {"x": [1]}, "\udcff"]
CHUNK_PATHS = [
    ("choices",),
    ("choices", 0),
    ("choices", 0, "delta"),
    ("choices", 0, "delta", "content"),
    ("choices", 0, "delta", "reasoning_content"),
    ("choices", 0, "delta", "tool_calls"),
    ("choices", 0, "delta", "tool_calls", 0),
    ("choices", 0, "delta", "tool_calls", 0, "index"),
    ("choices", 0, "delta", "tool_calls", 0, "id"),
    ("choices", 0, "delta", "tool_calls", 0, "function"),
    ("choices", 0, "delta", "tool_calls", 0, "function", "name"),
    ("choices", 0, "delta", "tool_calls", 0, "function", "arguments"),
    ("choices", 0, "finish_reason"),
    ("choices", 0, "index"),
    ("choices", 0, "usage"),
    ("usage",),
    ("error",),
]


def set_path(chunk: dict, path: tuple, value: Any) -> dict:
    """A copy of `chunk` with the value at `path` replaced (missing containers created)."""
    chunk = json.loads(json.dumps(chunk))
    holder: Any = chunk
    for step in path[:-1]:
        if isinstance(step, int):
            while len(holder) <= step:
                holder.append({})
            holder = holder[step]
        else:
            if not isinstance(holder.get(step), (dict, list)):
                holder[step] = [] if isinstance(path[path.index(step) + 1], int) else {}
            holder = holder[step]
    last = path[-1]
    if isinstance(last, int):
        while len(holder) <= last:
            holder.append({})
    holder[last] = value
    return chunk


def probe_accumulator(quick: bool) -> Outcome:
    """Chunked random completions add up to the message; broken chunks raise the documented
    errors only (as dicts and as the SDK's leniently built objects)."""
    from openai.types.chat import ChatCompletionChunk

    rng = random.Random(f"{SEED}-accumulator")
    report = Report()
    styles = ["plain", "repeated id and name", "no index", "object arguments", "interleaved"]
    styles.append("usage in choice")
    for case in range(100 if quick else 1000):
        calls, content, reasoning = random_turn(rng, Kimi())
        for i, call in enumerate(calls):
            call["id"] = f"call_{case}_{i}"
        message = {"role": "assistant", "content": content or None}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        style = styles[case % len(styles)]
        chunks = message_chunks(rng, message, style)
        for as_sdk in (False, True):
            report.outcome.runs += 1
            accumulator = ToolCallAccumulator()
            try:
                for chunk in chunks:
                    accumulator.add(ChatCompletionChunk.construct(**chunk) if as_sdk else chunk)
            except Exception as exc:
                report.crash(f"accumulator ({style}) raised {exception_line(exc)}")
                continue
            got = accumulator.assistant_message()
            if style == "object arguments":  # the object's JSON text, not the model's spelling
                for call in got.get("tool_calls", []):
                    call["function"]["arguments"] = json.dumps(
                        json.loads(call["function"]["arguments"]), ensure_ascii=False
                    )
            if got != message:
                report.loss(f"accumulator ({style}, sdk={as_sdk}): message differs: {short(got)}")
            if accumulator.usage != {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}:
                report.loss(f"accumulator ({style}): usage not read: {short(accumulator.usage)}")
    # Broken chunks: every field replaced by every wrong type.
    good = message_chunks(
        rng,
        {
            "role": "assistant",
            "content": "hi",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        "plain",
    )
    for path in CHUNK_PATHS:
        for value in BAD_VALUES:
            for as_sdk in (False, True):
                report.outcome.runs += 1
                bad = set_path(good[2], path, value)
                accumulator = ToolCallAccumulator()
                try:
                    accumulator.add(good[1])
                    accumulator.add(ChatCompletionChunk.construct(**bad) if as_sdk else bad)
                    accumulator.assistant_message()
                except (MalformedChunkError, StreamErrorEvent) as exc:
                    if len(str(exc)) < 40:
                        report.crash(f"accumulator: an error without a sentence: {exc}")
                except Exception as exc:
                    report.crash(
                        f"accumulator raised {exception_line(exc)} for {'.'.join(map(str, path))}"
                        f" = {short(value, 30)} (sdk={as_sdk})"
                    )
    return report.done()


# ---------------------------------------------------------------------------------------------
# tools/loop: a real OpenAI client over a scripted HTTP transport
# ---------------------------------------------------------------------------------------------

USER = {"role": "user", "content": "Do it."}


def sse_chunks(body: dict) -> list[str]:
    """A completion as the `data:` payloads of a stream (text and arguments in 5-character
    pieces, then a usage chunk), split as the unit tests split it."""
    return [json.dumps(chunk) for chunk in chunks_for(body, piece=5)]


class TrackedStream(httpx.SyncByteStream):
    """An SSE body that records whether it was closed and may break off with a network error."""

    def __init__(
        self,
        payloads: list[bytes],
        fail_after: int | None,
        server: Server,
        failure: BaseException | None = None,
    ) -> None:
        self.payloads = payloads
        self.fail_after = fail_after
        self.failure = failure or httpx.RemoteProtocolError("peer closed connection early")
        self.closed = False
        server.streams.append(self)

    def __iter__(self) -> Iterator[bytes]:
        for number, payload in enumerate(self.payloads):
            if self.fail_after is not None and number >= self.fail_after:
                raise self.failure
            yield payload

    def close(self) -> None:
        self.closed = True


class Server:
    """The scripted answers, and what the client sent (a conversation check at every request).

    A script entry: ("json", status, body) / ("sse", [data payloads], fail_after) with payloads
    already JSON text (so that invalid JSON can be sent) and "[DONE]" added unless ("sse-cut").
    """

    def __init__(self, script: list[tuple], report: Report, case: str) -> None:
        self.script = list(script)
        self.report = report
        self.case = case
        self.requests: list[dict] = []
        self.streams: list[TrackedStream] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        for problem in conversation_problems(body["messages"]):
            self.report.loss(f"{self.case}: request {len(self.requests)} {problem}")
        if not self.script:
            return httpx.Response(500, json={"error": {"message": "script ended"}})
        kind, *rest = self.script.pop(0)
        if kind == "json":
            status, payload = rest
            return httpx.Response(status, json=payload)
        payloads, fail_after, *failure = rest
        lines = [f"data: {p}\n\n".encode() for p in payloads]
        if kind == "sse":
            lines.append(b"data: [DONE]\n\n")
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=TrackedStream(lines, fail_after, self, *failure),
        )


def conversation_problems(messages: list[dict]) -> list[str]:
    """What a server would refuse in `messages`: calls without exactly one answer, answers to no
    call, messages that are not JSON objects."""
    problems = []
    position = 0
    while position < len(messages):
        message = messages[position]
        if not isinstance(message, dict):
            problems.append(f"message {position} is not an object")
            position += 1
            continue
        role = message.get("role")
        if role == "tool":
            problems.append(f"message {position}: a tool result answering no pending call")
        if role == "assistant" and message.get("tool_calls"):
            ids = [call.get("id") for call in message["tool_calls"]]
            answers = []
            position += 1
            while position < len(messages) and messages[position].get("role") == "tool":
                answers.append(messages[position].get("tool_call_id"))
                position += 1
            if sorted(map(str, answers)) != sorted(map(str, ids)):
                problems.append(
                    f"has calls {short(ids, 60)} answered by {short(answers, 60)} (issue 22)"
                )
            continue
        if role == "assistant" and not message.get("content") and not message.get("tool_calls"):
            problems.append(f"message {position}: an empty assistant message")
        position += 1
    return problems


def make_client(server: Server) -> openai.OpenAI:
    transport = httpx.MockTransport(server.handle)
    return openai.OpenAI(
        api_key="probe",
        base_url="http://probe.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=transport),
    )


def answer(script_kind: str, body: dict) -> tuple:
    """A scripted answer: the body as JSON, or as a stream."""
    if script_kind == "json":
        return ("json", 200, body)
    return ("sse", sse_chunks(body), None)


def run_case(
    report: Report,
    case: str,
    registry: ToolRegistry,
    script: list[tuple],
    stream: bool,
    expect: type[BaseException] | None = None,
    max_rounds: int = 4,
    check: Callable[[list[dict], Server], list[str]] | None = None,
) -> None:
    """Run the loop on a script; check the outcome, `messages`, the requests and the streams."""
    report.outcome.runs += 1
    server = Server(script, report, case)
    client = make_client(server)
    messages = [USER]
    before = json.loads(json.dumps(messages))
    raised: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with time_limit(30):
                run_tool_loop(
                    client, messages, registry, model="m", stream=stream, max_rounds=max_rounds
                )
        except Hang as exc:
            report.crash(f"{case}: hang ({exc})")
            return
        except BaseException as exc:  # noqa: BLE001 - what the loop lets through is the point
            raised = exc
    if expect is None and raised is not None:
        report.crash(f"{case}: the loop raised {exception_line(raised)}")
    elif expect is not None and raised is None:
        report.crash(f"{case}: the loop raised nothing, expected {expect.__name__}")
    elif expect is not None and not isinstance(raised, expect):
        report.crash(f"{case}: the loop raised {exception_line(raised)}, not {expect.__name__}")
    elif isinstance(raised, ToolLoopError) and len(str(raised).split()) < 8:
        report.crash(f"{case}: an error a student cannot act on: {str(raised)!r}")
    elif isinstance(raised, ToolLoopError) and (language() == "ru") != bool(
        CYRILLIC.search(str(raised))
    ):
        report.crash(f"{case}: an error not in the notebook's language: {short(str(raised))}")
    if messages[: len(before)] != before:
        report.loss(f"{case}: the messages that were there changed")
    for problem in conversation_problems(messages):
        report.loss(f"{case}: messages afterwards {problem}")
    if len({id(m) for m in messages}) != len(messages):
        report.loss(f"{case}: a message object appended twice")
    try:
        json.dumps(messages, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        report.loss(f"{case}: messages afterwards cannot be sent: {exception_line(exc)}")
    for tracked in server.streams:
        if not tracked.closed:
            report.crash(f"{case}: an SDK stream was left open")
    if check is not None:
        for problem in check(messages, server):
            report.loss(f"{case}: {problem}")
    for warning in caught:
        if "surrogate" not in str(warning.message):
            report.crash(f"{case}: unexpected warning {short(str(warning.message))}")


CYRILLIC = re.compile("[а-яА-ЯёЁ]")


def tool_contents(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m.get("role") == "tool"]


def each_mentions(*words: str) -> Callable[[list[dict], Server], list[str]]:
    """Every tool result must mention all `words` (the error a model and a student act on)."""

    def check(messages: list[dict], server: Server) -> list[str]:
        contents = tool_contents(messages)
        if not contents:
            return ["no tool result in messages"]
        return [
            f"tool result {short(c, 120)} does not mention {w!r}"
            for c in contents
            for w in words
            if w not in c
        ]

    return check


def registry_of(*functions: Callable[..., Any]) -> ToolRegistry:
    registry = ToolRegistry()
    for fn in functions:
        registry.register(
            fn,
            {
                "name": fn.__name__,
                "description": "probe tool",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        )
    return registry


def nothing_added(messages: list[dict], server: Server) -> list[str]:
    """An error case: `messages` must still be the one user message it started with."""
    return [] if messages == [USER] else ["something was added to messages"]


def one_round(calls: list[tuple[str, str, str]]) -> Callable[[str], list[tuple]]:
    """A script: the calls, then a final answer."""

    def script(kind: str) -> list[tuple]:
        return [
            answer(kind, completion_body(None, calls, "tool_calls")),
            answer(kind, completion_body("Done.", [], "stop")),
        ]

    return script


def probe_hostile_tools(quick: bool) -> Outcome:
    """Tools that raise, interrupt, return what JSON cannot hold, or take their time."""
    report = Report()
    size = 1_000_000 if quick else 10_000_000
    huge_text = "é" * size

    class BadStr(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    class Circular(list):
        pass

    loop_list: list = []
    loop_list.append(loop_list)

    returns: dict[str, Any] = {
        "a set": {1, 2},
        "a datetime": datetime.datetime(2026, 1, 1),
        "bytes": b"\xff",
        "an object": object(),
        "a list holding itself": loop_list,
        "a dict with tuple keys": {(1, 2): 3},
        "a Decimal": decimal.Decimal("1.5"),
        "a generator": (i for i in range(3)),
        "a deep list": nested(5000),
    }

    def called_once(
        kind: str, label: str, tool: Callable[..., Any], city: str = "x", **options: Any
    ) -> None:
        """`tool` alone in the registry, called once in one round, then a final answer."""
        calls = [("c1", tool.__name__, json.dumps({"city": city}))]
        script = one_round(calls)(kind)
        run_case(report, f"{label} ({kind})", registry_of(tool), script, kind == "sse", **options)

    for kind in ("json", "sse"):
        stream = kind == "sse"

        def boom(city: str) -> str:
            raise ValueError("disk full")

        called_once(
            kind, "tool raising ValueError", boom, "Paris", check=each_mentions("boom", "disk full")
        )

        def bad_message(city: str) -> str:
            raise BadStr()

        called_once(
            kind,
            "tool raising an exception whose str() fails",
            bad_message,
            check=each_mentions("bad_message", "BadStr"),
        )
        for interrupt in (KeyboardInterrupt, SystemExit, GeneratorExit):
            seen: list[str] = []

            def interrupted(city: str, interrupt: type = interrupt, seen: list = seen) -> str:
                seen.append(city)
                if city == "B":
                    raise interrupt()
                return "ok"

            batch = [
                ("c1", "interrupted", '{"city": "A"}'),
                ("c2", "interrupted", '{"city": "B"}'),
                ("c3", "interrupted", '{"city": "C"}'),
            ]
            run_case(
                report,
                f"tool raising {interrupt.__name__} mid-batch ({kind})",
                registry_of(interrupted),
                one_round(batch)(kind),
                stream,
                expect=interrupt,
                check=lambda m, s: [] if m == [USER] else ["the round was half added"],
            )
        for label, value in returns.items():

            def odd(city: str, value: Any = value) -> Any:
                return value

            called_once(kind, f"tool returning {label}", odd, check=each_mentions("odd"))
        for label, value in (
            ("a lone surrogate", "\udcff"),
            ("a surrogate in a dict", {"file": "report-\udcff.txt"}),
            ("a surrogate key", {"\ud800": 1}),
        ):

            def surrogate(city: str, value: Any = value) -> Any:
                return value

            called_once(kind, f"tool returning {label}", surrogate, check=sent_with_escape)

        def surrogate_error(city: str) -> str:
            raise OSError("cannot open report-\udcff.txt")

        called_once(
            kind,
            "tool raising with a surrogate in the message",
            surrogate_error,
            check=sent_with_escape,
        )

        def huge(city: str) -> str:
            return huge_text

        def huge_sent(messages: list[dict], server: Server) -> list[str]:
            sent = server.requests[1]["messages"][2]["content"] if len(server.requests) > 1 else ""
            return [] if sent == huge_text else ["the huge result was not sent whole"]

        called_once(kind, f"tool returning {size:,} characters", huge, check=huge_sent)

        def slow(city: str) -> str:
            time.sleep(0.2 if quick else 1.0)
            return "late but fine"

        run_case(
            report,
            f"slow tool ({kind})",
            registry_of(slow),
            one_round([("c1", "slow", '{"city": "x"}'), ("c2", "slow", '{"city": "y"}')])(kind),
            stream,
            check=each_mentions("late but fine"),
        )
    return report.done()


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def sent_with_escape(messages: list[dict], server: Server) -> list[str]:
    """The result was sent (the second request exists) with the surrogate written as an escape."""
    if len(server.requests) < 2:
        return ["the result was never sent"]
    content = server.requests[1]["messages"][2]["content"]
    if "udcff" not in content and "ud800" not in content:
        return [f"the surrogate is not in what was sent: {short(content)}"]
    return []


def probe_hostile_calls(quick: bool) -> Outcome:
    """Calls a model (or a broken server) gets wrong, and the round limit."""
    report = Report()

    def weather(city: str) -> str:
        return f"sunny in {city}"

    registry = registry_of(weather)
    depth = 5_000 if quick else 100_000
    cases: list[tuple[str, list[tuple[str, str, str]], tuple[str, ...]]] = [
        ("unknown tool", [("c1", "wether", '{"city": "x"}')], ("wether", "weather")),
        ("empty name", [("c1", "", '{"city": "x"}')], ("Unknown tool",)),
        ("bad JSON", [("c1", "weather", '{"city": "x"')], ("weather", "JSON")),
        ("JSON array", [("c1", "weather", '["x"]')], ("weather", "object")),
        ("JSON string", [("c1", "weather", '"x"')], ("weather", "object")),
        ("JSON number", [("c1", "weather", "3")], ("weather", "object")),
        ("JSON null", [("c1", "weather", "null")], ("weather",)),
        ("empty arguments", [("c1", "weather", "")], ("weather", "city")),
        ("missing parameter", [("c1", "weather", "{}")], ("weather", "city")),
        ("extra parameter", [("c1", "weather", '{"city": "x", "when": 1}')], ("weather", "when")),
        ("wrong type", [("c1", "weather", '{"city": 5}')], ("weather", "city")),
        ("deep JSON", [("c1", "weather", "[" * depth + "]" * depth)], ("weather",)),
        ("huge number", [("c1", "weather", '{"city": ' + "9" * 5000 + "}")], ("weather",)),
        (
            "duplicate ids",
            [("c1", "weather", '{"city": "a"}'), ("c1", "weather", '{"city": "b"}')],
            ("sunny",),
        ),
        ("empty id", [("", "weather", '{"city": "a"}')], ("sunny",)),
        (
            "many parallel calls",
            [(f"c{i}", "weather", json.dumps({"city": f"c{i}"})) for i in range(50)],
            ("sunny",),
        ),
        ("surrogate escape in arguments", [("c1", "weather", '{"city": "\\udcff"}')], ("sunny",)),
    ]
    for kind in ("json", "sse"):
        for label, calls, words in cases:
            run_case(
                report,
                f"{label} ({kind})",
                registry,
                one_round(calls)(kind),
                kind == "sse",
                check=each_mentions(*words),
            )
        always = [
            answer(kind, completion_body(None, [(f"r{n}", "weather", '{"city": "x"}')], "stop"))
            for n in range(3)
        ]
        run_case(
            report,
            f"max_rounds exhausted ({kind})",
            registry,
            always,
            kind == "sse",
            expect=ToolLoopError,
            max_rounds=3,
            check=lambda m, s: [] if len(m) == 7 else [f"{len(m)} messages, not 7"],
        )
    return report.done()


def chunk_json(delta: Any = None, finish: Any = None, **extra: Any) -> str:
    choice = {"index": 0, "delta": {} if delta is None else delta, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return json.dumps(body | {"choices": [choice]} | extra)


def probe_hostile_server(quick: bool) -> Outcome:
    """Streams and answers a server gets wrong: each must stop the loop with a ToolLoopError
    (nothing added, the stream closed), or be read correctly."""
    report = Report()

    def weather(city: str) -> str:
        return "sunny"

    registry = registry_of(weather)
    head = chunk_json({"role": "assistant"})
    call_head = chunk_json(
        {
            "tool_calls": [
                {"index": 0, "id": "c1", "type": "function", "function": {"name": "weather"}}
            ]
        }
    )
    call_args = chunk_json({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]})
    # One bad event after the first chunk (the stream then ends with [DONE]).
    bad_events = [
        ("invalid JSON in an event", "{not json"),
        ("an event that is a JSON list", "[1, 2]"),
        ("an event that is a JSON string", '"hello"'),
        ("choices is an object", json.dumps({"choices": {"0": {}}})),
        ("a choice that is a string", json.dumps({"choices": ["x"]})),
        ("delta is a string", chunk_json("oops")),
        ("tool_calls is an object", chunk_json({"tool_calls": {"a": 1}})),
        ("a fragment that is a string", chunk_json({"tool_calls": ["x"]})),
        ("function is a string", chunk_json({"tool_calls": [{"function": "f"}]})),
        ("content is a number", chunk_json({"content": 5})),
        ("an error event", json.dumps({"error": {"message": "parser failed"}})),
    ]
    # (label, payloads, "sse" or "sse-cut" (no [DONE]), events sent before the connection drops)
    broken_streams = [(label, [head, event], "sse", None) for label, event in bad_events]
    broken_streams += [
        (
            "cut mid-call (no finish_reason, no [DONE])",
            [head, call_head, call_args],
            "sse-cut",
            None,
        ),
        ("connection dropped mid-call", [head, call_head, call_args, call_args], "sse", 3),
        ("connection dropped before any event", [head], "sse", 0),
        ("an empty stream", [], "sse-cut", None),
        ("only [DONE]", [], "sse", None),
        (
            "finish_reason length mid-call",
            [head, call_head, call_args, chunk_json({}, "length")],
            "sse",
            None,
        ),
    ]
    for label, payloads, kind, fail_after in broken_streams:
        run_case(
            report,
            f"stream: {label}",
            registry,
            [(kind, payloads, fail_after)],
            True,
            expect=ToolLoopError,
            check=nothing_added,
        )
    # Ctrl+C while the answer streams in: it goes through, the stream is closed, nothing added.
    run_case(
        report,
        "stream: KeyboardInterrupt mid-call",
        registry,
        [("sse", [head, call_head, call_args, call_args], 3, KeyboardInterrupt())],
        True,
        expect=KeyboardInterrupt,
        check=nothing_added,
    )
    # A thinking model streams reasoning, then three calls whose fragments interleave: the next
    # request must carry the reasoning and every call whole, in index order.
    parts = [
        chunk_json({"role": "assistant", "reasoning_content": "Three "}),
        chunk_json({"reasoning_content": "cities."}),
    ]
    cities = ["Paris", "Oslo", "Lima"]
    for index in range(len(cities)):
        start = {"index": index, "id": f"c{index}", "type": "function"}
        parts.append(chunk_json({"tool_calls": [start | {"function": {"name": "weather"}}]}))
    for piece in range(3):
        for index, city in reversed(list(enumerate(cities))):
            text = json.dumps({"city": city})
            fragment = text[piece * len(text) // 3 : (piece + 1) * len(text) // 3]
            parts.append(
                chunk_json({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            )
    parts.append(chunk_json({}, "tool_calls"))
    final = [chunk_json({"role": "assistant", "content": "Sunny."}), chunk_json({}, "stop")]

    def sent_back(messages: list[dict], server: Server) -> list[str]:
        if len(server.requests) < 2:
            return ["no second request"]
        assistant = server.requests[1]["messages"][1]
        calls = [
            (c["id"], json.loads(c["function"]["arguments"])["city"])
            for c in assistant.get("tool_calls", [])
        ]
        problems = []
        if assistant.get("reasoning_content") != "Three cities.":
            problems.append(f"reasoning not sent back: {short(assistant)}")
        if calls != [(f"c{i}", city) for i, city in enumerate(cities)]:
            problems.append(f"calls sent back as {short(calls)}")
        return problems

    run_case(
        report,
        "stream: reasoning, then interleaved parallel calls",
        registry,
        [("sse", parts, None), ("sse", final, None)],
        True,
        check=sent_back,
    )
    # A usable but odd stream: usage inside choices[0] (Moonshot), then a final answer.
    final = [
        chunk_json({"role": "assistant", "content": "Fine."}),
        chunk_json(
            {}, "stop", usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        ),
    ]
    run_case(report, "stream: usage in the last chunk", registry, [("sse", final, None)], True)
    for status in (400, 401, 404, 429, 500, 503):
        for kind in ("json", "sse"):
            run_case(
                report,
                f"HTTP {status} ({kind})",
                registry,
                [("json", status, {"error": {"message": f"status {status}"}})],
                kind == "sse",
                expect=ToolLoopError,
                check=nothing_added,
            )
    bodies = [
        (
            "no choices",
            {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
        ),
        (
            "message null",
            completion_body(None, [], "stop")
            | {"choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
        ),
        ("empty message", completion_body(None, [], "stop")),
        ("a body that is a list", [1, 2]),
        ("length mid-call", completion_body(None, [("c1", "weather", '{"ci')], "length")),
    ]
    for label, body in bodies:
        run_case(
            report,
            f"answer: {label}",
            registry,
            [("json", 200, body)],
            False,
            expect=ToolLoopError,
            check=nothing_added,
        )
    return report.done()


def probe_hostile_server_russian(quick: bool) -> Outcome:
    """The hostile server cases in the Russian edition: every error must be in Russian."""
    set_language("ru")
    try:
        return probe_hostile_server(quick)
    finally:
        reset_language()


PROBES = [
    *(
        Probe("parsers", f"{fmt.name}: round trip, any split", probe_round_trip(fmt))
        for fmt in FORMATS
    ),
    *(Probe("parsers", f"{fmt.name}: damaged text", probe_damage(fmt)) for fmt in FORMATS),
    Probe("parsers", "<think> splitter: any split, nothing lost", probe_think_splitter),
    Probe("parsers", "pathological sizes, one delta (10x input)", probe_sizes),
    Probe("parsers", "accumulator: server chunk styles, broken chunks", probe_accumulator),
    Probe("tools/loop", "hostile tools", probe_hostile_tools),
    Probe("tools/loop", "hostile calls, max_rounds", probe_hostile_calls),
    Probe("tools/loop", "hostile server answers and streams", probe_hostile_server),
    Probe("tools/loop", "hostile server, Russian edition", probe_hostile_server_russian),
]
