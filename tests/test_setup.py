"""The set-up promises of the README hold: CI runs its test command, kernels use this checkout."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import scripts_support

from helpers.lessons import lesson_names
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


def kernel_helpers_file(pythonpath: str, cwd: Path) -> Path:
    """Where `helpers` comes from in a Jupyter kernel started with `pythonpath`, as nbval starts it."""
    from jupyter_client.manager import start_new_kernel

    printed: list[str] = []

    def keep_stdout(msg: dict) -> None:
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])

    env = dict(os.environ, PYTHONPATH=pythonpath)
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(cwd))
    try:
        code = "import helpers; print(helpers.__file__)"
        reply = client.execute_interactive(code, timeout=60, output_hook=keep_stdout)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return Path("".join(printed).strip()).resolve()


def test_readme_lesson_map_links_exist_and_use_the_lessons_titles():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\[([^\]]+)\]\((notebooks/(?:en|ru)/\d\d_\w+\.ipynb)\)", text)
    lessons = lesson_names()
    assert len(links) == 2 * len(lessons), "the lesson map links every lesson in both languages"
    for title, path in links:
        notebook = json.loads((REPO_ROOT / path).read_text(encoding="utf-8"))
        heading = "".join(notebook["cells"][0]["source"]).splitlines()[0]
        assert heading == f"# {title}", f"{path}: README says {title!r}, the notebook {heading!r}"


@pytest.mark.notebooks
def test_kernels_import_the_helpers_of_this_checkout(tmp_path):
    """A kernel gets this checkout's `helpers` even when another copy is importable (say, a venv
    installed editable from another checkout): the session puts the checkout first."""
    other = tmp_path / "other-checkout"
    (other / "helpers").mkdir(parents=True)
    (other / "helpers" / "__init__.py").write_text('"""Another checkout\'s helpers."""\n')
    notebooks = REPO_ROOT / "notebooks" / "en"
    assert kernel_helpers_file(str(other), notebooks).is_relative_to(other)  # the trap is real
    session = os.pathsep.join([os.environ["PYTHONPATH"], str(other)])  # as conftest leaves it
    assert kernel_helpers_file(session, notebooks).is_relative_to(REPO_ROOT.resolve())
    nbbuild = scripts_support.nbbuild()  # its kernels get the same PYTHONPATH order
    assert nbbuild.checkout_first(REPO_ROOT, str(other)).split(os.pathsep) == [
        str(REPO_ROOT),
        str(other),
    ]
    assert nbbuild.checkout_first(REPO_ROOT, f"{REPO_ROOT}{os.pathsep}") == str(REPO_ROOT)


def test_helpers_import_jsonschema_without_the_iri_grammar_and_lose_nothing():
    """helpers import jsonschema with `rfc3987_syntax` hidden (Jupyter installs it; its Earley
    grammar costs every kernel ~1 s), yet validation works and the package stays importable."""
    probe = (
        "import importlib.util, json, sys\n"
        "from helpers.arguments import jsonschema, validate_arguments\n"
        "hidden = 'rfc3987_syntax' not in sys.modules\n"
        "schema = {'type': 'object', 'properties': {'n': {'type': 'integer', 'minimum': 1}}}\n"
        "problems = validate_arguments({'n': 0}, schema)\n"
        "installed = importlib.util.find_spec('rfc3987_syntax') is not None\n"
        "if installed:\n"
        "    import rfc3987_syntax\n"
        "print(json.dumps([hidden, problems, installed, 'rfc3987_syntax' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    hidden, problems, installed, imported_after = json.loads(done.stdout)
    assert hidden, "importing helpers.arguments compiled the IRI grammar"
    assert problems == ["arguments.n must be >= 1, got 0"]
    assert imported_after == installed  # importable again afterwards, when it is installed
