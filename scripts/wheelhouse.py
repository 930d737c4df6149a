"""Build a wheelhouse for a lab without internet, OUTSIDE the project, for the lab's OS and Python.

    python scripts/wheelhouse.py                            # this machine, -> ../PROJECT-wheelhouse
    python scripts/wheelhouse.py --target win_amd64-py3.11      # a Windows x64 lab, Python 3.11
    python scripts/wheelhouse.py --target macosx_11_0_arm64-py3.12 --dest /media/usb/mac
    python scripts/wheelhouse.py --target manylinux_2_17_x86_64-py3.11 --write-lock

Then, on each lab machine (no network needed):

    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links /path/to/wheelhouse -r requirements.txt

Why a resolver for the target: pip evaluates environment markers (`sys_platform == "win32"`,
`platform_system == "Darwin"`) for the machine it runs on, whatever `--platform` says, so a
Windows wheelhouse downloaded on Linux lacks pywinpty and colorama. With `--target`, uv
(`uv pip compile --python-platform ... --python-version ...`, requirements-dev.txt) resolves the
requirements for the target, pip downloads exactly that list (`--no-deps --only-binary=:all:
--platform ... --python-version ...`), and `check_wheels` resolves the requirements again from
the downloaded files' own metadata with the target's markers and wheel tags: any package missing,
at a wrong version or built for another platform stops the script. `--write-lock` also records
the files and their metadata in `scripts/wheelhouse-locks/TARGET.json`, which
`tests/test_wheelhouse.py` checks offline in CI.

Why not `pip download -r requirements.txt -d wheelhouse` in the project: requirements.txt ends
with `-e .`, so pip packs the project folder into a zip, and a wheelhouse inside that folder ends
up in the zip it is writing (78 GB in 26 minutes, until the disk was full). This script hands pip
the requirements without `-e .` (the lab builds the `helpers` package from the project itself,
which needs only setuptools, so setuptools goes into the wheelhouse), refuses a destination inside
the project, and stops pip when the folder grows past `--max-mb`.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from packaging import tags as wheel_tags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = ROOT.parent / f"{ROOT.name}-wheelhouse"
DEFAULT_MAX_MB = 1000  # the full set: 134 files, 102 MB (Linux x86-64, Python 3.11, measured)
BUILD_REQUIREMENTS = ["setuptools>=68"]  # pyproject.toml's build-system: `-e .` needs it offline
LOCKS = ROOT / "scripts" / "wheelhouse-locks"
TARGET_RE = re.compile(r"^(?P<platform>[a-z0-9_]+)-py(?P<major>3)\.(?P<minor>\d{1,2})$")
TARGET_FORMS = (
    "win_amd64, win_arm64, win32; macosx_MAJOR_MINOR_arm64 or _x86_64 (e.g. macosx_11_0_arm64); "
    "manylinux_2_N_x86_64 or _aarch64 (N = 17, 28, 31-40) or manylinux2014_ARCH; then -pyX.Y"
)
# uv's --python-platform names (`uv pip compile --help` lists them)
_UV_WINDOWS = {"win_amd64": "x86_64-pc-windows-msvc", "win_arm64": "aarch64-pc-windows-msvc"}
_UV_WINDOWS["win32"] = "i686-pc-windows-msvc"
_WINDOWS_MACHINE = {"win_amd64": "AMD64", "win_arm64": "ARM64", "win32": "x86"}
_UV_MANYLINUX = {17, 28, *range(31, 41)}
_LEGACY_MANYLINUX = {5: "manylinux1", 12: "manylinux2010", 17: "manylinux2014"}


class WheelhouseError(RuntimeError):
    """The wheelhouse cannot be built as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    """A lab's platform and Python: what uv resolves for, pip downloads for, and the check uses."""

    name: str  # as given: "win_amd64-py3.11"
    platform: str  # the wheel platform tag: "win_amd64"
    python: tuple[int, int]
    uv_platform: str  # uv's --python-platform
    markers: dict[str, str]  # PEP 508 environment of such a machine
    platforms: tuple[str, ...]  # every wheel platform tag such a machine installs
    uv_env: dict[str, str] = field(default_factory=dict)  # e.g. MACOSX_DEPLOYMENT_TARGET

    @property
    def python_version(self) -> str:
        return f"{self.python[0]}.{self.python[1]}"

    def supported_tags(self) -> set[wheel_tags.Tag]:
        """The wheel tags a CPython of this version on this platform installs."""
        interpreter = f"cp{self.python[0]}{self.python[1]}"
        found = set(wheel_tags.cpython_tags(self.python, platforms=self.platforms))
        found |= set(wheel_tags.compatible_tags(self.python, interpreter, self.platforms))
        return found


