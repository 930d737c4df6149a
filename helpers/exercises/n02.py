"""Self-checks for lesson 02: the stop rule, answering every call, errors as tool results."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import NotYet, call_student, exercise
from helpers.exercises._verdict import weather_call as _call

WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def _get_weather(city: str) -> dict[str, str]:
    """The lesson's weather tool (a fixed table)."""
    return {"city": city, "weather": WEATHER.get(city, "unknown")}


@exercise
def check_needs_tools(needs_tools: Callable[[dict[str, Any], str | None], Any]) -> None:
    """Exercise 1: a stop rule that works whatever finish_reason the engine reports."""
    with_call = {"role": "assistant", "content": None, "tool_calls": [_call("a:0", "Beijing")]}
    cases = [
        (
            with_call,
            "tool_calls",
            True,
            "a message with a call and finish_reason 'tool_calls'",
            "сообщение с вызовом и finish_reason 'tool_calls'",
        ),
        (
            with_call,
            "stop",
            True,
            "a call with finish_reason 'stop' (the stop_with_calls engine)",
            "вызов при finish_reason 'stop' (движок stop_with_calls)",
        ),
        (
            {"role": "assistant", "content": "Sunny."},
            "stop",
            False,
            "an answer without tool_calls",
            "ответ без tool_calls",
        ),
        (
            {"role": "assistant", "content": "Sunny.", "tool_calls": []},
            "stop",
            False,
            "an answer with an empty tool_calls list (vLLM sends that)",
            "ответ с пустым списком tool_calls (так отвечает vLLM)",
        ),
        (
            {"role": "assistant", "content": "Sunny."},
            "tool_calls",
            False,
            "an answer without calls although finish_reason says 'tool_calls'",
            "ответ без вызовов, хотя finish_reason равен 'tool_calls'",
        ),
    ]
    for message, finish_reason, expected, en, ru in cases:
        got = call_student(needs_tools, message, finish_reason)
        if bool(got) != expected:
            raise NotYet(
                f"for {en} it should return {expected}. Look at message['tool_calls'], "
                "not at finish_reason.",
                f"для случая «{ru}» ожидается {expected}. Смотрите на "
                "message['tool_calls'], а не на finish_reason.",
            )


@exercise
def check_answer_calls(answer_calls: Callable[[dict[str, Any], dict[str, Any]], Any]) -> None:
    """Exercise 2: one role "tool" message per call, in order, with JSON content."""
    calls = [_call("get_weather:0", "Beijing"), _call("get_weather:1", "Moscow")]
    message = {"role": "assistant", "content": "Checking both.", "tool_calls": calls}
    got = call_student(answer_calls, message, {"get_weather": _get_weather})
    if not isinstance(got, list):
        raise NotYet("return a list of messages.", "верните список сообщений.")
    if len(got) != len(calls):
        raise NotYet(
            f"two parallel calls need two tool messages, got {len(got)}.",
            f"на два параллельных вызова нужно два сообщения, а получено {len(got)}.",
        )
    for call, answer in zip(calls, got, strict=True):
        if not isinstance(answer, dict) or answer.get("role") != "tool":
            raise NotYet(
                'each answer is a dict with "role": "tool".',
                'каждый ответ — словарь с "role": "tool".',
            )
        if answer.get("tool_call_id") != call["id"]:
            raise NotYet(
                f"tool_call_id must be the call's id {call['id']!r}, in the calls' order.",
                f"tool_call_id должен быть id вызова {call['id']!r}, в порядке вызовов.",
            )
        if answer.get("name") != "get_weather":
            raise NotYet("name is the function's name.", "name — это имя функции.")
        city = json.loads(call["function"]["arguments"])["city"]
        try:
            content = json.loads(answer.get("content") or "")
        except (TypeError, ValueError) as exc:
            raise NotYet(
                "content must be the result encoded as JSON text (json.dumps).",
                "content должен быть результатом в виде JSON-текста (json.dumps).",
            ) from exc
        if content != _get_weather(city):
            raise NotYet(
                f"the content for {city} should be {json.dumps(_get_weather(city))}.",
                f"для {city} content должен быть {json.dumps(_get_weather(city))}.",
            )


def _broken_tool(city: str) -> dict[str, str]:
    """A tool that fails, like a network call that times out."""
    raise TimeoutError(f"weather service did not answer for {city}")


def _error_text(content: Any, en: str, ru: str) -> str:
    """The "error" text of `content`, or NotYet unless it is JSON text of an object with a
    non-empty "error" key."""
    try:
        parsed = json.loads(content)
    except (TypeError, ValueError) as exc:
        raise NotYet(
            f'{en}: return JSON text like \'{{"error": "..."}}\'.',
            f'{ru}: верните JSON-текст вида \'{{"error": "..."}}\'.',
        ) from exc
    if not isinstance(parsed, dict) or not str(parsed.get("error") or "").strip():
        raise NotYet(
            f'{en}: the JSON needs a non-empty "error" field.',
            f'{ru}: в JSON нужно непустое поле "error".',
        )
    return str(parsed["error"])


@exercise
def check_tool_content(tool_content: Callable[[Callable[..., Any], str], Any]) -> None:
    """Exercise 3: a tool result or an error message, never an exception."""
    got = call_student(tool_content, _get_weather, '{"city": "Moscow"}')
    if not isinstance(got, str) or json.loads(got) != _get_weather("Moscow"):
        raise NotYet(
            "a working call should return the result as JSON text.",
            "удачный вызов должен вернуть результат JSON-текстом.",
        )
    errors = []
    for function, text, en, ru, clues in [
        (
            _get_weather,
            '{"city": "Mos',
            "with arguments that are not valid JSON",
            "когда аргументы — некорректный JSON",
            ("json", "unterminated", "expecting", "decode"),
        ),
        (
            _broken_tool,
            '{"city": "Moscow"}',
            "with a tool that fails",
            "когда инструмент падает",
            ("timeout", "did not answer"),
        ),
        (
            _get_weather,
            '{"town": "Moscow"}',
            "with a wrong argument name (TypeError)",
            "когда имя аргумента неверное (TypeError)",
            ("town", "typeerror", "keyword argument"),
        ),
    ]:
        try:
            content = tool_content(function, text)
        except Exception as exc:  # the point of the exercise: nothing may escape
            raise NotYet(
                f"{en}, tool_content raised {type(exc).__name__}; catch it and return an error.",
                f"{ru}, tool_content выбрасывает {type(exc).__name__}; поймайте "
                "исключение и верните ошибку.",
            ) from exc
        error = _error_text(content, en, ru)
        if not any(clue in error.lower() for clue in clues):
            raise NotYet(
                f"{en}, the error says only {error!r}: the model cannot tell from it what "
                "went wrong, so it cannot fix its call. Put the exception into the text: "
                'f"{type(error).__name__}: {error}".',
                f"{ru}, в ошибке сказано только {error!r}: по такому тексту модель не поймёт, "
                "что случилось, и не сможет исправить вызов. Вставьте в текст само "
                'исключение: f"{type(error).__name__}: {error}".',
            )
        errors.append(error)
    if len(set(errors)) < len(errors):
        raise NotYet(
            f"two different failures got the same error text {errors}: say what went wrong "
            "in each case (include the exception's message).",
            f"два разных сбоя получили одинаковый текст ошибки {errors}: опишите, что "
            "случилось в каждом случае (добавьте текст исключения).",
        )
