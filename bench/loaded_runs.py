"""The README's test command on a quiet machine, then N times under a load of busy cores, in one
invocation; prints each run's verdict, wall time and its ratio to the quiet run (issue 33: "10
consecutive full runs pass under load, none longer than twice the quiet time").

Run: python bench/loaded_runs.py --runs 10 --busy 2   (about 10 minutes a run on 2 cores)

The load: `--busy` processes of this Python, each spinning `while True: pass` at the default
priority (nice 0), started before a run and killed after it. On a 2-core machine `--busy 2`
keeps both cores busy, so the suite's workers, kernels and replay servers share the CPU with
them. Nothing else should run meanwhile: the quiet run is the yardstick.

Each run's output goes to `--log-dir` (default: build/loaded_runs/), its last line is printed.
Exit status 0 when every run passed, 1 otherwise. Not a test: no time is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPIN = "while True: pass"


def cpu_seconds() -> float:
    """User + system CPU of every child process ended so far (pytest, its workers, kernels and
    servers: each is waited for by its parent)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def suite(log: Path, pytest: Path, extra: list[str]) -> tuple[int, float, float, str]:
    """One run of `pytest` (the README's command) in this checkout: exit code, wall seconds, CPU
    seconds, and pytest's summary line."""
    start, cpu = time.monotonic(), cpu_seconds()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.call([str(pytest), *extra], cwd=ROOT, stdout=out, stderr=out)
    seconds = time.monotonic() - start
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return code, seconds, cpu_seconds() - cpu, (lines[-1] if lines else "(no output)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="loaded runs (default 10)")
    parser.add_argument("--busy", type=int, default=2, help="busy processes (default 2)")
    parser.add_argument("--quiet-seconds", type=float, help="skip the quiet run, use this time")
    parser.add_argument("--log-dir", type=Path, default=ROOT / "build" / "loaded_runs")
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest")
    args = parser.parse_args()
    pytest = Path(sys.executable).with_name("pytest")
    args.log_dir.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} cores; load: {args.busy} x `{SPIN}` at nice 0", flush=True)

    if args.quiet_seconds is None:
        code, quiet, cpu, last = suite(args.log_dir / "quiet.txt", pytest, args.pytest_args)
        # CPU / wall: how many cores the suite keeps busy alone. Beside busy loops that take
        # every core it gets about its fair share of them, so this bounds the loaded ratio.
        print(
            f"quiet : exit {code}, {quiet:6.0f} s, {cpu / quiet:4.2f} cores busy   {last}",
            flush=True,
        )
        if code != 0:
            print("the quiet run failed: fix that first")
            return 1
    else:
        quiet = args.quiet_seconds
        print(f"quiet : {quiet:6.0f} s (given)", flush=True)

    failed = 0
    worst = 0.0
    for run in range(1, args.runs + 1):
        spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
        try:
            log = args.log_dir / f"run{run:02d}.txt"
            code, seconds, cpu, last = suite(log, pytest, args.pytest_args)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        failed += code != 0
        worst = max(worst, seconds / quiet)
        print(
            f"run {run:2d}: exit {code}, {seconds:6.0f} s, {seconds / quiet:4.2f}x quiet, "
            f"{cpu / seconds:4.2f} cores for the suite   {last}",
            flush=True,
        )
    print(f"{args.runs - failed} of {args.runs} loaded runs passed; the slowest {worst:.2f}x quiet")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
