"""`jsonschema`, imported without compiling an IRI grammar that nothing here uses.

When the optional package `rfc3987-syntax` is installed (Jupyter's `jupyter-events` pulls it in),
`import jsonschema` builds an Earley parser for the `iri` string format: about 1 s of CPU in every
kernel that registers a tool, and in every process that imports `nbformat`. Tool arguments are
checked without format checks, so the first import runs with that package hidden; afterwards it
can be imported again as usual. The test run's `conftest.py` imports this module before it loads
nbval, so that nbval's `nbformat` gets the quick import too.
"""

import sys
from types import ModuleType


def import_jsonschema() -> ModuleType:
    """`import jsonschema`, with `rfc3987_syntax` hidden if this is the first import of both."""
    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # None: "not importable"
        try:
            import jsonschema
        finally:
            del sys.modules["rfc3987_syntax"]
    import jsonschema

    return jsonschema


jsonschema = import_jsonschema()
