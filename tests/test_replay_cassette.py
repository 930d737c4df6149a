"""The cassette format: loading, checking, saving, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import requests
from test_replay_fixtures import MODEL, cassette, interactions, write_cassette

from helpers.paths import REPO_ROOT
from helpers.replay import (
    CassetteError,
    dump_cassette,
    load_cassette,
    load_cassettes,
    save_cassette,
    validate_cassette,
)
from helpers.replay.__main__ import build_parser, main


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    """A saved cassette loads back with labels, file name and defaults."""
    path = write_cassette(tmp_path, "02_sync_loop", interactions())
    loaded = load_cassette(path)
    assert loaded.meta["notebook"] == "02_sync_loop"
    first = loaded.interactions[0]
    assert first.cassette == "02_sync_loop.json"
    assert first.name == "'weather/round-1' in 02_sync_loop.json"
    assert first.request["method"] == "POST"


def test_dump_is_stable_and_readable() -> None:
    """Same data, same text: 2-space indent, UTF-8 kept, final newline."""
    data = cassette([{**interactions()[0], "label": "погода"}])
    text = dump_cassette(data)
    assert text == dump_cassette(json.loads(text))
    assert text.endswith("}\n") and "погода" in text and '\n  "meta": {' in text


def test_unlabelled_interaction_is_named_by_index(tmp_path: Path) -> None:
    """Without a label, messages use the interaction's index."""
    item = interactions()[0]
    del item["label"]
    loaded = load_cassette(write_cassette(tmp_path, "x", [item]))
    assert loaded.interactions[0].name == "#0 in x.json"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("meta"), "meta must be an object"),
        (lambda d: d["meta"].update(format=2), "meta.format must be 1"),
        (lambda d: d["meta"].pop("source"), "meta.source must be a non-empty string"),
        (lambda d: d.update(interactions={}), "interactions must be a list"),
        (lambda d: d["interactions"][0]["request"].update(path="v1/x"), "request.path"),
        (lambda d: d["interactions"][0]["request"].update(method="GET"), "request.method"),
        (lambda d: d["interactions"][0]["request"].update(body="{}"), "request.body"),
        (lambda d: d["interactions"][0]["response"].update(status="200"), "response.status"),
        (
            lambda d: d["interactions"][0]["response"].update(sse=[]),
            "exactly one of 'body' or 'sse'",
        ),
        (lambda d: d["interactions"][2]["response"].update(sse=[]), "sse must be a non-empty"),
        (
            lambda d: d["interactions"][2]["response"]["sse"][0].update(delay_ms=-1),
            "delay_ms must be a number >= 0",
        ),
        (lambda d: d["interactions"][0].update(extra=1), "unknown keys ['extra']"),
        (
            lambda d: d["interactions"][0]["response"].update(headers={"a": 1}),
            "headers must map strings to strings",
        ),
    ],
)
def test_validation_names_the_problem(change: Any, problem: str) -> None:
    """Each departure from the format is reported with where it is."""
    data = cassette(interactions())
    change(data)
    with pytest.raises(CassetteError) as caught:
        validate_cassette(data, "bad.json")
    assert problem in str(caught.value)
    assert str(caught.value).startswith("bad.json is not a valid cassette")


def test_load_errors_are_clear(tmp_path: Path) -> None:
    """Broken JSON and missing files fail with the file name, not a traceback of json."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"meta": ', encoding="utf-8")
    with pytest.raises(CassetteError, match=r"broken.json is not valid JSON \(line 1"):
        load_cassette(broken)
    with pytest.raises(CassetteError, match="no cassette file or folder"):
        load_cassettes(tmp_path / "missing")


def test_folder_loads_json_files_in_name_order(tmp_path: Path) -> None:
    """A folder means its *.json files, sorted; other files are ignored."""
    write_cassette(tmp_path, "b", interactions()[1:2])
    write_cassette(tmp_path, "a", interactions()[:1])
    (tmp_path / "README.md").write_text("# notes", encoding="utf-8")
    assert [c.path.name for c in load_cassettes(tmp_path)] == ["a.json", "b.json"]
    assert len(load_cassettes([tmp_path / "a.json", tmp_path / "b.json"])) == 2


def test_save_refuses_invalid_data(tmp_path: Path) -> None:
    """save_cassette checks before writing."""
    with pytest.raises(CassetteError):
        save_cassette(tmp_path / "x.json", {"meta": {}, "interactions": []})
    assert not (tmp_path / "x.json").exists()


def test_cli_synthesize_delegates(monkeypatch: pytest.MonkeyPatch) -> None:
    """`synthesize` passes its arguments to helpers.replay.synthesize.main."""
    calls: list[list[str]] = []
    fake = types.ModuleType("helpers.replay.synthesize")

    def fake_main(argv: list[str] | None = None) -> int:
        calls.append(list(argv or []))
        return 3

    fake.main = fake_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "helpers.replay.synthesize", fake)
    assert main(["synthesize", "--check", "--out", "x"]) == 3
    assert calls == [["--check", "--out", "x"]]


def test_cli_record_requires_upstream_and_out(capsys: pytest.CaptureFixture[str]) -> None:
    """`record` without --upstream/--out is a usage error."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["record", "--out", "x.json"])
    assert "--upstream" in capsys.readouterr().err


def test_cli_serve_runs_on_loopback(tmp_path: Path) -> None:
    """`python -m helpers.replay serve --cassettes PATH` serves them on 127.0.0.1."""
    write_cassette(tmp_path, "lesson", interactions())
    proc = subprocess.Popen(
        [sys.executable, "-m", "helpers.replay", "serve", "--cassettes", str(tmp_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "Replaying 6 interactions from 1 cassettes at http://127.0.0.1:" in line
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        listed = requests.get(f"{url}/models", timeout=10).json()
        assert [m["id"] for m in listed["data"]] == [MODEL]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def test_import_starts_nothing() -> None:
    """Importing helpers.replay starts no thread and changes no environment variable."""
    code = (
        "import os, threading; before = dict(os.environ); import helpers.replay, "
        "helpers.replay.__main__; assert threading.active_count() == 1, threading.enumerate(); "
        "assert dict(os.environ) == before; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "ok", result.stderr
