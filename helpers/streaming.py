"""Assemble an assistant message, tool calls included, from streamed chunks.

A streamed tool call arrives in pieces: the first delta of a call usually carries its `index`,
`id` and `function.name`, later deltas only argument fragments. Pieces are glued by `index`, so
parallel calls may interleave. Chunks without choices (the final usage chunk) are fine.

Thinking models also stream their reasoning, before the content: Moonshot, SGLang and llama.cpp
name the delta field `reasoning_content`, vLLM >= 0.17 and Ollama `reasoning`. The accumulator keeps
it and puts it back on the assistant message under the same name, because a thinking model's API
refuses a later request whose assistant message with tool calls lost its reasoning.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

# The names servers give the reasoning text, in the order we prefer when a delta carries both.
REASONING_KEYS = ("reasoning_content", "reasoning")


def as_dict(obj: Any) -> Any:
    """Turn an SDK (pydantic) object into plain dicts; leave dicts and scalars alone."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(exclude_none=True)
    return obj


class ToolCallAccumulator:
    """Collects the content, tool calls, finish_reason and usage of one streamed response."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self.reasoning_key: str | None = None  # the field name the server used for reasoning
        self._calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def add(self, chunk: Any) -> None:
        """Take one `ChatCompletionChunk` (SDK object or dict of the same shape)."""
        chunk = as_dict(chunk)
        if chunk.get("usage"):
            self.usage = as_dict(chunk["usage"])
        for choice in chunk.get("choices") or []:  # a usage chunk has `choices: []`
            choice = as_dict(choice)
            if choice.get("index", 0) != 0:
                continue  # n > 1 is not supported: only the first choice is assembled
            self.add_delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def add_delta(self, delta: Mapping[str, Any] | Any) -> None:
        """Take one bare delta: content, reasoning and/or `{"tool_calls": [...]}` fragments."""
        delta = as_dict(delta)
        self._add_reasoning(delta)
        if delta.get("content"):
            self._content.append(delta["content"])
        for piece in delta.get("tool_calls") or []:
            self._add_call_piece(as_dict(piece))

    def _add_reasoning(self, delta: Mapping[str, Any]) -> None:
        """Keep a reasoning fragment under whichever name the server gives it (one name only)."""
        remembered = (self.reasoning_key,) if self.reasoning_key else ()
        for key in remembered + REASONING_KEYS:  # vLLM once sent both names with the same text
            fragment = delta.get(key)
            if isinstance(fragment, str) and fragment:
                self.reasoning_key = self.reasoning_key or key
                self._reasoning.append(fragment)
                return

    def _add_call_piece(self, piece: Mapping[str, Any]) -> None:
        """Glue one tool-call fragment onto the call with the same index."""
        index = piece.get("index")
        if index is None:  # some engines omit it: a new id starts a call, otherwise continue
            index = len(self._calls) if piece.get("id") or not self._calls else max(self._calls)
        call = self._calls.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        call["id"] += piece.get("id") or ""
        if piece.get("type"):
            call["type"] = piece["type"]
        function = piece.get("function") or {}  # some engines send a delta without `function`
        call["function"]["name"] += function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""

    @property
    def content(self) -> str:
        """All content text so far."""
        return "".join(self._content)

    @property
    def reasoning(self) -> str:
        """All reasoning text so far ("" when the model did not think aloud)."""
        return "".join(self._reasoning)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The calls so far, OpenAI-shaped, in index order."""
        return [copy.deepcopy(self._calls[i]) for i in sorted(self._calls)]

    def assistant_message(self) -> dict[str, Any]:
        """The assistant message to append to the history before any tool results."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.reasoning_key and self._reasoning:  # sent back under the name the server used
            message[self.reasoning_key] = self.reasoning
        if self._calls:
            message["tool_calls"] = self.tool_calls
        return message
