"""Verdicts for the self-check cells, in the notebook's language (`helpers.i18n`).

A self-check prints one verdict line and returns a `Verdict`, so a grader or a test can read the
result without parsing text. The returned object shows nothing in a notebook (the printed line is
the display), so a check cell's output is the verdict alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.i18n import Text, tr

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


def verdict(check: Callable[[], None]) -> Verdict:
    """Run `check`; print "Correct!" or "Not yet: <hint>" in the notebook's language; return it."""
    try:
        check()
    except NotYet as failed:
        result = Verdict(False, failed.hint)
    else:
        result = Verdict(True)
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
