"""Self-checks for lesson 02: the stop rule, answering every call, errors as tool results."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    NAMES,
    VALUES,
    Case,
    NotYet,
    Raised,
    call_student,
    case_of,
    catching,
    exercise,
    on_battery,
    returned,
    seeded,
    shorten,
    strict_equal,
)
from helpers.exercises._verdict import weather_call as _call
from helpers.formats._common import tool_call_dict
from helpers.i18n import russian_plural

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
        got = returned(got, "needs_tools(...)", ("True or False", "True или False"))
        if bool(got) != expected:
            raise NotYet(
                f"for {en} it should return {expected}. Look at message['tool_calls'], "
                "not at finish_reason.",
                f"для случая «{ru}» ожидается {expected}. Смотрите на "
                "message['tool_calls'], а не на finish_reason.",
            )
    on_battery(
        needs_tools,
        _needs_tools,
        stop_rule_battery(),
        name="needs_tools",
        wanted=("True or False", "True или False"),
        same=lambda expected, got: expected is None or expected == bool(got),
        idea=(
            "Only the calls in the message say whether tools must run; neither finish_reason "
            "nor the presence of text does.",
            "Нужно ли запускать инструменты, говорят только вызовы в сообщении; ни "
            "finish_reason, ни наличие текста этого не решают.",
        ),
    )


def _some_ids(rng: Any, n: int) -> list[str]:
    """Call ids as engines write them: OpenAI's call_..., Kimi's, bare Kimi-style, a reused one."""
    style = rng.randrange(4)
    if style == 0:
        return [f"call_{rng.getrandbits(40):010x}" for _ in range(n)]
    if style == 1:
        return [f"functions.get_weather:{k}" for k in range(n)]
    if style == 2:
        return [f"chatcmpl-tool-{rng.randint(100, 999)}{k}" for k in range(n)]
    return [f"get_weather:{k + rng.randint(3, 9)}" for k in range(n)]


def stop_rule_battery() -> list[Case]:
    """Assistant messages with and without calls, with and without content, every finish_reason
    an engine reports (seeded)."""
    rng = seeded("n02 needs_tools")
    out = []
    for n in range(24):
        message: dict[str, Any] = {"role": "assistant"}
        content = rng.choice([None, "", "Checking the weather.", "Проверяю погоду ☂️"])
        if n % 3:
            message["content"] = content
        calls = [_call(i, rng.choice(VALUES)) for i in _some_ids(rng, rng.randint(0, 2))]
        if calls or n % 4 == 0:
            message["tool_calls"] = calls
        finish = rng.choice(["tool_calls", "stop", None, "length"])
        out.append(case_of(message, finish))
    # a final answer as `model_dump()` gives it on Moonshot or SGLang: the key is there, None
    for finish in ("stop", None):
        out.append(case_of({"role": "assistant", "content": "Sunny.", "tool_calls": None}, finish))
    return out


def _needs_tools(message: dict[str, Any], finish_reason: Any) -> bool | None:
    """The stop rule's reference: the message's own calls decide. None (either answer) for calls
    cut off by max_tokens: lesson 02's run_tool_loop refuses to run those, so a rule that says
    False there is right too."""
    if message.get("tool_calls") and finish_reason == "length":
        return None
    return bool(message.get("tool_calls"))


@exercise
def check_answer_calls(answer_calls: Callable[[dict[str, Any], dict[str, Any]], Any]) -> None:
    """Exercise 2: one role "tool" message per call, in order, with JSON content."""
    calls = [_call("get_weather:0", "Beijing"), _call("get_weather:1", "Moscow")]
    message = {"role": "assistant", "content": "Checking both.", "tool_calls": calls}
    given = copy.deepcopy(message)
    got = call_student(answer_calls, given, {"get_weather": _get_weather})
    if given != message:
        raise NotYet(
            f"answer_calls changed the assistant message it was given (now {shorten(given, 100)}):"
            " that message stays in the history and goes back to the server with the results, "
            "so read its tool_calls without changing them.",
            f"answer_calls изменила полученное сообщение ассистента (теперь {shorten(given, 100)}):"
            " это сообщение остаётся в истории и уходит обратно на сервер вместе с результатами, "
            "поэтому читайте его tool_calls, не изменяя их.",
        )
    if not isinstance(got, list):
        raise NotYet("return a list of messages.", "верните список сообщений.")
    first = len(got)  # the same list may come back again (a default argument)
    again = call_student(answer_calls, copy.deepcopy(message), {"get_weather": _get_weather})
    if isinstance(again, list) and len(again) > first:
        raise NotYet(
            f"the same two calls got {first} messages, then {len(again)} the second time: a "
            "list kept between calls grows (a default such as results=[] is made once); start "
            "a new list inside the function.",
            f"на те же два вызова функция вернула {first} "
            f"{russian_plural(first, 'сообщение', 'сообщения', 'сообщений')}, а во второй раз — "
            f"{len(again)}: список, который живёт между вызовами, растёт (значение по умолчанию "
            "вроде results=[] создаётся один раз); заводите новый список внутри функции.",
        )
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
    on_battery(
        lambda message: _decoded(answer_calls(message, _tool_map())),
        _answers,
        answer_battery(),
        name="answer_calls",
        wanted=("a list of dicts", "список словарей"),
        idea=(
            "Each call gets its own message, in the calls' order, with the call's own id copied "
            "and the name of the function it called.",
            "Каждый вызов получает своё сообщение, в порядке вызовов, с точной копией id этого "
            "вызова и именем вызванной функции.",
        ),
    )


def _lookup(**arguments: Any) -> dict[str, Any]:
    """A tool that echoes its arguments (names with digits, dashes and dots share it)."""
    return {"found": arguments, "count": len(arguments)}


def answer_battery() -> list[Case]:
    """Assistant messages with one to three calls of several tools: ids that are not
    <name>:<index>, names with digits, dashes and dots, Cyrillic and emoji arguments (seeded)."""
    rng = seeded("n02 answer_calls")
    out = []
    for _ in range(22):
        n = rng.randint(1, 3)
        calls = []
        for call_id in _some_ids(rng, n):
            if rng.random() < 0.5:
                calls.append(_call(call_id, rng.choice(VALUES)))
            else:
                arguments = {"query": rng.choice(VALUES), "limit": rng.randint(1, 9)}
                name = rng.choice(NAMES[1:])
                calls.append(
                    tool_call_dict(call_id, name, json.dumps(arguments, ensure_ascii=False))
                )
        message = {
            "role": "assistant",
            "content": rng.choice([None, "Checking."]),
            "tool_calls": calls,
        }
        out.append(case_of(message, shown=shorten([c["id"] for c in calls]) + ", tool_map"))
    return out


def _tool_map() -> dict[str, Callable[..., Any]]:
    return {"get_weather": _get_weather, **{name: _lookup for name in NAMES[1:]}}


def _answers(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The reference: one role "tool" message per call, in order, content decoded for comparing."""
    out = []
    for call in message["tool_calls"]:
        result = _tool_map()[call["function"]["name"]](**json.loads(call["function"]["arguments"]))
        out.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["function"]["name"],
                "content": result,
            }
        )
    return out


