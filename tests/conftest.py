"""Fixtures shared by the replay tests; the hypothesis profile is chosen before any test imports."""

from __future__ import annotations

from collections.abc import Iterator

import hypothesis_profiles  # noqa: F401  (registers and loads the dev/ci profile)
import pytest
from test_replay_fixtures import interactions, write_cassette

from helpers.replay import ReplayServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayServer]:
    """A replay server over the standard test cassette, one per test module."""
    folder = tmp_path_factory.mktemp("cassettes")
    write_cassette(folder, "lesson", interactions())
    with ReplayServer(folder) as running:
        yield running
