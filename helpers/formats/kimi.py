"""Kimi-K2 raw tool-call text: a batch parser, a linear-cost streaming parser, and a renderer.

Kimi-K2 writes its tool calls as ordinary generated text between five marker tokens:

    Let me check.<|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}
    <|tool_call_end|><|tool_calls_section_end|>

Rules this module follows (`parse_kimi` is `KimiStreamParser` fed once, so the rules are one;
engine behaviour as in vLLM's `kimi_k2` parser, differences listed in `docs/notes.md`):
- content is all text outside tool-call sections, joined as written, then `.strip()`-ed;
- every `<|tool_call_begin|>` starts a call, and every call is returned, even a damaged one, so a
  tool loop can tell the model what went wrong; the damage is described in `ParseResult.errors`;
- the call id is the text between `<|tool_call_begin|>` and `<|tool_call_argument_begin|>`,
  stripped; the name is the id without the `functions.` prefix and the final `:<digits>`;
  a bare numeric id (`0`) gets its name from the request's `tools` when they are given;
- both spellings of the section markers are read: `<|tool_calls_section_begin|>` and the
  singular `<|tool_call_section_begin|>` (and their `_end`), as vLLM does;
- the arguments are the text up to `<|tool_call_end|>`, stripped, never changed otherwise;
- whitespace between calls is ignored; other text there is dropped and reported;
- a marker that makes no sense where it stands is dropped and reported;
- a missing `<|tool_call_end|>` or `<|tool_calls_section_end|>` (output cut off by `max_tokens`)
  is reported; the partial call is still returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from helpers.formats._common import (
    CUT_OFF,
    DeltaList,
    ParseResult,
    StrippedStream,
    arguments_problem,
    before,
    snippet,
    tool_call_dict,
)
from helpers.formats.stream import StreamParser
from helpers.i18n import tr

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
# The singular spelling of the section markers, which vLLM's kimi_k2 parser also accepts.
SECTION_BEGIN_SINGULAR = "<|tool_call_section_begin|>"
SECTION_END_SINGULAR = "<|tool_call_section_end|>"
KIMI_MARKERS = (
    SECTION_BEGIN,
    SECTION_END,
    CALL_BEGIN,
    ARGUMENT_BEGIN,
    CALL_END,
    SECTION_BEGIN_SINGULAR,
    SECTION_END_SINGULAR,
)
# Each spelling as the state machine reads it.
_CANONICAL = {SECTION_BEGIN_SINGULAR: SECTION_BEGIN, SECTION_END_SINGULAR: SECTION_END}
# Markers that end reasoning left open: the section begin (as in vLLM's and SGLang's kimi_k2
# reasoning parsers), and a call begun without a section, so that no call hides in the reasoning.
REASONING_ENDS = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR, CALL_BEGIN)

# The ":<digits>" that ends a well-formed id ("functions.get_weather:0").
_INDEX_SUFFIX_RE = re.compile(r":\d+\Z")


def kimi_name_from_id(call_id: str) -> str:
    """Function name inside a Kimi call id: `functions.get-weather:0` -> `get-weather`."""
    without_prefix = call_id.removeprefix("functions.")
    return _INDEX_SUFFIX_RE.sub("", without_prefix)


def _id_problem(call_id: str, name: str) -> str | None:
    """Say why a call id is not of the form `[functions.]name:N`, or None when it is."""
    if not call_id:
        return tr(
            "the id is empty, so there is no function name", "id пуст, поэтому имени функции нет"
        )
    if not _INDEX_SUFFIX_RE.search(call_id) or not name or any(c.isspace() for c in name):
        return tr(
            f"the id is not of the form 'functions.name:N'; name guessed as {name!r}",
            f"id не вида 'functions.name:N'; имя угадано как {name!r}",
        )
    return None


def infer_name(arguments: str, tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The tool a call with a bare numeric id (`0`) meant, as vLLM infers it; None if unsure.

    One tool: that tool. Several: the only tool whose schema declares every argument key."""
    functions = [tool.get("function", tool) for tool in tools if isinstance(tool, Mapping)]
    names = [f.get("name") for f in functions if isinstance(f, Mapping)]
    if len(names) == 1:
        return names[0] if isinstance(names[0], str) else None
    try:
        keys = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(keys, dict):
        return None
    matches = []
    for function in functions:
        parameters = function.get("parameters") if isinstance(function, Mapping) else None
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        if isinstance(properties, Mapping) and all(key in properties for key in keys):
            matches.append(function.get("name"))
    return matches[0] if len(matches) == 1 and isinstance(matches[0], str) else None


