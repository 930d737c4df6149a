"""A loopback proxy in front of a live endpoint that writes every exchange as a cassette.

Secrets never reach the file: request headers and the query string are not stored at all,
`api_key`-like body fields are dropped, and every credential the client sent (a secret header's
value, a query-string key, a body `api_key`/`authorization` value, or one given by the caller) is
blanked wherever it appears: values and dict keys, bodies, and event streams, also when a value is
split across two events. Several proxies (kernels) may write one file: each write locks the file,
re-reads it, merges and replaces it atomically.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import logging
import re
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from helpers.replay.cassette import (
    FORMAT_VERSION,
    CassetteError,
    load_cassette,
    locked,
    save_cassette,
)
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
        "x-goog-api-key",
    }
)
# Any other request header (or query parameter) whose name says it carries a credential.
SECRET_NAME = re.compile(r"key|token|secret|passw|auth|cookie|session|signature", re.IGNORECASE)
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


def _with_scheme_stripped(value: str) -> set[str]:
    """A credential value, and the same without a `Bearer `/`Basic `/`Token ` scheme."""
    found = {value}
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("bearer", "basic", "token"):
        found.add(rest.strip())
    return found


def secrets_from_headers(headers: Iterable[tuple[str, str]]) -> set[str]:
    """Secret values in request headers, each also without its `Bearer ` scheme."""
    found: set[str] = set()
    for name, value in headers:
        lowered = name.lower()
        if not value or (lowered not in SECRET_HEADERS and not SECRET_NAME.search(lowered)):
            continue
        found |= _with_scheme_stripped(value)
        for cookie in value.split(";"):
            found.add(cookie.strip().partition("=")[2])
    return {s for s in found if len(s) >= MIN_SECRET_CHARS}


def secrets_from_query(query: str) -> set[str]:
    """Values of query-string parameters named like credentials (`?key=`, `?api_key=`...)."""
    found: set[str] = set()
    for name, value in parse_qsl(query, keep_blank_values=False):
        if SECRET_NAME.search(name) or name.lower() in SECRET_FIELDS:
            found |= _with_scheme_stripped(value)
    return {s for s in found if len(s) >= MIN_SECRET_CHARS}


def secrets_from_body(body: Any) -> set[str]:
    """String values of `api_key`-like fields anywhere in a request body."""
    found: set[str] = set()
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if str(key).lower() in SECRET_FIELDS and isinstance(value, str):
                    found |= _with_scheme_stripped(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return {s for s in found if len(s) >= MIN_SECRET_CHARS}


def _blank(text: str, ordered: list[str]) -> str:
    """`text` with every secret (longest first) replaced by REDACTED."""
    for secret in ordered:
        text = text.replace(secret, REDACTED)
    return text


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON value with secret fields dropped and secret strings blanked (dict keys
    included)."""
    ordered = sorted(set(secrets), key=len, reverse=True)

    def clean(item: Any) -> Any:
        if isinstance(item, dict):
            return {
                _blank(k, ordered) if isinstance(k, str) else k: clean(v)
                for k, v in item.items()
                if str(k).lower() not in SECRET_FIELDS
            }
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, str):
            return _blank(item, ordered)
        return item

    return clean(value)


def _string_leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every string inside a JSON value with its path (dict keys and list positions)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_leaves(item, (*path, i))


def _set_leaf(container: dict[str, Any], path: tuple[Any, ...], text: str) -> None:
    """Replace the string at `path` inside `container["data"]`."""
    target: Any = container
    keys: tuple[Any, ...] = ("data", *path)
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = text


def _spans(joined: str, secrets: Iterable[str]) -> list[tuple[int, int]]:
    """Where secrets occur in a text, as merged (start, end) spans."""
    spans = sorted(
        (match.start(), match.start() + len(secret))
        for secret in secrets
        for match in re.finditer(re.escape(secret), joined)
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def scrub_stream(events: list[dict[str, Any]], secrets: Iterable[str]) -> list[dict[str, Any]]:
    """Scrub recorded events one by one, then across event boundaries: the strings at the same
    place in successive events (the deltas a client joins) are joined, and a secret found in the
    joined text is blanked in the pieces it spans (REDACTED where it starts)."""
    secrets = {s for s in secrets if s}
    events = [scrub(event, secrets) for event in events]
    streams: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...], str]]] = {}
    for i, event in enumerate(events):
        for path, text in _string_leaves(event.get("data")):
            streams.setdefault(path, []).append((i, path, text))
    for pieces in streams.values():
        joined = "".join(text for _, _, text in pieces)
        spans = _spans(joined, secrets)
        if not spans:
            continue
        offset = 0
        for i, path, text in pieces:
            kept = []
            for at, char in enumerate(text, start=offset):
                inside = next((span for span in spans if span[0] <= at < span[1]), None)
                if inside is None:
                    kept.append(char)
                elif at == inside[0]:
                    kept.append(REDACTED)
            offset += len(text)
            _set_leaf(events[i], path, "".join(kept))
    return events


def leaks(item: Any, secrets: Iterable[str]) -> bool:
    """Whether any secret is still in an exchange's JSON text, escaped or not, or in a stream's
    joined deltas."""
    text = json.dumps(item, ensure_ascii=False)
    ascii_text = json.dumps(item)
    for secret in secrets:
        if secret in text or json.dumps(secret)[1:-1] in ascii_text:
            return True
    events = item.get("response", {}).get("sse") if isinstance(item, dict) else None
    if events:
        streams: dict[tuple[Any, ...], list[str]] = {}
        for event in events:
            for path, piece in _string_leaves(event.get("data")):
                streams.setdefault(path, []).append(piece)
        return any(_spans("".join(pieces), secrets) for pieces in streams.values())
    return False


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
        secrets = (
            secrets_from_headers(self.headers.items())
            | secrets_from_query(query)
            | secrets_from_body(_parse_json(raw))
            | proxy.secrets
        )
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
        self.refused = 0  # exchanges not written because a secret survived scrubbing
        self._reload()  # continue an earlier session: same request -> latest answer wins
        self._lock = threading.Lock()

    def _reload(self) -> None:
        """Take the file as it is on disk now (another kernel may have added to it)."""
        self.interactions = []
        self._positions = {}
        if not self.out.exists():
            return
        try:
            earlier = load_cassette(self.out)
        except CassetteError as exc:
            raise CassetteError(f"{exc}; refusing to overwrite it") from exc
        for item in earlier.interactions:
            self._append(item.request["path"], item.request["body"], item.response, item.label)

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
        """Scrub one exchange and merge it into the file: lock, re-read, add, replace atomically.
        An exchange a secret survived in is dropped (and said once), never written."""
        secrets = {s for s in set(secrets) | self.secrets if s}
        clean_body = scrub(body, secrets)
        clean_response = dict(scrub({k: v for k, v in response.items() if k != "sse"}, secrets))
        if "sse" in response:
            clean_response["sse"] = scrub_stream(response["sse"], secrets)
        item = {"request": {"path": path, "body": clean_body}, "response": clean_response}
        if leaks(item, secrets):
            self.refused += 1
            (log.warning if self.refused == 1 else log.debug)(
                "record proxy: an exchange was not written to %s (a secret survived scrubbing); "
                "later exchanges are still recorded",
                self.out.name,
            )
            return
        with self._lock, locked(self.out):
            self._reload()
            self._append(path, clean_body, clean_response, None)
            save_cassette(self.out, self.cassette())

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
