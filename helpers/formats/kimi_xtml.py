"""Kimi K3 "XTML" raw text: a batch parser, a linear-cost stream parser, and a prompt renderer.

Kimi K3 (July 2026) no longer writes K2's `<|tool_calls_section_begin|>` sections. Every part of a
conversation is a tagged element built from four special tokens, `<|open|>`, `<|close|>`,
`<|sep|>` and `<|end_of_msg|>` (the stop token); tag names and attributes are ordinary text:

    <|open|>message role="assistant"<|sep|>
      <|open|>think<|sep|>reasoning<|close|>think<|sep|>
      <|open|>response<|sep|>visible text<|close|>response<|sep|>
      <|open|>tools<|sep|>
        <|open|>call tool="get_weather" index="1"<|sep|>
          <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
          <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
        <|close|>call<|sep|>
      <|close|>tools<|sep|>
    <|close|>message<|sep|><|end_of_msg|>

(one line in reality: the indentation is only for reading). A call's arguments are typed
elements (`type="string"` values are raw text, never escaped; `number`, `boolean`, `null`,
`object` and `array` values are JSON) or one `<|open|>json type="object"<|sep|>{...}` block.
Attribute values escape `&` as `&amp;` and `"` as `&quot;`. The text carries **no call id**.

Rules this module follows (the same in `parse_kimi_xtml` and `KimiXtmlStreamParser`, which is the
batch parser's engine: `parse_kimi_xtml` feeds the whole text at once):

- where the output starts: the generation prompt already opened `think` (thinking on) or
  `response` (thinking off), so a real output starts inside that block. `opened="think"` or
  `"response"` says so; `opened=None` (the default) decides from the first tag: a first
  `<|close|>think<|sep|>` or `<|close|>response<|sep|>` means the prompt opened that block, any
  other tag means the text starts between blocks; text with no tag at all is content;
- `think` text is the reasoning, `response` text is the content (text between blocks, as
  vLLM and SGLang read it, is content too); both are joined block by block (a newline between
  blocks) and `.strip()`-ed, like the other parsers here; they stream as they come;
- a call is returned only when it is **whole**, i.e. its `<|close|>call<|sep|>` was read, and
  has a tool name; the stream parser emits it in one delta at that moment (as vLLM's `kimi_k3`
  parser does: no argument fragments). A call cut off by the end of the text, or by a
  `<|close|>tools<|sep|>` / `<|close|>message<|sep|>`, is NOT returned (its string arguments
  could be cut short and still be valid JSON): it is reported in `errors` with what was read;
- `arguments` is the JSON text of an object: for typed elements `json.dumps(..., ensure_ascii=
  False)` of the values in the order written (exactly what vLLM and SGLang produce); for a
  `json` block the block's text unchanged;
- ids: none is in the text, so one is invented as servers do: `functions.NAME:N` with N counting
  calls from `call_offset` (0 by default; pass the number of calls earlier in the conversation
  to keep ids unique), the convention vLLM uses for Kimi model types when it makes ids itself;
- problems never raise: an unclosed block, an unknown or missing `type`, a typed value that is
  not valid JSON (kept as its raw text, as vLLM and SGLang keep it), a type that does not match
  its value, a duplicate key, a stray tag or stray text: each is reported in `ParseResult.errors`
  and the rest of the text is still read;
- the known ambiguity: a string value that itself contains `<|close|>argument<|sep|>` cannot be
  told from the closing marker. When text (or another `<|close|>argument<|sep|>`) follows such a
  marker inside a call, the marker was part of the value: the value is read on to the next
  closing marker, and the call is returned with an error asking to check it. When nothing
  follows it, the value is silently cut there: no parser can know. A second one, in the tag
  headers: an argument key (an attribute value) holding one of the four token texts, say
  `<|open|>`, ends the header there, since `escape_attr` escapes only `&` and `"`. The call then
  comes back without that argument and `errors` says which tag could not be read (in a real
  token stream such a key would be plain text tokens; as text it cannot be told apart).

Cost: the text is cut by a `MarkerSplitter` over the four tokens; besides the text of the block
being read, the parser holds back at most one tag header, and inside a raw block (think,
response, a value) only the few characters that could still become a closing tag. Every
character is handled a bounded number of times, so a stream costs time linear in its length
(`bench/xtml.py` measures it).

The renderer, `render_kimi_xtml`, writes a whole K3 prompt; see its docstring for the sources.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from helpers.arguments import strict_json
from helpers.formats._common import (
    CUT_OFF,
    DeltaList,
    ParseResult,
    before,
    snippet,
    tool_call_dict,
)
from helpers.formats.stream import StreamParser
from helpers.i18n import Text, tr

OPEN = "<|open|>"
CLOSE = "<|close|>"
SEP = "<|sep|>"
END_OF_MSG = "<|end_of_msg|>"
XTML_TOKENS = (OPEN, CLOSE, SEP, END_OF_MSG)

VALUE_TYPES = ("string", "number", "boolean", "null", "object", "array")
THINKING_EFFORTS = ("low", "high", "max")
IMAGE_PLACEHOLDER = "<|kimi_image_placeholder|>"


def open_tag(name: str, attrs: Sequence[tuple[str, Any]] = ()) -> str:
    """`<|open|>name a="v"<|sep|>`, attribute values escaped (`&` first, then `"`)."""
    rendered = "".join(f' {key}="{escape_attr(value)}"' for key, value in attrs)
    return f"{OPEN}{name}{rendered}{SEP}"


def close_tag(name: str) -> str:
    return f"{CLOSE}{name}{SEP}"


def escape_attr(value: Any) -> str:
    """Escape an attribute value as K3 does: `&` -> `&amp;`, then `"` -> `&quot;`."""
    return str(value).replace("&", "&amp;").replace('"', "&quot;")


_ENTITY_RE = re.compile(r"&(amp|quot);")


def unescape_attr(value: str) -> str:
    """Undo `escape_attr` in one pass (so `&amp;quot;` gives back `&quot;`, not `"`)."""
    return _ENTITY_RE.sub(lambda m: "&" if m.group(1) == "amp" else '"', value)


# --- parsing ---

_NAME_RE = re.compile(r"\s*([A-Za-z_][\w-]*)")
_ATTR_RE = re.compile(r'\s+([\w-]+)="([^"]*)"')
# The start of an open or close tag, cut off by the end of the text (`call tool="get_we`).
_CUT_OPEN_RE = re.compile(r'(?:[A-Za-z_][\w-]*(?:\s+[\w-]+="[^"]*")*(?:\s+[\w-]*(?:="[^"]*)?)?)?')
_CUT_CLOSE_RE = re.compile(r"(?:[A-Za-z_][\w-]*)?")

# Where the parser is. The raw blocks keep their text as written; the others only expect tags.
TOP, THINK, RESPONSE, TOOLS, CALL, ARGUMENT, JSON_BLOCK, ENDED, UNDECIDED = (
    "top think response tools call argument json ended undecided".split()
)
_RAW = (THINK, RESPONSE, ARGUMENT, JSON_BLOCK)
# Inside a raw block, the only tags that mean something (everything else is text of the block):
# (open-tag names, close-tag names). <|end_of_msg|> always ends the block.
# A block's own open tag is there too: written again by a model whose prompt already opened it.
_RAW_TAGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    THINK: (frozenset({"think", "response", "tools"}), frozenset({"think", "message"})),
    RESPONSE: (frozenset({"response", "tools"}), frozenset({"response", "message"})),
    ARGUMENT: (frozenset(), frozenset({"argument", "call", "tools", "message"})),
    JSON_BLOCK: (frozenset(), frozenset({"json", "call", "tools", "message"})),
}
_BLOCK_SEPARATOR = "\n"


def _parse_header(header: str) -> tuple[str, dict[str, str], str]:
    """Split an open tag's text (`call tool="x" index="1"`) into name, attributes and leftovers."""
    match = _NAME_RE.match(header)
    if match is None:
        return "", {}, header.strip()
    attrs: dict[str, str] = {}
    pos = match.end()
    for attr in _ATTR_RE.finditer(header, pos):
        if attr.start() != pos:
            break
        attrs[attr.group(1)] = unescape_attr(attr.group(2))
        pos = attr.end()
    return match.group(1), attrs, header[pos:].strip()


