"""`connect()` reads the environment and never changes it; loopback traffic never meets a proxy.

A lab exports HTTP(S)_PROXY, a desktop `all_proxy=socks://...`. The SDK client of a lesson gets
`http_client=conn.http_client()`: for a server on this machine (replay, record, a local live
server) that client ignores the proxy variables, so nothing has to be edited in `os.environ`; a
remote live endpoint is reached through the environment's proxies, as the SDK does by default.
The proxy here is a real one on loopback that records every request it is asked to forward.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import openai
import pytest
import scripts_support
from test_replay_fixtures import (
    MODEL,
    ROUND_1,
    chat_body,
    fake_upstream,
    interactions,
    reply_json,
    write_cassette,
)

from helpers.lessons import lesson_names
from helpers.paths import NOTEBOOKS_DIR
from helpers.replay import LiveSettingsError, connect, stop_servers

KEY = "sk-live-SECRET-abcdef123456"
REMOTE = "http://api.remote-endpoint.invalid/v1"  # never resolved: only the proxy could answer
SOCKS = "socks://127.0.0.1:9/"  # a desktop's export; the SDK's client refuses this scheme


class _Recorder(BaseHTTPRequestHandler):
    """A forward proxy (absolute-form targets) or an upstream: notes the target, answers a chat."""

    seen: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).seen.append(self.path)
        reply_json(self, 200, chat_body({"role": "assistant", "content": "answered"}, "stop"))

    def do_GET(self) -> None:  # noqa: N802
        type(self).seen.append(self.path)
        reply_json(self, 200, {"object": "list", "data": []})


class _Proxy(_Recorder):
    seen: list[str] = []


class _Upstream(_Recorder):
    seen: list[str] = []


@pytest.fixture
def proxied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """Every proxy variable set (HTTP ones to the recording proxy, all_proxy to SOCKS), NO_PROXY
    unset, replay over a test cassette; yields the proxy's URL."""
    _Proxy.seen, _Upstream.seen = [], []
    for name in list(os.environ):
        if name.lower() in ("no_proxy", "llm_mode") or name.startswith(("KIMI_", "QWEN_")):
            monkeypatch.delenv(name)
    folder = tmp_path / "cassettes"
    folder.mkdir()
    write_cassette(folder, "lesson", interactions())
    monkeypatch.setenv("LLM_REPLAY_DIR", str(folder))
    monkeypatch.setenv("LLM_RECORD_DIR", str(tmp_path / "new"))
    stop_servers()
    with fake_upstream(_Proxy, "") as proxy:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            monkeypatch.setenv(name, proxy)
        monkeypatch.setenv("all_proxy", SOCKS)
        yield proxy
    stop_servers()


def _live(monkeypatch: pytest.MonkeyPatch, mode: str, base_url: str) -> None:
    monkeypatch.setenv("LLM_MODE", mode)
    monkeypatch.setenv("KIMI_BASE_URL", base_url)
    monkeypatch.setenv("KIMI_API_KEY", KEY)
    monkeypatch.setenv("KIMI_MODEL", MODEL)


def _client(conn) -> openai.OpenAI:
    """The setup cell's client."""
    return openai.OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client(), max_retries=0
    )


def _ask(conn) -> str:
    """One chat request through the setup cell's client (closed after)."""
    with _client(conn) as client:
        reply = client.chat.completions.create(model=conn.model_name, messages=ROUND_1)
    return reply.choices[0].message.content


def _models(conn) -> list[str]:
    """The replay server's model list through the setup cell's client (closed after)."""
    with _client(conn) as client:
        return [model.id for model in client.models.list()]


def test_the_proxy_here_would_see_a_request_the_sdk_sends_by_default(proxied, monkeypatch):
    """The oracle works: without `http_client`, the SDK sends a loopback request to the proxy
    (all_proxy removed: with it, the SDK's default client refuses to be built at all)."""
    monkeypatch.delenv("all_proxy")
    with fake_upstream(_Upstream) as upstream:
        with openai.OpenAI(base_url=upstream, api_key="k", max_retries=0) as client:
            client.chat.completions.create(model=MODEL, messages=ROUND_1)
    assert _Proxy.seen == [f"{upstream}/chat/completions"] and _Upstream.seen == []
    monkeypatch.setenv("all_proxy", SOCKS)
    with pytest.raises(ValueError, match="Unknown scheme for proxy URL"):
        openai.OpenAI(base_url=upstream, api_key="k")


