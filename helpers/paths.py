"""Where the series keeps its data, resolved from the package so any working directory works."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
RECORDINGS_DIR = DATA_DIR / "recordings"
TOKENIZERS_DIR = DATA_DIR / "tokenizers"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
