"""The lab wheelhouse (scripts/wheelhouse.py): outside the project, bounded, complete for the lab's OS.

Offline, in every run: each committed lock (scripts/wheelhouse-locks/TARGET.json, the files
`--target TARGET --write-lock` downloaded and their own METADATA) is resolved again for its target
(Windows x64, macOS arm64, Linux x86-64), with that target's markers and wheel tags, and must
cover requirements.txt; removing a platform-only package (pywinpty, colorama, appnope, pexpect)
must make it fail, naming the package.

The tests marked `registry` download from the package index, so they run only when asked:
`LLM_TEST_REGISTRY=1 .venv/bin/pytest -m registry` (the default run needs no network).
One builds a real Windows wheelhouse with uv and pip and checks the downloaded files. The
end-to-end test downloads the wheels for this machine, then, in a network namespace with no
network at all (`unshare -n`, loopback only), creates a fresh venv, installs with `--no-index
--find-links` and runs lesson 00 in that venv's kernel. Where `unshare` is not allowed (not root),
the offline half runs with pip's index switched off and every proxy variable pointing at a dead
loopback port instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import scripts_support

from helpers.edition import KERNEL_START_SECONDS

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


LAB_TARGETS = ["win_amd64-py3.11", "macosx_11_0_arm64-py3.12", "manylinux_2_17_x86_64-py3.11"]


def _lock(name: str) -> tuple:
    path = wheelhouse.LOCKS / f"{name}.json"
    assert path.exists(), (
        f"no lock for {name}: python scripts/wheelhouse.py --target {name} --write-lock"
    )
    target, wheels = wheelhouse.read_lock(path)
    assert target.name == name
    return target, wheels


def _without(wheels: list, name: str) -> list:
    kept = [wheel for wheel in wheels if wheel.name != name]
    assert len(kept) == len(wheels) - 1, f"{name} is not in the lock"
    return kept


def test_targets_map_to_uv_platforms_markers_and_wheel_tags():
    windows = wheelhouse.parse_target("win_amd64-py3.11")
    assert windows.uv_platform == "x86_64-pc-windows-msvc" and windows.python == (3, 11)
    assert windows.markers["sys_platform"] == "win32" and windows.markers["os_name"] == "nt"
    mac = wheelhouse.parse_target("macosx_11_0_arm64-py3.12")
    assert mac.uv_platform == "aarch64-apple-darwin" and mac.markers["platform_system"] == "Darwin"
    assert (
        mac.uv_env == {"MACOSX_DEPLOYMENT_TARGET": "11.0"} and "macosx_11_0_arm64" in mac.platforms
    )
    linux = wheelhouse.parse_target("manylinux_2_17_x86_64-py3.11")
    assert linux.uv_platform == "x86_64-manylinux_2_17"
    # a glibc 2.17 system also installs the older manylinux wheels, under both spellings
    assert {"manylinux2014_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"} <= set(
        linux.platforms
    )
    assert "manylinux_2_28_x86_64" not in linux.platforms
    for wrong in (
        "win_amd64",
        "win_amd64-3.11",
        "freebsd_14_amd64-py3.11",
        "manylinux_2_20_x86_64-py3.11",
    ):
        with pytest.raises(wheelhouse.WheelhouseError, match="--target"):
            wheelhouse.parse_target(wrong)


@pytest.mark.parametrize("name", LAB_TARGETS)
def test_each_lab_lock_resolves_offline_for_its_target(name):
    target, wheels = _lock(name)
    assert wheelhouse.check_wheels(wheelhouse.lab_requirements(), wheels, target) == []


@pytest.mark.parametrize(
    "name, package, needed_by",
    [
        ("win_amd64-py3.11", "pywinpty", "terminado"),
        ("win_amd64-py3.11", "colorama", ""),
        ("macosx_11_0_arm64-py3.12", "appnope", "ipykernel"),
        ("manylinux_2_17_x86_64-py3.11", "pexpect", "ipython"),
    ],
)
def test_a_missing_platform_only_package_is_named(name, package, needed_by):
    target, wheels = _lock(name)
    problems = wheelhouse.check_wheels(
        wheelhouse.lab_requirements(), _without(wheels, package), target
    )
    assert any(p.startswith(f"{package} missing") and needed_by in p for p in problems), problems


def test_markers_are_the_targets_not_this_machines():
    """What pip gets wrong for another platform: the Windows set lacks Linux's pexpect and
    ptyprocess, which is right on Windows and wrong under this machine's Linux markers."""
    target, wheels = _lock("win_amd64-py3.11")
    linux = wheelhouse.parse_target("manylinux_2_17_x86_64-py3.11")
    as_if_linux = replace(target, markers=linux.markers)
    problems = wheelhouse.check_wheels(wheelhouse.lab_requirements(), wheels, as_if_linux)
    assert {p.split()[0] for p in problems} == {"pexpect", "ptyprocess"}


def test_wrong_platform_version_and_python_are_problems():
    target, wheels = _lock("win_amd64-py3.11")
    by_name = {wheel.name: wheel for wheel in wheels}
    pyzmq = by_name["pyzmq"]
    linux_file = pyzmq.file.rsplit("-", 1)[0] + "-manylinux_2_28_x86_64.whl"
    openai = by_name["openai"]
    old_openai = openai.file.replace(f"-{openai.version}-", "-1.0.0-")
    bumped = [
        replace(pyzmq, file=linux_file),
        replace(openai, file=old_openai),
        replace(by_name["six"], requires_python=">=3.13"),
    ]
    changed = {"pyzmq", "openai", "six"}
    kept = [wheel for wheel in wheels if wheel.name not in changed] + bumped
    problems = wheelhouse.check_wheels(wheelhouse.lab_requirements(), kept, target)
    assert any(linux_file in p and "not installable on win_amd64-py3.11" in p for p in problems)
    assert any(old_openai in p and "openai<4,>=3.50" in p for p in problems), problems
    assert any("six-" in p and "requires Python >=3.13" in p for p in problems)
    twice = wheelhouse.check_wheels(["six"], [by_name["six"], by_name["six"]], target)
    assert twice and "two files" in twice[0]


def test_a_new_requirement_without_a_lock_entry_fails():
    target, wheels = _lock("manylinux_2_17_x86_64-py3.11")
    problems = wheelhouse.check_wheels(
        wheelhouse.lab_requirements() + ["no-such-lab-package>=1"], wheels, target
    )
    assert problems == [
        "no-such-lab-package missing (no-such-lab-package>=1, needed by the requirements)"
    ]


@pytest.mark.registry
def test_a_windows_wheelhouse_built_here_is_complete(tmp_path):
    """uv resolves for Windows, pip downloads that list, the files' own metadata covers it."""
    target = wheelhouse.parse_target("win_amd64-py3.11")
    wheels = wheelhouse.build(target, tmp_path / "win")
    names = {wheel.name for wheel in wheels}
    assert {"pywinpty", "colorama"} <= names and not {"pexpect", "ptyprocess"} & names
    on_disk = wheelhouse.read_folder(tmp_path / "win")
    assert wheelhouse.check_wheels(wheelhouse.lab_requirements(), on_disk, target) == []


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
                nb, timeout=120, startup_timeout=STARTUP, kernel_name="python3",
                resources={"metadata": {"path": str(path.parent)}},
            ).execute()
            shown = "".join(
                str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
                for c in nb.cells
                for o in c.get("outputs", [])
            )
            print("**replay** mode" in shown)  # the setup cell's line
            """
        ).replace("STARTUP", str(KERNEL_START_SECONDS)),
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