def _misplaced(marker: str, in_section: bool, call_index: int | None) -> str:
    """Error for a marker that makes no sense where it stands (it is dropped)."""
    if call_index is not None:
        return tr(
            f"call {call_index}: unexpected {marker} inside the call ignored",
            f"вызов {call_index}: лишний {marker} внутри вызова пропущен",
        )
    if marker == SECTION_BEGIN:
        return tr(
            f"{SECTION_BEGIN} inside an open section ignored",
            f"{SECTION_BEGIN} внутри открытой секции пропущен",
        )
    if marker == SECTION_END:
        return tr(
            f"{SECTION_END} without an open section ignored",
            f"{SECTION_END} без открытой секции пропущен",
        )
    if in_section:
        return tr(f"{marker} between calls ignored", f"{marker} между вызовами пропущен")
    return tr(
        f"{marker} outside a tool-calls section ignored", f"{marker} вне секции вызовов пропущен"
    )


@dataclass
class _StreamingCall:
    """A call being streamed: its id is buffered, its arguments are passed on as they come."""

    index: int
    id_parts: list[str] = field(default_factory=list)
    call_id: str | None = None  # set once the id is complete and the first delta was sent
    args: StrippedStream | None = None  # None until <|tool_call_argument_begin|>
    deferred: bool = False  # a bare id: header and arguments wait for the name (call end)


