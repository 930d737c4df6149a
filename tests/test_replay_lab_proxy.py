"""Replay mode in a lab network: proxy variables set, loopback must not go through the proxy.

University labs often set HTTP_PROXY/HTTPS_PROXY for the whole session. The openai SDK (its httpx
fork) and `requests` both honour NO_PROXY; connect() adds 127.0.0.1 and localhost to it. The proxy
here is a dead loopback port: any request sent through it fails.
"""

from __future__ import annotations

import pytest
from test_live_mode import execute, problems

from helpers.paths import NOTEBOOKS_DIR

DEAD_PROXY = "http://127.0.0.1:9"  # loopback only: nothing listens on the discard port here
LESSONS = ("00_start", "04_manual_parsing")  # the SDK's first request; `requests.post`


def test_lessons_run_in_replay_mode_behind_a_dead_proxy() -> None:
    env = {
        name: DEAD_PROXY
        for name in (
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        )
    }
    with pytest.MonkeyPatch.context() as patch:
        for name in ("NO_PROXY", "no_proxy", "LLM_MODE", "LLM_REPLAY_DIR"):
            patch.delenv(name, raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        runs = {lesson: execute(NOTEBOOKS_DIR / "en" / f"{lesson}.ipynb") for lesson in LESSONS}
    for lesson, nb in runs.items():
        assert problems(nb) == [], lesson
