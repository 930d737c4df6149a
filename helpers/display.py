"""Plain-text views of messages, tool calls, stream chunks and raw model output for the lessons.

Every `show_*` function prints (so a notebook cell's output is ordinary stdout that nbval can
compare) and has a `format_*` twin that returns the same text. The output is deterministic. Its
few labels ("(no tool calls)", "marker", ...) come in the notebook's language (`helpers.i18n`);
protocol words (`role`, `content`, `id`, `name`, `arguments`, `finish_reason`, `usage`) and all
that the model or the user wrote stay verbatim in both editions.

Conventions of the style:
- strings the model wrote (content, ids, names, arguments) are quoted with `repr`, so spaces,
  newlines and empty strings stay visible; protocol words (`role`, `finish_reason`) are bare;
- long text is cut at a fixed length and says how much was left out: `…[+120 chars]`;
- SDK objects (`ChatCompletionMessage`, `ChatCompletionChunk`, ...) and plain dicts are accepted
  alike: SDK objects go through `helpers.streaming.as_dict` first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from helpers.i18n import count, shorten, tr
from helpers.streaming import arguments_text, as_dict

CONTENT_LIMIT = 200  # characters of a message's content shown by `show_messages`
FRAGMENT_LIMIT = 120  # characters of one streamed fragment shown by `format_chunk`

# Special markers: `<|anything|>` tokens (Kimi-K2's tool-call markers, `<|im_start|>`, ...) and the
# Hermes/Qwen `<tool_call>` tags, which are ordinary text but play the same role.
_MARKER_RE = re.compile(r"(<\|[^<>|\s]+\|>|</?tool_call>)")  # one group: re.split keeps it

_USAGE_ORDER = ("prompt_tokens", "completion_tokens", "total_tokens")


def _content_text(content: Any) -> str | None:
    """Message content as text: a string, None, or a list of parts (text kept, others named)."""
    if content is None or isinstance(content, str):
        return content
    pieces = []
    for part in content:
        part = as_dict(part)
        if isinstance(part, Mapping) and part.get("type") == "text":
            pieces.append(str(part.get("text", "")))
        else:
            kind = part.get("type", "part") if isinstance(part, Mapping) else type(part).__name__
            pieces.append(f"[{kind}]")
    return "".join(pieces)


# --------------------------------------------------------------------------- messages


def _call_fields(call: Any, limit: int) -> tuple[Any, Any, str]:
    """A tool call's id, name and shortened arguments (SDK object or dict)."""
    call = as_dict(call)
    function = as_dict(call.get("function") or {})
    arguments = shorten(arguments_text(function.get("arguments", "")), limit)
    return call.get("id", ""), function.get("name", ""), arguments


def format_call(call: Any, limit: int = CONTENT_LIMIT) -> str:
    """One tool call as `name(arguments) [id]`."""
    call_id, name, arguments = _call_fields(call, limit)
    return f"{name}({arguments}) [{call_id}]"


def _message_lines(position: int, message: Any, limit: int) -> list[str]:
    """The block of one message: a header line, then its content and calls, indented."""
    message = as_dict(message)
    header = f"[{position}] {message.get('role', '?')}"
    for key in ("tool_call_id", "name"):
        if message.get(key) is not None:
            header += f"  {key}={message[key]}"
    lines = [header]
    for key in ("reasoning_content", "reasoning", "refusal"):  # extra text some servers send
        if message.get(key):
            lines.append(f"    {key}: {shorten(str(message[key]), limit)!r}")
    content = _content_text(message.get("content"))
    if not content:  # None or ''
        lines.append(f"    (content: {content!r})")
    else:
        lines += ["    " + line for line in shorten(content, limit).split("\n")]
    for call in message.get("tool_calls") or []:
        lines.append("    -> " + format_call(call, limit))
    return lines


