"""ToolRegistry: schemas, argument checks, `**kwargs` dispatch, every failure as a message."""

import datetime
import decimal
import json
import threading
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from openai.types.chat import ChatCompletionMessageToolCall

from helpers import ToolRegistry, tool_result_content, validate_arguments

WEATHER = {"Beijing": "Sunny", "Moscow": "Snow"}

GUIDE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get weather information.",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    },
}


def get_weather(city: str) -> dict:
    """Get weather information.

    Args:
        city: City name
    """
    return {"city": city, "weather": WEATHER.get(city, "unknown")}


def convert(amount: float, unit: str = "c", exact: bool = False) -> str:
    """Convert a temperature.

    Args:
        amount: The value
        unit: Target unit (choices: ["c", "f"])
        exact: Keep decimals
    """
    return f"{amount}{unit}{exact}"


def call(name: str, arguments) -> dict:
    return {
        "id": "functions.x:0",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def error_of(message: dict) -> str:
    return json.loads(message["content"])["error"]


@pytest.fixture
def registry() -> ToolRegistry:
    r = ToolRegistry()
    r.register(get_weather)
    r.register(convert)
    return r


def test_schema_from_typed_function_is_a_plain_openai_tool(registry):
    schema = registry.schemas[1]
    assert schema["type"] == "function"
    assert set(schema["function"]) == {"name", "description", "parameters"}  # no "return"
    params = schema["function"]["parameters"]
    assert params["required"] == ["amount"]
    assert params["properties"]["unit"]["enum"] == ["c", "f"]
    assert params["properties"]["amount"]["type"] == "number"


def test_explicit_schema_full_or_bare_function_object():
    full, bare = ToolRegistry(), ToolRegistry()
    full.register(get_weather, GUIDE_SCHEMA)
    bare.register(get_weather, schema=GUIDE_SCHEMA["function"])
    assert full.schemas == bare.schemas == [GUIDE_SCHEMA]


def test_register_as_decorator_with_and_without_schema():
    r = ToolRegistry()

    @r.register
    def ping() -> str:
        """Answer pong."""
        return "pong"

    @r.register(schema={"name": "echo", "parameters": {"type": "object", "properties": {}}})
    def whatever(**kwargs) -> dict:
        return kwargs

    assert ping() == "pong"  # the decorator returns the function itself
    assert [s["function"]["name"] for s in r.schemas] == ["ping", "echo"]
    assert r.tool_map == {"ping": ping, "echo": whatever}
    assert r.call(call("ping", ""))["content"] == "pong"


def test_schemas_are_copies(registry):
    registry.schemas[0]["function"]["name"] = "changed"
    assert registry.schemas[0]["function"]["name"] == "get_weather"


@pytest.mark.parametrize(
    "schema, fragment",
    [
        ({"type": "function", "function": {"description": "no name"}}, "function.name"),
        ({"type": "tool", "function": {"name": "x"}}, '"type": "function"'),
        ({"name": "x", "parameters": {"type": "array"}}, "type object"),
    ],
)
def test_malformed_schemas_are_rejected_at_registration(schema, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        ToolRegistry().register(get_weather, schema)


def test_duplicate_names_are_rejected(registry):
    with pytest.raises(ValueError, match="already registered"):
        registry.register(get_weather)


def test_call_unpacks_arguments_the_guides_first_defect_fixed(registry):
    # The guide's `tool_function(arguments)` passes the whole dict as `city`.
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        get_weather({"city": "Moscow"})
    message = registry.call(call("get_weather", '{"city": "Moscow"}'))
    assert message == {
        "role": "tool",
        "tool_call_id": "functions.x:0",
        "name": "get_weather",
        "content": '{"city": "Moscow", "weather": "Snow"}',
    }


def test_call_accepts_sdk_tool_call_objects(registry):
    sdk_call = ChatCompletionMessageToolCall.model_validate(
        call("get_weather", '{"city": "Beijing"}')
    )
    assert json.loads(registry.call(sdk_call)["content"])["weather"] == "Sunny"


def test_non_ascii_results_stay_readable():
    r = ToolRegistry()
    r.register(
        lambda city: {"город": city},
        {
            "name": "ru",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    )
    assert r.call(call("ru", '{"city": "Москва"}'))["content"] == '{"город": "Москва"}'


def test_string_results_are_sent_verbatim():
    assert tool_result_content("Sunny") == "Sunny"
    assert tool_result_content({"a": [1, None]}) == '{"a": [1, null]}'


@pytest.mark.parametrize(
    "name, arguments, fragment",
    [
        (
            "get_wether",
            '{"city": "Beijing"}',
            "Unknown tool 'get_wether'. Available tools: get_weather, convert.",
        ),
        ("get_weather", '{"city": "Beij', "not valid JSON"),
        ("get_weather", "[1, 2]", "must be a JSON object, got list"),
        ("get_weather", "{}", "missing the required 'city'"),
        ("get_weather", '{"city": 42}', "arguments.city must be string, got int 42"),
        ("get_weather", '{"city": "Beijing", "days": 3}', "unexpected 'days' (known: city)"),
        ("convert", '{"amount": "hot"}', "arguments.amount must be number"),
        ("convert", '{"amount": true}', "arguments.amount must be number, got bool"),
        ("convert", '{"amount": 1, "unit": "k"}', "must be one of ['c', 'f']"),
        ("convert", '{"amount": 1, "exact": 1}', "arguments.exact must be boolean, got int"),
    ],
)
def test_model_mistakes_become_error_messages(registry, name, arguments, fragment):
    message = registry.call(call(name, arguments))
    assert message["role"] == "tool" and message["tool_call_id"] == "functions.x:0"
    assert fragment in error_of(message)


def test_a_tool_that_raises_is_reported_not_propagated():
    r = ToolRegistry()

    @r.register
    def divide(a: int, b: int) -> float:
        """Divide.

        Args:
            a: Dividend
            b: Divisor
        """
        return a / b

    assert error_of(r.call(call("divide", '{"a": 1, "b": 0}'))) == (
        "Tool divide failed: ZeroDivisionError: division by zero"
    )
    assert r.call(call("divide", '{"a": 1, "b": 4}'))["content"] == "0.25"


def test_empty_arguments_mean_no_arguments_and_dicts_are_accepted(registry):
    r = ToolRegistry()
    r.register(lambda: "ok", {"name": "noop"})
    assert r.call(call("noop", ""))["content"] == "ok"
    assert r.call(call("noop", None))["content"] == "ok"
    # Ollama sends arguments as an object, not a string
    assert "Snow" in registry.call(call("get_weather", {"city": "Moscow"}))["content"]


def test_nested_objects_and_arrays_are_validated():
    schema = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "integer"}},
                },
            },
            "meta": {"type": "object", "additionalProperties": True},
        },
    }
    assert validate_arguments({"items": [{"id": 1}], "meta": {"any": 1}}, schema) == []
    assert validate_arguments({"items": [{"id": 1}, {"id": "2"}, {}]}, schema) == [
        'arguments.items[1].id must be integer, got str "2"',
        "arguments.items[2] is missing the required 'id'",
    ]


