"""Self-checks of lesson 11: the reference passes, mistakes get a hint."""

from __future__ import annotations

import pytest
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers.exercises import n11


def test_the_reference_solution_passes(capsys):
    reference = [{"role": "user", "content": "What's the weather in Moscow?"}]
    assert verdict_of(capsys, n11.check_messages, reference).strip() == CORRECT


@pytest.mark.parametrize(
    "wrong",
    [
        [],  # the committed starter
        [{"role": "assistant", "content": "Moscow"}],
        [{"role": "user", "content": "Weather in Paris?"}],
        "What's the weather in Moscow?",
    ],
)
def test_mistakes_get_a_hint_in_both_languages(capsys, wrong):
    out = verdict_of(capsys, n11.check_messages, wrong)
    assert out.startswith(NOT_YET), out
    assert any("а" <= ch <= "я" for ch in out.split("\n", 1)[1]), "the Russian hint is missing"
