"""The replay server and record proxy probes (bench/probes_server.py), quick size: none may
report a crash or a data loss. Each probe can fail: bench/README.md names the bug it caught."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from probes import run_probe  # noqa: E402
from probes_server import PROBES  # noqa: E402


@pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
def test_probe_finds_no_crash_and_no_loss(probe) -> None:  # type: ignore[no-untyped-def]
    outcome, _ = run_probe(probe, quick=True)
    lines = [f"crash: {line}" for line in outcome.crashes] + [
        f"loss: {line}" for line in outcome.losses
    ]
    assert outcome.runs > 0, f"{probe.name} tried nothing"
    assert not lines, f"{probe.name}:\n" + "\n".join(lines)