def parse_target(text: str) -> Target:
    """`win_amd64-py3.11`, `macosx_11_0_arm64-py3.12`, `manylinux_2_17_x86_64-py3.11`..."""
    match = TARGET_RE.match(text.strip())
    if not match:
        raise WheelhouseError(
            f"--target {text!r}: expected PLATFORM-pyX.Y, PLATFORM one of: {TARGET_FORMS}"
        )
    platform, python = match["platform"], (3, int(match["minor"]))
    version = f"3.{python[1]}"
    common = {
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_version": version,
        "python_full_version": f"{version}.0",
        "platform_release": "",
        "platform_version": "",
    }
    if platform in _UV_WINDOWS:
        markers = {
            "os_name": "nt",
            "sys_platform": "win32",
            "platform_system": "Windows",
            "platform_machine": _WINDOWS_MACHINE[platform],
        }
        return Target(text, platform, python, _UV_WINDOWS[platform], common | markers, (platform,))
    mac = re.fullmatch(r"macosx_(\d+)_(\d+)_(arm64|x86_64)", platform)
    if mac:
        major, minor, arch = int(mac[1]), int(mac[2]), mac[3]
        uv_platform = "aarch64-apple-darwin" if arch == "arm64" else "x86_64-apple-darwin"
        markers = {
            "os_name": "posix",
            "sys_platform": "darwin",
            "platform_system": "Darwin",
            "platform_machine": arch,
        }
        platforms = tuple(wheel_tags.mac_platforms((major, minor), arch))
        uv_env = {"MACOSX_DEPLOYMENT_TARGET": f"{major}.{minor}"}
        return Target(text, platform, python, uv_platform, common | markers, platforms, uv_env)
    linux = re.fullmatch(r"manylinux(?:_2_(\d+)|(2014))_(x86_64|aarch64)", platform)
    if linux and (linux[2] or int(linux[1]) in _UV_MANYLINUX):
        glibc, arch = 17 if linux[2] else int(linux[1]), linux[3]
        uv_platform = f"{arch}-manylinux2014" if linux[2] else f"{arch}-manylinux_2_{glibc}"
        markers = {
            "os_name": "posix",
            "sys_platform": "linux",
            "platform_system": "Linux",
            "platform_machine": arch,
        }
        platforms: list[str] = []
        for n in range(glibc, 4, -1):  # a glibc 2.N system runs wheels for 2.N and older
            platforms.append(f"manylinux_2_{n}_{arch}")
            if n in _LEGACY_MANYLINUX and (arch == "x86_64" or n == 17):
                platforms.append(f"{_LEGACY_MANYLINUX[n]}_{arch}")
        return Target(text, platform, python, uv_platform, common | markers, tuple(platforms))
    raise WheelhouseError(
        f"--target {text!r}: unknown platform {platform!r}; known forms: {TARGET_FORMS}"
    )


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


def lab_requirements(requirements: Path = ROOT / "requirements.txt") -> list[str]:
    """What a lab machine installs from the wheelhouse: the requirements and the build backend."""
    return requirements_without_project(requirements) + BUILD_REQUIREMENTS


def inside(path: Path, folder: Path) -> bool:
    """True when `path` is `folder` or lies under it (after resolving symlinks)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def folder_size(folder: Path) -> int:
    """Bytes in the files under `folder` (0 when it does not exist)."""
    if not folder.exists():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _refuse_inside_project(dest: Path) -> None:
    if inside(dest, ROOT):
        raise WheelhouseError(
            f"{dest} is inside the project ({ROOT}): pip would pack it into the project's own "
            f"archive. Choose a folder outside, e.g. --dest {DEFAULT_DEST}"
        )


def download(
    dest: Path,
    requirements: Path = ROOT / "requirements.txt",
    max_mb: float = DEFAULT_MAX_MB,
    pip_args: list[str] | None = None,
    poll: float = 1.0,
    lines: list[str] | None = None,
) -> int:
    """Download the wheels for `requirements` (without the project) into `dest`; its size in bytes.

    `lines` replaces the requirements file (a resolved list, with `--no-deps` in `pip_args`).
    Raises WheelhouseError for a destination inside the project, for a pip failure, and when the
    folder passes `max_mb` (pip is stopped at once; what was written stays for you to inspect)."""
    _refuse_inside_project(dest)
    dest.mkdir(parents=True, exist_ok=True)
    limit = max_mb * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / "requirements.txt"
        wanted = lines if lines is not None else lab_requirements(requirements)
        listed.write_text("\n".join(wanted) + "\n", encoding="utf-8")
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


# --------------------------------------------------------------------------- resolve for a target


def uv_command() -> list[str]:
    """uv, from this venv or PATH (requirements-dev.txt installs it)."""
    beside = Path(sys.executable).parent / ("uv.exe" if os.name == "nt" else "uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    if not found:
        raise WheelhouseError(
            "--target needs uv to resolve for another platform: .venv/bin/pip install -r "
            "requirements-dev.txt (or pip install uv)"
        )
    return [found]


def resolve(target: Target, lines: list[str]) -> list[str]:
    """`name==version` for every package the target needs, resolved by uv for that target."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "requirements.in"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        command = uv_command() + [
            "pip", "compile", str(source), "--python-platform", target.uv_platform,
            "--python-version", target.python_version, "--only-binary", ":all:",
            "--no-header", "--no-annotate", "--quiet",
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=tmp, capture_output=True, text=True, env=os.environ | target.uv_env
        )
    if done.returncode != 0:
        raise WheelhouseError(f"uv could not resolve for {target.name}:\n{done.stderr[-3000:]}")
    pins = [line.strip() for line in done.stdout.splitlines()]
    return [line for line in pins if line and not line.startswith("#")]