@dataclass
class _Tag:
    """A tag being read: its kind (OPEN or CLOSE) and the text after the token so far."""

    kind: str
    parts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class _Argument:
    """One `argument` or `json` element of a call (`element`: which one, and so its closer)."""

    element: str
    key: str | None
    type: str | None
    parts: list[str] = field(default_factory=list)
    reopened: bool = False  # a `<|close|>argument<|sep|>` was found to be part of the value


@dataclass
class _Call:
    """A call whose open tag was read."""

    number: int  # 1-based position among the call elements of this output
    name: str
    index_attr: str | None
    arguments: list[_Argument] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def problem(self, english: str, russian: str, argument: _Argument | None = None) -> None:
        """Note a problem of this call (or of its `argument`), in the notebook's language."""
        about = self.label()
        if argument is not None:
            about += tr(f", argument {argument.key!r}", f", аргумент {argument.key!r}")
        self.problems.append(f"{about}: {tr(english, russian)}")

    def label(self) -> str:
        return tr(
            f"call {self.number} ({self.name or '?'})", f"вызов {self.number} ({self.name or '?'})"
        )


def _decode_value(call: _Call, argument: _Argument) -> Any:
    """The Python value of a typed argument (problems go to `call.problems`)."""
    raw = "".join(argument.parts)
    kind = argument.type
    if kind is None:
        call.problem(
            "no type attribute; read as a string",
            "нет атрибута type; прочитан как строка",
            argument,
        )
        return raw
    if kind == "string":
        return raw
    if kind not in VALUE_TYPES:
        call.problem(
            f"unknown type {kind!r} (expected one of {', '.join(VALUE_TYPES)}); "
            "decoded as JSON if it is JSON, else kept as text",
            f"неизвестный тип {kind!r} (ожидался один из {', '.join(VALUE_TYPES)}); "
            "разобран как JSON, если это JSON, иначе оставлен текстом",
            argument,
        )
    try:
        value = strict_json(raw)
    except (ValueError, RecursionError) as exc:
        if kind in VALUE_TYPES:
            call.problem(
                f"type {kind!r} but the value is not valid JSON ({exc}): "
                f"kept as the text {snippet(raw)!r}",
                f"тип {kind!r}, но значение — некорректный JSON (json: «{exc}»): "
                f"оставлено текстом {snippet(raw)!r}",
                argument,
            )
        return raw
    if kind in VALUE_TYPES and _value_type(value) != kind:  # the renderer's own type of a value
        call.problem(
            f"type {kind!r} does not match the value {snippet(raw)!r}",
            f"тип {kind!r} не подходит к значению {snippet(raw)!r}",
            argument,
        )
    return value


