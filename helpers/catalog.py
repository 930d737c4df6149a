"""One table of the series' providers, model names, engines, modes and fixed strings.

The replay server, `connect()`, the synthesizer and the tests read these from here, so a model
name or an engine is written once. (Engine *behaviour* lives in `helpers.replay.profiles`.)
"""

from __future__ import annotations

MODES: tuple[str, ...] = ("replay", "live", "record")
"""`LLM_MODE` values; `replay` is the default."""

PROVIDERS: tuple[str, ...] = ("kimi", "qwen")
"""What `connect(provider)` accepts."""

MODEL_NAMES: dict[str, str] = {
    "kimi": "moonshotai/Kimi-K2-Instruct",
    "qwen": "Qwen/Qwen2.5-7B-Instruct",
}
"""The model name each provider answers as in replay mode (the cassettes record it)."""

DEFAULT_ENGINES: dict[str, str] = {"kimi": "moonshot", "qwen": "vllm_hermes"}
"""The engine a provider's replay endpoint `/v1` imitates; others live at `/engines/<name>/v1`."""

REPLAY_API_KEY = "replay-needs-no-key"
"""The key `connect()` hands out in replay mode: visibly not a secret, safe in outputs."""

TOKENIZERS: dict[str, str] = {"kimi": "kimi-k2", "qwen": "qwen2.5"}
"""The offline tokenizer (folder in `data/tokenizers/`) each provider's raw format uses."""
