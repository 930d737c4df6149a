"""A loopback proxy in front of a live endpoint that writes every exchange as a cassette.

Secrets never reach the file: request headers are not stored at all, `api_key`-like body fields
are dropped, and any secret value seen in a header (or given by the caller) is blanked in bodies.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import logging
import ssl
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helpers.replay.cassette import FORMAT_VERSION, CassetteError, load_cassette, save_cassette
from helpers.replay.matching import canonical_path, canonical_request, request_key
from helpers.replay.server import (
    HOP_HEADERS,
    LOOPBACK,
    JsonHandler,
    LoopbackService,
    QuietThreadingServer,
)
from helpers.replay.validation import ApiError

log = logging.getLogger("helpers.replay")
REDACTED = "<redacted>"
# Request headers whose values are secrets: forwarded upstream, blanked wherever else they appear.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "api-key",
        "x-api-key",
        "openai-organization",
        "openai-project",
    }
)
# Body fields dropped from the file whatever their value.
SECRET_FIELDS = frozenset(
    {"api_key", "apikey", "api-key", "authorization", "access_token", "secret_key", "password"}
)
# The only response headers kept in the file.
KEPT_RESPONSE_HEADERS = frozenset({"content-type"})
UPSTREAM_TIMEOUT = 600.0
# Shorter values are placeholders (`EMPTY`, `ollama`), not secrets: blanking them corrupts text.
MIN_SECRET_CHARS = 8


def upstream_host(url: str) -> str:
    """The host (and port) of a URL, without credentials: what the file may say about it."""
    parts = urlsplit(url)
    host = parts.hostname or "unknown-host"
    return f"{host}:{parts.port}" if parts.port else host


def secrets_from_headers(headers: Iterable[tuple[str, str]]) -> set[str]:
    """Secret values in request headers, each also without its `Bearer ` scheme."""
    found: set[str] = set()
    for name, value in headers:
        if name.lower() not in SECRET_HEADERS or not value:
            continue
        found.add(value)
        scheme, _, rest = value.partition(" ")
        if rest and scheme.lower() in ("bearer", "basic", "token"):
            found.add(rest.strip())
        for cookie in value.split(";"):
            found.add(cookie.strip().partition("=")[2])
    return {s for s in found if len(s) >= MIN_SECRET_CHARS}


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON value with secret fields dropped and secret strings blanked."""
    ordered = sorted(set(secrets), key=len, reverse=True)

    def clean(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items() if str(k).lower() not in SECRET_FIELDS}
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, str):
            for secret in ordered:
                item = item.replace(secret, REDACTED)
        return item

    return clean(value)


