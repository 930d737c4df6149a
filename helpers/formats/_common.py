"""Pieces every raw-format parser shares: the result type, messages, and the text plumbing.

This module imports nothing else from `helpers.formats`; `think.py` builds on it, and
`stream.py` (the `StreamParser` base) builds on both, so the imports form no cycle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

from helpers.arguments import json_kind, strict_json
from helpers.i18n import Text, shorten, tr

# How the parsers describe a call, block or section still open when the text ends. Parser
# diagnostics are shown to students, so they follow the notebook's language (`helpers.i18n`).
CUT_OFF = Text(
    "at the end of the text (output cut off, e.g. by max_tokens?)",
    "в конце текста (вывод оборвался, например по max_tokens?)",
)


def before(tag: str, next_one: bool = False) -> str:
    """Where a missing closing tag was noticed: "before TAG" or "before the next TAG"."""
    if next_one:
        return tr(f"before the next {tag}", f"перед следующим {tag}")
    return tr(f"before {tag}", f"перед {tag}")


def unopened(closer: str, opener: str) -> str:
    """The error for a closing tag that closes nothing (it is dropped)."""
    return tr(
        f"{closer} without an open {opener} ignored", f"{closer} без открытого {opener} пропущен"
    )


@dataclass
class ParseResult:
    """What a raw model output contains: visible text, tool calls, what looked wrong, and the
    reasoning of a thinking model (`<think>` blocks; see `helpers.formats.think`)."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reasoning: str = ""


