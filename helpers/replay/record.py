"""A loopback proxy in front of a live endpoint that writes every exchange as a cassette.

Secrets never reach the file: request headers and the query string are not stored at all, a
credential field at the top of a request body (`api_key`...) is dropped, and every credential the
client sent (a secret header's value, a query-string key, such a body field's value, or one given
by the caller) is blanked wherever it appears: values and dict keys, bodies, and event streams,
also when a value is split across two events; a Basic-auth header's password too. The rest of the
body is kept as sent (a tool schema may well have a `password` property), so a capture replays.
The keys the proxy was configured with are always blanked; a key the client sent is blanked
unless it is a placeholder local servers document (`EMPTY`, `ollama`, `lm-studio`...), as
blanking such a word would corrupt every text that uses it.

The upstream is reached with `httpx`, which honours HTTP(S)_PROXY and NO_PROXY as the openai SDK
does (an upstream on this machine is reached directly, whatever they say). An error answer (429,
5xx...) is relayed to the client but never replaces a successful recording of the same request.
Several proxies (kernels) may write one file: each write locks the file (`filelock`), re-reads
it, merges and replaces it atomically.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
from filelock import FileLock

from helpers.replay.cassette import FORMAT_VERSION, CassetteError, load_cassette, save_cassette
from helpers.replay.matching import (
    CREDENTIAL_FIELDS,
    canonical_path,
    canonical_request,
    request_key,
)
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
# Request headers (or query parameters) whose name says they carry a credential (Authorization,
# Cookie, X-Api-Key...), and two more headers that do: forwarded upstream, blanked everywhere else.
SECRET_NAME = re.compile(r"key|token|secret|passw|auth|cookie|session|signature", re.IGNORECASE)
SECRET_HEADERS = frozenset({"openai-organization", "openai-project"})
# The only response headers kept in the file.
KEPT_RESPONSE_HEADERS = frozenset({"content-type"})
UPSTREAM_TIMEOUT = 600.0
# Keys that local servers document as "any key works" (vLLM, Ollama, LM Studio, llama.cpp): a
# client's such key is no secret, and blanking a common word would corrupt every text using it.
PLACEHOLDER_KEYS = frozenset(
    {"empty", "ollama", "lm-studio", "not-needed", "no-key", "sk-no-key-required"}
)
# Shorter values guard nothing, and blanking them would cut up every word holding them.
MIN_SECRET_CHARS = 4


def looks_secret(value: str) -> bool:
    """Whether a credential a request carries is blanked everywhere: any value of 4+ characters
    (a class key such as `classroom-pass` included) except the placeholder keys local servers
    document (`EMPTY`, `ollama`, `lm-studio`...). The proxy's own configured keys are blanked
    whatever they look like (`RecordProxy.add`)."""
    return len(value) >= MIN_SECRET_CHARS and value.strip().lower() not in PLACEHOLDER_KEYS


def upstream_host(url: str) -> str:
    """The host (and port) of a URL, without credentials: what the file may say about it."""
    parts = urlsplit(url)
    host = parts.hostname or "unknown-host"
    return f"{host}:{parts.port}" if parts.port else host


def is_loopback(url: str) -> bool:
    """True when `url` points at this machine (127.x, localhost, ::1): no proxy is ever needed."""
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _with_scheme_stripped(value: str) -> set[str]:
    """A credential value, the same without a `Bearer `/`Basic `/`Token ` scheme, and for Basic
    auth also the decoded `user:password` and the password alone."""
    found = {value}
    scheme, _, rest = value.partition(" ")
    scheme, rest = scheme.lower(), rest.strip()
    if rest and scheme in ("bearer", "basic", "token"):
        found.add(rest)
    if rest and scheme == "basic":
        try:
            decoded = base64.b64decode(rest, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), or not UTF-8: the raw value is kept
            return found
        found |= {decoded, decoded.partition(":")[2]} - {""}
    return found


def request_secrets(
    headers: Iterable[tuple[str, str]], query: str = "", body: Any = None
) -> set[str]:
    """The credentials a request carries, each also without its `Bearer ` scheme: the values of
    secret headers (and of each cookie), of query parameters named like credentials (`?key=`,
    `?api_key=`...) and of the credential fields at the top of a JSON body (`api_key`...)."""
    found: set[str] = set()
    for name, value in headers:
        if name.lower() in SECRET_HEADERS or SECRET_NAME.search(name):
            found |= _with_scheme_stripped(value)
            found.update(cookie.strip().partition("=")[2] for cookie in value.split(";"))
    for name, value in parse_qsl(query):
        if SECRET_NAME.search(name) or name.lower() in CREDENTIAL_FIELDS:
            found |= _with_scheme_stripped(value)
    for name, value in body.items() if isinstance(body, dict) else ():
        if str(name).lower() in CREDENTIAL_FIELDS and isinstance(value, str):
            found |= _with_scheme_stripped(value)
    return {s for s in found if looks_secret(s)}


def without_credential_fields(body: Any) -> Any:
    """A request body without its top-level credential fields (nested keys are data: kept)."""
    if not isinstance(body, dict):
        return body
    return {k: v for k, v in body.items() if str(k).lower() not in CREDENTIAL_FIELDS}


def _blank(text: str, ordered: list[str]) -> str:
    """`text` with every secret (longest first) replaced by REDACTED."""
    for secret in ordered:
        text = text.replace(secret, REDACTED)
    return text


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON value with secret strings blanked (dict keys included)."""
    ordered = sorted(set(secrets), key=len, reverse=True)

    def clean(item: Any) -> Any:
        if isinstance(item, dict):
            return {
                _blank(k, ordered) if isinstance(k, str) else k: clean(v) for k, v in item.items()
            }
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, str):
            return _blank(item, ordered)
        return item

    return clean(value)


