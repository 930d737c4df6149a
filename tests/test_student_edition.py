"""The student edition: no reference solutions, no exercise outputs, and it runs with "not yet".

The last tests build the edition of every lesson in both languages, check that the two editions
share their code, and run every lesson once through the grader (one kernel per notebook, as a
student's Run All), which also proves every exercise is still there and answers "not yet" rather
than raising. Each lesson runs in one edition, the languages alternating along the series (see
`scripts_support.second_run_language`): nbval already runs both editions of the answer key.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import scripts_support
from parity import check_parity

from helpers.grade import NOT_YET, exercises_of, grade_folder
from helpers.lessons import lesson_names

LANGS = scripts_support.LANGS
LESSONS = list(lesson_names())
CORRECT = re.compile(r"Correct!|Верно!")
CHECK_CALL = re.compile(r"\bcheck_\w+\s*\(")


nbbuild = scripts_support.nbbuild()
SRC = Path(__file__).resolve().parent.parent / "notebooks" / "src"


def _lines(text: str) -> set[str]:
    """The code lines of a text, stripped, without comments (translated in the Russian key)."""
    return {line.split("#", 1)[0].strip() for line in text.split("\n")} - {""}


def solution_lines(lesson: str) -> list[set[str]]:
    """For each reference solution of a lesson, its lines that no other text of the lesson's
    source has (starter code and prose shared with the exercise are left out): none may reach a
    student. Read with `ast` from notebooks/src (a solution is a `code(..., hidden=True)` cell),
    not through the builder under test."""
    tree = ast.parse((SRC / f"{lesson}.py").read_text(encoding="utf-8"))
    solutions: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "code":
            if any(
                k.arg == "hidden" and getattr(k.value, "value", None) is True for k in node.keywords
            ):
                assert isinstance(node.args[0], ast.Constant), f"{lesson}: a solution not a string"
                solutions.append(node.args[0])
    shared = set().union(
        *(
            _lines(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node not in solutions
        )
    )
    return [_lines(node.value) - shared for node in solutions]


def _outputs_text(nb) -> str:
    """Every text a notebook's code cells show."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(str(out.get("text", "")))
            parts.append(json.dumps(out.get("data", {}), ensure_ascii=False))
            parts.append(str(out.get("evalue", "")))
    return "\n".join(parts)


def _fixture_key() -> nbformat.NotebookNode:
    """A tiny answer key the way nbbuild writes one: two exercises, solutions in hidden cells."""
    lesson = nbbuild.Lesson(
        "01_fixture",
        [
            nbbuild.md("# Fixture", "# Фикстура"),
            nbbuild.code("x = 1\nx"),
            nbbuild.md(
                "## Exercises\n\nA reference solution follows in a collapsed cell.",
                "## Упражнения\n\nЭталонное решение лежит ниже в свёрнутой ячейке.",
            ),
            nbbuild.code("answer = None"),
            nbbuild.code("from helpers.exercises import n01\n\nn01.check_schema(answer)"),
            nbbuild.code("answer = 42", hidden=True),
            nbbuild.code("n01.check_schema(answer)"),
            nbbuild.md("### Exercise 2", "### Упражнение 2"),
            nbbuild.code("def f():\n    return 0"),
            nbbuild.code("def f():\n    return 1\n\n\ncheck_other(f)", hidden=True),
            nbbuild.md("[Next](02_sync_loop.ipynb)", "[Дальше](02_sync_loop.ipynb)"),
        ],
    )
    nb = nbbuild.to_notebook(lesson, "en")
    for cell in nb.cells:  # stand-in outputs, as a run would leave them
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="Correct!\n")]
            cell.execution_count = 1
    return nb


def test_student_notebook_drops_solutions_and_their_checks_and_exercise_outputs():
    key = _fixture_key()
    before = nbformat.writes(key)
    student = nbbuild.student_notebook(key, "01_fixture", "en")
    assert nbformat.writes(key) == before, "the answer key must stay unchanged"
    sources = [c.source for c in student.cells]
    assert "answer = 42" not in sources and not any("return 1" in s for s in sources)
    assert sum(1 for s in sources if CHECK_CALL.search(s)) == 1, sources
    code = [c for c in student.cells if c.cell_type == "code"]
    assert code[0].outputs, "a lesson cell before the exercises keeps its output"
    assert all(not c.outputs and c.execution_count is None for c in code[1:])
    exercises = next(c for c in student.cells if c.source.startswith("## Exercises"))
    assert "reference solution" not in exercises.source
    assert any("Student edition" in c.source for c in student.cells)
    answer = next(c for c in code if c.source == "answer = None")
    check = next(c for c in code if "check_schema" in c.source)
    assert answer.metadata["nbgrader"]["solution"] is True
    assert check.metadata["nbgrader"] == {
        "grade": False,
        "grade_id": "01-check_schema",
        "locked": True,
        "schema_version": 3,
        "solution": False,
    }
    nbformat.validate(student)


