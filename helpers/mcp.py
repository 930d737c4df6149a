"""Tools from an MCP server for an OpenAI-style tool loop: names, schemas, results.

MCP tool names may hold dots and run to 128 characters; the APIs a model sits behind accept less.
`tool_names` maps every MCP name to one those patterns accept and keeps the table both ways (it
refuses two MCP names that would become one). `to_openai_tools` turns a `tools/list` answer into
`tools=`, `tool_content` turns a `tools/call` answer (or a JSON-RPC error) into the `content` of a
`role: "tool"` message, and `mcp_registry` puts it all into the series' `ToolRegistry`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from helpers.i18n import tr
from helpers.replay.validation import schema_problem
from helpers.streaming import as_dict
from helpers.tools import ToolRegistry, tool_error_content

# How the SDK's pydantic objects become plain JSON data: the wire's camelCase keys (`inputSchema`).
WIRE = {"mode": "json", "by_alias": True}

NAME_PATTERNS: dict[str, re.Pattern[str]] = {
    "OpenAI": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "Moonshot": re.compile(r"[a-zA-Z_][a-zA-Z0-9-_]{2,63}"),
    "vLLM kimi_k2": re.compile(r"[^.:<\s]+"),
}
r"""Function names each API accepts. vLLM checks no pattern, but its `kimi_k2` parser finds the id
`functions.<name>:<n>` as `[^<]+:\d+` and reads the name back as `id.split(":")[0].split(".")[-1]`,
so a name with `.`, `:` or `<` comes back wrong."""

NO_MESSAGE = "The tool failed and gave no message."
"""The error sent to the model for an `isError` result with no text."""

_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
_MAX = 64
_HASH = 8  # hex digits of sha1 that keep two long names apart


def model_tool_name(mcp_name: str) -> str:
    """The name the model sees for an MCP tool: `weather.today` -> `weather_today`.

    Every character outside `[a-zA-Z0-9_-]` becomes `_`; a name that does not start with a letter
    or `_`, or is shorter than 3, gets the prefix `t_`; a name longer than 64 keeps its first 55
    characters, then `_` and 8 hex digits of the SHA-1 of the MCP name.
    """
    if not isinstance(mcp_name, str) or not mcp_name:
        raise ValueError(
            tr(
                f"An MCP tool name is a non-empty string, not {mcp_name!r}.",
                f"Имя инструмента MCP — непустая строка, а не {mcp_name!r}.",
            )
        )
    name = _NOT_ALLOWED.sub("_", mcp_name)
    if not re.match(r"[a-zA-Z_]", name) or len(name) < 3:
        name = "t_" + name
    if len(name) > _MAX:
        digest = hashlib.sha1(mcp_name.encode("utf-8")).hexdigest()[:_HASH]
        name = name[: _MAX - _HASH - 1] + "_" + digest
    return name


def tool_names(mcp_names: Iterable[str]) -> dict[str, str]:
    """Model name -> MCP name for every tool; a ValueError when two MCP names get one model name."""
    names: dict[str, str] = {}
    for mcp_name in mcp_names:
        model_name = model_tool_name(mcp_name)
        if model_name in names and names[model_name] != mcp_name:
            first = names[model_name]
            raise ValueError(
                tr(
                    f"The MCP tools {first!r} and {mcp_name!r} would both be called "
                    f"{model_name!r} by the model, so a call could not be routed back. Rename one "
                    "of them on the server, or give one a name of your own.",
                    f"Инструменты MCP {first!r} и {mcp_name!r} оба получили бы для модели имя "
                    f"{model_name!r}, и вызов нельзя было бы вернуть нужному. Переименуйте один "
                    "из них на сервере или дайте одному своё имя.",
                )
            )
        names[model_name] = mcp_name
    return names


def _without_titles(schema: Any, in_properties: bool = False) -> Any:
    """The schema without `title` keywords (labels for people; Moonshot's strict mode refuses
    them); a property that is itself called `title` stays."""
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: _without_titles(value, in_properties=key in ("properties", "$defs"))
        for key, value in schema.items()
        if in_properties or key != "title"
    }


def openai_parameters(input_schema: Any) -> dict[str, Any]:
    """An MCP `inputSchema` as `parameters`: an object schema, without `title` keywords."""
    schema = _without_titles(as_dict(input_schema, **WIRE) or {})
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError(
            tr(
                f"An MCP inputSchema must describe an object, got {input_schema!r}.",
                f"inputSchema инструмента MCP должен описывать объект, а здесь {input_schema!r}.",
            )
        )
    return {"type": "object", "properties": {}} | schema


def moonshot_strict_problem(schema: Any) -> str | None:
    """What Moonshot's strict JSON-schema subset would refuse in `schema`, or None."""
    return schema_problem(as_dict(schema, **WIRE))


