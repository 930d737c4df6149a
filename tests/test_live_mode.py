"""The promise of live and record mode, checked on a stand-in for a real endpoint.

"A teacher with a key flips LLM_MODE=live (plus KIMI_*/QWEN_*) and the same notebooks talk to a
real endpoint, or record new cassettes with LLM_MODE=record." There is no network and no key in CI,
so the stand-in is the replay server started as a separate process on 127.0.0.1; live mode reaches
it as it would reach vLLM or the Moonshot platform, with a made-up key. Every lesson whose code
behaves differently outside replay (`MODE_SENSITIVE`) runs top to bottom in one edition, the
languages alternating along the series (`scripts_support.second_run_language`; nbval runs both
editions in replay, and the editions share their code): no cell may fail except those tagged `raises-exception`, the key must never appear in an output,
demos that need a recorded engine profile must say they were skipped. One lesson also runs in
record mode and must leave a cassette without the key.

What a stand-in cannot show: how a real model answers (its text, ids and chunking differ).
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
import scripts_support
from strict_standin import K3_MODEL, MOONSHOT_MODEL, QWEN35_MODEL, StrictStandIn

from helpers.catalog import MODEL_NAMES, PROVIDERS
from helpers.edition import KERNEL_START_SECONDS
from helpers.lessons import lesson_names
from helpers.paths import NOTEBOOKS_DIR, REPO_ROOT

LANGS = scripts_support.LANGS
# Code that behaves differently outside replay mode: a skipped demo, the live settings' error, an
# engine profile, the mode itself. (The tokenizers are the same in every mode.)
MODE_SENSITIVE = re.compile(
    r"replay_only\(|LiveSettingsError|\bengine=|LLM_MODE|\.mode\b|current_mode\("
)


def lesson_code(lesson: str) -> str:
    """The English code cells of a lesson, joined."""
    return "\n".join(scripts_support.lesson_code(lesson))


# The lessons whose code differs in live mode (derived, so a new lesson is covered when it needs
# to be). The others send the same requests through the same `connect()` and would replay the
# same answers: running them against the stand-in again would only re-run the replay tests.
LESSONS = tuple(name for name in lesson_names() if MODE_SENSITIVE.search(lesson_code(name)))
KEY = "test-key-123456"  # made up; long enough that the record proxy treats it as a secret
WORKERS = 4  # kernels at once; each notebook takes 2-5 s alone
SKIP_NOTE = {"en": "live mode: skipped, ", "ru": "режим live: пропущено, "}
# Lessons written for a thinking model: the stand-in serves them as that model's endpoint (the
# thinking profile's path and model id), as a teacher would set KIMI_BASE_URL and KIMI_MODEL.
THINKING_ENDPOINTS = {
    "06_thinking_models": ("/engines/moonshot_thinking/v1", "kimi-k2.6"),
    "09_kimi_k3_xtml": ("/engines/moonshot_k3/v1", "kimi-k3"),
}


def free_port() -> int:
    """A port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The replay server as a separate process: the 'real endpoint' live mode talks to."""
    port = free_port()
    log = tmp_path_factory.mktemp("stand-in") / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "helpers.replay", "serve", "--port", str(port)],
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the stand-in did not start: {log.read_text()}")
                time.sleep(0.1)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=10)


def live_env(base_url: str, mode: str, lesson: str = "") -> dict[str, str]:
    """The variables a teacher sets, pointed at the stand-in (a thinking endpoint if the lesson
    is about one)."""
    if lesson in THINKING_ENDPOINTS:
        path, model = THINKING_ENDPOINTS[lesson]
        thinking = {"KIMI_BASE_URL": base_url.removesuffix("/v1") + path, "KIMI_MODEL": model}
        return live_env(base_url, mode) | thinking
    env = {
        "LLM_MODE": mode,
        "HF_HUB_OFFLINE": "1",  # no hub here
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    }
    for provider in PROVIDERS:
        prefix = provider.upper()
        env |= {f"{prefix}_BASE_URL": base_url, f"{prefix}_API_KEY": KEY}
        env[f"{prefix}_MODEL"] = MODEL_NAMES[provider]
    return env


def execute(path: Path) -> nbformat.NotebookNode:
    """Run a committed notebook top to bottom in its folder (a copy; the file is not touched)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        startup_timeout=KERNEL_START_SECONDS,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return nb


