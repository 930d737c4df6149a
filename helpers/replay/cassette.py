"""Cassette files: load, check and save recorded exchanges (format in data/recordings/README.md)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1


class CassetteError(ValueError):
    """A cassette file is unreadable or does not follow the documented format."""


@dataclass(frozen=True)
class Interaction:
    """One recorded request and the response the server gives back for it."""

    request: dict[str, Any]
    response: dict[str, Any]
    cassette: str  # file name only (never an absolute path): it appears in error messages
    index: int
    label: str | None = None

    @property
    def name(self) -> str:
        """How messages refer to it: `'label' in file.json` (or `#index` without a label)."""
        shown = repr(self.label) if self.label else f"#{self.index}"
        return f"{shown} in {self.cassette}"


@dataclass(frozen=True)
class Cassette:
    """A loaded cassette file: its metadata and interactions."""

    path: Path
    meta: dict[str, Any]
    interactions: list[Interaction]


def _check_sse(sse: Any, where: str) -> list[str]:
    """Problems with a recorded event stream."""
    if not isinstance(sse, list) or not sse:
        return [f"{where}.sse must be a non-empty list of events"]
    problems = []
    for j, event in enumerate(sse):
        at = f"{where}.sse[{j}]"
        if not isinstance(event, dict) or "data" not in event:
            problems.append(f"{at} must be an object with a 'data' key")
            continue
        if not isinstance(event["data"], dict | list | str):
            problems.append(f"{at}.data must be an object or a string such as '[DONE]'")
        delay = event.get("delay_ms", 0)
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            problems.append(f"{at}.delay_ms must be a number >= 0")
        unknown = set(event) - {"data", "delay_ms"}
        if unknown:
            problems.append(f"{at} has unknown keys {sorted(unknown)}")
    return problems


def _check_interaction(item: Any, where: str) -> list[str]:
    """Problems with one interaction."""
    if not isinstance(item, dict):
        return [f"{where} must be an object"]
    problems = []
    unknown = set(item) - {"label", "request", "response"}
    if unknown:
        problems.append(f"{where} has unknown keys {sorted(unknown)}")
    if "label" in item and not isinstance(item["label"], str):
        problems.append(f"{where}.label must be a string")
    request = item.get("request")
    if not isinstance(request, dict):
        problems.append(f"{where}.request must be an object")
    else:
        if request.get("method", "POST") != "POST":
            problems.append(f"{where}.request.method must be 'POST'")
        path = request.get("path")
        if not isinstance(path, str) or not path.startswith("/"):
            problems.append(f"{where}.request.path must be a string starting with '/'")
        if not isinstance(request.get("body"), dict):
            problems.append(f"{where}.request.body must be an object (the JSON as sent)")
    response = item.get("response")
    if not isinstance(response, dict):
        problems.append(f"{where}.response must be an object")
        return problems
    status = response.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        problems.append(f"{where}.response.status must be an HTTP status code")
    headers = response.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        problems.append(f"{where}.response.headers must map strings to strings")
    has_body, has_sse = "body" in response, "sse" in response
    if has_body == has_sse:
        problems.append(f"{where}.response needs exactly one of 'body' or 'sse'")
    elif has_sse:
        problems.extend(_check_sse(response["sse"], f"{where}.response"))
    unknown = set(response) - {"status", "headers", "body", "sse"}
    if unknown:
        problems.append(f"{where}.response has unknown keys {sorted(unknown)}")
    return problems


def validate_cassette(data: Any, name: str = "cassette") -> None:
    """Raise CassetteError listing every way `data` departs from the cassette format."""
    if not isinstance(data, dict):
        raise CassetteError(
            f"{name}: the top level must be an object with 'meta' and 'interactions'"
        )
    problems = []
    meta = data.get("meta")
    if not isinstance(meta, dict):
        problems.append("meta must be an object")
    else:
        for key in ("notebook", "source"):
            if not isinstance(meta.get(key), str) or not meta.get(key):
                problems.append(f"meta.{key} must be a non-empty string")
        if meta.get("format") != FORMAT_VERSION:
            problems.append(f"meta.format must be {FORMAT_VERSION}")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        problems.append("interactions must be a list")
    else:
        for i, item in enumerate(interactions):
            problems.extend(_check_interaction(item, f"interactions[{i}]"))
    unknown = set(data) - {"meta", "interactions"}
    if unknown:
        problems.append(f"unknown top-level keys {sorted(unknown)}")
    if problems:
        shown = "; ".join(problems[:8])
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise CassetteError(f"{name} is not a valid cassette: {shown}{more}")


def load_cassette(path: str | Path) -> Cassette:
    """Read and check one cassette file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path.name}: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(
            f"{path.name} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from exc
    validate_cassette(data, path.name)
    interactions = [
        Interaction(
            request={"method": "POST", **item["request"]},
            response=item["response"],
            cassette=path.name,
            index=i,
            label=item.get("label"),
        )
        for i, item in enumerate(data["interactions"])
    ]
    return Cassette(path=path, meta=data["meta"], interactions=interactions)


def cassette_files(source: str | Path | Iterable[str | Path]) -> list[Path]:
    """The cassette files named by a file, a folder (its *.json, sorted) or a list of either."""
    sources: Sequence[str | Path] = [source] if isinstance(source, str | Path) else list(source)
    files: list[Path] = []
    for item in sources:
        path = Path(item)
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise CassetteError(f"no cassette file or folder at {path}")
    return files


def load_cassettes(source: str | Path | Iterable[str | Path]) -> list[Cassette]:
    """Load every cassette named by a file, a folder or a list of either."""
    return [load_cassette(path) for path in cassette_files(source)]


def dump_cassette(data: dict[str, Any]) -> str:
    """A cassette's canonical text: 2-space indent, UTF-8 and key order kept, final newline
    (NaN and Infinity raise ValueError: JSON has no such numbers)."""
    meta = data.get("meta") if isinstance(data, dict) else None
    name = meta.get("notebook") if isinstance(meta, dict) else None
    validate_cassette(data, str(name or "cassette"))
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def save_cassette(path: str | Path, data: dict[str, Any]) -> Path:
    """Check and write a cassette atomically: a unique temporary file in the same folder (never a
    fixed name a planted symlink could redirect), then os.replace, so a reader never sees half."""
    path = Path(path)
    text = dump_cassette(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