def _call_arguments(call: _Call) -> str:
    """The arguments JSON text of a whole call (problems go to `call.problems`)."""
    typed = [a for a in call.arguments if a.element == ARGUMENT]
    blocks = [a for a in call.arguments if a.element == JSON_BLOCK]
    if blocks and (typed or len(blocks) > 1):
        call.problem(
            f"a call has either typed arguments or one json block, "
            f"here {len(typed)} argument(s) and {len(blocks)} json block(s): merged",
            f"у вызова либо типизированные аргументы, либо один блок json, "
            f"а здесь аргументов {len(typed)} и блоков json {len(blocks)}: объединены",
        )
    if len(blocks) == 1 and not typed:
        _json_block(call, blocks[0])
        return "".join(blocks[0].parts)
    values: dict[str, Any] = {}
    for block in blocks:
        values.update(_json_block(call, block))
    for argument in typed:
        key = argument.key
        if key is None:
            call.problem(
                "an argument has no key attribute; stored under ''",
                "у аргумента нет атрибута key; сохранён под ключом ''",
            )
            key = ""
        elif key in values:
            call.problem(
                f"argument {key!r} given twice; the last value kept",
                f"аргумент {key!r} указан дважды; оставлено последнее значение",
            )
        values[key] = _decode_value(call, argument)
    return json.dumps(values, ensure_ascii=False)


def _json_block(call: _Call, block: _Argument) -> dict[str, Any]:
    """The object a json block holds; a block that holds none is reported and gives {}."""
    if block.type != "object":
        call.problem(
            f"json block with type {block.type!r}, expected 'object'",
            f"блок json с типом {block.type!r}, ожидался 'object'",
        )
    try:
        value = strict_json("".join(block.parts))
    except (ValueError, RecursionError) as exc:
        call.problem(
            f"the json block is not valid JSON ({exc})",
            f"блок json — некорректный JSON (json: «{exc}»)",
        )
        return {}
    if not isinstance(value, dict):
        call.problem(
            "the json block is valid JSON but not an object",
            "блок json — корректный JSON, но не объект",
        )
        return {}
    return value


