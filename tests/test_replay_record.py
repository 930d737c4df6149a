"""The record proxy against a fake upstream that needs a key: it works, and no secret is written."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
import requests
from test_replay_fixtures import (
    MODEL,
    ROUND_1,
    TOOLS,
    UpstreamHandler,
    chat_body,
    fake_upstream,
    reply_json,
    reply_sse,
    stream_events,
)

from helpers.replay import RecordProxy, ReplayServer, load_cassette
from helpers.replay.record import (
    looks_secret,
    request_secrets,
    scrub,
    without_credential_fields,
)

KEY = "sk-test-SECRET-1234567890abcdef"
ORG = "org-SECRETORG123"
PROJECT = "proj-SECRETPROJ456"
COOKIE = "session=COOKIESECRET789"
SECRETS = [KEY, ORG, PROJECT, "COOKIESECRET789"]
GAP_S = 0.03


class _Upstream(UpstreamHandler):
    """A fake OpenAI-compatible endpoint under /openai/v1 that requires `Bearer KEY`."""

    seen: list[dict[str, Any]] = []

    def _json(self, status: int, body: Any) -> None:
        reply_json(self, status, body, **{"Set-Cookie": "upstream=COOKIESECRET789"})

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
    found = request_secrets(
        [("Authorization", f"Bearer {KEY}"), ("Cookie", COOKIE), ("Accept", "application/json")]
    )
    assert KEY in found and "COOKIESECRET789" in found and "application/json" not in found
    assert request_secrets([("Authorization", "Bearer EMPTY")]) == {"Bearer EMPTY"}
    cleaned = scrub({"api_key": KEY, "messages": [{"content": f"a {KEY} b EMPTY"}]}, found)
    assert cleaned == {"api_key": "<redacted>", "messages": [{"content": "a <redacted> b EMPTY"}]}
    assert without_credential_fields(cleaned) == {"messages": cleaned["messages"]}


# ---------------------------------------------------------------------------------------------
# Two writers on one file, a planted symlink, a refused save
# ---------------------------------------------------------------------------------------------


def _ask(proxy: RecordProxy, text: str) -> None:
    """One non-stream exchange through `proxy`."""
    with _client(proxy) as client:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": text}])


def _contents(path: Path) -> list[str]:
    """The user texts of a cassette's exchanges, in file order."""
    return [i.request["body"]["messages"][-1]["content"] for i in load_cassette(path).interactions]


def test_two_kernels_recording_into_one_file_keep_both_sides(upstream: str, tmp_path: Path) -> None:
    """Each proxy started before the other wrote: neither may drop the other's exchanges."""
    out = tmp_path / "kimi.json"
    with RecordProxy(upstream, out) as first, RecordProxy(upstream, out) as second:
        _ask(first, "from the first kernel")
        _ask(second, "from the second kernel")
        _ask(first, "first again")
        assert _contents(out) == ["from the first kernel", "from the second kernel", "first again"]
        texts = [f"{who} {n}" for n in range(12) for who in ("a", "b")]
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(lambda t: _ask(first if t[0] == "a" else second, t), texts))
    assert sorted(_contents(out)[3:]) == sorted(texts)
    assert len({i.label for i in load_cassette(out).interactions}) == 3 + len(texts)