def format_messages(messages: Iterable[Any], limit: int = CONTENT_LIMIT) -> str:
    """The conversation history as text, one block per message."""
    lines: list[str] = []
    for position, message in enumerate(messages):
        lines += _message_lines(position, message, limit)
    return "\n".join(lines) if lines else tr("(no messages)", "(сообщений нет)")


def show_messages(messages: Iterable[Any], limit: int = CONTENT_LIMIT) -> None:
    """Print the conversation history: role, content, `name(arguments) [id]` calls, results."""
    print(format_messages(messages, limit))


# --------------------------------------------------------------------------- tables


def _width(text: str) -> int:
    """Columns a string takes in a terminal or a notebook's monospace output (CJK counts 2)."""
    width = 0
    for char in text:
        if not unicodedata.combining(char):  # an accent on the previous letter takes no column
            width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def format_table(rows: Iterable[Sequence[Any]], headers: Sequence[Any]) -> str:
    """An aligned text table; a cell with newlines spans several lines of its row."""
    header_cells = [str(h) for h in headers]
    body = [[str(cell).split("\n") for cell in row] for row in rows]
    widths = [_width(h) for h in header_cells]
    for row in body:
        if len(row) != len(header_cells):
            raise ValueError(f"row has {len(row)} cells but there are {len(header_cells)} headers")
        for column, cell_lines in enumerate(row):
            widths[column] = max([widths[column], *(_width(line) for line in cell_lines)])

    def line(cells: Sequence[str]) -> str:
        padded = (cell + " " * (w - _width(cell)) for cell, w in zip(cells, widths, strict=True))
        return "  ".join(padded).rstrip()

    out = [line(header_cells), line(["-" * w for w in widths])]
    for row in body:
        height = max((len(cell_lines) for cell_lines in row), default=1)
        for i in range(height):
            out.append(line([cell[i] if i < len(cell) else "" for cell in row]))
    return "\n".join(out)


def compare_table(rows: Iterable[Sequence[Any]], headers: Sequence[Any]) -> None:
    """Print an aligned text table (e.g. Kimi-K2 and Qwen formats side by side)."""
    print(format_table(rows, headers))


def format_tool_calls(tool_calls: Iterable[Any] | None, limit: int = CONTENT_LIMIT) -> str:
    """Tool calls as a table: index, id, name, arguments."""
    rows = [(index, *_call_fields(call, limit)) for index, call in enumerate(tool_calls or [])]
    if not rows:
        return tr("(no tool calls)", "(вызовов нет)")
    return format_table(rows, ("#", "id", "name", "arguments"))


def show_tool_calls(tool_calls: Iterable[Any] | None, limit: int = CONTENT_LIMIT) -> None:
    """Print tool calls (SDK objects or dicts) as a small aligned table."""
    print(format_tool_calls(tool_calls, limit))


# --------------------------------------------------------------------------- stream chunks


def _quoted(text: Any) -> str:
    """A model-written string, shortened and quoted so whitespace stays visible."""
    return repr(shorten(str(text), FRAGMENT_LIMIT))


def _call_piece(piece: Any) -> str:
    """One tool-call fragment of a delta: `tool_calls[0] id='…' name='…' args='…'`."""
    piece = as_dict(piece)
    function = as_dict(piece.get("function") or {})
    text = f"tool_calls[{piece.get('index', '?')}]"
    if piece.get("id") is not None:
        text += f" id={_quoted(piece['id'])}"
    if function.get("name") is not None:
        text += f" name={_quoted(function['name'])}"
    if function.get("arguments") is not None:
        text += f" args={_quoted(arguments_text(function['arguments']))}"
    return text


def format_delta(delta: Any) -> str:
    """The non-null fields of one delta on one line (also for the stream parsers' bare deltas)."""
    delta = as_dict(delta) or {}
    parts = []
    if delta.get("role") is not None:
        parts.append(f"role={delta['role']}")
    if delta.get("content") is not None:
        parts.append(f"content={_quoted(delta['content'])}")
    for key, value in delta.items():  # e.g. reasoning_content from thinking models
        if key not in ("role", "content", "tool_calls") and value is not None:
            parts.append(f"{key}={_quoted(value)}")
    parts += [_call_piece(piece) for piece in delta.get("tool_calls") or []]
    return " | ".join(parts)


