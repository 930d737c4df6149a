"""helpers.mcp against a real MCP server (mcp 2.x, in-process and over HTTP), the name mapping's
properties over every name MCP's 2026-07-28 schema allows, and lesson 10's scenario against the
lesson's own server."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from scripts_support import lesson_cells

from helpers.i18n import reset_language, set_language
from helpers.mcp import (
    NAME_PATTERNS,
    error_content,
    mcp_registry,
    model_tool_name,
    moonshot_strict_problem,
    openai_parameters,
    serve_http,
    to_openai_tools,
    tool_content,
    tool_names,
)
from helpers.replay.scenarios import n10_mcp_tools as scenario

mcp = pytest.importorskip("mcp")  # a requirement: this only keeps the message short if missing

# The 2026-07-28 rule (server/tools.mdx, "Tool Names"): 1 to 128 of A-Z a-z 0-9 _ - .
MCP_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."
mcp_names = st.text(alphabet=MCP_ALPHABET, min_size=1, max_size=128)


# Built dotted (a filter on "." in name throws most draws away: Hypothesis's filter health check
# failed under load). Short ones (at most 62 characters, so even with the `t_` prefix no hash is
# added) collide with their underscored twin; long ones are cut and get a hash of the MCP name,
# which keeps the twins apart.
dotted_names = st.tuples(
    st.text(alphabet=MCP_ALPHABET, max_size=30), st.text(alphabet=MCP_ALPHABET, max_size=31)
).map(".".join)
long_dotted_names = st.tuples(
    st.text(alphabet=MCP_ALPHABET, min_size=33, max_size=63),
    st.text(alphabet=MCP_ALPHABET, min_size=32, max_size=64),
).map(".".join)


def accepted_everywhere(name: str) -> bool:
    return all(pattern.fullmatch(name) for pattern in NAME_PATTERNS.values())


# --- the name mapping ------------------------------------------------------------------------


def test_the_patterns_are_the_documented_ones():
    assert NAME_PATTERNS["OpenAI"].pattern == r"[a-zA-Z0-9_-]{1,64}"
    assert NAME_PATTERNS["Moonshot"].pattern == r"[a-zA-Z_][a-zA-Z0-9-_]{2,63}"
    assert not any(NAME_PATTERNS["vLLM kimi_k2"].fullmatch(n) for n in ("a.b", "a:b", "a<b"))


@pytest.mark.parametrize(
    ("mcp_name", "model_name"),
    [
        ("weather.today", "weather_today"),
        ("getUser", "getUser"),
        ("a", "t_a"),
        ("3d.render", "t_3d_render"),
        ("-x-", "t_-x-"),
        ("_ab", "_ab"),
        ("погода", "______"),
        ("x" * 64, "x" * 64),
    ],
)
def test_model_tool_name_examples(mcp_name, model_name):
    assert model_tool_name(mcp_name) == model_name


def test_a_long_name_is_cut_to_64_and_keeps_a_hash_of_the_mcp_name():
    long_a, long_b = "a." * 40, "a_" * 40
    assert len(model_tool_name(long_a)) == 64
    assert model_tool_name(long_a)[:55] == model_tool_name(long_b)[:55]
    assert model_tool_name(long_a) != model_tool_name(long_b)


@settings(max_examples=examples(400), deadline=None)
@given(mcp_names)
def test_every_mcp_name_maps_to_a_name_all_three_apis_accept(name):
    model_name = model_tool_name(name)
    assert accepted_everywhere(model_name), (name, model_name)
    assert tool_names([name]) == {model_name: name}  # and back


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(mcp_names, min_size=1, max_size=8))
def test_a_list_round_trips_or_the_collision_is_refused(names):
    model_names = [model_tool_name(name) for name in names]
    collides = len(set(model_names)) < len(set(names))
    if collides:
        with pytest.raises(ValueError, match="would both be called"):
            tool_names(names)
        return
    table = tool_names(names)
    assert sorted(table.values()) == sorted(set(names))
    assert all(table[model_tool_name(name)] == name for name in names)
    assert all(accepted_everywhere(model_name) for model_name in table)


@settings(max_examples=examples(200), deadline=None)
@given(dotted_names)
def test_a_dotted_name_and_its_underscored_twin_collide(name):
    twin = name.replace(".", "_")
    with pytest.raises(ValueError):
        tool_names([name, twin])
    with pytest.raises(ValueError):
        tool_names([twin, name])


@settings(max_examples=examples(200), deadline=None)
@given(long_dotted_names)
@example("0" * 31 + "." + "0" * 31)  # 63 characters, 65 with `t_`: once a red CI run
def test_a_long_dotted_name_and_its_twin_get_different_hashed_names(name):
    twin = name.replace(".", "_")
    table = tool_names([name, twin])
    assert sorted(table.values()) == sorted([name, twin])
    assert all(len(model_name) == 64 for model_name in table)


def test_the_collision_error_names_both_tools_in_the_notebooks_language():
    try:
        set_language("ru")
        with pytest.raises(ValueError, match="'weather.today' и 'weather_today'"):
            tool_names(["weather.today", "weather_today"])
    finally:
        reset_language()
    with pytest.raises(ValueError, match="An MCP tool name is a non-empty string"):
        tool_names([""])


# --- schemas ----------------------------------------------------------------------------------


def test_titles_go_but_a_property_called_title_stays():
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {"title": {"type": "string", "title": "Title"}, "n": {"type": "integer"}},
        "required": ["title"],
    }
    assert moonshot_strict_problem(schema) == "title is not supported in strict mode"
    parameters = openai_parameters(schema)
    assert parameters == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["title"],
    }
    assert moonshot_strict_problem(parameters) is None


def test_a_schema_that_is_not_an_object_is_refused():
    with pytest.raises(ValueError, match="must describe an object"):
        openai_parameters({"type": "array"})
    assert openai_parameters({}) == {"type": "object", "properties": {}}


# --- results ----------------------------------------------------------------------------------


def test_tool_content_of_wire_shaped_results():
    assert tool_content({"content": [{"type": "text", "text": "hi"}]}) == "hi"
    assert tool_content({"content": [], "structuredContent": 0}) == "0"
    failed = {
        "content": [{"type": "text", "text": "boom"}],
        "isError": True,
        "structuredContent": 1,
    }
    assert json.loads(tool_content(failed)) == {"error": "boom"}
    assert json.loads(tool_content({"content": [], "isError": True}))["error"]
    assert "no tool result" in tool_content(None)


# --- a real server ----------------------------------------------------------------------------


def lesson_server():
    """Lesson 10's own server, built by running its server cells (English edition)."""
    namespace: dict = {}
    for cell in lesson_cells("10_mcp_tools"):
        if cell.kind == "code" and ("MCPServer(" in cell.en or "@server.tool" in cell.en):
            exec(compile(cell.en, "<lesson 10>", "exec"), namespace)
    return namespace["server"]