def test_a_planted_tmp_symlink_redirects_nothing(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "kimi.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / "kimi.json.tmp").symlink_to(victim)
    with RecordProxy(upstream, out) as proxy:
        _ask(proxy, "hello")
    assert victim.read_text() == "untouched"
    assert not out.is_symlink() and _contents(out) == ["hello"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        "kimi.json",
        "kimi.json.tmp",
        "victim.txt",
    ]


def test_temporary_files_of_a_killed_writer_are_cleaned_up_fresh_ones_kept(
    upstream: str, tmp_path: Path
) -> None:
    # A recorder killed mid-write (SIGKILL: no cleanup) leaves `.kimi.json.<random>.tmp`; the next
    # write, holding the file lock, removes it once it is old; a young one may be a live writer's.
    out = tmp_path / "kimi.json"
    old, young = tmp_path / ".kimi.json.killed.tmp", tmp_path / ".kimi.json.writing.tmp"
    other = tmp_path / ".other.json.killed.tmp"
    for path in (old, young, other):
        path.write_text("{half a cassette")
    long_ago = time.time() - 3600
    for path in (old, other):
        os.utime(path, (long_ago, long_ago))
    with RecordProxy(upstream, out) as proxy:
        _ask(proxy, "hello")
    assert _contents(out) == ["hello"]
    assert not old.exists()
    assert young.exists() and other.exists()  # too young; another cassette's


def test_a_refused_save_drops_that_exchange_only_and_says_so_once(
    upstream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import helpers.replay.record as record

    real_scrub = record.scrub
    calls = {"n": 0}

    def leaky_first_time(value: Any, secrets: Any) -> Any:
        calls["n"] += 1
        return value if calls["n"] <= 2 else real_scrub(value, secrets)  # body and response

    monkeypatch.setattr(record, "scrub", leaky_first_time)
    out = tmp_path / "x.json"
    with RecordProxy(upstream, out) as proxy:
        _ask(proxy, f"leaky {KEY}")
        _ask(proxy, f"fine {KEY}")
        _ask(proxy, "also fine")
    assert _contents(out) == ["fine <redacted>", "also fine"]
    _assert_no_secret(out)
    refusals = [r for r in caplog.records if "not written" in r.getMessage()]
    assert len(refusals) == 1


# ---------------------------------------------------------------------------------------------
# Secrets the upstream echoes back: every credential the client sent is blanked everywhere
# ---------------------------------------------------------------------------------------------

QUERY_KEY = "qk-SECRET-query-0123456789"
GOOG_KEY = "AIzaSECRETgoogkey0123456789"
BODY_KEY = "bk-SECRET-body-0123456789"
AUTH_FIELD = "af-SECRET-field-0123456789"


class _Echo(UpstreamHandler):
    """An upstream that echoes everything it was sent (headers, query, body) in its answers."""

    def do_POST(self) -> None:
        """Echo as JSON, or as a stream that splits the Bearer key across two events."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        echo = f"path {self.path} headers {dict(self.headers)} body {json.dumps(body)}"
        if not body.get("stream"):
            answer = chat_body({"role": "assistant", "content": echo}, "stop")
            answer[f"seen {KEY}"] = {GOOG_KEY: BODY_KEY}  # secrets as dict KEYS too
            reply_json(self, 200, answer)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        half = len(KEY) // 2
        for piece in (
            "your key is ",
            KEY[:half],
            KEY[half:],
            " and the query key ",
            QUERY_KEY[:5],
            QUERY_KEY[5:],
        ):
            chunk = {
                "id": "c",
                "object": "chat.completion.chunk",
                "model": MODEL,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@pytest.mark.parametrize("stream", [False, True])
def test_echoed_credentials_never_reach_the_cassette(tmp_path: Path, stream: bool) -> None:
    out = tmp_path / "echo.json"
    with fake_upstream(_Echo, "/v1") as url, RecordProxy(url, out) as proxy:
        client = openai.OpenAI(
            base_url=f"{proxy.url}/v1",
            api_key=KEY,
            max_retries=0,
            default_query={"key": QUERY_KEY},
            default_headers={"X-Goog-Api-Key": GOOG_KEY},
        )
        with client:
            answer = client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": "echo"}],
                stream=stream,
                extra_body={"api_key": BODY_KEY, "Authorization": f"Bearer {AUTH_FIELD}"},
            )
            if stream:
                text = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
                assert KEY in text  # the client still gets the live answer unchanged
    raw = out.read_text(encoding="utf-8")
    for secret in (KEY, QUERY_KEY, GOOG_KEY, BODY_KEY, AUTH_FIELD):
        assert secret not in raw and json.dumps(secret)[1:-1] not in raw, secret
    if stream:
        events = load_cassette(out).interactions[0].response["sse"]
        joined = "".join(
            e["data"]["choices"][0]["delta"]["content"]
            for e in events
            if isinstance(e["data"], dict)
        )
        assert joined == "your key is <redacted> and the query key <redacted>"
        for secret in (KEY, QUERY_KEY):
            assert secret[: len(secret) // 2] not in raw and secret[len(secret) // 2 :] not in raw


# ---------------------------------------------------------------------------------------------
# Nothing lost: error answers, a lab's proxy, schema keys named like credentials, placeholder keys
# ---------------------------------------------------------------------------------------------


class _Flaky(UpstreamHandler):
    """An upstream answering each POST with the next status of `statuses` (a chat body on 200)."""

    statuses: list[int] = []
    seen: list[str] = []

    def do_POST(self) -> None:
        """Answer with the scripted status; remember the request line's target."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(self.path)
        status = type(self).statuses.pop(0)
        if status == 200:
            echoed = body["messages"][-1]["content"]
            answer: Any = chat_body({"role": "assistant", "content": f"You said: {echoed}"}, "stop")
        else:
            answer = {"error": {"message": f"status {status}", "type": "server_error"}}
        reply_json(self, status, answer)


def _flaky(statuses: list[int]) -> Any:
    _Flaky.statuses, _Flaky.seen = list(statuses), []
    return fake_upstream(_Flaky, "/v1")


def _plain_client(proxy: RecordProxy, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=key, max_retries=0)


def test_an_error_answer_never_replaces_a_good_recording(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "x.json"
    messages = [{"role": "user", "content": "hello"}]
    with _flaky([200, 429, 503]) as url, RecordProxy(url, out) as proxy:
        with _plain_client(proxy) as client:
            client.chat.completions.create(model=MODEL, messages=messages)
            with pytest.raises(openai.RateLimitError):  # relayed to the notebook as it came
                client.chat.completions.create(model=MODEL, messages=messages)
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model=MODEL, messages=messages)
    [item] = load_cassette(out).interactions
    assert item.response["status"] == 200
    assert item.response["body"]["choices"][0]["message"]["content"] == "You said: hello"
    assert sum("not written" in r.getMessage() for r in caplog.records) == 2
    # A later session (a new proxy reading the file) keeps it too; a success still replaces.
    with _flaky([500, 200]) as url, RecordProxy(url, out) as proxy:
        with _plain_client(proxy) as client:
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model=MODEL, messages=messages)
            assert load_cassette(out).interactions[0].response["status"] == 200
            client.chat.completions.create(model=MODEL, messages=messages, temperature=0.5)
    assert [i.response["status"] for i in load_cassette(out).interactions] == [200]


def test_an_error_to_a_new_request_is_still_recorded(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    with _flaky([503]) as url, RecordProxy(url, out) as proxy, _plain_client(proxy) as client:
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model=MODEL, messages=ROUND_1)
    assert load_cassette(out).interactions[0].response["status"] == 503


class _LabProxy(UpstreamHandler):
    """A lab's forward HTTP proxy: gets absolute-URI requests and answers them itself."""

    targets: list[str] = []

    def do_POST(self) -> None:
        """Remember the absolute target, answer as the upstream would."""
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).targets.append(self.path)
        reply_json(self, 200, chat_body({"role": "assistant", "content": "via proxy"}, "stop"))