def _decoded(answers: Any) -> Any:
    """The learner's answers with each JSON content decoded (the JSON spelling may differ)."""
    if not isinstance(answers, list):
        return answers
    out = []
    for answer in answers:
        if isinstance(answer, dict) and isinstance(answer.get("content"), str):
            try:
                answer = {**answer, "content": json.loads(answer["content"])}
            except ValueError:
                pass
        out.append(answer)
    return out


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
    for city in ("Moscow", "Москва", "São Paulo 🌆"):
        arguments = json.dumps({"city": city}, ensure_ascii=city == "Moscow")
        got = call_student(tool_content, _get_weather, arguments)
        got = returned(
            got, f"tool_content(get_weather, {arguments!r})", ("JSON text", "JSON-текст")
        )
        try:
            decoded = json.loads(got) if isinstance(got, str) else None
        except ValueError:
            decoded = None
        if decoded != _get_weather(city):
            raise NotYet(
                f"for the arguments {arguments} a working call should return the result "
                f"{_get_weather(city)} as JSON text; got {shorten(got)}.",
                f"для аргументов {arguments} удачный вызов должен вернуть результат "
                f"{_get_weather(city)} JSON-текстом; получено {shorten(got)}.",
            )
    errors = []
    for function, text, en, ru, clues in [
        (
            _get_weather,
            '{"city": "Mos',
            "with arguments that are not valid JSON",
            "когда аргументы — некорректный JSON",
            ("unterminated", "expecting", "line 1", "char"),
        ),
        (
            _broken_tool,
            '{"city": "Moscow"}',
            "with a tool that fails",
            "когда инструмент падает",
            ("did not answer",),
        ),
        (
            _get_weather,
            '{"town": "Moscow"}',
            "with a wrong argument name (TypeError)",
            "когда имя аргумента неверное (TypeError)",
            ("town", "keyword argument"),
        ),
    ]:
        # the point of the exercise: nothing may escape (call_student still bounds the time)
        call = f"tool_content({function.__name__.lstrip('_')}, {text!r})"
        content = call_student(
            catching(tool_content, (Exception, SystemExit)), function, text, case=(call, call)
        )
        if isinstance(content, Raised):
            raise NotYet(
                f"{en}, tool_content raised {type(content.exc).__name__}; catch it and return an "
                "error.",
                f"{ru}, tool_content выбрасывает {type(content.exc).__name__}; поймайте "
                "исключение и верните ошибку.",
            )
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
    on_battery(
        lambda function, text: _outcome(tool_content(function, text)),
        lambda function, text: _outcome(_reference_content(function, text)),
        content_battery(),
        name="tool_content",
        wanted=("JSON text", "JSON-текст"),
        idea=(
            "A working call gives the tool's result as JSON; any failure gives a JSON object "
            "whose error names what went wrong, the exception's type included (str() of "
            "TimeoutError() is empty).",
            "Удачный вызов даёт результат инструмента в JSON; любой сбой — объект JSON, в "
            "ошибке которого названо, что случилось, вместе с типом исключения (str() от "
            "TimeoutError() — пустая строка).",
        ),
        same=_same_content,
    )


