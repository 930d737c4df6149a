"""A recording that no notebook run requests fails the build (issue 18).

The replay server counts the requests it answers and, when `LLM_REPLAY_SERVED_LOG` names a file,
logs them there; `scripts/nbbuild.py` runs the lessons with that log and fails naming every
recording of their cassettes that no run asked for. Tested on a two-round cassette of our own,
requested round by round through the real server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import requests
from scripts_support import nbbuild

from helpers import paths
from helpers.replay.cassette import load_cassette, save_cassette
from helpers.replay.matching import canonical_request, request_key
from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import WEATHER_TOOLS, user, weather_calls
from helpers.replay.server import SERVED_LOG_VARIABLE, ReplayServer, served_id
from helpers.replay.synthesize import build_cassette, unused_recordings

LESSON = "99_demo"
ROUND_2 = f"'demo/vllm/round-2' in {LESSON}.json"


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """A cassette with two interactions: a call for Beijing, then the answer."""
    scenario = Scenario(
        name="demo",
        provider="kimi",
        engine="vllm",
        messages=user("Weather in Beijing?"),
        tools=WEATHER_TOOLS,
        turns=[weather_calls("Beijing"), Turn(content="Sunny.")],
    )
    path = tmp_path / "recordings" / f"{LESSON}.json"
    save_cassette(path, build_cassette(LESSON, "n99_demo", [scenario]))
    return path


def ask(server: ReplayServer, cassette: Path, index: int) -> dict[str, Any]:
    """Send the `index`-th recorded request of `cassette` to the server, as a client would."""
    request = load_cassette(cassette).interactions[index].request
    response = requests.post(server.url + request["path"], json=request["body"], timeout=10)
    assert response.status_code == 200, response.text
    return request


def test_the_server_counts_and_logs_what_it_answers(
    cassette: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "served.txt"
    monkeypatch.setenv(SERVED_LOG_VARIABLE, str(log))
    with ReplayServer(cassette) as server:
        first = ask(server, cassette, 0)
        ask(server, cassette, 0)
        key = served_id(request_key(canonical_request(first["path"], first["body"])))
        assert server.served == {key: 2}
        assert log.read_text(encoding="utf-8").split() == [key, key]
        assert unused_recordings(set(log.read_text().split()), [cassette]) == [ROUND_2]
        ask(server, cassette, 1)
        assert unused_recordings(set(log.read_text().split()), [cassette]) == []
        requests.post(server.url + "/v1/chat/completions", json={"model": "x"}, timeout=10)
    assert len(log.read_text().split()) == 3  # a request without a recording is not logged


def test_without_the_variable_nothing_is_written(
    cassette: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SERVED_LOG_VARIABLE, raising=False)
    with ReplayServer(cassette) as server:
        ask(server, cassette, 0)
        assert sum(server.served.values()) == 1
    assert list(tmp_path.glob("*.txt")) == []


@pytest.mark.parametrize("rounds", [1, 2])
def test_nbbuild_fails_naming_the_recordings_no_run_requested(
    rounds: int, cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nbbuild` with its notebook run replaced by a client that asks for `rounds` rounds, in
    this process (a kernel would inherit the log variable the same way)."""
    script = nbbuild()
    monkeypatch.setattr(paths, "RECORDINGS_DIR", cassette.parent)
    built = []

    def run_lesson(name: str, run: bool, renumber: bool = False) -> None:
        built.append((name, run))
        with ReplayServer(cassette) as server:
            for index in range(rounds):
                ask(server, cassette, index)

    monkeypatch.setattr(script, "build", run_lesson)
    if rounds == 1:
        with pytest.raises(SystemExit, match=f"no notebook run requested.*\n  {ROUND_2}$"):
            script.main([LESSON])
    else:
        script.main([LESSON])
    assert built == [(LESSON, True)]
    assert SERVED_LOG_VARIABLE not in os.environ
