"""How long each exercise's self-check takes on the lesson's reference solution.

Run: `python bench/checks.py`. For every `check_*` of every lesson it prints the cases the answer
was called on (the lesson's hand-picked ones plus the generated battery), the first run (which pays
for imports) and the best of five later runs, in CPU seconds of this process. The budget a student
feels is about 2 s a check; this script measures, it does not assert.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from exercise_answers import reference_args  # noqa: E402
from test_exercises_table import all_checks, check_id, lesson_of  # noqa: E402

from helpers.exercises._verdict import BATTERIES  # noqa: E402


def counted(fn):
    """`fn` that counts its calls (how many cases the check tried)."""
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        return fn(*args, **kwargs)

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    wrapper.__annotations__ = getattr(fn, "__annotations__", {})
    wrapper.__signature__ = __import__("inspect").signature(fn)
    return wrapper, calls


def main() -> None:
    print(f"{'check':34} {'cases':>6} {'battery':>8} {'first s':>8} {'best s':>8}  verdict")
    slowest = ("", 0.0)
    for check in all_checks():
        args = reference_args(lesson_of(check), check.__name__)
        cases, battery = "-", "-"
        if len(args) == 1 and callable(args[0]):
            spy, calls = counted(args[0])
            args = (spy,)
        runs, verdict = [], None
        for _ in range(6):
            BATTERIES.clear()
            with contextlib.redirect_stdout(io.StringIO()):
                start = time.process_time()
                verdict = check(*args)
                runs.append(time.process_time() - start)
        if len(args) == 1 and callable(args[0]) and hasattr(args[0], "__signature__"):
            cases = str(calls[0] // 6)
        if BATTERIES:
            battery = str(sum(BATTERIES.values()))
        best = min(runs[1:])
        slowest = max(slowest, (check_id(check), best), key=lambda x: x[1])
        mark = "Correct" if verdict.passed else "NOT ACCEPTED"
        print(f"{check_id(check):34} {cases:>6} {battery:>8} {runs[0]:8.3f} {best:8.3f}  {mark}")
    print(f"slowest check after the first run: {slowest[0]} {slowest[1]:.3f} s")


if __name__ == "__main__":
    main()
