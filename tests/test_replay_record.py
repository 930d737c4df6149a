"""The record proxy against a fake upstream that needs a key: it works, and no secret is written."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import openai
import pytest
from test_replay_fixtures import MODEL, ROUND_1, TOOLS, chat_body, fake_upstream, stream_events

from helpers.replay import RecordProxy, ReplayServer, load_cassette
from helpers.replay.record import scrub, secrets_from_headers

KEY = "sk-test-SECRET-1234567890abcdef"
ORG = "org-SECRETORG123"
PROJECT = "proj-SECRETPROJ456"
COOKIE = "session=COOKIESECRET789"
SECRETS = [KEY, ORG, PROJECT, "COOKIESECRET789"]
GAP_S = 0.08


class _Upstream(BaseHTTPRequestHandler):
    """A fake OpenAI-compatible endpoint under /openai/v1 that requires `Bearer KEY`."""

    protocol_version = "HTTP/1.1"
    seen: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _json(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Set-Cookie", "upstream=COOKIESECRET789")
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        """Model list."""
        self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self) -> None:
        """Chat completions, JSON or SSE, after checking the key."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers = {k.lower(): v for k, v in self.headers.items()}
        type(self).seen.append({"path": self.path, "headers": headers, "body": body})
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self._json(401, {"error": {"message": "Invalid API key", "type": "auth"}})
            return
        if self.path != "/openai/v1/chat/completions":
            self._json(404, {"error": {"message": f"no {self.path}"}})
            return
        if not body.get("stream"):
            echoed = body["messages"][-1]["content"]
            self._json(
                200, chat_body({"role": "assistant", "content": f"You said: {echoed}"}, "stop")
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in stream_events():
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data)
            piece = f"data: {text}\n\n".encode()
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
            time.sleep(GAP_S)
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def upstream() -> Iterator[str]:
    """The fake upstream's base URL (it lives under /openai/v1, to check path mapping)."""
    _Upstream.seen = []
    with fake_upstream(_Upstream, "/openai/v1") as url:
        yield url


def _client(proxy: RecordProxy, key: str = KEY) -> openai.OpenAI:
    """An SDK client sending every kind of secret header through the proxy."""
    return openai.OpenAI(
        base_url=f"{proxy.url}/v1",
        api_key=key,
        organization=ORG,
        project=PROJECT,
        default_headers={"Cookie": COOKIE},
        max_retries=0,
    )


def _assert_no_secret(path: Path) -> None:
    """The written bytes contain none of the secrets, nor the Authorization header."""
    raw = path.read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in raw
    assert b"bearer" not in raw.lower() and b"authorization" not in raw.lower()


def test_proxied_call_succeeds_and_file_holds_no_secret(upstream: str, tmp_path: Path) -> None:
    """Non-stream: the key reaches the upstream, the answer reaches the client, not the file."""
    out = tmp_path / "02_sync_loop.json"
    with RecordProxy(upstream, out) as proxy, _client(proxy) as client:
        question = f"my key is {KEY}, keep it"
        response = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": question}],
            temperature=0.3,
            extra_body={"api_key": KEY},
        )
    assert response.choices[0].message.content == f"You said: {question}"
    seen = _Upstream.seen[-1]
    assert seen["headers"]["authorization"] == f"Bearer {KEY}"
    assert seen["headers"]["openai-organization"] == ORG
    assert seen["headers"]["cookie"] == COOKIE
    assert seen["path"] == "/openai/v1/chat/completions"
    _assert_no_secret(out)
    loaded = load_cassette(out)
    assert loaded.meta["source"].startswith("recorded from 127.0.0.1:")
    item = loaded.interactions[0]
    assert item.request["path"] == "/v1/chat/completions"
    assert "api_key" not in item.request["body"]
    assert item.request["body"]["messages"][0]["content"] == "my key is <redacted>, keep it"
    assert item.response["headers"] == {"content-type": "application/json"}
    assert item.response["body"]["choices"][0]["message"]["content"].endswith("<redacted>, keep it")


