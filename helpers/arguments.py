"""Check a tool call's arguments against the tool's JSON schema, with messages a model can act on.

Validation is the `jsonschema` package's (full JSON Schema: `anyOf`, `$ref`, `minimum`, ...), with
two tool-specific rules: an argument name the schema does not list is reported (at the top level
only, unless the schema sets `additionalProperties` itself), and OpenAPI's `"nullable": true`,
which transformers writes for `Optional[X]`, counts as "or null". Each problem becomes one short
English sentence naming the argument and what was expected: it is sent to the model, not shown
to a student.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from helpers.i18n import Text

# With the optional `rfc3987-syntax` installed (Jupyter pulls it in), `import jsonschema` compiles
# an Earley grammar for the `iri` format: 0.7 s of CPU in every kernel that registers a tool and in
# every pytest process (conftest.py imports this module before nbval's nbformat). Arguments are
# checked without format checks, so the package is hidden (`None`: "not importable") for the first
# import only; it can be imported as usual afterwards.
if "rfc3987_syntax" in sys.modules:
    import jsonschema
else:
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    try:
        import jsonschema
    finally:
        del sys.modules["rfc3987_syntax"]

SchemaError = jsonschema.SchemaError


class NotJsonNumber(ValueError):
    """NaN, Infinity or an overflowing number (`1e999`): Python's json reads them, but JSON has
    no such numbers."""


def _refuse(name: str) -> float:
    raise NotJsonNumber(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise NotJsonNumber(f"{text} is too large for a JSON number")
    return number


def strict_json(text: str | bytes) -> Any:
    """`json.loads` as JSON is written: `NaN`, `Infinity` and `1e999` raise `NotJsonNumber` (a
    ValueError) instead of becoming floats that no JSON text can carry on."""
    return json.loads(text, parse_constant=_refuse, parse_float=_finite)


def a_type(kind: type) -> str:
    """`a set`, `an int`: a Python type's name with its article (the one helper for it)."""
    name = kind.__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def json_kind(value: Any) -> Text:
    """What a JSON value is, in words (OpenAI's words in English): `a string`, `an array`..."""
    if value is None:
        return Text("null", "null")
    if isinstance(value, bool):
        return Text("a boolean", "логическое значение")
    if isinstance(value, int | float):
        return Text("a number", "число")
    if isinstance(value, str):
        return Text("a string", "строка")
    if isinstance(value, list):
        return Text("an array", "массив")
    return Text("an object", "объект")


def show_value(value: Any) -> str:
    """A short JSON rendering of a value for an error message."""
    try:
        return json.dumps(value, ensure_ascii=False)[:40]
    except (TypeError, ValueError, RecursionError):
        return a_type(type(value))