# A date in a result: an error (json.dumps refuses it) or the date as text (`default=str`).
DATED_AS_TEXT = {"city": "Beijing", "day": "2026-12-02"}


def _same_content(expected: Any, got: Any) -> bool:
    """Equal outcomes; for the dated result, the date written as text is right too."""
    if expected == {"error": SAYS_WHAT} and strict_equal(got, DATED_AS_TEXT):
        return True
    return strict_equal(expected, got)


def _search(query: str, limit: int = 3) -> dict[str, Any]:
    """A second tool with two parameters (one optional)."""
    return {"query": query, "hits": [f"{query} #{k}" for k in range(limit)]}


def _flaky(city: str) -> dict[str, str]:
    """A tool that fails with a ValueError for some inputs."""
    raise ValueError(f"no station near {city}")


def _quoting(city: str) -> dict[str, str]:
    """A tool whose error message holds double quotes (a hand-built JSON string breaks on it)."""
    raise ValueError(f'no city named "{city}"')


def _silent(city: str) -> dict[str, str]:
    """A tool that times out with no message at all (str(error) is empty)."""
    raise TimeoutError


def _forecast(city: str, days: int | None = None, metric: bool = True) -> dict[str, Any]:
    """A tool with optional parameters a model sends as JSON null and true/false."""
    return {"city": city, "days": days or 1, "metric": metric}


def _dated(city: str) -> dict[str, Any]:
    """A tool whose result json.dumps cannot encode (a date)."""
    import datetime

    return {"city": city, "day": datetime.date(2026, 12, 2)}


def content_battery() -> list[Case]:
    """Calls (seeded): results with Cyrillic and emoji, an optional argument, arguments cut off
    or not an object, a wrong argument name, tools that raise TimeoutError or ValueError."""
    rng = seeded("n02 tool_content")
    out = []
    for _ in range(22):
        city = rng.choice(VALUES)
        pick = rng.randrange(6)
        if pick == 0:
            function, text = _get_weather, json.dumps({"city": city}, ensure_ascii=False)
        elif pick == 1:
            arguments = {"query": city, "limit": rng.randint(0, 3)}
            function, text = _search, json.dumps(arguments, ensure_ascii=rng.random() < 0.5)
        elif pick == 2:
            function, text = _get_weather, json.dumps({"city": city})[: rng.randint(1, 8)]
        elif pick == 3:
            function, text = _search, json.dumps({"q": city})
        elif pick == 4:
            function, text = rng.choice([_broken_tool, _flaky]), json.dumps({"city": city})
        else:
            function, text = _search, json.dumps({"query": city, "limit": 2, "sort": "date"})
        out.append(case_of(function, text, shown=f"{function.__name__.strip('_')}, {text!r}"))
    # JSON literals in valid arguments, quotes in an error, an error without a message, a result
    # JSON cannot hold
    for function, arguments in (
        (_forecast, {"city": "Pekin", "days": None, "metric": False}),
        (_quoting, {"city": "Pekin"}),
        (_silent, {"city": "Москва"}),
        (_dated, {"city": "Beijing"}),
    ):
        text = json.dumps(arguments, ensure_ascii=False)
        out.append(case_of(function, text, shown=f"{function.__name__.strip('_')}, {text!r}"))
    return out


def _reference_content(function: Callable[..., Any], text: str) -> str:
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        return json.dumps({"error": f"Arguments are not valid JSON: {error}"})
    try:
        return json.dumps(function(**arguments))
    except Exception as error:  # any failure is news for the model
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


SAYS_WHAT = "<a text that says what went wrong>"  # any such text: errors are compared by kind


def _outcome(content: Any) -> Any:
    """What a content says, compared across spellings: the decoded result, or for an error
    {"error": "<text>"} when it says something, {"error": ""} when it is blank."""
    if not isinstance(content, str):
        return content
    try:
        decoded = json.loads(content)
    except ValueError:
        return {"not JSON": content[:80]}
    if isinstance(decoded, dict) and set(decoded) == {"error"}:
        return {"error": SAYS_WHAT if str(decoded["error"]).strip() else ""}
    return decoded
