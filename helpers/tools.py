"""Tools the model may call: their JSON schemas, argument checks and safe dispatch.

The guide calls `tool_function(arguments)`, passing the whole dict as ONE positional argument.
`ToolRegistry.call` unpacks it (`fn(**arguments)`) after checking the arguments against the
schema, and turns every failure into an error message for the model instead of an exception.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from helpers._hf import import_transformers
from helpers.arguments import (
    NotJsonNumber,
    SchemaError,
    a_type,
    each_subschema,
    nullable_to_null_type,
    show_value,
    strict_json,
    validate_arguments,
    validator_class,
)
from helpers.i18n import tr
from helpers.streaming import as_dict

# Python types `json.dumps` writes as they are (containers are checked item by item).
_JSON_SCALARS = (str, int, float, bool, type(None))
_RESULT_HINT = "return a dict, list, str, number or bool"
# Deeper JSON is refused on every Python: 3.10-3.11's json raises RecursionError near 1000 levels,
# 3.12+ reads and writes far deeper values, so the limit is ours, not the interpreter's.
MAX_JSON_DEPTH = 500


def _deeper_than(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether lists and dicts nest more than `limit` levels in `value` (iterative)."""
    stack, seen = [(value, 1)], set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)) and id(item) not in seen:
            if depth > limit:
                return True
            seen.add(id(item))
            # the base classes' iteration: a subclass's overrides are not run here
            if isinstance(item, dict):
                children = dict.values(item)
            elif isinstance(item, list):
                children = list.__iter__(item)
            else:
                children = tuple.__iter__(item)
            stack.extend((child, depth + 1) for child in children)
    return False


def tool_result_content(value: Any) -> str:
    """Turn a tool's return value into the `content` of a `role: "tool"` message. NaN and
    Infinity raise ValueError: JSON has no such numbers, and a server may refuse the text."""
    if isinstance(value, str):
        return value
    if _deeper_than(value):
        raise RecursionError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def tool_error_content(message: str) -> str:
    """Wrap an error sentence as JSON the model can read and react to."""
    return json.dumps({"error": message}, ensure_ascii=False)


def _first_non_json(value: Any) -> str | None:
    """The first part of `value` JSON cannot hold: "a set", "a list containing a dict with a tuple
    key"; None when every part has a JSON type (then the value as a whole is the trouble: circular,
    too deep, a huge integer)."""
    stack, seen = [value], set()
    while stack:  # iterative: a deeply nested result must not overflow the stack here
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            found = f"the number {item!r} (JSON has no NaN or Infinity; send null or a string)"
            return found if item is value else f"{a_type(type(value))} containing {found}"
        if isinstance(item, _JSON_SCALARS) or id(item) in seen:
            continue
        seen.add(id(item))
        found = None
        if isinstance(item, dict):
            bad_key = next((k for k in item if not isinstance(k, _JSON_SCALARS)), None)
            if bad_key is not None:
                found = f"{a_type(type(item))} with {a_type(type(bad_key))} key"
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            found = a_type(type(item))
        if found:
            return found if item is value else f"{a_type(type(value))} containing {found}"
    return None


def _result_problem(name: str, value: Any, exc: BaseException) -> str:
    """The error sentence for a tool result `json.dumps` refused, naming what was wrong."""
    what, reason = _first_non_json(value), ""
    if what is None:
        what = a_type(type(value))
        if isinstance(exc, RecursionError):
            reason = " (nested too deeply)"
        elif "ircular" in _exception_text(exc):
            reason = " (it contains itself)"
        else:
            reason = f" ({_exception_text(exc)[:80]})"
    return f"{name} returned {what}, which is not JSON-serializable{reason}; {_RESULT_HINT}"


def _exception_text(exc: BaseException) -> str:
    """`TypeName: message` for an exception a tool raised, safe whatever `__str__` does."""
    try:
        text = str(exc)
    except Exception:  # any failure of __str__ is reported, not raised
        return f"{type(exc).__name__} (its message could not be shown)"
    return f"{type(exc).__name__}: {text}"


def schema_from_function(fn: Callable[..., Any]) -> dict[str, Any]:
    """Build an OpenAI tool schema from type hints and a Google-style docstring.

    `Optional[X]` comes out of transformers as `"nullable": true`, which JSON Schema (and so the
    argument check) does not know: it is rewritten as a type list with `"null"`. A `tuple[...]`
    hint comes out as `prefixItems`, which the Moonshot platform's strict tools refuse: it is
    rewritten as `items` (one schema, or `anyOf` the different ones).
    """
    schema = import_transformers().utils.get_json_schema(fn)
    schema["function"].pop("return", None)  # not part of the OpenAI tool format
    function = schema["function"]
    if "parameters" in function:
        parameters = each_subschema(function["parameters"], nullable_to_null_type)
        function["parameters"] = each_subschema(parameters, _items_from_prefix)
    return schema