def format_usage(usage: Any) -> str:
    """Token counts as `usage prompt_tokens=5 completion_tokens=7 total_tokens=12`."""
    usage = as_dict(usage)
    keys = [k for k in _USAGE_ORDER if k in usage]
    keys += sorted(k for k, v in usage.items() if k not in _USAGE_ORDER and isinstance(v, int))
    return "usage " + " ".join(f"{k}={usage[k]}" for k in keys)


def format_chunk(chunk: Any) -> str:
    """One streamed chunk (SDK object or dict) as one line of its non-null delta fields."""
    chunk = as_dict(chunk)
    if "choices" not in chunk and "object" not in chunk:
        return format_delta(chunk) or tr("(empty delta)", "(пустая дельта)")
    parts = []
    choices = [as_dict(c) for c in chunk.get("choices") or []]
    for choice in choices:
        prefix = "" if choice.get("index", 0) == 0 else f"choice[{choice['index']}] "
        delta_text = format_delta(choice.get("delta") or {})
        if delta_text:
            parts.append(prefix + delta_text)
        if choice.get("finish_reason") is not None:
            parts.append(f"{prefix}finish_reason={choice['finish_reason']}")
        if choice.get("usage"):  # Moonshot puts usage inside the last choice
            parts.append(prefix + format_usage(choice["usage"]))
    if chunk.get("usage"):
        parts.append(format_usage(chunk["usage"]))
    if not parts:
        if choices:
            return tr("(empty delta)", "(пустая дельта)")
        return tr("(no choices)", "(choices пуст)")
    return " | ".join(parts)


def format_chunks(chunks: Iterable[Any], limit: int | None = None) -> str:
    """Numbered chunk lines, the first `limit` of them if given (a generator is consumed)."""
    chunks = list(chunks)
    shown = chunks if limit is None else chunks[:limit]
    digits = len(str(max(len(shown) - 1, 0)))
    lines = [f"{i:>{digits}}  {format_chunk(c)}" for i, c in enumerate(shown)]
    if len(shown) < len(chunks):
        more = count(
            len(chunks) - len(shown),
            ("more chunk", "more chunks"),
            ("фрагмент", "фрагмента", "фрагментов"),
        )
        lines.append(tr(f"... {more}", f"... и ещё {more}"))
    return "\n".join(lines) if lines else tr("(no chunks)", "(фрагментов нет)")


def show_chunks(chunks: Iterable[Any], limit: int | None = None) -> None:
    """Print a list of chunks, one numbered line each."""
    print(format_chunks(chunks, limit))


# --------------------------------------------------------------------------- raw model text


def split_markers(text: str) -> list[tuple[bool, str]]:
    """Cut raw text into `(is_marker, piece)` pairs (markers: `<|...|>`, `<tool_call>` tags)."""
    # re.split alternates text and marker; markers sit at the odd positions
    pieces = _MARKER_RE.split(text)
    return [(i % 2 == 1, piece) for i, piece in enumerate(pieces) if piece]


def format_raw(text: str) -> str:
    """Raw model output, one piece per line: `marker <|...|>` or `text   '...'` (repr)."""
    marker, plain = tr("marker  ", "маркер  "), tr("text    ", "текст   ")
    lines = [
        f"{marker}{piece}" if is_marker else f"{plain}{piece!r}"
        for is_marker, piece in split_markers(text)
    ]
    return "\n".join(lines) if lines else tr("(empty text)", "(пустой текст)")


def show_raw(text: str) -> None:
    """Print raw model output with every special marker on its own line, text quoted between."""
    print(format_raw(text))
