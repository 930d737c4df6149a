"""The grader and the verdict record it reads: one CSV row per submitted notebook, with marks.

The submissions are built the way students make them: the student edition of lesson 01 with
their answers typed into the starter cells (and, for some, worse things: a cell that writes
"passed" into the verdict log, a patched check, the teacher's key, an edited or deleted check).
"""

from __future__ import annotations

import copy
import csv
import json
import os
from pathlib import Path

import nbformat
import pytest
import scripts_support

from helpers.exercises import _verdict, n01
from helpers.grade import (
    exercises_of,
    grade_folder,
    kernel_env,
    lesson_of,
    read_log,
    read_weights,
    student_of,
    write_weights_template,
)
from helpers.paths import NOTEBOOKS_DIR

nbbuild = scripts_support.nbbuild()
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
# A student's own answers to lesson 01 (not the reference solutions' text).
MY_SCHEMA = "my_schema = " + json.dumps(SCHEMA)
MY_CALL_TOOL = """def call_tool(tool_call, tool_map):
    fn = tool_map[tool_call["function"]["name"]]
    return fn(**json.loads(tool_call["function"]["arguments"]))"""
WRONG_SCHEMA = 'my_schema = {"type": "function", "function": {"name": "convert_temperature"}}'
# The forgery of issue 21: four lines that write "passed" for every exercise into the log.
FORGERY = """import json, os
with open(os.environ["LLM_GRADE_LOG"], "a") as log:
    for name in ("check_schema", "check_call_tool", "check_typed_function"):
        log.write(json.dumps({"exercise": "01:" + name, "passed": True, "hint": ""}) + "\\n")"""
# A subtler one: replace the check's inner test so that everything passes.
PATCH = "import helpers.exercises.n01 as m\nm._schema = lambda *args, **kwargs: None"


def _table(path: Path) -> dict[str, dict[str, str]]:
    """The CSV as {notebook: row}."""
    with path.open(encoding="utf-8") as handle:
        return {row["notebook"]: row for row in csv.DictReader(handle)}