def test_replay_leaves_the_environment_alone_and_bypasses_the_proxy(proxied):
    before = dict(os.environ)
    conn = connect("kimi")
    assert dict(os.environ) == before
    assert conn.mode == "replay" and conn.model_name in _models(conn)
    assert _Proxy.seen == [] and dict(os.environ) == before


def test_record_leaves_the_environment_alone_and_both_hops_bypass_the_proxy(proxied, monkeypatch):
    """Notebook -> record proxy (loopback) and record proxy -> a local upstream (loopback)."""
    with fake_upstream(_Upstream) as upstream:
        _live(monkeypatch, "record", upstream)
        before = dict(os.environ)
        conn = connect("kimi", lesson="02_sync_loop")
        assert dict(os.environ) == before
        assert conn.mode == "record" and _ask(conn) == "answered"
    assert _Upstream.seen == ["/v1/chat/completions"] and _Proxy.seen == []
    assert dict(os.environ) == before


def test_live_to_a_local_server_leaves_the_environment_alone_and_bypasses_the_proxy(
    proxied, monkeypatch
):
    with fake_upstream(_Upstream) as upstream:
        _live(monkeypatch, "live", upstream)
        before = dict(os.environ)
        conn = connect("kimi")
        assert dict(os.environ) == before
        assert conn.endpoint == upstream and _ask(conn) == "answered"
    assert _Upstream.seen == ["/v1/chat/completions"] and _Proxy.seen == []


@pytest.mark.parametrize("mode", ["live", "record"])
def test_a_remote_endpoint_with_an_unusable_proxy_is_a_clear_error_and_changes_nothing(
    proxied, monkeypatch, mode
):
    _live(monkeypatch, mode, REMOTE)
    before = dict(os.environ)
    with pytest.raises(LiveSettingsError, match="unset all_proxy"):
        connect("kimi")
    assert dict(os.environ) == before


def test_a_remote_endpoint_is_reached_through_the_environments_proxy(proxied, monkeypatch):
    """Live mode to a remote host keeps trusting the environment, as the SDK does by default."""
    monkeypatch.delenv("all_proxy")
    _live(monkeypatch, "live", REMOTE)
    before = dict(os.environ)
    conn = connect("kimi")
    assert dict(os.environ) == before
    assert _ask(conn) == "answered"
    assert _Proxy.seen == [f"{REMOTE}/chat/completions"]


def test_http_client_is_new_on_each_call(proxied):
    """`with OpenAI(...)` closes the client it was given; the next cell's client still works."""
    conn = connect("kimi")
    first = conn.http_client()
    assert conn.http_client() is not first
    assert _models(conn) == _models(conn)  # the second client is not the closed first one


def _clients_without_http_client(source: str) -> list[str]:
    """The `OpenAI(...)` calls in `source` that do not pass `http_client=`."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "OpenAI":
            if not any(keyword.arg == "http_client" for keyword in node.keywords):
                missing.append(ast.get_source_segment(source, node))
    return missing


def test_the_check_finds_a_client_without_http_client():
    assert _clients_without_http_client("c = OpenAI(base_url=e, api_key=k)") == [
        "OpenAI(base_url=e, api_key=k)"
    ]
    assert _clients_without_http_client("c = OpenAI(base_url=e, http_client=h)") == []


@pytest.mark.parametrize("lesson", lesson_names(NOTEBOOKS_DIR / "src"))
def test_every_client_a_lesson_makes_passes_http_client(lesson):
    """A lesson's client without `http_client=conn.http_client()` would send a lab's loopback
    traffic to its proxy (and fail at once with a desktop's `all_proxy=socks://...`)."""
    code = scripts_support.lesson_code(lesson)
    missing = [call for cell in code for call in _clients_without_http_client(cell)]
    assert not missing, (
        f"{lesson}: pass http_client=<conn>.http_client() to {missing} (see docs/authoring.md)"
    )
    assert not [cell for cell in code if "requests.post(" in cell], (
        f"{lesson}: post with conn.http_client() instead of requests (it ignores proxies only "
        "for a server on this machine)"
    )
