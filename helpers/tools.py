"""Tools the model may call: their JSON schemas, argument checks and safe dispatch.

The guide calls `tool_function(arguments)`, passing the whole dict as ONE positional argument.
`ToolRegistry.call` unpacks it (`fn(**arguments)`) after checking the arguments against the
schema, and turns every failure into an error message for the model instead of an exception.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from helpers._hf import import_transformers

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def tool_result_content(value: Any) -> str:
    """Turn a tool's return value into the `content` of a `role: "tool"` message."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def tool_error_content(message: str) -> str:
    """Wrap an error sentence as JSON the model can read and react to."""
    return json.dumps({"error": message}, ensure_ascii=False)


def schema_from_function(fn: Callable[..., Any]) -> dict[str, Any]:
    """Build an OpenAI tool schema from type hints and a Google-style docstring."""
    schema = import_transformers().utils.get_json_schema(fn)
    schema["function"].pop("return", None)  # not part of the OpenAI tool format
    return schema


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Accept `{"type": "function", "function": {...}}` or the bare function object."""
    schema = copy.deepcopy(dict(schema))
    if "function" not in schema:
        schema = {"type": "function", "function": schema}
    function = schema["function"]
    if schema.get("type") != "function" or not isinstance(function, dict):
        raise ValueError('A tool schema looks like {"type": "function", "function": {...}}.')
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise ValueError("A tool schema needs a non-empty function.name.")
    parameters = function.setdefault("parameters", {"type": "object", "properties": {}})
    if parameters.get("type") != "object":
        name = function["name"]
        raise ValueError(f"Tool {name!r}: parameters must be a JSON schema of type object.")
    return schema


def validate_arguments(value: Any, schema: Mapping[str, Any], path: str = "arguments") -> list[str]:
    """Check a value against the subset of JSON Schema that tool schemas use; list the problems."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        allowed = tuple(t for name in types for t in JSON_TYPES.get(name, (object,)))
        is_bool = isinstance(value, bool)
        if not isinstance(value, allowed) or (is_bool and "boolean" not in types):
            got = type(value).__name__ if value is not None else "null"
            return [f"{path} must be {' or '.join(types)}, got {got} {json.dumps(value)[:40]}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path} must be one of {schema['enum']}, got {json.dumps(value)[:40]}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"{path} is missing the required {name!r}")
        for name, item in value.items():
            if name in properties:
                problems += validate_arguments(item, properties[name], f"{path}.{name}")
            elif schema.get("additionalProperties") is not True:
                known = ", ".join(properties) or "none"
                problems.append(f"{path} has an unexpected {name!r} (known: {known})")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems += validate_arguments(item, schema["items"], f"{path}[{i}]")
    return problems


def _field(obj: Any, name: str) -> Any:
    """Read a field from a dict or from an SDK object alike."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


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
            raise ValueError(f"A tool named {name!r} is already registered.")
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

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def __len__(self) -> int:
        return len(self._functions)

    def call(self, tool_call: Any) -> dict[str, Any]:
        """Run one tool call from the model and return the `role: "tool"` message answering it."""
        function = _field(tool_call, "function") or {}
        name = _field(function, "name") or ""
        message = {"role": "tool", "tool_call_id": _field(tool_call, "id") or "", "name": name}
        return message | {"content": self._run(name, _field(function, "arguments"))}

    def _run(self, name: str, arguments_text: Any) -> str:
        """Parse, check and run; every failure comes back as an error content string."""
        if name not in self._functions:
            known = ", ".join(self._functions) or "none"
            return tool_error_content(f"Unknown tool {name!r}. Available tools: {known}.")
        arguments, problem = parse_arguments(arguments_text)
        if problem:
            return tool_error_content(f"Arguments for {name} {problem}")
        problems = validate_arguments(arguments, self._schemas[name]["function"]["parameters"])
        if problems:
            return tool_error_content(f"Invalid arguments for {name}: " + "; ".join(problems) + ".")
        try:
            result = self._functions[name](**arguments)
        except Exception as exc:  # a tool's failure is news for the model, not a crash of the loop
            return tool_error_content(f"Tool {name} failed: {type(exc).__name__}: {exc}")
        return tool_result_content(result)


def parse_arguments(arguments_text: Any) -> tuple[dict[str, Any], str | None]:
    """Decode the model's argument JSON; return (arguments, problem sentence or None)."""
    if isinstance(arguments_text, dict):  # some servers (Ollama) send an object already
        return arguments_text, None
    if arguments_text is None or not str(arguments_text).strip():
        return {}, None
    try:
        arguments = json.loads(arguments_text)
    except json.JSONDecodeError as exc:
        snippet = str(arguments_text)[:60]
        return {}, f"are not valid JSON ({exc}): {snippet!r}."
    if not isinstance(arguments, dict):
        kind = type(arguments).__name__
        return {}, f"must be a JSON object, got {kind}: {str(arguments_text)[:60]!r}."
    return arguments, None
