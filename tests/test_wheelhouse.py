"""The lab wheelhouse (scripts/wheelhouse.py): outside the project, bounded, and enough offline.

The two tests marked `registry` download from the package index, so they run only when asked:
`LLM_TEST_REGISTRY=1 .venv/bin/pytest -m registry` (the default run needs no network).
The end-to-end test downloads the wheels (this needs the package index pip is configured with),
then, in a network namespace with no network at all (`unshare -n`, loopback only), creates a
fresh venv, installs with `--no-index --find-links` and runs lesson 00 in that venv's kernel.
Where `unshare` is not allowed (not root), the offline half runs with pip's index switched off
and every proxy variable pointing at a dead loopback port instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import scripts_support

wheelhouse = scripts_support.script("wheelhouse")
ROOT = wheelhouse.ROOT
DEAD = "http://127.0.0.1:9"


def _netns_works() -> bool:
    """True when this process may run a command in a new network namespace."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


def _offline(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a shell command with no network: pip sees only the wheelhouse, nothing leaves."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "LLM_MODE": "replay"})
    for name in ("LLM_REPLAY_DIR", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(name, None)
    if _netns_works():
        argv = ["unshare", "-n", "sh", "-c", f"ip link set lo up && {command}"]
    else:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env[name] = DEAD
        argv = ["sh", "-c", command]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_requirements_lose_the_project_line_and_keep_the_packages(tmp_path):
    (tmp_path / "base.txt").write_text("# c\nopenai>=3.50,<4  # why\n\n-e .\n", encoding="utf-8")
    (tmp_path / "dev.txt").write_text("-r base.txt\nruff==0.17.6\n.\n", encoding="utf-8")
    assert wheelhouse.requirements_without_project(tmp_path / "dev.txt") == [
        "openai>=3.50,<4",
        "ruff==0.17.6",
    ]
    real = wheelhouse.requirements_without_project(ROOT / "requirements.txt")
    assert "openai>=3.50,<4" in real and not any(line.startswith("-e") for line in real)


def test_a_destination_inside_the_project_is_refused_before_pip_runs(tmp_path):
    for dest in (ROOT / "wheelhouse", ROOT / "notebooks" / "w", ROOT):
        with pytest.raises(wheelhouse.WheelhouseError, match="inside the project"):
            wheelhouse.download(dest)
        assert dest == ROOT or not dest.exists()
    with pytest.raises(SystemExit, match="inside the project"):
        wheelhouse.main(["--dest", str(ROOT / "wheelhouse")])


@pytest.mark.registry
def test_pip_is_stopped_when_the_folder_passes_the_limit(tmp_path):
    """A real download with a 3 MB limit: the folder passes it within seconds and pip is killed."""
    dest = tmp_path / "small"
    with pytest.raises(wheelhouse.WheelhouseError, match="passed 3 MB, pip was stopped"):
        wheelhouse.download(dest, max_mb=3, poll=0.2)
    assert wheelhouse.folder_size(dest) < 200 * 2**20  # stopped long before the full set


@pytest.mark.registry
@pytest.mark.notebooks
def test_wheelhouse_installs_offline_into_a_fresh_venv_and_a_lesson_runs(tmp_path):
    dest = tmp_path / "wheelhouse"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "wheelhouse.py"), "--dest", str(dest)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    files = sorted(p.name for p in dest.iterdir())
    size = wheelhouse.folder_size(dest)
    assert size < 400 * 2**20, f"{size / 2**20:.0f} MB"  # about 100 MB for Linux x86-64, 3.11
    assert not any(name.startswith("toolcall") for name in files), "the project was packed"
    assert any(name.startswith("setuptools-") for name in files)
    venv = tmp_path / "venv"
    runner = tmp_path / "run_lesson.py"
    runner.write_text(
        textwrap.dedent(
            """
            import sys
            from pathlib import Path

            import nbformat
            from nbclient import NotebookClient

            path = Path(sys.argv[1])
            nb = nbformat.read(path, as_version=4)
            NotebookClient(
                nb, timeout=120, kernel_name="python3",
                resources={"metadata": {"path": str(path.parent)}},
            ).execute()
            shown = "".join(
                str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
                for c in nb.cells
                for o in c.get("outputs", [])
            )
            print("**replay** mode" in shown)  # the setup cell's line
            """
        ),
        encoding="utf-8",
    )
    installed = _offline(
        f"{sys.executable} -m venv {venv} && {venv}/bin/pip install -q --no-compile "
        f"--no-index --find-links {dest} -r requirements.txt",
        cwd=ROOT,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    ran = _offline(f"{venv}/bin/python {runner} notebooks/en/00_start.ipynb", cwd=ROOT)
    assert ran.returncode == 0, ran.stderr[-3000:]  # a cell that raises fails execute()
    assert ran.stdout.strip().splitlines()[-1] == "True", ran.stdout