class KimiStreamParser(StreamParser):
    """Incremental `parse_kimi` (the contract is `StreamParser`'s).

    A call's id is buffered until `<|tool_call_argument_begin|>` (the first delta of a call must
    carry the whole id and name); then arguments stream through their own `StrippedStream` and
    are joined once, when the call ends, to check the JSON.
    """

    markers = KIMI_MARKERS
    reasoning_ends = REASONING_ENDS

    def __init__(
        self,
        reasoning_open: bool | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Start with nothing read (`reasoning_open`, `tools` as in `parse_kimi`)."""
        super().__init__(reasoning_open)
        self._tools = tools
        self._in_section = False
        self._call: _StreamingCall | None = None

    def _on_end(self, out: DeltaList) -> None:
        """Report stray text, a cut-off call and an unclosed section."""
        self._judge_stray_text()
        if self._call is not None:
            self._finish_call(str(CUT_OFF), out)
        if self._in_section:
            self._error(f"no {SECTION_END} {CUT_OFF.en}", f"нет {SECTION_END} {CUT_OFF.ru}")

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Route plain text to content, the open call's id or arguments, or the stray buffer."""
        call = self._call
        if call is not None and call.args is not None:
            fragment = call.args.push(piece)
            if not call.deferred:
                out.arguments(call.index, fragment)
        elif call is not None:
            call.id_parts.append(piece)
        elif self._in_section:
            self._stray.append(piece)
        else:
            self._emit_content(piece, out)

    def _on_marker(self, marker: str, out: DeltaList) -> None:
        """Apply one marker (either spelling of the section markers)."""
        marker = _CANONICAL.get(marker, marker)
        self._judge_stray_text()
        call = self._call
        if marker == SECTION_BEGIN and call is None and not self._in_section:
            self._in_section = True
        elif marker == CALL_BEGIN:
            if call is not None:
                self._finish_call(before(CALL_BEGIN, next_one=True), out)
            elif not self._in_section:
                self._error(
                    f"{CALL_BEGIN} outside a tool-calls section: read as a call anyway",
                    f"{CALL_BEGIN} вне секции вызовов: всё равно прочитан как вызов",
                )
            self._in_section = True
            self._call = _StreamingCall(index=len(self._tool_calls))
        elif marker == ARGUMENT_BEGIN and call is not None and call.args is None:
            self._send_header(call, out)  # the id is complete: announce the call
            call.args = StrippedStream()
        elif marker == CALL_END and call is not None:
            self._finish_call(None, out)
        elif marker == SECTION_END and self._in_section:  # (an open call is always in one)
            if call is not None:
                self._finish_call(before(SECTION_END), out)
            self._in_section = False
        else:
            call_index = None if call is None else call.index
            self._errors.append(_misplaced(marker, self._in_section, call_index))

    def _judge_stray_text(self) -> None:
        """Report the text gathered between calls if it was more than whitespace."""
        if stray := self._take_stray():
            self._error(
                f"text between tool calls ignored: {snippet(stray)!r}",
                f"текст между вызовами пропущен: {snippet(stray)!r}",
            )

    def _send_header(self, call: _StreamingCall, out: DeltaList) -> None:
        """Emit the first delta of a call: index, id, name and empty arguments."""
        call.call_id = "".join(call.id_parts).strip()
        if self._tools is not None and call.call_id.isdigit():  # a bare id, as vLLM reads it
            call.deferred = True  # the name comes from the arguments, known at the call's end
            return
        out.call_header(call.index, call.call_id, kimi_name_from_id(call.call_id))

    def _finish_call(self, missing_end: str | None, out: DeltaList) -> None:
        """Close the open call: make sure it was announced, then record it and its problems."""
        call = self._call
        assert call is not None
        if call.call_id is None:  # ended before its arguments began: announce it now
            self._send_header(call, out)
        tool_call = self._build_call(call, missing_end)
        if call.deferred:
            out.call_header(call.index, call.call_id, tool_call["function"]["name"])
            out.arguments(call.index, tool_call["function"]["arguments"])
        self._tool_calls.append(tool_call)
        self._call = None

    def _build_call(self, call: _StreamingCall, missing_end: str | None) -> dict[str, Any]:
        """Turn what was read for one call into its OpenAI dict; report its problems."""
        call_id, index = call.call_id, call.index
        assert call_id is not None
        arguments = None if call.args is None else "".join(call.args.sent)
        label = tr(f"call {index} (id {call_id!r})", f"вызов {index} (id {call_id!r})")
        if call.deferred:  # a bare numeric id: the name is inferred from the request's tools
            assert self._tools is not None
            name = infer_name(arguments or "", self._tools) or ""
            if not name:
                self._error(
                    "a bare id and no single tool whose parameters match the arguments, so no "
                    "function name",
                    "голый id, и нет единственного инструмента, чьи параметры подходят к "
                    "аргументам, поэтому имени функции нет",
                    label,
                )
        else:
            name = kimi_name_from_id(call_id)
            id_problem = _id_problem(call_id, name)
            if id_problem:
                self._errors.append(f"{label}: {id_problem}")
        if missing_end:
            self._error(f"no {CALL_END} {missing_end}", f"нет {CALL_END} {missing_end}", label)
        if arguments is None:
            self._error(
                f"no {ARGUMENT_BEGIN}, so no arguments",
                f"нет {ARGUMENT_BEGIN}, поэтому нет и аргументов",
                label,
            )
        elif arguments_issue := arguments_problem(arguments):
            self._errors.append(f"{label}: {arguments_issue}")
        return tool_call_dict(call_id, name, arguments or "")


def parse_kimi(
    text: str,
    reasoning_open: bool | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> ParseResult:
    """Read Kimi raw output into reasoning, content, tool calls (from every section) and errors.

    `<think>…</think>` goes to `.reasoning` (see `helpers.formats.think`); `reasoning_open` says
    whether the prompt already opened `<think>` (None: decide from the text). `tools` (the
    request's tool list) lets a bare numeric id (`0`) get its name, as vLLM infers it. This is
    `KimiStreamParser` fed once, so batch and stream follow one set of rules."""
    return KimiStreamParser(reasoning_open, tools).parse_whole(text)


def render_kimi_tool_calls(tool_calls: Iterable[dict[str, Any]], content: str = "") -> str:
    """Write an assistant turn the way Kimi-K2 generates it: content, then one calls section."""
    calls = list(tool_calls)
    if not calls:
        return content
    parts = [content, SECTION_BEGIN]
    for call in calls:
        arguments = call["function"]["arguments"]
        if not isinstance(arguments, str):  # a dict given by a caller: write it as JSON
            arguments = json.dumps(arguments, ensure_ascii=False)
        parts += [CALL_BEGIN, call["id"], ARGUMENT_BEGIN, arguments, CALL_END]
    parts.append(SECTION_END)
    return "".join(parts)