@given(st.text())
def test_any_argument_text_gives_a_message_never_an_exception(text):
    r = ToolRegistry()
    r.register(get_weather)
    message = r.call(call("get_weather", text))
    assert message["role"] == "tool" and isinstance(message["content"], str)


# --- never raises for model mistakes, broken servers or odd tool results -------------------------


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text for you")


def registry_with(fn, properties=None):
    r = ToolRegistry()
    r.register(
        fn,
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": properties or {},
                "additionalProperties": True,
            },
        },
    )
    return r


@pytest.mark.parametrize(
    "value, kind",
    [
        ({"sunny", "warm"}, "a set"),
        (datetime.datetime(2026, 1, 1), "a datetime"),
        (b"sunny", "a bytes"),
        (decimal.Decimal("1.5"), "a Decimal"),
        (object(), "an object"),
        ({"when": datetime.date(2026, 1, 1)}, "a dict containing a date"),
        ([1, {2, 3}], "a list containing a set"),
        ({("a", "b"): 1}, "a dict with a tuple key"),
        ({"a": {("a", "b"): 1}}, "a dict containing a dict with a tuple key"),
        ((1, frozenset()), "a tuple containing a frozenset"),
    ],
)
def test_a_result_that_is_not_json_becomes_an_error_naming_its_type(value, kind):
    message = registry_with(lambda: value).call(call("get_weather", "{}"))
    assert error_of(message) == (
        f"get_weather returned {kind}, which is not JSON-serializable; "
        "return a dict, list, str, number or bool"
    )
    assert message["role"] == "tool" and message["tool_call_id"] == "functions.x:0"


def test_a_circular_or_absurd_result_becomes_an_error():
    loop = []
    loop.append(loop)
    assert "not JSON-serializable" in error_of(
        registry_with(lambda: loop).call(call("get_weather", "{}"))
    )
    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert "not JSON-serializable" in error_of(
        registry_with(lambda: deep).call(call("get_weather", "{}"))
    )
    huge = 10**5000
    assert "not JSON-serializable" in error_of(
        registry_with(lambda: huge).call(call("get_weather", "{}"))
    )


