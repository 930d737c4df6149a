"""`StreamParser`: the plumbing every incremental raw-format parser shares.

The batch parsers (`parse_kimi`, `parse_hermes`, `parse_qwen_xml`, `parse_kimi_xtml`) are this
plumbing fed once with the whole text (`parse_whole`), so each format's rules exist in one place.
"""

from __future__ import annotations

from typing import Any

from helpers.formats._common import DeltaList, MarkerSplitter, ParseResult, StrippedStream
from helpers.formats.think import ReasoningSplitter
from helpers.i18n import tr


class StreamParser:
    """The plumbing of an incremental parser: feed text deltas, get OpenAI-style delta dicts back.

    A `MarkerSplitter` over `markers` cuts the stream into text and markers; a subclass decides
    what each piece means (`_on_text`, `_on_marker`) and what is still open at the end
    (`_on_end`). Content goes through a `StrippedStream`, so the content deltas add up to the
    batch parser's `content.strip()`. After `close()`, `.result` holds the whole `ParseResult`.

    Contract (the tests check it for every subclass): for any split of a text into deltas, the
    deltas of all `feed` calls and `close` add up (by `ToolCallAccumulator`) to the batch
    parser's result, and `.result` equals it, errors included.

    A subclass that sets `reasoning_ends` (its tool markers that end an unclosed `<think>`, each
    only when `reasoning_follower` comes next, if that is set) also splits reasoning off first,
    through `helpers.formats.think.ReasoningSplitter`: reasoning comes out as
    `{"reasoning_content": ...}` deltas and in `.result.reasoning`; `reasoning_open` is as
    described there.
    """

    markers: tuple[str, ...]
    reasoning_ends: tuple[str, ...] = ()
    reasoning_follower: str | None = None

    def __init__(self, reasoning_open: bool | None = None) -> None:
        self._think = (
            ReasoningSplitter(self.reasoning_ends, reasoning_open, self.reasoning_follower)
            if self.reasoning_ends
            else None
        )
        self._reasoning = StrippedStream()
        self._splitter = MarkerSplitter(self.markers)
        self._content = StrippedStream()
        self._tool_calls: list[dict[str, Any]] = []
        self._errors: list[str] = []
        self._stray: list[str] = []  # text between elements, judged at the next marker
        self._result: ParseResult | None = None

    def feed(self, text_delta: str) -> list[dict[str, Any]]:
        """Read the next piece of model output; return the deltas it completes (maybe none)."""
        if self._result is not None:
            raise RuntimeError("feed() after close()")
        out = DeltaList()
        think = self._think
        self._route([(False, text_delta)] if think is None else think.feed(text_delta), out)
        return list(out)

    def _route(self, pieces: list[tuple[bool, str]], out: DeltaList) -> None:
        """Send reasoning pieces to the reasoning stream; cut the rest into text and markers."""
        for is_reasoning, piece in pieces:
            if is_reasoning:
                self._emit_reasoning(piece, out)
                continue
            for is_marker, part in self._splitter.feed(piece):
                (self._on_marker if is_marker else self._on_text)(part, out)

    def close(self) -> list[dict[str, Any]]:
        """The output ended: flush what was held back, close what is open, build `.result`."""
        if self._result is not None:
            return []
        out = DeltaList()
        think_errors: list[str] = []
        if self._think is not None:
            self._route(self._think.close(), out)
            think_errors = self._think.errors
        for _, piece in self._splitter.close():  # a held-back tail that never became a marker
            self._on_text(piece, out)
        self._on_end(out)
        self._result = ParseResult(
            "".join(self._content.sent),
            self._tool_calls,
            think_errors + self._errors,
            "".join(self._reasoning.sent),
        )
        return list(out)

    @property
    def result(self) -> ParseResult:
        """The whole parse (content, tool calls, errors); available after `close()`."""
        if self._result is None:
            raise RuntimeError("the result is known only after close()")
        return self._result

    def parse_whole(self, text: str) -> ParseResult:
        """Feed `text` as one delta and close: the batch parse (the deltas are not needed)."""
        self.feed(text)
        self.close()
        return self.result

    def _emit_content(self, piece: str, out: DeltaList) -> None:
        """Pass visible text on as content (leading and trailing whitespace held back)."""
        out.content(self._content.push(piece))

    def _emit_reasoning(self, piece: str, out: DeltaList) -> None:
        """Pass reasoning text on (leading and trailing whitespace held back)."""
        out.reasoning(self._reasoning.push(piece))

    def _take_stray(self) -> str:
        """The text gathered in `_stray` (now forgotten) if it was more than whitespace, else ""."""
        text, self._stray = "".join(self._stray), []
        return text if text.strip() else ""

    def _error(self, english: str, russian: str, about: str = "") -> None:
        """Report a problem of the text, in the notebook's language (`about`: "call 0: ...")."""
        self._errors.append(f"{about}: {tr(english, russian)}" if about else tr(english, russian))

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Route one piece of plain text (subclass)."""
        raise NotImplementedError

    def _on_marker(self, marker: str, out: DeltaList) -> None:
        """Apply one marker (subclass)."""
        raise NotImplementedError

    def _on_end(self, out: DeltaList) -> None:
        """The text ended: finish and report whatever is still open (subclass)."""
        raise NotImplementedError
