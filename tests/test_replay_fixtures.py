"""Small cassettes built inside the tests (the shipped ones are not relied upon), and a check of them."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from helpers import catalog
from helpers.replay import load_cassette, save_cassette

MODEL = catalog.MODEL_NAMES["kimi"]
QWEN = catalog.MODEL_NAMES["qwen"]
TOOLS: list[dict[str, Any]] = [
    {
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
]


class UpstreamHandler(BaseHTTPRequestHandler):
    """The base of a fake upstream's request handler: HTTP/1.1 (keep-alive, as real servers
    answer), and no log line per request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def reply_json(handler: BaseHTTPRequestHandler, status: int, body: Any, **headers: str) -> None:
    """Answer a fake upstream's request with a JSON body (and any extra headers)."""
    payload = json.dumps(body).encode()
    handler.send_response(status)
    for name, value in {"Content-Type": "application/json", **headers}.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def reply_sse(handler: BaseHTTPRequestHandler, events: list[str]) -> None:
    """Answer with an event stream of `data:` lines, closing the connection at its end."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for text in events:
        handler.wfile.write(f"data: {text}\n\n".encode())
    handler.wfile.flush()
    handler.close_connection = True


@contextmanager
def fake_upstream(handler: type[BaseHTTPRequestHandler], path: str = "/v1") -> Iterator[str]:
    """A stand-in live endpoint on 127.0.0.1 in a thread; yields its base URL (host + path)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


SYSTEM = {"role": "system", "content": "You are Kimi, an AI assistant created by Moonshot AI."}
USER = {"role": "user", "content": "What's the weather like in Beijing today?"}
CALL = {
    "id": "get_weather:0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}
ASSISTANT = {"role": "assistant", "content": "", "tool_calls": [CALL]}
TOOL_RESULT = {
    "role": "tool",
    "tool_call_id": "get_weather:0",
    "name": "get_weather",
    "content": '{"weather": "Sunny"}',
}
ROUND_1 = [SYSTEM, USER]
ROUND_2 = [SYSTEM, USER, ASSISTANT, TOOL_RESULT]
FINAL_TEXT = "It is sunny in Beijing today."
PROMPT = "<|im_user|>user<|im_middle|>What's the weather like in Beijing today?<|im_end|>"
RAW_TEXT = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
)
HEAD = {"id": "chatcmpl-1", "created": 1700000000, "model": MODEL}
USAGE = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}


def chat_body(message: dict[str, Any], finish: str) -> dict[str, Any]:
    """A `chat.completion` body (Moonshot-like: `refusal: null` on the message)."""
    return {
        **HEAD,
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": finish, "message": {**message, "refusal": None}}],
        "usage": USAGE,
    }


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One `chat.completion.chunk`."""
    return {
        **HEAD,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def stream_events(delay_ms: int = 5) -> list[dict[str, Any]]:
    """A streamed tool call: content first, arguments in fragments, usage chunk, [DONE]."""
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Let me check."}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "get_weather:0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Beijing"}'}}]}),
        chunk({}, "tool_calls"),
        {**HEAD, "object": "chat.completion.chunk", "choices": [], "usage": USAGE},
    ]
    return [{"data": c, "delay_ms": delay_ms} for c in chunks] + [
        {"data": "[DONE]", "delay_ms": delay_ms}
    ]


def completion_body(text: str) -> dict[str, Any]:
    """A `text_completion` body."""
    return {
        **HEAD,
        "id": "cmpl-1",
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": USAGE,
    }


def interactions() -> list[dict[str, Any]]:
    """The standard test exchanges: chat (JSON, SSE, engine prefix) and completions (JSON, SSE)."""
    completion_chunks = [
        {**HEAD, "id": "cmpl-1", "object": "text_completion", "choices": [{"index": 0, "text": t}]}
        for t in ("<|tool_calls_section_begin|>", RAW_TEXT[len("<|tool_calls_section_begin|>") :])
    ]
    items = [
        {
            "label": "weather/round-1",
            "request": {
                "method": "POST",
                "path": "/v1/chat/completions",
                "body": {"model": MODEL, "messages": ROUND_1, "tools": TOOLS, "temperature": 0.3},
            },
            "response": {
                "status": 200,
                "body": chat_body(
                    {"role": "assistant", "content": "", "tool_calls": [CALL]}, "tool_calls"
                ),
            },
        },
        {
            "label": "weather/round-2",
            "request": {
                "method": "POST",
                "path": "/v1/chat/completions",
                "body": {"model": MODEL, "messages": ROUND_2, "tools": TOOLS},
            },
            "response": {
                "status": 200,
                "body": chat_body({"role": "assistant", "content": FINAL_TEXT}, "stop"),
            },
        },
        {
            "label": "weather/stream",
            "request": {
                "method": "POST",
                "path": "/v1/chat/completions",
                "body": {
                    "model": MODEL,
                    "messages": ROUND_1,
                    "tools": TOOLS,
                    "stream": True,
                    "stream_options": {"include_usage": True},
                },
            },
            "response": {"status": 200, "sse": stream_events()},
        },
        {
            "label": "weather/vllm/round-1",
            "request": {
                "method": "POST",
                "path": "/engines/vllm/v1/chat/completions",
                "body": {"model": MODEL, "messages": ROUND_1, "tools": TOOLS},
            },
            "response": {
                "status": 200,
                "body": chat_body(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{**CALL, "id": "functions.get_weather:0"}],
                    },
                    "tool_calls",
                ),
            },
        },
        {
            "label": "raw/completions",
            "request": {
                "method": "POST",
                "path": "/v1/completions",
                "body": {"model": MODEL, "prompt": PROMPT, "max_tokens": 100},
            },
            "response": {"status": 200, "body": completion_body(RAW_TEXT)},
        },
        {
            "label": "raw/completions-stream",
            "request": {
                "method": "POST",
                "path": "/v1/completions",
                "body": {"model": MODEL, "prompt": PROMPT, "max_tokens": 100, "stream": True},
            },
            "response": {
                "status": 200,
                "sse": [{"data": c, "delay_ms": 5} for c in completion_chunks]
                + [{"data": "[DONE]", "delay_ms": 1}],
            },
        },
    ]
    return copy.deepcopy(items)


def cassette(items: list[dict[str, Any]], notebook: str = "lesson") -> dict[str, Any]:
    """A cassette dict around some interactions."""
    return {
        "meta": {"notebook": notebook, "source": "written by the tests", "format": 1},
        "interactions": items,
    }


def write_cassette(folder: Path, name: str, items: list[dict[str, Any]]) -> Path:
    """Write `<folder>/<name>.json` and return its path."""
    return save_cassette(folder / f"{name}.json", cassette(items, name))


def sse_bytes(events: list[dict[str, Any]]) -> bytes:
    """The exact bytes a stream of recorded events goes over the wire as."""
    out = []
    for event in events:
        data = event["data"]
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        out.append(f"data: {text}\n\n")
    return "".join(out).encode()


def test_fixture_cassette_is_valid(tmp_path: Path) -> None:
    """The cassette the other test files build follows the documented format."""
    path = write_cassette(tmp_path, "lesson", interactions())
    loaded = load_cassette(path)
    assert [i.label for i in loaded.interactions][:2] == ["weather/round-1", "weather/round-2"]
    assert loaded.meta["format"] == 1
