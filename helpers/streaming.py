"""Assemble an assistant message, tool calls included, from streamed chunks.

A streamed tool call arrives in pieces: the first delta of a call usually carries its `index`,
`id` and `function.name`, later deltas only argument fragments. Pieces are glued by `index`, so
parallel calls may interleave; a new id at an index already in use starts another call. Chunks
without choices (the final usage chunk) are fine; usage is read at the top level or, as Moonshot
may send it, inside the choice. An `{"error": ...}` event (llama.cpp sends one, with HTTP 200, when
its parser fails mid-stream) raises `StreamErrorEvent`.

Thinking models also stream their reasoning, before the content: Moonshot, SGLang and llama.cpp
name the delta field `reasoning_content`, vLLM >= 0.17 and Ollama `reasoning`. The accumulator keeps
it and puts it back on the assistant message under the same name, because a thinking model's API
refuses a later request whose assistant message with tool calls lost its reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from helpers.arguments import a_type
from helpers.i18n import shorten, tr

# The names servers give the reasoning text, in the order we prefer when a delta carries both.
REASONING_KEYS = ("reasoning_content", "reasoning")


def as_dict(obj: Any, **dump: Any) -> Any:
    """Turn an SDK (pydantic) object into plain dicts; leave dicts and scalars alone. `dump` goes
    to `model_dump` (default: nulls left out, no warnings about a broken answer); the one reader
    of SDK objects."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(**{"exclude_none": True, "warnings": False, **dump})
    return obj


def as_text(value: Any) -> str:
    """An id as text: None is "", a number its digits (servers differ; the protocol says text)."""
    return "" if value is None else str(value)


def arguments_text(arguments: Any) -> str:
    """Arguments as JSON text: None is "", an object (Ollama sends one) its JSON."""
    if arguments is None or isinstance(arguments, str):
        return arguments or ""
    return json.dumps(arguments, ensure_ascii=False, default=repr)


# The texts of the errors about what a server sent (helpers.loop writes its errors with them too).
def wrong_kind(
    value: Any, en: str, ru: str, expected: tuple[str, str] = ("an object", "объект")
) -> tuple[str, str]:
    """`X is a str ('...'), not an object` in English and Russian, for a malformed answer."""
    shown = shorten(repr(value))
    return (
        f"{en} is {a_type(type(value))} ({shown}), not {expected[0]}",
        f"{ru} — {type(value).__name__} ({shown}), а не {expected[1]}",
    )


def server_error_text(text: str, status: int | None = None) -> str:
    """The sentence for an error answer: with its HTTP status, or as an error event in a stream."""
    text = shorten(text, 300)
    if status:
        where_en = where_ru = f" (HTTP {status})"
    else:
        where_en, where_ru = " in the stream", " в потоке"
    return tr(
        f"The server answered with an error{where_en}: {text}; nothing was added to `messages`.",
        f"Сервер ответил ошибкой{where_ru}: {text}; в `messages` ничего не добавлено.",
    )


class MalformedChunkError(ValueError):
    """A streamed chunk the accumulator cannot use (a server bug); the text is for a student."""

    def __init__(self, en: str, ru: str) -> None:
        super().__init__(
            tr(
                f"The server's stream is malformed: {en}. This is a bug of the server (or its "
                "tool-call parser), not of your code.",
                f"Поток от сервера испорчен: {ru}. Это ошибка сервера (или его парсера "
                "вызовов), а не вашего кода.",
            )
        )


class StreamErrorEvent(RuntimeError):
    """The server sent an `{"error": ...}` event inside the stream; the text is for a student."""

    def __init__(self, error: Any) -> None:
        text = error.get("message") if isinstance(error, Mapping) else error
        super().__init__(server_error_text(str(text or error)))


def _checked_piece(piece: Any) -> tuple[int | None, str, str, str]:
    """Index, id, name and arguments fragment of one tool-call fragment, or MalformedChunkError.

    Null fields count as absent; an id given as a number becomes text, arguments given as an
    object (Ollama) their JSON text. What cannot be a call (a string instead of an object, a
    `function` that is not an object, a name that is not text) is a server bug worth saying.
    """
    if not isinstance(piece, Mapping):
        raise MalformedChunkError(*wrong_kind(piece, "a tool-call fragment", "фрагмент вызова"))
    function = piece.get("function") or {}  # some engines send a delta without `function`
    if not isinstance(function, Mapping):
        what = ("a tool-call fragment's `function`", "`function` во фрагменте вызова")
        raise MalformedChunkError(*wrong_kind(function, *what))
    index = piece.get("index")
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    name = function.get("name")
    if (index is not None and not isinstance(index, int)) or (
        name is not None and not isinstance(name, str)
    ):
        raise MalformedChunkError(
            f"a tool-call fragment has index {index!r} and name {name!r}; an index is a "
            "number and a name is text",
            f"у фрагмента вызова index {index!r} и name {name!r}; index должен быть числом, "
            "а name — строкой",
        )
    return index, as_text(piece.get("id")), name or "", arguments_text(function.get("arguments"))


