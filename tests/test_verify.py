"""The endpoint pre-flight (`python -m helpers.verify`) against small loopback servers that each
get one thing wrong the way real misconfigured engines do, and one that gets everything right.

The servers are written here, independently of `helpers.verify`: each answers from the request
(tools, `tool_choice`, `parallel_tool_calls`, stream or not, the history) what the engine it
imitates would answer, so the pre-flight's verdicts are measured, not echoed.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from helpers import verify
from helpers.i18n import reset_language, set_language

KEY = "sk-preflight-secret-0123456789"
REASONING = "The user wants the weather: call get_weather."


def call(index: int, name: str, city: str, call_id: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped call as an engine sends it."""
    arguments = json.dumps({"city": city})
    return {
        "id": call_id or f"functions.{name}:{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


class Engine:
    """A correctly configured engine; subclasses break one thing each."""

    thinks = False
    named_honoured = True
    required_honoured = True
    parallel_false_honoured = True

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, the assistant message + finish_reason) for a chat request."""
        messages = body["messages"]
        if messages[-1]["role"] == "tool":
            problem = self.round_two_problem(messages)
            if problem:
                return 400, {"error": {"message": problem, "type": "invalid_request_error"}}
            return 200, {"content": "It is sunny in Beijing.", "finish_reason": "stop"}
        question = messages[-1]["content"]
        choice = body.get("tool_choice", "auto")
        cities = ["Beijing", "Moscow"] if "Moscow" in question else ["Beijing"]
        if question.startswith("Tell me about"):  # no tool helps with that
            cities = []
        if choice == "none":
            return 200, {"content": "I will not use tools.", "finish_reason": "stop"}
        name = "get_weather"
        if isinstance(choice, dict) and self.named_honoured:
            name, cities = choice["function"]["name"], cities[:1] or ["Beijing"]
        if choice == "required" and not cities and self.required_honoured:
            cities = ["Beijing"]
        if body.get("parallel_tool_calls") is False and self.parallel_false_honoured:
            cities = cities[:1]
        if not cities:
            return 200, {"content": "Beijing is the capital of China.", "finish_reason": "stop"}
        return 200, self.with_calls([call(i, name, city) for i, city in enumerate(cities)])

    def with_calls(self, calls: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "content": None,
            "tool_calls": calls,
            "finish_reason": "tool_calls",
        }
        if self.thinks:
            message["reasoning_content"] = REASONING
        return message

    def round_two_problem(self, messages: list[dict[str, Any]]) -> str | None:
        """A thinking model's server refuses round 2 without its reasoning (Moonshot's 400)."""
        assistant = next(m for m in messages if m["role"] == "assistant")
        if self.thinks and not assistant.get("reasoning_content"):
            return "thinking is enabled but reasoning_content is missing in assistant tool call message"
        return None

    def stream_calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The calls as the stream sends them (the same, unless a subclass changes them)."""
        return calls


class Thinking(Engine):
    thinks = True


class NoParser(Engine):
    """vLLM started without --tool-call-parser: the model's call text stays in content."""

    def with_calls(self, calls: list[dict[str, Any]]) -> dict[str, Any]:
        text = "".join(
            f"<|tool_call_begin|>{c['id']}<|tool_call_argument_begin|>{c['function']['arguments']}"
            "<|tool_call_end|>"
            for c in calls
        )
        return {
            "content": f"<|tool_calls_section_begin|>{text}<|tool_calls_section_end|>",
            "finish_reason": "stop",
        }


class RejectsReasoning(Thinking):
    """Sends reasoning_content, then refuses it back as an unknown field (a strict old schema)."""

    def round_two_problem(self, messages: list[dict[str, Any]]) -> str | None:
        if any("reasoning_content" in m for m in messages):
            return "messages.1.reasoning_content: Extra inputs are not permitted"
        return None


class ThinkInContent(Engine):
    """A thinking model with no reasoning parser: the reasoning arrives inside content."""

    def with_calls(self, calls: list[dict[str, Any]]) -> dict[str, Any]:
        message = super().with_calls(calls)
        message["content"] = f"<think>{REASONING}</think>"
        return message


class StreamDiffers(Engine):
    """The streamed arguments differ from the non-streamed ones (a broken streaming parser)."""

    def stream_calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [call(0, "get_weather", "Beijin")]


class IgnoresRequired(Engine):
    required_honoured = False


class IgnoresNamed(Engine):
    """Kimi K3 on Moonshot's platform: a named tool_choice acts like auto."""

    named_honoured = False


