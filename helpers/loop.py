"""The tool-call loop, sync or streaming, with the guide's defects fixed.

- The loop goes on while the assistant message carries tool calls and stops when it carries none,
  whatever `finish_reason` says: engines send `stop` with calls, or `tool_calls` with none.
- The assistant message with the calls is appended BEFORE their `role: "tool"` results, and both
  only once every tool has answered: an interrupt leaves no call without its answer.
- Tools run through a `ToolRegistry`, which unpacks arguments and reports failures to the model.
- A server's error, a cut answer, an empty or a malformed one raises a `ToolLoopError` in one
  sentence in the notebook's language, and nothing is added to `messages`.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from typing import Any

import openai

from helpers.i18n import shorten, tr
from helpers.streaming import (
    REASONING_KEYS,
    MalformedChunkError,
    StreamErrorEvent,
    ToolCallAccumulator,
    arguments_text,
    as_dict,
    as_text,
    server_error_text,
    wrong_kind,
)
from helpers.tools import ToolRegistry


class ToolLoopError(RuntimeError):
    """Base class for the loop's own errors (a malformed or an empty answer raises it directly).
    `answer` is the assistant message the loop read but did not add to `messages` (a call cut
    at max_tokens, an empty answer), reasoning included; None when there was none to read."""

    def __init__(self, text: str, answer: dict[str, Any] | None = None) -> None:
        super().__init__(text)
        self.answer = answer


class ToolLoopLimitError(ToolLoopError):
    """The model was still calling tools when the round limit was reached."""


class TruncatedToolCallError(ToolLoopError):
    """Generation stopped at max_tokens in the middle of a tool call (or before any text: an
    engine such as llama.cpp drops a call cut before its name is complete)."""


class ToolLoopServerError(ToolLoopError):
    """The server answered with an error (an HTTP error, an error event inside a stream) or could
    not be reached. `api_error` is the SDK's exception, kept for code that wants its details."""

    def __init__(self, text: str, api_error: BaseException | None = None) -> None:
        super().__init__(text)
        self.api_error = api_error


def _describe(tool_calls: list[dict[str, Any]]) -> str:
    """Short `name(arguments)` list for error messages."""
    return ", ".join(
        f"{c['function']['name']}({shorten(c['function']['arguments'], 60)})" for c in tool_calls
    )


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
        raise _malformed(*wrong_kind(call, f"tool call {index}", f"вызов {index}"))
    call_id = as_text(call.get("id"))
    function = as_dict(call.get("function"))
    if not isinstance(function, Mapping):
        raise _malformed(
            f"tool call {index} (id {call_id!r}) has no `function` object, only "
            f"{shorten(repr(dict(call)))}",
            f"у вызова {index} (id {call_id!r}) нет `function` (объекта с name и arguments), "
            f"есть только {shorten(repr(dict(call)))}",
        )
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        raise _malformed(
            f"tool call {index} (id {call_id!r}) has the name {shorten(repr(name))}, not text",
            f"у вызова {index} (id {call_id!r}) имя {shorten(repr(name))}, а не строка",
        )
    function = {"name": name or "", "arguments": arguments_text(function.get("arguments"))}
    return {"id": call_id, "type": "function", "function": function}


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
        raise _malformed(*wrong_kind(message, "the message", "сообщение"))
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        what = ("a list of calls", "список вызовов")
        raise _malformed(*wrong_kind(raw_calls, "`tool_calls`", "`tool_calls`", what))
    clean: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    calls = [_clean_call(call, index) for index, call in enumerate(raw_calls or [])]
    for key in REASONING_KEYS:  # a thinking model's API wants its reasoning back
        if isinstance(message.get(key), str):
            clean[key] = message[key]
    if calls:
        clean["tool_calls"] = calls
    return clean


def _server_error(exc: Exception) -> ToolLoopServerError:
    """One sentence about an error answer (or no answer) from the server."""
    if isinstance(exc, openai.APIConnectionError):
        text = tr(
            f"The loop could not reach the server ({exc.message}); nothing was added to "
            "`messages`.",
            f"Цикл не смог связаться с сервером ({exc.message}); в `messages` ничего не добавлено.",
        )
    else:
        body = getattr(exc, "body", None)
        text = body.get("message") if isinstance(body, Mapping) else None
        text = text if isinstance(text, str) and text else str(exc)
        text = server_error_text(text, getattr(exc, "status_code", None))
    return ToolLoopServerError(text, exc)


