"""Lazy, quiet access to `transformers`: the series never needs torch, so its advisory is noise."""

import os
from types import ModuleType


def import_transformers() -> ModuleType:
    """Import transformers without the 'PyTorch was not found' advisory on stderr."""
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import transformers

    return transformers
