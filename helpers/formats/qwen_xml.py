"""Qwen3-Coder / Qwen3.5+ XML tool-call text: batch and streaming parsers, and a renderer.

Qwen3-Coder and every Qwen3.5 / 3.6 / 3.8 model write each call as XML-like tags, one parameter
per tag, values as plain text:

    Let me check.

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

Rules this module follows (the same in `parse_qwen_xml` and `QwenXmlStreamParser`):
- a call is a `<function=NAME>` block, normally inside `<tool_call>`; bare `<function=...>`
  blocks (no `<tool_call>` around them) are calls too, as in vLLM's `qwen3_coder` parser;
- one leading and one trailing "\\n" are stripped from every value; with `tools`, the value is
  then converted by the type of that parameter in the tool's JSON schema exactly as vLLM's
  `qwen3_coder` parser does (`convert_parameter`); without `tools`, values stay strings;
- `arguments` is JSON text: `{"key": value, ...}` in the order the parameters were written
  (a parameter written twice is kept twice, so `json.loads` keeps the last one, as vLLM does;
  it is reported);
- ids: the text carries none, so they are invented in order within one output: `call_0`,
  `call_1`, ... (like `parse_hermes`; a server invents its own);
- content is all text outside calls, joined as written, then `.strip()`-ed (vLLM keeps only the
  text before the first call; we also keep text after the calls);
- a call, function or parameter cut off at the end of the text (no closing tag) is still parsed
  and reported; a closing tag that closes nothing is dropped and reported; problems go to
  `ParseResult.errors`, never exceptions;
- reasoning is split off first (`helpers.formats.think`), as for Qwen3's Hermes format:
  `<think>...</think>` goes to `ParseResult.reasoning` (stream: `{"reasoning_content": ...}`
  deltas); Qwen3.5's generation prompt opens `<think>` itself, so its output shows only
  `</think>`, which is read as "the prompt opened it"; an unclosed `<think>` ends at `<tool_call>`.

`parse_qwen_xml` splits the reasoning off with `split_reasoning`, then runs the stream parser's
state machine over the visible text at once: one set of rules for the tags. The tests compare it
with an independent re-implementation of vLLM's regular expressions, and the stream with the
batch result under random chunkings.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from helpers.formats._common import (
    CUT_OFF,
    DeltaList,
    ParseResult,
    StreamParser,
    snippet,
    tool_call_dict,
)
from helpers.formats.think import parse_with_reasoning
from helpers.i18n import tr

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAMETER_OPEN = "<parameter="
PARAMETER_CLOSE = "</parameter>"
QWEN_XML_TAGS = (
    TOOL_CALL_OPEN,
    TOOL_CALL_CLOSE,
    FUNCTION_OPEN,
    FUNCTION_CLOSE,
    PARAMETER_OPEN,
    PARAMETER_CLOSE,
)

# Schema type names vLLM's qwen3_coder parser treats as text, booleans, and JSON containers.
_STRING_TYPES = {"string", "str", "text", "varchar", "char", "enum"}
_BOOLEAN_TYPES = {"boolean", "bool", "binary"}
_CONTAINER_TYPES = {"object", "array", "arr"}
_INTEGER_PREFIXES = ("int", "uint", "long", "short", "unsigned")

# ast.literal_eval is not eval (it accepts literals only), but deep or huge input can still
# exhaust the parser: such values are not given to it and stay strings.
LITERAL_EVAL_MAX_CHARS = 10_000
LITERAL_EVAL_MAX_DEPTH = 50
_NESTING_RE = re.compile(r"[\[\]{}()]")


def _nesting_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (quotes ignored: a cheap upper bound)."""
    depth = deepest = 0
    for match in _NESTING_RE.finditer(text):
        depth += 1 if match.group() in "[{(" else -1
        deepest = max(deepest, depth)
    return deepest


def _literal(value: str) -> tuple[bool, Any]:
    """`ast.literal_eval(value)`, guarded: (True, result) or (False, None) when it fails."""
    if len(value) > LITERAL_EVAL_MAX_CHARS or _nesting_depth(value) > LITERAL_EVAL_MAX_DEPTH:
        return False, None
    try:
        return True, ast.literal_eval(value)
    except Exception:  # SyntaxError, ValueError, MemoryError, RecursionError...: keep the text
        return False, None


