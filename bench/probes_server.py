"""Reliability probes for the replay server and the record proxy: bad input, load, record.

Run through the runner: python bench/probes.py --group "bad input" --group load --group record
(add --quick for the sizes tests/test_probes_server.py runs). Inputs come from `random.Random`
seeded with SEED (printed once per run), so a run is reproducible.

What each probe counts as a crash: an answer with status 500 (or any 5xx but 502/504 from the
proxy for a failing upstream and 505 for an HTTP version the server does not speak), a 4xx whose
body is not an OpenAI-shaped error with a message, a handler traceback in the `helpers.replay`
log, no answer where HTTP requires one, a hang past the probe's time limit, a thread left behind
by a stopped server. A data loss: a good recording replaced or missing, a cassette that no longer
loads, an acknowledged exchange missing from the file, a secret in a cassette, a capture that does
not replay (404).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from probes import Outcome, Probe

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.paths import RECORDINGS_DIR  # noqa: E402
from helpers.replay import load_cassette  # noqa: E402
from helpers.replay import record as record_module  # noqa: E402
from helpers.replay.cassette import CassetteError  # noqa: E402
from helpers.replay.record import RecordProxy  # noqa: E402
from helpers.replay.server import ReplayServer  # noqa: E402
from tests.fakes import completion  # noqa: E402
from tests.test_replay_fixtures import interactions as fixture_interactions  # noqa: E402
from tests.test_replay_fixtures import write_cassette  # noqa: E402

SEED = 20261201
TIMEOUT = 20.0  # seconds one exchange may take before it counts as a hang
_seed_printed = False


def _rng(salt: str) -> random.Random:
    """A generator for one probe: the run's seed plus the probe's name."""
    global _seed_printed
    if not _seed_printed:
        print(f"probes_server: seed {SEED}", file=sys.stderr)
        _seed_printed = True
    return random.Random(f"{SEED}:{salt}")


# ---------------------------------------------------------------- plumbing


@dataclass
class Answer:
    """What came back on one raw connection (status None: closed without an answer)."""

    status: int | None
    headers: dict[str, str]
    body: bytes


def _read_answer(sock: socket.socket) -> Answer:
    """Read one HTTP response from a socket: the head, then Content-Length bytes or to EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) >= 5 and not data.startswith(b"HTTP/"):  # an HTTP/0.9 answer: body only
            while chunk := sock.recv(65536):
                data += chunk
            return Answer(0, {}, data)
        chunk = sock.recv(65536)
        if not chunk:
            if not data:
                return Answer(None, {}, b"")
            raise ValueError(f"the answer ended inside its head: {data[:80]!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    status = int(lines[0].split()[1])
    if 100 <= status < 200:  # an interim answer (100 Continue): the real one follows
        while b"\r\n\r\n" not in rest:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        head, _, rest = rest.partition(b"\r\n\r\n")
        lines = head.decode("iso-8859-1").split("\r\n")
        status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        want = int(headers["content-length"])
        while len(rest) < want:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return Answer(status, headers, rest[:want])
    while chunk := sock.recv(65536):
        rest += chunk
    return Answer(status, headers, rest)


def raw_exchange(
    port: int, payload: bytes, *, half_close: bool = False, full_close: bool = False
) -> Answer:
    """Send raw bytes on a new connection and read the answer (TimeoutError past TIMEOUT)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        try:
            sock.sendall(payload)
        except OSError:  # the server closed early (a refused huge body): read what it said
            pass
        if full_close:
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            return Answer(None, {}, b"")
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        try:
            return _read_answer(sock)
        except ConnectionResetError:
            return Answer(None, {}, b"")


def post(path: str, body: bytes | str, extra: str = "", length: int | None = None) -> bytes:
    """A raw POST request with a Content-Length (the body's unless `length` says otherwise)."""
    data = body.encode() if isinstance(body, str) else body
    size = len(data) if length is None else length
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n{extra}\r\n"
    )
    return head.encode("latin-1") + data


def error_problem(answer: Answer, allow_close: bool = False) -> str | None:
    """Why an answer to a bad request is not a clear client error (None when it is)."""
    if answer.status is None:
        return None if allow_close else "the connection closed without an answer"
    if answer.status == 505 or 400 <= answer.status < 500:
        try:
            error = json.loads(answer.body)["error"]
            message = error["message"]
        except (ValueError, KeyError, TypeError):
            return f"HTTP {answer.status} without an OpenAI-shaped error: {answer.body[:120]!r}"
        if not isinstance(message, str) or len(message) < 10:
            return f"HTTP {answer.status} with an empty or bare message {message!r}"
        if "Traceback" in message or "Replay server error" in message:
            return f"HTTP {answer.status} leaks an internal error: {message[:160]}"
        return None
    return f"HTTP {answer.status} to a client's mistake: {answer.body[:200]!r}"


def judge(answer: Answer, options: dict[str, Any]) -> str | None:
    """Why the answer to one malformed request is wrong (None: fine). Options: `good` (a valid
    request: 200), `lenient` (the server may read it as valid: 200 or a clear error), `head` (a
    HEAD: an error status without a body), `allow_close` (the client hung up: no answer is fine)."""
    if options.get("good") or (options.get("lenient") and answer.status == 200):
        return None if answer.status == 200 else f"HTTP {answer.status} to a valid request"
    if answer.status == 0:  # HTTP/0.9 has no status line: the body alone must say what is wrong
        return (
            error_problem(Answer(400, {}, answer.body))
            if options.get("http09")
            else "no status line"
        )
    if options.get("head") and answer.status is not None and 400 <= answer.status < 500:
        return None if not answer.body else "a HEAD answer with a body"
    return error_problem(answer, options.get("allow_close", False))


class TracebackLog(logging.Handler):
    """Collects `helpers.replay` records that carry a traceback (a handler's unexpected error)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.levelno >= logging.WARNING:
            exc = record.exc_info[1]
            nan = isinstance(exc, ValueError) and "not JSON compliant" in str(exc)
            if (
                isinstance(exc, UnicodeEncodeError) or nan
            ) and "not written" in record.getMessage():
                # documented: a request holding a lone surrogate cannot be stored as UTF-8 (and
                # replay refuses it with a 400), nor one holding NaN or Infinity as JSON; the
                # answer is relayed, the log says why
                return
            self.found.append(f"{record.getMessage()}: {type(exc).__name__}: {exc}"[:300])


@contextmanager
def watched_log() -> Iterator[TracebackLog]:
    """Capture handler tracebacks logged while the block runs."""
    logger = logging.getLogger("helpers.replay")
    handler = TracebackLog()
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


def run_with_timeout(fn: Callable[[], Any], seconds: float) -> tuple[bool, Any]:
    """Run fn in a daemon thread; (finished, result or exception)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return (not thread.is_alive(), box[0] if box else None)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


# ---------------------------------------------------------------- the recorded answers


@dataclass(frozen=True)
class Recorded:
    """A recorded request and the bytes the server must answer it with."""

    path: str  # with the /lessons/<stem> prefix: that cassette's own answer
    body: dict[str, Any]
    status: int
    json: Any  # the recorded body (None for a stream)
    sse: bytes  # the recorded stream as bytes (b"" for JSON)

    @property
    def stream(self) -> bool:
        return bool(self.sse)


def sse_bytes(events: list[dict[str, Any]]) -> bytes:
    """A recorded stream as the wire carries it: each event `data: ...` and a blank line."""
    out = []
    for event in events:
        data = event["data"]
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        out.append("".join(f"data: {line}\n" for line in text.split("\n")) + "\n")
    return "".join(out).encode("utf-8")


def recorded_answers() -> list[Recorded]:
    """Every successful recording of the shipped cassettes."""
    found = []
    for path in sorted(RECORDINGS_DIR.glob("*.json")):
        for item in load_cassette(path).interactions:
            response = item.response
            if response["status"] != 200:
                continue
            found.append(
                Recorded(
                    path=f"/lessons/{path.stem}{item.request['path']}",
                    body=item.request["body"],
                    status=200,
                    json=response.get("body"),
                    sse=sse_bytes(response["sse"]) if "sse" in response else b"",
                )
            )
    return found


def known_good(answers: list[Recorded]) -> Recorded:
    """The first JSON (not streamed) recording outside /engines/: the request every probe
    replays to check that the server still answers."""
    return next(a for a in answers if not a.stream and "/engines/" not in a.path)


def plain_path(path: str) -> str:
    """A recorded path without its /lessons/<stem> prefix."""
    return "/" + path.split("/", 3)[3] if path.startswith("/lessons/") else path


def ask(conn: http.client.HTTPConnection, item: Recorded) -> str | None:
    """Send one recorded request on a connection; why the answer differs (None: identical)."""
    conn.request("POST", item.path, json.dumps(item.body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    payload = response.read()
    if response.status != item.status:
        return f"{item.path}: HTTP {response.status} {payload[:160]!r}"
    if item.stream:
        if payload != item.sse:
            return f"{item.path}: the stream differs from the recording ({len(payload)} bytes)"
    elif json.loads(payload) != item.json:
        return f"{item.path}: the JSON answer differs from the recording"
    return None


def ask_httpx(pool: httpx.Client, item: Recorded) -> str | None:
    """`ask` through a pooled httpx client (streams read event by event, as the SDK does)."""
    with pool.stream("POST", item.path, json=item.body) as response:
        payload = b"".join(response.iter_bytes())
    if response.status_code != item.status:
        return f"{item.path}: HTTP {response.status_code} {payload[:160]!r} (httpx)"
    if payload != item.sse if item.stream else json.loads(payload) != item.json:
        return f"{item.path}: the answer differs from the recording (httpx)"
    return None


def good_check(port: int, item: Recorded) -> str | None:
    """A good request on a fresh connection gets the recorded answer (None) or why not."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        return ask(conn, item)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def handler_threads() -> int:
    """Request-handling threads alive in this process (ThreadingHTTPServer names them)."""
    return sum("process_request_thread" in t.name for t in threading.enumerate())


# ---------------------------------------------------------------- bad input


def malformed_requests(rng: random.Random, good: dict[str, Any]) -> list[tuple[str, bytes, dict]]:
    """(name, raw bytes, options) for requests broken at the HTTP level."""
    chat = "/v1/chat/completions"
    body = json.dumps(good)
    garbage = bytes(rng.randrange(256) for _ in range(300))
    return [
        ("garbage bytes", garbage + b"\r\n\r\n", {"allow_close": True}),
        (
            "garbage line",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
            {"allow_close": True},
        ),
        ("empty request", b"\r\n\r\n", {"allow_close": True}),
        ("request line: method only", b"POST\r\n\r\n", {}),
        ("request line: 4 words", b"POST /v1 HTTP/1.1 extra\r\n\r\n", {}),
        ("request line: HTTP/9.9", f"POST {chat} HTTP/9.9\r\n\r\n".encode(), {}),
        ("request line: HTTP/1.x", f"POST {chat} HTTP/1.x\r\n\r\n".encode(), {}),
        ("request line: 70 KB path", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", {}),
        ("header: 70 KB line", post(chat, body, "X-Big: " + "b" * 70000 + "\r\n"), {}),
        ("header: 200 headers", post(chat, body, "".join(f"X-{i}: v\r\n" for i in range(200))), {}),
        ("header: no colon", post(chat, body, "NoColonHere\r\n"), {"lenient": True}),
        (
            "header: non-latin bytes",
            post(chat, body).replace(b"Host:", "Hôst-é: ü\r\nHost:".encode()),
            {},
        ),
        (
            "Content-Length: abc",
            post(chat, body).replace(
                f"Content-Length: {len(body)}".encode(), b"Content-Length: abc"
            ),
            {},
        ),
        ("Content-Length: -5", post(chat, body, length=-5), {}),
        (
            "Content-Length: 1e3",
            post(chat, body).replace(
                f"Content-Length: {len(body)}".encode(), b"Content-Length: 1e3"
            ),
            {},
        ),
        ("Content-Length: huge number", post(chat, body, length=10**30), {}),
        (
            "Content-Length: two values",
            post(chat, body, f"Content-Length: {len(body) + 7}\r\n"),
            {"lenient": True},
        ),
        (
            "Content-Length missing",
            post(chat, body).replace(f"Content-Length: {len(body)}\r\n".encode(), b"") + b"",
            {"half_close": True},
        ),
        (
            "Content-Length too big, then half-close",
            post(chat, body, length=len(body) + 500),
            {"half_close": True, "lenient": True},
        ),
        (
            "JSON cut short, then half-close",
            post(chat, body[:-9], length=len(body)),
            {"half_close": True},
        ),
        ("Content-Length too small", post(chat, body, length=len(body) // 2), {}),
        (
            "chunked body",
            post(chat, body).replace(
                f"Content-Length: {len(body)}".encode(), b"Transfer-Encoding: chunked"
            ),
            {},
        ),
        ("body over 64 MB announced", post(chat, b"{}", length=65 * 1024 * 1024), {}),
        (
            "truncated body, then close",
            post(chat, body[:20], length=len(body)),
            {"full_close": True, "allow_close": True},
        ),
        ("PUT", f"PUT {chat} HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}".encode(), {}),
        ("DELETE", f"DELETE {chat} HTTP/1.1\r\n\r\n".encode(), {}),
        ("PATCH", f"PATCH {chat} HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}".encode(), {}),
        ("OPTIONS", b"OPTIONS * HTTP/1.1\r\n\r\n", {}),
        ("HEAD", f"HEAD {chat} HTTP/1.1\r\n\r\n".encode(), {"head": True}),
        ("CONNECT", b"CONNECT example.com:443 HTTP/1.1\r\n\r\n", {}),
        ("lowercase method", f"post {chat} HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}".encode(), {}),
        ("GET chat", f"GET {chat} HTTP/1.1\r\n\r\n".encode(), {}),
        ("POST models", post("/v1/models", body), {}),
        ("path /v2", post("/v2/chat/completions", body), {}),
        ("path with ..", post("/v1/../../etc/passwd", body), {}),
        ("path with %00", post("/v1/chat%00/completions", body), {}),
        ("path with non-ASCII", post("/v1/chat/complétions", body), {}),
        ("absolute URI", post("http://example.com/v1/chat/completions", body), {}),
        ("lesson prefix, bad name", post("/lessons/../../x/v1/chat/completions", body), {}),
        ("unknown engine", post("/engines/nosuch/v1/chat/completions", body), {}),
        ("HTTP/0.9 request", b"GET /\r\n", {"half_close": True, "http09": True}),
        ("Expect: 100-continue", post(chat, body, "Expect: 100-continue\r\n"), {"good": True}),
    ]


def _edits(good: dict[str, Any]) -> tuple[Callable[..., bytes], Callable[[str], bytes]]:
    """`with_(key=value)` and `without(key)`: the JSON bytes of `good` changed in one field."""

    def with_(**changes: Any) -> bytes:
        return json.dumps({**good, **changes}).encode()

    def without(key: str) -> bytes:
        return json.dumps({k: v for k, v in good.items() if k != key}).encode()

    return with_, without


def body_cases(rng: random.Random, good: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(name, body) pairs: well-formed HTTP, wrong JSON."""
    with_, without = _edits(good)
    user = {"role": "user", "content": "hi"}
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    asked = {"role": "assistant", "content": "", "tool_calls": [call]}
    answered = {"role": "tool", "tool_call_id": "a", "content": "r"}
    dict_args = asked | {"tool_calls": [call | {"function": {"name": "f", "arguments": {}}}]}
    deep = "[" * 20000 + "]" * 20000
    return [
        ("empty body", b""),
        ("not JSON", b"model=kimi&messages=hi"),
        ("JSON cut short", json.dumps(good).encode()[:-9]),
        ("JSON array", b"[1, 2, 3]"),
        ("JSON string", b'"hello"'),
        ("JSON number", b"42"),
        ("JSON null", b"null"),
        ("non-UTF-8 body", json.dumps(good).encode().replace(b"user", b"\xff\xfeuser", 1)),
        ("UTF-16 body", json.dumps(good).encode("utf-16")),
        ("BOM in front", b"\xef\xbb\xbf" + json.dumps(good).encode()),
        ("lone surrogate", with_(messages=[{"role": "user", "content": "\ud800"}])),
        ("20000 nested lists", deep.encode()),
        ("NaN temperature", with_(temperature=float("nan"))),
        ("model missing", without("model")),
        ("model a number", with_(model=7)),
        ("model null", with_(model=None)),
        ("unknown model", with_(model="gpt-nonexistent-9")),
        ("messages missing", without("messages")),
        ("messages a string", with_(messages="What's the weather?")),
        ("messages a dict", with_(messages={"role": "user", "content": "hi"})),
        ("messages empty", with_(messages=[])),
        ("message a string", with_(messages=["hi"])),
        ("message null", with_(messages=[None])),
        ("role missing", with_(messages=[{"content": "hi"}])),
        ("role a number", with_(messages=[{"role": 3, "content": "hi"}])),
        ("role unknown", with_(messages=[{"role": "wizard", "content": "hi"}])),
        ("content a number", with_(messages=[{"role": "user", "content": 5}])),
        ("content a dict", with_(messages=[{"role": "user", "content": {"text": "hi"}}])),
        ("content parts wrong", with_(messages=[{"role": "user", "content": [{"type": "x"}]}])),
        ("tools a number", with_(tools=5)),
        ("tools a string", with_(tools="get_weather")),
        ("tools a dict", with_(tools={"type": "function"})),
        ("tool without function", with_(tools=[{"type": "function"}])),
        ("tool function a list", with_(tools=[{"type": "function", "function": []}])),
        ("tool name a number", with_(tools=[{"type": "function", "function": {"name": 1}}])),
        (
            "tool parameters a string",
            with_(tools=[{"type": "function", "function": {"name": "f", "parameters": "x"}}]),
        ),
        ("tool_choice wrong", with_(tool_choice=12)),
        (
            "tool_choice names no tool",
            with_(tool_choice={"type": "function", "function": {"name": "zzz"}}),
        ),
        ("stream a string", with_(stream="yes")),
        ("stream_options without stream", with_(stream_options={"include_usage": True})),
        ("temperature a string", with_(temperature="hot")),
        ("temperature -1", with_(temperature=-1)),
        ("max_tokens negative", with_(max_tokens=-1)),
        ("n = 0", with_(n=0)),
        (
            "tool message after a user turn",
            with_(messages=[user, {"role": "tool", "tool_call_id": "x", "content": "r"}]),
        ),
        (
            "tool message after a later user turn",
            with_(messages=[user, asked, answered, user, answered]),
        ),
        (
            "tool message first",
            with_(messages=[{"role": "tool", "tool_call_id": "x", "content": "r"}]),
        ),
        (
            "tool message without id",
            with_(messages=[user, asked, {"role": "tool", "content": "r"}]),
        ),
        (
            "tool_calls a string",
            with_(messages=[user, {"role": "assistant", "content": "", "tool_calls": "f()"}]),
        ),
        ("tool call arguments a dict", with_(messages=[user, dict_args, answered])),
        ("unanswered tool call", with_(messages=[user, asked, user])),
        (
            "no recording",
            with_(messages=[{"role": "user", "content": f"never recorded {rng.random()}"}]),
        ),
        (
            "huge message, no recording",
            with_(messages=[{"role": "user", "content": "x" * 8_000_000}]),
        ),
        (
            "many messages, no recording",
            with_(messages=[user, {"role": "assistant", "content": "ok"}] * 5000 + [user]),
        ),
        (
            "many tools, no recording",
            with_(
                tools=[
                    {
                        "type": "function",
                        "function": {"name": f"f{i}", "parameters": {"type": "object"}},
                    }
                    for i in range(3000)
                ]
            ),
        ),
        ("unknown top-level field", with_(frobnicate=True)),
        ("unicode keys", with_(**{"ключ": "значение", "\u0000": 1})),
    ]


# The status a real server gives (a 404 'no recording' instead of a history's 400 hides a
# validation rule that went missing).
EXPECTED_STATUS = {
    "messages a string": 400,
    "tools a number": 400,
    "tool message after a user turn": 400,
    "tool message after a later user turn": 400,
    "tool message first": 400,
    "unanswered tool call": 400,
    "no recording": 404,
    "20000 nested lists": 400,
    "non-UTF-8 body": 400,
}


def completion_cases(good: dict[str, Any]) -> list[tuple[str, bytes]]:
    """/v1/completions bodies of the wrong shape."""
    with_, without = _edits(good)
    return [
        ("prompt a dict", with_(prompt={"x": 1})),
        ("prompt missing", without("prompt")),
        ("model missing", without("model")),
        ("prompt list of numbers", with_(prompt=[1, 2, 3])),
        ("max_tokens a string", with_(max_tokens="many")),
    ]


def mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """A copy of a JSON value with one random node replaced, dropped or added."""
    odd_values = [None, True, 0, -1, 1.5, "", "x" * 50, [], {}, [None], {"a": []}, "\u0000", 10**20]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        copy = dict(value)
        roll = rng.random()
        if roll < 0.15:
            del copy[key]
        elif roll < 0.25:
            copy[rng.choice(["role", "content", "type", "name", "zzz"])] = rng.choice(odd_values)
        else:
            copy[key] = mutate(rng, value[key], depth + 1)
        return copy
    if isinstance(value, list) and value and rng.random() < 0.8:
        copy = list(value)
        at = rng.randrange(len(copy))
        roll = rng.random()
        if roll < 0.15:
            del copy[at]
        elif roll < 0.25:
            copy.insert(at, rng.choice(odd_values))
        else:
            copy[at] = mutate(rng, copy[at], depth + 1)
        return copy
    return rng.choice(odd_values)


def _malformed_http_probe(target: str, salt: str) -> Outcome:
    """Raw-socket requests broken at the HTTP level, sent to the replay server (a good request
    after each must be answered identically) or to a record proxy (checked once at the end)."""
    rng = _rng(salt)
    item = known_good(recorded_answers())
    outcome = Outcome()
    with _target(target) as (port, check_after), watched_log() as tracebacks:
        for name, raw, options in malformed_requests(rng, item.body):
            outcome.runs += 1
            done, answer = run_with_timeout(
                lambda raw=raw, options=options: raw_exchange(
                    port,
                    raw,
                    half_close=options.get("half_close", False),
                    full_close=options.get("full_close", False),
                ),
                TIMEOUT + 5,
            )
            if not done or isinstance(answer, TimeoutError):
                outcome.crashes.append(f"{name}: no answer within {TIMEOUT:.0f} s (hang)")
            elif isinstance(answer, BaseException):
                outcome.crashes.append(f"{name}: {type(answer).__name__}: {answer}")
            elif problem := judge(answer, options):
                outcome.crashes.append(f"{name}: {problem}")
            if target == "replay" and (problem := check_after()):
                outcome.crashes.append(f"after {name}: a good request failed: {problem}")
        if target != "replay" and (problem := check_after()):
            outcome.crashes.append(f"after the bad requests: {problem}")
        outcome.crashes += [f"handler traceback: {line}" for line in tracebacks.found]
    return outcome


def probe_replay_malformed_http(quick: bool) -> Outcome:
    """Raw-socket requests broken at the HTTP level, then a good request answered identically."""
    return _malformed_http_probe("replay", "malformed-http")


def _body_probe(target: str, quick: bool, salt: str) -> Outcome:
    """Wrong JSON bodies and seeded random mutations of recorded requests."""
    rng = _rng(salt)
    answers = recorded_answers()
    chat = known_good(answers)
    completion = next(a for a in answers if a.path.endswith("/v1/completions"))
    outcome = Outcome()
    cases = [("/v1/chat/completions", n, b) for n, b in body_cases(rng, chat.body)]
    cases += [("/v1/completions", n, b) for n, b in completion_cases(completion.body)]
    # the record proxy re-reads and rewrites its whole file per exchange: fewer there
    for _ in range(60 if quick else 1500 if target == "replay" else 400):
        item = rng.choice(answers)
        mutated = mutate(rng, item.body)
        cases.append(
            (plain_path(item.path), f"mutation of {item.path}", json.dumps(mutated).encode())
        )
    # the record proxy rewrites its whole file per exchange: the megabyte bodies go last
    cases.sort(key=lambda case: case[1].startswith(("huge", "many")))
    with _target(target) as (port, check_after):
        with watched_log() as tracebacks:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            for path, name, raw in cases:
                outcome.runs += 1
                try:
                    conn.request("POST", path, raw, {"Content-Type": "application/json"})
                    response = conn.getresponse()
                    answer = Answer(response.status, dict(response.getheaders()), response.read())
                except TimeoutError:
                    outcome.crashes.append(f"{name}: no answer within {TIMEOUT:.0f} s (hang)")
                    conn.close()
                    continue
                except (OSError, http.client.HTTPException) as exc:
                    outcome.crashes.append(f"{name}: {type(exc).__name__}: {exc}")
                    conn.close()
                    continue
                if answer.status in (200, 201) and name.startswith("mutation"):
                    pass  # a mutation may still be a valid request that some recording answers
                elif problem := error_problem(answer):
                    outcome.crashes.append(f"{name}: {problem}")
                elif answer.status != EXPECTED_STATUS.get(name, answer.status):
                    outcome.crashes.append(
                        f"{name}: HTTP {answer.status}, not {EXPECTED_STATUS[name]}: "
                        f"{answer.body[:160]!r}"
                    )
                if response.will_close:
                    conn.close()
            conn.close()
            outcome.crashes += [f"handler traceback: {line}" for line in tracebacks.found]
        if problem := check_after():
            outcome.crashes.append(f"after the bad bodies: {problem}")
    return outcome


@contextmanager
def _target(target: str) -> Iterator[tuple[int, Callable[[], str | None]]]:
    """The replay server over the shipped cassettes, or a record proxy in front of one (the
    replay server plays a strict upstream). Yields (port, a check that a good request works)."""
    answers = recorded_answers()
    item = known_good(answers)
    server = ReplayServer(RECORDINGS_DIR).start()
    try:
        if target == "replay":
            yield _port(server.url), lambda: good_check(_port(server.url), item)
            return
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "bad.json"
            proxy = RecordProxy(f"{server.url}/v1", out).start()
            try:

                def check() -> str | None:
                    plain = Recorded(plain_path(item.path), item.body, 200, item.json, b"")
                    if problem := good_check(_port(proxy.url), plain):
                        return problem
                    try:
                        cassette = load_cassette(out)
                    except CassetteError as exc:
                        return f"the proxy's cassette no longer loads: {exc}"
                    if not any(i.request["body"] == item.body for i in cassette.interactions):
                        return "the good exchange is not in the proxy's cassette"
                    return None

                yield _port(proxy.url), check
            finally:
                proxy.stop()
    finally:
        server.stop()


def probe_replay_bad_bodies(quick: bool) -> Outcome:
    return _body_probe("replay", quick, "bodies-replay")


def probe_record_bad_bodies(quick: bool) -> Outcome:
    return _body_probe("record", quick, "bodies-record")


def probe_record_malformed_http(quick: bool) -> Outcome:
    """The record proxy given the HTTP-level bad requests (the replay server is its upstream)."""
    return _malformed_http_probe("record", "malformed-http-record")


def probe_client_disconnects(quick: bool) -> Outcome:
    """Clients that hang up mid-stream (paced replay) or mid-request; the server goes on."""
    rng = _rng("disconnects")
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as folder:
        write_cassette(Path(folder), "lesson", fixture_interactions())
        items = fixture_interactions()
        stream_item = next(
            i for i in items if "sse" in i["response"] and "chat" in i["request"]["path"]
        )
        json_item = next(
            i for i in items if "body" in i["response"] and i["response"]["status"] == 200
        )
        good = Recorded(
            json_item["request"]["path"],
            json_item["request"]["body"],
            200,
            json_item["response"]["body"],
            b"",
        )
        before = handler_threads()
        server = ReplayServer(folder, pace=True).start()
        port = _port(server.url)
        raw = post(stream_item["request"]["path"], json.dumps(stream_item["request"]["body"]))
        try:
            with watched_log() as tracebacks:
                for i in range(8 if quick else 60):
                    outcome.runs += 1
                    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
                        cut = rng.randrange(len(raw)) if i % 3 == 0 else None
                        sock.sendall(raw[:cut] if cut is not None else raw)
                        if cut is None:
                            sock.recv(rng.randrange(1, 400))  # part of the head or first event
                        if rng.random() < 0.5:  # an abrupt reset rather than a FIN
                            sock.setsockopt(
                                socket.SOL_SOCKET,
                                socket.SO_LINGER,
                                b"\x01\x00\x00\x00\x00\x00\x00\x00",
                            )
                    if problem := good_check(port, good):
                        outcome.crashes.append(
                            f"after hang-up {i}: a good request failed: {problem}"
                        )
                outcome.crashes += [f"handler traceback: {line}" for line in tracebacks.found]
        finally:
            server.stop()
        if leftover := _wait_threads(before):
            outcome.crashes.append(f"{leftover} request threads still alive after stop()")
    return outcome


def _wait_threads(before: int, seconds: float = 5.0) -> int:
    """Request threads above `before` still alive after waiting up to `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if handler_threads() <= before:
            return 0
        time.sleep(0.05)
    return handler_threads() - before


# ---------------------------------------------------------------- load


def probe_concurrent_clients(quick: bool) -> Outcome:
    """Many threads at one replay server: streams and JSON, kept-alive and new connections;
    every answer equal to its recording; then a clean stop (no thread left, port freed)."""
    rng = _rng("load")
    answers = recorded_answers()
    clients, per_client = (24, 4) if quick else (300, 6)
    plans = [[rng.choice(answers) for _ in range(per_client)] for _ in range(clients)]
    # how each client connects: a new connection per request, one kept-alive connection
    # (http.client), or a pooled httpx.Client (the openai SDK's HTTP stack)
    stacks = [rng.choice(["new", "keep-alive", "httpx"]) for _ in range(clients)]
    outcome = Outcome(runs=clients * per_client)
    before = handler_threads()
    server = ReplayServer(RECORDINGS_DIR).start()
    port = _port(server.url)
    problems: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients, timeout=60)

    def client(plan: list[Recorded], stack: str) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        pool = httpx.Client(base_url=server.url, timeout=TIMEOUT) if stack == "httpx" else None
        try:
            start.wait()
        except threading.BrokenBarrierError:
            pass
        for item in plan:
            try:
                problem = ask_httpx(pool, item) if pool else ask(conn, item)
            except (OSError, ValueError, http.client.HTTPException, httpx.HTTPError) as exc:
                problem = f"{item.path}: {type(exc).__name__}: {exc}"
            if problem:
                with lock:
                    problems.append(problem)
            if stack == "new" or item.stream:  # a stream's end closes the connection
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.close()
        if pool:
            pool.close()

    threads = [
        threading.Thread(target=client, args=(plan, stack), daemon=True)
        for plan, stack in zip(plans, stacks, strict=True)
    ]
    with watched_log() as tracebacks:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + (60 if quick else 240)
        for thread in threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        hung = sum(thread.is_alive() for thread in threads)
        if hung:
            outcome.crashes.append(f"{hung} clients still waiting at the time limit (hang)")
        served = server.request_count
        done, error = run_with_timeout(server.stop, 10)
        if not done:
            outcome.crashes.append("stop() did not return within 10 s")
        elif error:
            outcome.crashes.append(f"stop() raised {error!r}")
        outcome.crashes += [f"handler traceback: {line}" for line in tracebacks.found]
    outcome.crashes += problems[:20]
    if len(problems) > 20:
        outcome.crashes.append(f"... and {len(problems) - 20} more wrong answers")
    if not hung and served != clients * per_client:
        outcome.crashes.append(f"the server counted {served} requests, not {clients * per_client}")
    if leftover := _wait_threads(before):
        outcome.crashes.append(f"{leftover} request threads still alive after stop()")
    if any(t.name.startswith(f"replay-server-{port}") for t in threading.enumerate()):
        outcome.crashes.append("the serving thread is still alive after stop()")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            outcome.crashes.append(f"port {port} still accepts connections after stop()")
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            again.bind(("127.0.0.1", port))
        except OSError as exc:
            outcome.crashes.append(f"port {port} not freed after stop(): {exc}")
    return outcome


def probe_stalled_clients(quick: bool) -> Outcome:
    """Clients that send half a request and wait (slowloris) do not block others, and stop()
    returns promptly with them still connected."""
    answers = recorded_answers()
    item = next(a for a in answers if not a.stream)
    stalled_count = 20 if quick else 200
    outcome = Outcome(runs=stalled_count)
    before = handler_threads()
    server = ReplayServer(RECORDINGS_DIR).start()
    port = _port(server.url)
    stalled = []
    try:
        for i in range(stalled_count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            sock.sendall(post(item.path, json.dumps(item.body))[: 10 + i % 60])
            stalled.append(sock)
        for _ in range(5 if quick else 50):
            outcome.runs += 1
            if problem := good_check(port, item):
                outcome.crashes.append(f"with stalled clients, a good request failed: {problem}")
        done, error = run_with_timeout(server.stop, 10)
        if not done:
            outcome.crashes.append("stop() hangs while stalled clients are connected")
        # the stalled clients are still connected: stop() itself must end their threads
        if leftover := _wait_threads(before):
            outcome.crashes.append(f"{leftover} request threads still alive after stop()")
    finally:
        for sock in stalled:
            sock.close()
        server.stop()
    return outcome


# ---------------------------------------------------------------- record: a scriptable upstream


def _ok_body(text: str, size: int = 0) -> dict[str, Any]:
    """A chat.completion saying `text` (and `size` dots more: a bigger cassette), with usage."""
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return completion(text + "." * size) | {"usage": usage}


def _chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {
        "id": "chatcmpl-probe",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "probe-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _user_body(text: str, **extra: Any) -> dict[str, Any]:
    """A chat request to the fake upstream: one user message saying `text`."""
    return {"model": "probe-model", "messages": [{"role": "user", "content": text}], **extra}


GOOD_STREAM = [
    _chunk("It is "),
    _chunk("sunny "),
    _chunk("in Beijing."),
    _chunk(None, "stop"),
]


def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
    """Answer with `payload` labelled as JSON (whether or not it is)."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class Upstream(BaseHTTPRequestHandler):
    """A fake live endpoint; `behaviour` (a class attribute list) says how to answer next:
    'ok', '429', '500', '503', 'garbage-json', 'garbage-http', 'drop', 'truncated-sse',
    'drop-mid-sse', 'slow', 'echo' (the client's secrets, in text and split across events)."""

    protocol_version = "HTTP/1.1"
    behaviour: list[str] = []
    slow_seconds = 3.0
    big = 0  # extra characters in every JSON answer (a bigger cassette is slower to write)
    seen: list[tuple[str, dict[str, str]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append((self.path, dict(self.headers.items())))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._json(400, {"error": {"message": "bad body", "type": "invalid_request_error"}})
            return
        mode = type(self).behaviour.pop(0) if type(self).behaviour else "ok"
        text = f"answer to {json.dumps(body.get('messages'))[:60]}"
        stream = bool(body.get("stream"))
        if mode == "ok":
            if stream:
                self._sse([*GOOD_STREAM, "[DONE]"])
            else:
                self._json(200, _ok_body(text, type(self).big))
        elif mode in ("429", "500", "503"):
            self._json(int(mode), {"error": {"message": f"upstream says {mode}", "type": "x"}})
        elif mode == "garbage-json":
            _send_json(self, 200, b"<html>502 Bad Gateway</html>")
        elif mode == "garbage-http":
            self.wfile.write(b"\x00\xffNOT HTTP AT ALL\r\n\r\n")
            self.close_connection = True
        elif mode == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif mode == "truncated-sse":
            self._sse(GOOD_STREAM[:2])  # no finish, no [DONE], then the connection closes
        elif mode == "drop-mid-sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = f"data: {json.dumps(GOOD_STREAM[0])}\n\n".encode()
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif mode == "slow":
            time.sleep(type(self).slow_seconds)
            self._json(200, _ok_body("slow " + text))
        elif mode == "slow-sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(f"data: {json.dumps(GOOD_STREAM[0])}\n\n".encode())
            self.wfile.flush()
            time.sleep(type(self).slow_seconds)
            self.close_connection = True
        elif mode == "echo":
            secret = self.headers.get("Authorization", "").removeprefix("Bearer ")
            query = self.path.partition("?")[2]
            said = f"You sent {secret} and {query} and {json.dumps(body)[:4000]}"
            if stream:
                half = len(secret) // 2
                parts = [f"key {secret[:half]}", f"{secret[half:]} done", f" {query}"]
                self._sse([*(_chunk(p) for p in parts), _chunk(None, "stop"), "[DONE]"])
            else:
                self._json(200, _ok_body(said))

    def _json(self, status: int, body: Any) -> None:
        _send_json(self, status, json.dumps(body).encode())

    def _sse(self, events: list[Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            text = event if isinstance(event, str) else json.dumps(event)
            self.wfile.write(f"data: {text}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


class QuietServer(ThreadingHTTPServer):
    """The fake upstream's server: a client (the proxy) that gave up on a slow answer is
    expected, so nothing is printed."""

    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet."""


@contextmanager
def upstream_server(handler: type[BaseHTTPRequestHandler] = Upstream) -> Iterator[str]:
    """A fake upstream on 127.0.0.1; yields its /v1 base URL."""
    httpd = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def chat(
    proxy_url: str, body: dict[str, Any], key: str = "sk-ProbeKey1234567890", query: str = ""
) -> tuple[int, bytes]:
    """POST a chat request through the record proxy; (status, answer bytes)."""
    port = _port(proxy_url)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT + 10)
    try:
        conn.request(
            "POST",
            "/v1/chat/completions" + (f"?{query}" if query else ""),
            json.dumps(body),
            {"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _entry(out: Path, body: dict[str, Any]) -> dict[str, Any] | None | str:
    """The recorded response for a request body, None when absent, a string when the file does
    not load."""
    try:
        cassette = load_cassette(out)
    except CassetteError as exc:
        return f"the cassette no longer loads: {exc}"
    for item in cassette.interactions:
        if item.request["body"] == body:
            return item.response
    return None


def probe_failing_upstream(quick: bool) -> Outcome:
    """Record 200, then the same request answered 429/500/503/garbage/drop/truncated/slow: the
    good recording stays, the file loads after every step, the client always gets an answer."""
    rng = _rng("failing-upstream")
    failures_json = ["429", "500", "503", "garbage-json", "garbage-http", "drop", "slow"]
    failures_sse = [
        "429",
        "503",
        "truncated-sse",
        "drop-mid-sse",
        "slow-sse",
        "garbage-http",
        "drop",
    ]
    rounds = 1 if quick else 3
    outcome = Outcome()
    saved_timeout = record_module.UPSTREAM_TIMEOUT
    record_module.UPSTREAM_TIMEOUT = 1.0
    Upstream.slow_seconds = 2.0
    try:
        with (
            tempfile.TemporaryDirectory() as folder,
            upstream_server() as url,
            watched_log() as tracebacks,
        ):
            out = Path(folder) / "rec.json"
            for round_ in range(rounds):
                for stream, failures in ((False, failures_json), (True, failures_sse)):
                    order = failures[:]
                    rng.shuffle(order)
                    body = _user_body(f"round {round_} stream {stream}", stream=stream)
                    Upstream.behaviour = ["ok"]
                    with RecordProxy(url, out) as proxy:
                        outcome.runs += 1
                        status, _ = chat(proxy.url, body)
                        good = _entry(out, body)
                        if status != 200 or not isinstance(good, dict):
                            outcome.crashes.append(
                                f"the good exchange was not recorded ({status}, {good!r:.100})"
                            )
                            continue
                        for step, failure in enumerate(order):
                            outcome.runs += 1
                            Upstream.behaviour = [failure]
                            # a new proxy (a new session) every other step: the file is re-read
                            if step % 2:
                                proxy.stop()
                                proxy = RecordProxy(url, out).start()
                            done, result = run_with_timeout(
                                lambda url=proxy.url, body=body: chat(url, body), TIMEOUT + 15
                            )
                            if not done:
                                outcome.crashes.append(
                                    f"{failure}: the proxy gave no answer (hang)"
                                )
                            elif isinstance(result, BaseException):
                                if not (
                                    stream
                                    and isinstance(
                                        result, http.client.IncompleteRead | ConnectionError
                                    )
                                ):
                                    outcome.crashes.append(
                                        f"{failure}: {type(result).__name__}: {result}"
                                    )
                            elif b"Replay server error" in result[1]:  # not a relayed 500
                                outcome.crashes.append(
                                    f"{failure}: the proxy answered 500: {result[1][:160]!r}"
                                )
                            now = _entry(out, body)
                            if isinstance(now, str):
                                outcome.losses.append(f"after {failure}: {now}")
                            elif now != good:
                                outcome.losses.append(
                                    f"after {failure} ({'stream' if stream else 'JSON'}): the "
                                    "good recording was "
                                    + (
                                        "removed"
                                        if now is None
                                        else f"replaced by {json.dumps(now)[:120]}"
                                    )
                                )
                                good = now if isinstance(now, dict) else good
                        proxy.stop()
            outcome.crashes += [f"handler traceback: {line}" for line in tracebacks.found]
    finally:
        record_module.UPSTREAM_TIMEOUT = saved_timeout
        Upstream.behaviour = []
    return outcome


def probe_concurrent_recorders_threads(quick: bool) -> Outcome:
    """Several record proxies in one process write one file at once (JSON answers and streams):
    no entry is lost."""
    proxies_n, per = (2, 10) if quick else (4, 40)
    outcome = Outcome(runs=proxies_n * per)
    with tempfile.TemporaryDirectory() as folder, upstream_server() as url:
        out = Path(folder) / "shared.json"
        Upstream.behaviour = []
        proxies = [RecordProxy(url, out).start() for _ in range(proxies_n)]
        bodies = [
            [_user_body(f"p{p} q{q}", stream=q % 2 == 1) for q in range(per)]  # half streamed
            for p in range(proxies_n)
        ]
        errors: list[str] = []

        def run(p: int, q: int) -> None:
            status, payload = chat(proxies[p].url, bodies[p][q])
            if status != 200:
                errors.append(f"proxy {p} request {q}: HTTP {status} {payload[:100]!r}")

        threads = [
            threading.Thread(target=run, args=(p, q), daemon=True)
            for q in range(per)
            for p in range(proxies_n)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT * 3)
        if any(t.is_alive() for t in threads):
            outcome.crashes.append("a recorder thread hangs")
        for proxy in proxies:
            proxy.stop()
        outcome.crashes += errors
        _missing(out, [b for group in bodies for b in group], outcome)
    return outcome


def _missing(out: Path, bodies: list[dict[str, Any]], outcome: Outcome) -> None:
    """Add a loss for a file that does not load or for each body it lacks."""
    try:
        cassette = load_cassette(out)
    except CassetteError as exc:
        outcome.losses.append(f"the cassette no longer loads: {exc}")
        return
    recorded = [i.request["body"] for i in cassette.interactions]
    lost = [b for b in bodies if b not in recorded]
    outcome.losses += [f"lost entry: {json.dumps(b['messages'])[:80]}" for b in lost[:10]]
    if len(lost) > 10:
        outcome.losses.append(f"... and {len(lost) - 10} more lost entries")


RECORDER_SCRIPT = textwrap.dedent(
    """
    import http.client, json, sys
    sys.path.insert(0, {root!r})
    from helpers.replay.record import RecordProxy
    upstream, out, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    proxy = RecordProxy(upstream, out).start()
    port = int(proxy.url.rsplit(":", 1)[1])
    print("ready", flush=True)
    i = 0
    while count < 0 or i < count:
        message = {{"role": "user", "content": f"{{tag}} {{i}}"}}
        body = {{"model": "probe-model", "messages": [message]}}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/chat/completions", json.dumps(body),
                     {{"Content-Type": "application/json", "Authorization": "Bearer sk-x"}})
        status = conn.getresponse().status
        conn.close()
        print(f"done {{i}} {{status}}", flush=True)
        i += 1
    proxy.stop()
    """
).format(root=str(ROOT))


def _recorder(url: str, out: Path, tag: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", RECORDER_SCRIPT, url, str(out), tag, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def probe_concurrent_recorders_processes(quick: bool) -> Outcome:
    """Separate processes (kernels) record into one file at once: no entry is lost."""
    processes_n, per = (2, 8) if quick else (4, 30)
    outcome = Outcome(runs=processes_n * per)
    with tempfile.TemporaryDirectory() as folder, upstream_server() as url:
        out = Path(folder) / "shared.json"
        Upstream.behaviour = []
        Upstream.big = 20000
        try:
            procs = [_recorder(url, out, f"proc{p}", per) for p in range(processes_n)]
            for p, proc in enumerate(procs):
                try:
                    stdout, stderr = proc.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    stdout, stderr = proc.communicate()
                    outcome.crashes.append(f"recorder process {p} hangs")
                if proc.returncode != 0:
                    outcome.crashes.append(
                        f"recorder process {p} exited {proc.returncode}: {stderr.strip()[-300:]}"
                    )
                bad = [
                    line
                    for line in stdout.splitlines()
                    if line.startswith("done") and not line.endswith(" 200")
                ]
                outcome.crashes += [f"process {p}: {line}" for line in bad[:5]]
        finally:
            Upstream.big = 0
        bodies = [_user_body(f"proc{p} {i}") for p in range(processes_n) for i in range(per)]
        _missing(out, bodies, outcome)
    return outcome


def _kill_inside_a_write(proc: subprocess.Popen[str], out: Path, within: float) -> None:
    """SIGKILL `proc` the moment a write of `out` is seen under way (a temporary file beside it,
    or the file shorter than before: rewritten in place), else after `within` seconds."""
    deadline = time.monotonic() + within
    last = out.stat().st_size if out.exists() else 0
    while time.monotonic() < deadline:
        try:
            size = out.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < last or any(out.parent.glob(f".{out.name}.*.tmp")):
            break
        last = max(last, size)
    proc.send_signal(signal.SIGKILL)


def probe_killed_recorder(quick: bool) -> Outcome:
    """A recorder killed with SIGKILL while it writes (or at a random moment if no write is
    seen in time): the file still loads and holds every exchange whose answer the client had
    received (each is written before it is answered)."""
    rng = _rng("killed")
    kills = 2 if quick else 16
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as folder, upstream_server() as url:
        out = Path(folder) / "killed.json"
        Upstream.behaviour = []
        Upstream.big = 50000  # a bigger file: more time inside a write
        acknowledged: list[dict[str, Any]] = []
        try:
            for k in range(kills):
                outcome.runs += 1
                proc = _recorder(url, out, f"kill{k}", -1)
                lines: list[str] = []
                reader = threading.Thread(
                    target=lambda lines=lines, out=proc.stdout: lines.extend(
                        iter(out.readline, "")
                    ),
                    daemon=True,
                )
                reader.start()
                deadline = time.monotonic() + 60
                while (
                    not any(line.startswith("done") for line in lines)
                    and time.monotonic() < deadline
                ):
                    if proc.poll() is not None:
                        break
                    time.sleep(0.02)
                _kill_inside_a_write(proc, out, rng.uniform(0.05, 0.8))
                proc.wait(10)
                reader.join(5)
                if not any(line.startswith("done") for line in lines):
                    outcome.crashes.append(
                        f"kill {k}: the recorder never answered: {proc.stderr.read()[-300:]}"
                    )
                for line in lines:
                    if line.startswith("done"):
                        i = int(line.split()[1])
                        acknowledged.append(_user_body(f"kill{k} {i}"))
                proc.stdout.close()
                proc.stderr.close()
                _missing(out, acknowledged, outcome)
        finally:
            Upstream.big = 0
    return outcome


class LabProxy(BaseHTTPRequestHandler):
    """A lab's forward HTTP proxy: takes absolute-URI requests and answers them itself."""

    protocol_version = "HTTP/1.1"
    targets: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_CONNECT(self) -> None:
        """An HTTPS upstream is tunnelled: this lab refuses the tunnel (the target is noted)."""
        type(self).targets.append(f"CONNECT {self.path}")
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).targets.append(self.path)
        _send_json(self, 200, json.dumps(_ok_body("via the lab proxy")).encode())


PROXY_NAMES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)


@contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables (and clear the proxy ones) for the block, then restore all."""
    saved = dict(os.environ)
    for name in PROXY_NAMES:
        os.environ.pop(name, None)
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


NOTEBOOK_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, {root!r})
    import httpx
    from helpers.replay import modes
    conn = modes.connect("kimi", lesson="00_start")
    no_proxy = os.environ.get("NO_PROXY", "")
    message = {{"role": "user", "content": sys.argv[1]}}
    with conn.http_client() as client:  # the setup cell's client (http_client=conn.http_client())
        answer = client.post(
            f"{{conn.endpoint}}/chat/completions",
            json={{"model": "kimi-k2.6", "messages": [message]}},
            headers={{"Authorization": "Bearer " + os.environ["KIMI_API_KEY"]}},
        )
    modes.stop_servers()
    seen = {{"no_proxy": no_proxy, "status": answer.status_code, "text": answer.text[:200]}}
    print(json.dumps(seen))
    """
)


def probe_lab_proxy(quick: bool) -> Outcome:
    """Record mode behind a lab's HTTP proxy: connect() leaves NO_PROXY as it was, the notebook
    reaches the local record proxy directly (the setup cell's `conn.http_client()`), the record
    proxy reaches the upstream through HTTP_PROXY (either spelling)."""
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as folder, upstream_server(LabProxy) as lab:
        lab_url = lab.removesuffix("/v1")
        for spelling in ("HTTP_PROXY", "http_proxy"):
            outcome.runs += 1
            LabProxy.targets = []
            env = {
                spelling: lab_url,
                "NO_PROXY": "corp.example",
                "LLM_MODE": "record",
                "LLM_RECORD_DIR": folder,
                "KIMI_BASE_URL": "http://api.lab-upstream.invalid/v1",
                "KIMI_API_KEY": "sk-LabProbeKey0123456789",
                "KIMI_MODEL": "kimi-k2.6",
            }
            # a process of its own, as a notebook kernel: connect() keeps its record proxy for
            # the life of the process
            clean = {k: v for k, v in os.environ.items() if k not in PROXY_NAMES}
            done = None
            try:
                done = subprocess.run(
                    [sys.executable, "-c", NOTEBOOK_SCRIPT.format(root=str(ROOT)), spelling],
                    env={**clean, **env},
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                seen = json.loads(done.stdout.strip().splitlines()[-1])
            except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
                stderr = done.stderr[-300:] if done else ""
                outcome.crashes.append(f"{spelling}: {type(exc).__name__}: {stderr}")
                continue
            if seen["no_proxy"] != "corp.example":
                outcome.losses.append(f"{spelling}: connect() changed NO_PROXY: {seen['no_proxy']}")
            if seen["status"] != 200:
                outcome.crashes.append(f"{spelling}: HTTP {seen['status']}: {seen['text']}")
            if LabProxy.targets != ["http://api.lab-upstream.invalid/v1/chat/completions"]:
                outcome.crashes.append(
                    f"{spelling}: the lab proxy saw {LabProxy.targets}, not the one "
                    "upstream request"
                )
        # HTTPS_PROXY: an https upstream is asked for through a CONNECT tunnel at the lab proxy;
        # this one refuses it, and the notebook gets a 502 that names the upstream, not a 500.
        outcome.runs += 1
        LabProxy.targets = []
        with environment(HTTPS_PROXY=lab_url, NO_PROXY="127.0.0.1,localhost"):
            out = Path(folder) / "https.json"
            with RecordProxy("https://api.lab-upstream.invalid/v1", out) as proxy:
                status, payload = chat(
                    proxy.url, {"model": "m", "messages": [{"role": "user", "content": "s"}]}
                )
        if LabProxy.targets != ["CONNECT api.lab-upstream.invalid:443"]:
            outcome.crashes.append(f"HTTPS_PROXY: the lab proxy saw {LabProxy.targets}")
        if status != 502 or b"api.lab-upstream.invalid" not in payload:
            outcome.crashes.append(f"HTTPS_PROXY refused: HTTP {status} {payload[:160]!r}")
        if out.exists():
            outcome.losses.append("a refused tunnel was written to the cassette")
        recorded = _entry(
            Path(folder) / "00_start.json",
            {"model": "kimi-k2.6", "messages": [{"role": "user", "content": "HTTP_PROXY"}]},
        )
        if not isinstance(recorded, dict) or recorded.get("status") != 200:
            outcome.losses.append(
                f"the exchange through the lab proxy was not recorded: {recorded!r:.160}"
            )
    return outcome


def probe_unwritable_cassette(quick: bool) -> Outcome:
    """A cassette that is not valid on disk is never overwritten (the proxy refuses to start and
    says why); a folder that cannot be written loses the new exchange only (said in the log), the
    answer is still relayed and the earlier file stays as it was."""
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as folder, upstream_server() as url:
        out = Path(folder) / "broken.json"
        for text in ('{"meta": {"notebook": "x"', "[]", '{"meta": {}, "interactions": 3}', "\x00"):
            outcome.runs += 1
            out.write_text(text, encoding="utf-8")
            try:
                RecordProxy(url, out).start().stop()
                outcome.crashes.append(f"a proxy started over an invalid cassette {text!r}")
            except CassetteError as exc:
                if "refusing to overwrite" not in str(exc):
                    outcome.crashes.append(f"the refusal does not say what happens: {exc}")
            except Exception as exc:  # noqa: BLE001 - reported
                outcome.crashes.append(f"{text!r}: {type(exc).__name__}: {exc}")
            if out.read_text(encoding="utf-8") != text:
                outcome.losses.append(f"the invalid cassette {text!r} was changed")
        good = Path(folder) / "sub" / "good.json"
        good.parent.mkdir()
        body = _user_body("kept")
        Upstream.behaviour = []
        with RecordProxy(url, good) as proxy, watched_log() as tracebacks:
            outcome.runs += 2
            chat(proxy.url, body)
            before = good.read_bytes()
            # the folder goes away and a file takes its place: nothing can be written there
            # (a read-only folder would not stop root); the earlier file waits aside
            aside = good.parent.rename(Path(folder) / "aside")
            good.parent.write_text("not a folder", encoding="utf-8")
            try:
                status, _ = chat(
                    proxy.url, {**body, "messages": [{"role": "user", "content": "new"}]}
                )
            finally:
                good.parent.unlink()
                aside.rename(good.parent)
            if status != 200:
                outcome.crashes.append(f"with an unwritable folder the answer was HTTP {status}")
            if good.read_bytes() != before:
                outcome.losses.append("a failed write changed the earlier cassette")
            unexpected = [t for t in tracebacks.found if "not written" not in t]
            outcome.crashes += [f"handler traceback: {t}" for t in unexpected]
    return outcome


SCHEMA_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "log_in",
            "description": "Log in with a password or an access token.",
            "parameters": {
                "type": "object",
                "properties": {
                    "username": {"type": "string"},
                    "password": {"type": "string", "description": "the user's password"},
                    "authorization": {"type": "string", "enum": ["basic", "sso"]},
                    "access_token": {"type": "string"},
                    "api_key": {"type": "string"},
                    "temperature_unit": {"type": "string"},
                },
                "required": ["username", "password"],
            },
        },
    }
]


def _secret(rng: random.Random, length: int = 40) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return "sk-" + "".join(rng.choice(alphabet) for _ in range(length))


def probe_scrubbing(quick: bool) -> Outcome:
    """Secrets in the Authorization header, the query string, a body field and an extra header,
    echoed back by the upstream (in text, split across stream events): none reaches the file;
    schema keys named password/authorization/access_token stay, so the capture replays."""
    rng = _rng("scrubbing")
    outcome = Outcome()
    cases = 3 if quick else 12
    with tempfile.TemporaryDirectory() as folder, upstream_server() as url:
        out = Path(folder) / "scrub.json"
        secrets: list[str] = []
        requests_sent: list[tuple[dict[str, Any], str, bytes]] = []
        with RecordProxy(url, out) as proxy:
            for i in range(cases):
                for stream in (False, True):
                    outcome.runs += 1
                    key, query_key, body_key = _secret(rng), _secret(rng, 32), _secret(rng, 28)
                    secrets += [key, query_key, body_key]
                    body = {
                        "model": "probe-model",
                        "messages": [
                            {
                                "role": "user",
                                "content": f"log in case {i} {stream}; use the password field",
                            }
                        ],
                        "tools": SCHEMA_TOOLS,
                        "stream": stream,
                        "api_key": body_key,
                    }
                    Upstream.behaviour = ["echo"]
                    status, payload = chat(
                        proxy.url, body, key=key, query=f"api_key={query_key}&x=1"
                    )
                    if status != 200:
                        outcome.crashes.append(f"case {i}: HTTP {status} {payload[:120]!r}")
                    sent = {k: v for k, v in body.items() if k != "api_key"}
                    requests_sent.append((sent, "stream" if stream else "json", payload))
        text = out.read_bytes().decode("utf-8")
        ascii_text = json.dumps(json.loads(text))
        for secret in secrets:
            if secret in text or secret in ascii_text:
                outcome.losses.append(f"a secret ({secret[:6]}...) is in the cassette")
            elif secret[:20] in text:
                outcome.losses.append(
                    f"a secret's first 20 characters ({secret[:6]}...) are in the cassette"
                )
        cassette = load_cassette(out)
        for item in cassette.interactions:
            props = (
                item.request["body"]
                .get("tools", [{}])[0]
                .get("function", {})
                .get("parameters", {})
                .get("properties", {})
            )
            for name in (
                "password",
                "authorization",
                "access_token",
                "api_key",
                "temperature_unit",
            ):
                if name not in props:
                    outcome.losses.append(f"the tool schema lost its key {name!r}")
        with ReplayServer(out) as replay:
            port = _port(replay.url)
            for sent, kind, _ in requests_sent:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
                conn.request(
                    "POST",
                    "/v1/chat/completions",
                    json.dumps(sent),
                    {"Content-Type": "application/json"},
                )
                response = conn.getresponse()
                response.read()
                conn.close()
                if response.status != 200:
                    outcome.losses.append(
                        f"the {kind} capture does not replay: HTTP {response.status}"
                    )
    return outcome


PROBES = [
    Probe("bad input", "replay: malformed HTTP, then a good request", probe_replay_malformed_http),
    Probe("bad input", "replay: wrong JSON bodies and mutations", probe_replay_bad_bodies),
    Probe("bad input", "replay: clients hanging up mid-stream", probe_client_disconnects),
    Probe("bad input", "record proxy: malformed HTTP", probe_record_malformed_http),
    Probe("bad input", "record proxy: wrong JSON bodies and mutations", probe_record_bad_bodies),
    Probe("load", "replay: concurrent clients, then a clean stop", probe_concurrent_clients),
    Probe("load", "replay: stalled clients (slowloris)", probe_stalled_clients),
    Probe("record", "failing upstream keeps the good recording", probe_failing_upstream),
    Probe("record", "recorders in threads share one file", probe_concurrent_recorders_threads),
    Probe("record", "recorders in processes share one file", probe_concurrent_recorders_processes),
    Probe("record", "recorder killed (SIGKILL) mid-write", probe_killed_recorder),
    Probe("record", "lab proxy: HTTP_PROXY upstream, NO_PROXY untouched", probe_lab_proxy),
    Probe("record", "scrubbing: no secret in the file, the capture replays", probe_scrubbing),
    Probe(
        "record",
        "invalid cassette or unwritable folder: nothing overwritten",
        probe_unwritable_cassette,
    ),
]
