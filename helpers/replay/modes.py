"""`connect()`: one call that gives a notebook its endpoint, key and model in every mode.

`LLM_MODE` picks the mode for a whole run: `replay` (default: recorded answers from a local
server, no key, no network), `live` (a real endpoint from environment variables) or `record`
(live, through a loopback proxy that writes cassettes).
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helpers import catalog
from helpers.i18n import Text, tr
from helpers.lessons import LESSON_NAME
from helpers.paths import RECORDINGS_DIR, REPO_ROOT
from helpers.replay.cassette import CassetteError
from helpers.replay.profiles import PROFILES, replay_model
from helpers.replay.record import RecordProxy, is_loopback, upstream_host
from helpers.replay.server import ReplayServer
from helpers.replay.validation import (
    ALWAYS_THINKING,
    LOCKED_SAMPLING_MODELS,
    MOONSHOT_THINKING_MODELS,
    REFUSES_DISABLED,
)

if TYPE_CHECKING:
    from openai import DefaultHttpxClient

MODES = catalog.MODES
PROVIDERS = catalog.PROVIDERS
ENGINES = tuple(PROFILES)
DEFAULT_ENGINE = catalog.DEFAULT_ENGINES
REPLAY_MODELS = catalog.MODEL_NAMES
REPLAY_API_KEY = catalog.REPLAY_API_KEY
LIVE_EXAMPLES = {
    "kimi": Text(
        "  Moonshot platform:  KIMI_BASE_URL=https://api.moonshot.ai/v1  KIMI_API_KEY=<your key>  "
        "KIMI_MODEL=kimi-k2.6  (it thinks by default; KIMI_THINKING=off turns thinking off)\n"
        "  local vLLM/SGLang:  KIMI_BASE_URL=http://localhost:8000/v1  KIMI_API_KEY=EMPTY "
        "(any key works)  KIMI_MODEL=moonshotai/Kimi-K2-Instruct-0905\n"
        "  Ollama:             KIMI_BASE_URL=http://localhost:11434/v1  KIMI_API_KEY=ollama  "
        "KIMI_MODEL=<a name from `ollama list`>",
        "  платформа Moonshot: KIMI_BASE_URL=https://api.moonshot.ai/v1  KIMI_API_KEY=<ваш ключ>  "
        "KIMI_MODEL=kimi-k2.6  (по умолчанию рассуждает; KIMI_THINKING=off выключает "
        "рассуждение)\n"
        "  свой vLLM/SGLang:   KIMI_BASE_URL=http://localhost:8000/v1  KIMI_API_KEY=EMPTY "
        "(подойдёт любой ключ)  KIMI_MODEL=moonshotai/Kimi-K2-Instruct-0905\n"
        "  Ollama:             KIMI_BASE_URL=http://localhost:11434/v1  KIMI_API_KEY=ollama  "
        "KIMI_MODEL=<имя из `ollama list`>",
    ),
    "qwen": Text(
        "  local vLLM/SGLang:  QWEN_BASE_URL=http://localhost:8000/v1  QWEN_API_KEY=EMPTY "
        "(any key works)  QWEN_MODEL=Qwen/Qwen2.5-7B-Instruct (lesson 05) or Qwen/Qwen3.5-4B "
        "(lesson 07)\n"
        "  Ollama:             QWEN_BASE_URL=http://localhost:11434/v1  QWEN_API_KEY=ollama  "
        "QWEN_MODEL=qwen2.5:7b",
        "  свой vLLM/SGLang:   QWEN_BASE_URL=http://localhost:8000/v1  QWEN_API_KEY=EMPTY "
        "(подойдёт любой ключ)  QWEN_MODEL=Qwen/Qwen2.5-7B-Instruct (урок 05) или "
        "Qwen/Qwen3.5-4B (урок 07)\n"
        "  Ollama:             QWEN_BASE_URL=http://localhost:11434/v1  QWEN_API_KEY=ollama  "
        "QWEN_MODEL=qwen2.5:7b",
    ),
}
THINKING_VARIABLE = "KIMI_THINKING"
"""`off` sends `thinking: {"type": "disabled"}` with every request that uses `conn.settings()`
(Moonshot models with a switch: kimi-k2.6, kimi-k2.5); unset or `on`: the platform's default."""
SAMPLING_NAMES = ("temperature", "top_p", "n")