def tool_call_dict(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """Build one OpenAI-shaped tool call (arguments stay the JSON text the model wrote)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def snippet(text: str, limit: int = 60) -> str:
    """What a model wrote, stripped and shortened for an error message (a megabyte of garbage
    stays readable)."""
    return shorten(text.strip(), limit)


def arguments_problem(arguments: str) -> str | None:
    """Say what is wrong with an arguments JSON text, or None when it is a JSON object."""
    if not arguments:
        return tr("arguments are empty", "аргументы пусты")
    try:
        value = strict_json(arguments)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return tr(
            f"arguments are not valid JSON ({exc})",
            f"аргументы — некорректный JSON (json: «{exc}»)",
        )
    if not isinstance(value, dict):
        kind = json_kind(value)
        return tr(
            f"arguments are valid JSON but {kind}, not an object",
            f"аргументы — корректный JSON, но это {kind}, а не объект",
        )
    return None


class MarkerSplitter:
    """Cut a stream of text deltas into text pieces and markers, holding back partial markers.

    `feed` returns a list of `(is_marker, text)` pairs. The concatenation of all pieces is the
    input; markers come out exactly where a regex search over the whole text would find them.
    A tail that could still become a marker (`<|tool_ca` at the end of a delta) is kept in
    `pending` until the next delta decides it. `pending` is never longer than the longest marker
    minus one, so every input character is scanned a bounded number of times.
    """

    def __init__(self, markers: Sequence[str]) -> None:
        """Prepare the search for the given marker strings (none may be a prefix of another)."""
        self._regex = re.compile("|".join(re.escape(m) for m in markers))
        self._max_hold = max(len(m) for m in markers) - 1
        starts = {re.escape(m[:end]) for m in markers for end in range(1, len(m))}
        self._unfinished = re.compile(f"(?:{'|'.join(sorted(starts))})\\Z")  # cut-off marker
        self.pending = ""

    def feed(self, delta: str) -> list[tuple[bool, str]]:
        """Split `pending + delta`; keep back a tail that may be the start of a marker."""
        text = self.pending + delta
        pieces: list[tuple[bool, str]] = []
        pos = 0
        for match in self._regex.finditer(text):
            if match.start() > pos:
                pieces.append((False, text[pos : match.start()]))
            pieces.append((True, match.group()))
            pos = match.end()
        # Only the last few characters can start an unfinished marker: hold the first that does.
        unfinished = self._unfinished.search(text, max(pos, len(text) - self._max_hold))
        hold = len(text) if unfinished is None else unfinished.start()
        if hold > pos:
            pieces.append((False, text[pos:hold]))
        self.pending = text[hold:]
        return pieces

    def close(self) -> list[tuple[bool, str]]:
        """End of stream: a held-back tail was not a marker after all, so it is plain text."""
        rest, self.pending = self.pending, ""
        return [(False, rest)] if rest else []


class StrippedStream:
    """Pass text through piece by piece so that the pieces add up to the whole text `.strip()`-ed.

    Leading whitespace is dropped until the first visible character. Trailing whitespace is held
    back: it is released only when more visible text follows, and dropped if the text ends.
    `sent` keeps every piece `push` returned, so `"".join(sent)` is the text emitted so far.
    """

    def __init__(self) -> None:
        self._started = False
        self._held: list[str] = []
        self.sent: list[str] = []

    def push(self, piece: str) -> str:
        """Take the next piece of text; return what can safely be emitted now (maybe "")."""
        if not self._started:
            piece = piece.lstrip()
            if not piece:
                return ""
            self._started = True
        body = piece.rstrip()
        if not body:  # whitespace only: it may be interior or trailing, we cannot know yet
            self._held.append(piece)
            return ""
        out = "".join(self._held) + body if self._held else body
        self._held = [piece[len(body) :]] if len(body) < len(piece) else []
        self.sent.append(out)
        return out


class DeltaList(list[dict[str, Any]]):
    """The deltas produced by one `feed`, with neighbouring fragments of one kind merged.

    Merged fragments are kept in a list and joined once, when the list is read (`list(out)`,
    `done()`) or a new delta starts: a `+=` on a dict value copies the whole text gathered so far
    every time (quadratic in its length).
    """

    def __init__(self) -> None:
        super().__init__()
        self._merging: tuple[dict[str, Any], str, list[str]] | None = None

    def _text(self, key: str, text: str) -> None:
        """Add `key` text, merging it into the previous delta of that key if there is one."""
        if not text:
            return
        if self and key in self[-1]:
            self._merge(self[-1], key, text)
        else:
            self.append({key: text})

    content = partialmethod(_text, "content")
    reasoning = partialmethod(_text, "reasoning_content")

    def call_header(self, index: int, call_id: str, name: str, arguments: str = "") -> None:
        """Add the first delta of a call: index, id, type, name and arguments (empty: to come)."""
        self.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ]
            }
        )

    def arguments(self, index: int, fragment: str) -> None:
        """Add an arguments fragment of call `index`, merging with the previous one if possible."""
        if not fragment:
            return
        if self and "tool_calls" in self[-1]:
            last = self[-1]["tool_calls"][0]
            if last["index"] == index and "id" not in last:
                self._merge(last["function"], "arguments", fragment)
                return
        self.append({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})

    def append(self, delta: dict[str, Any]) -> None:
        """Add a new delta (the previous one is complete: join what was merged into it)."""
        self._join()
        super().append(delta)

    def _merge(self, holder: dict[str, Any], key: str, text: str) -> None:
        """Note `text` as a continuation of `holder[key]`, to be joined by `done()`."""
        if self._merging is None or self._merging[0] is not holder:
            self._join()
            self._merging = (holder, key, [holder[key]])
        self._merging[2].append(text)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Iterate over complete deltas (so `list(out)` is as good as `out.done()`)."""
        self._join()
        return super().__iter__()

    def _join(self) -> None:
        """Join the merged fragments into their delta (cost: the fragments, not the list)."""
        if self._merging is not None:
            holder, key, parts = self._merging
            holder[key] = "".join(parts)
            self._merging = None

    def done(self) -> list[dict[str, Any]]:
        """Join the merged fragments into their delta; return the deltas as a plain list."""
        self._join()
        return list(super().__iter__())