def _items_from_prefix(schema: dict[str, Any]) -> dict[str, Any]:
    """`prefixItems` (from a `tuple` hint) as `items`: a step for `each_subschema`."""
    prefix = schema.pop("prefixItems", None)
    if isinstance(prefix, list) and prefix and "items" not in schema:
        distinct = [s for i, s in enumerate(prefix) if s not in prefix[:i]]
        schema["items"] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
    return schema


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Accept `{"type": "function", "function": {...}}` or the bare function object."""
    schema = copy.deepcopy(dict(schema))
    if "function" not in schema:
        schema = {"type": "function", "function": schema}
    function = schema["function"]
    if schema.get("type") != "function" or not isinstance(function, dict):
        raise ValueError(
            tr(
                'A tool schema looks like {"type": "function", "function": {...}}.',
                'Схема инструмента выглядит так: {"type": "function", "function": {...}}.',
            )
        )
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise ValueError(
            tr(
                "A tool schema needs a non-empty function.name.",
                "В схеме инструмента нужно непустое function.name.",
            )
        )
    parameters = function.setdefault("parameters", {"type": "object", "properties": {}})
    name = function["name"]
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(
            tr(
                f"Tool {name!r}: parameters must be a JSON schema of type object.",
                f"Инструмент {name!r}: parameters должна быть JSON-схемой с типом object.",
            )
        )
    try:
        validator_class(parameters).check_schema(parameters)
    except SchemaError as exc:
        raise ValueError(
            tr(
                f"Tool {name!r}: parameters is not a valid JSON schema: {exc.message}",
                f"Инструмент {name!r}: parameters — некорректная JSON-схема: {exc.message}",
            )
        ) from None
    return schema


def _mapping(obj: Any) -> Mapping[str, Any]:
    """A dict, or an SDK object as one (`as_dict`); anything else as no fields at all."""
    obj = as_dict(obj)
    return obj if isinstance(obj, Mapping) else {}


class ToolRegistry:
    """The explicit list of tools the model may run: schemas for `tools=`, dispatch by name."""

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, Any]] = {}
        self._functions: dict[str, Callable[..., Any]] = {}

    def register(
        self, fn: Callable[..., Any] | None = None, schema: Mapping[str, Any] | None = None
    ):
        """Add a tool; use as `register(fn)`, `register(fn, schema)` or as a decorator."""
        if fn is None:
            return lambda f: self.register(f, schema)
        full = normalize_schema(schema) if schema is not None else schema_from_function(fn)
        name = full["function"]["name"]
        if name in self._schemas:
            raise ValueError(
                tr(
                    f"A tool named {name!r} is already registered.",
                    f"Инструмент с именем {name!r} уже зарегистрирован.",
                )
            )
        self._schemas[name] = full
        self._functions[name] = fn
        return fn

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """The `tools=` list for `client.chat.completions.create` (copies, safe to edit)."""
        return copy.deepcopy(list(self._schemas.values()))

    @property
    def tool_map(self) -> dict[str, Callable[..., Any]]:
        """Name -> Python function, as in the guide's `tool_map`."""
        return dict(self._functions)

    def __contains__(self, name: object) -> bool:  # `if name in registry:`
        return name in self._functions

    def __len__(self) -> int:
        return len(self._functions)

    def call(self, tool_call: Any) -> dict[str, Any]:
        """Run one tool call from the model and return the `role: "tool"` message answering it.

        Never raises for a model's mistake or a broken server's answer: an unknown or non-string
        name, arguments that are not a JSON object (or too long, or nested too deeply), arguments
        the schema refuses, a tool that raises, a result JSON cannot hold. Each becomes an error
        the model can read, in `content`.
        """
        tool_call = _mapping(tool_call)
        function = _mapping(tool_call.get("function"))
        name = function.get("name")
        call_id = tool_call.get("id")
        if not isinstance(call_id, str):  # a broken server: keep what it sent, as text
            call_id = "" if call_id is None else show_value(call_id)
        content = self._run("" if name is None else name, function.get("arguments"))
        name = name if isinstance(name, str) else ""
        return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}

    def _run(self, name: Any, arguments_text: Any) -> str:
        """Parse, check, run and serialise; every failure comes back as an error content string."""
        if not isinstance(name, str) or name not in self._functions:
            known = ", ".join(self._functions) or "none"
            if isinstance(name, str):
                shown = repr(name)
            else:  # a broken server's answer
                shown = f"{show_value(name)} (a tool name is a string)"
            return tool_error_content(f"Unknown tool {shown}. Available tools: {known}.")
        arguments, problem = parse_arguments(arguments_text)
        if problem:
            return tool_error_content(f"Arguments for {name} {problem}")
        problems = validate_arguments(arguments, self._schemas[name]["function"]["parameters"])
        if problems:
            return tool_error_content(f"Invalid arguments for {name}: " + "; ".join(problems) + ".")
        try:
            result = self._functions[name](**arguments)
        except Exception as exc:  # a tool's failure is news for the model, not a crash of the loop
            return tool_error_content(f"Tool {name} failed: {_exception_text(exc)}")
        try:
            return tool_result_content(result)
        except (TypeError, ValueError, RecursionError) as exc:  # a set, a datetime, bytes, ...
            return tool_error_content(_result_problem(name, result, exc))


def parse_arguments(arguments_text: Any) -> tuple[dict[str, Any], str | None]:
    """Decode the model's argument JSON; return (arguments, problem sentence or None)."""
    if isinstance(arguments_text, dict):  # some servers (Ollama) send an object already
        return arguments_text, None
    if arguments_text is None:
        return {}, None
    if not isinstance(arguments_text, str):  # a broken server: a number, a list, ...
        kind = type(arguments_text).__name__
        return {}, f"must be a JSON object (text), got {kind}: {show_value(arguments_text)!r}."
    if not arguments_text.strip():
        return {}, None
    try:
        arguments = strict_json(arguments_text)
    except (json.JSONDecodeError, NotJsonNumber) as exc:
        return {}, f"are not valid JSON ({exc}): {arguments_text[:60]!r}."
    except RecursionError:
        return {}, f"are nested too deeply to read: {arguments_text[:60]!r}."
    except ValueError:  # Python refuses to read integers of more than 4300 digits
        return {}, f"contain a number too long to read: {arguments_text[:60]!r}."
    if _deeper_than(arguments):
        return {}, f"are nested too deeply to read: {arguments_text[:60]!r}."
    if not isinstance(arguments, dict):
        kind = type(arguments).__name__
        return {}, f"must be a JSON object, got {kind}: {arguments_text[:60]!r}."
    return arguments, None
