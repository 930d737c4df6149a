"""What a lesson lacks (scenario module, cassette), or what has no lesson: the tests' check."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lessons import (
    LESSON_NAME,
    lesson_names,
    lesson_of_module,
    scenario_module,
)
from helpers.paths import NOTEBOOKS_DIR, RECORDINGS_DIR, REPO_ROOT

SCENARIOS_DIR = REPO_ROOT / "helpers" / "replay" / "scenarios"


def cassette_path(lesson: str, recordings_dir: Path = RECORDINGS_DIR) -> Path:
    """Where a lesson's replay cassette lives."""
    return recordings_dir / f"{lesson}.json"


def lesson_problems(
    src_dir: Path = NOTEBOOKS_DIR / "src",
    scenarios_dir: Path = SCENARIOS_DIR,
    recordings_dir: Path = RECORDINGS_DIR,
) -> list[str]:
    """What a lesson lacks (scenario module, cassette) or what has no lesson: one line each."""
    lessons = lesson_names(src_dir)
    problems = [
        f"notebooks/src/{name}.py: a lesson name is NN_lowercase_words"
        for name in lessons
        if not LESSON_NAME.match(name)
    ]
    for name in lessons:
        module = scenarios_dir / f"{scenario_module(name)}.py"
        if not module.is_file():
            problems.append(
                f"lesson {name} has no scenario module {module.name} in helpers/replay/scenarios/ "
                f"(scripts/new_lesson.py makes one; it may hold `SCENARIOS = []`)"
            )
        elif not re.search(rf"^NOTEBOOK\s*=\s*['\"]{name}['\"]", module.read_text("utf-8"), re.M):
            problems.append(f"{module.name} must say NOTEBOOK = {name!r}")
        if not (recordings_dir / f"{name}.json").is_file():
            problems.append(
                f"lesson {name} has no cassette data/recordings/{name}.json: "
                "run `python -m helpers.replay synthesize`"
            )
    for module in sorted(scenarios_dir.glob("n[0-9][0-9]_*.py")):
        if lesson_of_module(module.stem) not in lessons:
            problems.append(
                f"scenario module {module.name} belongs to no lesson: there is no "
                f"notebooks/src/{lesson_of_module(module.stem)}.py (rename or delete it)"
            )
    for cassette in sorted(recordings_dir.glob("[0-9][0-9]_*.json")):
        if cassette.stem not in lessons:
            problems.append(f"cassette {cassette.name} belongs to no lesson (delete it)")
    return problems