def parameter_types(tools: Sequence[Mapping[str, Any]] | None, name: str) -> dict[str, Any] | None:
    """The `properties` of function `name` in `tools` ({} if it has none), None without tools."""
    if tools is None:
        return None
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and function.get("name") == name:
            parameters = function.get("parameters")
            properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
            return dict(properties) if isinstance(properties, Mapping) else {}
    return {}


def convert_parameter(
    value: str, key: str, properties: Mapping[str, Any] | None
) -> tuple[Any, str | None]:
    """A parameter's text as vLLM's qwen3_coder parser types it; plus a note when it had to guess.

    `properties` is the function's schema properties (None: no tools were given, keep text).
    "null" is None for every parameter; integer types go through `int`, number types through
    `float` (a whole number becomes an int), booleans are true only for "true"; objects and arrays
    are `json.loads`-ed, then `ast.literal_eval`-ed; whatever fails stays the text.
    """
    if properties is None:
        return value, None
    if value.lower() == "null":
        return None, None
    if key not in properties:
        note = (
            tr(
                "is not in the tool's schema; kept as a string",
                "нет в схеме инструмента; оставлен строкой",
            )
            if properties
            else None
        )
        return value, note
    schema = properties[key]
    kind = "string"
    if isinstance(schema, Mapping) and "type" in schema:
        kind = str(schema["type"]).strip().lower()
    if kind in _STRING_TYPES:
        return value, None
    if kind.startswith(_INTEGER_PREFIXES):
        try:
            return int(value), None
        except ValueError:
            return value, tr(
                f"{snippet(value)!r} is not an integer; kept as a string",
                f"{snippet(value)!r} — не целое число; оставлено строкой",
            )
    if kind.startswith(("num", "float")):
        try:
            number = float(value)
            return (int(number) if number == int(number) else number), None
        except (ValueError, OverflowError):
            return value, tr(
                f"{snippet(value)!r} is not a finite number; kept as a string",
                f"{snippet(value)!r} — не конечное число; оставлено строкой",
            )
    if kind in _BOOLEAN_TYPES:
        lowered = value.lower()
        note = (
            None
            if lowered in ("true", "false")
            else tr(f"{snippet(value)!r} read as false", f"{snippet(value)!r} прочитано как false")
        )
        return lowered == "true", note
    if kind in _CONTAINER_TYPES or kind.startswith(("dict", "list")):
        try:
            return json.loads(value), None
        except (ValueError, RecursionError):
            pass  # not JSON: try a Python literal (single quotes, True/None), as vLLM does
    ok, result = _literal(value)
    if ok:
        return result, None
    return value, tr(
        f"{snippet(value)!r} is not a {kind} value; kept as a string",
        f"{snippet(value)!r} — не значение типа {kind}; оставлено строкой",
    )


def _strip_one_newline(value: str) -> str:
    """Remove one leading and one trailing newline (the template puts them around each value)."""
    value = value.removeprefix("\n")
    return value.removesuffix("\n")


