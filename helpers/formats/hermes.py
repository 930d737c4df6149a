"""Qwen2.5 (Hermes-style) raw tool-call text: batch and streaming parsers, and a renderer.

Qwen writes each call as one JSON object between two ordinary-text tags:

    Let me check.
    <tool_call>
    {"name": "get_current_weather", "arguments": {"location": "Paris, France"}}
    </tool_call>

Rules this module follows (`parse_hermes` is `HermesStreamParser` fed once, so they are the same
for both; engine behaviour as in vLLM's `hermes` parser and llama.cpp, differences in
`docs/notes.md`):
- content is all text outside `<tool_call>` blocks, joined as written, then `.strip()`-ed
  (vLLM keeps only the text before the first block; we also keep text after the calls);
- every `<tool_call>` block is a call attempt and never goes to content, even when its JSON is
  broken; a broken call is still returned, with what could be recovered (the name if a
  `"name": "..."` pair is readable, the raw arguments text), and its problems are reported;
- ids are invented in order within one output: `call_0`, `call_1`, ...;
- `arguments` becomes JSON text: an object is dumped with `ensure_ascii=False`, a string is
  kept as the model wrote it;
- a block cut off at the end of the text (no `</tool_call>`) is still parsed and reported;
- a `</tool_call>` outside a block is dropped and reported;
- several JSON objects written one after another inside one block are several calls (the way
  llama-server returns them: its grammar allows it);
- Qwen3's reasoning is split off first, by the rules of `helpers.formats.think` (an unclosed
  `<think>` ends at `<tool_call>`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from helpers.arguments import strict_json
from helpers.formats._common import (
    CUT_OFF,
    DeltaList,
    ParseResult,
    arguments_problem,
    before,
    snippet,
    tool_call_dict,
    unopened,
)
from helpers.formats.stream import StreamParser
from helpers.i18n import tr

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
HERMES_TAGS = (OPEN_TAG, CLOSE_TAG)

# For salvaging broken JSON: a "name": "..." pair, and where "arguments": starts.
_NAME_RE = re.compile(r'"name"\s*:\s*("(?:[^"\\]|\\.)*")')
_ARGUMENTS_RE = re.compile(r'"arguments"\s*:\s*')
_SPACES_RE = re.compile(r"\s*")


def _salvage(body: str) -> tuple[str, str]:
    """Recover the name and the raw arguments text from a call whose JSON does not parse."""
    name = ""
    name_match = _NAME_RE.search(body)
    if name_match:
        try:
            name = json.loads(name_match.group(1))
        except ValueError:  # a bad escape inside the quoted name
            name = ""
    arguments = ""
    arguments_match = _ARGUMENTS_RE.search(body)
    if arguments_match:
        rest = body[arguments_match.end() :]
        try:  # the arguments may be fine even when the outer object is not
            value, _ = json.JSONDecoder().raw_decode(rest)
            arguments = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        except (ValueError, RecursionError):  # cut off or broken: keep what the model wrote
            arguments = rest.strip()
    return name, arguments


def _call_texts(body: str) -> list[str]:
    """The texts of the calls in one `<tool_call>` block: usually the whole body.

    llama.cpp's grammar lets a model write several call objects inside one `<tool_call>` block,
    and llama-server returns them as several calls; so do we. Anything else between or after the
    objects (or an object that does not parse) means it is not such a block: one call.
    """
    decoder = json.JSONDecoder()
    texts: list[str] = []
    pos = 0
    stripped = body.strip()
    while pos < len(stripped):
        start = pos
        try:
            value, pos = decoder.raw_decode(stripped, pos)
        except (ValueError, RecursionError):
            return [body]
        if not isinstance(value, dict):
            return [body]
        texts.append(stripped[start:pos])
        pos = _SPACES_RE.match(stripped, pos).end()
    return texts if len(texts) > 1 else [body]


class HermesStreamParser(StreamParser):
    """Incremental `parse_hermes`: content is streamed as it comes, a call when its block ends.

    A block's JSON is nested, so it is buffered and parsed once, when `</tool_call>` arrives (or at
    `close()`); then the call is emitted as two deltas: its header and its whole arguments.
    """

    markers = HERMES_TAGS
    reasoning_ends = (OPEN_TAG,)

    def __init__(self, reasoning_open: bool | None = None) -> None:
        """Start with nothing read; `reasoning_open` as in `parse_hermes`."""
        super().__init__(reasoning_open)
        self._body: list[str] | None = None  # the text of the open block, if one is open

    def _on_marker(self, tag: str, out: DeltaList) -> None:
        """Open a block (closing a previous one left open) or close the open one."""
        if tag == OPEN_TAG:
            if self._body is not None:
                self._finish_block(before(OPEN_TAG, next_one=True), out)
            self._body = []
        elif self._body is None:  # a </tool_call> with no open block
            self._errors.append(unopened(CLOSE_TAG, OPEN_TAG))
        else:
            self._finish_block(None, out)

    def _on_end(self, out: DeltaList) -> None:
        """Finish a block cut off by the end of the text."""
        if self._body is not None:
            self._finish_block(str(CUT_OFF), out)

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Buffer text inside a block; stream text outside as content."""
        if self._body is not None:
            self._body.append(piece)
        else:
            self._emit_content(piece, out)

    def _finish_block(self, missing_end: str | None, out: DeltaList) -> None:
        """Parse the buffered block once and emit its call (or calls)."""
        assert self._body is not None
        body, self._body = "".join(self._body), None
        for number, text in enumerate(_call_texts(body)):
            index = len(self._tool_calls)  # the block's missing end is reported with its first call
            tool_call = self._build_call(index, text, None if number else missing_end)
            self._tool_calls.append(tool_call)
            function = tool_call["function"]
            out.call_header(index, tool_call["id"], function["name"])
            out.arguments(index, function["arguments"])

    def _build_call(self, index: int, body: str, missing_end: str | None) -> dict[str, Any]:
        """Turn the text of one call into its OpenAI dict; report its problems."""
        call_id = f"call_{index}"
        label = tr(f"call {index} (id {call_id!r})", f"вызов {index} (id {call_id!r})")
        if missing_end:
            self._error(f"no {CLOSE_TAG} {missing_end}", f"нет {CLOSE_TAG} {missing_end}", label)
        body = body.strip()
        try:
            payload = strict_json(body)
        except (ValueError, RecursionError) as exc:
            name, arguments = _salvage(body)
            # where the JSON went wrong, as text: "Extra data ... (char 31)" alone hides the junk
            at = repr(snippet(body[exc.pos :], 30)) if isinstance(exc, json.JSONDecodeError) else ""
            why = (
                tr("the call is empty", "вызов пуст")
                if not body
                else tr(
                    f"the call is not valid JSON ({exc})" + (f" at {at}" if at else ""),
                    f"вызов — некорректный JSON (json: «{exc}»)" + (f" в месте {at}" if at else ""),
                )
            )
            self._error(
                f"{why}; recovered name {name!r} and arguments {snippet(arguments)!r}",
                f"{why}; восстановлены имя {name!r} и аргументы {snippet(arguments)!r}",
                label,
            )
            return tool_call_dict(call_id, name, arguments)
        if not isinstance(payload, dict):
            self._error(
                f"the call is valid JSON but not an object: {snippet(body)!r}",
                f"вызов — корректный JSON, но не объект: {snippet(body)!r}",
                label,
            )
            return tool_call_dict(call_id, "", "")
        name = payload.get("name")
        if not isinstance(name, str):
            self._error('no string "name" in the call', 'в вызове нет строки "name"', label)
            name = ""
        if "arguments" not in payload:
            self._error(
                'no "arguments" in the call; using {}', 'в вызове нет "arguments"; взято {}', label
            )
            arguments = "{}"
        elif isinstance(payload["arguments"], str):
            arguments = payload["arguments"]  # already JSON text (or meant to be): keep it
        else:
            arguments = json.dumps(payload["arguments"], ensure_ascii=False)
        arguments_issue = arguments_problem(arguments)
        if arguments_issue:
            self._errors.append(f"{label}: {arguments_issue}")
        return tool_call_dict(call_id, name, arguments)


