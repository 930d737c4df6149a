"""Reasoning in raw model text: a `<think>…</think>` prefix, split off before the calls are read.

Thinking models (Kimi K2-Thinking / K2.5 / K2.6, Qwen3, Qwen3.5+) write their reasoning first,
between `<think>` and `</think>`, then the visible answer and tool calls. The split follows vLLM's
reasoning parsers (`qwen3`: vllm-project/vllm vllm/reasoning/qwen3_reasoning_parser.py @00a4c6a1,
its tests @049d8df2; `kimi_k2`):

- **Reasoning is a prefix.** Only a `<think>` at the very start (after whitespace) opens a block,
  and the first `</think>` ends it. Everything after that is visible text, tags included: a later
  `<think>` inside an answer or a tool argument is kept as written, never cut out.
- **The prompt may open the block.** Qwen3.5 and the thinking-only models end the generation
  prompt with `<think>`, so the output starts inside the reasoning and shows only `</think>`.
  `reasoning_open=True` says so (vLLM's default: thinking on); `False` says the prompt did not
  open it (vLLM's `enable_thinking=False`); `None` decides from the text: reasoning when the
  text starts with `<think>` or a `</think>` comes before any tool call.
- **A tool call ends reasoning left open.** The format's tool marker (`<|tool_calls_section_begin|>`
  for Kimi, `<tool_call>` for Qwen) ends an unclosed block, as vLLM's and SGLang's reasoning
  parsers do. A format may require a follower: for Qwen XML, `<tool_call>` ends reasoning only when
  `<function=` comes next (whitespace between allowed), so reasoning that merely mentions
  `<tool_call>` stays reasoning. For Hermes any `<tool_call>` ends it, as SGLang's `Qwen3Detector`
  does (vLLM's `qwen3` parser asks for `<function` there too, which a Hermes call never has).
- **Nothing is lost silently.** A `<think>` inside open reasoning is dropped and reported;
  reasoning still open when the text ends (cut off by `max_tokens`?) is kept and reported.

Streaming cost stays linear. With `reasoning_open=None` the text is held back until the first
`</think>` or tool call shows what it was (the price of not knowing the prompt); a caller that
knows its prompt passes `True` or `False` and gets every piece at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from helpers.formats._common import CUT_OFF, MarkerSplitter
from helpers.i18n import tr

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_START, _INSIDE, _AFTER = "start", "inside", "after"


class ReasoningSplitter:
    """Feed text deltas, get `(is_reasoning, text)` pieces: the reasoning prefix, then the rest.

    `ends` are the format's markers that end reasoning left open; with `follower`, an end marker
    counts only when `follower` comes next (whitespace between allowed). Visible pieces, tool
    markers included, go on to the format's own parser; reasoning pieces are raw (the caller
    strips the whole). `errors` is complete after `close()`.
    """

    def __init__(
        self, ends: Sequence[str], reasoning_open: bool | None = None, follower: str | None = None
    ) -> None:
        """Prepare for a format whose markers `ends` (followed by `follower`) end reasoning."""
        self._ends = tuple(ends)
        self._follower = follower
        markers = [THINK_OPEN, THINK_CLOSE, *self._ends] + ([follower] if follower else [])
        self._splitter = MarkerSplitter(markers)
        self._open = reasoning_open
        self._state = _INSIDE if reasoning_open else _START
        self._tentative = False  # inside, but not sure yet (reasoning_open=None, no <think>)
        self._held: list[str] = []  # tentative reasoning, released once the text shows what it is
        self._lead: list[str] = []  # whitespace before the first token (state _START)
        self._end: list[str] | None = None  # an end marker and the whitespace after it, undecided
        self._fresh = True  # no reasoning text yet (a <think> now repeats the prompt's)
        self.errors: list[str] = []

    def feed(self, delta: str) -> list[tuple[bool, str]]:
        """Read the next delta; return the pieces it settles (maybe none)."""
        out: list[tuple[bool, str]] = []
        if self._state == _AFTER:
            text, self._splitter.pending = self._splitter.pending + delta, ""
            if text:
                out.append((False, text))
            return out
        for is_marker, piece in self._splitter.feed(delta):
            self._take(is_marker, piece, out)
        return out

    def close(self) -> list[tuple[bool, str]]:
        """The text ended: release what was held back and report an unclosed block."""
        out: list[tuple[bool, str]] = []
        for _, piece in self._splitter.close():
            self._take(False, piece, out)
        if self._end is not None:  # an end marker with no follower: it was reasoning text
            self._reason("".join(self._end), out)
            self._end = None
        if self._state == _START:
            out.append((False, "".join(self._lead)))
        elif self._state == _INSIDE and self._tentative:
            self._settle(False, out)  # no </think> and no tool call: it was never reasoning
        elif self._state == _INSIDE:
            self.errors.append(
                tr(
                    f"reasoning has no {THINK_CLOSE} {CUT_OFF.en}",
                    f"у рассуждения нет {THINK_CLOSE}: текст оборвался (например, по max_tokens?)",
                )
            )
        self._state = _AFTER
        return [(flag, text) for flag, text in out if text]

    # --- the decisions ---------------------------------------------------------------------

    def _take(self, is_marker: bool, piece: str, out: list[tuple[bool, str]]) -> None:
        if self._state == _AFTER:
            out.append((False, piece))
        elif self._state == _START:
            self._start(is_marker, piece, out)
        elif self._end is not None:
            self._after_end_marker(is_marker, piece, out)
        elif not is_marker or piece == self._follower:
            self._reason(piece, out)
        elif piece == THINK_OPEN and self._tentative:  # text, then <think>: not a prefix block
            self._settle(False, out)
            self._state = _AFTER
            out.append((False, piece))
        elif piece == THINK_OPEN and self._fresh:  # the prompt opened it and the model too
            pass
        elif piece == THINK_OPEN:
            self.errors.append(
                tr(
                    f"{THINK_OPEN} inside reasoning that is already open ignored",
                    f"{THINK_OPEN} внутри уже открытого рассуждения пропущен",
                )
            )
        elif piece == THINK_CLOSE:
            if self._tentative:
                self._settle(True, out)
            self._state = _AFTER
        else:  # an end marker: decided now, or by what follows it
            if self._follower is None:
                self._end_reasoning(piece, out)
            else:
                self._end = [piece]

    def _start(self, is_marker: bool, piece: str, out: list[tuple[bool, str]]) -> None:
        """Nothing but whitespace read so far: the first token decides where the text starts."""
        if not is_marker and not piece.strip():
            self._lead.append(piece)
            return
        if is_marker and piece == THINK_OPEN:
            self._lead = []
            self._state = _INSIDE
            return
        lead, self._lead = "".join(self._lead), []
        if self._open is None:  # maybe reasoning: hold it until a </think> or a call decides
            self._state, self._tentative = _INSIDE, True
            self._held.append(lead)
            self._take(is_marker, piece, out)
            return
        self._state = _AFTER  # reasoning_open=False and no <think> first: all visible
        out.append((False, lead + piece))

    def _after_end_marker(self, is_marker: bool, piece: str, out: list[tuple[bool, str]]) -> None:
        """An end marker waits for its follower; whitespace keeps it waiting."""
        assert self._end is not None
        if not is_marker and not piece.strip():
            self._end.append(piece)
            return
        pending, self._end = "".join(self._end), None
        if is_marker and piece == self._follower:
            self._end_reasoning(pending + piece, out)
            return
        self._reason(pending, out)  # not a tool call after all: the marker is reasoning text
        self._take(is_marker, piece, out)

    def _reason(self, text: str, out: list[tuple[bool, str]]) -> None:
        """Reasoning text: emitted, or held while it is only tentative."""
        if text.strip():
            self._fresh = False
        if self._tentative:
            self._held.append(text)
        else:
            out.append((True, text))

    def _settle(self, reasoning: bool, out: list[tuple[bool, str]]) -> None:
        """The tentative text turned out to be reasoning (or not): release it."""
        held, self._held = "".join(self._held), []
        self._tentative = False
        out.append((reasoning, held))

    def _end_reasoning(self, visible: str, out: list[tuple[bool, str]]) -> None:
        """A tool call begins: reasoning is over; the call's text is visible."""
        if self._tentative:
            self._settle(False, out)  # no </think> before the call: with None, never reasoning
        self._state = _AFTER
        out.append((False, visible))