def test_an_exception_whose_str_raises_is_still_reported():
    def broken():
        raise Unprintable()

    assert error_of(registry_with(broken).call(call("get_weather", "{}"))) == (
        "Tool get_weather failed: Unprintable (its message could not be shown)"
    )


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ('{"n": ' + "9" * 5000 + "}", "a number too long to read"),
        ('{"a": ' + "[" * 995 + "]" * 995 + "}", "nested too deeply"),
        ("[" * 100_000, "nested too deeply"),
        (42, "must be a JSON object (text), got int"),
        ([1, 2], "must be a JSON object (text), got list"),
        (True, "must be a JSON object (text), got bool"),
    ],
)
def test_absurd_or_non_string_arguments_become_error_messages(arguments, fragment):
    message = registry_with(lambda **kw: "ok").call(call("get_weather", arguments))
    assert fragment in error_of(message)


def test_deep_but_decodable_arguments_do_not_crash_the_validation():
    deep = '{"a": ' + "[" * 900 + "]" * 900 + "}"
    message = registry_with(lambda **kw: "ok", {"a": {"type": "array"}}).call(
        call("get_weather", deep)
    )
    assert message["role"] == "tool" and isinstance(message["content"], str)


@pytest.mark.parametrize("name", [["get_weather"], {"x": 1}, 42, None])
def test_a_broken_server_name_becomes_unknown_tool(registry, name):
    message = registry.call({"id": "functions.x:0", "function": {"name": name, "arguments": "{}"}})
    assert error_of(message).startswith("Unknown tool ")
    assert error_of(message).endswith("Available tools: get_weather, convert.")
    if name is not None:
        assert f"Unknown tool {json.dumps(name)} (a tool name is a string)" in error_of(message)
    assert message["name"] == "" and message["tool_call_id"] == "functions.x:0"


@pytest.mark.parametrize(
    "tool_call",
    [
        None,
        "get_weather",
        42,
        {"function": None},
        {"function": "x"},
        {"id": ["a"], "function": {"name": "get_weather"}},
    ],
)
def test_a_call_of_the_wrong_shape_gives_a_message(registry, tool_call):
    message = registry.call(tool_call)
    assert message["role"] == "tool" and isinstance(message["tool_call_id"], str)
    assert json.loads(message["content"])


# --- argument validation with jsonschema ----------------------------------------------------------


def typed_tool(
    options: dict,
    counts: dict[str, int],
    limit: Optional[int],  # noqa: UP045 - the typing spelling students write, on purpose
    tags: Optional[list[str]] = None,  # noqa: UP045
) -> str:
    """Exercise the schema generator's types.

    Args:
        options: Any settings
        counts: Counts per key
        limit: How many, or null for all
        tags: Optional tags
    """
    return "ok"


@pytest.fixture
def typed():
    r = ToolRegistry()
    r.register(typed_tool)
    return r


VALID = {
    "options": {"any": [1, {"deep": None}], "key": "v"},
    "counts": {"a": 1, "b": 2},
    "limit": None,
}


@pytest.mark.parametrize(
    "arguments", [VALID, VALID | {"limit": 3, "tags": None}, VALID | {"tags": ["x"]}]
)
def test_valid_calls_of_typed_functions_are_accepted(typed, arguments):
    assert typed.call(call("typed_tool", json.dumps(arguments)))["content"] == "ok"


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (VALID | {"counts": {"a": "1"}}, 'arguments.counts.a must be integer, got str "1"'),
        (VALID | {"limit": "3"}, 'arguments.limit must be integer or null, got str "3"'),
        (VALID | {"tags": [1]}, "arguments.tags[0] must be string, got int 1"),
        (
            VALID | {"extra": 1},
            "arguments has an unexpected 'extra' (known: options, counts, limit, tags)",
        ),
    ],
)
def test_invalid_calls_of_typed_functions_name_the_argument(typed, arguments, expected):
    assert error_of(typed.call(call("typed_tool", json.dumps(arguments)))) == (
        f"Invalid arguments for typed_tool: {expected}."
    )


def test_nullable_becomes_a_null_type_in_generated_schemas(typed):
    properties = typed.schemas[0]["function"]["parameters"]["properties"]
    assert (
        properties["limit"]["type"] == ["integer", "null"] and "nullable" not in properties["limit"]
    )
    assert properties["tags"]["type"] == ["array", "null"]
    assert properties["counts"]["additionalProperties"] == {"type": "integer"}


