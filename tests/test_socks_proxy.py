"""A desktop-exported SOCKS proxy (`all_proxy=socks://...`) must not break the setup cell.

httpx (inside the openai SDK) builds a transport for every proxy variable when a client is made,
even for hosts NO_PROXY exempts: `socks://` and `socks4://` raise "Unknown scheme for proxy URL",
`socks5://` without `socksio` an ImportError. The client a lesson builds for a server on this
machine (`http_client=conn.http_client()`) does not read proxy variables, so replay and a local
live server work with the variable left in place; live mode to a remote endpoint says what to
install or unset. The proxies here are dead loopback ports: nothing is ever sent through them.
"""

from __future__ import annotations

import os

import pytest
from openai import OpenAI
from test_live_mode import execute, problems

from helpers.paths import NOTEBOOKS_DIR
from helpers.replay import modes

DEAD = "127.0.0.1:9"
PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
def clean_env(monkeypatch):
    """No proxy, mode or replay folder from the caller's shell; servers started anew."""
    for name in (*PROXY_NAMES, "NO_PROXY", "no_proxy", "LLM_MODE", "LLM_REPLAY_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch
    modes.stop_servers()


def test_the_sdk_itself_refuses_a_socks_scheme(clean_env):
    """The defect this file guards against: the client fails before sending anything."""
    clean_env.setenv("all_proxy", f"socks://{DEAD}")
    clean_env.setenv("NO_PROXY", "127.0.0.1,localhost")
    with pytest.raises(ValueError, match="Unknown scheme for proxy URL"):
        OpenAI(base_url="http://127.0.0.1:1/v1", api_key="x")


@pytest.mark.parametrize(
    "name, value",
    [
        ("all_proxy", f"socks://{DEAD}/"),
        ("ALL_PROXY", f"socks5://user:secret@{DEAD}"),
        ("all_proxy", f"socks5h://{DEAD}"),
        ("https_proxy", f"socks4://{DEAD}"),
    ],
)
def test_replay_answers_with_the_proxy_left_in_place(clean_env, capsys, name, value):
    clean_env.setenv(name, value)
    clean_env.setenv("HTTP_PROXY", f"http://{DEAD}")  # dead: a request sent through it fails
    before = dict(os.environ)
    conn = modes.connect("kimi")
    assert dict(os.environ) == before and capsys.readouterr().out == ""
    client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
    assert conn.model_name in [m.id for m in client.models.list()]


def test_live_mode_to_a_remote_endpoint_says_what_to_install_or_unset(clean_env):
    clean_env.setenv("all_proxy", f"socks://user:secret@{DEAD}")
    clean_env.setenv("LLM_MODE", "live")
    clean_env.setenv("KIMI_BASE_URL", "https://api.moonshot.ai/v1")
    clean_env.setenv("KIMI_API_KEY", "sk-test")
    clean_env.setenv("KIMI_MODEL", "kimi-k2.6")
    with pytest.raises(modes.LiveSettingsError) as caught:
        modes.connect("kimi")
    message = str(caught.value)
    assert "pip install socksio" in message and "unset all_proxy" in message
    assert "socks5h://" in message and "api.moonshot.ai" in message
    assert "secret" not in message
    assert os.environ["all_proxy"] == f"socks://user:secret@{DEAD}", "live mode changes nothing"


def test_live_mode_to_a_local_server_ignores_the_proxy_like_replay(clean_env, capsys):
    clean_env.setenv("ALL_PROXY", f"socks://{DEAD}")
    clean_env.setenv("LLM_MODE", "live")
    clean_env.setenv("QWEN_BASE_URL", "http://localhost:11434/v1")
    clean_env.setenv("QWEN_API_KEY", "ollama")
    clean_env.setenv("QWEN_MODEL", "qwen3:0.6b")
    before = dict(os.environ)
    conn = modes.connect("qwen")
    assert dict(os.environ) == before and capsys.readouterr().out == ""
    OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
    with pytest.raises(ValueError, match="Unknown scheme"):  # the SDK's default client would
        OpenAI(base_url=conn.endpoint, api_key=conn.api_key)


@pytest.mark.notebooks
def test_lesson_00_runs_with_a_desktop_socks_proxy_exported(clean_env):
    """The whole of lesson 00 in a kernel that inherits GNOME's style of proxy export."""
    clean_env.setenv("all_proxy", f"socks://{DEAD}/")
    clean_env.setenv("ALL_PROXY", f"socks5://{DEAD}")
    nb = execute(NOTEBOOKS_DIR / "en" / "00_start.ipynb")
    assert problems(nb) == []
    setup = next(c for c in nb.cells if c.cell_type == "code" and "connect(" in c.source)
    assert not [o for o in setup.outputs if o.output_type == "stream"], "no note is needed"
