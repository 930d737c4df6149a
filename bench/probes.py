"""Reliability probes: throw bad input, load, failing upstreams and hostile tools at the helpers.

Run: python bench/probes.py            (every probe, full size; prints a table, exits 1 on any
                                        crash or data loss)
     python bench/probes.py --quick    (small sizes: what tests/test_probes_*.py run)
     python bench/probes.py --group parsers

A probe module is any `bench/probes_*.py` file with a list `PROBES` of `Probe` entries. A probe
function takes `quick` and returns an `Outcome`:
  - runs: how many inputs or requests it tried;
  - crashes: one line for each failure that is not a documented, actionable error (a traceback
    from a server handler, a parser raising something other than its error type, a hang past
    the probe's time limit, a process that died);
  - losses: one line for each piece of data lost (a good recording replaced or missing, a cassette
    that no longer loads, a tool call left without its result in `messages`, text a parser
    dropped or changed).
The numbers are counts from one run; nothing here is timed against a limit except hangs.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Outcome:
    runs: int = 0
    crashes: list[str] = field(default_factory=list)
    losses: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # measurements worth printing (no verdict)


@dataclass(frozen=True)
class Probe:
    group: str  # "bad input", "load", "record", "parsers" or "tools/loop"
    name: str
    run: Callable[[bool], Outcome]


def discover() -> list[Probe]:
    """Every `PROBES` entry of every `bench/probes_*.py`, in file order."""
    probes: list[Probe] = []
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    for path in sorted(HERE.glob("probes_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        probes.extend(module.PROBES)
    return probes


def run_probe(probe: Probe, quick: bool) -> tuple[Outcome, float]:
    """Run one probe; an exception escaping the probe counts as one crash. A probe that makes
    something raise BaseException (KeyboardInterrupt from a tool, say) catches it itself."""
    start = time.perf_counter()
    try:
        outcome = probe.run(quick)
    except Exception as exc:  # a probe must not stop the others
        line = traceback.format_exception_only(type(exc), exc)[-1].strip()
        outcome = Outcome(runs=1, crashes=[f"the probe itself raised {line}"])
    return outcome, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (what the tests run)")
    parser.add_argument("--group", action="append", help="run only this group (repeatable)")
    args = parser.parse_args(argv)

    probes = [p for p in discover() if not args.group or p.group in args.group]
    if not probes:
        print("no probes matched", file=sys.stderr)
        return 2
    print("| group | probe | runs | crashes | data loss | wall s |\n|---|---|---:|---:|---:|---:|")
    totals = Outcome()
    details: list[str] = []
    notes: list[str] = []
    for probe in probes:
        outcome, seconds = run_probe(probe, args.quick)
        totals.runs += outcome.runs
        totals.crashes += outcome.crashes
        totals.losses += outcome.losses
        print(
            f"| {probe.group} | {probe.name} | {outcome.runs:,} | {len(outcome.crashes)} "
            f"| {len(outcome.losses)} | {seconds:.1f} |",
            flush=True,
        )
        details += [f"{probe.name}: crash: {line}" for line in outcome.crashes]
        details += [f"{probe.name}: loss: {line}" for line in outcome.losses]
        notes += [f"{probe.name}: {line}" for line in outcome.notes]
    print(
        f"\n{len(probes)} probes, {totals.runs:,} runs, {len(totals.crashes)} crashes, "
        f"{len(totals.losses)} data losses"
    )
    for line in notes:
        print(" * note:", line)
    for line in details:
        print(" -", line)
    return 1 if details else 0


if __name__ == "__main__":
    sys.exit(main())
