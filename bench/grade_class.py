"""Grade a made-up class the way a teacher does: 25 students x lessons 00-03, `--jobs 2`.

    python bench/grade_class.py [--students 25] [--jobs 2] [--lessons 00 01 02 03]

Each student hands in the student edition of every lesson; each exercise is, by a seeded draw,
solved (60 %: the key's solution with one line of the student's own added, so it is not a
verbatim paste and runs in its kernel), a wrong attempt (25 %: the starter with a line added) or
left untouched (15 %: the grader runs the untouched starter once per language and reuses the
verdict). Half the class has the Russian edition. Prints the wall time of the whole grading, the
kernels run, and per notebook the mean, median and slowest time, and checks that every solved
exercise passed and nothing else did (a grader that is fast because it is wrong is no result).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import grade  # noqa: E402
from helpers.edition import CHECK_CALL, is_solution, student_notebook  # noqa: E402
from helpers.lessons import lesson_names  # noqa: E402
from helpers.paths import NOTEBOOKS_DIR  # noqa: E402


def _solutions(key: nbformat.NotebookNode) -> dict[str, str]:
    """The key's solution cells by the check they answer (the check cell just before them)."""
    found, last = {}, ""
    for cell in key.cells:
        if cell.cell_type != "code":
            continue
        if is_solution(cell):
            found[last] = cell.source
        elif CHECK_CALL.search(cell.source):
            last = CHECK_CALL.findall(cell.source)[0]
    return found


def make_class(folder: Path, students: int, lessons: list[str]) -> dict[tuple[str, str], str]:
    """Write the submissions; return what each (notebook, exercise) should get."""
    draw = random.Random(20261201)
    expected = {}
    for number in range(students):
        student, lang = f"student{number:02d}", ("en", "ru")[number % 2]
        for lesson in lessons:
            name = next(n for n in lesson_names() if n.startswith(lesson))
            key = nbformat.read(NOTEBOOKS_DIR / lang / f"{name}.ipynb", as_version=4)
            solutions = _solutions(key)
            nb = student_notebook(key, name, lang)
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
                if not grade_id.endswith("-answer"):
                    continue
                check = grade_id[3:].removesuffix("-answer")
                if f"{lesson}:{check}" not in grade.exercises_of(lesson):
                    continue  # not graded (lesson 03's exit quiz)
                roll = draw.random()
                if roll < 0.6:
                    cell.source = solutions[check] + f"\n\nauthor = {student!r}"
                    verdict = grade.PASSED
                elif roll < 0.85:
                    cell.source += "\n\nattempt = 1"
                    verdict = grade.NOT_YET
                else:
                    verdict = grade.NOT_YET
                expected[(f"{student}/{name}.ipynb", f"{lesson}:{check}")] = verdict
            path = folder / student / f"{name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, path)
    return expected


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=25)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--lessons", nargs="+", default=["00", "01", "02", "03"])
    args = parser.parse_args(argv)

    kernels, per_notebook = [0], []
    run_exercise, grade_notebook = grade.run_exercise, grade.grade_notebook

    def counted(*a, **k):
        kernels[0] += 1
        return run_exercise(*a, **k)

    def timed(*a, **k):
        started = time.monotonic()
        result = grade_notebook(*a, **k)
        per_notebook.append(time.monotonic() - started)
        return result

    grade.run_exercise, grade.grade_notebook = counted, timed
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        expected = make_class(folder, args.students, args.lessons)
        started = time.monotonic()
        results = grade.grade_folder(folder, Path(tmp) / "grades.csv", jobs=args.jobs)
        wall = time.monotonic() - started
    got = {(r.notebook, e): v for r in results for e, v in r.values.items()}
    wrong = sorted(k for k, v in expected.items() if got.get(k) != v)
    attempted = sum(1 for r in results for a in r.attempted.values() if a == "yes")
    print(
        f"{args.students} students x lessons {' '.join(args.lessons)}: {len(results)} notebooks, "
        f"{len(expected)} exercises ({attempted} attempted), jobs {args.jobs}"
    )
    print(f"wall time: {wall:.0f} s ({wall / 60:.1f} min); kernels started: {kernels[0]}")
    print(
        f"per notebook: mean {statistics.mean(per_notebook):.1f} s, median "
        f"{statistics.median(per_notebook):.1f} s, slowest {max(per_notebook):.1f} s; per kernel "
        f"{wall * args.jobs / max(1, kernels[0]):.1f} s of a job slot"
    )
    print(f"verdicts as expected: {len(expected) - len(wrong)} of {len(expected)}")
    for notebook, exercise in wrong[:10]:
        print(f"  unexpected: {notebook} {exercise}: {got.get((notebook, exercise))}")


if __name__ == "__main__":
    main()