# Keywords whose value is a schema, a list of schemas, or a name -> schema map.
_ONE_SCHEMA = tuple(
    "items additionalProperties not if then else contains propertyNames unevaluatedItems "
    "unevaluatedProperties".split()
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def each_subschema(schema: Any, rewrite: Callable[[dict[str, Any]], Any]) -> Any:
    """A copy of `schema` with `rewrite` applied to each subschema, innermost first (`rewrite` gets
    a copy it may change). Only the values of the keywords above are visited, so an argument that
    happens to be called "nullable" or "prefixItems" is left alone."""
    if not isinstance(schema, dict):
        return schema
    schema = dict(schema)
    for key in _ONE_SCHEMA:
        if key in schema:
            schema[key] = each_subschema(schema[key], rewrite)
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            schema[key] = [each_subschema(item, rewrite) for item in schema[key]]
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            schema[key] = {name: each_subschema(sub, rewrite) for name, sub in schema[key].items()}
    return rewrite(schema)


def nullable_to_null_type(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI's `"nullable": true` as JSON Schema's null type: a step for `each_subschema`.

    `{"type": "integer", "nullable": true}` becomes `{"type": ["integer", "null"]}` (an `enum`
    gains `None`); without a `type`, the schema becomes `anyOf` it or null.
    """
    if schema.get("nullable") is not True:
        return schema
    del schema["nullable"]
    kind = schema.get("type")
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        schema["type"] = [*kinds, "null"]
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def validator_class(schema: Mapping[str, Any]) -> Any:
    """The jsonschema validator for the schema's `$schema` (draft 2020-12 when it names none)."""
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


# Which problem comes first when one place has several (the order the old checker used).
_RANK = {"type": 0, "required": 1, "additionalProperties": 2}


def _got(value: Any) -> str:
    """`int 42`, `str "2"`, `null`: the type and value the model sent."""
    return "null" if value is None else f"{type(value).__name__} {show_value(value)}"


def _type_words(schema: Any) -> str | None:
    """`integer or null` for a schema (or list of them) that only say their types, else None."""
    schemas = schema if isinstance(schema, list) else [schema]
    words: list[str] = []
    for item in schemas:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind is None:
            return None
        words += kind if isinstance(kind, list) else [kind]
    return " or ".join(words)


def _sentences(error: jsonschema.ValidationError, path: str) -> list[str]:
    """Short English sentences for one jsonschema error: the argument and what was expected."""
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path]
    where = path + "".join(parts)  # `arguments.items[1].id`
    value, rule, kind = error.instance, error.validator_value, error.validator
    if kind == "type":
        return [f"{where} must be {_type_words({'type': rule})}, got {_got(value)}"]
    if kind == "required":
        return [f"{where} is missing the required {name!r}" for name in rule if name not in value]
    if kind == "additionalProperties":
        known_names = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        extra = [
            name
            for name in value
            if name not in known_names and not any(re.search(p, name) for p in patterns)
        ]
        known = ", ".join(known_names) or "none"
        return [f"{where} has an unexpected {name!r} (known: {known})" for name in extra]
    if kind == "enum":
        return [f"{where} must be one of {rule}, got {show_value(value)}"]
    if kind == "const":
        return [f"{where} must be {show_value(rule)}, got {show_value(value)}"]
    bounds = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    if kind in bounds:
        return [f"{where} must be {bounds[kind]} {rule}, got {show_value(value)}"]
    sizes = {
        "minLength": ("at least", "character"),
        "maxLength": ("at most", "character"),
        "minItems": ("at least", "item"),
        "maxItems": ("at most", "item"),
        "minProperties": ("at least", "key"),
        "maxProperties": ("at most", "key"),
    }
    if kind in sizes:
        bound, unit = sizes[kind]
        plural = "" if rule == 1 else "s"
        return [f"{where} must have {bound} {rule} {unit}{plural}, got {show_value(value)}"]
    if kind in ("anyOf", "oneOf"):
        words = _type_words(rule)
        if words and not any(len(item) > 1 for item in rule):
            return [f"{where} must be {words}, got {_got(value)}"]
        return [f"{where} does not match any allowed form, got {show_value(value)}"]
    if kind == "pattern":
        return [f"{where} must match the pattern {rule!r}, got {show_value(value)}"]
    return [f"{where}: {error.message[:100]}"]


def _order(error: jsonschema.ValidationError) -> tuple[Any, ...]:
    """Sort key: by place in the arguments (indexes numerically), then by kind of problem."""
    place = tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path)
    return place, _RANK.get(str(error.validator), len(_RANK))


def validate_arguments(value: Any, schema: Mapping[str, Any], path: str = "arguments") -> list[str]:
    """Check arguments against a tool's `parameters` JSON schema; list the problems ([] if fine).

    Full JSON Schema through `jsonschema` (`anyOf`, `$ref`, `minimum`, ...), `nullable` read as
    a null type, and no unexpected top-level argument unless the schema allows extra ones.
    """
    checked = each_subschema(dict(schema), nullable_to_null_type)
    # JSON Schema allows any extra key; for a tool, an argument the function does not take is a
    # model mistake worth reporting, so the top level is strict unless the schema chose itself
    # (`**kwargs` tools say `"additionalProperties": true`). Nested objects keep JSON Schema's rule.
    checked.setdefault("additionalProperties", False)
    validator = validator_class(checked)(checked)
    try:
        errors = sorted(validator.iter_errors(value), key=_order)
    except RecursionError:
        return [f"{path} are nested too deeply to check"]
    except Exception as exc:  # e.g. an unresolvable `$ref`: report it, never crash the loop
        return [f"{path} could not be checked against the tool's schema ({type(exc).__name__})"]
    wrong_type = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    problems: list[str] = []
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in wrong_type:
            continue  # the wrong type says it all ("must be string"), not also "not one of"
        for sentence in _sentences(error, path):
            if sentence not in problems:
                problems.append(sentence)
    return problems
