"""Build a wheelhouse for a lab without internet, OUTSIDE the project, with a size limit.

    python scripts/wheelhouse.py                     # -> ../toolcall-series-wheelhouse
    python scripts/wheelhouse.py --dest /media/usb/wheelhouse --max-mb 800

Then, on each lab machine (no network needed):

    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links /path/to/wheelhouse -r requirements.txt

Why not `pip download -r requirements.txt -d wheelhouse` in the project: requirements.txt ends
with `-e .`, so pip packs the project folder into a zip, and a wheelhouse inside that folder ends
up in the zip it is writing (78 GB in 26 minutes, until the disk was full). This script hands pip
the requirements without `-e .` (the lab builds the `helpers` package from the project itself,
which needs only setuptools, so setuptools goes into the wheelhouse), refuses a destination inside
the project, and stops pip when the folder grows past `--max-mb`.

The download needs a package index (PyPI, or the one pip is configured with). Everything after
it is offline: `tests/test_wheelhouse.py` installs from the wheelhouse with `--no-index` in a
network namespace without any network, then runs a lesson there.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = ROOT.parent / f"{ROOT.name}-wheelhouse"
DEFAULT_MAX_MB = 1000  # the full set: 134 files, 102 MB (Linux x86-64, Python 3.11, measured)
BUILD_REQUIREMENTS = ["setuptools>=68"]  # pyproject.toml's build-system: `-e .` needs it offline


class WheelhouseError(RuntimeError):
    """The wheelhouse cannot be built as asked; the message says why and what to do."""


def requirements_without_project(path: Path) -> list[str]:
    """The lines of a requirements file that name packages: no `-e .`, comments or blanks.

    Nested `-r other.txt` files are read too (requirements-dev.txt includes requirements.txt)."""
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith(("-r ", "--requirement ")):
            lines += requirements_without_project(path.parent / line.split(None, 1)[1])
        elif line.startswith(("-e ", "--editable ")) or line in (".", "./"):
            continue  # the project itself: built on the lab machine from its own folder
        else:
            lines.append(line)
    return lines


def inside(path: Path, folder: Path) -> bool:
    """True when `path` is `folder` or lies under it (after resolving symlinks)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def folder_size(folder: Path) -> int:
    """Bytes in the files under `folder` (0 when it does not exist)."""
    if not folder.exists():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def download(
    dest: Path,
    requirements: Path = ROOT / "requirements.txt",
    max_mb: float = DEFAULT_MAX_MB,
    pip_args: list[str] | None = None,
    poll: float = 1.0,
) -> int:
    """Download the wheels for `requirements` (without the project) into `dest`; its size in bytes.

    Raises WheelhouseError for a destination inside the project, for a pip failure, and when the
    folder passes `max_mb` (pip is stopped at once; what was written stays for you to inspect)."""
    if inside(dest, ROOT):
        raise WheelhouseError(
            f"{dest} is inside the project ({ROOT}): pip would pack it into the project's own "
            f"archive. Choose a folder outside, e.g. --dest {DEFAULT_DEST}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    limit = max_mb * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / "requirements.txt"
        listed.write_text(
            "\n".join(requirements_without_project(requirements) + BUILD_REQUIREMENTS) + "\n",
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "pip", "download", "-r", str(listed), "-d", str(dest)]
        command += pip_args or []
        # Started from the temporary folder, so nothing pip does is relative to the project.
        process = subprocess.Popen(command, cwd=tmp)
        try:
            while process.poll() is None:
                if folder_size(dest) > limit:
                    process.kill()
                    process.wait()
                    raise WheelhouseError(
                        f"{dest} passed {max_mb:g} MB, pip was stopped. Look at what is in it; "
                        "raise --max-mb only if the list of files is what you expect."
                    )
                time.sleep(poll)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if process.returncode != 0:
        raise WheelhouseError(f"pip download failed (exit {process.returncode}); see its output")
    size = folder_size(dest)
    if size > limit:
        raise WheelhouseError(f"{dest} is {size / 2**20:.0f} MB, over --max-mb {max_mb:g}")
    return size


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dest", type=Path, default=DEFAULT_DEST, help=f"where to write (default {DEFAULT_DEST})"
    )
    parser.add_argument(
        "--max-mb",
        type=float,
        default=DEFAULT_MAX_MB,
        help=f"stop when the folder passes this size (default {DEFAULT_MAX_MB} MB)",
    )
    parser.add_argument(
        "--requirements",
        type=Path,
        default=ROOT / "requirements.txt",
        help="the requirements file (default: the project's requirements.txt)",
    )
    parser.add_argument(
        "pip_args",
        nargs=argparse.REMAINDER,
        help="after --: passed to pip download, e.g. -- --platform win_amd64 --python-version "
        "3.11 --only-binary=:all: for a Windows lab",
    )
    args = parser.parse_args(argv)
    extra = [a for a in args.pip_args if a != "--"]
    try:
        size = download(args.dest.resolve(), args.requirements, args.max_mb, extra)
    except WheelhouseError as error:
        sys.exit(f"wheelhouse: {error}")
    count = len(list(args.dest.glob("*")))
    print(f"wheelhouse: {count} files, {size / 2**20:.0f} MB in {args.dest}")
    print(
        "on each lab machine: python3 -m venv .venv && .venv/bin/pip install --no-index "
        f"--find-links {args.dest} -r requirements.txt"
    )


if __name__ == "__main__":
    main()
