"""The set-up promises of the README hold: CI runs its test command, torch stays out."""

import json
import re
from importlib.metadata import PackageNotFoundError, version

import pytest

from helpers.paths import REPO_ROOT


def readme_command(kind: str) -> str:
    """The shell line in the README's code block marked `<!-- kind -->`."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- {kind} -->\s*```(?:bash|sh)?\n(.+?)\n```", text)
    assert match, f"README has no command block marked <!-- {kind} -->"
    return match.group(1).strip()


def test_ci_runs_the_readme_test_command():
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_command("test") in ci.splitlines()


def test_run_and_test_commands_install_the_same_requirements():
    for kind in ("run", "test"):
        assert "pip install -r requirements.txt" in readme_command(kind)
    assert "jupyter lab" in readme_command("run")


def test_torch_is_not_installed():
    with pytest.raises(PackageNotFoundError):
        version("torch")


def test_readme_lesson_map_links_exist_and_use_the_lessons_titles():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\[([^\]]+)\]\((notebooks/(?:en|ru)/\d\d_\w+\.ipynb)\)", text)
    lessons = list((REPO_ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
    assert len(links) == 2 * len(lessons), "the lesson map links every lesson in both languages"
    for title, path in links:
        notebook = json.loads((REPO_ROOT / path).read_text(encoding="utf-8"))
        heading = "".join(notebook["cells"][0]["source"]).splitlines()[0]
        assert heading == f"# {title}", f"{path}: README says {title!r}, the notebook {heading!r}"