def test_the_upstream_is_reached_through_the_labs_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live mode (the openai SDK) honours HTTP_PROXY; record mode must too, and NO_PROXY."""
    _LabProxy.targets = []
    out = tmp_path / "x.json"
    with fake_upstream(_LabProxy, "") as lab_proxy:
        for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ALL_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", lab_proxy)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the notebook -> proxy hop
        upstream = "http://api.lab-upstream.invalid/v1"
        with RecordProxy(upstream, out) as proxy, _plain_client(proxy) as client:
            answer = client.chat.completions.create(model=MODEL, messages=ROUND_1)
    assert answer.choices[0].message.content == "via proxy"
    assert _LabProxy.targets == ["http://api.lab-upstream.invalid/v1/chat/completions"]
    assert load_cassette(out).interactions[0].response["status"] == 200
    # An upstream on this machine is reached directly, whatever HTTP_PROXY says, without NO_PROXY.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY")
    direct = openai.DefaultHttpxClient(trust_env=False)  # the notebook's hop, as conn.http_client()
    with _flaky([200]) as url, RecordProxy(url, tmp_path / "y.json") as proxy:
        with openai.OpenAI(
            base_url=f"{proxy.url}/v1", api_key=KEY, http_client=direct, max_retries=0
        ) as client:
            client.chat.completions.create(model=MODEL, messages=ROUND_1)
    assert _Flaky.seen == ["/v1/chat/completions"]


SCHEMA_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "log_in",
            "description": "Log in to the intranet.",
            "parameters": {
                "type": "object",
                "properties": {
                    "username": {"type": "string"},
                    "password": {"type": "string", "description": "the user's password"},
                    "authorization": {"type": "string", "enum": ["basic", "sso"]},
                    "access_token": {"type": "string"},
                    "api_key": {"type": "string"},
                },
                "required": ["username", "password"],
            },
        },
    }
]


@pytest.mark.parametrize("stream", [False, True])
def test_a_capture_with_credential_named_schema_keys_replays(
    upstream: str, tmp_path: Path, stream: bool
) -> None:
    out = tmp_path / "x.json"
    request: dict[str, Any] = {
        "model": MODEL,
        "messages": ROUND_1,
        "tools": SCHEMA_TOOLS,
        "stream": stream,
        "extra_body": {"api_key": BODY_KEY},
    }
    with RecordProxy(upstream, out) as proxy, _client(proxy) as client:
        first = client.chat.completions.create(**request)
        first = [c.to_dict() for c in first] if stream else first.to_dict()
    recorded = load_cassette(out).interactions[0].request["body"]
    assert recorded["tools"] == SCHEMA_TOOLS and "api_key" not in recorded
    assert BODY_KEY not in out.read_text(encoding="utf-8")
    with (
        ReplayServer(out) as replay,
        openai.OpenAI(base_url=f"{replay.url}/v1", api_key="k", max_retries=0) as sdk,
    ):
        again = sdk.chat.completions.create(**request)  # no 404: the same request matches
        again = [c.to_dict() for c in again] if stream else again.to_dict()
    assert again == first


@pytest.mark.parametrize("placeholder", ["EMPTY", "ollama", "lm-studio", "not-needed"])
def test_a_placeholder_key_is_not_blanked_everywhere(tmp_path: Path, placeholder: str) -> None:
    """Local servers take any key; a documented placeholder sent as one stays in the text."""
    out = tmp_path / "x.json"
    text = f"Is {placeholder} a good word? Tell me anything about the {placeholder} field."
    with _flaky([200]) as url, RecordProxy(url, out) as proxy:
        with _plain_client(proxy, key=placeholder) as client:
            client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": text}],
                tools=SCHEMA_TOOLS,
                extra_body={"api_key": placeholder},
            )
    item = load_cassette(out).interactions[0]
    assert item.request["body"]["messages"][0]["content"] == text
    assert item.request["body"]["tools"] == SCHEMA_TOOLS
    assert item.response["body"]["choices"][0]["message"]["content"] == f"You said: {text}"


def test_what_counts_as_a_credential() -> None:
    for secret in (KEY, ORG, "COOKIESECRET789", "a" * 24, "sk-abcdef12", "classroom-pass"):
        assert looks_secret(secret), secret
    for word in ("EMPTY", "ollama", "lm-studio", "not-needed", "abc"):
        assert not looks_secret(word), word
    assert request_secrets([], body={"api_key": KEY, "tools": [{"api_key": ORG}]}) == {KEY}


class _Streams(UpstreamHandler):
    """An upstream answering each streamed POST with the next list of events of `script`."""

    script: list[list[str]] = []

    def do_POST(self) -> None:
        """Stream the next scripted events."""
        self.rfile.read(int(self.headers["Content-Length"]))
        reply_sse(self, type(self).script.pop(0))


def test_an_error_event_in_a_stream_never_replaces_a_good_recording(tmp_path: Path) -> None:
    """llama.cpp reports a parse failure mid-stream with HTTP 200: that is an error answer too."""
    good = [
        json.dumps(e["data"]) if isinstance(e["data"], dict) else e["data"] for e in stream_events()
    ]
    failure = {"error": {"code": 500, "message": "does not match the expected format"}}
    _Streams.script = [good, [good[0], json.dumps(failure)]]
    out = tmp_path / "x.json"
    body = {"model": MODEL, "messages": ROUND_1, "tools": TOOLS, "stream": True}
    with fake_upstream(_Streams, "/v1") as url, RecordProxy(url, out) as proxy:
        with _plain_client(proxy) as client:
            list(client.chat.completions.create(**body))
            with pytest.raises(openai.APIError, match="does not match the expected format"):
                list(client.chat.completions.create(**body))
    [item] = load_cassette(out).interactions
    assert [e["data"] for e in item.response["sse"]] == [e["data"] for e in stream_events()]


class _Broken(UpstreamHandler):
    """An upstream whose answers are broken in the way `mode` (a script) says, after a good one."""

    script: list[str] = []

    def do_POST(self) -> None:
        """Answer with the next scripted mode."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode = type(self).script.pop(0)
        good = [e["data"] for e in stream_events()]
        if mode == "good" and body.get("stream"):
            reply_sse(self, [d if isinstance(d, str) else json.dumps(d) for d in good])
        elif mode == "good":
            reply_json(self, 200, chat_body({"role": "assistant", "content": "fine"}, "stop"))
        elif mode == "html":  # a gateway's page with HTTP 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "21")
            self.end_headers()
            self.wfile.write(b"<html>Bad Gateway</h>")
        elif mode == "cut":  # two events, then the connection closes: no [DONE]
            reply_sse(self, [json.dumps(d) for d in good[:2]])
        elif mode == "drop-body":  # headers, half the announced body, then the connection closes
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "400")
            self.end_headers()
            self.wfile.write(b'{"id": "chatcmpl-1", "choi')
            self.close_connection = True


