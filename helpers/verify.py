"""A pre-flight for an OpenAI-compatible endpoint: does it really do tool calling right?

    python -m helpers.verify --endpoint http://localhost:8000/v1 --model NAME [--key-env VAR]

A fixed, small battery (at most `MAX_REQUESTS` requests, each with a timeout, the whole run with a
deadline) checks what the lessons teach and prints one line per check: PASS, WARN, FAIL or N/A
(the endpoint refused the setting: not supported), with the evidence and the lesson that explains
it. Exit status: 0 when nothing failed, 1 when a check failed, 2 when the endpoint cannot be used
at all (unreachable, key refused, model unknown). The key is read from the environment variable
named by `--key-env` and never printed: it is cut out of every piece of evidence.
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
from helpers.i18n import set_language, tr
from helpers.streaming import ToolCallAccumulator, shorten
from helpers.tools import parse_arguments

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
ONE_CITY = "What is the weather in Beijing right now? Use the tool."
TWO_CITIES = "What is the weather in Beijing and in Moscow right now? Use the tool for each city."
NO_TOOL_NEEDED = "Say hello in one short sentence."
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
REASONING_KEYS = ("reasoning_content", "reasoning")


class Unusable(Exception):
    """The endpoint cannot be used at all: exit status 2."""


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: str  # PASS, WARN, FAIL, N/A
    evidence: str
    lesson: str

    def line(self) -> str:
        return f"{self.status:<4} {self.name}: {self.evidence} [{self.lesson}]"


@dataclass
class Reply:
    """What one request gave: the HTTP status, the assistant message, finish_reason, error text."""

    status: int
    message: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    error: str = ""

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
        # trust_env=False: a proxy set for the internet must not catch a local endpoint.
        self._http = httpx.Client(headers=headers, timeout=REQUEST_TIMEOUT, trust_env=False)

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
            return Reply(response.status_code, error=self.hide(response.text))
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
                    return Reply(r.status_code, error=self.hide(r.read().decode(errors="replace")))
                for data in _sse_data(r.iter_lines()):
                    acc.add(json.loads(data))
        except httpx.HTTPError as exc:
            raise Unusable(self._unreachable(exc)) from exc
        except (ValueError, RuntimeError) as exc:  # bad JSON, a malformed chunk, an error event
            return Reply(200, error=self.hide(f"{type(exc).__name__}: {exc}"))
        return Reply(200, acc.assistant_message(), acc.finish_reason)

    def close(self) -> None:
        self._http.close()


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
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = function.get("arguments")
        summary.append((function.get("name"), arguments))
    return summary


def _show(calls: list[dict[str, Any]]) -> str:
    return ", ".join(
        f"{name}({json.dumps(args, ensure_ascii=False)})" for name, args in _calls_summary(calls)
    ) or tr("no calls", "вызовов нет")


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


Step = Callable[[Endpoint, dict[str, Reply]], list[Check]]


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
    if reply.status == 404:
        raise Unusable(
            tr(
                f"no such model or route (404): {reply.error}",
                f"нет такой модели или пути (404): {reply.error}",
            )
        )
    if reply.status != 200 or not reply.message:
        raise Unusable(
            tr(
                f"a plain tool request failed ({reply.status}): {reply.error}",
                f"простой запрос с инструментами не прошёл ({reply.status}): {reply.error}",
            )
        )
    name = tr("tool calls arrive in tool_calls", "вызовы приходят в tool_calls")
    content = str(reply.message.get("content") or "")
    if not reply.calls:
        marker = next((m for m in CALL_MARKERS if m in content), None)
        if marker:
            evidence = tr(
                f"the call came as text in content ({marker!r} in {ep.hide(content)!r}): start the "
                f"server with its tool-call parser ({PARSER_FLAGS})",
                f"вызов пришёл текстом в content ({marker!r} в {ep.hide(content)!r}): запустите "
                f"сервер с парсером вызовов ({PARSER_FLAGS})",
            )
        else:
            evidence = tr(
                f"no call for a question that needs the tool; content: {ep.hide(content)!r}",
                f"нет вызова на вопрос, которому нужен инструмент; content: {ep.hide(content)!r}",
            )
        return [Check(name, "FAIL", evidence, "lesson 00, 04")]
    checks = [Check(name, "PASS", _show(reply.calls), "lesson 02")]
    checks.append(_arguments_check(reply.calls))
    checks.append(_finish_check(reply))
    checks.append(_id_check(reply.calls))
    return checks


def _arguments_check(calls: list[dict[str, Any]]) -> Check:
    name = tr("arguments are JSON that fits the schema", "аргументы — JSON по схеме")
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
    for call in calls:
        function = call.get("function") or {}
        tool = function.get("name")
        if tool not in schemas:
            return Check(
                name,
                "FAIL",
                tr(f"unknown tool {tool!r}", f"неизвестный инструмент {tool!r}"),
                "lesson 01",
            )
        arguments, problem = parse_arguments(function.get("arguments"))
        problems = [problem] if problem else validate_arguments(arguments, schemas[tool])
        if problems:
            return Check(name, "FAIL", f"{tool}: {'; '.join(problems)}", "lesson 01")
    return Check(
        name,
        "PASS",
        tr(f"{len(calls)} of {len(calls)} valid", f"{len(calls)} из {len(calls)} верны"),
        "lesson 01",
    )


def _finish_check(reply: Reply) -> Check:
    name = tr("finish_reason with calls", "finish_reason при вызовах")
    if reply.finish_reason == "tool_calls":
        return Check(name, "PASS", "tool_calls", "lesson 02")
    return Check(
        name,
        "WARN",
        tr(
            f"{reply.finish_reason!r} beside calls: stop on the message's tool_calls, not on it",
            f"{reply.finish_reason!r} рядом с вызовами: останавливайтесь по tool_calls "
            "сообщения, а не по нему",
        ),
        "lesson 02",
    )


def _id_check(calls: list[dict[str, Any]]) -> Check:
    name = tr("call ids present and unique", "id вызовов есть и не повторяются")
    ids = [call.get("id") for call in calls]
    if not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
        return Check(
            name,
            "FAIL",
            tr(
                f"ids {ids!r}: a tool result cannot name its call",
                f"id {ids!r}: результат инструмента не сможет назвать свой вызов",
            ),
            "lesson 06",
        )
    return Check(name, "PASS", ", ".join(ids), "lesson 06")


def check_stream(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """The same question streamed: the assembled calls equal the non-streamed ones."""
    name = tr("streamed calls equal non-streamed", "потоковые вызовы равны непотоковым")
    if not seen["plain"].calls:
        return [Check(name, "N/A", tr("no calls to compare", "нечего сравнивать"), "lesson 03")]
    reply = ep.stream(_user(ONE_CITY), stream_options={"include_usage": True})
    if reply.status != 200 or reply.error:
        return [Check(name, "FAIL", f"{reply.status}: {reply.error}", "lesson 03")]
    plain, streamed = _calls_summary(seen["plain"].calls), _calls_summary(reply.calls)
    if plain != streamed:
        return [
            Check(
                name,
                "FAIL",
                tr(
                    f"streamed {_show(reply.calls)}, non-streamed {_show(seen['plain'].calls)}",
                    f"в потоке {_show(reply.calls)}, без потока {_show(seen['plain'].calls)}",
                ),
                "lesson 03",
            )
        ]
    return [Check(name, "PASS", _show(reply.calls), "lesson 03")]


def check_round_two(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """Round 2: the assistant message (reasoning included) and the tool result go back."""
    first = seen["plain"]
    name = tr(
        "reasoning sent and accepted back in round 2",
        "рассуждение приходит и принимается в раунде 2",
    )
    if not first.calls:
        return [
            Check(name, "N/A", tr("no calls in round 1", "в раунде 1 нет вызовов"), "lesson 06")
        ]
    content = str(first.message.get("content") or "")
    assistant = {
        "role": "assistant",
        "content": first.message.get("content"),
        "tool_calls": first.calls,
    }
    key = first.reasoning_key
    if key:
        assistant[key] = first.message[key]
    results = [
        {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(TOOL_RESULT)}
        for call in first.calls
    ]
    reply = ep.chat([*_user(ONE_CITY), assistant, *results])
    if reply.status != 200:
        return [
            Check(
                name,
                "FAIL",
                tr(
                    f"round 2 answered {reply.status}: {reply.error}",
                    f"раунд 2 получил {reply.status}: {reply.error}",
                ),
                "lesson 06",
            )
        ]
    if "<think>" in content:
        return [
            Check(
                name,
                "FAIL",
                tr(
                    "reasoning left in content as <think>: start the server with its reasoning "
                    "parser",
                    "рассуждение осталось в content как <think>: запустите сервер с парсером "
                    "рассуждений",
                ),
                "lesson 06",
            )
        ]
    if not key:
        return [
            Check(
                name,
                "N/A",
                tr(
                    "round 1 sent no reasoning field (not a thinking model, or thinking off); "
                    "round 2 answered 200",
                    "раунд 1 не прислал поля рассуждения (модель без рассуждения или оно "
                    "выключено); раунд 2 ответил 200",
                ),
                "lesson 06",
            )
        ]
    return [
        Check(
            name,
            "PASS",
            tr(
                f"{key} sent back, round 2 answered 200",
                f"{key} отправлено обратно, раунд 2 ответил 200",
            ),
            "lesson 06",
        )
    ]


def _choice_check(name: str, reply: Reply, honoured: bool, what: str) -> Check:
    if reply.status == 400:
        return Check(
            name,
            "N/A",
            tr(f"refused with 400: {reply.error}", f"отказ с 400: {reply.error}"),
            "lesson 08",
        )
    if reply.status != 200:
        return Check(name, "FAIL", f"{reply.status}: {reply.error}", "lesson 08")
    if honoured:
        return Check(name, "PASS", _show(reply.calls), "lesson 08")
    return Check(
        name,
        "FAIL",
        tr(
            f"ignored: {what}; got {_show(reply.calls)}",
            f"не соблюдается: {what}; пришло {_show(reply.calls)}",
        ),
        "lesson 08",
    )


def check_tool_choice(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """`tool_choice` none / required / named: honoured, refused (400) or ignored."""
    none = ep.chat(_user(ONE_CITY), tool_choice="none")
    required = ep.chat(_user(NO_TOOL_NEEDED), tool_choice="required")
    named_choice = {"type": "function", "function": {"name": "get_time"}}
    named = ep.chat(_user(ONE_CITY), tool_choice=named_choice)
    named_ok = bool(named.calls) and all(
        (c.get("function") or {}).get("name") == "get_time" for c in named.calls
    )
    return [
        _choice_check(
            'tool_choice="none"',
            none,
            not none.calls,
            tr("no call expected", "вызовов быть не должно"),
        ),
        _choice_check(
            'tool_choice="required"',
            required,
            bool(required.calls),
            tr("a call expected", "ожидался вызов"),
        ),
        _choice_check(
            "tool_choice={get_time}",
            named,
            named_ok,
            tr("calls of get_time only expected", "ожидались вызовы только get_time"),
        ),
    ]


def check_parallel(ep: Endpoint, seen: dict[str, Reply]) -> list[Check]:
    """Two cities: several calls allowed by default; `parallel_tool_calls: false` gives one."""
    both = ep.chat(_user(TWO_CITIES))
    single = ep.chat(_user(TWO_CITIES), parallel_tool_calls=False)
    name = tr("parallel calls", "параллельные вызовы")
    if both.status != 200:
        first = Check(name, "FAIL", f"{both.status}: {both.error}", "lesson 02")
    elif len(both.calls) >= 2:
        first = Check(name, "PASS", _show(both.calls), "lesson 02")
    else:
        first = Check(
            name,
            "WARN",
            tr(
                f"one call at a time ({_show(both.calls)}): the loop needs more rounds",
                f"по одному вызову ({_show(both.calls)}): циклу нужно больше раундов",
            ),
            "lesson 02",
        )
    second = _choice_check(
        "parallel_tool_calls=false",
        single,
        len(single.calls) <= 1,
        tr("at most one call expected", "ожидался не больше чем один вызов"),
    )
    return [first, second]


BATTERY: tuple[Step, ...] = (
    check_first_reply,
    check_stream,
    check_round_two,
    check_tool_choice,
    check_parallel,
)


def run(
    url: str, model_name: str, key: str = "", deadline: float = DEADLINE
) -> tuple[list[Check], int]:
    """Run the battery; the checks and the number of requests sent. Raises `Unusable`."""
    ep = Endpoint(url, model_name, key, deadline)
    seen: dict[str, Reply] = {}
    checks: list[Check] = []
    try:
        for step in BATTERY:
            checks.extend(step(ep, seen))
            if step is check_first_reply and checks[0].status == "FAIL":
                break  # without calls nothing else can be measured
    finally:
        ep.close()
    return checks, ep.sent


def exit_status(checks: list[Check]) -> int:
    return 1 if any(check.status == "FAIL" for check in checks) else 0


def main(argv: list[str] | None = None) -> int:
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
        checks, sent = run(args.endpoint, args.model, key)
    except Unusable as exc:
        print(tr(f"UNUSABLE {exc}", f"НЕДОСТУПНО {exc}"), file=sys.stderr)
        return 2
    for check in checks:
        print(check.line())
    failed = sum(check.status == "FAIL" for check in checks)
    print(
        tr(
            f"{len(checks)} checks, {failed} failed, {sent} requests",
            f"проверок: {len(checks)}, не прошли: {failed}, запросов: {sent}",
        )
    )
    return exit_status(checks)


if __name__ == "__main__":
    sys.exit(main())
