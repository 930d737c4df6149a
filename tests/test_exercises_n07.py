"""The self-checks of lesson 07: a committed starter says "Not yet", a right answer "Correct!"."""

from __future__ import annotations

import re

from exercise_answers import solution
from scripts_support import lesson_code
from verdicts import CORRECT
from verdicts import assert_not_yet_in_both as assert_not_yet
from verdicts import verdict_on as verdict_of

from helpers.exercises import n07

# The reference solutions of the lesson, read from its hidden cells.
xml_reference = solution("07", "xml_calls")
typed_reference = solution("07", "typed")
split_think_reference = solution("07", "split_think")


def test_xml_calls(capsys) -> None:
    assert_not_yet(verdict_of(n07.check_xml_calls, lambda text: [], capsys))
    first_only = lambda text: xml_reference(text)[:1]  # noqa: E731
    assert_not_yet(verdict_of(n07.check_xml_calls, first_only, capsys))
    no_strip = lambda text: [  # noqa: E731
        (name, dict(re.findall(r"<parameter=(.*?)>(.*?)</parameter>", body, re.DOTALL)))
        for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL)
    ]
    assert_not_yet(verdict_of(n07.check_xml_calls, no_strip, capsys))  # newlines kept
    assert verdict_of(n07.check_xml_calls, xml_reference, capsys) == CORRECT + "\n"


def test_typed(capsys) -> None:
    check = lambda fn: verdict_of(lambda f: n07.check_typed(f), fn, capsys)  # noqa: E731
    assert_not_yet(check(lambda value, kind: value))
    # 2.0 stays a float; "null" stays text; "True" read case-sensitively
    assert_not_yet(check(lambda v, k: float(v) if k == "number" else typed_reference(v, k)))
    assert_not_yet(check(lambda v, k: v if v == "null" else typed_reference(v, k)))
    assert_not_yet(check(lambda v, k: v == "true" if k == "boolean" else typed_reference(v, k)))
    # the null rule applied before the type: a string parameter loses its "null" text
    assert_not_yet(check(lambda v, k: None if v.lower() == "null" else typed_reference(v, k)))
    assert check(typed_reference) == CORRECT + "\n"


def test_typed_rejects_a_crash_with_a_hint(capsys) -> None:
    out = verdict_of(n07.check_typed, lambda value, kind: int(value), capsys)
    assert_not_yet(out)
    assert "ValueError" in out


def test_split_think(capsys) -> None:
    assert_not_yet(verdict_of(n07.check_split_think, lambda text: ("", text), capsys))
    opened_only = lambda text: (  # noqa: E731
        split_think_reference(text) if "<think>" in text else ("", text.strip())
    )
    assert_not_yet(verdict_of(n07.check_split_think, opened_only, capsys))
    assert verdict_of(n07.check_split_think, split_think_reference, capsys) == CORRECT + "\n"


# --- the lesson's own tool cells agree with the scenarios behind the cassette ---------------------


def test_lesson_tool_and_prompts_match_the_scenarios() -> None:
    import json

    from helpers import ToolRegistry
    from helpers.replay.scenarios import n07_qwen_today as scenario

    cells = lesson_code("07_qwen_today")
    namespace: dict = {"ToolRegistry": ToolRegistry}
    for prefix in ("FORECAST = ", "tools = ["):
        source = next(cell for cell in cells if cell.startswith(prefix))
        exec(compile(source, "<07_qwen_today>", "exec"), namespace)  # the lesson's own cells
    assert namespace["FORECAST"] == scenario.FORECAST
    assert namespace["tools"] == scenario.FORECAST_TOOLS
    for arguments in [{"city": "Paris", "days": 3, "hourly": True}, {"city": "Lima"}]:
        assert namespace["get_forecast"](**arguments) == scenario.get_forecast(**arguments)
    code = "\n".join(cells)
    for prompt in (scenario.FORECAST_PROMPT, scenario.COMPARE_PROMPT):
        assert json.dumps(prompt) in code, prompt
