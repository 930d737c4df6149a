"""The grader and the verdict record it reads: one CSV row per submitted notebook."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from helpers.exercises import _verdict, n01
from helpers.grade import exercises_of, grade_folder, lesson_of, read_log
from helpers.paths import NOTEBOOKS_DIR

SCHEMA = {
    "type": "function",
    "function": {
        "name": "convert_temperature",
        "description": "Convert a temperature.",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The temperature"},
                "to_unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "The unit",
                },
            },
            "required": ["value", "to_unit"],
        },
    },
}


def _table(path: Path) -> dict[str, dict[str, str]]:
    """The CSV as {notebook: row}."""
    with path.open(encoding="utf-8") as handle:
        return {row["notebook"]: row for row in csv.DictReader(handle)}


def _notebook(*sources: str) -> str:
    """A small notebook of code cells, as JSON text."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nbformat.writes(nb)


def test_verdict_records_the_exercise_and_appends_to_the_grade_log(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("LLM_GRADE_LOG", str(log))
    recorded = len(_verdict.RECORDED)
    assert not n01.check_schema({}).passed
    assert n01.check_schema(SCHEMA).passed
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(e["exercise"], e["passed"]) for e in lines] == [
        ("01:check_schema", False),
        ("01:check_schema", True),
    ]
    assert lines[0]["hint"] and not lines[1]["hint"]
    assert _verdict.RECORDED[recorded:] == lines
    assert capsys.readouterr().out.splitlines()[1] == "Correct!"


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LLM_GRADE_LOG", raising=False)
    monkeypatch.chdir(tmp_path)
    n01.check_schema({})
    assert list(tmp_path.iterdir()) == []


def test_read_log_keeps_the_last_verdict_and_skips_a_torn_line(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"exercise": "01:a", "passed": false}\n{"exercise": "01:a", "passed": true}\n'
        '{"exercise": "01:b", "pass',
        encoding="utf-8",
    )
    assert read_log(log) == {"01:a": True}
    assert read_log(tmp_path / "none.jsonl") == {}


def test_exercises_and_lesson_are_found_from_the_code():
    assert exercises_of("01") == [
        "01:check_schema",
        "01:check_call_tool",
        "01:check_typed_function",
    ]
    assert exercises_of("99") == []
    nb = nbformat.reads(_notebook("from helpers.exercises.n03 import check_usage"), as_version=4)
    assert lesson_of(Path("ivanov.ipynb"), nb) == "03"
    assert lesson_of(Path("02_sync_loop (1).ipynb"), None) == "02"
    assert lesson_of(Path("homework.ipynb"), None) == ""


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Three submissions of lesson 01 (solved, broken, a raising cell) and a wrong answer to
    lesson 02, graded once. The untouched student edition of every lesson is graded in
    `test_student_edition.py`: "not yet" for every exercise, in the table too."""
    folder = tmp_path_factory.mktemp("submissions")
    for student in ("solved", "broken", "raises", "wrong"):
        (folder / student).mkdir()
    shutil.copy(NOTEBOOKS_DIR / "en" / "01_tools_schema.ipynb", folder / "solved")
    (folder / "broken" / "01_tools_schema.ipynb").write_text('{"cells": [', encoding="utf-8")
    (folder / "raises" / "mine.ipynb").write_text(
        _notebook(
            "from helpers.exercises import n01",
            "my_schema = undefined_name",
            "n01.check_schema(my_schema)",
            "def call_tool(tool_call, tool_map):\n    return 1",
            "n01.check_call_tool(call_tool)",
        ),
        encoding="utf-8",
    )
    (folder / "wrong" / "02_sync_loop.ipynb").write_text(
        _notebook(
            "from helpers.exercises import n02",
            "n02.check_needs_tools(lambda message, finish_reason: True)",
        ),
        encoding="utf-8",
    )
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    grade_folder(folder, out, timeout=60, jobs=2)  # two kernels at once, as a teacher would
    return _table(out)


@pytest.fixture(scope="module")
def endless(tmp_path_factory) -> dict[str, str]:
    """A notebook that never finishes, graded alone under a short deadline (the loop keeps a CPU
    busy until the deadline, so the deadline is kept short)."""
    folder = tmp_path_factory.mktemp("endless")
    (folder / "02_sync_loop.ipynb").write_text(
        _notebook(
            "from helpers.exercises import n02",
            "while True:\n    pass",
            "n02.check_needs_tools(lambda message, finish_reason: True)",
        ),
        encoding="utf-8",
    )
    out = folder / "grades.csv"
    grade_folder(folder, out, timeout=4)
    return _table(out)["02_sync_loop.ipynb"]


def test_one_row_per_notebook_one_column_per_exercise(graded):
    assert sorted(graded) == [
        "broken/01_tools_schema.ipynb",
        "raises/mine.ipynb",
        "solved/01_tools_schema.ipynb",
        "wrong/02_sync_loop.ipynb",
    ]
    columns = list(next(iter(graded.values())))
    assert columns == ["notebook", "lesson", "run", *exercises_of("01"), *exercises_of("02")]


def test_the_solved_key_passes_every_exercise(graded):
    row = graded["solved/01_tools_schema.ipynb"]
    assert (row["lesson"], row["run"]) == ("01", "ok")
    assert [row[e] for e in exercises_of("01")] == ["passed"] * 3
    assert all(row[e] == "" for e in exercises_of("02"))


def test_an_invalid_notebook_gets_a_row_that_says_so(graded):
    row = graded["broken/01_tools_schema.ipynb"]
    assert row["run"].startswith("invalid notebook")
    assert [row[e] for e in exercises_of("01")] == ["missing"] * 3


def test_a_raising_cell_is_an_error_and_later_cells_still_run(graded):
    row = graded["raises/mine.ipynb"]
    assert (row["lesson"], row["run"]) == (
        "01",
        "ok, 2 cell(s) raised",
    )  # the assignment and its check
    assert row["01:check_schema"] == "error"
    assert row["01:check_call_tool"] == "not yet"
    assert row["01:check_typed_function"] == "missing"


def test_a_wrong_answer_is_not_yet_and_other_lessons_columns_stay_empty(graded):
    row = graded["wrong/02_sync_loop.ipynb"]
    assert (row["lesson"], row["run"]) == ("02", "ok")
    assert row["02:check_needs_tools"] == "not yet"
    assert row["02:check_answer_calls"] == "missing"
    assert all(row[e] == "" for e in exercises_of("01"))


def test_an_endless_loop_times_out(endless):
    assert endless["run"] == "timeout after 4 s"
    assert endless["02:check_needs_tools"] == "error"
    assert endless["02:check_answer_calls"] == "missing"
