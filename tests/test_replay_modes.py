"""connect(): replay by default (one server per process), live from env, record via the proxy."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from test_replay_fixtures import (
    MODEL,
    QWEN,
    ROUND_1,
    TOOLS,
    UpstreamHandler,
    chat_body,
    fake_upstream,
    interactions,
    reply_json,
    write_cassette,
)

from helpers.paths import REPO_ROOT
from helpers.replay import Connection, LiveSettingsError, connect, modes, stop_servers

ENV = [
    "LLM_MODE",
    "LLM_RECORD_DIR",
    "LLM_REPLAY_DIR",
    "LLM_REPLAY_PACE",
    "HF_HUB_OFFLINE",
    *(f"{p}_{v}" for p in ("KIMI", "QWEN") for v in ("BASE_URL", "API_KEY", "MODEL")),
]
KEY = "sk-live-SECRET-abcdef123456"


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No mode variables from outside; replay over a test cassette; servers stopped after."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "cassettes"
    folder.mkdir()
    write_cassette(folder, "lesson", interactions())
    monkeypatch.setenv("LLM_REPLAY_DIR", str(folder))
    stop_servers()
    yield folder
    stop_servers()


def _threads(prefix: str) -> list[threading.Thread]:
    """Running threads whose name starts with prefix."""
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def test_replay_is_the_default_and_starts_once() -> None:
    """No LLM_MODE: replay; two connects share one server and endpoint."""
    first = connect("kimi")
    second = connect("kimi")
    assert first.mode == "replay" and first.endpoint == second.endpoint
    assert first.endpoint.startswith("http://127.0.0.1:") and first.endpoint.endswith("/v1")
    assert first.api_key == "replay-needs-no-key"
    assert first.model_name == MODEL and first.engine == "moonshot" and first.provider == "kimi"
    assert len(_threads("replay-server-")) == 1


@pytest.mark.parametrize("value, paced", [("1", True), ("yes", True), ("", False), ("0", False)])
def test_llm_replay_pace_turns_on_recorded_delays(monkeypatch, value: str, paced: bool) -> None:
    """A classroom can watch streams arrive at the recorded speed; tests and CI stay instant."""
    monkeypatch.setenv("LLM_REPLAY_PACE", value)
    connect("kimi")
    assert modes.replay_server().pace is paced


def test_replay_start_is_thread_safe() -> None:
    """Many threads connecting at once still start a single server."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        endpoints = set(pool.map(lambda _: connect("kimi").endpoint, range(16)))
    assert len(endpoints) == 1
    assert len(_threads("replay-server-")) == 1


def test_replay_endpoint_answers_through_the_sdk() -> None:
    """The notebook pattern: OpenAI(base_url=..., api_key=..., http_client=conn.http_client())."""
    conn = connect()
    client = openai.OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client()
    )
    response = client.chat.completions.create(
        model=conn.model_name, messages=ROUND_1, tools=TOOLS, temperature=0.3
    )
    assert response.choices[0].message.tool_calls[0].id == "get_weather:0"


def test_replay_engines_and_providers() -> None:
    """A non-default engine gets /engines/<engine>/v1; qwen's default is vllm_hermes at /v1."""
    vllm = connect("kimi", engine="vllm")
    assert vllm.endpoint.endswith("/engines/vllm/v1") and vllm.engine == "vllm"
    client = openai.OpenAI(
        base_url=vllm.endpoint, api_key=vllm.api_key, http_client=vllm.http_client()
    )
    response = client.chat.completions.create(model=MODEL, messages=ROUND_1, tools=TOOLS)
    assert response.choices[0].message.tool_calls[0].id == "functions.get_weather:0"
    qwen = connect("qwen")
    assert qwen.engine == "vllm_hermes" and qwen.model_name == QWEN
    assert qwen.endpoint == connect("kimi").endpoint
    assert connect("qwen", engine="moonshot").endpoint.endswith("/engines/moonshot/v1")