def ask_model(
    client: Any,
    messages: list[dict[str, Any]],
    *,
    model: str,
    stream: bool = False,
    **create_kwargs: Any,
) -> tuple[dict[str, Any], str | None]:
    """One request: return the assistant message (a dict) and the finish_reason.

    An error answer from the server (or a stream cut before its last chunk) raises
    `ToolLoopServerError`, a malformed one `ToolLoopError`, each in one sentence (the SDK's
    traceback is not chained); a stream is always closed.
    """
    messages = _sendable(messages, _MESSAGES_PLACE)
    try:
        if not stream:
            completion = client.chat.completions.create(
                model=model, messages=messages, **create_kwargs
            )
            if not getattr(completion, "choices", None):  # none, or a body that is no object
                body = shorten(repr(as_dict(completion)), 200)
                raise _malformed(
                    f"no `choices` to read in {body}", f"нет `choices` (вариантов ответа) в {body}"
                )
            choice = completion.choices[0]
            return assistant_message_from(choice.message), choice.finish_reason
        chunks = client.chat.completions.create(
            model=model, messages=messages, stream=True, **create_kwargs
        )
        accumulator = ToolCallAccumulator()
        try:
            for chunk in chunks:
                accumulator.add(chunk)
        finally:
            close = getattr(chunks, "close", None)
            if callable(close):  # the SDK's stream holds a connection until closed
                close()
        if accumulator.finish_reason is None:  # no last chunk: the answer may be cut anywhere
            raise ToolLoopServerError(
                tr(
                    "The server's stream ended before its last chunk (no finish_reason: the "
                    "connection was cut?); nothing was run and nothing was added to `messages`. "
                    "Ask again.",
                    "Поток от сервера оборвался до последнего чанка (нет finish_reason: "
                    "соединение прервалось?); ничего не запущено, в `messages` ничего не "
                    "добавлено. Повторите запрос.",
                )
            )
        return accumulator.assistant_message(), accumulator.finish_reason
    except openai.APIError as exc:
        raise _server_error(exc) from None
    except StreamErrorEvent as exc:
        raise ToolLoopServerError(str(exc)) from None
    except MalformedChunkError as exc:
        raise ToolLoopError(str(exc)) from None
    except UnicodeEncodeError as exc:  # e.g. a lone surrogate in a tool schema or an SDK object
        raise ToolLoopError(
            tr(
                f"The request cannot be sent: it holds text UTF-8 cannot encode ({exc.reason}, "
                f"{exc.object[exc.start : exc.end]!a}); nothing was added to `messages`. Remove "
                "that character from your messages or tools.",
                f"Запрос нельзя отправить: в нём есть текст, который нельзя записать в UTF-8 "
                f"({exc.reason}, {exc.object[exc.start : exc.end]!a}); в `messages` ничего не "
                "добавлено. Уберите этот символ из сообщений или инструментов.",
            )
        ) from None
    except json.JSONDecodeError as exc:  # an event the SDK could not read
        raise _malformed(
            f"an event in the stream is not JSON ({exc})",
            f"событие в потоке — не JSON (json: «{exc}»)",
        ) from None


# A lone surrogate (U+D800..U+DFFF) cannot be encoded as UTF-8, so no request can carry it.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escaped(text: str) -> str:
    """`text` with each lone surrogate written as the escape text `\\udcff` (inside JSON text
    as an escaped backslash, so the JSON stays valid and reads back as that text)."""
    try:
        json.loads(text)
        escape = "\\\\u{:04x}"
    except ValueError:
        escape = "\\u{:04x}"
    return _SURROGATE.sub(lambda m: escape.format(ord(m[0])), text)


