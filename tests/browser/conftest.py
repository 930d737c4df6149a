"""JupyterLab on 127.0.0.1 and Debian's Chromium driven by Playwright, for the `browser` tests.

Nothing here runs at import: the default test run collects this folder and deselects its tests
(`-m 'not browser'`), without Playwright installed. Set-up: `scripts/browser_setup.sh`.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers.paths import REPO_ROOT

SETUP_HINT = "run `bash scripts/browser_setup.sh` first (see docs/browser.md)"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
]
VIEWPORT = {"width": 1400, "height": 1000}
# JupyterLab user settings for a test run: never write the repo's notebooks back (autosave off),
# keep every cell in the DOM (the default windowing detaches or defers off-screen cells), start the
# notebook's kernel without the "Select Kernel" dialog (it appeared now and then on a busy machine,
# before the kernel started), and no news or update check (no network, no toast).
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    """A JupyterLab server process on 127.0.0.1 with a random token, rooted at `root`."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root, self.scratch = root, scratch
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = scratch / "jupyterlab.log"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 90) -> None:
        """Start JupyterLab and wait until its REST API answers with the token."""
        settings = self.scratch / "settings"
        for plugin, values in LAB_SETTINGS.items():
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self.scratch / 'workspaces'}",
            # JupyterLab saves a checkpoint of every notebook it opens: keep them out of the repo
            f"--FileCheckpoints.checkpoint_dir={self.scratch / 'checkpoints'}",
        ]
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(self.scratch / "config"),  # no user config leaks in
            "JUPYTER_RUNTIME_DIR": str(self.scratch / "runtime"),
            "LLM_MODE": "replay",  # what a student gets by default, whatever this shell has
        }
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        pytest.fail(f"JupyterLab did not answer within {timeout} s:\n{self.log_tail()}")

    def api(self, method: str, path: str) -> object:
        """Call the server's REST API with the token; the decoded JSON (None when empty)."""
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def lab_url(self, relpath: str) -> str:
        """The address that opens `relpath` in a fresh JupyterLab workspace, logged in."""
        return f"{self.url}/lab/tree/{relpath}?reset&token={self.token}"

    def wait_for_kernel(self, relpath: str, timeout: float = 90) -> None:
        """Wait until the notebook at `relpath` has a session whose kernel is idle."""
        deadline, sessions = time.monotonic() + timeout, []
        while time.monotonic() < deadline:
            sessions = self.api("GET", "/api/sessions")
            if any(
                s["path"] == relpath and (s.get("kernel") or {}).get("execution_state") == "idle"
                for s in sessions
            ):
                return
            time.sleep(0.3)
        pytest.fail(f"no idle kernel for {relpath} after {timeout} s; sessions: {sessions}")

    def shutdown_kernels(self) -> None:
        """End every session and its kernel (after each notebook)."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        """Shut the server down with its kernels; kill only our own process if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.api("POST", "/api/shutdown")
            self.process.wait(timeout=30)
        except (urllib.error.URLError, ConnectionError, TimeoutError, subprocess.TimeoutExpired):
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]


@contextmanager
def running_lab(root: Path, scratch: Path) -> Iterator[LabServer]:
    """A started LabServer, always stopped at the end."""
    server = LabServer(root, scratch)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def start_lab():
    """`start_lab(root, scratch)`: a context manager running JupyterLab on another folder."""
    return running_lab


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    """JupyterLab serving the repository, as a student opens the series."""
    with running_lab(REPO_ROOT, tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Debian Chromium with a fresh profile, driven by Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"the Python package `playwright` is not installed: {SETUP_HINT}")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.fail(f"no Chromium at {CHROMIUM}: {SETUP_HINT}")
    profile = tmp_path_factory.mktemp("chromium-profile")  # --user-data-dir, fresh per run
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def shots(request) -> Path | None:
    """`$BROWSER_SHOTS_DIR` (created) when set: where the tests save screenshots."""
    folder = os.environ.get("BROWSER_SHOTS_DIR")
    if not folder:
        return None
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path
