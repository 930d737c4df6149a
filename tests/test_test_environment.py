"""The test run's own environment (conftest.py): replay mode, no key, no language, whatever the
developer's shell exports; kernels on Unix sockets, not on TCP ports that another process may take."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
POLLUTED = {
    "LLM_MODE": "live",
    "LLM_LANG": "ru",
    "LLM_REPLAY_DIR": "/nowhere",
    "KIMI_BASE_URL": "http://127.0.0.1:9/v1",
    "KIMI_API_KEY": "sk-LEAK-kimi-0123456789",
    "KIMI_MODEL": "kimi-k2.6",
    "QWEN_API_KEY": "sk-LEAK-qwen-0123456789",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "all_proxy": "socks://127.0.0.1:9",
}
# What a kernel the test run starts must see: replay, the replay key, English, ipc transport.
KERNEL_CELL = """\
import json, os
from ipykernel.connect import get_connection_info
from helpers.i18n import language
from helpers.replay.modes import connect

conn = connect()
print(conn.mode, conn.api_key, language(), json.loads(get_connection_info())["transport"])
own = {"LLM_MODE", "LLM_REPLAY_SERVED_LOG"}  # the suite's own: replay, the served-requests log
print(sorted(n for n in os.environ if n.startswith(("LLM_", "KIMI_", "QWEN_")) and n not in own))
print(sorted(n for n in os.environ if n.lower().endswith("_proxy")))"""
KERNEL_SEES = "replay replay-needs-no-key en ipc\n[]\n[]\n"


def test_this_process_runs_in_replay_mode_with_no_endpoint_key_or_language() -> None:
    assert os.environ["LLM_MODE"] == "replay"
    found = [n for n in os.environ if n.startswith(("LLM_", "KIMI_", "QWEN_"))]
    assert set(found) <= {"LLM_MODE", "LLM_TEST_REGISTRY"}, found
    proxies = [n for n in os.environ if n.lower().endswith("_proxy")]
    assert not proxies, f"the developer's proxy settings reached the tests: {proxies}"


def test_a_kernel_test_under_a_polluted_environment_stays_in_replay_with_no_key(
    tmp_path: Path,
) -> None:
    """A child `pytest` (nbval, one kernel) started with a developer's live settings exported."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(KERNEL_CELL)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=KERNEL_SEES)]
    cell.execution_count = 1
    nb.cells = [cell]
    folder = ROOT / "tests" / f".env-check-{uuid.uuid4().hex[:8]}"  # under the repo: its conftest
    folder.mkdir()
    try:
        nbformat.write(nb, folder / "check.ipynb")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(folder / "check.ipynb"), "-n", "0", "-q"]
            + ["-p", "no:cacheprovider", "--timeout", "120"],
            cwd=ROOT,
            env=os.environ | POLLUTED,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    assert "LEAK" not in done.stdout + done.stderr


def test_nbval_waits_for_a_kernel_as_long_as_the_other_kernel_launchers() -> None:
    """pyproject.toml cannot import the constant the grader, nbbuild and the tests share, so this
    compares them: a kernel start bound changed in one place only would fail here."""
    from helpers.edition import KERNEL_START_SECONDS

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # tomllib is 3.11+, we run 3.10
    bounds = re.findall(r"--nbval-kernel-startup-timeout=(\d+)", text)
    assert bounds == [str(KERNEL_START_SECONDS)], bounds