_lock = threading.Lock()
_replay_server: ReplayServer | None = None
_record_proxies: dict[tuple[str, Path], RecordProxy] = {}


class LiveSettingsError(RuntimeError):
    """Live or record mode was asked for, but the endpoint settings are missing."""


@dataclass(frozen=True, repr=False)
class Connection:
    """Where a notebook sends its requests: endpoint, key and model, plus how they were chosen."""

    endpoint: str
    api_key: str
    model_name: str
    mode: str
    provider: str
    engine: str | None
    answers_from: str = field(default="", compare=False)

    def __repr__(self) -> str:
        """Deterministic and safe: the local port is hidden and the key never shown."""
        endpoint = self.endpoint
        if self.mode in ("replay", "record"):
            endpoint = re.sub(r"^(http://127\.0\.0\.1):\d+", r"\1:<port>", endpoint)
            endpoint = re.sub(r"/lessons/[^/]+", "", endpoint)  # the notebook's own name
        else:
            endpoint = _without_credentials(endpoint)
        return (
            f"Connection(mode={self.mode!r}, provider={self.provider!r}, engine={self.engine!r}, "
            f"model_name={self.model_name!r}, endpoint={endpoint!r})"
        )

    __str__ = __repr__

    def describe(self) -> str:
        """One line for a notebook's setup cell: mode, model, and where the answers come from."""
        return tr(
            f"{self.mode} mode: model {self.model_name}; {self.answers_from}",
            f"режим {self.mode}: модель {self.model_name}; {self.answers_from}",
        )

    def _repr_markdown_(self) -> str:
        """The same line in Jupyter."""
        return tr(
            f"**{self.mode}** mode: model `{self.model_name}`; {self.answers_from}",
            f"режим **{self.mode}**: модель `{self.model_name}`; {self.answers_from}",
        )

    def settings(self, *, thinking: bool | None = None, **sampling: Any) -> dict[str, Any]:
        """Extra arguments for `client.chat.completions.create(..., **settings)`.

        `sampling` (the guide's `temperature=0.3`) is kept, except on a Moonshot model whose
        platform documents temperature, top_p and n as "cannot be modified" (kimi-k2.6,
        kimi-k2.5): there it is left out, as the platform refuses other values. `thinking=False`
        (or `KIMI_THINKING=off`) turns a Moonshot model's thinking off with
        `extra_body={"thinking": {"type": "disabled"}}`; other models get nothing for it."""
        unknown = set(sampling) - set(SAMPLING_NAMES)
        if unknown:
            raise TypeError(
                f"settings() takes {', '.join(SAMPLING_NAMES)} and thinking, not "
                f"{', '.join(sorted(unknown))}"
            )
        model = self.model_name
        settings: dict[str, Any] = {} if model in LOCKED_SAMPLING_MODELS else dict(sampling)
        if thinking is None and self.provider == "kimi" and self.mode != "replay":
            chosen = os.environ.get(THINKING_VARIABLE, "").strip().lower()
            if chosen not in ("", "on", "off"):
                raise LiveSettingsError(
                    tr(
                        f"{THINKING_VARIABLE}={chosen!r}: use on (the platform's default) or off.",
                        f"{THINKING_VARIABLE}={chosen!r}: возможны on (как на платформе по "
                        "умолчанию) или off.",
                    )
                )
            thinking = None if chosen in ("", "on") else False
        if thinking is False and model in MOONSHOT_THINKING_MODELS:
            if model in ALWAYS_THINKING or model in REFUSES_DISABLED:
                raise LiveSettingsError(
                    tr(
                        f"{model} always thinks: it has no switch to turn thinking off. Use "
                        "KIMI_MODEL=kimi-k2.6 (or unset KIMI_THINKING).",
                        f"{model} рассуждает всегда: выключить рассуждение у неё нельзя. Возьмите "
                        "KIMI_MODEL=kimi-k2.6 (или уберите KIMI_THINKING).",
                    )
                )
            settings["extra_body"] = {"thinking": {"type": "disabled"}}
        return settings

    def http_client(self) -> DefaultHttpxClient:
        """A new HTTP client for `OpenAI(..., http_client=conn.http_client())`, with the SDK's
        defaults (`DefaultHttpxClient`). For a server on this machine (replay, record, a local
        live server) it ignores the proxy variables (`trust_env=False`), so a lab's HTTP_PROXY or
        a desktop's `all_proxy=socks://...` never applies and `os.environ` stays as it is; a
        remote endpoint is reached as the SDK would, through the environment's proxies. A new
        one on each call: `OpenAI.close()` (or `with OpenAI(...)`) closes the one it was given."""
        from openai import DefaultHttpxClient

        return DefaultHttpxClient(trust_env=not is_loopback(self.endpoint))

    def replay_only(self, what: str) -> bool:
        """True in replay mode. Live/record mode: print a one-line note and return False, so a
        demo that needs a recorded engine profile or a recorded answer is skipped, not broken."""
        if self.mode == "replay":
            return True
        print(
            tr(
                f"{self.mode} mode: skipped, {what} (replay mode only: unset LLM_MODE to see it).",
                f"режим {self.mode}: пропущено, {what} (только в режиме воспроизведения: уберите "
                "LLM_MODE, чтобы увидеть).",
            )
        )
        return False