@pytest.fixture(scope="module")
def server():
    return lesson_server()


def listed(server):
    async def run():
        async with mcp.Client(server) as session:
            return (await session.list_tools()).tools, session.protocol_version

    return asyncio.run(run())


def test_the_lessons_server_speaks_2026_07_28_and_lists_a_dotted_name(server):
    tools, version = listed(server)
    assert version == "2026-07-28"
    assert [tool.name for tool in tools] == ["weather.today", "read_file"]
    assert tools[0].output_schema is not None and tools[1].output_schema is None


def test_the_scenario_sends_what_the_lessons_server_lists(server):
    tools, _ = listed(server)
    converted, names = to_openai_tools(tools)
    assert converted == scenario.MCP_TOOLS
    assert names == {"weather_today": "weather.today", "read_file": "read_file"}
    raw = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]
    assert raw == scenario.RAW_TOOLS


def test_the_scenario_results_are_what_the_registry_gets_from_the_server(server):
    registry, _ = mcp_registry(server)
    calls, results = scenario.MCP_TURNS[0].tool_calls, scenario.MCP_TURNS[0].results
    for (name, arguments), expected in zip(calls, results, strict=True):
        call = {"id": "x", "function": {"name": name, "arguments": json.dumps(arguments)}}
        assert registry.call(call)["content"] == expected


def test_the_registry_gives_the_model_the_servers_errors(server):
    registry, _ = mcp_registry(server)

    def call(name, arguments):
        message = {"id": "x", "function": {"name": name, "arguments": json.dumps(arguments)}}
        return json.loads(registry.call(message)["content"])

    assert "No forecast for 'Paris'" in call("weather_today", {"city": "Paris"})["error"]
    assert "No note named '../secret.txt'" in call("read_file", {"name": "../secret.txt"})["error"]
    assert "Unknown tool 'weather.today'" in call("weather.today", {"city": "Moscow"})["error"]
    assert "Invalid arguments" in call("weather_today", {"town": "Moscow"})["error"]


def test_a_json_rpc_error_from_the_server_becomes_an_error_message(server):
    from mcp.shared.exceptions import MCPError

    async def run():
        async with mcp.Client(server) as session:
            try:
                await session.read_resource("note://missing")
            except MCPError as error:
                return error
        return None

    error = asyncio.run(run())
    assert isinstance(error, MCPError)
    content = json.loads(error_content(error))
    assert content == {"error": "MCP error -32602: Unknown resource: note://missing"}


def test_over_http_the_same_server_answers_the_same(server):
    async def run(url):
        async with mcp.Client(url) as remote:
            tools = (await remote.list_tools()).tools
            result = await remote.call_tool("weather.today", {"city": "Moscow"})
            return [t.name for t in tools], tool_content(result), remote.protocol_version

    with serve_http(server) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        names, content, version = asyncio.run(run(url))
    assert names == ["weather.today", "read_file"]
    assert content == scenario.MOSCOW
    assert version == "2026-07-28"


def test_a_json_rpc_error_during_a_call_reaches_the_model_as_an_error():
    from mcp.server import MCPServer
    from mcp.shared.exceptions import MCPError

    failing = MCPServer("failing", log_level="CRITICAL")

    @failing.tool(name="db.query")
    def query(sql: str) -> str:
        """Run a query."""
        raise MCPError(-32603, "backend unavailable")

    registry, names = mcp_registry(failing)
    assert names == {"db_query": "db.query"}
    message = {"id": "x", "function": {"name": "db_query", "arguments": '{"sql": "select 1"}'}}
    content = json.loads(registry.call(message)["content"])
    assert content == {"error": "MCP error -32603: backend unavailable"}


def test_a_plain_exception_reaches_the_model_without_its_message():
    """What step 6 says: the SDK keeps a plain exception's text on the server; ToolError's text
    reaches the model."""
    from mcp.server import MCPServer

    quiet = MCPServer("quiet", log_level="CRITICAL")

    @quiet.tool(name="crash")
    def crash() -> str:
        """Fail with a plain exception."""
        raise RuntimeError("database password is hunter2")

    registry, _ = mcp_registry(quiet)
    content = registry.call({"id": "x", "function": {"name": "crash", "arguments": "{}"}})[
        "content"
    ]
    assert json.loads(content) == {"error": "Error executing tool crash"}
