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

Rules this module follows (`parse_qwen_xml` is `QwenXmlStreamParser` fed once, so they are the
same for both; engine behaviour as in vLLM's `qwen3_coder` parser @00d0a333, differences listed
in `docs/notes.md`):
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
- inside a parameter value, tag-like text is kept as text unless it is structural (see
  `QwenXmlStreamParser`), so a value may hold `</parameter>` or a whole example call;
- a call or parameter cut off at the end of the text (no closing tag) is still parsed and
  reported; a closing tag that closes nothing is dropped and reported; a `<function=` whose
  name never got its `>` or cannot be a name (`{{ tc.name }}`) is dropped and reported, as vLLM
  drops it; problems go to `ParseResult.errors`, never exceptions;
- reasoning is split off first, by the rules of `helpers.formats.think` (an unclosed `<think>`
  ends at a `<tool_call>` followed by `<function=`, as in vLLM's `qwen3` reasoning parser).

The tests run vLLM's and SGLang's published cases (`tests/engine_cases/`) and compare the stream
under random chunkings with the whole text fed at once.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from helpers.formats._common import (
    CUT_OFF,
    DeltaList,
    ParseResult,
    before,
    snippet,
    tool_call_dict,
    unopened,
)
from helpers.formats.stream import StreamParser
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
_WHOLE_NUMBER_RE = re.compile(r"[+-]?\d+")

# ast.literal_eval is not eval (it accepts literals only), but deep or huge input can still
# exhaust the parser: such values are not given to it and stay strings.
LITERAL_EVAL_MAX_CHARS = 10_000
LITERAL_EVAL_MAX_DEPTH = 50
_NESTING_RE = re.compile(r"[\[\]{}()]")


def _nesting_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (quotes ignored: a cheap upper bound)."""
    steps = (1 if match.group() in "[{(" else -1 for match in _NESTING_RE.finditer(text))
    return max(accumulate(steps, initial=0))


def _literal(value: str) -> tuple[bool, Any]:
    """`ast.literal_eval(value)`, guarded: (True, result) or (False, None) when it fails."""
    if len(value) > LITERAL_EVAL_MAX_CHARS or _nesting_depth(value) > LITERAL_EVAL_MAX_DEPTH:
        return False, None
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" is no news to a student
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
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


def schema_type(schema: Any) -> tuple[str, bool]:
    """A parameter schema's type name (lower case) and whether it admits null, as vLLM reads it.

    `{"type": "integer"}` -> ("integer", False); a type list `["integer", "null"]` -> its first
    non-null type, nullable; `anyOf` / `oneOf` -> the first non-null option's type, nullable when
    an option is `{"type": "null"}`; anything else is read as a string."""
    if not isinstance(schema, Mapping):
        return "string", False
    if "type" in schema:
        declared = schema["type"]
        kinds, fallback = (declared if isinstance(declared, list) else [declared]), "null"
    else:
        unions = (schema.get(union) for union in ("anyOf", "oneOf"))
        options = next((union for union in unions if isinstance(union, list)), None)
        if options is None:
            return "string", False
        kinds = [o["type"] for o in options if isinstance(o, Mapping) and "type" in o]
        fallback = "string"
    names = [str(kind).strip().lower() for kind in kinds]
    others = [name for name in names if name != "null"]
    return (others[0] if others else fallback), "null" in names


def _kept(value: str, english: str, russian: str) -> tuple[str, str]:
    """A value that could not be converted stays the text, with a note saying why."""
    shown = f"{snippet(value)!r}"
    return value, tr(
        f"{shown} {english}; kept as a string", f"{shown} — {russian}; оставлено строкой"
    )


def convert_parameter(
    value: str, key: str, properties: Mapping[str, Any] | None
) -> tuple[Any, str | None]:
    """A parameter's text as vLLM's qwen3_coder parser types it; plus a note when it had to guess.

    Follows vllm-project/vllm vllm/tool_parsers/qwen3coder_tool_parser.py @00d0a333.
    `properties` is the function's schema properties (None: no tools were given, keep text).
    A parameter the schema does not declare stays text. The type comes from `schema_type`
    (anyOf / oneOf / type lists understood). "null" and "None" are null when the schema admits
    null; a string parameter keeps any other text as it is, "null" included; for other types
    "null" / "None" are null. Integer types go through `int` (exact, any size); numbers too when
    written as whole numbers, else through `float` (a whole result becomes an int); booleans are
    true only for "true"; objects and arrays are `json.loads`-ed, then `ast.literal_eval`-ed (a
    JSON string holding a Python repr is decoded once more); whatever fails stays the text.
    """
    if properties is None:
        return value, None
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
    kind, nullable = schema_type(properties[key])
    lowered = value.lower()
    if nullable and lowered in ("null", "none"):
        return None, None
    if kind in _STRING_TYPES:
        return value, None
    if lowered in ("null", "none"):
        return None, None
    if kind.startswith(_INTEGER_PREFIXES):
        try:
            return int(value), None
        except ValueError:
            return _kept(value, "is not an integer", "не целое число")
    if kind.startswith(("num", "float")):
        if _WHOLE_NUMBER_RE.fullmatch(value.strip()):
            return int(value), None  # exact: no round trip through float
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return (int(number) if number.is_integer() else number), None
        return _kept(value, "is not a finite number", "не конечное число")
    if kind in _BOOLEAN_TYPES:
        note = (
            None
            if lowered in ("true", "false")
            else tr(f"{snippet(value)!r} read as false", f"{snippet(value)!r} прочитано как false")
        )
        return lowered == "true", note
    container = kind in _CONTAINER_TYPES or kind.startswith(("dict", "list"))
    if container:
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            pass  # not JSON: try a Python literal (single quotes, True/None), as vLLM does
        else:
            return _decode_repr(parsed), None
    ok, result = _literal(value)
    if ok:
        return (_decode_repr(result) if container else result), None
    return _kept(value, f"is not a {kind} value", f"не значение типа {kind}")


def _decode_repr(value: Any) -> Any:
    """A container value that came out as a string (a Python repr in JSON quotes): decode it."""
    if isinstance(value, str):
        ok, result = _literal(value)
        if ok:
            return result
    return value


def _json_value(value: Any) -> str:
    """One converted value as JSON text (non-ASCII kept; values JSON cannot hold become text)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # e.g. a set or bytes from literal_eval
        return json.dumps(repr(value), ensure_ascii=False)


_NAME_RE = re.compile(r"[^\s<>{}()\[\]\"'`]+")


class QwenXmlStreamParser(StreamParser):
    """Incremental Qwen XML parser: content streams as it comes, calls as soon as they are known.

    A call's header (index, id,
    name) is sent when `>` ends the function name; each parameter is sent as `{"key": value` or
    `, "key": value` when it ends (its type needs the whole value); the closing `}` when the
    function ends.

    Inside a parameter value, tags are text unless they are structural, as vLLM's
    `qwen3_coder` parser decides (@00d0a333): a `</parameter>` ends the value only when the next
    thing after whitespace is the end of the text, `</function>`, a tool-call tag, or a
    `<parameter=NAME>` whose NAME the schema declares; a `<parameter=NAME>` inside a value ends it
    (a missing `</parameter>`) only for a declared NAME not written yet; a `<function=` inside a
    value opens a nested literal call whose `</function>` is text too; a `</parameter>` that
    closes a literal `<parameter=...>` is text unless `</function>` or `</tool_call>` follows it
    outside any literal call. So a file written through a tool may itself hold tool-call
    examples; an undeclared parameter written after a `</parameter>` becomes text of the value
    before it, which `errors` reports. Each character is buffered at most once and a held
    decision waits only for whitespace and one tag name, so the cost stays linear.
    """

    markers = QWEN_XML_TAGS
    reasoning_ends = (TOOL_CALL_OPEN,)
    reasoning_follower = FUNCTION_OPEN

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
        self._reset_value_state()

    def _reset_value_state(self) -> None:
        """Forget the tags seen inside the value that just ended."""
        self._param_depth = 0  # literal <parameter=...> opened inside the value
        self._call_depth = 0  # literal <function=...> opened inside the value
        # A closing tag (PARAMETER_CLOSE or FUNCTION_CLOSE, first) and whitespace, not yet judged.
        self._pending: list[str] | None = None
        self._probe: list[str] | None = None  # the name after a <parameter= inside a value
        # The held </parameter> (and whitespace) right before that <parameter=, if there was one.
        self._probe_prefix = ""

    # --- pieces of text ---------------------------------------------------------------------

    def _on_text(self, piece: str, out: DeltaList) -> None:
        """Route plain text to the name, key or value being read, to content, or away."""
        while piece:
            name = next((b for b in (self._name, self._key, self._probe) if b is not None), None)
            if name is not None:  # a function, parameter or probed name: read up to its ">"
                end = piece.find(">")
                if end < 0:
                    name.append(piece)
                    return
                name.append(piece[:end])
                piece = piece[end + 1 :]
                if name is self._name:
                    self._start_function(True, out)
                elif name is self._key:
                    self._open_value("".join(name))
                else:
                    self._judge_probe(out)
            elif self._pending is not None:
                if not piece.strip():
                    self._pending.append(piece)
                    return
                self._literal_pending()  # text after the closing tag: it was text
            elif self._value is not None:
                self._value.append(piece)
                return
            elif self._function is not None or self._in_block:
                self._note_stray_text(piece)
                return
            else:
                self._emit_content(piece, out)
                return

    def _note_stray_text(self, piece: str) -> None:
        """Report (once per block or function) text that stands outside every tag."""
        if not piece.strip() or self._stray_text:
            return
        self._stray_text = True
        if self._function is not None:
            self._error(
                "text inside a function but outside its tags ignored",
                "текст внутри функции, но вне её тегов пропущен",
            )
        else:
            self._error(
                f"text inside a {TOOL_CALL_OPEN} block but outside its tags ignored",
                f"текст внутри блока {TOOL_CALL_OPEN}, но вне его тегов пропущен",
            )

    def _open_value(self, key: str) -> None:
        """A parameter's name is complete: its value starts."""
        self._param, self._key = key, None
        self._value = []
        self._reset_value_state()

    def _judge_probe(self, out: DeltaList) -> None:
        """The name after a `<parameter=` met inside a value is complete: judge it."""
        assert self._probe is not None and self._function is not None
        name, self._probe = "".join(self._probe), None
        declared = self._function["types"]
        known = not declared or name in declared  # no schema to check against: any name
        if self._probe_prefix:
            structural = known  # </parameter> then a declared parameter: the value had ended
        else:
            written = name in self._function["keys"] or name == self._param
            structural = known and not written  # a missing </parameter> before the next one
        if structural:
            missing = None if self._probe_prefix else before(PARAMETER_OPEN, next_one=True)
            self._end_parameter(missing, out)
            self._open_value(name)
        else:
            assert self._value is not None
            if self._probe_prefix:  # a student would expect a new parameter here: say why
                self._error(
                    f"{self._label()}, parameter {self._param!r}: {PARAMETER_CLOSE}"
                    f"{PARAMETER_OPEN}{name}> kept as text of the value, since the tool's "
                    f"schema has no parameter {name!r} (as vLLM reads it)",
                    f"{self._label()}, параметр {self._param!r}: {PARAMETER_CLOSE}"
                    f"{PARAMETER_OPEN}{name}> оставлен текстом значения: в схеме "
                    f"инструмента нет параметра {name!r} (так читает vLLM)",
                )
            self._value.append(f"{self._probe_prefix}{PARAMETER_OPEN}{name}>")
            self._param_depth += 1

    def _literal_pending(self) -> None:
        """The closing tag held back was text inside the value after all."""
        assert self._pending is not None and self._value is not None
        self._value.append("".join(self._pending))
        if self._pending[0] == PARAMETER_CLOSE and self._param_depth:
            self._param_depth -= 1  # it closed a literal <parameter=...>
        self._pending = None

    def _literal_probe(self) -> None:
        """A `<parameter=` inside a value never got its ">": it was text."""
        assert self._probe is not None and self._value is not None
        self._value.append(f"{self._probe_prefix}{PARAMETER_OPEN}{''.join(self._probe)}")
        self._probe = None

    # --- tags -------------------------------------------------------------------------------

    def _on_marker(self, tag: str, out: DeltaList) -> None:
        """Apply one tag: inside a value it may be text; otherwise it opens or closes something."""
        if self._probe is not None:
            self._literal_probe()
        if self._pending is not None and self._resolve_pending(tag, out):
            return
        if self._value is not None and self._key is None:
            self._value_tag(tag)
            return
        self._structural_tag(tag, out)

    def _resolve_pending(self, tag: str, out: DeltaList) -> bool:
        """Judge the held closing tag by the tag that follows it; True when `tag` is used up."""
        assert self._pending is not None
        parameter_close = self._pending[0] == PARAMETER_CLOSE
        if parameter_close and self._param_depth:
            # It may close a literal <parameter=...> inside the value, or (a value that wrote
            # an undeclared parameter) the value itself: only a call's end says the latter.
            if tag in (FUNCTION_CLOSE, TOOL_CALL_CLOSE) and not self._call_depth:
                self._end_pending(out)
            else:
                self._literal_pending()
        elif parameter_close and tag == PARAMETER_OPEN:  # judged by its name: declared or not
            self._probe_prefix, self._pending = "".join(self._pending), None
            self._probe = []
            return True
        elif parameter_close and tag == PARAMETER_CLOSE:  # the first was text; hold this one
            self._literal_pending()
            self._pending = [tag]
            return True
        elif parameter_close or tag in (TOOL_CALL_CLOSE, TOOL_CALL_OPEN):
            # </parameter> before a function's end or a call tag; </function> before a call tag
            self._end_pending(out)
        else:
            self._literal_pending()
        return False

    def _end_pending(self, out: DeltaList) -> None:
        """The closing tag held back was structural: end its parameter or function."""
        assert self._pending is not None
        kind, self._pending = self._pending[0], None
        if kind == PARAMETER_CLOSE:
            self._end_parameter(None, out)
        else:
            self._end_function(None, before(FUNCTION_CLOSE), out)

    def _value_tag(self, tag: str) -> None:
        """A tag inside a parameter value: text, a nested literal, or a closing tag to judge."""
        assert self._value is not None
        if tag == PARAMETER_CLOSE:  # judged by what follows (nested or not)
            self._pending = [tag]
        elif tag == PARAMETER_OPEN:
            self._probe, self._probe_prefix = [], ""
        elif tag == FUNCTION_CLOSE and not self._call_depth:
            self._pending = [tag]
        else:
            if tag == FUNCTION_OPEN:
                self._call_depth += 1
            elif tag == FUNCTION_CLOSE:
                self._call_depth -= 1
            self._value.append(tag)

    def _structural_tag(self, tag: str, out: DeltaList) -> None:
        """Apply one tag outside a value: open or close a block, a function or a parameter."""
        in_function = self._function is not None or self._name is not None
        if tag in (FUNCTION_OPEN, TOOL_CALL_OPEN, TOOL_CALL_CLOSE) and in_function:
            self._end_function(before(tag), before(tag), out)  # a call tag ends the function
        if tag == PARAMETER_OPEN and in_function:
            if self._name is not None:  # the function name never got its ">"
                self._start_function(False, out)
            self._end_parameter(before(PARAMETER_OPEN, next_one=True), out)
            self._key = []
        elif tag == PARAMETER_OPEN:  # no open function to hold it
            self._error(
                f"{PARAMETER_OPEN} outside a function ignored",
                f"{PARAMETER_OPEN} вне функции пропущен",
            )
        elif tag == PARAMETER_CLOSE and (self._key is not None or self._value is not None):
            self._end_parameter(None, out)
        elif tag == PARAMETER_CLOSE:
            self._errors.append(unopened(PARAMETER_CLOSE, PARAMETER_OPEN))
        elif tag == FUNCTION_CLOSE and in_function:
            self._end_function(None, before(FUNCTION_CLOSE), out)
        elif tag == FUNCTION_CLOSE:
            self._errors.append(unopened(FUNCTION_CLOSE, FUNCTION_OPEN))
        elif tag == FUNCTION_OPEN:
            self._name = []
            self._stray_text = False
        elif tag == TOOL_CALL_OPEN:
            if self._in_block:
                self._error(
                    f"{TOOL_CALL_OPEN} block without {TOOL_CALL_CLOSE} before the next "
                    f"{TOOL_CALL_OPEN}",
                    f"блок {TOOL_CALL_OPEN} без {TOOL_CALL_CLOSE} перед следующим {TOOL_CALL_OPEN}",
                )
            self._in_block, self._stray_text = True, False
        elif self._in_block:  # </tool_call>
            self._in_block = False
        else:
            self._errors.append(unopened(TOOL_CALL_CLOSE, TOOL_CALL_OPEN))

    def _on_end(self, out: DeltaList) -> None:
        """The text ended: close whatever is open, and say so."""
        if self._probe is not None:
            self._literal_probe()
        if self._pending is not None:  # a closing tag at the very end: it was structural
            self._end_pending(out)
        if self._function is not None or self._name is not None:
            self._end_function(str(CUT_OFF), str(CUT_OFF), out)
        if self._in_block:
            self._error(
                f"{TOOL_CALL_OPEN} block without {TOOL_CALL_CLOSE} {CUT_OFF.en}",
                f"блок {TOOL_CALL_OPEN} без {TOOL_CALL_CLOSE} {CUT_OFF.ru}",
            )
            self._in_block = False

    # --- calls ------------------------------------------------------------------------------

    def _label(self) -> str:
        """How errors name the open call."""
        assert self._function is not None
        index = self._function["index"]
        name = self._function["name"]
        if index is None:
            return tr(f"dropped call {name!r}", f"отброшенный вызов {name!r}")
        return tr(
            f"call {index} (id 'call_{index}', {name!r})",
            f"вызов {index} (id 'call_{index}', {name!r})",
        )

    def _start_function(self, closed: bool, out: DeltaList) -> None:
        """The name is complete (`closed`: by its ">"): register the call and send its header.

        A name that cannot be a function's (no ">", empty, whitespace, template syntax such as
        `{{ tc.name }}`) is not a call, as in vLLM: its body is read and dropped, and reported."""
        assert self._name is not None
        name, self._name = "".join(self._name), None
        valid = closed and _NAME_RE.fullmatch(name) is not None
        index = len(self._tool_calls) if valid else None
        self._function = {
            "index": index,
            "name": name,
            "types": parameter_types(self._tools, name),
            "keys": set(),
            "pieces": [],
        }
        if not valid:
            why = (
                tr("no '>' after the function name", "нет '>' после имени функции")
                if not closed
                else tr("this is not a function name", "это не имя функции")
            )
            self._error(
                f"{FUNCTION_OPEN}{snippet(name)!r}: {why}; the call is dropped",
                f"{FUNCTION_OPEN}{snippet(name)!r}: {why}; вызов отброшен",
            )
            return
        self._tool_calls.append(tool_call_dict(f"call_{index}", name, ""))
        out.call_header(index, f"call_{index}", name)

    def _end_parameter(self, missing_end: str | None, out: DeltaList) -> None:
        """Close the open parameter: type its value and send it as an arguments fragment."""
        if self._key is None and self._value is None:
            return
        assert self._function is not None
        if self._probe is not None:
            self._literal_probe()
        if self._pending is not None:
            self._literal_pending()
        if self._key is not None:  # cut before the ">" of its name
            self._param, self._key, self._value = "".join(self._key), None, []
            self._error(
                f"{self._label()}: no '>' after the parameter name",
                f"{self._label()}: нет '>' после имени параметра",
            )
        assert self._value is not None
        key = self._param
        # One leading and one trailing newline: the template puts them around each value.
        raw = "".join(self._value).removeprefix("\n").removesuffix("\n")
        self._value = None
        self._reset_value_state()
        label = tr(f"{self._label()}, parameter {key!r}", f"{self._label()}, параметр {key!r}")
        if missing_end:
            self._error(
                f"{label}: no {PARAMETER_CLOSE} {missing_end}",
                f"{label}: нет {PARAMETER_CLOSE} {missing_end}",
            )
        if key in self._function["keys"]:
            self._error(
                f"{label}: written twice; the last value wins",
                f"{label}: записан дважды; действует последнее значение",
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
            self._start_function(False, out)
        assert self._function is not None
        self._end_parameter(parameter_end, out)
        if missing_end and self._function["index"] is not None:
            self._error(
                f"{self._label()}: no {FUNCTION_CLOSE} {missing_end}",
                f"{self._label()}: нет {FUNCTION_CLOSE} {missing_end}",
            )
        self._add_arguments("}" if self._function["pieces"] else "{}", out)
        if self._function["index"] is not None:  # joined once: no copy per parameter
            call = self._tool_calls[self._function["index"]]
            call["function"]["arguments"] = "".join(self._function["pieces"])
        self._function = None
        self._stray_text = False

    def _add_arguments(self, fragment: str, out: DeltaList) -> None:
        """Append an arguments fragment to the open call and send it (a dropped call: no-op)."""
        assert self._function is not None
        self._function["pieces"].append(fragment)
        if self._function["index"] is not None:
            out.arguments(self._function["index"], fragment)


def parse_qwen_xml(
    text: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    reasoning_open: bool | None = None,
) -> ParseResult:
    """Read Qwen3-Coder / Qwen3.5 raw output into reasoning, content, tool calls and errors.

    `tools` is the request's tool list (OpenAI shape): with it, parameter values are typed by the
    schema as vLLM does; without it they stay strings. `reasoning_open`: True when the prompt
    opened `<think>` (Qwen3.5's default generation prompt), False when it did not, None to decide
    from the text (a `</think>` before any tool call means the prompt opened it). This is
    `QwenXmlStreamParser` fed once with the whole text.
    """
    return QwenXmlStreamParser(tools, reasoning_open).parse_whole(text)


def _parameter_text(value: Any) -> str:
    """A value as the Qwen3.5 template writes it: objects and lists `tojson`, any other value
    with Jinja's `| string`, i.e. Python's `str` (`True`, `None`, `2.5`, strings as they are)."""
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _arguments_mapping(arguments: Any, name: str) -> Mapping[str, Any]:
    """Call arguments as a mapping (JSON text is loaded); a clear ValueError otherwise."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ValueError(
                tr(
                    f"arguments of {name!r} are not valid JSON: {snippet(arguments)!r} ({exc})",
                    f"аргументы {name!r} — некорректный JSON: {snippet(arguments)!r} "
                    f"(json: «{exc}»)",
                )
            ) from exc
    if not isinstance(value, Mapping):
        raise ValueError(
            tr(
                f"arguments of {name!r} must be a JSON object, not {snippet(repr(value))}",
                f"аргументы {name!r} должны быть JSON-объектом, а не {snippet(repr(value))}",
            )
        )
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
