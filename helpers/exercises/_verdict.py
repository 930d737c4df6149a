"""Bilingual verdicts for the self-check cells (code cells are identical in both editions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CORRECT = "Correct! / Верно!"
NOT_YET = "Not yet / Пока нет:"


class NotYet(Exception):
    """A self-check failed: `en` and `ru` say what is wrong and what to try."""

    def __init__(self, en: str, ru: str) -> None:
        super().__init__(en)
        self.en = en
        self.ru = ru


def verdict(check: Callable[[], None]) -> None:
    """Run `check`; print "Correct!" or "Not yet" with the hint in both languages.

    Returns None on purpose: a self-check cell should show the printed verdict only.
    """
    try:
        check()
    except NotYet as hint:
        print(f"{NOT_YET} {hint.en}")
        print(f"{' ' * len(NOT_YET)} {hint.ru}")
        return
    print(CORRECT)


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