def run_all(paths: dict[Any, Path], env: dict[str, str]) -> dict[Any, nbformat.NotebookNode]:
    """Execute notebooks a few at a time with `env` set (kernels inherit the environment); the
    executed notebooks come back under the keys their paths were given under."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            return dict(zip(paths, pool.map(execute, paths.values()), strict=True))


def live_notebook(lesson: str) -> Path:
    """A lesson's notebook in the edition that runs it in live mode."""
    language = scripts_support.second_run_language(lesson, "live")
    return NOTEBOOKS_DIR / language / f"{lesson}.ipynb"


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """Untagged failing cells and any output that contains the key."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if errors and "raises-exception" not in cell.metadata.get("tags", []):
            found.append(f"cell {cell.id}: {errors[0].ename}: {errors[0].evalue[:300]}")
        if KEY in json.dumps(cell.outputs):
            found.append(f"cell {cell.id}: the key appears in the output")
    return found


def text_of(nb: nbformat.NotebookNode) -> str:
    """Everything the notebook printed or displayed, as one string."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


# Each lesson runs in live mode in one edition (its language alternates along the series).
RUNS = tuple((lesson, scripts_support.second_run_language(lesson, "live")) for lesson in LESSONS)


@pytest.fixture(scope="module")
def live_runs(stand_in: str) -> dict[tuple[str, str], nbformat.NotebookNode]:
    """Every mode-sensitive lesson, in its edition, executed once in live mode on the stand-in."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for lesson, lang in RUNS:  # one batch per set of variables
        groups.setdefault(THINKING_ENDPOINTS.get(lesson, ("", ""))[0], []).append((lesson, lang))
    runs = {}
    for keys in groups.values():
        paths = {(lesson, lang): live_notebook(lesson) for lesson, lang in keys}
        runs |= run_all(paths, live_env(stand_in, "live", keys[0][0]))
    return runs


@pytest.mark.parametrize(("lesson", "lang"), RUNS)
def test_lesson_runs_in_live_mode_without_errors_or_key(
    lesson: str, lang: str, live_runs: dict[tuple[str, str], Any]
) -> None:
    nb = live_runs[(lesson, lang)]
    assert problems(nb) == []
    output = text_of(nb)
    assert "mode='live'" in output and "mode='replay'" not in output  # the setup cell says so


def test_replay_only_demos_say_they_were_skipped_in_both_languages(
    live_runs: dict[tuple[str, str], Any],
) -> None:
    seen = set()
    for lesson, lang in RUNS:  # one note per `conn.replay_only(...)` in the lesson's code
        count = text_of(live_runs[(lesson, lang)]).count(SKIP_NOTE[lang])
        assert count == lesson_code(lesson).count("replay_only("), (lesson, lang)
        seen |= {lang} if count else set()
    assert seen == set(LANGS), f"the skip note was shown only in {seen}: change the alternation"


def test_record_mode_writes_a_cassette_without_the_key(stand_in: str, tmp_path: Path) -> None:
    env = live_env(stand_in, "record") | {"LLM_RECORD_DIR": str(tmp_path)}
    path = NOTEBOOKS_DIR / "en" / "03_streaming.ipynb"  # streams, a usage chunk and a 400
    nb = run_all({path: path}, env)[path]
    assert problems(nb) == []
    assert "mode='record'" in text_of(nb)
    written = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert written == ["kimi.json"]
    text = (tmp_path / "kimi.json").read_text(encoding="utf-8")
    assert KEY not in text and "Bearer" not in text
    cassette = json.loads(text)
    assert len(cassette["interactions"]) >= 5  # identical requests are stored once
    assert any(i["request"]["body"].get("stream") for i in cassette["interactions"])


@pytest.mark.parametrize("mode", ["live", "record"])
def test_replay_only_notes_and_skips_outside_replay(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from helpers.replay.modes import Connection

    live = Connection("http://127.0.0.1:1/v1", KEY, "m", mode, "kimi", None)
    assert live.replay_only("no_parser is a recorded engine profile") is False
    out = capsys.readouterr().out
    assert out == (
        f"{mode} mode: skipped, no_parser is a recorded engine profile "
        "(replay mode only: unset LLM_MODE to see it).\n"
    )
    replay = Connection("http://127.0.0.1:1/v1", "k", "m", "replay", "kimi", "moonshot")
    assert replay.replay_only("anything") is True
    assert capsys.readouterr().out == ""


# --- today's platforms: kimi-k2.6 (thinking on and off) and Qwen3.5 on vLLM, strictly checked ----
# Every lesson that talks to a model runs against the strict stand-ins (tests/strict_standin.py):
# Moonshot's documented rules for kimi-k2.6 (locked sampling, strict tool schemas, forced
# tool_choice and missing reasoning_content refused with thinking on) and the Qwen3.5 template's
# errors on vLLM. Thinking on is the platform's default; `KIMI_THINKING=off` is the other run,
# for the lessons that send `conn.settings(...)` (the only place the switch goes into a request).
TALKS = re.compile(r"connect\(")
# Raw `/completions` of a Kimi prompt needs a self-hosted engine (lesson 04 says so): the Moonshot
# stand-in refuses it, so such a lesson is run on the self-hosted stand-in above only.
RAW_KIMI = re.compile(r'connect\("kimi"\)[\s\S]*/completions"')
STRICT_LESSONS = tuple(
    name
    for name in lesson_names()
    if TALKS.search(lesson_code(name)) and not RAW_KIMI.search(lesson_code(name))
)
SETTINGS_LESSONS = tuple(n for n in STRICT_LESSONS if "conn.settings(" in lesson_code(n))


# A lesson written for another Moonshot model talks to that one (lesson 09 is about Kimi K3).
STRICT_KIMI_MODELS = {"09_kimi_k3_xtml": K3_MODEL}


def strict_env(url: str, thinking: str, kimi_model: str = MOONSHOT_MODEL) -> dict[str, str]:
    """A teacher's variables for kimi-k2.6 (or `kimi_model`) on the Moonshot platform and
    Qwen3.5 on vLLM."""
    env = {
        "LLM_MODE": "live",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
        "KIMI_THINKING": thinking,
    }
    for provider, model in (("kimi", kimi_model), ("qwen", QWEN35_MODEL)):
        prefix = provider.upper()
        env |= {f"{prefix}_BASE_URL": url, f"{prefix}_API_KEY": KEY, f"{prefix}_MODEL": model}
    return env


@pytest.fixture(scope="module")
def strict(stand_in: str) -> Iterator[StrictStandIn]:
    """The strict stand-in in front of the replay server process."""
    server = StrictStandIn(stand_in.removesuffix("/v1")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def strict_runs(strict: StrictStandIn) -> dict[tuple[str, str], nbformat.NotebookNode]:
    """Every lesson that talks to a model with thinking on; the settings lessons with it off."""
    runs = {}
    for thinking, all_lessons in (("on", STRICT_LESSONS), ("off", SETTINGS_LESSONS)):
        by_model: dict[str, list[str]] = {}
        for name in all_lessons:
            by_model.setdefault(STRICT_KIMI_MODELS.get(name, MOONSHOT_MODEL), []).append(name)
        for kimi_model, lessons in by_model.items():
            paths = {(name, thinking): live_notebook(name) for name in lessons}
            runs |= run_all(paths, strict_env(strict.url, thinking, kimi_model))
    return runs


STRICT_RUNS = [(n, "on") for n in STRICT_LESSONS] + [(n, "off") for n in SETTINGS_LESSONS]


@pytest.mark.parametrize(("lesson", "thinking"), STRICT_RUNS)
def test_lesson_reaches_its_end_on_kimi_k2_6_and_qwen3_5(
    lesson: str, thinking: str, strict_runs: dict[tuple[str, str], Any]
) -> None:
    nb = strict_runs[(lesson, thinking)]
    assert problems(nb) == []
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert last.get("execution_count"), "the last code cell did not run"
    kimi_model = STRICT_KIMI_MODELS.get(lesson, MOONSHOT_MODEL)
    assert f"model_name='{kimi_model}'" in text_of(nb) or "qwen" in lesson_code(lesson)


def test_strict_stand_in_saw_both_models_and_the_thinking_switch(
    strict: StrictStandIn, strict_runs: dict[tuple[str, str], Any]
) -> None:
    bodies = strict.requests
    models = {b.get("model") for b in bodies}
    assert {MOONSHOT_MODEL, QWEN35_MODEL} <= models
    kimi = [b for b in bodies if b.get("model") == MOONSHOT_MODEL]
    assert not any("temperature" in b for b in kimi), "a locked temperature reached kimi-k2.6"
    off = [b for b in kimi if b.get("thinking") == {"type": "disabled"}]
    assert off and len(off) < len(kimi)  # the off run switched it off; the on run did not
    qwen = [b for b in bodies if b.get("model") == QWEN35_MODEL]
    assert any(b.get("temperature") == 0.3 for b in qwen)  # vLLM takes the guide's value


def test_the_readme_names_the_lessons_run_in_live_mode() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"behaves\s+differently\s+outside\s+replay\s+\(([\d, ]+)\)", readme)
    assert found, "README.md no longer lists the lessons tests/test_live_mode.py runs"
    listed = [number.strip() for number in found.group(1).split(",")]
    assert listed == [name[:2] for name in LESSONS], (
        f"README.md lists {listed}; tests/test_live_mode.py runs {LESSONS}: update the README"
    )


def test_only_the_raw_kimi_lesson_is_left_out_of_the_strict_runs() -> None:
    assert set(lesson_names()) - set(STRICT_LESSONS) == {"04_manual_parsing"}
    assert "04_manual_parsing" in LESSONS  # it runs live on the self-hosted stand-in


def test_the_strict_stand_in_refuses_what_the_platform_refuses(strict: StrictStandIn) -> None:
    import openai

    client = openai.OpenAI(base_url=strict.url, api_key=KEY, max_retries=0)
    ask = {"model": MOONSHOT_MODEL, "messages": [{"role": "user", "content": "Weather?"}]}
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"day": {"type": "string", "format": "date"}},
            },
        },
    }
    cases = [
        ({"temperature": 0.3}, "invalid temperature: only 1 is allowed"),
        ({"temperature": 0.3, "extra_body": {"thinking": {"type": "disabled"}}}, "only 0.6"),
        ({"tools": [tool]}, "format is not supported in strict mode"),
        ({"tools": [tool], "tool_choice": "required"}, "format"),  # the schema is checked first
    ]
    for extra, expected in cases:
        with pytest.raises(openai.BadRequestError, match=expected):
            client.chat.completions.create(**ask, **extra)
    fixed = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"day": {"type": "string"}}},
        },
    }
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        with pytest.raises(openai.BadRequestError, match="incompatible with thinking enabled"):
            client.chat.completions.create(**ask, tools=[fixed], tool_choice=choice)


@pytest.mark.parametrize("keep_reasoning", [True, False])
def test_thinking_on_a_streamed_loop_must_send_the_added_reasoning_back(
    strict: StrictStandIn, keep_reasoning: bool
) -> None:
    """The stand-in streams a reasoning delta first (recordings of an instruct model get one), so
    a loop that drops it meets Moonshot's 400 on round 2, as lesson 03's loop would."""
    import openai

    from helpers import ToolCallAccumulator
    from helpers.replay.scenarios.common import WEATHER_PROMPT, WEATHER_TOOLS, lesson_registry

    client = openai.OpenAI(base_url=strict.url, api_key=KEY, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": WEATHER_PROMPT}]
    ask = {"model": MOONSHOT_MODEL, "tools": WEATHER_TOOLS, "tool_choice": "auto", "stream": True}
    accumulator = ToolCallAccumulator()
    chunks = list(client.chat.completions.create(messages=messages, **ask))
    assert chunks[0].choices[0].delta.model_extra["reasoning_content"]  # before any content
    for chunk in chunks:
        accumulator.add(chunk)
    message = accumulator.assistant_message()
    assert message["reasoning_content"] and message["tool_calls"]
    if not keep_reasoning:
        del message["reasoning_content"]
    messages.append(message)
    messages.extend(lesson_registry().call(call) for call in accumulator.tool_calls)
    if keep_reasoning:
        final = list(client.chat.completions.create(messages=messages, **ask))
        assert any(c.choices and c.choices[0].delta.content for c in final)
    else:
        with pytest.raises(openai.BadRequestError, match="reasoning_content is missing"):
            client.chat.completions.create(messages=messages, **ask)
