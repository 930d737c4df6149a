"""A loopback HTTP server speaking the OpenAI wire format that answers from cassettes."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from helpers.arguments import strict_json
from helpers.paths import RECORDINGS_DIR
from helpers.replay.cassette import CassetteError, Interaction, cassette_files, load_cassette
from helpers.replay.matching import (
    canonical_path,
    canonical_request,
    mismatch_message,
    request_key,
)
from helpers.replay.pacing import stream_delays
from helpers.replay.validation import ApiError, check_chat_request

log = logging.getLogger("helpers.replay")

LOOPBACK = "127.0.0.1"
SERVED_LOG_VARIABLE = "LLM_REPLAY_SERVED_LOG"
"""When set to a file path, every answered request's `served_id` is appended to it, one per line
(scripts/nbbuild.py collects them to name recordings that no notebook run requests)."""


def served_id(key: str) -> str:
    """A short, stable name for a canonical request key (`matching.request_key`)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


# `/lessons/<name>` in front of a path says which lesson asks: its cassette answers first.
ROUTE = re.compile(
    r"^(?:/lessons/(?P<lesson>[A-Za-z0-9_.-]+))?(?P<path>(?:/engines/(?P<engine>[A-Za-z0-9_.-]+))?"
    r"/v1/(?P<endpoint>chat/completions|completions|models))$"
)

MAX_BODY = 64 * 1024 * 1024
MAX_JSON_DEPTH = 200  # deeper request JSON is refused (the matching code recurses over it)
BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
    "your HTTP library correctly. The API expects a JSON payload, but what was sent was not valid "
    "JSON.)"
)
# Headers the server computes itself: a recorded value would be wrong or harmful on replay.
HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
        "date",
        "server",
    }
)


def loopback_host(host: str) -> str:
    """Return the loopback address to bind; refuse anything that could be reached from outside."""
    if host not in (LOOPBACK, "localhost"):
        raise ValueError(
            f"refusing to bind {host!r}: the replay and record servers listen on {LOOPBACK} only"
        )
    return LOOPBACK


class QuietThreadingServer(ThreadingHTTPServer):
    """A threaded HTTP server that logs instead of printing tracebacks into notebook output."""

    daemon_threads = True
    owner: Any  # the ReplayServer or RecordProxy this socket serves
    request_queue_size = 1024  # listen backlog: 128 overflowed under a 400-request burst
    # POSIX: a restart may take the port while the last connections sit in TIME_WAIT (else
    # "Address already in use" for a minute); Windows' SO_REUSEADDR would let two listen at once.
    allow_reuse_address = os.name != "nt"

    # At most this many connections are served at once (a thread each); more wait in the
    # backlog until one ends, and every connection ends within `JsonHandler.request_deadline`
    # unless a whole request arrived: slow clients cannot hold threads without bound.
    max_connections = 256

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Also keep the open client connections, so `stop()` can end kept-alive ones (`add`,
        `discard` and `copy` of a set are each atomic: no lock is needed)."""
        self.connections: set[socket.socket] = set()
        self.stopping = False
        self._slots = threading.BoundedSemaphore(self.max_connections)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Wait for a free slot, remember the connection, then serve it in its own thread."""
        while not self._slots.acquire(timeout=0.05):
            if self.stopping:
                self.shutdown_request(request)
                return
        self.connections.add(request)
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection; its slot is free again when it ends."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def shutdown_request(self, request: Any) -> None:
        """Forget the connection once it is served."""
        self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer is normal; anything else is logged, never printed."""
        log.debug("error while serving %s", client_address, exc_info=True)


_S = TypeVar("_S", bound="LoopbackService")


class LoopbackService:
    """An HTTP service on 127.0.0.1 in a daemon thread: `start`, `stop`, `url`, a `with` block."""

    handler_class: type[BaseHTTPRequestHandler]
    kind = "service"

    def __init__(self, host: str = LOOPBACK, port: int = 0) -> None:
        """Remember where to listen; nothing starts before `start()`."""
        self.host = loopback_host(host)
        self.port = port
        self._httpd: QuietThreadingServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the running service, e.g. http://127.0.0.1:PORT (add /v1 for clients)."""
        if self._httpd is None:
            raise RuntimeError(f"the {self.kind} is not running: call start() first")
        return f"http://{LOOPBACK}:{self._httpd.server_address[1]}"

    def start(self: _S) -> _S:
        """Listen on 127.0.0.1 (an ephemeral port unless one was given) in a daemon thread."""
        if self._httpd is not None:
            return self
        httpd = QuietThreadingServer((self.host, self.port), self.handler_class)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # stop() returns within 20 ms
            name=f"{self.kind.replace(' ', '-')}-{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and free the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.stopping = True
        httpd.shutdown()
        httpd.server_close()
        for conn in httpd.connections.copy():  # kept-alive ones would otherwise go on
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self: _S) -> _S:
        """Start on entering a `with` block."""
        return self.start()

    def __exit__(self, *exc: object) -> None:
        """Stop on leaving it."""
        self.stop()