def test_tuple_hints_become_items_and_only_schema_keywords_are_rewritten():
    def pairs(pair: tuple[int, str], same: tuple[int, int], prefixItems: str | None = None):
        """Pairs.

        Args:
            pair: an int and a str
            same: two ints
            prefixItems: an argument that happens to be called so
        """

    registry = ToolRegistry()
    registry.register(pairs)
    properties = registry.schemas[0]["function"]["parameters"]["properties"]
    assert properties["pair"]["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert properties["same"]["items"] == {"type": "integer"}
    assert "prefixItems" not in properties["pair"] and "prefixItems" not in properties["same"]
    assert properties["prefixItems"]["type"] == ["string", "null"]  # an argument, kept


RICH = {
    "type": "object",
    "required": ["when", "place"],
    "properties": {
        "when": {
            "anyOf": [
                {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
                {"type": "integer", "minimum": 0},
            ]
        },
        "place": {"$ref": "#/$defs/place"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "unit": {"type": "string", "enum": ["c", "f"], "nullable": True},
    },
    "$defs": {
        "place": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "minLength": 1}},
        }
    },
}


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ({"when": "2026-01-01", "place": {"city": "Oslo"}}, []),
        ({"when": 5, "place": {"city": "Oslo", "country": "NO"}, "days": 7, "unit": None}, []),
        (
            {"when": "tomorrow", "place": {"city": "Oslo"}},
            ['arguments.when does not match any allowed form, got "tomorrow"'],
        ),
        ({"when": 1, "place": {}}, ["arguments.place is missing the required 'city'"]),
        (
            {"when": 1, "place": {"city": ""}},
            ['arguments.place.city must have at least 1 character, got ""'],
        ),
        ({"when": 1, "place": {"city": "Oslo"}, "days": 0}, ["arguments.days must be >= 1, got 0"]),
        ({"when": 1, "place": {"city": "Oslo"}, "days": 8}, ["arguments.days must be <= 7, got 8"]),
        (
            {"when": 1, "place": {"city": "Oslo"}, "unit": "k"},
            ["arguments.unit must be one of ['c', 'f', None], got \"k\""],
        ),
    ],
)
def test_anyof_ref_minimum_and_nullable_are_enforced(arguments, expected):
    assert validate_arguments(arguments, RICH) == expected


def test_only_the_top_level_is_strict_about_unexpected_keys():
    schema = {"type": "object", "properties": {"meta": {"type": "object", "properties": {"a": {}}}}}
    assert validate_arguments({"meta": {"a": 1, "b": 2}}, schema) == []
    assert validate_arguments({"other": 1}, schema) == [
        "arguments has an unexpected 'other' (known: meta)"
    ]
    assert validate_arguments({"other": 1}, schema | {"additionalProperties": True}) == []


def test_a_broken_schema_is_refused_at_registration():
    with pytest.raises(ValueError, match="not a valid JSON schema"):
        ToolRegistry().register(
            get_weather,
            {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "text"}}},
            },
        )


def test_the_documented_timeout_wrapper_turns_a_hanging_tool_into_an_error():
    doc = (Path(__file__).parent.parent / "docs" / "contracts.md").read_text(encoding="utf-8")
    section = doc[doc.index("### Tools run without a timeout") :]
    snippet = section[
        section.index("```python") + len("```python") : section.index(
            "```\n", section.index("```python") + 9
        )
    ]
    namespace: dict = {}
    exec(compile(snippet, "docs/contracts.md", "exec"), namespace)  # our own documentation
    release = threading.Event()

    def get_weather(city: str) -> dict:
        """Get weather information.

        Args:
            city: City name
        """
        release.wait(5)  # hangs until the test lets it go
        return {"city": city}

    r = ToolRegistry()
    r.register(namespace["with_timeout"](get_weather, 0.05))
    try:
        assert r.schemas[0]["function"]["name"] == "get_weather"
        assert r.schemas[0]["function"]["parameters"]["required"] == ["city"]
        assert error_of(r.call(call("get_weather", '{"city": "Oslo"}'))) == (
            "Tool get_weather failed: TimeoutError: get_weather gave no answer within 0.05 s"
        )
    finally:
        release.set()
    patient = ToolRegistry()
    patient.register(namespace["with_timeout"](get_weather, 60))
    assert json.loads(patient.call(call("get_weather", '{"city": "Oslo"}'))["content"]) == {
        "city": "Oslo"
    }