def _json_value(value: Any) -> str:
    """One converted value as JSON text (non-ASCII kept; values JSON cannot hold become text)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # e.g. a set or bytes from literal_eval
        return json.dumps(repr(value), ensure_ascii=False)


class QwenXmlStreamParser(StreamParser):
    """Incremental Qwen XML parser: content streams as it comes, calls as soon as they are known.

    Any split of a text gives deltas that add up to `parse_qwen_xml(text, tools)`, and `.result`
    after `close()` equals it, errors included. Eager: a call's header (index, id, name) is sent
    when `>` ends the function name; each parameter is sent as `{"key": value` or `, "key": value`
    when it ends (its type needs the whole value); the closing `}` when the function ends. Each
    character is buffered at most once, and a partial tag at the end of a delta (`<param`) is held
    back by the `MarkerSplitter`, so the cost is linear in the output.
    """

    markers = QWEN_XML_TAGS
    reasoning_ends = (TOOL_CALL_OPEN,)

    def __init__(
        self, tools: Sequence[Mapping[str, Any]] | None = None, reasoning_open: bool | None = None
    ) -> None:
        """Start with nothing read; `tools` (the request's tool list) types the values;
        `reasoning_open` as in `parse_qwen_xml`."""
        super().__init__(reasoning_open)
        self._tools = tools
        self._in_block = False  # inside <tool_call> ... </tool_call>
        self._stray_text = False  # non-blank text inside a block, outside a function, reported
        self._name: list[str] | None = None  # the function name being read (before its ">")
        self._function: dict[str, Any] | None = None  # the open function: index, types, keys
        self._key: list[str] | None = None  # the parameter name being read (before its ">")
        self._param = ""  # the name of the open parameter, once its ">" was read
        self._value: list[str] | None = None  # the value of the open parameter

    # --- pieces of text ---------------------------------------------------------------------

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Route plain text to the name, key or value being read, to content, or away."""
        while piece:
            if self._name is not None:
                piece = self._read_name(piece, out)
            elif self._key is not None:
                piece = self._read_key(piece)
            elif self._value is not None:
                self._value.append(piece)
                return
            elif self._function is not None or self._in_block:
                if piece.strip() and not self._stray_text:
                    self._stray_text = True
                    if self._function is not None:
                        self._errors.append(
                            tr(
                                "text inside a function but outside its tags ignored",
                                "текст внутри функции, но вне её тегов пропущен",
                            )
                        )
                    else:
                        self._errors.append(
                            tr(
                                f"text inside a {TOOL_CALL_OPEN} block but outside its tags "
                                "ignored",
                                f"текст внутри блока {TOOL_CALL_OPEN}, но вне его тегов пропущен",
                            )
                        )
                return
            else:
                self._emit_content(piece, out)
                return

    def _read_name(self, piece: str, out: DeltaList) -> str:
        """Collect the function name up to ">"; at ">", start the call. Returns the rest."""
        assert self._name is not None
        end = piece.find(">")
        if end < 0:
            self._name.append(piece)
            return ""
        self._name.append(piece[:end])
        self._start_function(out)
        return piece[end + 1 :]

    def _read_key(self, piece: str) -> str:
        """Collect a parameter name up to ">"; at ">", start its value. Returns the rest."""
        assert self._key is not None
        end = piece.find(">")
        if end < 0:
            self._key.append(piece)
            return ""
        self._key.append(piece[:end])
        self._param, self._key = "".join(self._key), None
        self._value = []
        return piece[end + 1 :]

    # --- tags -------------------------------------------------------------------------------

    def _on_marker(self, tag: str, out: DeltaList) -> None:
        """Apply one tag: open or close a block, a function or a parameter."""
        if tag == PARAMETER_OPEN and (self._function is not None or self._name is not None):
            if self._name is not None:  # the function name never got its ">"
                self._start_function(out)
                self._errors.append(
                    tr(
                        f"{self._label()}: no '>' after the function name",
                        f"{self._label()}: нет '>' после имени функции",
                    )
                )
            self._end_parameter(
                tr(f"before the next {PARAMETER_OPEN}", f"перед следующим {PARAMETER_OPEN}"), out
            )
            self._key = []
            return
        if tag == PARAMETER_CLOSE:
            if self._key is not None or self._value is not None:
                self._end_parameter(None, out)
            else:
                self._errors.append(
                    tr(
                        f"{PARAMETER_CLOSE} without an open {PARAMETER_OPEN} ignored",
                        f"{PARAMETER_CLOSE} без открытого {PARAMETER_OPEN} пропущен",
                    )
                )
            return
        if tag == FUNCTION_CLOSE:
            if self._function is None and self._name is None:
                self._errors.append(
                    tr(
                        f"{FUNCTION_CLOSE} without an open {FUNCTION_OPEN} ignored",
                        f"{FUNCTION_CLOSE} без открытого {FUNCTION_OPEN} пропущен",
                    )
                )
            else:
                self._end_function(
                    None, tr(f"before {FUNCTION_CLOSE}", f"перед {FUNCTION_CLOSE}"), out
                )
            return
        if tag == PARAMETER_OPEN:  # no open function to hold it
            self._errors.append(
                tr(
                    f"{PARAMETER_OPEN} outside a function ignored",
                    f"{PARAMETER_OPEN} вне функции пропущен",
                )
            )
            return
        # <function=, <tool_call>, </tool_call>: each closes an open function first.
        if self._function is not None or self._name is not None:
            before = tr(f"before {tag}", f"перед {tag}")
            self._end_function(before, before, out)
        if tag == FUNCTION_OPEN:
            self._name = []
            self._stray_text = False
        elif tag == TOOL_CALL_OPEN:
            if self._in_block:
                self._errors.append(
                    tr(
                        f"{TOOL_CALL_OPEN} block without {TOOL_CALL_CLOSE} before the next "
                        f"{TOOL_CALL_OPEN}",
                        f"блок {TOOL_CALL_OPEN} без {TOOL_CALL_CLOSE} перед следующим "
                        f"{TOOL_CALL_OPEN}",
                    )
                )
            self._in_block, self._stray_text = True, False
        elif self._in_block:  # </tool_call>
            self._in_block = False
        else:
            self._errors.append(
                tr(
                    f"{TOOL_CALL_CLOSE} without an open {TOOL_CALL_OPEN} ignored",
                    f"{TOOL_CALL_CLOSE} без открытого {TOOL_CALL_OPEN} пропущен",
                )
            )

    def _on_end(self, out: DeltaList) -> None:
        """The text ended: close whatever is open, and say so."""
        if self._function is not None or self._name is not None:
            self._end_function(str(CUT_OFF), str(CUT_OFF), out)
        if self._in_block:
            self._errors.append(
                tr(
                    f"{TOOL_CALL_OPEN} block without {TOOL_CALL_CLOSE} {CUT_OFF.en}",
                    f"блок {TOOL_CALL_OPEN} без {TOOL_CALL_CLOSE} {CUT_OFF.ru}",
                )
            )
            self._in_block = False

    # --- calls ------------------------------------------------------------------------------

    def _label(self) -> str:
        """How errors name the open call."""
        assert self._function is not None
        index = self._function["index"]
        name = self._function["name"]
        return tr(
            f"call {index} (id 'call_{index}', {name!r})",
            f"вызов {index} (id 'call_{index}', {name!r})",
        )

    def _start_function(self, out: DeltaList) -> None:
        """The name is complete: register the call and send its header."""
        assert self._name is not None
        name, self._name = "".join(self._name), None
        index = len(self._tool_calls)
        self._function = {
            "index": index,
            "name": name,
            "types": parameter_types(self._tools, name),
            "keys": set(),
            "pieces": [],
        }
        self._tool_calls.append(tool_call_dict(f"call_{index}", name, ""))
        if not name.strip():
            self._errors.append(
                tr(
                    f"call {index} (id 'call_{index}'): the function name is empty",
                    f"вызов {index} (id 'call_{index}'): имя функции пусто",
                )
            )
        out.call_header(index, f"call_{index}", name)

    def _end_parameter(self, missing_end: str | None, out: DeltaList) -> None:
        """Close the open parameter: type its value and send it as an arguments fragment."""
        if self._key is None and self._value is None:
            return
        assert self._function is not None
        if self._key is not None:  # cut before the ">" of its name
            self._param, self._key, self._value = "".join(self._key), None, []
            self._errors.append(
                tr(
                    f"{self._label()}: no '>' after the parameter name",
                    f"{self._label()}: нет '>' после имени параметра",
                )
            )
        assert self._value is not None
        key = self._param
        raw = _strip_one_newline("".join(self._value))
        self._value = None
        label = tr(f"{self._label()}, parameter {key!r}", f"{self._label()}, параметр {key!r}")
        if missing_end:
            self._errors.append(
                tr(
                    f"{label}: no {PARAMETER_CLOSE} {missing_end}",
                    f"{label}: нет {PARAMETER_CLOSE} {missing_end}",
                )
            )
        if key in self._function["keys"]:
            self._errors.append(
                tr(
                    f"{label}: written twice; the last value wins",
                    f"{label}: записан дважды; действует последнее значение",
                )
            )
        self._function["keys"].add(key)
        value, note = convert_parameter(raw, key, self._function["types"])
        if note:
            self._errors.append(f"{label}: {note}")
        separator = ", " if self._function["pieces"] else "{"
        fragment = f"{separator}{json.dumps(key, ensure_ascii=False)}: {_json_value(value)}"
        self._add_arguments(fragment, out)

    def _end_function(self, missing_end: str | None, parameter_end: str, out: DeltaList) -> None:
        """Close the open function (and its open parameter): send the final `}`."""
        if self._name is not None:  # cut before the ">" of the function name
            self._start_function(out)
            self._errors.append(
                tr(
                    f"{self._label()}: no '>' after the function name",
                    f"{self._label()}: нет '>' после имени функции",
                )
            )
        assert self._function is not None
        self._end_parameter(parameter_end, out)
        if missing_end:
            self._errors.append(
                tr(
                    f"{self._label()}: no {FUNCTION_CLOSE} {missing_end}",
                    f"{self._label()}: нет {FUNCTION_CLOSE} {missing_end}",
                )
            )
        self._add_arguments("}" if self._function["pieces"] else "{}", out)
        self._function = None
        self._stray_text = False

    def _add_arguments(self, fragment: str, out: DeltaList) -> None:
        """Append an arguments fragment to the open call and send it."""
        assert self._function is not None
        index = self._function["index"]
        self._function["pieces"].append(fragment)
        self._tool_calls[index]["function"]["arguments"] += fragment
        out.arguments(index, fragment)


class _VisibleXmlParser(QwenXmlStreamParser):
    """The XML state machine alone, for text whose reasoning was already split off."""

    reasoning_ends = ()


def parse_qwen_xml(
    text: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    reasoning_open: bool | None = None,
) -> ParseResult:
    """Read Qwen3-Coder / Qwen3.5 raw output into reasoning, content, tool calls and errors.

    `tools` is the request's tool list (OpenAI shape): with it, parameter values are typed by the
    schema as vLLM does; without it they stay strings. `reasoning_open`: True when the prompt
    opened `<think>` (Qwen3.5's default generation prompt), False when it did not, None to decide
    from the text (a `</think>` before any `<think>` means the prompt opened it).
    """

    def parse_visible(visible: str) -> ParseResult:
        """The tags of the visible text, read by the same state machine as the stream."""
        parser = _VisibleXmlParser(tools)
        parser.feed(visible)
        parser.close()
        return parser.result

    return parse_with_reasoning(text, (TOOL_CALL_OPEN,), reasoning_open, parse_visible)


def _parameter_text(value: Any) -> str:
    """A value as the Qwen3.5 template writes it: strings as they are, anything else tojson."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _arguments_mapping(arguments: Any, name: str) -> Mapping[str, Any]:
    """Call arguments as a mapping (JSON text is loaded); a clear ValueError otherwise."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"arguments of {name!r} are not valid JSON: {snippet(arguments)!r} ({exc})"
            ) from exc
    if not isinstance(value, Mapping):
        raise ValueError(f"arguments of {name!r} must be a JSON object, not {snippet(repr(value))}")
    return value


def render_qwen_xml_tool_calls(tool_calls: Iterable[dict[str, Any]], content: str = "") -> str:
    """Write an assistant turn as Qwen3.5 generates it (the template's text after `assistant\\n`).

    Content, then a blank line before the first call when there is content; calls joined by a
    newline; each parameter on its own lines. Arguments may be JSON text or a mapping.
    """
    pieces = [content] if content else []
    calls = []
    for call in tool_calls:
        function = call.get("function", call)
        name = function["name"]
        lines = [TOOL_CALL_OPEN, f"{FUNCTION_OPEN}{name}>"]
        for key, value in _arguments_mapping(function.get("arguments", {}), name).items():
            lines += [f"{PARAMETER_OPEN}{key}>", _parameter_text(value), PARAMETER_CLOSE]
        lines += [FUNCTION_CLOSE, TOOL_CALL_CLOSE]
        calls.append("\n".join(lines))
    if calls:
        pieces.append("\n".join(calls))
    return "\n\n".join(pieces)
