"""Fixtures shared by the replay tests; the hypothesis profile is chosen before any test imports."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import hypothesis_profiles  # noqa: F401  (registers and loads the dev/ci profile)
import pytest
from test_replay_fixtures import interactions, write_cassette

from helpers.replay import ReplayServer


def _share_one_ssl_context() -> None:
    """Every OpenAI client builds a fresh SSL context, loading the system's CA bundle (~25 ms),
    though the tests only speak plain HTTP to 127.0.0.1: ~120 clients cost 3 s of the unit loop.
    In the test processes, clients share one context (kernels and real use are unchanged)."""
    try:
        import httpcore2
    except ImportError:  # another HTTP stack under openai: nothing to share
        return
    if hasattr(httpcore2, "default_ssl_context"):
        httpcore2.default_ssl_context = functools.cache(httpcore2.default_ssl_context)


_share_one_ssl_context()


def _grade_against_a_private_checkout() -> None:
    """The grader watches `helpers/` and `data/` of its checkout and puts back whatever changed
    while a kernel ran. In the test run it watches a copy taken when this process started, so a
    developer who edits a helper while the suite runs keeps the edit (before, the grading tests
    undid it without a word) and the tests' own cheats write into the copy, not the checkout."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    import helpers.grade

    folder = Path(tempfile.mkdtemp(prefix="grader-checkout-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for tree in helpers.grade.GRADER_TREES:
        shutil.copytree(
            helpers.grade.CHECKOUT / tree,
            folder / tree,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    helpers.grade.CHECKOUT = folder
    helpers.grade.UNDONE_IN = folder  # what the grader puts back is kept there, then removed


_grade_against_a_private_checkout()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayServer]:
    """A replay server over the standard test cassette, one per test module."""
    folder = tmp_path_factory.mktemp("cassettes")
    write_cassette(folder, "lesson", interactions())
    with ReplayServer(folder) as running:
        yield running