def test_a_schema_that_cannot_be_applied_is_reported_not_raised():
    r = ToolRegistry()
    r.register(
        lambda **kw: "ok",
        {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"$ref": "#/$defs/missing"}}},
        },
    )
    assert "could not be checked against the tool's schema" in error_of(
        r.call(call("get_weather", '{"city": "x"}'))
    )


def test_nullable_is_read_only_where_it_is_a_keyword():
    schema = {
        "type": "object",
        "properties": {
            "nullable": {"type": "boolean"},  # an argument that happens to be called so
            "n": {"anyOf": [{"type": "integer", "nullable": True}]},
            "e": {"enum": [{"nullable": True}]},
        },
    }
    assert validate_arguments({"nullable": True, "n": None, "e": {"nullable": True}}, schema) == []
    assert validate_arguments({"nullable": None}, schema) == [
        "arguments.nullable must be boolean, got null"
    ]
    assert (
        schema["properties"]["n"]["anyOf"][0]["nullable"] is True
    )  # the caller's schema is untouched


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
odd_results = st.recursive(
    json_values
    | st.sets(st.integers(), max_size=2)
    | st.binary(max_size=4)
    | st.datetimes()
    | st.decimals(allow_nan=False)
    | st.builds(object),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {},
            optional={
                "id": json_values,
                "function": st.one_of(
                    json_values,
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "name": st.one_of(
                                st.sampled_from(["get_weather", "echo"]), json_values
                            ),
                            "arguments": st.one_of(json_values, json_values.map(json.dumps)),
                        },
                    ),
                ),
            },
        ),
    ),
    odd_results,
)
def test_call_never_raises_whatever_the_server_sends_or_the_tool_returns(tool_call, result):
    r = ToolRegistry()
    r.register(get_weather)
    r.register(
        lambda **kwargs: result,
        {
            "name": "echo",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    )
    message = r.call(tool_call)
    assert message["role"] == "tool"
    assert isinstance(message["tool_call_id"], str) and isinstance(message["name"], str)
    assert isinstance(message["content"], str)


def test_a_registry_answers_in_and_len_like_its_tool_map(registry: ToolRegistry) -> None:
    names = list(registry.tool_map)
    assert names and all(name in registry for name in names)
    assert "no_such_tool" not in registry and 42 not in registry
    assert len(registry) == len(names)


# --- issue 33: NaN and Infinity are not JSON ----------------------------------------------------


def _strict_json(text):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_tool_result_content_never_writes_nan_or_infinity(bad):
    with pytest.raises(ValueError):
        tool_result_content({"score": bad})


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_tool_returning_nan_gets_a_strict_json_error_naming_it(bad):
    registry = ToolRegistry()
    registry.register(
        lambda: {"scores": [1.0, bad]}, {"name": "score", "parameters": {"type": "object"}}
    )
    content = registry.call({"id": "c", "function": {"name": "score", "arguments": "{}"}})[
        "content"
    ]
    error = _strict_json(content)["error"]
    assert error.startswith("score returned a dict containing the number ") and repr(bad) in error
    assert "JSON has no NaN or Infinity" in error


def test_the_json_depth_limit_is_the_same_on_every_python():
    # Python 3.12+ reads and writes JSON far deeper than 3.11's ~1000 levels: the registry's own
    # limit (MAX_JSON_DEPTH) decides, so the model gets the same answer whatever runs the loop.
    from helpers.tools import MAX_JSON_DEPTH

    def nested(depth):
        value = []
        for _ in range(depth - 1):
            value = [value]
        return value

    assert json.loads(tool_result_content(nested(MAX_JSON_DEPTH))) == nested(MAX_JSON_DEPTH)
    with pytest.raises(RecursionError, match=f"more than {MAX_JSON_DEPTH} levels"):
        tool_result_content(nested(MAX_JSON_DEPTH + 1))
    deep = json.dumps({"a": nested(MAX_JSON_DEPTH)})
    message = registry_with(lambda **kw: "ok").call(call("get_weather", deep))
    assert "nested too deeply" in error_of(message)
    message = registry_with(lambda **kw: nested(600)).call(call("get_weather", '{"city": "x"}'))
    assert "returned a list, which is not JSON-serializable (nested too deeply)" in error_of(
        message
    )


def test_the_depth_check_runs_no_method_of_the_result():
    # json writes a dict subclass through its items(): a values() that raises must not matter.
    class OddValues(dict):
        def values(self):
            raise RuntimeError("values() called")

    assert json.loads(tool_result_content([OddValues(a=1)])) == [{"a": 1}]