def test_connect_leaves_hf_hub_offline_of_the_kernel_alone() -> None:
    """The helpers keep their own loads offline; the student's own transformers calls are theirs."""
    connect()
    assert "HF_HUB_OFFLINE" not in os.environ


@pytest.mark.parametrize(
    ("args", "match"),
    [(("gpt",), "provider must be one of 'kimi', 'qwen'"), (("kimi", "tgi"), "engine must be")],
)
def test_bad_provider_or_engine(args: tuple[str, ...], match: str) -> None:
    """Unknown provider or engine: ValueError listing the choices."""
    with pytest.raises(ValueError, match=match):
        connect(*args)


def test_bad_mode_lists_the_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    """LLM_MODE=online is refused with the list of modes."""
    monkeypatch.setenv("LLM_MODE", "online")
    with pytest.raises(ValueError) as caught:
        connect()
    message = str(caught.value)
    assert "'online'" in message
    assert all(mode in message for mode in ("replay", "live", "record"))
    assert not _threads("replay-server-")


def test_live_missing_variables_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live with only the base URL: one error naming both missing variables, with examples."""
    monkeypatch.setenv("LLM_MODE", "live")
    monkeypatch.setenv("KIMI_BASE_URL", "https://api.moonshot.ai/v1")
    with pytest.raises(LiveSettingsError) as caught:
        connect("kimi")
    message = str(caught.value)
    assert "not set: KIMI_API_KEY, KIMI_MODEL." in message
    assert "https://api.moonshot.ai/v1" in message
    assert "http://localhost:8000/v1" in message and "EMPTY" in message
    assert "http://localhost:11434/v1" in message
    assert not _threads("replay-server-") and not _threads("record-proxy-")


def test_live_missing_everything_for_qwen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every missing QWEN_ variable is named; an empty value counts as missing."""
    monkeypatch.setenv("LLM_MODE", "live")
    monkeypatch.setenv("QWEN_MODEL", "  ")
    with pytest.raises(LiveSettingsError, match="not set: QWEN_BASE_URL, QWEN_API_KEY, QWEN_MODEL"):
        connect("qwen")


def test_live_uses_env_and_starts_no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live returns the environment's endpoint, key and model and starts nothing."""
    monkeypatch.setenv("LLM_MODE", "live")
    monkeypatch.setenv("KIMI_BASE_URL", "https://api.moonshot.ai/v1/")
    monkeypatch.setenv("KIMI_API_KEY", KEY)
    monkeypatch.setenv("KIMI_MODEL", "kimi-k2-0905-preview")
    before = threading.active_count()
    conn = connect("kimi", engine="vllm")
    assert conn == Connection(
        endpoint="https://api.moonshot.ai/v1",
        api_key=KEY,
        model_name="kimi-k2-0905-preview",
        mode="live",
        provider="kimi",
        engine=None,
    )
    assert threading.active_count() == before
    assert modes._replay_server is None and not modes._record_proxies
    assert KEY not in repr(conn) and KEY not in str(conn)
    assert repr(conn) == (
        "Connection(mode='live', provider='kimi', engine=None, "
        "model_name='kimi-k2-0905-preview', endpoint='https://api.moonshot.ai/v1')"
    )
    assert conn.describe() == (
        "live mode: model kimi-k2-0905-preview; answers from the live endpoint at api.moonshot.ai"
    )


def test_replay_repr_is_deterministic_and_keyless() -> None:
    """repr/str hide the port and never show the key."""
    conn = connect("kimi")
    expected = (
        "Connection(mode='replay', provider='kimi', engine='moonshot', "
        "model_name='moonshotai/Kimi-K2-Instruct', endpoint='http://127.0.0.1:<port>/v1')"
    )
    assert repr(conn) == expected and str(conn) == expected
    assert "replay-needs-no-key" not in repr(conn)
    assert "replay mode" in conn.describe() and "<port>" not in conn.describe()
    assert conn._repr_markdown_().startswith("**replay** mode")