def _string_leaves(
    parent: Any, key: Any, path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], Any, Any, str]]:
    """Every string inside the JSON value `parent[key]`: its path below it (dict keys and list
    positions), the dict or list that holds it, its key there, and the text."""
    value = parent[key]
    if isinstance(value, str):
        yield path, parent, key, value
    elif isinstance(value, dict | list):
        for sub in value if isinstance(value, dict) else range(len(value)):
            yield from _string_leaves(value, sub, (*path, sub))


def _streams(events: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[tuple[Any, Any, str]]]:
    """The strings at the same place in successive events (the deltas a client joins): for each
    place, the pieces in order, as (holder, key, text)."""
    streams: dict[tuple[Any, ...], list[tuple[Any, Any, str]]] = {}
    for event in events:
        for path, parent, key, text in _string_leaves(event, "data"):
            streams.setdefault(path, []).append((parent, key, text))
    return streams


def _hidden(pieces: list[tuple[Any, Any, str]], secrets: Iterable[str]) -> set[int]:
    """The positions in the joined text of `pieces` that belong to a secret."""
    joined = "".join(text for *_, text in pieces)
    return {
        at
        for secret in secrets
        for match in re.finditer(re.escape(secret), joined)
        for at in range(match.start(), match.end())
    }


def scrub_stream(events: list[dict[str, Any]], secrets: Iterable[str]) -> list[dict[str, Any]]:
    """Scrub recorded events one by one, then across event boundaries: the strings at the same
    place in successive events are joined, and a secret found in the joined text is blanked in
    the pieces it spans (REDACTED where it starts)."""
    events = [scrub(event, secrets) for event in events]
    for pieces in _streams(events).values():
        hidden = _hidden(pieces, secrets)
        if not hidden:
            continue
        offset = 0
        for parent, key, text in pieces:
            kept = []
            for at, char in enumerate(text, start=offset):
                if at not in hidden:
                    kept.append(char)
                elif at - 1 not in hidden:
                    kept.append(REDACTED)
            offset += len(text)
            parent[key] = "".join(kept)
    return events


def leaks(item: dict[str, Any], secrets: Iterable[str]) -> bool:
    """Whether any secret is still in an exchange's JSON text, escaped or not, or in a stream's
    joined deltas."""
    text = json.dumps(item, ensure_ascii=False)
    ascii_text = json.dumps(item)
    if any(secret in text or json.dumps(secret)[1:-1] in ascii_text for secret in secrets):
        return True
    streams = _streams(item["response"].get("sse") or [])
    return any(_hidden(pieces, secrets) for pieces in streams.values())