class KimiXtmlStreamParser(StreamParser):
    """Incremental `parse_kimi_xtml`: feed text deltas, get OpenAI-style delta dicts back.

    `feed(delta)` returns the deltas the new text completes: `{"reasoning_content": ...}` and
    `{"content": ...}` as the text comes, and for each call, when its `<|close|>call<|sep|>`
    arrives, ONE delta with its index, id, name and whole arguments. `close()` ends the text and
    returns what was held back; `.result` then holds the whole `ParseResult`.
    """

    markers = XTML_TOKENS

    def __init__(self, opened: str | None = None, call_offset: int = 0) -> None:
        """Start before the first character (`opened`, `call_offset`: as in `parse_kimi_xtml`)."""
        if opened not in (None, THINK, RESPONSE):
            raise ValueError(
                tr(
                    f"opened must be 'think', 'response' or None, not {opened!r}",
                    f"opened должен быть 'think', 'response' или None, а не {opened!r}",
                )
            )
        super().__init__()
        self._state = UNDECIDED if opened is None else opened
        self._undecided: list[str] = []  # text read before opened=None was decided
        self._message_seen = opened is not None
        self._tag: _Tag | None = None
        self._blocks_seen = {THINK: False, RESPONSE: False}
        self._block_text_seen = False
        self._call: _Call | None = None
        self._argument: _Argument | None = None
        self._closed_argument: _Argument | None = None  # may still be reopened (see module doc)
        self._gap: list[str] = []  # whitespace after a closed argument, until that is decided
        self._call_count = 0
        self._call_offset = call_offset

    # -- text and tokens -----------------------------------------------------------------------

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Plain text: part of a tag being read, or of the block we are in."""
        tag = self._tag
        if tag is not None:
            tag.parts.append(piece)
            if self._state in _RAW and not self._could_be_raw_tag(tag):
                self._tag = None  # a would-be tag that is text of the block after all
                self._text(tag.kind + tag.text(), out)
            return
        self._text(piece, out)

    def _on_marker(self, token: str, out: DeltaList) -> None:
        tag = self._tag
        if token == SEP and tag is not None:
            self._tag = None
            self._on_tag(tag, out)
            return
        if tag is not None:  # a tag interrupted by another token: it was no tag
            self._tag = None
            self._text_or_stray(tag.kind + tag.text(), out)
        if token in (OPEN, CLOSE):
            self._tag = _Tag(token)
        elif token == END_OF_MSG:
            self._on_end_of_message(out)
        else:  # a <|sep|> that ends no tag
            self._text_or_stray(token, out)

    def _text_or_stray(self, text: str, out: DeltaList) -> None:
        """Text of a raw block (or not yet placed), or else a stray piece that is reported."""
        if self._state in _RAW or self._state == UNDECIDED:
            self._text(text, out)
        else:
            self._report_stray(text)

    def _could_be_raw_tag(self, tag: _Tag) -> bool:
        """Inside a raw block: can the tag still become one that means something here?"""
        opens, closes = _RAW_TAGS[self._state]
        names = opens if tag.kind == OPEN else closes
        text = tag.text()
        return any(name.startswith(text) for name in names)

    def _looks_cut_off(self, tag: _Tag) -> bool:
        """At the end of the text: is the unfinished tag the start of a real tag?"""
        if self._state in _RAW:
            return True  # only the start of a tag that means something is ever held
        pattern = _CUT_OPEN_RE if tag.kind == OPEN else _CUT_CLOSE_RE
        return pattern.fullmatch(tag.text()) is not None

    def _text(self, piece: str, out: DeltaList) -> None:
        state = self._state
        if state == UNDECIDED:
            self._undecided.append(piece)
        elif state in (THINK, RESPONSE, TOP):
            self._block_text_seen = self._block_text_seen or bool(piece.strip())
            (self._emit_reasoning if state == THINK else self._emit_content)(piece, out)
        elif state in (ARGUMENT, JSON_BLOCK):
            assert self._argument is not None
            self._argument.parts.append(piece)
        elif state == CALL and self._closed_argument is not None:
            if not piece.strip():
                self._gap.append(piece)
            else:  # text after a closed argument: its closing marker was part of the value
                self._reopen_argument(piece)
        else:  # TOOLS, CALL, ENDED: only whitespace belongs here
            self._stray.append(piece)

    def _report_stray(self, text: str) -> None:
        self._error(
            f"unexpected {snippet(text)!r} ignored (in {self._where()})",
            f"лишнее {snippet(text)!r} пропущено (в {self._where()})",
        )

    def _judge_stray(self) -> None:
        """Report text that stood between elements if it was more than whitespace."""
        if text := self._take_stray():
            self._error(
                f"text outside any block ignored (in {self._where()}): {snippet(text)!r}",
                f"текст вне блоков пропущен (в {self._where()}): {snippet(text)!r}",
            )

    def _where(self) -> str:
        if self._call is not None:
            return self._call.label()
        return {
            TOP: tr("the message", "сообщении"),
            TOOLS: tr("the tools block", "блоке tools"),
            ENDED: tr("text after the end of the message", "тексте после конца сообщения"),
        }.get(self._state, self._state)

    # -- tags ----------------------------------------------------------------------------------

    def _on_tag(self, tag: _Tag, out: DeltaList) -> None:
        """A whole tag (`<|open|>...<|sep|>` or `<|close|>...<|sep|>`)."""
        if self._state == UNDECIDED:
            self._decide(tag, out)
        text = tag.text()
        if self._state in _RAW:
            opens, closes = _RAW_TAGS[self._state]
            if text in (opens if tag.kind == OPEN else closes):
                self._on_raw_block_tag(tag.kind, text, out)
            else:  # `<|close|>resp<|sep|>`: the start of a tag, but no tag of this block
                self._text(tag.kind + text + SEP, out)
            return
        closed = self._closed_argument
        if self._state == CALL and closed is not None:
            if tag.kind == CLOSE and text.strip() == closed.element:
                # a second closing marker: the first one was part of the value
                self._reopen_argument("")
                self._close_argument()
                return
            self._commit_argument()
        self._judge_stray()
        if tag.kind == OPEN:
            self._on_open(text)
        else:
            self._on_close(text.strip(), out)

    def _decide(self, tag: _Tag, out: DeltaList) -> None:
        """opened=None: the first tag tells where the text started."""
        name = tag.text().strip()
        if tag.kind == CLOSE and name in (THINK, RESPONSE):
            self._state = name
            self._message_seen = True
        else:
            self._state = TOP
        held, self._undecided = "".join(self._undecided), []
        if held:
            self._text(held, out)

    def _on_raw_block_tag(self, kind: str, name: str, out: DeltaList) -> None:
        """A tag that means something inside think, response, an argument or a json block."""
        state = self._state
        if kind == CLOSE and name == state:
            self._end_raw_block()
            return
        if kind == OPEN and name == state:
            if self._block_text_seen:
                self._error(
                    f"{open_tag(name)} inside the {name} block ignored",
                    f"{open_tag(name)} внутри блока {name} пропущен",
                )
            return  # at the start of the block: the prompt's opener, written again
        # Any other tag here means the block was left open: close it, then read the tag.
        self._error(
            f"{self._block_label()} not closed before {kind}{name}{SEP}",
            f"{self._block_label()} не закрыт перед {kind}{name}{SEP}",
        )
        self._end_raw_block()
        if self._state == CALL:
            self._commit_argument()
        if kind == OPEN:
            self._on_open(name)
        else:
            self._on_close(name, out)

    def _block_label(self) -> str:
        if self._state in (ARGUMENT, JSON_BLOCK):
            assert self._call is not None and self._argument is not None
            what = (
                "json"
                if self._argument.element == JSON_BLOCK
                else tr(f"argument {self._argument.key!r}", f"аргумент {self._argument.key!r}")
            )
            return f"{self._call.label()}: {what}"
        return tr(f"the {self._state} block", f"блок {self._state}")

    def _end_raw_block(self) -> None:
        if self._state in (THINK, RESPONSE):
            self._state = TOP
        else:
            self._close_argument()

    def _close_argument(self) -> None:
        """The argument's closing marker: keep it open to a reopening until the next tag."""
        self._closed_argument = self._argument
        self._argument = None
        self._gap = []
        self._state = CALL

    def _reopen_argument(self, text: str) -> None:
        """Text (or a second marker) followed `<|close|>argument<|sep|>`: it was in the value."""
        argument = self._closed_argument
        assert argument is not None and self._call is not None
        if not argument.reopened:
            argument.reopened = True
            name = "json" if argument.element == JSON_BLOCK else repr(argument.key)
            marker = close_tag(argument.element)
            self._call.problem(
                f"the value of {name} contains "
                f"{marker}, which cannot be told from the closing marker; "
                "read as part of the value because text followed it: check this call",
                f"значение {name} содержит {marker}, "
                "который не отличить от закрывающего маркера; прочитан как часть "
                "значения, потому что за ним шёл текст: проверьте этот вызов",
            )
        argument.parts += [close_tag(argument.element), *self._gap, text]
        self._gap = []
        self._closed_argument = None
        self._argument = argument
        self._state = argument.element

    def _commit_argument(self) -> None:
        """The closed argument stays closed: store it in its call."""
        if self._closed_argument is not None:
            assert self._call is not None
            self._call.arguments.append(self._closed_argument)
            self._closed_argument = None
            self._gap = []

    def _on_open(self, header: str) -> None:
        name, attrs, rest = _parse_header(header)
        if rest:
            self._error(
                f"tag {OPEN}{snippet(header)}{SEP}: could not read {snippet(rest)!r}",
                f"тег {OPEN}{snippet(header)}{SEP}: не удалось прочитать {snippet(rest)!r}",
            )
        state = self._state
        if state == TOP and name in (THINK, RESPONSE):
            if self._blocks_seen[name]:  # a second block of the kind: keep them apart
                (self._content if name == RESPONSE else self._reasoning).push(_BLOCK_SEPARATOR)
            self._blocks_seen[name] = True
            self._block_text_seen = False
            self._state = name
        elif state == TOP and name == "tools":
            self._state = TOOLS
        elif state == TOP and name == "message" and not self._message_seen:
            if attrs.get("role") != "assistant":
                self._error(
                    f"message role {attrs.get('role')!r}: read as the assistant's",
                    f"сообщение с ролью {attrs.get('role')!r}: прочитано как ответ модели",
                )
        elif state in (TOP, TOOLS) and name == "call":
            if state == TOP:
                self._error(
                    f"{OPEN}call{SEP} outside a tools block: read as a call anyway",
                    f"{OPEN}call{SEP} вне блока tools: всё равно прочитан как вызов",
                )
            self._call_count += 1
            self._call = _Call(self._call_count, attrs.get("tool", ""), attrs.get("index"))
            self._state = CALL
        elif state == CALL and name in ("argument", "json"):
            self._argument = _Argument(name, attrs.get("key"), attrs.get("type"))
            self._state = name
        else:
            self._report_stray(f"{OPEN}{header}{SEP}")
            return
        self._message_seen = True  # any element: a message opened later is no longer the first

    def _on_close(self, name: str, out: DeltaList) -> None:
        state = self._state
        if state == CALL and name == "call":
            self._finish_call(out)
            self._state = TOOLS
        elif state == CALL and name in ("tools", "message"):
            self._drop_call(before(close_tag(name)))
            self._state = TOOLS
            self._on_close(name, out)
        elif state == TOOLS and name == "tools":
            self._state = TOP
        elif state == TOOLS and name == "message":
            self._error(
                f"the tools block not closed before {close_tag('message')}",
                f"блок tools не закрыт перед {close_tag('message')}",
            )
            self._state = ENDED
        elif state == TOP and name == "message":
            self._state = ENDED
        else:
            self._report_stray(close_tag(name))

    def _on_end_of_message(self, out: DeltaList) -> None:
        """`<|end_of_msg|>`: the message is over, whatever is still open."""
        self._close_all(Text(f"before {END_OF_MSG}", f"перед {END_OF_MSG}"), out)
        self._state = ENDED

    def _close_all(self, why: Text, out: DeltaList) -> None:
        """Close and report every block still open (`why`: before what, or CUT_OFF)."""
        if self._state == UNDECIDED:  # no tag at all: plain text is content
            self._decide(_Tag(END_OF_MSG), out)
        if self._state in _RAW:
            label = self._block_label()
            self._error(f"{label} not closed {why.en}", f"{label} не закрыт {why.ru}")
            self._end_raw_block()
        self._commit_argument()
        self._judge_stray()
        if self._state == CALL:
            self._drop_call(str(why))
            self._state = TOOLS
        if self._state == TOOLS:
            self._error(f"the tools block not closed {why.en}", f"блок tools не закрыт {why.ru}")

    def _on_end(self, out: DeltaList) -> None:
        """The text ended: decide, then report whatever is still open."""
        tag, self._tag = self._tag, None
        if tag is not None and not self._looks_cut_off(tag):
            self._text(tag.kind + tag.text(), out)  # `<|open|>` and text that can be no tag
        elif tag is not None:
            self._error(
                f"tag {snippet(tag.kind + tag.text())!r} cut off {CUT_OFF.en}: dropped",
                f"тег {snippet(tag.kind + tag.text())!r} оборван: текст кончился "
                "(например, по max_tokens?): пропущен",
            )
        self._close_all(CUT_OFF, out)

    # -- calls ---------------------------------------------------------------------------------

    def _finish_call(self, out: DeltaList) -> None:
        """`<|close|>call<|sep|>`: the call is whole; emit it (if it has a name)."""
        call = self._call
        assert call is not None
        self._call = None
        arguments = _call_arguments(call)
        expected = str(call.number)
        if call.index_attr is None:
            call.problem("no index attribute", "нет атрибута index")
        elif call.index_attr != expected:
            call.problem(
                f"index={call.index_attr!r}, expected {expected!r}",
                f"index={call.index_attr!r}, ожидался {expected!r}",
            )
        if not call.name:
            call.problem(
                f"no tool name (tool attribute): call dropped, "
                f"its arguments were {snippet(arguments)!r}",
                f"нет имени инструмента (атрибут tool): вызов пропущен, "
                f"его аргументы: {snippet(arguments)!r}",
            )
        self._errors.extend(call.problems)
        if not call.name:
            return
        position = len(self._tool_calls)
        call_id = f"functions.{call.name}:{self._call_offset + position}"
        self._tool_calls.append(tool_call_dict(call_id, call.name, arguments))
        out.call_header(position, call_id, call.name, arguments)

    def _drop_call(self, why: str) -> None:
        """A call that did not end with `<|close|>call<|sep|>`: not returned, but reported."""
        call = self._call
        assert call is not None
        self._call = None
        read = ", ".join(
            f"{a.key}={snippet(''.join(a.parts), 30)!r}" for a in call.arguments if a.key
        )
        self._error(
            f"no {close_tag('call')} {why}: the call is not whole and is "
            f"NOT returned (read so far: {read or 'no arguments'})",
            f"нет {close_tag('call')} {why}: вызов не целый и НЕ "
            f"возвращён (прочитано: {read or 'аргументов нет'})",
            call.label(),
        )
        self._errors.extend(call.problems)


