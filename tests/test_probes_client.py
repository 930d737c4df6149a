"""The client-side reliability probes (bench/probes_client.py), quick sizes: 0 crashes, 0 losses.

Each probe throws generated input at the stream parsers, the accumulator or the tool loop; a
crash or a data loss it reports is printed in the failure message, one line each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:  # as `python bench/probes.py` has it: probe modules import `probes`
    sys.path.insert(0, str(BENCH))

import probes  # noqa: E402
import probes_client  # noqa: E402

# The size probe parses 10x its input on purpose (~40 s on a quiet machine): the kernel ceiling.
pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("probe", probes_client.PROBES, ids=lambda p: f"{p.group}: {p.name}")
def test_probe_reports_no_crash_and_no_loss(probe):
    outcome, _ = probes.run_probe(probe, quick=True)
    assert outcome.runs > 0
    lines = [f"crash: {line}" for line in outcome.crashes]
    lines += [f"loss: {line}" for line in outcome.losses]
    assert not lines, "\n".join(lines)