@pytest.mark.parametrize(("stream", "broken"), [(False, "html"), (True, "cut")])
def test_a_200_that_is_no_answer_never_replaces_a_good_recording(
    tmp_path: Path, stream: bool, broken: str
) -> None:
    """A gateway's HTML page with HTTP 200, or a stream cut before [DONE], is not a success."""
    out = tmp_path / "x.json"
    body = {"model": MODEL, "messages": ROUND_1, "stream": stream}
    _Broken.script = ["good", broken]
    with fake_upstream(_Broken, "/v1") as url, RecordProxy(url, out) as proxy:
        first = requests.post(f"{proxy.url}/v1/chat/completions", json=body, timeout=10)
        good = load_cassette(out).interactions[0].response
        second = requests.post(f"{proxy.url}/v1/chat/completions", json=body, timeout=10)
    assert first.status_code == second.status_code == 200  # both relayed as they came
    assert first.content != second.content
    [item] = load_cassette(out).interactions
    assert item.response == good


def test_an_upstream_breaking_off_its_answer_is_a_502_that_says_so(tmp_path: Path) -> None:
    """Not a 500 'Replay server error' with a traceback in the log; nothing is recorded."""
    out = tmp_path / "x.json"
    _Broken.script = ["drop-body"]
    with fake_upstream(_Broken, "/v1") as url, RecordProxy(url, out) as proxy:
        answer = requests.post(
            f"{proxy.url}/v1/chat/completions",
            json={"model": MODEL, "messages": ROUND_1},
            timeout=10,
        )
    assert answer.status_code == 502
    assert "broke off its answer" in answer.json()["error"]["message"]
    assert not out.exists()


