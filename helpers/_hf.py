"""Lazy, quiet access to `transformers`, and hub access switched off for the helpers' own loads."""

import contextlib
import os
from collections.abc import Iterator
from types import ModuleType


def import_transformers() -> ModuleType:
    """Import transformers without the 'PyTorch was not found' advisory on stderr."""
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import transformers

    return transformers


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """HF_HUB_OFFLINE=1 while the block runs, then the kernel's own setting back (the student's
    own transformers calls are theirs to make online)."""
    from huggingface_hub import constants  # imported first: it reads the variable once

    before = os.environ.get("HF_HUB_OFFLINE")
    flag = constants.HF_HUB_OFFLINE
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before
        constants.HF_HUB_OFFLINE = flag