def parse_kimi_xtml(text: str, opened: str | None = None, call_offset: int = 0) -> ParseResult:
    """Read Kimi K3 XTML output into reasoning, content, whole tool calls and errors.

    `opened`: the block the generation prompt opened, `"think"` (thinking on) or `"response"`;
    None decides from the text (see the module docstring). `call_offset`: the number of calls
    earlier in the conversation, so that invented ids `functions.NAME:N` stay unique.
    """
    return KimiXtmlStreamParser(opened, call_offset).parse_whole(text)


# --- rendering ---

_TOOLS_HEADER = "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n"
_DYNAMIC_TOOLS_HEADER = (
    "## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\n"
    "You have access to all existing and extended tools.\n"
    "Here are the specs for the extended tools.\n\n```json\n"
)
_EFFORT_TEXT = (
    "`thinking_effort` guides on how much to think in your thinking channel (not including the "
    "response channel), supported values include `low`, `medium`, `high`, and `max`.\n"
    "Now the system is invoked with `thinking_effort={effort}`."
)
_TOOL_CHOICE_TEXT = {
    "required": "The system is invoked with `tool_choice=required`.\n"
    "You MUST call tools in the next message.",
    "none": "The system is invoked with `tool_choice=none`.\n"
    "You MUST NOT call any tools in the next message.",
}
_END = close_tag("message") + END_OF_MSG
_RAW_JSON_TEXT = (
    "The system is invoked with `response_format={kind}`.\nYour response must be raw JSON data "
    "without markdown code blocks (```json) or any additional formatting."
)


