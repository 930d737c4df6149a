"""What a kernel and a test process pay before their first useful line, with and without the
three start-up savings of issue 13. Each case runs in fresh interpreters; prints the ratios.

Run: python bench/startup.py   (about 25 s on 2 slow cores)

  1. `import jsonschema`: plain, and the way `helpers.arguments` does it (with the optional
     `rfc3987_syntax` hidden, whose Earley grammar is compiled at import). Every kernel that
     registers a tool and every pytest process (nbformat) imports jsonschema.
  2. Loading an offline tokenizer, transformers already imported: through `AutoTokenizer`
     (which first reads the `__init__` of every model transformers knows) and through the class
     its `tokenizer_config.json` names. Lessons 04-07 load one or two.
  3. Building 40 OpenAI clients (each builds an SSL context, loading the CA bundle) with a fresh
     context each time, and with one shared context, as the test processes now do.

Times are CPU seconds (user + system) of the timed part in the child, median of 5 runs; the
machine is shared, so read the ratios, not the absolute times.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5

JSONSCHEMA_PLAIN = "import jsonschema"
JSONSCHEMA_QUICK = "from helpers.arguments import jsonschema"

# transformers itself is imported before the clock starts: both ways need it.
TOKENIZER_SETUP = """
from helpers._hf import hub_offline, import_transformers
from helpers.templates import load_tokenizer, local_tokenizer_dir
transformers = import_transformers()
"""
TOKENIZER_AUTO = """
with hub_offline():
    transformers.AutoTokenizer.from_pretrained(str(local_tokenizer_dir("kimi-k2")))
"""
TOKENIZER_NAMED = """
load_tokenizer("kimi-k2")
"""

CLIENTS_FRESH = """
from openai import OpenAI
for _ in range(40):
    OpenAI(base_url="http://127.0.0.1:1/v1", api_key="x")
"""
CLIENTS_SHARED = """
import functools
import httpcore2
httpcore2.default_ssl_context = functools.cache(httpcore2.default_ssl_context)
from openai import OpenAI
for _ in range(40):
    OpenAI(base_url="http://127.0.0.1:1/v1", api_key="x")
"""

TIMED = """
import json, os, sys
exec(compile(sys.argv[1], "<setup>", "exec"))
start = os.times()
exec(compile(sys.argv[2], "<case>", "exec"))
end = os.times()
print(json.dumps((end.user - start.user) + (end.system - start.system)))
"""


def cpu_seconds(code: str, setup: str = "") -> float:
    """CPU seconds the code takes in a fresh interpreter after `setup` (not timed), median."""
    env = os.environ | {"TRANSFORMERS_NO_ADVISORY_WARNINGS": "1", "HF_HUB_OFFLINE": "1"}
    times = []
    for _ in range(RUNS):
        done = subprocess.run(
            [sys.executable, "-c", TIMED, setup, code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> None:
    cases = [
        ("import jsonschema", "", JSONSCHEMA_PLAIN, JSONSCHEMA_QUICK),
        ("load the kimi-k2 tokenizer", TOKENIZER_SETUP, TOKENIZER_AUTO, TOKENIZER_NAMED),
        ("40 OpenAI clients", "", CLIENTS_FRESH, CLIENTS_SHARED),
    ]
    print(f"{'case':<28} {'before':>8} {'after':>8} {'ratio':>7}")
    for name, setup, before, after in cases:
        slow, quick = cpu_seconds(before, setup), cpu_seconds(after, setup)
        print(f"{name:<28} {slow:7.2f}s {quick:7.2f}s {slow / max(quick, 1e-3):6.1f}x")


if __name__ == "__main__":
    main()