def _checked_object(value: Any, en: str, ru: str) -> Mapping[str, Any]:
    """`value` if it is an object (a dict), else MalformedChunkError naming what it is."""
    if not isinstance(value, Mapping):
        raise MalformedChunkError(*wrong_kind(value, en, ru))
    return value


class ToolCallAccumulator:
    """Collects the content, tool calls, finish_reason and usage of one streamed response."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self.reasoning_key: str | None = None  # the field name the server used for reasoning
        self._calls: list[dict[str, Any]] = []  # in the order they started
        self._at_index: dict[int, dict[str, Any]] = {}  # index -> the call it continues now
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def add(self, chunk: Any) -> None:
        """Take one `ChatCompletionChunk` (SDK object or dict of the same shape)."""
        chunk = _checked_object(as_dict(chunk), "a chunk", "чанк")
        if chunk.get("error") and not chunk.get("choices"):
            raise StreamErrorEvent(chunk["error"])
        if chunk.get("usage"):
            self.usage = as_dict(chunk["usage"])
        choices = chunk.get("choices") or []  # a usage chunk has `choices: []`
        if not isinstance(choices, list):
            raise MalformedChunkError(
                *wrong_kind(choices, "`choices`", "`choices`", ("a list", "список"))
            )
        for choice in choices:
            choice = _checked_object(as_dict(choice), "a choice", "вариант ответа (choice)")
            if choice.get("index", 0) != 0:
                continue  # n > 1 is not supported: only the first choice is assembled
            if choice.get("usage"):  # Moonshot streams it inside the choice
                self.usage = as_dict(choice["usage"])
            self.add_delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def add_delta(self, delta: Mapping[str, Any] | Any) -> None:
        """Take one bare delta: content, reasoning and/or `{"tool_calls": [...]}` fragments."""
        delta = _checked_object(as_dict(delta), "a delta", "delta")
        self._add_reasoning(delta)
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise MalformedChunkError(
                *wrong_kind(content, "`content`", "`content`", ("text", "строка"))
            )
        if content:
            self._content.append(content)
        pieces = delta.get("tool_calls") or []
        if not isinstance(pieces, list):
            what = ("a list of fragments", "список фрагментов")
            raise MalformedChunkError(*wrong_kind(pieces, "`tool_calls`", "`tool_calls`", what))
        for piece in pieces:
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

    def _add_call_piece(self, piece: Any) -> None:
        """Glue one tool-call fragment onto the call with the same index.

        Some providers (Fireworks, LiteLLM, DeepSeek, Qwen's API) repeat the id, the type and the
        whole name on every fragment: the id and type are set once, and a name fragment is added
        only if it differs from the name so far (so "get_" + "weather" still assembles).
        """
        index, call_id, name, arguments = _checked_piece(piece)
        if index is None:  # some engines omit it: a new id starts a call, otherwise continue
            call = self._calls[-1] if self._calls else None
        else:
            call = self._at_index.get(index)
        if call is None or (call_id and call["id"] and call_id != call["id"]):
            # A new id at an index in use is a new call (two whole calls under one index).
            order = len(self._calls) if index is None else index
            call = {"id": "", "type": "function", "name": "", "arguments": [], "order": order}
            self._calls.append(call)
            if index is not None:
                self._at_index[index] = call
        if call_id and not call["id"]:
            call["id"] = call_id
        if isinstance(piece.get("type"), str) and piece["type"]:
            call["type"] = piece["type"]
        if name and name != call["name"]:
            call["name"] += name
        if arguments:
            call["arguments"].append(arguments)  # joined on read: linear, unlike +=

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
        """The calls so far, OpenAI-shaped, in index order (then in the order they started)."""
        return [
            {
                "id": call["id"],
                "type": call["type"],
                "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
            }
            for call in sorted(self._calls, key=lambda call: call["order"])
        ]

    def assistant_message(self) -> dict[str, Any]:
        """The assistant message to append to the history before any tool results."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.reasoning_key and self._reasoning:  # sent back under the name the server used
            message[self.reasoning_key] = self.reasoning
        if self._calls:
            message["tool_calls"] = self.tool_calls
        return message
