"""One table of names (`helpers.catalog`): the modules that keep a copy agree with it."""

from __future__ import annotations

import pytest

from helpers import catalog, templates
from helpers.replay import modes, profiles


def test_every_provider_has_a_default_engine_that_serves_it():
    assert set(catalog.DEFAULT_ENGINES) == set(catalog.PROVIDERS) == set(catalog.MODEL_NAMES)
    for provider, engine in catalog.DEFAULT_ENGINES.items():
        assert provider in profiles.PROFILES[engine].providers
        assert profiles.get_profile(provider, None).base_path(provider) == "/v1"
    for profile in profiles.PROFILES.values():
        assert set(profile.providers) <= set(catalog.PROVIDERS), profile.name


def test_every_provider_tokenizer_exists():
    assert set(catalog.TOKENIZERS) == set(catalog.PROVIDERS)
    assert set(catalog.TOKENIZERS.values()) <= set(templates.TOKENIZER_NAMES)


@pytest.mark.parametrize(
    ("provider", "names"),
    [
        ("kimi", ("KIMI_BASE_URL", "KIMI_API_KEY", "KIMI_MODEL")),
        ("qwen", ("QWEN_BASE_URL", "QWEN_API_KEY", "QWEN_MODEL")),
    ],
)
def test_live_mode_reads_the_documented_variables(provider, names, monkeypatch):
    for name in names:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(modes.LiveSettingsError) as error:
        modes.live_settings(provider)
    assert all(name in str(error.value) for name in names)
    for name, value in zip(names, ("http://127.0.0.1:9/v1/", "k", "m"), strict=True):
        monkeypatch.setenv(name, value)
    assert modes.live_settings(provider) == ("http://127.0.0.1:9/v1", "k", "m")


@pytest.mark.parametrize("provider", catalog.PROVIDERS)
def test_replay_connection_uses_the_catalog(provider, monkeypatch):
    monkeypatch.setenv("LLM_MODE", "replay")
    conn = modes.connect(provider)
    assert conn.model_name == catalog.MODEL_NAMES[provider]
    assert conn.api_key == catalog.REPLAY_API_KEY
    assert conn.engine == catalog.DEFAULT_ENGINES[provider]
