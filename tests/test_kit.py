"""The student kit (scripts/build_kit.py): what it holds, what it leaves out, and that it runs.

The kit is built once into a temporary folder; the run test unpacks the zip elsewhere and runs
lesson 01 from it in a kernel that imports `helpers` from the unpacked kit, not from this checkout.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import nbformat
import pytest
import scripts_support

from helpers.edition import KERNEL_START_SECONDS
from helpers.grade import exercises_of
from helpers.lessons import lesson_names

build_kit = scripts_support.script("build_kit")
LESSONS = list(lesson_names())
LANGS = scripts_support.LANGS


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("kit")
    build_kit.main(["--out", str(out)])
    return out / build_kit.KIT_NAME, out / f"{build_kit.KIT_NAME}.zip"


def solutions(name: str, lang: str) -> list[str]:
    """The reference solutions of a lesson, as the lesson's source writes them (its collapsed
    code cells), in `lang`: the text the kit must not contain."""
    cells = scripts_support.lesson_cells(name)
    found = [getattr(c, lang).strip() for c in cells if c.kind == "code" and c.hidden]
    assert found or not exercises_of(name[:2]), name  # a lesson with exercises has solutions
    return found


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_kit_has_the_student_notebooks_helpers_data_and_readmes(kit):
    folder, _ = kit
    files = _files(folder)
    for lang in LANGS:
        assert {f"notebooks/{lang}/{name}.ipynb" for name in LESSONS} <= files
    for needed in (
        "README.md",
        "README.ru.md",
        "requirements.txt",
        "pyproject.toml",
        "helpers/__init__.py",
        "helpers/exercises/n01.py",
        "data/recordings/00_start.json",
    ):
        assert needed in files, needed
    assert any(f.startswith("data/tokenizers/") for f in files)


def test_the_kit_leaves_out_the_key_sources_tests_and_teacher_files(kit):
    folder, _ = kit
    files = _files(folder)
    tops = {f.split("/", 1)[0] for f in files}
    assert tops == {"notebooks", "helpers", "data", *(f for f in files if "/" not in f)}
    assert not any(f.startswith(("notebooks/src/", "tests/", "scripts/", "docs/")) for f in files)
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)
    for lang in LANGS:
        for name in LESSONS:
            nb = nbformat.read(folder / "notebooks" / lang / f"{name}.ipynb", as_version=4)
            shipped = "\n".join(c.source for c in nb.cells)
            leaked = [s[:40] for s in solutions(name, lang) if s in shipped]
            assert leaked == [], (lang, name, leaked)
            assert not any(c.metadata.get("jupyter") for c in nb.cells), (lang, name)
            shown = "".join(str(o) for c in nb.cells for o in c.get("outputs", []))
            assert not re.search(r"Correct!|Верно!", shown), (lang, name)


def test_the_zip_holds_exactly_the_folder(kit):
    folder, archive = kit
    with zipfile.ZipFile(archive) as zipped:
        names = {n.split("/", 1)[1] for n in zipped.namelist()}
        assert all(n.startswith(f"{build_kit.KIT_NAME}/") for n in zipped.namelist())
    assert names == _files(folder)


def test_requirements_and_readmes_are_for_students(kit):
    folder, _ = kit
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8")
    assert "openai" in requirements and "-e ." in requirements.splitlines()
    assert not re.search(r"^(pytest|nbval|hypothesis)", requirements, re.M)
    for readme, lang in (("README.md", "en"), ("README.ru.md", "ru")):
        text = (folder / readme).read_text(encoding="utf-8")
        assert f"jupyter lab notebooks/{lang}/00_start.ipynb" in text
        assert f"--name {build_kit.KERNEL}" in text
        assert "Restart Kernel and Run All Cells" in text
        # the index (from scripts/registry.py) links every lesson's notebook in the kit
        linked = re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", text)
        assert linked == [f"notebooks/{lang}/{name}.ipynb" for name in LESSONS], readme
        assert set(linked) <= _files(folder)
    assert "Перед занятием" in (folder / "README.ru.md").read_text(encoding="utf-8")


def test_check_cells_are_locked_and_the_kernel_is_named(kit):
    folder, _ = kit
    for lang in LANGS:
        for name in LESSONS:
            nb = nbformat.read(folder / "notebooks" / lang / f"{name}.ipynb", as_version=4)
            assert nb.metadata["kernelspec"]["name"] == build_kit.KERNEL
            checks = [c for c in nb.cells if c.cell_type == "code" and "check_" in c.source]
            locked = [c for c in checks if c.metadata.get("nbgrader", {}).get("locked")]
            quiz = name == "03_streaming"  # the class's exit quiz: locked too, not graded
            assert len(locked) == len(exercises_of(name[:2])) + quiz, (lang, name)
            for cell in locked:
                assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
            answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
            assert all(c.metadata.get("editable", True) for c in answers)


@pytest.mark.notebooks
def test_a_lesson_runs_from_the_unpacked_zip(kit, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    _, archive = kit
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(tmp_path)
    root = tmp_path / build_kit.KIT_NAME
    path = root / "notebooks" / "ru" / "01_tools_schema.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import helpers\nprint(helpers.__file__)"))
    for name in ("LLM_MODE", "LLM_REPLAY_DIR", "LLM_GRADE_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONPATH", str(root))  # the kit's helpers, as its `pip install -e .`
    NotebookClient(
        nb,
        timeout=120,
        startup_timeout=KERNEL_START_SECONDS,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    errors = [
        c.source[:60]
        for c in nb.cells
        if any(o.get("output_type") == "error" for o in c.get("outputs", []))
        and "raises-exception" not in c.metadata.get("tags", [])
    ]
    assert errors == []
    shown = "".join(str(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []))
    assert shown.count("Пока нет:") == len(exercises_of("01"))
    assert Path(nb.cells[-1].outputs[0]["text"].strip()) == root / "helpers" / "__init__.py"
