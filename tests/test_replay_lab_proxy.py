"""Replay mode in a lab network: proxy variables set, loopback must not go through the proxy.

University labs often set HTTP_PROXY/HTTPS_PROXY for the whole session, and nothing adds the
loopback to NO_PROXY: the lessons' HTTP clients (`conn.http_client()`, for the SDK and for raw
posts) ignore proxy variables for a server on this machine. The proxy here is a dead loopback
port: any request sent through it fails.
"""

from __future__ import annotations

import pytest
import scripts_support
from test_live_mode import execute, problems

from helpers.paths import NOTEBOOKS_DIR

DEAD_PROXY = "http://127.0.0.1:9"  # loopback only: nothing listens on the discard port here
# One lesson that sends requests both ways in replay mode: through the openai SDK (the
# `no_parser` demo) and as raw `http_client.post` to /completions; and the lesson whose MCP client
# talks HTTP to a server on this machine.
LESSON = "04_manual_parsing"
MCP_LESSON = "10_mcp_tools"


def test_the_lesson_sends_both_ways() -> None:
    code = "\n".join(scripts_support.lesson_code(LESSON))
    assert "http_client.post(" in code and ".chat.completions.create(" in code, (
        f"{LESSON} no longer sends through both the SDK and a raw post: pick lessons that do"
    )
    assert "serve_http(" in "\n".join(scripts_support.lesson_code(MCP_LESSON))


@pytest.mark.parametrize("lesson", [LESSON, MCP_LESSON])
def test_a_lesson_runs_in_replay_mode_behind_a_dead_proxy(lesson: str) -> None:
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
        nb = execute(NOTEBOOKS_DIR / "en" / f"{lesson}.ipynb")
    assert problems(nb) == []
    shown = "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    if lesson == LESSON:
        assert "finish_reason:" in shown  # the SDK demo ran (a failing request would be an error)