def _without_surrogates(value: Any, found: set[str]) -> Any:
    """`value` (a message, or any JSON value in it) with its strings escaped by `_escaped`; the
    escapes used go into `found`. What holds no lone surrogate is returned as it is."""
    if isinstance(value, str):
        hits = _SURROGATE.findall(value)
        found.update(f"\\u{ord(c):04x}" for c in hits)
        return _escaped(value) if hits else value
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        clean = [(key, _without_surrogates(item, found)) for key, item in items]
        if all(item is value[key] for key, item in clean):
            return value
        return dict(clean) if isinstance(value, dict) else [item for _, item in clean]
    return value


def _sendable(value: Any, where: tuple[str, str]) -> Any:
    """`value` as UTF-8 can carry it: a lone surrogate (a file name read with `surrogateescape`,
    a broken escape a server sent) becomes the text `\\udcff`, and a warning names `where`."""
    found: set[str] = set()
    clean = _without_surrogates(value, found)
    if found:
        shown = ", ".join(sorted(found)[:3])
        warnings.warn(
            tr(
                f"{where[0]} holds characters that cannot be sent as UTF-8 ({shown}: lone "
                "surrogates, e.g. from a file name read with surrogateescape); they were sent "
                "as the escape text shown.",
                f"В {where[1]} есть символы, которые нельзя передать в UTF-8 ({shown}: одиночные "
                "суррогаты (lone surrogates), например из имени файла, прочитанного с "
                "surrogateescape); они отправлены в виде такой экранированной записи.",
            ),
            stacklevel=3,
        )
    return clean


def _result_place(message: dict[str, Any]) -> tuple[str, str]:
    """How the surrogate warning names a tool result."""
    name = message.get("name")
    return (f"The result of {name or 'a tool'}", f"результате {name or 'инструмента'}")


_ANSWER_PLACE = ("The model's answer", "ответе модели")
_MESSAGES_PLACE = ("A message in `messages`", "сообщении из `messages`")


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

    `messages` is extended in place with every assistant message and tool result: a round's
    assistant message and its results are added together, after the last tool has answered.
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
        if finish_reason == "length" and tool_calls:
            raise TruncatedToolCallError(
                tr(
                    "The model hit max_tokens (finish_reason='length') in the middle of a tool "
                    f"call: {_describe(tool_calls)}. Nothing was run; raise max_tokens and ask "
                    "again.",
                    "Модель упёрлась в max_tokens (finish_reason='length') посреди вызова "
                    f"инструмента: {_describe(tool_calls)}. Ничего не запущено; увеличьте "
                    "max_tokens и повторите запрос.",
                ),
                answer=message,
            )
        if finish_reason == "length" and not (message.get("content") or "").strip():
            raise TruncatedToolCallError(
                tr(
                    "The model hit max_tokens (finish_reason='length') before writing any answer "
                    "text; a tool call it had begun may have been dropped by the server. Nothing "
                    "was run and nothing was added to `messages`; raise max_tokens and ask again.",
                    "Модель упёрлась в max_tokens (finish_reason='length'), не написав ни слова "
                    "ответа; начатый вызов инструмента сервер мог отбросить. Ничего не запущено, "
                    "в `messages` ничего не добавлено; увеличьте max_tokens и повторите запрос.",
                ),
                answer=message,
            )
        if not tool_calls and not message.get("content"):  # None and "" alike
            raise ToolLoopError(
                tr(
                    f"The model answered with no text and no tool call (finish_reason="
                    f"{finish_reason!r}). Nothing was added to `messages` (a server refuses an "
                    "empty assistant message in the next request); ask again.",
                    f"Модель ответила без текста и без вызова инструмента (finish_reason="
                    f"{finish_reason!r}). В `messages` ничего не добавлено (сервер отвергнет "
                    "пустое сообщение ассистента в следующем запросе); повторите запрос.",
                ),
                answer=message,
            )
        message = _sendable(message, _ANSWER_PLACE)  # what is appended must be sendable again
        tool_calls = message.get("tool_calls", [])
        if not tool_calls:
            messages.append(message)
            return message
        results = [
            _sendable(result, _result_place(result)) for result in map(registry.call, tool_calls)
        ]
        messages.extend([message, *results])
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