def target_pip_args(target: Target) -> list[str]:
    """pip download's options for the target's files only (no dependencies: uv listed them)."""
    args = ["--no-deps", "--only-binary=:all:", "--python-version", target.python_version]
    args += ["--implementation", "cp"]
    for platform in target.platforms:
        args += ["--platform", platform]
    return args


# --------------------------------------------------------------------------- check a set of wheels


@dataclass(frozen=True)
class Wheel:
    """One wheel file and the metadata the check needs."""

    file: str
    requires_dist: tuple[str, ...]
    requires_python: str | None = None
    sha256: str = ""
    size: int = 0

    @property
    def name(self) -> str:
        return canonicalize_name(parse_wheel_filename(self.file)[0])

    @property
    def version(self) -> Version:
        return parse_wheel_filename(self.file)[1]

    @classmethod
    def read(cls, path: Path) -> Wheel:
        """A wheel's own METADATA (Requires-Dist, Requires-Python), its hash and size."""
        with zipfile.ZipFile(path) as archive:
            names = [  # the top-level one: bleach vendors html5lib with its own .dist-info
                n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)
            ]
            if len(names) != 1:
                raise WheelhouseError(f"{path.name}: no single .dist-info/METADATA in the wheel")
            metadata = email.parser.Parser().parsestr(archive.read(names[0]).decode("utf-8"))
        data = path.read_bytes()
        return cls(
            path.name,
            tuple(metadata.get_all("Requires-Dist") or ()),
            metadata.get("Requires-Python"),
            hashlib.sha256(data).hexdigest(),
            len(data),
        )

    def as_json(self) -> dict:
        return {"file": self.file, "sha256": self.sha256, "bytes": self.size,
                "requires_python": self.requires_python,
                "requires_dist": list(self.requires_dist)}  # fmt: skip

    @classmethod
    def from_json(cls, entry: dict) -> Wheel:
        return cls(entry["file"], tuple(entry["requires_dist"]), entry["requires_python"],
                   entry["sha256"], entry["bytes"])  # fmt: skip


