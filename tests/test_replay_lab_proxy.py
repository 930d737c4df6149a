"""Replay mode in a lab network: proxy variables set, loopback must not go through the proxy.

University labs often set HTTP_PROXY/HTTPS_PROXY for the whole session. The openai SDK (its httpx
fork) and `requests` both honour NO_PROXY; connect() adds 127.0.0.1 and localhost to it. The proxy
here is a dead loopback port: any request sent through it fails.
"""

from __future__ import annotations

import pytest
import scripts_support
from test_live_mode import execute, problems

from helpers.paths import NOTEBOOKS_DIR

DEAD_PROXY = "http://127.0.0.1:9"  # loopback only: nothing listens on the discard port here
# One lesson that sends requests through both HTTP stacks in replay mode: the openai SDK (the
# `no_parser` demo) and `requests.post` to /completions.
LESSON = "04_manual_parsing"


def test_the_lesson_uses_both_http_stacks() -> None:
    code = "\n".join(scripts_support.lesson_code(LESSON))
    assert "requests.post(" in code and ".chat.completions.create(" in code, (
        f"{LESSON} no longer sends through both the SDK and requests: pick lessons that do"
    )


def test_a_lesson_runs_in_replay_mode_behind_a_dead_proxy() -> None:
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
        nb = execute(NOTEBOOKS_DIR / "en" / f"{LESSON}.ipynb")
    assert problems(nb) == []
    shown = "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "finish_reason:" in shown  # the SDK demo ran (a failing request would be an error)
