"""Hypothesis profiles: `dev` (the default: a quick loop) and `ci` (CI=true: the full counts).

A test that needs its own example count writes `settings(max_examples=examples(200))`: 200 in CI,
a quarter of it on a contributor's machine. `HYPOTHESIS_PROFILE=ci pytest` runs CI's counts
locally; a failing example is saved in `.hypothesis/` and tried first next time either way.
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


def examples(ci_count: int) -> int:
    """A test's example count under the current profile: all of it in CI, a fraction in dev."""
    if chosen_profile() == "ci":
        return ci_count
    return max(DEV_MIN_EXAMPLES, ci_count // DEV_FRACTION)


settings.register_profile("ci", max_examples=CI_MAX_EXAMPLES)
settings.register_profile("dev", max_examples=examples(CI_MAX_EXAMPLES))
settings.load_profile(chosen_profile())
