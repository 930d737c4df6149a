"""Fixtures shared by the replay tests; the hypothesis profile is chosen before any test imports."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import hypothesis_profiles  # noqa: F401  (registers and loads the dev/ci profile)
import pytest
from test_replay_fixtures import interactions, write_cassette

from helpers.replay import ReplayServer


def _share_one_ssl_context() -> None:
    """Every OpenAI client builds a fresh SSL context, loading the system's CA bundle (~25 ms),
    though the tests only speak plain HTTP to 127.0.0.1: ~120 clients cost 3 s of the unit loop.
    In the test processes, clients share one context (kernels and real use are unchanged)."""
    try:
        import httpcore2
    except ImportError:  # another HTTP stack under openai: nothing to share
        return
    if hasattr(httpcore2, "default_ssl_context"):
        httpcore2.default_ssl_context = functools.cache(httpcore2.default_ssl_context)


_share_one_ssl_context()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayServer]:
    """A replay server over the standard test cassette, one per test module."""
    folder = tmp_path_factory.mktemp("cassettes")
    write_cassette(folder, "lesson", interactions())
    with ReplayServer(folder) as running:
        yield running