def test_russian_student_notebook_drops_the_russian_solution_sentence():
    lesson = nbbuild.Lesson(
        "01_fixture",
        [
            nbbuild.md(
                "## Exercises\n\nA reference solution is in the collapsed cell that follows.",
                "## Упражнения\n\nДобейтесь «Верно!». Эталонное решение — в следующей, свёрнутой\nячейке.",
            ),
            nbbuild.code("from helpers.exercises import n01\n\nn01.check_schema({})"),
        ],
    )
    student = nbbuild.student_notebook(nbbuild.to_notebook(lesson, "ru"), "01_fixture", "ru")
    assert student.cells[0].source == "## Упражнения\n\nДобейтесь «Верно!»."
    assert "преподавателя" in student.cells[1].source


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    """The student edition of every lesson, both languages, written by the command line."""
    out = tmp_path_factory.mktemp("student")
    nbbuild.main(["--student", "--out", str(out)])
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_the_edition_has_every_lesson_no_solution_and_no_verdict_shown(edition, lang):
    built = sorted(p.stem for p in (edition / lang).glob("*.ipynb"))
    assert built == LESSONS
    for name in LESSONS:
        nb = nbformat.read(edition / lang / f"{name}.ipynb", as_version=4)
        nbformat.validate(nb)
        student_lines = set().union(*(_lines(c.source) for c in nb.cells))
        for own in solution_lines(name):
            assert own and not own & student_lines, (name, sorted(own & student_lines))
        assert not CORRECT.search(_outputs_text(nb)), name
        called = [
            m
            for c in nb.cells
            if c.cell_type == "code"
            for m in re.findall(r"\b(check_\w+)\s*\(", c.source)
        ]
        expected = [e.split(":", 1)[1] for e in exercises_of(name[:2])]
        if name == "03_streaming":  # the class's exit quiz (helpers/exercises/quiz.py), ungraded
            expected.append("check_quiz")
        assert sorted(called) == sorted(expected), (name, called)


def test_the_solution_oracle_finds_every_solution_in_the_answer_key():
    """The oracle above can fail: every solution's own lines are in the answer key's cells."""
    for name in LESSONS:
        solutions = solution_lines(name)
        assert solutions and all(solutions), name
        for lang in LANGS:
            nb = nbformat.read(SRC.parent / lang / f"{name}.ipynb", as_version=4)
            key_lines = set().union(*(_lines(c.source) for c in nb.cells))
            assert all(own <= key_lines for own in solutions), (lang, name)


def test_the_two_editions_share_their_code(edition):
    for name in LESSONS:
        en, ru = (nbformat.read(edition / lang / f"{name}.ipynb", as_version=4) for lang in LANGS)
        assert check_parity(en, ru, name) == []


@pytest.mark.notebooks
@pytest.mark.timeout(900)  # every lesson, two kernels at a time, each under grade_folder's 300 s
def test_the_edition_runs_top_to_bottom_saying_not_yet(edition, tmp_path):
    chosen = {name: scripts_support.second_run_language(name, "student") for name in LESSONS}
    assert set(chosen.values()) == set(LANGS), "both languages must run"
    submitted = tmp_path / "submitted"
    for name, lang in chosen.items():
        (submitted / lang).mkdir(parents=True, exist_ok=True)
        shutil.copy(edition / lang / f"{name}.ipynb", submitted / lang)
    executed, table = tmp_path / "executed", tmp_path / "grades.csv"
    results = grade_folder(submitted, table, timeout=300, executed=executed, jobs=2)
    assert sorted(r.notebook for r in results) == sorted(
        f"{lang}/{name}.ipynb" for name, lang in chosen.items()
    )
    for result in results:
        assert result.run == "ok", (result.notebook, result.run)
        assert list(result.values) == exercises_of(result.lesson), result.notebook
        assert set(result.values.values()) <= {NOT_YET}, (result.notebook, result.values)
    with table.open(encoding="utf-8") as handle:  # the teacher's table says so too
        rows = {row["notebook"]: row for row in csv.DictReader(handle)}
    for name, lang in chosen.items():
        row = rows[f"{lang}/{name}.ipynb"]
        assert [row[e] for e in exercises_of(name[:2])] == [NOT_YET] * len(exercises_of(name[:2]))
    not_yet = {"en": "Not yet:", "ru": "Пока нет:"}
    for name, lang in chosen.items():
        shown = _outputs_text(nbformat.read(executed / lang / f"{name}.ipynb", as_version=4))
        assert not CORRECT.search(shown), (lang, name)
        # the grader runs each graded exercise alone (not the ungraded exit quiz of lesson 03)
        assert shown.count(not_yet[lang]) == len(exercises_of(name[:2])), (lang, name)