def test_a_body_nested_too_deep_to_parse_is_relayed_not_a_500(
    upstream: str, tmp_path: Path
) -> None:
    """json.loads raises RecursionError (not ValueError) on 20,000 nested lists."""
    with RecordProxy(upstream, tmp_path / "x.json") as proxy:
        answer = requests.post(
            f"{proxy.url}/v1/chat/completions",
            data=b"[" * 20000 + b"]" * 20000,
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
            timeout=10,
        )
    assert answer.status_code != 500, answer.text


# --- issue 33: a class key, the configured key and a Basic-auth password never reach a file ----


@pytest.mark.parametrize("configured", [True, False])
@pytest.mark.parametrize("key", ["classroom-pass", "password", "anything"])
def test_a_short_lowercase_class_key_echoed_in_a_prompt_is_blanked(
    tmp_path: Path, key: str, configured: bool
) -> None:
    out = tmp_path / "x.json"
    text = f"My teacher said the key is {key}."
    secrets = [key] if configured else []
    with _flaky([200]) as url, RecordProxy(url, out, secrets=secrets) as proxy:
        with _plain_client(proxy, key=key) as client:
            answer = client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": text}]
            )
    assert key in answer.choices[0].message.content  # the client gets the live answer
    raw = out.read_text(encoding="utf-8")
    assert key not in raw and "the key is <redacted>." in raw