def _without_credentials(url: str) -> str:
    """A URL with any `user:password@` part removed."""
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@", r"\1", url)


def current_mode() -> str:
    """The mode chosen by LLM_MODE (replay when unset)."""
    mode = os.environ.get("LLM_MODE", "").strip().lower() or "replay"
    if mode not in MODES:
        raise ValueError(
            f"LLM_MODE={os.environ.get('LLM_MODE')!r} is not a mode; use one of: "
            "replay (the default: recorded answers, no key, no network), live (a real endpoint "
            "from KIMI_*/QWEN_* variables), record (live, and write cassettes)"
        )
    return mode


def from_repo_root(value: str) -> Path:
    """A path from an environment variable; a relative one is taken from the repository root,
    not from the kernel's working directory (notebooks run in notebooks/en/ or notebooks/ru/)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path


def replay_cassettes() -> Path:
    """The cassettes replay serves: LLM_REPLAY_DIR (a file or folder) or data/recordings."""
    chosen = os.environ.get("LLM_REPLAY_DIR", "").strip()
    if not chosen:
        return RECORDINGS_DIR
    path = from_repo_root(chosen)
    if not path.exists():
        raise CassetteError(
            tr(
                f"LLM_REPLAY_DIR={chosen!r}: no cassette file or folder at {path} (a relative "
                "path is taken from the repository root, not from the notebook's folder).",
                f"LLM_REPLAY_DIR={chosen!r}: по пути {path} нет ни файла, ни папки с записями "
                "(относительный путь отсчитывается от корня репозитория, а не от папки ноутбука).",
            )
        )
    return path


def replay_server() -> ReplayServer:
    """The process's replay server, started on first use (thread-safe, once per kernel).

    `LLM_REPLAY_PACE=1` spaces streamed chunks at a real engine's speed (pacing.py), for class."""
    global _replay_server
    with _lock:
        if _replay_server is None:
            pace = os.environ.get("LLM_REPLAY_PACE", "").strip().lower() in ("1", "true", "yes")
            _replay_server = ReplayServer(replay_cassettes(), pace=pace).start()
        return _replay_server


