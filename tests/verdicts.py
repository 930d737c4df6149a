"""Run a self-check in both languages, for the exercise tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from output_language import language_problems

from helpers.exercises._verdict import Verdict
from helpers.i18n import reset_language, set_language

# What `verdict_of` returns for a passed check: the English line, then the Russian one.
CORRECT = "Correct!\nВерно!"
NOT_YET = "Not yet:"


def verdict_of(capsys: Any, check: Callable[..., Any], *args: Any) -> str:
    """Run `check(*args)` in English, then in Russian; return both printed verdicts.

    Both runs must return the same `Verdict`, each must print exactly that verdict, and each in its
    own language: no Cyrillic in the English line, no English prose in the Russian one."""
    printed, results = [], []
    try:
        for lang in ("en", "ru"):
            set_language(lang)
            result = check(*args)
            out = capsys.readouterr().out
            assert isinstance(result, Verdict), f"a self-check returns a Verdict, not {result!r}"
            assert out == f"{result}\n", (out, str(result))
            wrong_language = language_problems("", lang, out)
            assert not wrong_language, wrong_language
            printed.append(out)
            results.append(result.passed)
    finally:
        reset_language()
    assert results[0] == results[1], "the verdict differs between the languages"
    return "".join(printed)


def verdict_on(check: Callable[..., Any], answer: Any, capsys: Any) -> str:
    """`verdict_of` with the answer first: what a self-check on `answer` prints in both languages."""
    return verdict_of(capsys, check, answer)


def assert_not_yet_in_both(out: str) -> None:
    """A "Not yet" verdict (English line first) with a Russian hint, and no "Correct!"."""
    lines = out.splitlines()
    assert lines[0].startswith(NOT_YET) and len(lines[0]) > len(NOT_YET) + 5, out
    assert any("А" <= ch <= "я" or ch in "Ёё" for ch in lines[1]), out
    assert CORRECT not in out
