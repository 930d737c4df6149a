"""helpers.i18n.count: a number with its noun in the right form, in both languages."""

from __future__ import annotations

import pytest

from helpers.i18n import count, reset_language, russian_plural, set_language

CALL_EN, CALL_RU = ("call", "calls"), ("вызов", "вызова", "вызовов")


@pytest.mark.parametrize(
    ("n", "form"),
    [
        (0, "вызовов"),
        (1, "вызов"),
        (2, "вызова"),
        (4, "вызова"),
        (5, "вызовов"),
        (11, "вызовов"),
        (12, "вызовов"),
        (14, "вызовов"),
        (21, "вызов"),
        (22, "вызова"),
        (25, "вызовов"),
        (111, "вызовов"),
        (101, "вызов"),
    ],
)
def test_russian_plural(n, form):
    assert russian_plural(n, *CALL_RU) == form


def test_count_follows_the_language():
    try:
        set_language("en")
        assert [count(n, CALL_EN, CALL_RU) for n in (0, 1, 2)] == ["0 calls", "1 call", "2 calls"]
        set_language("ru")
        assert [count(n, CALL_EN, CALL_RU) for n in (1, 3, 7)] == [
            "1 вызов",
            "3 вызова",
            "7 вызовов",
        ]
    finally:
        reset_language()