def _applies(requirement: Requirement, environment: dict[str, str], extras: set[str]) -> bool:
    """Whether a requirement's marker holds on the target, for the base package or an extra."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate(environment | {"extra": e}) for e in {"", *extras})


def check_wheels(lines: list[str], wheels: list[Wheel], target: Target) -> list[str]:
    """What a `pip install --no-index` of `lines` on the target would miss in `wheels`.

    Walks the requirements and, from each chosen wheel's own Requires-Dist, its dependencies,
    evaluating markers for the TARGET (not for this machine) with the extras asked for; a
    problem is a package that is absent, at a version outside the range asked, for another
    platform or Python, or there twice. Empty means every requirement resolves offline."""
    problems: list[str] = []
    by_name: dict[str, Wheel] = {}
    for wheel in wheels:
        if wheel.name in by_name:
            problems.append(f"{wheel.name}: two files, {by_name[wheel.name].file} and {wheel.file}")
        by_name[wheel.name] = wheel
    supported = target.supported_tags()
    python = Version(target.python_version)
    queue = [(Requirement(line), "the requirements") for line in lines]
    done: set[tuple[str, frozenset[str]]] = set()
    while queue:
        requirement, wanted_by = queue.pop(0)
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        wheel = by_name.get(name)
        if wheel is None:
            problems.append(f"{name} missing ({requirement}, needed by {wanted_by})")
            done.add(key)
            continue
        if not requirement.specifier.contains(wheel.version, prereleases=True):
            problems.append(f"{wheel.file}: {wanted_by} needs {requirement}")
        if key in done:
            continue
        done.add(key)
        if not parse_wheel_filename(wheel.file)[3] & supported:
            problems.append(f"{wheel.file}: not installable on {target.name}")
        if wheel.requires_python and not SpecifierSet(wheel.requires_python).contains(
            python, prereleases=True
        ):
            problems.append(f"{wheel.file}: requires Python {wheel.requires_python}")
        for line in wheel.requires_dist:
            dependency = Requirement(line)
            if _applies(dependency, target.markers, set(requirement.extras)):
                queue.append((dependency, f"{wheel.name} {wheel.version}"))
    return sorted(set(problems))


def read_folder(folder: Path) -> list[Wheel]:
    """The wheels in a wheelhouse folder (anything else there is a problem for the caller)."""
    return [Wheel.read(path) for path in sorted(folder.glob("*.whl"))]


def lock_path(target: Target) -> Path:
    return LOCKS / f"{target.name}.json"


def write_lock(target: Target, wheels: list[Wheel], tools: dict[str, str]) -> Path:
    """Record the target's files and their metadata (the offline test checks them)."""
    LOCKS.mkdir(exist_ok=True)
    data = {
        "target": target.name,
        "made_by": "python scripts/wheelhouse.py --target " + target.name + " --write-lock",
        "resolved_with": f"uv pip compile --python-platform {target.uv_platform} "
        f"--python-version {target.python_version} --only-binary :all:",
        "tools": tools,
        "files": [wheel.as_json() for wheel in sorted(wheels, key=lambda w: w.file.lower())],
    }
    path = lock_path(target)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_lock(path: Path) -> tuple[Target, list[Wheel]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return parse_target(data["target"]), [Wheel.from_json(entry) for entry in data["files"]]


def _tool_versions() -> dict[str, str]:
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    uv = subprocess.run(uv_command() + ["--version"], capture_output=True, text=True)
    return {"pip": pip.stdout.split()[1], "uv": uv.stdout.split()[1]}


def build(
    target: Target, dest: Path, max_mb: float = DEFAULT_MAX_MB, lock: bool = False
) -> list[Wheel]:
    """Resolve for `target` with uv, download exactly that list, check it; the wheels."""
    _refuse_inside_project(dest)
    if dest.exists() and any(dest.glob("*.whl")):
        raise WheelhouseError(f"{dest} already has wheels: give an empty or new --dest")
    lines = lab_requirements()
    pins = resolve(target, lines)
    download(dest, max_mb=max_mb, pip_args=target_pip_args(target), lines=pins)
    wheels = read_folder(dest)
    problems = check_wheels(lines, wheels, target)
    got = {w.name for w in wheels}
    problems += [f"{pin}: uv listed it, pip did not download it" for pin in pins
                 if canonicalize_name(Requirement(pin).name) not in got]  # fmt: skip
    if problems:
        raise WheelhouseError(f"{dest} would not install offline on {target.name}:\n  "
                              + "\n  ".join(problems))  # fmt: skip
    if lock:
        write_lock(target, wheels, _tool_versions())
    return wheels


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dest", type=Path, default=DEFAULT_DEST, help=f"where to write (default {DEFAULT_DEST})"
    )
    parser.add_argument(
        "--target",
        help="PLATFORM-pyX.Y of the lab machines, e.g. win_amd64-py3.11, macosx_11_0_arm64-py3.12,"
        " manylinux_2_17_x86_64-py3.11 (default: this machine, resolved by pip)",
    )
    parser.add_argument(
        "--write-lock",
        action="store_true",
        help="with --target: record the files in scripts/wheelhouse-locks/ for the offline test",
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
        help="without --target: the requirements file (default: the project's requirements.txt)",
    )
    parser.add_argument(
        "pip_args",
        nargs=argparse.REMAINDER,
        help="without --target, after --: passed to pip download",
    )
    args = parser.parse_args(argv)
    extra = [a for a in args.pip_args if a != "--"]
    dest = args.dest.resolve()
    started = time.monotonic()
    try:
        if args.target:
            if extra:
                raise WheelhouseError("--target chooses pip's options itself; drop the -- part")
            wheels = build(parse_target(args.target), dest, args.max_mb, args.write_lock)
            size = sum(w.size for w in wheels)
        else:
            if args.write_lock:
                raise WheelhouseError("--write-lock needs --target")
            size = download(dest, args.requirements, args.max_mb, extra)
    except WheelhouseError as error:
        sys.exit(f"wheelhouse: {error}")
    count = len(list(dest.glob("*")))
    took = time.monotonic() - started
    print(f"wheelhouse: {count} files, {size / 2**20:.0f} MB in {dest} ({took:.0f} s)")
    print(
        "on each lab machine: python3 -m venv .venv && .venv/bin/pip install --no-index "
        f"--find-links {dest} -r requirements.txt"
    )


if __name__ == "__main__":
    main()