def _parse_json(raw: bytes) -> Any:
    """A body as JSON when it is JSON, else as text (the file must stay JSON)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class _SseRecorder:
    """Splits an upstream event stream into events and times them."""

    def __init__(self, started: float) -> None:
        """Start timing from the moment the request was sent."""
        self.buffer = b""
        self.last = started
        self.data_lines: list[str] = []
        self.events: list[dict[str, Any]] = []

    def feed(self, chunk: bytes) -> None:
        """Take raw bytes; complete events are recorded with the delay since the previous one."""
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        for line in lines:  # one split per chunk: a long buffer is not copied once per line
            self._line(line.rstrip(b"\r").decode("utf-8", errors="replace"))

    def _line(self, line: str) -> None:
        """One line of the stream: `data:` lines build an event, a blank line ends it."""
        if not line:
            self._flush()
        elif line.startswith("data:"):
            self.data_lines.append(line[5:].removeprefix(" "))

    def _flush(self) -> None:
        """Record the event collected so far, if any."""
        if not self.data_lines:
            return
        now = time.monotonic()
        text = "\n".join(self.data_lines)
        self.data_lines = []
        data: Any = text
        if text != "[DONE]":
            try:
                data = json.loads(text)
            except ValueError:
                data = text
        self.events.append({"data": data, "delay_ms": round((now - self.last) * 1000)})
        self.last = now

    def close(self) -> list[dict[str, Any]]:
        """The recorded events, including a last one not followed by a blank line."""
        if self.buffer:
            self._line(self.buffer.rstrip(b"\r").decode("utf-8", errors="replace"))
            self.buffer = b""
        self._flush()
        return self.events


class _RecordHandler(JsonHandler):
    """Forwards each request upstream, relays the answer, and records the exchange."""

    server: QuietThreadingServer

    def do_GET(self) -> None:
        """Forwarded (model lists), not recorded."""
        self.guarded(self._forward)

    def do_POST(self) -> None:
        """Forwarded and recorded."""
        self.guarded(self._forward)

    do_PUT = do_DELETE = do_PATCH = do_GET

    def _upstream_headers(self) -> dict[str, str]:
        """The client's headers for the upstream (Authorization included), minus hop-by-hop."""
        skip = HOP_HEADERS | {"host", "accept-encoding"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
        headers["Accept-Encoding"] = "identity"
        return headers

    def _forward(self) -> None:
        """Send the request upstream and stream the answer back while recording it."""
        proxy = self.server.owner
        raw = self.read_body()
        path = canonical_path(self.path)
        if not (path == "/v1" or path.startswith("/v1/")):
            raise self.invalid_url()
        query = self.path.partition("?")[2]
        target = proxy.base_path + path[len("/v1") :] + (f"?{query}" if query else "")
        secrets = secrets_from_headers(self.headers.items()) | proxy.secrets
        conn = proxy.connection()
        started = time.monotonic()
        try:
            try:
                conn.request(
                    self.command, target, body=raw or None, headers=self._upstream_headers()
                )
                upstream = conn.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                raise ApiError(
                    502,
                    f"Record proxy could not reach {upstream_host(proxy.upstream)}: "
                    f"{type(exc).__name__}",
                    type="upstream_error",
                ) from exc
            headers = {k: v for k, v in upstream.getheaders() if k.lower() not in HOP_HEADERS}
            kept = {k.lower(): v for k, v in headers.items() if k.lower() in KEPT_RESPONSE_HEADERS}
            is_sse = "text/event-stream" in upstream.getheader("Content-Type", "")
            response: dict[str, Any] = {"status": upstream.status, "headers": kept}
            if is_sse:
                self.start_sse(upstream.status, headers)
                recorder = _SseRecorder(started)
                held = b""  # the end of the stream waits until the file is written
                while True:
                    chunk = upstream.read1(65536)
                    if not chunk:
                        break
                    recorder.feed(chunk)
                    if held or b"data: [DONE]" in chunk:
                        held += chunk
                    else:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                response["sse"] = recorder.close()
                if response["sse"]:
                    self._record(raw, path, response, secrets)
                self.wfile.write(held)
                self.wfile.flush()
            else:
                payload = upstream.read()
                response["body"] = _parse_json(payload)
                self._record(raw, path, response, secrets)
                self.send_bytes(upstream.status, payload, headers)
        finally:
            conn.close()

    def _record(self, raw: bytes, path: str, response: dict[str, Any], secrets: set[str]) -> None:
        """Write a POST exchange to the cassette; a failure is logged, the answer still relayed."""
        if self.command != "POST":
            return
        body = _parse_json(raw)
        if not isinstance(body, dict):
            return
        try:
            self.server.owner.add(path, body, response, secrets)
        except (OSError, RuntimeError, ValueError):
            log.warning("record proxy: the exchange was not written", exc_info=True)


class RecordProxy(LoopbackService):
    """A loopback proxy to a live OpenAI-compatible endpoint that writes a cassette as it goes."""

    handler_class = _RecordHandler
    kind = "record proxy"

    def __init__(
        self,
        upstream: str,
        out: str | Path,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        notebook: str | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        """Prepare to forward to `upstream` (its /v1 base URL) and record into `out`."""
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"upstream must be an http(s) URL such as https://host/v1, not {upstream!r}"
            )
        self.upstream = upstream
        self.base_path = parts.path.rstrip("/")
        super().__init__(host, port)
        self.out = Path(out)
        self.notebook = notebook or self.out.stem
        self.secrets = {s for s in secrets if len(s) >= MIN_SECRET_CHARS}
        self.interactions: list[dict[str, Any]] = []
        self._positions: dict[str, int] = {}  # canonical request key -> index in interactions
        if self.out.exists():  # continue an earlier session: same request -> latest answer wins
            try:
                earlier = load_cassette(self.out)
            except CassetteError as exc:
                raise CassetteError(f"{exc}; refusing to overwrite it") from exc
            for item in earlier.interactions:
                self._append(item.request["path"], item.request["body"], item.response, item.label)
        self._lock = threading.Lock()

    def connection(self) -> http.client.HTTPConnection:
        """A fresh connection to the upstream (one per request keeps threads independent)."""
        parts = urlsplit(self.upstream)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(
                parts.hostname, parts.port, timeout=UPSTREAM_TIMEOUT, context=_ssl_context()
            )
        return http.client.HTTPConnection(parts.hostname, parts.port, timeout=UPSTREAM_TIMEOUT)

    def _append(
        self, path: str, body: dict[str, Any], response: dict[str, Any], label: str | None
    ) -> None:
        """Add an exchange, replacing an earlier one for the same canonical request."""
        key = request_key(canonical_request(path, body))
        item = {
            "label": label or f"{self.notebook}/recorded-{len(self.interactions) + 1}",
            "request": {"method": "POST", "path": path, "body": body},
            "response": response,
        }
        at = self._positions.get(key)
        if at is None:
            self._positions[key] = len(self.interactions)
            self.interactions.append(item)
        else:
            item["label"] = self.interactions[at]["label"]
            self.interactions[at] = item

    def add(
        self, path: str, body: dict[str, Any], response: dict[str, Any], secrets: Iterable[str]
    ) -> None:
        """Scrub and store one exchange, then rewrite the cassette file."""
        secrets = set(secrets) | self.secrets
        clean_body = scrub(body, secrets)
        clean_response = scrub(response, secrets)
        with self._lock:
            self._append(path, clean_body, clean_response, None)
            self._save(secrets)

    def cassette(self) -> dict[str, Any]:
        """The cassette as it stands."""
        date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
        return {
            "meta": {
                "notebook": self.notebook,
                "source": f"recorded from {upstream_host(self.upstream)}, {date}",
                "format": FORMAT_VERSION,
            },
            "interactions": self.interactions,
        }

    def _save(self, secrets: Iterable[str]) -> None:
        """Write the file, after proving that no secret value is in its text."""
        data = self.cassette()
        text = json.dumps(data, ensure_ascii=False)
        for secret in secrets:
            if secret in text or json.dumps(secret)[1:-1] in text:
                raise RuntimeError("a secret survived scrubbing; the cassette was not written")
        save_cassette(self.out, data)

    def __repr__(self) -> str:
        """No port, no key, no credentials of the upstream URL."""
        return f"RecordProxy(upstream host {upstream_host(self.upstream)!r}, out={self.out.name!r})"


def _ssl_context() -> ssl.SSLContext:
    """A verifying TLS context, using certifi's roots when installed (as requests does)."""
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
