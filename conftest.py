"""Test-session environment, inherited by the kernels that nbval and the tests start."""

import atexit
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

# Every test, and every kernel a test starts, runs in replay mode in English with no endpoint and
# no key, whatever the developer's shell exports (`LLM_MODE=live`, `KIMI_API_KEY`, `LLM_LANG=ru`):
# a test that needs another setting sets it itself (monkeypatch.setenv, a kernel's `env`).
KEPT_VARIABLES = {"LLM_TEST_REGISTRY"}  # switches of the test run itself (see REGISTRY_SKIP)
for _name in [n for n in os.environ if n.startswith(("LLM_", "KIMI_", "QWEN_"))]:
    if _name not in KEPT_VARIABLES:
        del os.environ[_name]
os.environ["LLM_MODE"] = "replay"
# Nor through the developer's proxy: every request of the suite goes to a server on this machine,
# and a test that needs a proxy sets one itself (tests/test_connect_environment.py does).
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
for _name in [n for n in os.environ if n.lower() in PROXY_VARIABLES]:
    del os.environ[_name]

# Replay never needs the hub: fail at once instead of a 47-second retry if something tries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The 'PyTorch was not found' advisory would be a stray stderr output in every notebook.
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
# Kernels are new processes: with this checkout first on PYTHONPATH they import its `helpers`,
# not a copy installed (editable) from another checkout into the same venv.
_others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *_others])

# jsonschema without its 1 s IRI grammar (see helpers/arguments.py), imported before nbval's
# nbformat asks for it; nbval is then loaded here rather than automatically (`-p no:nbval`).
# If it was loaded already (addopts overridden with `-o addopts=...`), it is not loaded twice.
import helpers.arguments  # noqa: E402, F401
from helpers.edition import KERNEL_START_SECONDS  # noqa: E402

pytest_plugins = [] if "nbval.plugin" in sys.modules else ["nbval.plugin"]


def _kernels_on_unix_sockets() -> None:
    """Start every kernel of the test run on ZMQ `ipc` (Unix sockets in a fresh folder) instead
    of TCP ports. Over TCP, jupyter_client picks five free ports by binding and closing them and
    the kernel binds them a second later; meanwhile any process (another xdist worker, the
    thousands of connections the tests open, another checkout's run) may take one, and the kernel
    dies with "Address already in use". A socket file named by a fresh id has no such window."""
    if os.name == "nt":  # no Unix sockets for ZMQ there
        return
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    folder = tempfile.mkdtemp(prefix="kernels-")  # short: a socket path has at most 107 bytes
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    launch = LocalProvisioner.pre_launch

    async def pre_launch(self, **kwargs):  # type: ignore[no-untyped-def]
        manager = self.parent
        if manager is not None and manager.transport == "tcp" and not manager.shell_port:
            manager.transport, manager.cache_ports = "ipc", False
            manager.ip = os.path.join(folder, uuid.uuid4().hex[:12])
        return await launch(self, **kwargs)

    LocalProvisioner.pre_launch = pre_launch


_kernels_on_unix_sockets()


# Test files whose every test starts Jupyter kernels, and fixtures that start them.
# test_socks_proxy.py runs lesson 00 in a kernel (it took 120 s+ under load as a "unit" test).
KERNEL_FILES = {
    "test_live_mode.py",
    "test_replay_lab_proxy.py",
    "test_socks_proxy.py",
    "test_test_environment.py",
}
# tests/test_grade.py: folders of notebooks graded in kernels.
KERNEL_FIXTURES = {"graded", "endless"}


# The longest test files, started first so that two xdist workers (`--dist loadfile`) finish
# together instead of one of them starting a minute-long file at the end.
LONGEST_FIRST = (
    "test_live_mode.py",
    "test_student_edition.py",
    "test_grade.py",
    "test_replay_lab_proxy.py",
    "test_setup.py",
)


# pytest-timeout's ceiling for a unit test (one that starts no kernel), below pyproject's 300 s
# for kernel tests and notebook cells: the slowest unit test takes ~40 s on a quiet machine. A
# test that needs more says so with its own `@pytest.mark.timeout(...)`.
UNIT_TIMEOUT = 120

# nbval waits 5 s (fixed in its code) for each output message after a cell's reply; under two
# busy cores a check cell of lesson 06 went past it (session 8's loaded run) and the rest of the
# notebook was xfailed. A hanging cell is still cut by --nbval-cell-timeout and pytest-timeout.
NBVAL_OUTPUT_SECONDS = 60

REGISTRY_SKIP = pytest.mark.skip(
    reason="downloads from the package index; the default run needs no network. "
    "Run it with: LLM_TEST_REGISTRY=1 .venv/bin/pytest -m registry"
)


def pytest_configure(config: pytest.Config) -> None:
    """A recording that no notebook run requests fails the session: tests/served_recordings.py."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "served_recordings", ROOT / "tests" / "served_recordings.py"
    )
    module = sys.modules.setdefault("served_recordings", importlib.util.module_from_spec(spec))
    if not hasattr(module, "register"):
        spec.loader.exec_module(module)
    module.register(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what runs notebooks in kernels (nbval cells, the live-mode, lab-proxy, grading and
    browser tests) as `notebooks`, so `-m 'not notebooks'` is the quick unit loop, and give the
    others the unit ceiling; put the longest files first."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    started: set[pytest.Collector] = set()  # notebooks whose first cell is marked
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(rank)))
    for item in items:
        path = Path(str(item.fspath))
        if (
            path.suffix == ".ipynb"
            or path.name in KERNEL_FILES
            or KERNEL_FIXTURES & set(getattr(item, "fixturenames", ()))
            or item.get_closest_marker("browser")
        ):
            item.add_marker(pytest.mark.notebooks)
        elif item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNIT_TIMEOUT))
        if item.get_closest_marker("registry") and not os.environ.get("LLM_TEST_REGISTRY"):
            item.add_marker(REGISTRY_SKIP)
        if hasattr(item, "output_timeout"):  # an nbval cell: see NBVAL_OUTPUT_SECONDS
            item.output_timeout = NBVAL_OUTPUT_SECONDS
            # The kernel starts in a notebook's first cell's setup, which pytest-timeout counts:
            # that cell gets the kernel's start-up time on top of pyproject's ceiling (a slow
            # kernel start beside two busy cores failed lesson 08's first cell, session 10).
            if item.parent not in started:
                started.add(item.parent)
                ceiling = int(item.config.getini("timeout")) + KERNEL_START_SECONDS
                item.add_marker(pytest.mark.timeout(ceiling))
