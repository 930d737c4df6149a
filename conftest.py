"""Test-session environment, inherited by the kernels that nbval starts for the notebooks."""

import os

# Replay never needs the hub: fail at once instead of a 47-second retry if something tries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The 'PyTorch was not found' advisory would be a stray stderr output in every notebook.
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