def _sorted_json(value: Any) -> str:
    """Compact JSON with every object's keys sorted (the tool declarations, a response schema)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _value_type(value: Any) -> str:
    """The XTML `type` of an argument value (a bool is no number; anything else is an array)."""
    if isinstance(value, bool):  # before "number": a bool is an int
        return "boolean"
    kinds = {"null": type(None), "number": int | float, "string": str, "object": Mapping}
    return next((kind for kind, of in kinds.items() if isinstance(value, of)), "array")


def _value_text(value: Any) -> str:
    """A string as it is (raw, never escaped); any other value as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _content_text(content: Any) -> str:
    """A message's content: a string, or a list of parts (text parts, images as placeholders)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        IMAGE_PLACEHOLDER
        if part.get("type") in ("image", "image_url")
        else str(part.get("text", ""))
        for part in content
    )


def _system_message(kind: str, body: str) -> str:
    return open_tag("message", [("role", "system"), ("type", kind)]) + body.strip() + _END


def _function_of(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `function` part of an OpenAI tool call (or the call itself, if flat)."""
    function = call.get("function")
    return function if isinstance(function, Mapping) else call


def _render_arguments(arguments: Any) -> str:
    """Typed `argument` elements for an object; a `json` block for text that is no JSON object.

    OpenAI messages carry arguments as JSON text; servers decode it before rendering (vLLM does
    so for every model), so JSON text of an object is rendered as typed elements, as the model
    writes its calls. Other text is kept whole in a `json` block, as llama.cpp's template does.
    """
    if isinstance(arguments, str):
        if not arguments.strip():
            return ""
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            decoded = None
        if not isinstance(decoded, dict):
            return open_tag("json", [("type", "object")]) + arguments + close_tag("json")
        arguments = decoded
    if arguments is None:
        return ""
    if not isinstance(arguments, Mapping):
        raise ValueError(
            tr(
                f"tool call arguments must be an object or its JSON text, not {arguments!r}",
                f"аргументы вызова должны быть объектом или его JSON-текстом, а не {arguments!r}",
            )
        )
    return "".join(
        open_tag("argument", [("key", key), ("type", _value_type(value))])
        + _value_text(value)
        + close_tag("argument")
        for key, value in arguments.items()
    )


