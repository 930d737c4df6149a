#!/usr/bin/env bash
# One-time set-up for the browser test (`pytest -m browser tests/browser`, docs/browser.md):
# Debian's chromium from apt and the Python package playwright from PyPI. Playwright drives the
# system browser; it never downloads one (`playwright install` is not needed and does not work here).
#
#   bash scripts/browser_setup.sh                              # into .venv (the README's venv)
#   PYTHON=/path/to/venv/bin/python bash scripts/browser_setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-.venv/bin/python}
[ -x "$python" ] || { echo "no Python at $python: create .venv first (README) or set PYTHON=" >&2; exit 1; }

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y chromium
fi

"$python" -m pip install -r requirements-browser.txt
chromium --version
"$python" -c "import playwright.sync_api; print('playwright', __import__('importlib.metadata').metadata.version('playwright'))"
