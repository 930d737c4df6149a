"""Relative links in README.md, docs/*.md and the lessons' markdown resolve, files and anchors
(issue 30: a broken link in README passed the suite). The rules: tests/links.py."""

from __future__ import annotations

import shutil

import pytest
from links import anchors, link_problems, link_targets, markdown_of, slug

from helpers.paths import REPO_ROOT

DOCUMENTS = [
    REPO_ROOT / "README.md",
    *sorted((REPO_ROOT / "docs").glob("*.md")),
    *sorted((REPO_ROOT / "notebooks").glob("*/*.ipynb")),
]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_relative_link_resolves(path):
    problems = link_problems(path, markdown_of(path), REPO_ROOT)
    assert not problems, "\n".join(problems)


def test_the_links_are_found():
    readme = markdown_of(REPO_ROOT / "README.md")
    assert "docs/lab_setup.md" in link_targets(readme)
    assert "https://example.org" not in link_targets("[x](https://example.org) [y](mailto:a@b)")
    assert link_targets("`[x](no.md)`\n```\n[y](no.md)\n```\n[z](yes.md)") == ["yes.md"]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("5. The lesson map", "5-the-lesson-map"),
        ("Python 3.10+ on Linux", "python-310-on-linux"),
        ("What `--no-execute` keeps", "what---no-execute-keeps"),
        ("Что вы сделаете", "что-вы-сделаете"),
        ("[Lesson 03](03_streaming.ipynb): streams", "lesson-03-streams"),
    ],
)
def test_headings_get_githubs_slugs(heading, anchor):
    assert slug(heading) == anchor


def test_repeated_headings_and_explicit_ids_are_anchors():
    text = '## Setup\n\n## Setup\n\n<a id="reference"></a>\n```\n## not a heading\n```'
    assert anchors(text) == {"setup", "setup-1", "reference"}


@pytest.fixture
def repo(tmp_path):
    """README.md and docs/ copied (not the notebooks the README links to): a broken link is
    planted in the copy."""
    shutil.copy(REPO_ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(REPO_ROOT / "docs", tmp_path / "docs")
    return tmp_path


def test_a_link_to_a_missing_file_is_caught(repo):
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8").replace("(docs/lab_setup.md)", "(docs/lab-setup.md)")
    problems = [p for p in link_problems(readme, text, repo) if "lab-setup" in p]
    assert problems and all("'docs/lab-setup.md', which does not exist" in p for p in problems)
    assert problems[0].startswith("README.md: the link (docs/lab-setup.md)")


def test_a_link_to_a_missing_anchor_is_caught(repo):
    guide = repo / "docs" / "authoring.md"
    text = guide.read_text(encoding="utf-8") + "\nSee [the loop](#the-test-loops).\n"
    assert link_problems(guide, text.replace("#the-test-loops", "#the-test-loop"), repo) == []
    (problem,) = link_problems(guide, text, repo)
    assert "points at #the-test-loops, which this file does not define" in problem
    readme = repo / "README.md"
    linked = readme.read_text(encoding="utf-8") + "\n[how](docs/authoring.md#writing-a-lessons)\n"
    (problem,) = [p for p in link_problems(readme, linked, repo) if "authoring" in p]
    assert "which docs/authoring.md does not define" in problem