def _render_assistant(message: Mapping[str, Any], thinking: bool) -> str:
    """An assistant message: think (when thinking), response, then its tool calls."""
    parts = [open_tag("message", _name_attrs("assistant", message))]
    if thinking:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        parts.append(open_tag("think"))
        if reasoning is not None and str(reasoning).strip():
            parts.append(str(reasoning))
        parts.append(close_tag("think"))
    parts += [open_tag("response"), _content_text(message.get("content")), close_tag("response")]
    tool_calls = message.get("tool_calls")
    if tool_calls:
        parts.append(open_tag("tools"))
        for number, call in enumerate(tool_calls, start=1):
            function = _function_of(call)
            if function.get("name") is None:
                raise ValueError(
                    tr(
                        f"tool call {number} has no function name",
                        f"у вызова {number} нет имени функции",
                    )
                )
            parts += [
                open_tag("call", [("tool", function["name"]), ("index", number)]),
                _render_arguments(function.get("arguments", {})),
                close_tag("call"),
            ]
        parts.append(close_tag("tools"))
    parts.append(_END)
    return "".join(parts)


def _name_attrs(role: str, message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    attrs: list[tuple[str, Any]] = [("role", role)]
    if message.get("name"):
        attrs.append(("name", message["name"]))
    return attrs


def _render_tool_results(
    run: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]] | None
) -> str:
    """A run of tool messages, matched to the assistant's calls by `tool_call_id`.

    When every result names a call of the last assistant message, the results are written in the
    order of its `tool_calls`, each with that call's tool name; otherwise in the order given, the
    name taken from the message (`tool` or `name`) or from the call at the same position. `index`
    counts the results written since that assistant message, from 1.
    """
    calls = list(calls or [])

    def call_id(item: Mapping[str, Any]) -> Any:
        return item.get("tool_call_id", item.get("id"))

    known_ids = {str(c.get("id")) for c in calls if isinstance(c, Mapping) and c.get("id")}
    ordered: list[tuple[Mapping[str, Any], Any]] = [(message, None) for message in run]
    if run and all(call_id(m) is not None and str(call_id(m)) in known_ids for m in run):
        names: dict[str, Any] = {}  # each call id once, with the name of its first call
        for call in calls:
            if isinstance(call, Mapping) and call.get("id") is not None:
                names.setdefault(str(call["id"]), _function_of(call).get("name"))
        ordered = [(m, name) for cid, name in names.items() for m in run if str(call_id(m)) == cid]
    parts = []
    for number, (message, name) in enumerate(ordered, start=1):
        if name is None:
            name = message["tool"] if "tool" in message else message.get("name")
        if name is None and number <= len(calls):
            name = _function_of(calls[number - 1]).get("name")
        if name is None:
            raise ValueError(
                tr(
                    "a tool message needs a tool name: give it `tool_call_id` of a call of the "
                    "assistant message before it, or `name`",
                    "сообщению tool нужно имя инструмента: укажите `tool_call_id` вызова из "
                    "предыдущего сообщения ассистента или `name`",
                )
            )
        attrs = [("role", "tool"), ("tool", name), ("index", number)]
        parts.append(open_tag("message", attrs) + _content_text(message.get("content")) + _END)
    return "".join(parts)