def test_stream_is_relayed_and_recorded_with_timing(upstream: str, tmp_path: Path) -> None:
    """Stream: the client gets every chunk; the file holds each event with its measured delay."""
    out = tmp_path / "03_streaming.json"
    body = {
        "model": MODEL,
        "messages": ROUND_1,
        "tools": TOOLS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with RecordProxy(upstream, out) as proxy, _client(proxy) as client:
        chunks = [c.to_dict() for c in client.chat.completions.create(**body)]
    expected = [e["data"] for e in stream_events()]
    assert chunks == expected[:-1]
    _assert_no_secret(out)
    events = load_cassette(out).interactions[0].response["sse"]
    assert [e["data"] for e in events] == expected
    # delay_ms is measured: together they span at least the upstream's pauses (lower bound only).
    assert sum(e["delay_ms"] for e in events) >= (len(events) - 1) * GAP_S * 1000 * 0.9
    assert all(isinstance(e["delay_ms"], int) and e["delay_ms"] >= 0 for e in events)
    # The recording replays through the replay server exactly.
    with ReplayServer(out) as replay:
        with openai.OpenAI(base_url=f"{replay.url}/v1", api_key="k") as sdk:
            again = [c.to_dict() for c in sdk.chat.completions.create(**body)]
    assert again == chunks


def test_wrong_key_is_relayed_not_hidden(upstream: str, tmp_path: Path) -> None:
    """The upstream's 401 reaches the client as AuthenticationError; the wrong key is not kept."""
    out = tmp_path / "x.json"
    wrong = "sk-wrong-key-0000000000"
    with RecordProxy(upstream, out) as proxy, _client(proxy, wrong) as client:
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model=MODEL, messages=ROUND_1)
        assert [m.id for m in client.models.list()] == [MODEL]  # GET is forwarded
    assert wrong.encode() not in out.read_bytes()
    assert load_cassette(out).interactions[0].response["status"] == 401


def test_same_request_twice_keeps_latest_and_session_continues(
    upstream: str, tmp_path: Path
) -> None:
    """Re-running a cell does not duplicate the exchange; a new proxy continues the file."""
    out = tmp_path / "x.json"
    messages = [{"role": "user", "content": "hello"}]
    with RecordProxy(upstream, out) as proxy, _client(proxy) as client:
        client.chat.completions.create(model=MODEL, messages=messages)
        client.chat.completions.create(model=MODEL, messages=messages, temperature=0.9)
    with RecordProxy(upstream, out) as proxy, _client(proxy) as client:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "bye"}])
    labels = [i.label for i in load_cassette(out).interactions]
    assert labels == ["x/recorded-1", "x/recorded-2"]


def test_unreachable_upstream_is_502(tmp_path: Path) -> None:
    """A dead upstream gives an OpenAI-shaped 502, not a hang or a traceback."""
    with RecordProxy("http://127.0.0.1:9/v1", tmp_path / "x.json") as proxy:
        with _client(proxy) as client, pytest.raises(openai.InternalServerError) as caught:
            client.chat.completions.create(model=MODEL, messages=ROUND_1)
    assert "could not reach 127.0.0.1:9" in str(caught.value)
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.1", "::"])
def test_proxy_refuses_non_loopback(tmp_path: Path, host: str) -> None:
    """The proxy binds 127.0.0.1 only."""
    with pytest.raises(ValueError, match="127.0.0.1"):
        RecordProxy("https://api.moonshot.ai/v1", tmp_path / "x.json", host=host)


def test_repr_and_meta_hide_credentials(tmp_path: Path) -> None:
    """An upstream URL with user:password shows only its host."""
    proxy = RecordProxy("https://user:pw-SECRET@api.example.com/v1", tmp_path / "x.json")
    assert "SECRET" not in repr(proxy) and "api.example.com" in repr(proxy)
    assert proxy.cassette()["meta"]["source"].startswith("recorded from api.example.com, 20")


def test_scrub_units() -> None:
    """Secret headers yield their values (scheme stripped); placeholders are not secrets."""
    found = secrets_from_headers(
        [("Authorization", f"Bearer {KEY}"), ("Cookie", COOKIE), ("Accept", "application/json")]
    )
    assert KEY in found and "COOKIESECRET789" in found and "application/json" not in found
    assert secrets_from_headers([("Authorization", "Bearer EMPTY")]) == {"Bearer EMPTY"}
    cleaned = scrub({"api_key": KEY, "messages": [{"content": f"a {KEY} b EMPTY"}]}, found)
    assert cleaned == {"messages": [{"content": "a <redacted> b EMPTY"}]}
