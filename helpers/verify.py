"""A pre-flight for an OpenAI-compatible endpoint: does it really do tool calling right?

    python -m helpers.verify --endpoint http://localhost:8000/v1 --model NAME [--key-env VAR]

A fixed, small battery (at most `MAX_REQUESTS` requests, each with a timeout, the whole run with a
deadline) checks what the lessons teach and prints one line per check: PASS, WARN, FAIL, N/A (the
check does not apply: the endpoint refused the setting with a 400, or round 1 sent no reasoning to
send back) or N/R (replay: the cassette has no answer), with the evidence and the lesson that
explains it. Exit status: 0 when nothing failed, 1 when a check failed, 2 when the endpoint
cannot be used at all (unreachable, key refused, model unknown). The key is read from the
environment variable named by `--key-env` and never printed: it is cut out of every piece of
evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from helpers.arguments import validate_arguments
from helpers.i18n import set_language, shorten, tr
from helpers.loop import assistant_message_from
from helpers.replay.modes import LiveSettingsError, check_proxies_for_live
from helpers.replay.record import is_loopback
from helpers.streaming import REASONING_KEYS, ToolCallAccumulator
from helpers.tools import parse_arguments, tool_result_content

MAX_REQUESTS = 20
REQUEST_TIMEOUT = 60.0  # seconds for one request
DEADLINE = 240.0  # seconds for the whole run

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current local time in a city.",
        "parameters": WEATHER["function"]["parameters"],
    },
}
TOOLS = [WEATHER, TIME]
NAMED_CHOICE = {"type": "function", "function": {"name": "get_time"}}
ONE_CITY = "What is the weather in Beijing right now? Use the tool."
TWO_CITIES = "What is the weather in Beijing and in Moscow right now? Use the tool for each city."
NO_TOOL_NEEDED = "Tell me about Beijing in one sentence."
TOOL_RESULT = {"city": "Beijing", "weather": "Sunny", "temperature_c": 21}

# Text a model writes for a call when the server does not parse it out (no parser flag).
CALL_MARKERS = (
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<tool_call>",
    "<function=",
    "functions.get_weather",
    '"name": "get_weather"',
    "<|open|>",
)
PARSER_FLAGS = (
    "vLLM: --enable-auto-tool-choice --tool-call-parser kimi_k2 (Kimi) / hermes or qwen3_coder "
    "(Qwen); SGLang: --tool-call-parser kimi_k2 / qwen25; llama.cpp: --jinja"
)


Pair = tuple[str, str]  # the same text in English and in Russian


class Unusable(Exception):
    """The endpoint cannot be used at all: exit status 2."""


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: str  # PASS, WARN, FAIL, N/A (refused with 400, or no reasoning), N/R (not recorded)
    evidence: str
    lesson: str

    def line(self) -> str:
        return (
            f"{self.status:<4} {self.name}: {self.evidence} [{tr('lesson', 'урок')} {self.lesson}]"
        )


def check(name: Pair, status: str, evidence: Pair, lesson: str) -> Check:
    """A report line in the language in force (`name` and `evidence` as English/Russian pairs)."""
    return Check(tr(*name), status, tr(*evidence), lesson)


@dataclass
class Reply:
    """What one request gave: the HTTP status, the assistant message, finish_reason, error text."""

    status: int
    message: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    error: str = ""
    code: str = ""  # the error's `code`: "no_recording" is the replay server's "not recorded"

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [call for call in self.message.get("tool_calls") or [] if isinstance(call, dict)]

    @property
    def reasoning_key(self) -> str | None:
        return next((key for key in REASONING_KEYS if self.message.get(key)), None)


class Endpoint:
    """Sends the battery's requests, counting them against `MAX_REQUESTS` and the deadline."""

    def __init__(self, url: str, model_name: str, key: str, deadline: float = DEADLINE) -> None:
        self.url = url.rstrip("/")
        self.model_name = model_name
        self.key = key
        self.sent = 0
        self._stop_at = time.monotonic() + deadline
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        remote = not is_loopback(self.url)  # a proxy never catches a server on this machine
        if remote:
            try:
                check_proxies_for_live(self.url)
            except LiveSettingsError as exc:
                raise Unusable(str(exc)) from None
        self._http = httpx.Client(headers=headers, timeout=REQUEST_TIMEOUT, trust_env=remote)

    def hide(self, text: str) -> str:
        """`text` with the key cut out, shortened for one report line."""
        if self.key and len(self.key) >= 4:
            text = text.replace(self.key, "***")
        return shorten(" ".join(text.split()), 160)

    def _budget(self) -> None:
        if self.sent >= MAX_REQUESTS:
            raise Unusable(tr("the battery ran out of requests", "батарея исчерпала запросы"))
        if time.monotonic() > self._stop_at:
            raise Unusable(tr("the pre-flight ran out of time", "проверка не уложилась во время"))
        self.sent += 1

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        self._budget()
        try:
            return self._http.post(self.url + "/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise Unusable(self._unreachable(exc)) from exc

    def _unreachable(self, exc: Exception) -> str:
        name = type(exc).__name__
        return self.hide(
            tr(
                f"cannot reach {self.url} ({name}: {exc}). Is the server running, and is the URL "
                "the one that ends in /v1?",
                f"не удаётся связаться с {self.url} ({name}: {exc}). Запущен ли сервер и "
                "оканчивается ли адрес на /v1?",
            )
        )

    def chat(self, messages: list[dict[str, Any]], **extra: Any) -> Reply:
        """One non-streamed request with the battery's tools."""
        body = {"model": self.model_name, "messages": messages, "tools": TOOLS, **extra}
        response = self._post(body)
        if response.status_code != 200:
            return _error_reply(response.status_code, response.text, self.hide)
        try:
            choice = response.json()["choices"][0]
            message = dict(choice["message"])
        except (ValueError, KeyError, IndexError, TypeError):
            return Reply(response.status_code, error=self.hide(response.text))
        return Reply(200, message, choice.get("finish_reason"))

    def stream(self, messages: list[dict[str, Any]], **extra: Any) -> Reply:
        """The same request streamed, the chunks assembled by `index` (lesson 03)."""
        body = {"model": self.model_name, "messages": messages, "tools": TOOLS, "stream": True}
        self._budget()
        acc = ToolCallAccumulator()
        try:
            with self._http.stream(
                "POST", self.url + "/chat/completions", json={**body, **extra}
            ) as r:
                if r.status_code != 200:
                    text = r.read().decode(errors="replace")
                    return _error_reply(r.status_code, text, self.hide)
                for data in _sse_data(r.iter_lines()):
                    acc.add(json.loads(data))
        except httpx.HTTPError as exc:
            raise Unusable(self._unreachable(exc)) from exc
        except (ValueError, RuntimeError) as exc:  # bad JSON, a malformed chunk, an error event
            return Reply(200, error=self.hide(f"{type(exc).__name__}: {exc}"))
        return Reply(200, acc.assistant_message(), acc.finish_reason)

    def close(self) -> None:
        self._http.close()


def _error_reply(status: int, text: str, hide: Callable[[str], str]) -> Reply:
    """A non-200 answer: its status, its text (key cut out) and its error `code` if JSON."""
    try:
        code = json.loads(text)["error"].get("code") or ""
    except (ValueError, KeyError, TypeError, AttributeError):
        code = ""
    return Reply(status, error=hide(text), code=str(code))


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data:` payloads of a server-sent event stream, up to `[DONE]`."""
    for line in lines:
        if line.startswith("data:"):
            data = line[5:].strip()
            if data == "[DONE]":
                return
            if data:
                yield data


def _calls_summary(calls: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(name, parsed arguments) per call, for comparing two replies."""
    summary = []
    for call in calls:
        function = call.get("function") or {}
        arguments, problem = parse_arguments(function.get("arguments"))
        summary.append((function.get("name"), function.get("arguments") if problem else arguments))
    return summary


def _show(calls: list[dict[str, Any]]) -> Pair:
    """The calls as `name({...})`, or "no calls"."""
    shown = ", ".join(
        f"{name}({json.dumps(arguments, ensure_ascii=False)})"
        for name, arguments in _calls_summary(calls)
    )
    return (shown, shown) if shown else ("no calls", "вызовов нет")


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _not_ok(name: Pair, reply: Reply, lesson: str) -> Check | None:
    """The line for an answer that is not a 200: refused (400), not recorded (replay) or failed."""
    if reply.status == 200 and not reply.error:
        return None
    if reply.status == 400:
        return check(
            name, "N/A", (f"refused with 400: {reply.error}", f"отказ с 400: {reply.error}"), lesson
        )
    if reply.code == "no_recording":
        return check(
            name,
            "N/R",
            (
                "not recorded: the replay cassette has no answer for this setting",
                "не записано: в кассете нет ответа на такой запрос",
            ),
            lesson,
        )
    return check(
        name,
        "FAIL",
        (f"answered {reply.status}: {reply.error}", f"ответ {reply.status}: {reply.error}"),
        lesson,
    )


Step = Callable[[Endpoint, dict[str, Reply]], list[Check]]
CALLS_IN_TOOL_CALLS = ("tool calls arrive in tool_calls", "вызовы приходят в tool_calls")


def check_first_reply(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """A question that needs the tool: calls in `tool_calls`, valid JSON, finish_reason, ids."""
    reply = seen["plain"] = ep.chat(_user(ONE_CITY))
    if reply.status in (401, 403):
        raise Unusable(
            tr(
                f"the key was refused ({reply.status}): {reply.error}",
                f"ключ отвергнут ({reply.status}): {reply.error}",
            )
        )
    if reply.status == 404 and reply.code != "no_recording":
        raise Unusable(
            tr(
                f"no such model or route (404): {reply.error}",
                f"нет такой модели или пути (404): {reply.error}",
            )
        )
    if reply.status != 200 or not reply.message:
        raise Unusable(
            tr(
                f"a plain request with tools failed ({reply.status}): {reply.error}",
                f"простой запрос с инструментами не прошёл ({reply.status}): {reply.error}",
            )
        )
    if reply.calls:
        return [
            check(CALLS_IN_TOOL_CALLS, "PASS", _show(reply.calls), "02"),
            _arguments_check(reply.calls),
            _finish_check(reply),
            _id_check(reply.calls),
        ]
    content = ep.hide(str(reply.message.get("content") or ""))
    marker = next((m for m in CALL_MARKERS if m in content), None)
    if marker:
        evidence = (
            f"the call came as text in content ({marker!r} in {content!r}): start the server "
            f"with its tool-call parser ({PARSER_FLAGS})",
            f"вызов пришёл текстом в content ({marker!r} в {content!r}): запустите сервер с "
            f"парсером вызовов ({PARSER_FLAGS})",
        )
    else:
        evidence = (
            f"no call for a question that needs the tool; content: {content!r}",
            f"нет вызова на вопрос, которому нужен инструмент; content: {content!r}",
        )
    return [check(CALLS_IN_TOOL_CALLS, "FAIL", evidence, "00, 04")]


def _arguments_check(calls: list[dict[str, Any]]) -> Check:
    name = ("arguments are JSON that fits the schema", "аргументы — JSON по схеме")
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
    for call in calls:
        function = call.get("function") or {}
        tool = function.get("name")
        if tool not in schemas:
            return check(
                name,
                "FAIL",
                (f"unknown tool {tool!r}", f"неизвестный инструмент {tool!r}"),
                "01",
            )
        arguments, problem = parse_arguments(function.get("arguments"))
        problems = [problem] if problem else validate_arguments(arguments, schemas[tool])
        if problems:
            text = f"{tool}: {'; '.join(problems)}"
            return check(name, "FAIL", (text, text), "01")
    n = len(calls)
    return check(name, "PASS", (f"{n} of {n} valid", f"верны {n} из {n}"), "01")


def _finish_check(reply: Reply) -> Check:
    name = ("finish_reason with calls", "finish_reason при вызовах")
    if reply.finish_reason == "tool_calls":
        return check(name, "PASS", ("tool_calls", "tool_calls"), "02")
    said = repr(reply.finish_reason)
    return check(
        name,
        "WARN",
        (
            f"{said} beside calls: stop on the message's tool_calls, not on finish_reason",
            f"{said} рядом с вызовами: останавливайтесь по tool_calls сообщения, "
            "а не по finish_reason",
        ),
        "02",
    )


def _id_check(calls: list[dict[str, Any]]) -> Check:
    name = ("call ids present and unique", "id вызовов есть и не повторяются")
    ids = [call.get("id") for call in calls]
    if not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
        return check(
            name,
            "FAIL",
            (
                f"ids {ids!r}: a tool result cannot name its call",
                f"id {ids!r}: результат инструмента не сможет назвать свой вызов",
            ),
            "06",
        )
    shown = ", ".join(ids)
    return check(name, "PASS", (shown, shown), "06")


def check_stream(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """The same question streamed: the assembled calls equal the non-streamed ones."""
    name = ("streamed calls equal non-streamed", "вызовы в потоке равны вызовам без потока")
    reply = ep.stream(_user(ONE_CITY), stream_options={"include_usage": True})
    problem = _not_ok(name, reply, "03")
    if problem:
        return [problem]
    plain, streamed = seen["plain"].calls, reply.calls
    if _calls_summary(plain) != _calls_summary(streamed):
        (a, _), (b, _) = _show(streamed), _show(plain)
        return [
            check(
                name,
                "FAIL",
                (f"streamed {a}; not streamed {b}", f"в потоке {a}; без потока {b}"),
                "03",
            )
        ]
    return [check(name, "PASS", _show(streamed), "03")]


def check_round_two(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """Round 2: the assistant message, reasoning included, then one tool result per call."""
    name = (
        "reasoning sent and accepted back in round 2",
        "рассуждение приходит и принимается в раунде 2",
    )
    first = seen["plain"]
    if "<think>" in str(first.message.get("content") or ""):
        return [
            check(
                name,
                "FAIL",
                (
                    "the reasoning came inside content as <think>: start the server with its "
                    "reasoning parser",
                    "рассуждение пришло внутри content как <think>: запустите сервер с "
                    "парсером рассуждений",
                ),
                "06",
            )
        ]
    assistant = assistant_message_from(first.message)  # reasoning stays, under the server's name
    results = [
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "name": call["function"]["name"],
            "content": tool_result_content(TOOL_RESULT),
        }
        for call in assistant.get("tool_calls", [])
    ]
    reply = ep.chat([*_user(ONE_CITY), assistant, *results])
    if reply.status != 200 or reply.error:
        status = "N/R" if reply.code == "no_recording" else "FAIL"
        return [
            check(
                name,
                status,
                (
                    f"round 2 answered {reply.status}: {reply.error}",
                    f"раунд 2 получил {reply.status}: {reply.error}",
                ),
                "06",
            )
        ]
    key = first.reasoning_key
    if not key:
        return [
            check(
                name,
                "N/A",
                (
                    "round 1 sent no reasoning (not a thinking model, or thinking off); "
                    "round 2 answered 200",
                    "раунд 1 не прислал рассуждения (модель без него или оно выключено); "
                    "раунд 2 ответил 200",
                ),
                "06",
            )
        ]
    return [
        check(
            name,
            "PASS",
            (
                f"{key} sent back, round 2 answered 200",
                f"{key} отправлено обратно, раунд 2 ответил 200",
            ),
            "06",
        )
    ]


def check_no_call_needed(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """A question no tool helps with: the model answers in words (BFCL's "irrelevance")."""
    name = ("no call when no tool is needed", "нет вызова, когда инструмент не нужен")
    reply = seen["unneeded"] = ep.chat(_user(NO_TOOL_NEEDED))
    problem = _not_ok(name, reply, "12")
    if problem:
        return [problem]
    if reply.calls:
        (shown, _) = _show(reply.calls)
        return [
            check(
                name,
                "WARN",
                (
                    f"the model called {shown}: a model's choice, not the server's",
                    f"модель вызвала {shown}: это выбор модели, а не сервера",
                ),
                "12",
            )
        ]
    return [check(name, "PASS", ("answered in words", "ответ словами"), "12")]


def _choice(name: Pair, reply: Reply, honoured: bool, what: Pair) -> Check:
    """Honoured (PASS), refused with 400 (N/A), not recorded (N/R) or ignored (FAIL)."""
    problem = _not_ok(name, reply, "08")
    if problem:
        return problem
    if honoured:
        return check(name, "PASS", _show(reply.calls), "08")
    (got, got_ru) = _show(reply.calls)
    return check(
        name,
        "FAIL",
        (f"ignored: {what[0]}; got {got}", f"не соблюдается: {what[1]}; пришло {got_ru}"),
        "08",
    )


def _names(reply: Reply) -> set[Any]:
    return {(call.get("function") or {}).get("name") for call in reply.calls}


def check_tool_choice(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """`tool_choice` none / required / named: honoured, refused (400) or ignored."""
    none = ep.chat(_user(ONE_CITY), tool_choice="none")
    required = ep.chat(_user(NO_TOOL_NEEDED), tool_choice="required")
    named = ep.chat(_user(ONE_CITY), tool_choice=NAMED_CHOICE)
    return [
        _choice(
            ('tool_choice="none"',) * 2,
            none,
            not none.calls,
            ("no call expected", "вызовов быть не должно"),
        ),
        _choice(
            ('tool_choice="required"',) * 2,
            required,
            bool(required.calls),
            ("a call expected", "ожидался вызов"),
        ),
        _choice(
            ("tool_choice={get_time}",) * 2,
            named,
            _names(named) == {"get_time"},
            ("calls of get_time only expected", "ожидались вызовы только get_time"),
        ),
    ]


def check_parallel(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """Two cities: several calls allowed by default; `parallel_tool_calls: false` gives one."""
    name = ("parallel calls", "параллельные вызовы")
    both = ep.chat(_user(TWO_CITIES))
    first = _not_ok(name, both, "02")
    if first is None and len(both.calls) >= 2:
        first = check(name, "PASS", _show(both.calls), "02")
    elif first is None:
        (shown, _) = _show(both.calls)
        first = check(
            name,
            "WARN",
            (
                f"one call at a time ({shown}): the loop needs more rounds",
                f"по одному вызову ({shown}): циклу понадобится больше раундов",
            ),
            "02",
        )
    single = ep.chat(_user(TWO_CITIES), parallel_tool_calls=False)
    second = _choice(
        ("parallel_tool_calls=false",) * 2,
        single,
        len(single.calls) <= 1,
        ("at most one call expected", "ожидалось не больше одного вызова"),
    )
    return [first, second]


BATTERY: tuple[Step, ...] = (
    check_first_reply,
    check_stream,
    check_round_two,
    check_no_call_needed,
    check_tool_choice,
    check_parallel,
)


def run(url: str, model_name: str, key: str = "", deadline: float = DEADLINE) -> list[Check]:
    """Run the battery against one endpoint and return its report lines. Raises `Unusable`."""
    ep = Endpoint(url, model_name, key, deadline)
    seen: dict[str, Reply] = {}
    checks: list[Check] = []
    try:
        for step in BATTERY:
            checks.extend(step(ep, seen))
            if checks[0].status == "FAIL":
                break  # without calls in tool_calls nothing else can be measured
    finally:
        ep.close()
    return checks


def exit_status(checks: list[Check]) -> int:
    """0 when nothing failed, 1 when a check failed."""
    return 1 if any(item.status == "FAIL" for item in checks) else 0


def main(argv: list[str] | None = None) -> int:
    """The command line: run the battery, print the report, return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m helpers.verify", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--endpoint", required=True, help="base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--model", required=True, help="the served model's name")
    parser.add_argument("--key-env", default="", help="environment variable that holds the key")
    parser.add_argument("--lang", choices=("en", "ru"), default=None)
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)
    key = os.environ.get(args.key_env, "") if args.key_env else ""
    if args.key_env and not key:
        print(
            tr(f"the variable {args.key_env} is not set", f"переменная {args.key_env} не задана"),
            file=sys.stderr,
        )
        return 2
    try:
        checks = run(args.endpoint, args.model, key)
    except Unusable as exc:
        print(tr(f"UNUSABLE {exc}", f"НЕДОСТУПНО {exc}"), file=sys.stderr)
        return 2
    for item in checks:
        print(item.line())
    failed = sum(item.status == "FAIL" for item in checks)
    print(
        tr(
            f"{len(checks)} checks, {failed} failed",
            f"проверок: {len(checks)}, не прошли: {failed}",
        )
    )
    return exit_status(checks)


if __name__ == "__main__":
    sys.exit(main())
