"""Verdicts for the self-check cells, in the notebook's language (`helpers.i18n`).

A self-check prints one verdict line and returns a `Verdict`, so a grader or a test can read the
result without parsing text. The returned object shows nothing in a notebook (the printed line is
the display), so a check cell's output is the verdict alone.

Every verdict is also recorded with the exercise it belongs to (`RECORDED`); when the environment
variable `LLM_GRADE_LOG` names a file, it is appended there as one JSON line, which is how
`python -m helpers.grade` reads a student's results without parsing printed text.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.i18n import Text, tr

GRADE_LOG_ENV = "LLM_GRADE_LOG"
CORRECT = Text("Correct!", "Верно!")
NOT_YET = Text("Not yet:", "Пока нет:")


class NotYet(Exception):
    """A self-check failed: `en` and `ru` say what is wrong and what to try."""

    def __init__(self, en: str, ru: str) -> None:
        super().__init__(en)
        self.en = en
        self.ru = ru

    @property
    def hint(self) -> str:
        """The hint in the language in force."""
        return tr(self.en, self.ru)


@dataclass(frozen=True)
class Verdict:
    """What a self-check found: `passed`, and the hint (empty when passed)."""

    passed: bool
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return str(CORRECT) if self.passed else f"{NOT_YET} {self.hint}"

    def _ipython_display_(self) -> None:
        """Show nothing: the verdict line was already printed by `verdict`."""


# Every verdict given in this kernel, oldest first: {"exercise", "passed", "hint"}.
RECORDED: list[dict[str, Any]] = []
LESSON_MODULE = re.compile(r"(?:^|\.)n(\d\d)$")


def exercise_name(module: str, function: str) -> str:
    """`helpers.exercises.n01` + `check_schema` -> `01:check_schema`: the grader's column name."""
    found = LESSON_MODULE.search(module)
    return f"{found.group(1) if found else module}:{function}"


def _record(result: Verdict, caller: Any) -> None:
    """Remember the verdict under the check function that asked for it; log it if grading."""
    entry = {
        "exercise": exercise_name(caller.f_globals.get("__name__", "?"), caller.f_code.co_name),
        "passed": result.passed,
        "hint": result.hint,
    }
    RECORDED.append(entry)
    path = os.environ.get(GRADE_LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry, ensure_ascii=False) + "\n")


def verdict(check: Callable[[], None]) -> Verdict:
    """Run `check`; print "Correct!" or "Not yet: <hint>" in the notebook's language; return it.

    Call it from the exercise's `check_*` function: that function's name and lesson module name
    the exercise in the record (see `RECORDED` and `LLM_GRADE_LOG`)."""
    try:
        check()
    except NotYet as failed:
        result = Verdict(False, failed.hint)
    else:
        result = Verdict(True)
    _record(result, sys._getframe(1))
    print(result)
    return result


def call_student(fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's function; an exception becomes a NotYet naming it."""
    try:
        return fn(*args)
    except Exception as exc:  # the learner's bug is the news, not a crash of the check
        name = f"{type(exc).__name__}: {exc}"
        raise NotYet(
            f"your function raised {name}",
            f"ваша функция выбросила исключение {name}",
        ) from exc