@pytest.mark.parametrize("placeholder", ["EMPTY", "lm-studio"])
def test_the_configured_key_is_blanked_even_when_it_looks_like_a_placeholder(
    tmp_path: Path, placeholder: str
) -> None:
    out = tmp_path / "x.json"
    with _flaky([200]) as url, RecordProxy(url, out, secrets=[placeholder]) as proxy:
        with _plain_client(proxy, key="sk-other-Key-12345") as client:
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": f"say {placeholder}"}]
            )
    assert placeholder not in out.read_text(encoding="utf-8")


def test_a_basic_auth_password_echoed_back_is_blanked(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    password = "hunter2pass"
    with _flaky([200]) as url, RecordProxy(url, out) as proxy:
        reply = requests.post(
            f"{proxy.url}/v1/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": f"pw {password}"}]},
            auth=("student", password),
            timeout=30,
        )
    assert reply.status_code == 200 and password in reply.text
    raw = out.read_text(encoding="utf-8")
    assert password not in raw and "student:" not in raw and "pw <redacted>" in raw
    assert request_secrets([("Authorization", "Basic c3R1ZGVudDpodW50ZXIycGFzcw==")]) == {
        "Basic c3R1ZGVudDpodW50ZXIycGFzcw==",
        "c3R1ZGVudDpodW50ZXIycGFzcw==",
        "student:hunter2pass",
        "hunter2pass",
    }


# --- issue 33: a client that goes away mid-stream loses nothing that was paid for -------------


def test_a_client_leaving_mid_stream_still_gets_the_whole_answer_recorded(
    upstream: str, tmp_path: Path
) -> None:
    import socket
    import struct

    out = tmp_path / "x.json"
    body = json.dumps(
        {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    ).encode()
    with RecordProxy(upstream, out) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                + f"\r\nAuthorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            received = b""
            while b"data: " not in received:
                received += sock.recv(4096)
            # leave at once, with a reset (SO_LINGER 0), as a killed kernel does
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + 15
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    events = load_cassette(out).interactions[0].response["sse"]
    assert [e["data"] for e in events] == [e["data"] for e in stream_events()]
