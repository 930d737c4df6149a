"""Captures of real engines, kept apart from what synthesis writes.

`data/captures/<engine>.json` holds exchanges recorded from a real server by a capture script
(`scripts/capture_llamacpp.py`). Its `cassettes` section maps a lesson to the exchanges that
lesson's replay serves; `python -m helpers.replay synthesize` appends them to the lesson's
cassette as they are and names them in `meta.captured`, so re-synthesizing never overwrites a
capture. Its `observations` section keeps exchanges no lesson requests (server errors, a reply
cut by `max_tokens`, the second round of a tool loop): the docs and tests cite them, replay does
not serve them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.paths import REPO_ROOT
from helpers.replay.cassette import CassetteError, validate_cassette

CAPTURES_DIR = REPO_ROOT / "data" / "captures"
# Appended to a cassette's `meta.source` when captures are merged into it.
CAPTURED_NOTE = "; except the exchanges listed in `captured`, which are captures of a real server"
META_KEYS = (
    "source",
    "engine",
    "software",
    "commit",
    "build",
    "server_command",
    "model",
    "command",
    "date",
)


def capture_files(folder: Path = CAPTURES_DIR) -> list[Path]:
    """The capture files, in name order."""
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def load_capture(path: Path) -> dict[str, Any]:
    """A capture file, checked: its metadata, and each section as a valid cassette would be."""
    data = json.loads(path.read_text(encoding="utf-8"))
    meta = data.get("meta", {})
    missing = [key for key in META_KEYS if not isinstance(meta.get(key), str) or not meta[key]]
    if missing:
        raise CassetteError(f"{path.name}: meta needs {', '.join(missing)}")
    parts = [
        (notebook, f"cassettes.{notebook}", items)
        for notebook, items in data.get("cassettes", {}).items()
    ]
    parts.append(("-", "observations", data.get("observations") or []))
    for notebook, where, items in parts:
        cassette_meta = {"notebook": notebook, "source": meta["source"], "format": 1}
        validate_cassette({"meta": cassette_meta, "interactions": items}, f"{path.name} {where}")
    return data


def for_notebook(notebook: str, folder: Path = CAPTURES_DIR) -> list[tuple[dict, list[dict]]]:
    """(capture metadata, exchanges) for each capture file that serves `notebook`."""
    found = []
    for path in capture_files(folder):
        data = load_capture(path)
        items = data.get("cassettes", {}).get(notebook)
        if items:
            found.append(({"file": f"data/captures/{path.name}", **data["meta"]}, items))
    return found


def merge_into(cassette: dict[str, Any], folder: Path = CAPTURES_DIR) -> dict[str, Any]:
    """`cassette` with the captured exchanges for its notebook appended (as they are) and
    named in `meta.captured`; `meta.source` then says the cassette is partly captured."""
    captured = for_notebook(cassette["meta"]["notebook"], folder)
    if not captured:
        return cassette
    meta = dict(cassette["meta"])
    notes = []
    interactions = list(cassette["interactions"])
    for capture_meta, items in captured:
        notes.append({**capture_meta, "labels": [item["label"] for item in items]})
        interactions.extend(items)
    meta["source"] += CAPTURED_NOTE
    meta["captured"] = notes
    return {"meta": meta, "interactions": interactions}


def provenance(engine: str, folder: Path = CAPTURES_DIR) -> str:
    """One line for a lesson cell: where the replayed answers of `engine` come from."""
    from helpers.i18n import tr

    path = folder / f"{engine}.json"
    if path.is_file():
        meta = load_capture(path)["meta"]
        software, commit, date = meta["software"], meta["commit"], meta["date"]
        return tr(
            f"captured from {software} {commit} (tiny steered model, {date})",
            f"записано с настоящего {software} {commit} (крошечная модель с подобранными весами, "
            f"{date})",
        )
    name = ENGINE_NAMES.get(engine, engine)
    return tr(
        f"synthesized from the documented format of {name} (not a capture)",
        f"синтезировано по документированному формату {name} (не запись с сервера)",
    )


ENGINE_NAMES = {"ollama": "Ollama", "llamacpp": "llama.cpp", "vllm_qwen3_coder": "vLLM"}
