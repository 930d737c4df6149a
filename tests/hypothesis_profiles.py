"""Hypothesis profiles: `dev` (the default: a quick loop), `ci` (CI=true: the full counts) and
`explore` (CI's counts times ten, a new random seed each run).

`dev` and `ci` are derandomized: the same examples every run, so a green suite stays green and a
red one is red for everyone (a random draw once failed one CI run out of many). New examples are
found on purpose, with `HYPOTHESIS_PROFILE=explore pytest tests -m "not notebooks"`; a case it
finds becomes an `@example` of its test.

A test that needs its own example count writes `settings(max_examples=examples(200))`: 200 in CI,
a quarter of it on a contributor's machine. `HYPOTHESIS_PROFILE=ci pytest` runs CI's counts
locally.
"""

from __future__ import annotations

import os

from hypothesis import settings

CI_MAX_EXAMPLES = 100  # hypothesis's own default: what every test ran before the profiles
DEV_FRACTION = 4
DEV_MIN_EXAMPLES = 10


def chosen_profile() -> str:
    """`HYPOTHESIS_PROFILE` if set, else `ci` when CI=true (as CI runs), else `dev`."""
    explicit = os.environ.get("HYPOTHESIS_PROFILE", "").strip()
    if explicit:
        return explicit
    return "ci" if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes") else "dev"


EXPLORE_FACTOR = 10


def examples(ci_count: int) -> int:
    """A test's example count: all of it in CI, a fraction in dev, ten times it in explore."""
    profile = chosen_profile()
    if profile == "explore":
        return ci_count * EXPLORE_FACTOR
    if profile == "ci":
        return ci_count
    return max(DEV_MIN_EXAMPLES, ci_count // DEV_FRACTION)


settings.register_profile("ci", max_examples=CI_MAX_EXAMPLES, derandomize=True)
settings.register_profile("dev", max_examples=examples(CI_MAX_EXAMPLES), derandomize=True)
settings.register_profile("explore", max_examples=CI_MAX_EXAMPLES * EXPLORE_FACTOR)
settings.load_profile(chosen_profile())