def parse_hermes(text: str, reasoning_open: bool | None = None) -> ParseResult:
    """Read Qwen/Hermes raw output into reasoning, content, tool calls and errors.

    The stream parser fed once with the whole text: one set of rules for both."""
    return HermesStreamParser(reasoning_open).parse_whole(text)


def _arguments_object(arguments: Any) -> Any:
    """The arguments as a Python value: JSON text is loaded (ValueError if it is not JSON)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ValueError(
            tr(
                f"arguments are not valid JSON: {snippet(arguments)!r} ({exc})",
                f"аргументы — некорректный JSON: {snippet(arguments)!r} (json: «{exc}»)",
            )
        ) from exc


def render_hermes_tool_calls(tool_calls: Iterable[dict[str, Any]], content: str = "") -> str:
    """Write an assistant turn as Qwen2.5 generates it (the template's text after `assistant\\n`).

    The Qwen2.5 chat template writes `<|im_start|>assistant`, then `"\\n" + content` if there is
    content, then `"\\n<tool_call>\\n{...}\\n</tool_call>"` per call. This returns that text
    without the first newline. The name is inserted as is (the template does not escape it);
    the arguments are loaded and dumped as a JSON object (`tojson`, non-ASCII kept).
    """
    pieces = [content] if content else []
    for call in tool_calls:
        function = call["function"]
        arguments = json.dumps(_arguments_object(function["arguments"]), ensure_ascii=False)
        pieces.append(
            f'{OPEN_TAG}\n{{"name": "{function["name"]}", "arguments": {arguments}}}\n{CLOSE_TAG}'
        )
    return "\n".join(pieces)
