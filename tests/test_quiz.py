"""The exit quiz's check (helpers/exercises/quiz.py): right answers pass, wrong ones get a hint
that names the question but never the right letter."""

from __future__ import annotations

import ast

import pytest

from helpers.exercises import quiz

RIGHT = {n: q["answer"] for n, q in enumerate(quiz.QUESTIONS, start=1)}


def test_the_right_answers_pass():
    assert quiz.check_quiz(RIGHT)
    assert quiz.check_quiz({n: f" {a.upper()} " for n, a in RIGHT.items()})


def _wrong(number: int) -> dict:
    other = next(x for x in "abc" if x != RIGHT[number])
    return {**RIGHT, number: other}


@pytest.mark.parametrize(
    ("answers", "names"),
    [
        (_wrong(1), "question 1 "),
        (_wrong(2), "question 2 "),
        (_wrong(3), "question 3 "),
        (_wrong(4), "question 4 "),
        (_wrong(5), "question 5 "),
        (_wrong(6), "question 6 "),
        ({**RIGHT, 3: None}, "question 3 has no answer"),
        ({**RIGHT, 2: "ab"}, "question 2: 'ab' is not one letter"),
        ({k: v for k, v in RIGHT.items() if k != 6}, "question 6 has no answer"),
        ({**RIGHT, 7: "a"}, "remove 7"),
        ({str(k): v for k, v in RIGHT.items()}, 'numbers (1, not "1")'),  # the hold-out's
        ({**RIGHT, 1: "b)"}, "the letter alone"),
        ({**RIGHT, 1: "your program, from tool_map"}, "not its text"),
        (["a", "b"], "must be a dict"),
        (None, "must be a dict"),
        ({n: "a" for n in RIGHT}, "question 1 "),  # all "a": the first wrong one is named
    ],
)
def test_a_wrong_answer_is_rejected_with_a_hint_that_hides_the_answer(answers, names):
    verdict = quiz.check_quiz(answers)
    assert not verdict and names in verdict.hint
    if "not right yet" in verdict.hint:  # names the step to reread, no letter at all
        assert not any(f'"{x}"' in verdict.hint for x in "abc")
    for question in quiz.QUESTIONS:  # no option text leaks into a hint
        for en, _ in question["options"]:
            assert en not in verdict.hint


def test_lesson_03s_reference_answers_are_the_quizs_answers():
    import scripts_support

    cells = scripts_support.lesson_cells("03_streaming")
    solution = next(c.en for c in cells if c.hidden and "answers = {" in c.en)
    assert ast.literal_eval(solution.split("=", 1)[1].strip()) == RIGHT