def _notebook(*sources: str) -> str:
    """A small notebook of code cells, as JSON text."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nbformat.writes(nb)


def _student_edition(lang: str = "en") -> nbformat.NotebookNode:
    key = nbformat.read(NOTEBOOKS_DIR / lang / "01_tools_schema.ipynb", as_version=4)
    return nbbuild.student_notebook(key, "01_tools_schema", lang)


def _answer(nb, exercise: str, source: str) -> None:
    """Type `source` into the starter cell of `exercise` (e.g. check_schema)."""
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == f"01-{exercise}-answer":
            cell.source = source
            return
    raise AssertionError(f"no answer cell for {exercise}")


def _check_cell(nb, exercise: str):
    return next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"01-{exercise}"
    )


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


@pytest.mark.parametrize(
    "path, student",
    [
        ("ivanova/01_tools_schema.ipynb", "ivanova"),
        ("ivanova/homework/any.ipynb", "ivanova"),
        ("ivanova_01_tools_schema.ipynb", "ivanova"),
        ("01_tools_schema-petrov (1).ipynb", "petrov"),
        ("Sidorov 01.ipynb", "Sidorov"),
        ("01_tools_schema.ipynb", "01_tools_schema"),
    ],
)
def test_the_student_comes_from_the_folder_or_the_file_name(path, student):
    assert student_of(Path(path)) == student


def test_the_kernel_gets_an_allow_list_of_variables(tmp_path, monkeypatch):
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "GITHUB_TOKEN": "ghp_x",
        "KIMI_API_KEY": "sk-k",
        "HTTPS_PROXY": "http://proxy:3128",
        "all_proxy": "socks://proxy:1080",
        "LLM_REPLAY_DIR": "/elsewhere",
        "SOME_TOOL_SETTING": "1",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = kernel_env(tmp_path / "log.jsonl")
    assert not set(secrets) & set(env)
    assert env["PATH"] == os.environ["PATH"] and env["LC_ALL"] == "C.UTF-8"
    assert env["LLM_MODE"] == "replay" and env["HF_HUB_OFFLINE"] == "1"


def test_weights_are_read_checked_and_templated(tmp_path):
    template = tmp_path / "weights.csv"
    write_weights_template(template)
    rows = list(csv.reader(template.open(encoding="utf-8")))
    assert rows[0] == ["exercise", "weight"] and ["01:check_schema", "1"] in rows
    template.write_text("exercise,weight\n01:check_schema,2\n01:check_call_tool,0.5\n")
    assert read_weights(template) == {"01:check_schema": 2.0, "01:check_call_tool": 0.5}
    template.write_text("01:check_nothing,2\n")
    with pytest.raises(ValueError, match="no such exercise"):
        read_weights(template)
    template.write_text("01:check_schema,two\n")
    with pytest.raises(ValueError, match="'two'"):
        read_weights(template)


def _write(folder: Path, name: str, nb) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict[str, str]]:
    """A class of lesson-01 submissions, graded once with two kernels at once."""
    folder = tmp_path_factory.mktemp("submissions")
    edition = _student_edition("en")

    solved = copy.deepcopy(edition)  # two of three solved in the student's own words
    _answer(solved, "check_schema", MY_SCHEMA)
    _answer(solved, "check_call_tool", MY_CALL_TOOL)
    _write(folder, "ivanova/01_tools_schema.ipynb", solved)

    _write(folder, "petrov_01_tools_schema.ipynb", _student_edition("ru"))  # untouched

    forged = copy.deepcopy(edition)  # a wrong attempt, then the forging cell
    _answer(forged, "check_schema", WRONG_SCHEMA)
    forged.cells.append(nbformat.v4.new_code_cell(FORGERY))
    _write(folder, "sidorov/01_tools_schema.ipynb", forged)

    patched = copy.deepcopy(edition)  # a patched check before the check cell
    _answer(patched, "check_schema", WRONG_SCHEMA + "\n" + PATCH)
    _write(folder, "orlov/01_tools_schema.ipynb", patched)

    tampered = copy.deepcopy(edition)  # one check replaced by a print, one deleted
    _answer(tampered, "check_call_tool", MY_CALL_TOOL)
    _check_cell(tampered, "check_call_tool").source = 'print("Correct!")'
    tampered.cells.remove(_check_cell(tampered, "check_typed_function"))
    _write(folder, "smirnov/01_tools_schema.ipynb", tampered)

    added = copy.deepcopy(edition)  # the starter left alone, an attempt in a new cell below it
    starter = next(
        i
        for i, c in enumerate(added.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == "01-check_schema-answer"
    )
    added.cells.insert(starter + 1, nbformat.v4.new_code_cell(WRONG_SCHEMA))
    _write(folder, "novikova/01_tools_schema.ipynb", added)

    key = nbformat.read(NOTEBOOKS_DIR / "ru" / "01_tools_schema.ipynb", as_version=4)
    _write(folder, "kuznetsova/01_tools_schema.ipynb", key)  # the teacher's key, handed in

    (folder / "broken").mkdir()
    (folder / "broken" / "01_tools_schema.ipynb").write_text('{"cells": [', encoding="utf-8")

    weights = tmp_path_factory.mktemp("w") / "weights.csv"
    weights.write_text("01:check_schema,2\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    grade_folder(folder, out, timeout=120, jobs=2, weights=read_weights(weights))
    return _table(out)


def _verdicts(row) -> list[str]:
    return [row[e] for e in exercises_of("01")]


def _attempts(row) -> list[str]:
    return [row[f"{e} attempted"] for e in exercises_of("01")]


def test_columns_student_flags_marks_and_three_per_exercise(graded):
    columns = list(next(iter(graded.values())))
    assert columns[:11] == [
        "student",
        "notebook",
        "lesson",
        "run",
        "check_cells",
        "answer_key",
        "verdict_log",
        "score",
        "max_score",
        "student_total",
        "student_max",
    ]
    assert columns[11:14] == [
        "01:check_schema",
        "01:check_schema attempted",
        "01:check_schema hint",
    ]
    assert len(columns) == 11 + 3 * len(exercises_of("01"))
    assert graded["petrov_01_tools_schema.ipynb"]["student"] == "petrov"


def test_a_solved_notebook_scores_with_the_weights(graded):
    row = graded["ivanova/01_tools_schema.ipynb"]
    assert (row["student"], row["run"], row["check_cells"]) == ("ivanova", "ok", "ok")
    assert (row["answer_key"], row["verdict_log"]) == ("no", "ok")
    assert _verdicts(row) == ["passed", "passed", "not yet"]
    assert _attempts(row) == ["yes", "yes", "no"]
    assert row["01:check_schema hint"] == "" and row["01:check_typed_function hint"]
    assert (row["score"], row["max_score"]) == ("3", "4")  # check_schema weighs 2
    assert (row["student_total"], row["student_max"]) == ("3", "4")


def test_an_untouched_notebook_is_not_attempted_and_hints_are_in_its_language(graded):
    row = graded["petrov_01_tools_schema.ipynb"]
    assert _verdicts(row) == ["not yet"] * 3 and _attempts(row) == ["no"] * 3
    assert row["check_cells"] == "ok" and row["score"] == "0"
    assert any("а" <= ch <= "я" for ch in row["01:check_schema hint"]), row["01:check_schema hint"]


def test_the_forging_cell_gets_nothing_and_is_reported(graded):
    row = graded["sidorov/01_tools_schema.ipynb"]
    assert _verdicts(row) == ["not yet"] * 3
    assert _attempts(row) == ["yes", "no", "no"]
    assert "3 record(s) from other cells ignored" in row["verdict_log"]
    assert "touch the self-check code" in row["verdict_log"]  # it names LLM_GRADE_LOG
    assert row["score"] == "0"


def test_an_attempt_in_an_added_cell_counts_as_attempted(graded):
    row = graded["novikova/01_tools_schema.ipynb"]
    assert _verdicts(row) == ["not yet"] * 3
    assert _attempts(row) == ["yes", "no", "no"]
    assert row["check_cells"] == "ok"


def test_a_patched_check_is_restored_before_the_check_cell_runs(graded):
    row = graded["orlov/01_tools_schema.ipynb"]
    assert row["01:check_schema"] == "not yet" and row["01:check_schema attempted"] == "yes"


def test_edited_and_deleted_check_cells_are_flagged_and_give_no_verdict(graded):
    row = graded["smirnov/01_tools_schema.ipynb"]
    assert row["check_cells"] == "edited: check_call_tool; deleted: check_typed_function"
    assert row["01:check_call_tool"] == "missing"  # the print is no check call
    assert row["01:check_typed_function"] == "missing"
    assert row["01:check_call_tool attempted"] == "yes"


def test_the_answer_key_is_detected(graded):
    row = graded["kuznetsova/01_tools_schema.ipynb"]
    assert row["answer_key"].startswith("yes: 3 of 3 reference solutions, 3 collapsed"), row
    # The key's own checks after each solution are not the student edition's check cells.
    assert "record(s) from other cells ignored" in row["verdict_log"]


def test_an_invalid_notebook_gets_a_row_that_says_so(graded):
    row = graded["broken/01_tools_schema.ipynb"]
    assert row["run"].startswith("invalid notebook")
    assert _verdicts(row) == ["missing"] * 3 and row["student"] == "broken"


@pytest.fixture(scope="module")
def endless(tmp_path_factory) -> tuple[dict[str, str], nbformat.NotebookNode]:
    """An endless loop in an answer cell: interrupted after the cell timeout, the rest runs."""
    folder = tmp_path_factory.mktemp("endless")
    nb = _student_edition("en")
    _answer(nb, "check_call_tool", "while True:\n    pass")
    _answer(nb, "check_schema", MY_SCHEMA)
    _write(folder, "01_tools_schema.ipynb", nb)
    out, executed = folder / "grades.csv", tmp_path_factory.mktemp("executed")
    grade_folder(folder, out, timeout=120, cell_timeout=3, executed=executed)
    return _table(out)["01_tools_schema.ipynb"], nbformat.read(
        executed / "01_tools_schema.ipynb", as_version=4
    )


def test_an_endless_loop_is_interrupted_and_later_cells_still_run(endless):
    row, nb = endless
    assert "1 cell(s) interrupted after 3 s" in row["run"], row["run"]
    assert row["01:check_schema"] == "passed"  # before the loop
    assert row["01:check_call_tool"] == "error"  # the loop replaced call_tool: NameError
    assert row["01:check_typed_function"] == "not yet"  # after the loop: it ran
    loop = next(c for c in nb.cells if c.source.startswith("while True"))
    assert any("[grader] interrupted after 3 s" in o.get("text", "") for o in loop.outputs)
    assert not any("ZMQ" in str(o) for c in nb.cells for o in c.get("outputs", []))


def test_secrets_of_the_teachers_shell_do_not_reach_the_students_kernel(tmp_path, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "KIMI_API_KEY"):
        monkeypatch.setenv(name, "do-not-leak")
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "01_tools_schema.ipynb").write_text(
        _notebook(
            "import os\n"
            "print(sorted(k for k, v in os.environ.items() if v == 'do-not-leak'))\n"
            "print(os.environ['LLM_MODE'])"
        ),
        encoding="utf-8",
    )
    grade_folder(folder, tmp_path / "grades.csv", timeout=60, executed=tmp_path / "run")
    nb = nbformat.read(tmp_path / "run" / "01_tools_schema.ipynb", as_version=4)
    assert nb.cells[0].outputs[0]["text"] == "[]\nreplay\n"