def render_kimi_xtml(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    add_generation_prompt: bool = True,
    thinking: bool = True,
    thinking_effort: str | None = "max",
    response_format: Mapping[str, Any] | None = None,
) -> str:
    """Write the Kimi K3 prompt text for OpenAI-style `messages` (and `tools`).

    Sources. Kimi K3 ships **no Jinja chat template**: its tokenizer renders a conversation with
    a program (vLLM's K3 renderer calls it "a render program, not a Jinja template"). The one
    template there is, llama.cpp's `models/templates/Kimi-K3.jinja` (vendored as
    `data/templates/kimi_k3.jinja`), is a secondary reconstruction, not Moonshot's file. This
    function follows it, and the tests compare the two on several conversations; where they
    differ, this function follows the primary facts:

    - the tool declarations (and a response schema) are compact JSON with keys sorted by code
      point (`sort_keys=True`); the template sorts with Jinja's `dictsort`, which ignores case;
    - non-string argument values are compact JSON (`{"a":1}`, as vLLM's K3 parser documents the
      encoding); the template's `tojson` writes `{"a": 1}` under transformers' Jinja;
    - arguments given as JSON text (the OpenAI wire form) are rendered as typed elements, as
      servers decode them before rendering; the template writes such text as a `json` block;
    - a message of another role (`developer`, ...) raises ValueError; the template drops it.

    What is written, in order: a `tool-declare` system message with the tools; with thinking, a
    `thinking-effort` system message (`low`, `high` or `max`, or None for none); the messages
    (each ends `<|close|>message<|sep|><|end_of_msg|>`; an assistant message has a `think` block
    when thinking, a `response` block, and a `tools` block of calls numbered by `index` from 1, with
    no ids; a run of tool results is put in the order of the assistant's `tool_calls`, matched by
    `tool_call_id`, each carrying its call's tool name and an `index`; a system message with a
    `tools` list declares more tools); `tool_choice` `"required"` or `"none"` and a JSON
    `response_format` as system option messages (`"auto"` and a named function write nothing:
    K3 has no named choice); then, with `add_generation_prompt`, the opening of the assistant's
    message and of its `think` block (thinking) or `response` block.
    """
    if thinking and thinking_effort is not None and thinking_effort not in THINKING_EFFORTS:
        raise ValueError(
            tr(
                f"thinking_effort must be one of {', '.join(THINKING_EFFORTS)} or None, "
                f"not {thinking_effort!r}",
                f"thinking_effort должен быть одним из {', '.join(THINKING_EFFORTS)} или None, "
                f"а не {thinking_effort!r}",
            )
        )
    parts: list[str] = []
    if tools:
        parts.append(_tool_declaration(tools, _TOOLS_HEADER))
    if thinking and thinking_effort is not None:
        effort = _EFFORT_TEXT.format(effort=thinking_effort)
        parts.append(_system_message("thinking-effort", effort))
    calls: Sequence[Mapping[str, Any]] | None = None
    position = 0
    while position < len(messages):
        message = messages[position]
        role = message.get("role")
        if role == "tool":
            end = position
            while end < len(messages) and messages[end].get("role") == "tool":
                end += 1
            parts.append(_render_tool_results(messages[position:end], calls))
            position = end
            continue
        if role == "user" or (role == "system" and not message.get("tools")):
            parts.append(open_tag("message", _name_attrs(role, message)))
            parts.append(_content_text(message.get("content")) + _END)
        elif role == "system":
            parts.append(_tool_declaration(message["tools"], _DYNAMIC_TOOLS_HEADER))
        elif role == "assistant":
            calls = message.get("tool_calls")
            parts.append(_render_assistant(message, thinking))
        else:
            raise ValueError(
                tr(
                    f"message {position}: role {role!r} is not one K3 knows "
                    "(system, user, assistant, tool)",
                    f"сообщение {position}: роль {role!r} K3 не знает "
                    "(system, user, assistant, tool)",
                )
            )
        position += 1
    if isinstance(tool_choice, str) and tool_choice in _TOOL_CHOICE_TEXT:
        parts.append(_system_message("tool-choice", _TOOL_CHOICE_TEXT[tool_choice]))
    parts.append(_response_format_message(response_format))
    if add_generation_prompt:
        parts.append(open_tag("message", [("role", "assistant")]))
        parts.append(open_tag(THINK if thinking else RESPONSE))
    return "".join(parts)


def _tool_declaration(tools: Iterable[Mapping[str, Any]], header: str) -> str:
    body = header + _sorted_json(list(tools)) + "\n```"
    return open_tag("message", [("role", "system"), ("type", "tool-declare")]) + body + _END


def _response_format_message(response_format: Mapping[str, Any] | None) -> str:
    """The system option message for a JSON `response_format` ("" for none or text)."""
    if not response_format:
        return ""
    kind = response_format.get("type")
    if kind == "json_object":
        return _system_message("response-format", _RAW_JSON_TEXT.format(kind=kind))
    if kind == "json_schema":
        wrapper = response_format.get("json_schema")
        schema = wrapper.get("schema", wrapper) if isinstance(wrapper, Mapping) else wrapper
        body = (
            _RAW_JSON_TEXT.format(kind=kind)
            + "\nThe JSON data must match the following schema:\n```json\n"
            + _sorted_json(schema)
            + "\n```"
        )
        return _system_message("response-format", body)
    return ""