class _Upstream(UpstreamHandler):
    """A fake live endpoint that needs the key."""

    def do_POST(self) -> None:
        """Answer any chat request when the key is right."""
        self.rfile.read(int(self.headers["Content-Length"]))
        ok = self.headers.get("Authorization") == f"Bearer {KEY}"
        body = chat_body({"role": "assistant", "content": "live hello"}, "stop")
        reply_json(self, 200 if ok else 401, body if ok else {"error": {"message": "bad key"}})


@pytest.fixture
def upstream() -> Iterator[str]:
    """The fake live endpoint's /v1 URL."""
    with fake_upstream(_Upstream) as url:
        yield url


def test_record_starts_a_proxy_and_writes_the_lesson_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: str
) -> None:
    """Record: a loopback proxy in front of the live endpoint, writing <lesson>.json, no key."""
    out_dir = tmp_path / "new"
    monkeypatch.setenv("LLM_MODE", "record")
    monkeypatch.setenv("LLM_RECORD_DIR", str(out_dir))
    monkeypatch.setenv("KIMI_BASE_URL", upstream)
    monkeypatch.setenv("KIMI_API_KEY", KEY)
    monkeypatch.setenv("KIMI_MODEL", "kimi-k2")
    conn = connect("kimi", lesson="02_sync_loop")
    assert conn.mode == "record" and conn.endpoint != upstream
    assert conn.endpoint.startswith("http://127.0.0.1:") and conn.endpoint.endswith("/v1")
    assert connect("kimi", lesson="02_sync_loop").endpoint == conn.endpoint
    assert repr(conn).endswith("endpoint='http://127.0.0.1:<port>/v1')") and KEY not in repr(conn)
    client = openai.OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client()
    )
    response = client.chat.completions.create(
        model=conn.model_name, messages=[{"role": "user", "content": f"key {KEY}"}]
    )
    assert response.choices[0].message.content == "live hello"
    written = out_dir / "02_sync_loop.json"
    assert KEY.encode() not in written.read_bytes()
    assert json.loads(written.read_text())["meta"]["notebook"] == "02_sync_loop"
    assert not _threads("replay-server-")


def test_record_mode_keeps_loopback_away_from_the_labs_proxy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: str
) -> None:
    """Behind a lab's HTTP_PROXY the notebook's requests to the record proxy must stay local, and
    NO_PROXY is left as it is: the setup cell's `http_client` ignores the proxy variables (the
    proxy is dead here, so a request sent through it fails)."""
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "intranet.example")
    monkeypatch.setenv("LLM_MODE", "record")
    monkeypatch.setenv("LLM_RECORD_DIR", str(tmp_path / "new"))
    monkeypatch.setenv("KIMI_BASE_URL", upstream)
    monkeypatch.setenv("KIMI_API_KEY", KEY)
    monkeypatch.setenv("KIMI_MODEL", "kimi-k2")
    conn = connect("kimi", lesson="02_sync_loop")
    assert os.environ["NO_PROXY"] == "intranet.example" and "no_proxy" not in os.environ
    with openai.OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client(), max_retries=0
    ) as client:
        answer = client.chat.completions.create(model=conn.model_name, messages=ROUND_1)
    assert answer.choices[0].message.content == "live hello"


