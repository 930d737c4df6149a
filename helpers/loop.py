"""The tool-call loop, sync or streaming, with the guide's defects fixed.

- The loop goes on while the assistant message carries tool calls and stops when it carries none,
  whatever `finish_reason` says: engines send `stop` with calls, or `tool_calls` with none.
- The assistant message with the calls is appended BEFORE their `role: "tool"` results.
- Tools run through a `ToolRegistry`, which unpacks arguments and reports failures to the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from helpers.i18n import tr
from helpers.streaming import REASONING_KEYS, MalformedChunkError, ToolCallAccumulator, as_dict
from helpers.tools import ToolRegistry


class ToolLoopError(RuntimeError):
    """Base class for the loop's own errors (a malformed server answer raises it directly)."""


class ToolLoopLimitError(ToolLoopError):
    """The model was still calling tools when the round limit was reached."""


class TruncatedToolCallError(ToolLoopError):
    """Generation stopped at max_tokens in the middle of a tool call."""


def _describe(tool_calls: list[dict[str, Any]]) -> str:
    """Short `name(arguments)` list for error messages."""
    return ", ".join(
        f"{c['function']['name']}({str(c['function']['arguments'])[:60]})" for c in tool_calls
    )


def _short(value: Any) -> str:
    """A short rendering of what a server sent, for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


# "sent as a string / an object / a number", for the Russian error texts.
_RU_AS = {
    "str": "строкой",
    "dict": "объектом",
    "int": "числом",
    "float": "числом",
    "bool": "логическим значением",
}


def _malformed(en: str, ru: str) -> ToolLoopError:
    """A ToolLoopError about a server answer the loop cannot use; nothing was run."""
    return ToolLoopError(
        tr(
            f"The server's answer is malformed: {en}. Nothing was run and nothing was added to "
            "`messages`; this is a bug of the server (or its tool-call parser), not of your code.",
            f"Ответ сервера испорчен: {ru}. Ничего не запущено, в `messages` ничего не "
            "добавлено; это ошибка сервера (или его парсера вызовов), а не вашего кода.",
        )
    )


def _clean_call(call: Any, index: int) -> dict[str, Any]:
    """One OpenAI-shaped tool call from what the server sent (see `assistant_message_from`)."""
    call = as_dict(call)
    if not isinstance(call, Mapping):
        kind = type(call).__name__
        raise _malformed(
            f"tool call {index} is a {kind} ({_short(call)}), not an object",
            f"вызов {index} — {kind} ({_short(call)}), а не объект",
        )
    call_id = call.get("id")
    call_id = "" if call_id is None else call_id if isinstance(call_id, str) else str(call_id)
    function = as_dict(call.get("function"))
    if not isinstance(function, Mapping):
        raise _malformed(
            f"tool call {index} (id {call_id!r}) has no `function` object, only "
            f"{_short(dict(call))}",
            f"у вызова {index} (id {call_id!r}) нет `function` (объекта с name и arguments), "
            f"есть только {_short(dict(call))}",
        )
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        raise _malformed(
            f"tool call {index} (id {call_id!r}) has the name {_short(name)}, not text",
            f"у вызова {index} (id {call_id!r}) имя {_short(name)}, а не строка",
        )
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):  # Ollama sends an object: keep it as the JSON text
        arguments = json.dumps(arguments, ensure_ascii=False, default=repr)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "" if name is None else name, "arguments": arguments},
    }


def assistant_message_from(message: Any) -> dict[str, Any]:
    """A clean assistant message dict from an SDK message (no null extras like `refusal`).

    A non-null `reasoning_content` / `reasoning` stays, under the name the server used. Null
    ids, names and arguments become "", object arguments their JSON text. An answer the loop
    cannot use (`message: null`, `tool_calls` not a list, a call without `function`) raises a
    `ToolLoopError` saying what the server sent.
    """
    if message is None:
        raise _malformed(
            "`message: null` instead of an assistant message",
            "`message: null` вместо сообщения ассистента",
        )
    message = as_dict(message)
    if not isinstance(message, Mapping):
        kind = type(message).__name__
        raise _malformed(
            f"the message is a {kind} ({_short(message)}), not an object",
            f"сообщение — {kind} ({_short(message)}), а не объект",
        )
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        kind = type(raw_calls).__name__
        as_what = _RU_AS.get(kind, f"значением типа {kind}")
        raise _malformed(
            f"`tool_calls` as a {kind} ({_short(raw_calls)}), not a list of calls",
            f"`tool_calls` {as_what} ({_short(raw_calls)}), а не списком вызовов",
        )
    clean: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    calls = [_clean_call(call, index) for index, call in enumerate(raw_calls or [])]
    for key in REASONING_KEYS:  # a thinking model's API wants its reasoning back
        if isinstance(message.get(key), str):
            clean[key] = message[key]
    if calls:
        clean["tool_calls"] = calls
    return clean


def ask_model(
    client: Any,
    messages: list[dict[str, Any]],
    *,
    model: str,
    stream: bool = False,
    **create_kwargs: Any,
) -> tuple[dict[str, Any], str | None]:
    """One request: return the assistant message (a dict) and the finish_reason."""
    if not stream:
        completion = client.chat.completions.create(model=model, messages=messages, **create_kwargs)
        if not completion.choices:
            body = repr(as_dict(completion))[:200]
            raise ToolLoopError(
                tr(
                    f"The server answered without choices: {body}",
                    f"Сервер ответил без choices (вариантов ответа): {body}",
                )
            )
        choice = completion.choices[0]
        return assistant_message_from(choice.message), choice.finish_reason
    accumulator = ToolCallAccumulator()
    for chunk in client.chat.completions.create(
        model=model, messages=messages, stream=True, **create_kwargs
    ):
        try:
            accumulator.add(chunk)
        except MalformedChunkError as exc:
            raise ToolLoopError(str(exc)) from exc
    return accumulator.assistant_message(), accumulator.finish_reason


def run_tool_loop(
    client: Any,
    messages: list[dict[str, Any]],
    registry: ToolRegistry,
    *,
    model: str,
    stream: bool = False,
    max_rounds: int = 8,
    **create_kwargs: Any,
) -> dict[str, Any]:
    """Ask, run the requested tools, answer, repeat; return the final assistant message.

    `messages` is extended in place with every assistant message and tool result.
    """
    if max_rounds < 1:
        raise ValueError(
            tr("max_rounds must be at least 1.", "max_rounds должен быть не меньше 1.")
        )
    create_kwargs.setdefault("tools", registry.schemas)
    for _ in range(max_rounds):
        message, finish_reason = ask_model(
            client, messages, model=model, stream=stream, **create_kwargs
        )
        tool_calls = message.get("tool_calls", [])
        if tool_calls and finish_reason == "length":
            raise TruncatedToolCallError(
                tr(
                    "The model hit max_tokens (finish_reason='length') in the middle of a tool "
                    f"call: {_describe(tool_calls)}. Nothing was run; raise max_tokens and ask "
                    "again.",
                    "Модель упёрлась в max_tokens (finish_reason='length') посреди вызова "
                    f"инструмента: {_describe(tool_calls)}. Ничего не запущено; увеличьте "
                    "max_tokens и повторите запрос.",
                )
            )
        messages.append(message)
        if not tool_calls:
            return message
        messages.extend(registry.call(call) for call in tool_calls)
    raise ToolLoopLimitError(
        tr(
            f"The model was still calling tools after max_rounds={max_rounds} rounds "
            f"(last calls: {_describe(tool_calls)}). The history so far is in `messages`; "
            "raise max_rounds if the task needs more steps, or check what the tools answer.",
            "Модель всё ещё вызывала инструменты, когда разрешённые раунды закончились "
            f"(max_rounds={max_rounds}; последние вызовы: {_describe(tool_calls)}). "
            "История диалога — в `messages`; "
            "увеличьте max_rounds, если задаче нужно больше шагов, или проверьте, что отвечают "
            "инструменты.",
        )
    )