class _DeadlineReader(io.RawIOBase):
    """A connection's reading side that raises TimeoutError once its handler's deadline passed
    (`handle_one_request` and `do_POST` end the connection on it)."""

    def __init__(self, handler: JsonHandler) -> None:
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        handler = self._handler
        left = handler.read_deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        handler.connection.settimeout(min(left, handler.timeout))
        try:
            return handler.connection.recv_into(buffer)
        finally:
            handler.connection.settimeout(handler.timeout)  # writes keep the usual timeout


class JsonHandler(BaseHTTPRequestHandler):
    """Request plumbing shared by the replay server and the record proxy."""

    protocol_version = "HTTP/1.1"
    server_version = "helpers-replay/1"
    # Small answers on a kept-alive connection otherwise wait ~40 ms for a delayed ACK (Nagle).
    disable_nagle_algorithm = True
    timeout = 120  # no single read or write waits longer than this
    # Seconds from the end of one answer (or the connection) to the whole next request: a client
    # that sends nothing, or a byte a second, is cut off then (an idle keep-alive one too).
    request_deadline = 60.0

    def setup(self) -> None:
        """Read the request through the deadline (a per-read timeout alone lets a client that
        sends a byte now and then hold its thread for ever)."""
        super().setup()
        self.rfile = io.BufferedReader(_DeadlineReader(self))

    def handle_one_request(self) -> None:
        """Serve one request; its whole head and body must arrive before the deadline."""
        self.read_deadline = time.monotonic() + self.request_deadline
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        """Route access logs to `logging` (stderr would land in notebook outputs)."""
        log.debug("%s - " + format, self.address_string(), *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own errors (bad request line, unknown method, huge headers) as
        OpenAI-shaped JSON, not HTML; an unsupported method is OpenAI's 404 'Invalid URL'."""
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"  # else the status line and headers are left out
        if code == 501 and self.command:
            error = self.invalid_url()
        else:
            status = code if 400 <= code < 600 else 400
            error = ApiError(status, message or "Bad request.")
        self.send_error_json(error)

    def send_response(self, code: int, message: str | None = None) -> None:
        """Send the status line, remembering that the answer has begun."""
        self.response_started = True
        super().send_response(code, message)

    def read_body(self) -> bytes:
        """The request body, by Content-Length. The server's clients (the openai SDK, requests
        with a JSON body) always send one; a chunked body is refused rather than misread."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise ApiError(400, "Chunked request bodies are not supported: send Content-Length.")
        values = {v.strip() for v in self.headers.get_all("Content-Length") or ["0"]}
        text = min(values)
        # "-5", "+5", "5.0", "²", or two different lengths: the body's end is unknown
        if len(values) > 1 or not text.isdigit() or not text.isascii():
            self.close_connection = True
            raise ApiError(400, "Invalid Content-Length header: one non-negative whole number.")
        length = int(text)
        if length > MAX_BODY:
            self.close_connection = True  # the body is not read: the connection is out of step
            raise ApiError(413, "Request body too large.", code="body_too_large")
        return self.rfile.read(length) if length > 0 else b""

    def _start(self, status: int, headers: dict[str, str] | None, defaults: dict[str, str]) -> None:
        """Send the status line, recorded or upstream headers (minus hop-by-hop ones), the
        `defaults` they lack, and `Connection: close` when the connection ends after this."""
        self.send_response(status)
        sent = set()
        for name, value in (headers or {}).items():
            if name.lower() not in HOP_HEADERS:
                self.send_header(name, value)
                sent.add(name.lower())
        for name, value in defaults.items():
            if name.lower() not in sent:
                self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def send_bytes(
        self,
        status: int,
        payload: bytes,
        headers: dict[str, str] | None = None,
        defaults: dict[str, str] | None = None,
    ) -> None:
        """Send a complete response with Content-Length (keep-alive safe)."""
        self._start(status, headers, {**(defaults or {}), "Content-Length": str(len(payload))})
        if self.command != "HEAD":  # a HEAD answer is the headers alone
            self.wfile.write(payload)

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        """Send a JSON response (Content-Type application/json unless `headers` say otherwise)."""
        # errors="replace": a lone surrogate in an echoed text must not cost the answer
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8", errors="replace")
        self.send_bytes(status, payload, headers, {"Content-Type": "application/json"})

    def send_error_json(self, error: ApiError) -> None:
        """Send an OpenAI-shaped error body with its headers (x-should-retry: false), unless the
        client went away."""
        with contextlib.suppress(OSError):
            self.send_json(error.status, error.body(), error.headers)

    def start_sse(self, status: int, headers: dict[str, str] | None) -> None:
        """Start an event stream; the connection closes at its end, which marks the end."""
        self.close_connection = True
        defaults = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
        self._start(status, headers, defaults)

    def invalid_url(self) -> ApiError:
        """OpenAI's answer to a path it does not serve."""
        return ApiError(404, f"Invalid URL ({self.command} {str(self.path).split('?', 1)[0]})")

    def do_POST(self) -> None:
        """Run `answer()` for a GET or POST; errors become OpenAI-shaped answers, never
        tracebacks or hangs."""
        self.response_started = False
        try:
            self.answer()
        except ApiError as error:
            self.send_error_json(error)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a server must answer whatever went wrong
            log.warning("replay server error on %s %s", self.command, self.path, exc_info=True)
            self.close_connection = True
            if self.response_started:  # the answer has begun: closing is all that is left
                return
            error = ApiError(
                500,
                f"Replay server error: {type(exc).__name__}: {exc}",
                type="server_error",
            )
            self.send_error_json(error)

    do_GET = do_POST

    def answer(self) -> None:
        """Read the request and send the answer (each service's handler says how)."""
        raise NotImplementedError


def _too_deep(value: Any, depth: int = 1) -> bool:
    """Whether a JSON value nests deeper than MAX_JSON_DEPTH."""
    if depth > MAX_JSON_DEPTH:
        return True
    if isinstance(value, dict):
        value = list(value.values())
    return isinstance(value, list) and any(_too_deep(item, depth + 1) for item in value)


def parse_json_body(raw: bytes) -> Any:
    """A request body as JSON, or OpenAI's 400: invalid UTF-8 or JSON, a lone surrogate, or
    nesting deeper than MAX_JSON_DEPTH (which would exhaust the recursion of later steps)."""
    try:
        body = strict_json(raw.decode("utf-8"))  # OpenAI refuses NaN and Infinity too
        json.dumps(body, ensure_ascii=False).encode("utf-8")  # fails on a lone "\ud800"
    except (ValueError, RecursionError) as exc:  # a UnicodeError is a ValueError too
        raise ApiError(400, BAD_JSON) from exc
    if _too_deep(body):
        raise ApiError(400, BAD_JSON)
    return body


def _event_line(data: Any) -> bytes:
    """One SSE event: `data: <json or text>` (one line per line of text) and a blank line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return "".join(f"data: {line}\n" for line in text.split("\n")).encode() + b"\n"


class _ReplayHandler(JsonHandler):
    """Answers OpenAI-style requests from the server's loaded cassettes."""

    server: QuietThreadingServer

    def answer(self) -> None:
        """`GET .../v1/models` lists the cassettes' models; `POST .../v1/chat/completions` and
        `.../v1/completions` are validated, matched and answered."""
        replay = self.server.owner
        replay._note(self.command, self.path)
        raw = self.read_body()  # also for a GET: the kept-alive connection stays in step
        route = ROUTE.match(canonical_path(self.path))
        if not route or (route["endpoint"] == "models") != (self.command == "GET"):
            raise self.invalid_url()
        if self.command == "GET":
            data = [
                {"id": name, "object": "model", "created": 0, "owned_by": "replay"}
                for name in replay.models
            ]
            self.send_json(200, {"object": "list", "data": data})
            return
        body = parse_json_body(raw)
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.", param=None)
        if route["endpoint"] == "chat/completions":
            try:
                check_chat_request(body, engine=route["engine"])
            except ApiError:
                replay.note_refusal(route["path"], body)  # a cassette may record this very refusal
                raise
        elif "model" not in body:
            raise ApiError(400, "you must provide a model parameter")
        interaction = replay.find(route["path"], body, lesson=route["lesson"])
        response = interaction.response
        headers = response.get("headers", {})
        if "sse" in response:
            self.start_sse(response["status"], headers)
            # paced: the tokens each chunk carries at a real engine's speed (pacing.py)
            waits = stream_delays(body, response["sse"]) if replay.pace else None
            for i, event in enumerate(response["sse"]):
                if waits:
                    time.sleep(waits[i])
                self.wfile.write(_event_line(event["data"]))
                self.wfile.flush()
        else:
            self.send_json(response["status"], response["body"], headers)


class ReplayServer(LoopbackService):
    """Serve recorded exchanges on 127.0.0.1 like an OpenAI-compatible endpoint would."""

    handler_class = _ReplayHandler
    kind = "replay server"
    REQUEST_LOG_SIZE = 1000  # the request log keeps this many; a long session must not grow it

    def __init__(
        self,
        cassettes: str | Path | Iterable[str | Path] = RECORDINGS_DIR,
        pace: bool = False,
        *,
        host: str = LOOPBACK,
        port: int = 0,
    ) -> None:
        """Load and check the cassettes (a file, a folder or a list; default data/recordings)."""
        super().__init__(host, port)
        self.pace = pace
        self.files = cassette_files(cassettes)
        self.interactions: list[Interaction] = []
        # canonical request -> {cassette stem: its answer}; several lessons may ask the same
        self._index: dict[str, dict[str, Interaction]] = {}
        self.shadowed = 0  # requests that several cassettes answer differently
        # cassette file -> the scenario module it was synthesized from (for the 404's author hint)
        self.scenario_files: dict[str, str] = {}
        for path in self.files:
            cassette = load_cassette(path)
            if isinstance(cassette.meta.get("scenarios"), str):
                self.scenario_files[path.name] = cassette.meta["scenarios"]
            for interaction in cassette.interactions:
                self._add(interaction)
        models = (i.request["body"].get("model") for i in self.interactions)
        self.models = sorted({m for m in models if isinstance(m, str)})
        # (method, path) of the latest requests, and how many there were in all
        self.requests: deque[tuple[str, str]] = deque(maxlen=self.REQUEST_LOG_SIZE)
        self.request_count = 0
        self.served: Counter[str] = Counter()  # served_id(request key) -> times answered
        self._lock = threading.Lock()

    def _add(self, interaction: Interaction) -> None:
        """Index one interaction. One cassette answers a request once (or the same way twice);
        different cassettes (lessons) may answer it differently: the asking lesson's wins."""
        canonical = canonical_request(interaction.request["path"], interaction.request["body"])
        key = request_key(canonical)
        lesson = Path(interaction.cassette).stem
        answers = self._index.setdefault(key, {})
        earlier = answers.get(lesson)
        if earlier is not None:
            if earlier.response == interaction.response:
                return
            raise CassetteError(
                f"two recordings answer the same request differently: {earlier.name} and "
                f"{interaction.name}; replay must be deterministic, so remove or change one"
            )
        if any(other.response == interaction.response for other in answers.values()):
            answers[lesson] = interaction  # the same exchange in two lessons: stored once
            return
        if answers:
            self.shadowed += 1
            log.warning(
                "%s answers a request that another cassette answers differently: a lesson "
                "gets its own cassette's answer, a request without a lesson the last loaded one",
                interaction.name,
            )
        answers[lesson] = interaction
        self.interactions.append(interaction)

    def _note(self, method: str, path: str) -> None:
        """Remember a request (tests count them to prove the SDK did not retry)."""
        with self._lock:
            self.requests.append((method, path))
            self.request_count += 1

    def _served(self, name: str) -> None:
        """Count an answered request (and log it when SERVED_LOG_VARIABLE names a file)."""
        with self._lock:
            self.served[name] += 1
            log_path = os.environ.get(SERVED_LOG_VARIABLE)
            if log_path:
                with open(log_path, "a", encoding="utf-8") as out:
                    out.write(name + "\n")

    def note_refusal(self, path: str, body: dict[str, Any]) -> None:
        """Count a request the server's checks refused as served when a cassette records it
        (synthesis records the same error for a turn declared refused)."""
        key = request_key(canonical_request(path, body))
        if key in self._index:
            self._served(served_id(key))

    def find(self, path: str, body: dict[str, Any], lesson: str | None = None) -> Interaction:
        """The recording for a request (the lesson's own cassette first, else the last loaded
        answer), or an ApiError 404 explaining the closest miss."""
        canonical = canonical_request(path, body)
        key = request_key(canonical)
        answers = self._index.get(key)
        if answers:
            self._served(served_id(key))
            if lesson is not None and lesson in answers:
                return answers[lesson]
            return list(answers.values())[-1]
        # each recorded request (its key decoded) with its first loaded answer
        recorded = [(json.loads(k), next(iter(a.values()))) for k, a in self._index.items()]
        message, field = mismatch_message(canonical, recorded, self.scenario_files)
        raise ApiError(404, message, param=field, code="no_recording")

    def __repr__(self) -> str:
        """Deterministic: counts, not the port."""
        return (
            f"ReplayServer({len(self.interactions)} interactions from {len(self.files)} "
            f"cassettes, pace={self.pace})"
        )