def test_record_default_file_is_named_after_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a lesson, record writes <provider>.json in recordings-new/ of the repo."""
    monkeypatch.setenv("LLM_RECORD_DIR", "")
    path = modes.record_path("qwen", None)
    assert path.parent == REPO_ROOT / "recordings-new"
    assert path.name == "qwen.json"
    assert path.parent.name == "recordings-new"
    with pytest.raises(ValueError, match="plain file name"):
        modes.record_path("kimi", "../etc/passwd")


def test_relative_replay_and_record_dirs_resolve_against_the_repository_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A notebook's kernel runs in notebooks/en/: the README's relative paths must still work."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLM_REPLAY_DIR", "data/recordings")
    assert modes.replay_cassettes() == REPO_ROOT / "data" / "recordings"
    conn = connect()
    assert conn.mode == "replay"
    monkeypatch.setenv("LLM_RECORD_DIR", "recordings-new")
    assert modes.record_path("kimi", None) == REPO_ROOT / "recordings-new" / "kimi.json"
    stop_servers()
    monkeypatch.setenv("LLM_REPLAY_DIR", "no-such-folder")
    with pytest.raises(modes.CassetteError, match="repository root"):
        connect()


def _two_lessons(folder: Path) -> None:
    """Two lesson cassettes answering the same request differently (real captures do)."""
    items = interactions()
    write_cassette(folder, "01_first_call", items[:1])
    other = json.loads(json.dumps(items[:1]))
    other[0]["response"]["body"]["choices"][0]["message"]["content"] = "second lesson's answer"
    other[0]["response"]["body"]["choices"][0]["message"].pop("tool_calls", None)
    other[0]["response"]["body"]["choices"][0]["finish_reason"] = "stop"
    write_cassette(folder, "02_sync_loop", other)


def test_replay_scopes_matching_to_the_lesson_cassette(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "captures"
    folder.mkdir()
    _two_lessons(folder)
    monkeypatch.setenv("LLM_REPLAY_DIR", str(folder))
    request = interactions()[0]["request"]["body"]
    answers = {}
    for lesson in ("01_first_call", "02_sync_loop"):
        conn = connect("kimi", lesson=lesson)
        assert repr(conn).endswith("endpoint='http://127.0.0.1:<port>/v1')")
        client = openai.OpenAI(
            base_url=conn.endpoint,
            api_key=conn.api_key,
            http_client=conn.http_client(),
            max_retries=0,
        )
        answers[lesson] = client.chat.completions.create(**request).choices[0].message.content
    assert answers["02_sync_loop"] == "second lesson's answer"
    assert answers["01_first_call"] != "second lesson's answer"


def test_replay_lesson_comes_from_the_notebook_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """JupyterLab names the notebook in JPY_SESSION_NAME: `connect("kimi")` stays unchanged."""
    monkeypatch.setenv(
        "JPY_SESSION_NAME", str(tmp_path / "notebooks" / "ru" / "02_sync_loop.ipynb")
    )
    assert "/lessons/02_sync_loop/v1" in connect("kimi").endpoint
    vllm = connect("kimi", engine="vllm")
    assert vllm.endpoint.endswith("/lessons/02_sync_loop/engines/vllm/v1")
    client = openai.OpenAI(
        base_url=vllm.endpoint, api_key=vllm.api_key, http_client=vllm.http_client(), max_retries=0
    )
    response = client.chat.completions.create(model=MODEL, messages=ROUND_1, tools=TOOLS)
    assert response.choices[0].message.tool_calls[0].id == "functions.get_weather:0"
    monkeypatch.setenv("JPY_SESSION_NAME", "Untitled.ipynb")
    assert "/lessons/" not in connect("kimi").endpoint


@pytest.fixture
def russian() -> Iterator[None]:
    """The Russian edition's language for the duration of a test."""
    from helpers.i18n import reset_language, set_language

    set_language("ru")
    yield
    reset_language()


def test_student_texts_follow_the_notebook_language(
    russian: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = connect()
    assert conn.describe().startswith("режим replay: модель ")
    assert "без сети и без ключа" in conn.describe()
    client = openai.OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client(), max_retries=0
    )
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "?"}])
    message = caught.value.body["message"]
    assert message.startswith("Для этого запроса нет записанного ответа")
    assert "Ближайшая запись:" in message and "Первое различие в поле" in message
    assert "LLM_MODE=live" in message
    live = Connection("http://127.0.0.1:1/v1", KEY, "m", "live", "kimi", None)
    assert live.replay_only("a recorded profile") is False
    assert capsys.readouterr().out.startswith("режим live: пропущено, a recorded profile")
    monkeypatch.setenv("LLM_MODE", "live")
    with pytest.raises(LiveSettingsError, match="не заданы: KIMI_BASE_URL"):
        connect()