def stop_servers() -> None:
    """Stop the replay server and record proxies of this process (connect() starts anew)."""
    global _replay_server
    with _lock:
        servers: list[ReplayServer | RecordProxy] = list(_record_proxies.values())
        if _replay_server is not None:
            servers.append(_replay_server)
        _replay_server = None
        _record_proxies.clear()
    for server in servers:
        server.stop()


def live_settings(provider: str) -> tuple[str, str, str]:
    """Base URL, key and model from `<PROVIDER>_BASE_URL`/`_API_KEY`/`_MODEL`, or a clear error."""
    names = tuple(f"{provider.upper()}_{part}" for part in ("BASE_URL", "API_KEY", "MODEL"))
    values = [os.environ.get(name, "").strip() for name in names]
    missing = [name for name, value in zip(names, values, strict=True) if not value]
    if missing:
        raise LiveSettingsError(
            tr(
                f"LLM_MODE={current_mode()} needs {', '.join(names[:2])} and {names[2]}; "
                f"not set: {', '.join(missing)}.\nExamples:\n{LIVE_EXAMPLES[provider]}\n"
                "Or unset LLM_MODE to replay the recorded answers (see README.md, section Modes).",
                f"Для LLM_MODE={current_mode()} нужны {', '.join(names[:2])} и {names[2]}; "
                f"не заданы: {', '.join(missing)}.\nПримеры:\n{LIVE_EXAMPLES[provider]}\n"
                "Или уберите LLM_MODE, чтобы воспроизводить записанные ответы (README.md, "
                "раздел Modes).",
            )
        )
    base_url, api_key, model = values
    return base_url.rstrip("/"), api_key, model


def _check_lesson(name: str) -> None:
    """A lesson name is a plain file name (it becomes a file name and a URL segment)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        raise ValueError(f"lesson must be a plain file name such as '02_sync_loop', not {name!r}")


def record_path(provider: str, lesson: str | None) -> Path:
    """Where record mode writes: $LLM_RECORD_DIR/<lesson or provider>.json (recordings-new/)."""
    name = lesson or provider
    _check_lesson(name)
    folder = os.environ.get("LLM_RECORD_DIR", "").strip()
    return (from_repo_root(folder) if folder else REPO_ROOT / "recordings-new") / f"{name}.json"


# The proxy schemes the SDK's HTTP client (httpx) accepts; SOCKS 5 also needs `socksio`.
PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")  # what httpx reads, in any case


def unusable_proxies() -> dict[str, str]:
    """The proxy variables the SDK's client would refuse at `OpenAI(...)`: {name: value}.

    httpx builds a transport for every proxy variable when a client is created, even for hosts
    that NO_PROXY exempts, so `all_proxy=socks://...` (as desktops export it) fails with
    "Unknown scheme for proxy URL", and `socks5://` without `socksio` with an ImportError."""
    has_socksio = importlib.util.find_spec("socksio") is not None
    found = {}
    for name, value in os.environ.items():
        if name.lower() not in PROXY_VARIABLES or not value.strip():
            continue
        scheme = value.split("://", 1)[0].lower() if "://" in value else "http"
        if scheme not in PROXY_SCHEMES or (scheme.startswith("socks") and not has_socksio):
            found[name] = value
    return found


def check_proxies_for_live(base_url: str) -> None:
    """Live or record mode to a remote endpoint: a proxy the client cannot use is a clear error,
    not a traceback from inside httpx. Says what to install or what to unset."""
    found = unusable_proxies()
    if not found:
        return
    shown = ", ".join(f"{name}={_without_credentials(value)}" for name, value in found.items())
    unset = " ".join(sorted(found))
    raise LiveSettingsError(
        tr(
            f"The OpenAI client cannot use the proxy in {shown} to reach "
            f"{upstream_host(base_url)}: it accepts http://, https://, socks5:// and socks5h:// "
            "proxies, SOCKS only with the `socksio` package. Either\n"
            "  - install it: .venv/bin/pip install socksio (and write a socks:// address as "
            "socks5h://host:port if your proxy speaks SOCKS 5, as ssh -D and most desktop proxy "
            "tools do), then restart the kernel; or\n"
            f"  - unset it before starting Jupyter: unset {unset} (PowerShell: "
            "Remove-Item Env:ALL_PROXY), if the endpoint is reachable without it.",
            f"Клиент OpenAI не может использовать прокси из {shown}, чтобы достучаться до "
            f"{upstream_host(base_url)}: он принимает прокси http://, https://, socks5:// и "
            "socks5h://, а SOCKS — только с пакетом `socksio`. Либо\n"
            "  - установите его: .venv/bin/pip install socksio (и запишите адрес socks:// как "
            "socks5h://host:port, если прокси говорит на SOCKS 5, как ssh -D и большинство "
            "программ-прокси на рабочем столе), затем перезапустите ядро; либо\n"
            f"  - уберите переменную перед запуском Jupyter: unset {unset} (PowerShell: "
            "Remove-Item Env:ALL_PROXY), если сервер доступен без прокси.",
        )
    )


def notebook_lesson() -> str | None:
    """The lesson of the running notebook (JupyterLab names it in JPY_SESSION_NAME), if known."""
    session = os.environ.get("JPY_SESSION_NAME", "").strip()
    stem = Path(session).stem if session else ""
    return stem if LESSON_NAME.fullmatch(stem) else None


def _record_proxy(upstream: str, out: Path, api_key: str) -> RecordProxy:
    """The process's record proxy for this upstream and file, started on first use."""
    key = (upstream, out.resolve())
    with _lock:
        proxy = _record_proxies.get(key)
        if proxy is None:
            proxy = _record_proxies[key] = RecordProxy(upstream, out, secrets=[api_key]).start()
        else:  # a configured key is always blanked
            proxy.secrets = proxy.secrets | {api_key}  # rebound, not mutated: handlers read it
        return proxy