def to_openai_tools(mcp_tools: Iterable[Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """`tools/list`'s tools as `tools=` entries, and the model name -> MCP name table."""
    listed = [as_dict(tool, **WIRE) for tool in mcp_tools]
    names = tool_names(tool["name"] for tool in listed)
    by_mcp_name = {mcp_name: model_name for model_name, mcp_name in names.items()}
    tools = [
        {
            "type": "function",
            "function": {
                "name": by_mcp_name[tool["name"]],
                "description": tool.get("description") or "",
                "parameters": openai_parameters(tool.get("inputSchema")),
            },
        }
        for tool in listed
    ]
    return tools, names


def tool_content(result: Any) -> str:
    """A `tools/call` result as the `content` of a `role: "tool"` message.

    `isError` becomes `{"error": <its text>}` (the model reads it and can try again);
    `structuredContent` is sent as its JSON text; otherwise the text blocks, joined by newlines.
    Blocks that are not text (images, audio, resources) are left out.
    """
    result = as_dict(result, **WIRE)
    if not isinstance(result, Mapping):
        return tool_error_content(f"The MCP server sent no tool result: {result!r}.")
    blocks = result.get("content")
    blocks = blocks if isinstance(blocks, list) else []
    text = "\n".join(
        block["text"]
        for block in blocks
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )
    if result.get("isError") is True:
        return tool_error_content(text or NO_MESSAGE)
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"], ensure_ascii=False)
    return text


def error_content(error: Any) -> str:
    """A JSON-RPC error from the server (the SDK's `MCPError`) as the content of a tool message."""
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or str(error)
    return tool_error_content(f"MCP error {code}: {message}")


def run_async(make_coroutine: Any) -> Any:
    """Run `make_coroutine()` to the end on an event loop of its own, in a worker thread (a
    Jupyter kernel already runs a loop, so the synchronous tool loop cannot await)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(lambda: asyncio.run(make_coroutine())).result()


def _mcp_tool(server: Any, mcp_name: str) -> Any:
    """A plain function the registry can call: one `tools/call` to `server`, answered as text."""
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    async def call(arguments: dict[str, Any]) -> str:
        async with Client(server) as session:
            try:
                return tool_content(await session.call_tool(mcp_name, arguments))
            except MCPError as error:
                return error_content(error)

    def tool(**arguments: Any) -> str:
        return run_async(lambda: call(arguments))

    tool.__name__ = model_tool_name(mcp_name)
    tool.__doc__ = f"Calls the MCP tool {mcp_name!r}."
    return tool


def mcp_registry(server: Any) -> tuple[ToolRegistry, dict[str, str]]:
    """A `ToolRegistry` with every tool `server` lists (an `MCPServer`, a URL, ...), and the
    model name -> MCP name table; each call is a `tools/call` to the server."""
    from mcp import Client

    async def listing() -> list[Any]:
        async with Client(server) as session:
            return (await session.list_tools()).tools

    tools, names = to_openai_tools(run_async(listing))
    registry = ToolRegistry()
    for schema in tools:
        model_name = schema["function"]["name"]
        registry.register(_mcp_tool(server, names[model_name]), schema=schema)
    return registry, names


@contextlib.contextmanager
def serve_http(server: Any) -> Iterator[str]:
    """Serve an `MCPServer` over Streamable HTTP on 127.0.0.1 (a free port) in a thread; yield
    its URL, stop it on exit."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="critical", lifespan="on")
    http = uvicorn.Server(config)
    thread = threading.Thread(target=http.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):  # up to 5 s for the server to start
            if http.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not http.started:
            raise RuntimeError(
                tr(
                    "The MCP server over HTTP did not start.",
                    "MCP-сервер по HTTP не запустился.",
                )
            )
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        thread.join(timeout=5)
        sock.close()
