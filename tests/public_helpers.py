"""Which helpers are public, and which of them no test names: the check behind
tests/test_public_helpers.py.

A helper is public when something outside `helpers/` relies on it by name: it is exported by a
package's `__all__` (`from helpers import run_tool_loop`), a lesson's code imports it or reads it
from a helpers module (`from helpers.guard import ...`, `n01.check_schema`), or a script under
`scripts/` imports it. Functions and classes only, each under the module that defines it. A test
names a helper when a `tests/test_*.py` file imports it from its module or from a package that
exports it (`from helpers import run_tool_loop`), or reads it from its module (`n01.check_schema`,
`helpers.loop.run_tool_loop`); a local variable or another object's attribute of the same name
does not count. A name only the other helpers use is tested through them.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
from collections.abc import Iterable
from pathlib import Path

PACKAGES = ("helpers", "helpers.formats", "helpers.replay")  # the ones with an `__all__`

# {module.name: why no test names it}: public helpers that only the notebooks can exercise.
ALLOWED: dict[str, str] = {}


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@functools.cache
def helpers_named_by(source: str) -> frozenset[tuple[str, str]]:
    """(module, name) of every helper a piece of code imports from `helpers`, or reads from a
    helpers module it imported (`from helpers.exercises import n01` ... `n01.check_schema`,
    `import helpers.loop` ... `helpers.loop.run_tool_loop`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    found: set[tuple[str, str]] = set()
    modules: dict[str, str] = {}  # a name bound to a helpers module -> the module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "helpers":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _is_module(full):
                    modules[alias.asname or alias.name] = full
                else:
                    found.add((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "helpers":
                    continue
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:  # `import helpers.loop` binds `helpers`; the chain names the module
                    modules["helpers"] = "helpers"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            module = _module_of(node.value, modules)
            if module is not None:
                found.add((module, node.attr))
    return frozenset(found)


def _module_of(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The helpers module an expression names (`n01`, `helpers.exercises.n01`), or None."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = _module_of(node.value, modules)
        if parent is not None and _is_module(f"{parent}.{node.attr}"):
            return f"{parent}.{node.attr}"
    return None


def public_helpers(sources: Iterable[str]) -> dict[str, str]:
    """`module.name` of each public helper function or class (its defining module), with what
    makes it public."""
    named = {(package, name): "exported" for package in PACKAGES for name in _all(package)}
    for source in sources:
        for pair in helpers_named_by(source):
            named.setdefault(pair, "used outside helpers/")
    public = {}
    for (module, name), why in sorted(named.items()):
        value = getattr(importlib.import_module(module), name, None)
        if inspect.isfunction(value) or inspect.isclass(value):
            if value.__module__.split(".")[0] == "helpers":
                public.setdefault(f"{value.__module__}.{name}", why)
    return public


def _all(package: str) -> list[str]:
    return list(importlib.import_module(package).__all__)


def helpers_tested_by(files: Iterable[Path]) -> frozenset[tuple[str, str]]:
    """(module, name) of every helper that `files` import from a helpers module or package, or
    read from one (`helpers_named_by`): a call or an attribute of the module, not a mere name."""
    return frozenset().union(*(_tested_in(path, path.stat().st_mtime_ns) for path in files))


@functools.cache
def _tested_in(path: Path, mtime: int) -> frozenset[tuple[str, str]]:
    """The helpers one file names (read once per version of it)."""
    return helpers_named_by(path.read_text(encoding="utf-8"))


def is_tested(helper: str, tested: Iterable[tuple[str, str]]) -> bool:
    """Whether `module.name` is among `tested`: imported or read from its own module, or from a
    package that exports the same object (`from helpers import run_tool_loop`)."""
    module, name = helper.rsplit(".", 1)
    value = getattr(importlib.import_module(module), name, None)
    for where, what in tested:
        if what != name:
            continue
        if where == module or getattr(importlib.import_module(where), what, None) is value:
            return True
    return False


def untested(public: dict[str, str], test_files: Iterable[Path]) -> list[str]:
    """A message for each public helper that no test names and `ALLOWED` does not excuse."""
    tested = helpers_tested_by(test_files)
    return [
        f"{helper} ({why}) has no test that names it: add a test under tests/ that imports "
        f"{helper.rsplit('.', 1)[1]} from {helper.rsplit('.', 1)[0]} (or reads it from the "
        "module) and checks what it returns or raises (or, if only the notebooks can run it, an "
        "entry in ALLOWED of tests/public_helpers.py with the reason)"
        for helper, why in public.items()
        if not is_tested(helper, tested) and helper not in ALLOWED
    ]
