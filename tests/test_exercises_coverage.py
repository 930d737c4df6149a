"""Every self-check of the series has a test of its own that names it (issue 30: lesson 09 had an
exercise without one). The checks are derived from the lesson list (`all_checks`, as the wrong-
answer table does); a test names a check when a `test_*` function of a per-lesson file
`tests/test_exercises_nNN*.py` uses its name. The wrong-answer rows are required separately
(`test_every_check_has_six_wrong_answers`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from test_exercises_table import all_checks, check_id

TESTS = Path(__file__).resolve().parent


def names_used_by_tests(files: Iterable[Path]) -> set[str]:
    """Every name and attribute the `test_*` functions of `files` use."""
    used = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Name):
                        used.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        used.add(sub.attr)
    return used


def lesson_test_file(lesson: str, files: Iterable[Path]) -> str:
    """The per-lesson test file that covers lesson `NN` (`test_exercises_n03_n05.py` covers 03 to
    05), or the name a new one gets."""
    for path in files:
        numbers = [int(n) for n in re.findall(r"n(\d\d)", path.stem)]
        if numbers and numbers[0] <= int(lesson) <= numbers[-1]:
            return f"tests/{path.name}"
    return f"tests/test_exercises_n{lesson}.py"


def untested_checks(checks: Iterable[Callable[..., Any]], files: Iterable[Path]) -> list[str]:
    """A message for each check that no per-lesson test names."""
    files = list(files)
    used = names_used_by_tests(files)
    return [
        f"{check_id(check)} has no test that names it: add one to "
        f"{lesson_test_file(check_id(check)[1:3], files)} that runs "
        f"{check.__name__} on the lesson's solution (`solution(lesson, name)` from "
        "tests/exercise_answers.py, it must pass) and on a wrong answer (it must say Not yet)"
        for check in checks
        if check.__name__ not in used
    ]


def test_every_check_has_a_test_that_names_it():
    checks = all_checks()
    assert len({c.__module__ for c in checks}) >= 2, "no exercise modules found: is the list stale?"
    problems = untested_checks(checks, sorted(TESTS.glob("test_exercises_n*.py")))
    assert not problems, "\n".join(problems)


def test_a_check_without_a_test_is_named(tmp_path):
    """Planted into a known state: the check stripped is one the tests name today, and only the
    messages the stripping adds are compared (a real omission fails the test above, once)."""
    checks = all_checks()
    files = sorted(TESTS.glob("test_exercises_n*.py"))
    already = set(untested_checks(checks, files))
    named = [c for c in checks if not untested_checks([c], files)]
    assert named, "no check has a test that names it (test_every_check_has_a_test_that_names_it)"
    preferred = [c for c in named if check_id(c) == "n01.check_call_tool"]
    check = (preferred or named)[0]
    home = lesson_test_file(check_id(check)[1:3], files)
    used = [p for p in files if check.__name__ in names_used_by_tests([p])]
    others = [p for p in files if p not in used]
    for path in used:  # every test file that names it loses the name
        source = path.read_text(encoding="utf-8")
        (tmp_path / path.name).write_text(
            source.replace(check.__name__, "check_renamed"), encoding="utf-8"
        )
    planted = [*others, *(tmp_path / p.name for p in used)]
    problems = [p for p in untested_checks(checks, planted) if p not in already]
    assert problems == [
        f"{check_id(check)} has no test that names it: add one to "
        f"{home} that runs {check.__name__} on the lesson's "
        "solution (`solution(lesson, name)` from tests/exercise_answers.py, it must pass) and on "
        "a wrong answer (it must say Not yet)"
    ]