def _parse_json(raw: bytes | str) -> Any:
    """A body or an event as JSON when it is JSON, else as text (the file must stay JSON)."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python recurses
        return text


def _events(lines: list[tuple[str, float]], started: float) -> list[dict[str, Any]]:
    """The events of a stream from its lines, each with the time it came: `data:` lines build an
    event, a blank line (or the end) ends it, and it keeps the delay since the one before."""
    events: list[dict[str, Any]] = []
    data: list[str] = []
    last = started
    for line, now in [*lines, ("", time.monotonic())]:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            delay_ms = round((now - last) * 1000)
            events.append({"data": _parse_json("\n".join(data)), "delay_ms": delay_ms})
            data, last = [], now
    return events


class _RecordHandler(JsonHandler):
    """Forwards each request upstream, relays the answer, and records the exchange."""

    server: QuietThreadingServer

    def _upstream_headers(self) -> dict[str, str]:
        """The client's headers for the upstream (Authorization included), minus hop-by-hop."""
        skip = HOP_HEADERS | {"host", "accept-encoding"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
        headers["Accept-Encoding"] = "identity"
        return headers

    def answer(self) -> None:
        """Send the request upstream and stream the answer back while recording it (a GET, such
        as a model list, is forwarded but not recorded)."""
        proxy = self.server.owner
        raw = self.read_body()
        path = canonical_path(self.path)
        if not (path == "/v1" or path.startswith("/v1/")):
            raise self.invalid_url()
        query = self.path.partition("?")[2]
        target = proxy.upstream.rstrip("/") + path[len("/v1") :] + (f"?{query}" if query else "")
        body = _parse_json(raw)
        secrets = request_secrets(self.headers.items(), query, body)
        started = time.monotonic()
        request = proxy.client.build_request(
            self.command, target, content=raw or None, headers=self._upstream_headers()
        )
        try:
            upstream = proxy.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise ApiError(
                502,
                f"Record proxy could not reach {upstream_host(proxy.upstream)}: "
                f"{type(exc).__name__}",
                type="upstream_error",
            ) from exc
        try:
            headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS}
            kept = {k.lower(): v for k, v in headers.items() if k.lower() in KEPT_RESPONSE_HEADERS}
            response: dict[str, Any] = {"status": upstream.status_code, "headers": kept}
            if "text/event-stream" not in upstream.headers.get("content-type", ""):
                payload = upstream.read()
                response["body"] = _parse_json(payload)
                self._record(body, path, response, secrets)
                self.send_bytes(upstream.status_code, payload, headers)
                return
            self.start_sse(upstream.status_code, headers)
            lines: list[tuple[str, float]] = []  # each with the time it came
            held: list[bytes] = []  # the end of the stream waits until the file is written
            line, client_gone = "", False
            for line in upstream.iter_lines():
                lines.append((line, time.monotonic()))
                if held or client_gone or line.startswith("data: [DONE]"):
                    held.append(f"{line}\n".encode())
                    continue
                try:
                    self.wfile.write(f"{line}\n".encode())
                    self.wfile.flush()
                except OSError:  # the client went away: the answer (paid for) is still read
                    client_gone = self.close_connection = True
            response["sse"] = _events(lines, started)
            if response["sse"]:
                self._record(body, path, response, secrets)
            if not client_gone:
                self.wfile.write(b"".join(held) + (b"\n" if line else b""))  # a blank line ends
                self.wfile.flush()
        except httpx.HTTPError as exc:  # the upstream broke off its answer: nothing is recorded
            self.close_connection = True
            what = f"{upstream_host(proxy.upstream)} broke off its answer ({type(exc).__name__})"
            if self.response_started:  # a stream has begun: closing it is all that is left
                log.warning("record proxy: %s; the exchange was not written", what)
                return
            raise ApiError(502, f"Record proxy: {what}", type="upstream_error") from exc
        finally:
            upstream.close()

    def _record(self, body: Any, path: str, response: dict[str, Any], secrets: set[str]) -> None:
        """Write a POST exchange to the cassette; a failure is logged, the answer still relayed."""
        if self.command != "POST" or not isinstance(body, dict):
            return
        try:
            self.server.owner.add(path, without_credential_fields(body), response, secrets)
        except (OSError, RuntimeError, ValueError):
            log.warning("record proxy: the exchange was not written", exc_info=True)


