"""A scripted stand-in for `openai.OpenAI` that returns real SDK objects built from dicts."""

from __future__ import annotations

import copy
import json
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk


def completion(content: str | None = None, tool_calls=(), finish_reason: str = "stop") -> dict:
    """A chat.completion body with the given message."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def chunks_for(body: dict, piece: int = 3) -> list[dict]:
    """Split a chat.completion body into realistic chunk dicts."""
    choice = body["choices"][0]
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m"}

    def chunk(delta: dict, finish=None) -> dict:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant"})]
    text = choice["message"].get("content") or ""
    out += [chunk({"content": text[i : i + piece]}) for i in range(0, len(text), piece)]
    for index, call in enumerate(choice["message"].get("tool_calls") or []):
        f = call["function"]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": f["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        args = f["arguments"]
        out += [
            chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + piece]}}]}
            )
            for i in range(0, len(args), piece)
        ]
    out.append(chunk({}, choice["finish_reason"]))
    out.append(
        base
        | {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}
    )
    return out


class FakeClient:
    """Answers `client.chat.completions.create` from a script of completion bodies."""

    def __init__(self, script: list[dict]):
        self.script = list(script)
        self.requests: list[dict] = []
        self.chat = self
        self.completions = self

    def create(self, **kwargs: Any):
        """Record the request (deep-copied, JSON-checked) and answer the next scripted body."""
        json.dumps(kwargs["messages"])  # what a real client would have to serialize
        self.requests.append(copy.deepcopy(kwargs))
        if not self.script:
            raise AssertionError("FakeClient got more requests than scripted")
        body = self.script.pop(0)
        if kwargs.get("stream"):
            return iter([ChatCompletionChunk.model_validate(c) for c in chunks_for(body)])
        return ChatCompletion.model_validate(body)
