"""ToolRegistry: schemas, argument checks, `**kwargs` dispatch, every failure as a message."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
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
    return {"id": "functions.x:0", "type": "function", "function": {"name": name, "arguments": arguments}}


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
    sdk_call = ChatCompletionMessageToolCall.model_validate(call("get_weather", '{"city": "Beijing"}'))
    assert json.loads(registry.call(sdk_call)["content"])["weather"] == "Sunny"


def test_non_ascii_results_stay_readable():
    r = ToolRegistry()
    r.register(lambda city: {"город": city}, {"name": "ru", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}})
    assert r.call(call("ru", '{"city": "Москва"}'))["content"] == '{"город": "Москва"}'


def test_string_results_are_sent_verbatim():
    assert tool_result_content("Sunny") == "Sunny"
    assert tool_result_content({"a": [1, None]}) == '{"a": [1, null]}'


@pytest.mark.parametrize(
    "name, arguments, fragment",
    [
        ("get_wether", '{"city": "Beijing"}', "Unknown tool 'get_wether'. Available tools: get_weather, convert."),
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
            "items": {"type": "array", "items": {"type": "object", "required": ["id"],
                                                   "properties": {"id": {"type": "integer"}}}},
            "meta": {"type": "object", "additionalProperties": True},
        },
    }
    assert validate_arguments({"items": [{"id": 1}], "meta": {"any": 1}}, schema) == []
    assert validate_arguments({"items": [{"id": 1}, {"id": "2"}, {}]}, schema) == [
        "arguments.items[1].id must be integer, got str \"2\"",
        "arguments.items[2] is missing the required 'id'",
    ]


@given(st.text())
def test_any_argument_text_gives_a_message_never_an_exception(text):
    r = ToolRegistry()
    r.register(get_weather)
    message = r.call(call("get_weather", text))
    assert message["role"] == "tool" and isinstance(message["content"], str)