ORPHAN_AGE = 60.0
"""Seconds after which a temporary file beside a cassette counts as left by a killed writer."""


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
        super().__init__(host, port)
        self.out = Path(out)
        self.notebook = notebook or self.out.stem
        self.secrets = set(secrets)  # the configured keys: always blanked, whatever they look like
        self.exchanges: dict[str, dict[str, Any]] = {}  # canonical request key -> exchange
        self.refused = 0  # exchanges not written because a secret survived scrubbing
        self._reload()  # continue an earlier session: same request -> latest answer wins
        self._lock = threading.Lock()
        self._file_lock = FileLock(self.out.with_name(f".{self.out.name}.lock"))
        self._client: httpx.Client | None = None

    @property
    def client(self) -> httpx.Client:
        """The upstream client, made on first use: it reads HTTP(S)_PROXY/NO_PROXY then, unless
        the upstream is on this machine (then proxies never apply)."""
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=UPSTREAM_TIMEOUT,
                    follow_redirects=False,
                    trust_env=not is_loopback(self.upstream),
                )
            return self._client

    def stop(self) -> None:
        """Stop listening and close the upstream connections."""
        super().stop()
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _reload(self) -> None:
        """Take the file as it is on disk now (another kernel may have added to it)."""
        self.exchanges = {}
        if not self.out.exists():
            return
        try:
            earlier = load_cassette(self.out)
        except CassetteError as exc:
            raise CassetteError(f"{exc}; refusing to overwrite it") from exc
        for item in earlier.interactions:
            self._append(item.request["path"], item.request["body"], item.response, item.label)

    def _append(
        self, path: str, body: dict[str, Any], response: dict[str, Any], label: str | None
    ) -> None:
        """Add an exchange, replacing an earlier one for the same canonical request, unless the
        earlier answer was a success and this one an error (a 429 or a 5xx is news about the
        server that moment, not a better recording)."""
        key = request_key(canonical_request(path, body))
        earlier = self.exchanges.get(key)
        if earlier is None:
            label = label or f"{self.notebook}/recorded-{len(self.exchanges) + 1}"
        elif _succeeded(earlier["response"]) and not _succeeded(response):
            log.warning(
                "record proxy: an error answer (HTTP %s) was relayed but not written to %s: the "
                "file keeps the successful answer to the same request",
                response.get("status"),
                self.out.name,
            )
            return
        else:
            label = earlier["label"]
        request = {"method": "POST", "path": path, "body": body}
        self.exchanges[key] = {"label": label, "request": request, "response": response}

    def add(
        self, path: str, body: dict[str, Any], response: dict[str, Any], secrets: Iterable[str]
    ) -> None:
        """Scrub one exchange and merge it into the file: lock, re-read, add, replace atomically.
        An exchange a secret survived in is dropped (and said once), never written."""
        secrets = {s for s in secrets if looks_secret(s)} | {s for s in self.secrets if s}
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
        with self._lock, self._file_lock:
            self._reload()
            self._append(path, clean_body, clean_response, None)
            save_cassette(self.out, self.cassette())
            self._remove_orphans()

    def _remove_orphans(self) -> None:
        """Delete temporary files a writer killed mid-write left beside the cassette. Called with
        the file lock held, so no recorder is writing; a minute's age spares any other writer."""
        for orphan in self.out.parent.glob(f".{self.out.name}.*.tmp"):
            try:
                if time.time() - orphan.lstat().st_mtime > ORPHAN_AGE:
                    orphan.unlink()
            except OSError:  # gone already, or not ours to delete: leave it
                pass

    def cassette(self) -> dict[str, Any]:
        """The cassette as it stands."""
        date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
        return {
            "meta": {
                "notebook": self.notebook,
                "source": f"recorded from {upstream_host(self.upstream)}, {date}",
                "format": FORMAT_VERSION,
            },
            "interactions": list(self.exchanges.values()),
        }

    def __repr__(self) -> str:
        """No port, no key, no credentials of the upstream URL."""
        return f"RecordProxy(upstream host {upstream_host(self.upstream)!r}, out={self.out.name!r})"


def _succeeded(response: dict[str, Any]) -> bool:
    """Whether a recorded answer is a success: HTTP 2xx with a JSON object for a body, or a
    stream that ends with `[DONE]` (one cut short is not) and holds no `{"error": ...}` event
    (llama.cpp reports a parse failure that way, with HTTP 200)."""
    status = response.get("status")
    if not isinstance(status, int) or not 200 <= status < 300:
        return False
    if "sse" not in response:
        return isinstance(response.get("body"), dict)  # a proxy's HTML page is no answer
    events = response["sse"] or [{}]
    failed = any(isinstance(e.get("data"), dict) and "error" in e["data"] for e in events)
    return events[-1].get("data") == "[DONE]" and not failed