def connect(
    provider: str = "kimi", engine: str | None = None, *, lesson: str | None = None
) -> Connection:
    """Endpoint, key and model for `provider` in the mode LLM_MODE selects."""
    if provider not in PROVIDERS:
        raise ValueError(
            f"provider must be one of {', '.join(map(repr, PROVIDERS))}, not {provider!r}"
        )
    mode = current_mode()
    if mode == "replay":
        engine = engine or DEFAULT_ENGINE[provider]
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        base_url, api_key, model = "", REPLAY_API_KEY, replay_model(provider, engine)
    else:
        engine = None
        base_url, api_key, model = live_settings(provider)
    if mode != "replay" and not is_loopback(base_url):  # os.environ is read, never changed
        check_proxies_for_live(base_url)
    if mode == "replay":
        server = replay_server()
        prefix = "" if engine == DEFAULT_ENGINE[provider] else f"/engines/{engine}"
        scope = lesson or notebook_lesson()
        if scope:
            _check_lesson(scope)
            prefix = f"/lessons/{scope}{prefix}"
        endpoint = f"{server.url}{prefix}/v1"
        answers_from = tr(
            f"answers replayed from recordings (engine profile {engine}) by a local server; "
            "no network, no key",
            f"ответы воспроизводятся из записей (профиль движка {engine}) локальным сервером; "
            "без сети и без ключа",
        )
    elif mode == "live":
        endpoint = base_url
        answers_from = tr(
            f"answers from the live endpoint at {upstream_host(base_url)}",
            f"ответы от настоящего сервера {upstream_host(base_url)}",
        )
    else:
        out = record_path(provider, lesson)
        endpoint = f"{_record_proxy(base_url, out, api_key).url}/v1"
        answers_from = tr(
            f"answers from the live endpoint at {upstream_host(base_url)}, recorded to {out.name}",
            f"ответы от настоящего сервера {upstream_host(base_url)}, запись в {out.name}",
        )
    return Connection(
        endpoint=endpoint,
        api_key=api_key,
        model_name=model,
        mode=mode,
        provider=provider,
        engine=engine,
        answers_from=answers_from,
    )