class RefusesForced(Thinking):
    """Moonshot's kimi-k2.6 with thinking on: a forced choice is a 400."""

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        choice = body.get("tool_choice")
        if choice == "required" or isinstance(choice, dict):
            return 400, {
                "error": {"message": "tool_choice 'required' is incompatible with thinking enabled"}
            }
        return super().reply(body)


class Server:
    """A loopback HTTP server speaking `/v1/chat/completions` for one `Engine`; counts requests."""

    def __init__(self, engine: Engine, key: str = KEY) -> None:
        self.engine, self.key, self.requests = engine, key, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                owner.requests += 1
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.headers.get("Authorization") != f"Bearer {owner.key}":
                    return self._json(401, {"error": {"message": "Invalid Authentication"}})
                if body.get("model") != "test-model":
                    return self._json(
                        404, {"error": {"message": f"model {body.get('model')} not found"}}
                    )
                status, message = owner.engine.reply(body)
                if status != 200:
                    return self._json(status, message)
                finish = message.pop("finish_reason")
                if body.get("stream"):
                    return self._stream(message, finish)
                self._json(
                    200,
                    {
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", **message},
                                "finish_reason": finish,
                            }
                        ]
                    },
                )

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any], finish: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                deltas: list[dict[str, Any]] = [{"role": "assistant"}]
                if message.get("reasoning_content"):
                    deltas.append({"reasoning_content": message["reasoning_content"]})
                if message.get("content"):
                    deltas.append({"content": message["content"]})
                for i, c in enumerate(owner.engine.stream_calls(message.get("tool_calls") or [])):
                    head = {
                        "index": i,
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["function"]["name"], "arguments": ""},
                    }
                    deltas.append({"tool_calls": [head]})
                    text = c["function"]["arguments"]
                    for piece in (text[:5], text[5:]):
                        deltas.append(
                            {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                        )
                chunks = [
                    {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
                ]
                chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
                chunks.append({"choices": [], "usage": {"total_tokens": 10}})
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def english():
    set_language("en")
    yield
    reset_language()


def preflight(engine: Engine, capsys, monkeypatch, *extra: str) -> tuple[int, str, Server]:
    server = Server(engine)
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    try:
        status = verify.main(
            [
                "--endpoint",
                server.url,
                "--model",
                "test-model",
                "--key-env",
                "PREFLIGHT_KEY",
                *extra,
            ]
        )
    finally:
        server.close()
    out = capsys.readouterr()
    return status, out.out + out.err, server


def line_of(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if f" {name}:" in line)


@pytest.mark.parametrize("engine", [Engine(), Thinking()], ids=["instruct", "thinking"])
def test_a_correct_engine_passes(engine, capsys, monkeypatch):
    status, output, server = preflight(engine, capsys, monkeypatch)
    assert status == 0, output
    assert "FAIL" not in output
    assert line_of(output, "tool calls arrive in tool_calls").startswith("PASS")
    assert line_of(output, "streamed calls equal non-streamed").startswith("PASS")
    expected = "PASS" if engine.thinks else "N/A"
    assert line_of(output, "reasoning sent and accepted back in round 2").startswith(expected)
    assert server.requests <= 40


def test_calls_left_as_text_name_the_parser_flag(capsys, monkeypatch):
    status, output, _ = preflight(NoParser(), capsys, monkeypatch)
    assert status == 1
    line = line_of(output, "tool calls arrive in tool_calls")
    assert line.startswith("FAIL")
    assert "--tool-call-parser" in line and "lesson 00" in line


def test_reasoning_refused_in_round_two_fails(capsys, monkeypatch):
    status, output, _ = preflight(RejectsReasoning(), capsys, monkeypatch)
    assert status == 1
    line = line_of(output, "reasoning sent and accepted back in round 2")
    assert (
        line.startswith("FAIL") and "400" in line and "Extra inputs" in line and "lesson 06" in line
    )


def test_reasoning_left_in_content_fails(capsys, monkeypatch):
    status, output, _ = preflight(ThinkInContent(), capsys, monkeypatch)
    assert status == 1
    assert line_of(output, "reasoning sent and accepted back in round 2").startswith("FAIL")


def test_streamed_arguments_that_differ_fail(capsys, monkeypatch):
    status, output, _ = preflight(StreamDiffers(), capsys, monkeypatch)
    assert status == 1
    line = line_of(output, "streamed calls equal non-streamed")
    assert line.startswith("FAIL") and "Beijin" in line and "lesson 03" in line


def test_an_ignored_required_choice_fails(capsys, monkeypatch):
    status, output, _ = preflight(IgnoresRequired(), capsys, monkeypatch)
    assert status == 1
    assert line_of(output, 'tool_choice="required"').startswith("FAIL")
    assert line_of(output, 'tool_choice="none"').startswith("PASS")


def test_an_ignored_named_choice_fails(capsys, monkeypatch):
    status, output, _ = preflight(IgnoresNamed(), capsys, monkeypatch)
    assert status == 1
    assert "ignored" in line_of(output, "tool_choice={get_time}")


def test_a_refused_forced_choice_is_not_supported_not_failed(capsys, monkeypatch):
    status, output, _ = preflight(RefusesForced(), capsys, monkeypatch)
    assert status == 0, output
    assert line_of(output, 'tool_choice="required"').startswith("N/A")
    assert "refused with 400" in line_of(output, "tool_choice={get_time}")


def test_an_unreachable_endpoint_exits_2_with_a_clear_message(capsys, monkeypatch):
    server = Server(Engine())
    url = server.url
    server.close()  # nothing listens there any more
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    started = time.monotonic()
    status = verify.main(["--endpoint", url, "--model", "test-model", "--key-env", "PREFLIGHT_KEY"])
    output = capsys.readouterr().err
    assert status == 2
    assert "cannot reach" in output and url in output
    assert time.monotonic() - started < 30


def test_a_refused_key_exits_2_and_is_never_printed(capsys, monkeypatch):
    server = Server(Engine(), key="another-key")
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    try:
        status = verify.main(
            ["--endpoint", server.url, "--model", "test-model", "--key-env", "PREFLIGHT_KEY"]
        )
    finally:
        server.close()
    out = capsys.readouterr()
    assert status == 2
    assert "401" in out.err
    assert KEY not in out.out + out.err


def test_a_missing_key_variable_says_which(capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    assert (
        verify.main(
            ["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--key-env", "NO_SUCH_KEY"]
        )
        == 2
    )
    assert "NO_SUCH_KEY" in capsys.readouterr().err


def test_a_key_echoed_by_the_server_is_cut_out(capsys, monkeypatch):
    class Echoes(Engine):
        def reply(self, body):
            if body.get("tool_choice") == "none":
                return 400, {"error": {"message": f"bad request from key {KEY}"}}
            return super().reply(body)

    _, output, _ = preflight(Echoes(), capsys, monkeypatch)
    assert KEY not in output
    assert "***" in line_of(output, 'tool_choice="none"')


def test_russian_report(capsys, monkeypatch):
    status, output, _ = preflight(NoParser(), capsys, monkeypatch, "--lang", "ru")
    assert status == 1
    assert "вызовы приходят в tool_calls" in output and "вызов пришёл текстом" in output


def test_the_battery_stays_small():
    assert verify.MAX_REQUESTS <= 40


def _proxy_env(monkeypatch, **values: str) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_a_local_endpoint_is_reached_directly_behind_a_dead_proxy(capsys, monkeypatch):
    _proxy_env(monkeypatch, HTTP_PROXY="http://127.0.0.1:9", all_proxy="socks://127.0.0.1:9")
    status, output, server = preflight(Engine(), capsys, monkeypatch)
    assert status == 0 and server.requests > 0, output


def test_a_remote_endpoint_is_reached_through_the_environments_proxy(capsys, monkeypatch):
    """The class server is named by a host only the proxy can resolve: here the stand-in engine
    itself plays the proxy (it answers whatever absolute URL it is asked for)."""
    server = Server(Engine())
    _proxy_env(monkeypatch, HTTP_PROXY=server.url.removesuffix("/v1"))
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    remote = "http://class-server.invalid:8000/v1"
    try:
        status = verify.main(
            ["--endpoint", remote, "--model", "test-model", "--key-env", "PREFLIGHT_KEY"]
        )
    finally:
        server.close()
    output = capsys.readouterr()
    assert status == 0 and server.requests > 0, output.out + output.err


def test_a_remote_endpoint_behind_an_unusable_proxy_says_what_to_do(capsys, monkeypatch):
    _proxy_env(monkeypatch, all_proxy="socks://user:secret@127.0.0.1:9")
    status = verify.main(["--endpoint", "https://api.moonshot.ai/v1", "--model", "test-model"])
    output = capsys.readouterr().err
    assert status == 2 and "UNUSABLE" in output and "unset all_proxy" in output
    assert "secret" not in output
