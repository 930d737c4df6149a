"""Reasoning in raw model text: `<think>…</think>` split off before the tool-call format is read.

Thinking models (Kimi K2-Thinking / K2.5 / K2.6, Qwen3, Qwen3.5+) write their reasoning between
`<think>` and `</think>`, then the visible answer and tool calls. Three things make this more than
a pair of tags, and every raw-format parser here handles them the same way:

- **The prompt may open the block.** Some chat templates end the generation prompt with `<think>`,
  so the output starts inside the reasoning and shows only `</think>`. `reasoning_open=True` says
  so; `False` says the output starts outside; `None` (the default) decides from the text: when the
  first tag or tool marker in it is `</think>`, the prompt opened the block.
- **The block may end without `</think>`.** A model can start its tool calls right away; the
  format's tool marker (`<|tool_calls_section_begin|>` for Kimi, `<tool_call>` for Qwen) then ends
  the reasoning, as vLLM's and SGLang's reasoning parsers do. The calls are read as usual.
- **Nothing is lost silently.** A stray tag is dropped and reported; reasoning still open when the
  text ends (cut off by `max_tokens`?) is kept and reported.

Reasoning is the text of all blocks, a newline between blocks, `.strip()`-ed. The batch function
`split_reasoning` and the incremental `ReasoningSplitter` are written separately and must agree
for every split of the text (the tests check it).

Streaming cost stays linear, with one price for `reasoning_open=None`: until the first tag or tool
marker shows where the text starts, it is held back (it might still turn out to be reasoning).
A caller that knows its prompt passes `True` or `False` and gets every piece at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from helpers.formats._common import CUT_OFF, MarkerSplitter, ParseResult
from helpers.i18n import tr

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
BLOCK_SEPARATOR = "\n"


def _stray_open() -> str:
    return tr(
        f"{THINK_OPEN} inside reasoning that is already open ignored",
        f"{THINK_OPEN} внутри уже открытого рассуждения пропущен",
    )


def _stray_close() -> str:
    return tr(
        f"{THINK_CLOSE} outside reasoning ignored",
        f"{THINK_CLOSE} вне рассуждения пропущен",
    )


def _unclosed() -> str:
    return tr(
        f"reasoning has no {THINK_CLOSE} {CUT_OFF.en}",
        f"у рассуждения нет {THINK_CLOSE}: текст оборвался (например, по max_tokens?)",
    )


@dataclass
class ReasoningSplit:
    """A raw text cut in two: the reasoning, and the visible rest (tool markers included)."""

    reasoning: str = ""
    visible: str = ""
    errors: list[str] = field(default_factory=list)


def split_reasoning(
    text: str, ends: Sequence[str], reasoning_open: bool | None = None
) -> ReasoningSplit:
    """Split `<think>` blocks off `text`; `ends` are the markers that close an unclosed block."""
    tags = (THINK_OPEN, THINK_CLOSE, *ends)
    pieces = [p for p in re.split("(" + "|".join(map(re.escape, tags)) + ")", text) if p]
    if reasoning_open is None:
        first_tag = next((p for p in pieces if p in tags), None)
        reasoning_open = first_tag == THINK_CLOSE
    inside = reasoning_open
    reasoning: list[str] = []
    visible: list[str] = []
    errors: list[str] = []
    for piece in pieces:
        if piece == THINK_OPEN:
            if inside:
                errors.append(_stray_open())
                continue
            inside = True
            if any(reasoning):
                reasoning.append(BLOCK_SEPARATOR)
        elif piece == THINK_CLOSE:
            if inside:
                inside = False
            else:
                errors.append(_stray_close())
        elif piece in ends:
            inside = False  # the tool calls begin: reasoning is over, whether closed or not
            visible.append(piece)
        else:
            (reasoning if inside else visible).append(piece)
    if inside:
        errors.append(_unclosed())
    return ReasoningSplit("".join(reasoning).strip(), "".join(visible), errors)


class ReasoningSplitter:
    """Incremental `split_reasoning`: feed text deltas, get `(is_reasoning, text)` pieces back.

    Visible pieces, tool markers included, go on to the format's own parser; reasoning pieces are
    raw (the caller strips the whole, as `split_reasoning` does). `errors` is complete after
    `close()`.
    """

    def __init__(self, ends: Sequence[str], reasoning_open: bool | None = None) -> None:
        """Prepare for a format whose tool markers `ends` close an unclosed block."""
        self._ends = tuple(ends)
        self._splitter = MarkerSplitter((THINK_OPEN, THINK_CLOSE, *self._ends))
        self._inside = reasoning_open
        self._undecided: list[str] = []  # text read before `reasoning_open=None` was decided
        self._any_reasoning = False
        self.errors: list[str] = []

    def feed(self, delta: str) -> list[tuple[bool, str]]:
        """Read the next delta; return the pieces it settles (maybe none)."""
        out: list[tuple[bool, str]] = []
        for is_tag, piece in self._splitter.feed(delta):
            self._take(is_tag, piece, out)
        return out

    def close(self) -> list[tuple[bool, str]]:
        """The text ended: release what was held back and report an unclosed block."""
        out: list[tuple[bool, str]] = []
        for is_tag, piece in self._splitter.close():
            self._take(is_tag, piece, out)
        if self._inside is None:
            self._decide(False, out)
        if self._inside:
            self.errors.append(_unclosed())
            self._inside = False
        return out

    def _decide(self, inside: bool, out: list[tuple[bool, str]]) -> None:
        """Fix where the text started and release what waited for that answer."""
        self._inside = inside
        held, self._undecided = "".join(self._undecided), []
        if held:
            self._text(held, out)

    def _text(self, piece: str, out: list[tuple[bool, str]]) -> None:
        """Pass plain text on as reasoning or as visible text."""
        if self._inside:
            self._any_reasoning = True
        out.append((bool(self._inside), piece))

    def _take(self, is_tag: bool, piece: str, out: list[tuple[bool, str]]) -> None:
        """Apply one piece from the splitter: the same decisions as `split_reasoning`."""
        if self._inside is None:
            if not is_tag:
                self._undecided.append(piece)
                return
            self._decide(piece == THINK_CLOSE, out)
        if not is_tag:
            self._text(piece, out)
        elif piece == THINK_OPEN:
            if self._inside:
                self.errors.append(_stray_open())
            else:
                self._inside = True
                if self._any_reasoning:
                    out.append((True, BLOCK_SEPARATOR))
        elif piece == THINK_CLOSE:
            if self._inside:
                self._inside = False
            else:
                self.errors.append(_stray_close())
        else:  # a tool marker of the format: reasoning is over, the marker is visible text
            self._inside = False
            out.append((False, piece))


def parse_with_reasoning(
    text: str,
    ends: Sequence[str],
    reasoning_open: bool | None,
    parse_visible: Callable[[str], ParseResult],
) -> ParseResult:
    """Batch parsers' side of the contract: split the reasoning off, parse the rest.

    Errors about the `<think>` tags come first, then the format's own, as in `StreamParser`."""
    split = split_reasoning(text, ends, reasoning_open)
    result = parse_visible(split.visible)
    return ParseResult(
        result.content, result.tool_calls, split.errors + result.errors, split.reasoning
    )
