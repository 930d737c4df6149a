"""The student edition of a lesson: the teacher's answer key without the reference solutions.

The committed notebooks (`notebooks/<lang>/`) are the key. The student edition drops every
collapsed solution cell and the self-check cell right after it, clears the outputs of the exercise
cells and gives the cells nbgrader metadata (answer cells and locked self-check cells), so a
course that uses nbgrader can import them. `scripts/nbbuild.py --student` writes it, the kit ships
it, and the grader (`helpers.grade`) reads the key through it.
"""

from __future__ import annotations

import copy
import re

import nbformat

from helpers.lessons import CHECK_CALL

EXERCISES_IMPORT = re.compile(r"\bhelpers\.exercises\b")
# A sentence of the exercise prose that points at the reference solution, which is not there.
SOLUTION_SENTENCE = re.compile(
    r"[^.!?\n]*(?:reference solution|эталонн\w* решени)[^.!?]*[.!?] ?", re.IGNORECASE
)
# The kernel the student edition asks for: the project's venv, registered under this name
# (`python -m ipykernel install --sys-prefix --name toolcall-series`, or `--user` on a JupyterHub),
# so a hub opens each notebook in it instead of its default kernel without the packages.
STUDENT_KERNEL = "toolcall-series"
# Seconds the grader, nbbuild, the tests and nbval (pyproject.toml, compared by a test) wait for a
# kernel to start: nbclient's 60 s was too short beside two busy cores.
KERNEL_START_SECONDS = 240
STUDENT_NOTE = {
    "en": "*Student edition: the reference solutions are not included; your teacher has them.*",
    "ru": "*Версия для студентов: эталонных решений здесь нет, они есть у преподавателя.*",
}


def is_solution(cell: nbformat.NotebookNode) -> bool:
    """A collapsed code cell: a reference solution (`code(..., hidden=True)`)."""
    return cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden", False)


def checks_called(cell: nbformat.NotebookNode) -> list[str]:
    """The self-check functions a code cell calls, e.g. ["check_schema"]."""
    return CHECK_CALL.findall(cell.source) if cell.cell_type == "code" else []


def exercise_start(cells: list[nbformat.NotebookNode]) -> int:
    """Index of the first exercise cell: after the prose that precedes the first exercise import."""
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and EXERCISES_IMPORT.search(cell.source):
            while i > 0 and cells[i - 1].cell_type == "code":
                i -= 1
            return i
    return len(cells)


def _nbgrader(grade_id: str, *, solution: bool) -> dict:
    """nbgrader cell metadata: an answer cell the student edits, or a locked read-only cell."""
    return {
        "grade": False,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": 3,
        "solution": solution,
    }


def student_notebook(key: nbformat.NotebookNode, lesson: str, lang: str) -> nbformat.NotebookNode:
    """The student edition of one answer-key notebook (the key itself is left unchanged).

    Drops every collapsed solution cell and the self-check cell right after it, clears the outputs
    of the exercise cells, and removes the prose sentence that points at the solution."""
    nb = copy.deepcopy(key)
    cells, after_solution = [], False
    for cell in nb.cells:
        if is_solution(cell):
            after_solution = True
            continue
        if after_solution and checks_called(cell):
            after_solution = False
            continue
        after_solution = False
        cells.append(cell)
    start = exercise_start(cells)
    prefix = lesson[:2]
    for i in range(max(start - 1, 0), len(cells)):
        cell = cells[i]
        if cell.cell_type == "markdown":
            cell.source = SOLUTION_SENTENCE.sub("", cell.source).rstrip()
            continue
        cell.outputs, cell.execution_count = [], None
        checks = checks_called(cell)
        if checks:
            cell.metadata["nbgrader"] = _nbgrader(f"{prefix}-{checks[0]}", solution=False)
            # JupyterLab (and Notebook 7) refuse to edit or delete such a cell.
            cell.metadata["editable"] = False
            cell.metadata["deletable"] = False
            before = cells[i - 1] if i > start else None
            if before is not None and before.cell_type == "code" and not checks_called(before):
                before.metadata["nbgrader"] = _nbgrader(
                    f"{prefix}-{checks[0]}-answer", solution=True
                )
    if start < len(cells):
        note = nbformat.v4.new_markdown_cell(STUDENT_NOTE[lang])
        note["id"] = f"{prefix}-student-note"
        cells.insert(start, note)
    nb.cells = cells
    nb.metadata["kernelspec"] = {
        "display_name": f"Python ({STUDENT_KERNEL})",
        "language": "python",
        "name": STUDENT_KERNEL,
    }
    return nb
