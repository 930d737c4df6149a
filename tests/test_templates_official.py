"""The offline tokenizers render exactly what the models' official chat templates render.

`data/templates/` holds the official files (sources in its README). Two checks tie the lessons to
them: (1) each file's SHA-256 is the one of the upstream copy it came from (K2-Thinking: after
undoing the one documented edit), so nobody edits a vendored template by accident; (2) every
conversation lessons 04-07 render (their own cells, run here in replay mode) and every
`/completions` prompt the scenarios render comes out the same through the offline tokenizer and
through transformers' own Jinja renderer fed the vendored file. A template copied wrong into a
tokenizer folder, or a lesson whose tokenizer is not the official template, fails (2).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from scripts_support import lesson_cells

from helpers.paths import TOKENIZERS_DIR
from helpers.replay.scenarios import all_scenarios
from helpers.replay.synthesize import play
from helpers.templates import TEMPLATE_FILES, load_tokenizer

# SHA-256 of the upstream files (data/templates/README.md names them).
UPSTREAM_SHA256 = {
    # llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/models/templates/ (llama.cpp 0c1e57098)
    "qwen2.5": "cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f",
    "qwen3": "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5",
    "qwen3.5": "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715",
    # alibaba/rtp-llm@be512b94 .../testdata/kimi_k2/tokenizer/chat_template.jinja
    "kimi-k2": "8a4cd421d3a014c1700ce2adddc16c0ab8c3bdff2f13622c7d93d1fcd6418c6a",
    # ggml-org/llama.cpp@0c3c896e models/templates/moonshotai-Kimi-K2-Thinking.jinja
    "kimi-k2-thinking": "833d0c375531149a922a0f2addf9a66cce8e4503c500fe4ca6a95e9d1ed3c75a",
}
# The one edit (README): Moonshot's compact separators, which llama.cpp's mirror had to drop.
OFFICIAL_TOJSON = "{{ tools | tojson(separators=(',', ':')) }}"
MIRROR_TOJSON = "{{ tools | tojson() }}"
RENDERING_LESSONS = (
    "04_manual_parsing",
    "05_qwen_comparison",
    "06_thinking_models",
    "07_qwen_today",
)


def upstream_bytes(name: str) -> bytes:
    """The vendored file with the documented edit undone: the bytes of its upstream copy."""
    data = TEMPLATE_FILES[name].read_bytes()
    if name == "kimi-k2-thinking":
        assert data.count(OFFICIAL_TOJSON.encode()) == 1, "the documented edit is missing"
        data = data.replace(OFFICIAL_TOJSON.encode(), MIRROR_TOJSON.encode())
    return data


@pytest.mark.parametrize("name", sorted(UPSTREAM_SHA256))
def test_vendored_file_is_the_upstream_copy(name: str) -> None:
    assert hashlib.sha256(upstream_bytes(name)).hexdigest() == UPSTREAM_SHA256[name], (
        f"{TEMPLATE_FILES[name]} differs from its upstream copy: see data/templates/README.md"
    )


@pytest.mark.parametrize("name", sorted(TEMPLATE_FILES))
def test_tokenizer_folder_carries_the_vendored_file_byte_for_byte(name: str) -> None:
    folder_copy = (TOKENIZERS_DIR / name / "chat_template.jinja").read_bytes()
    assert folder_copy == TEMPLATE_FILES[name].read_bytes()
    assert load_tokenizer(name).chat_template == TEMPLATE_FILES[name].read_text(encoding="utf-8")


def test_every_template_file_has_a_licence_and_a_source_row() -> None:
    folder = next(iter(TEMPLATE_FILES.values())).parent
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert (folder / "LICENSE-Apache-2.0.txt").is_file()
    assert (folder / "LICENSE-Kimi-K2-modified-MIT.txt").is_file()
    for name, path in TEMPLATE_FILES.items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{path.name}` |"))
        assert hashlib.sha256(path.read_bytes()).hexdigest()[:12] in row, row
        licence = "Modified MIT" if name.startswith("kimi") else "Apache-2.0"
        assert licence in row, row


# --------------------------------------------------------------------- every render in the lessons


class Render:
    """One `apply_chat_template` call as a lesson made it: which template, what it was given."""

    def __init__(self, where: str, folder: str, conversation: Any, kwargs: dict[str, Any]) -> None:
        self.where = where
        self.name = Path(folder).name
        self.conversation = copy.deepcopy(conversation)
        self.kwargs = copy.deepcopy(kwargs)

    def __repr__(self) -> str:
        return f"{self.where} ({self.name}, {len(self.conversation)} messages)"


def _record(where: list[str], log: list[Render]) -> Any:
    """A stand-in for `apply_chat_template` that logs each call, then renders as usual."""
    from transformers import PreTrainedTokenizerBase

    real = PreTrainedTokenizerBase.apply_chat_template

    def recording(self: Any, conversation: Any, *args: Any, **kwargs: Any) -> Any:
        assert not args, "the lessons pass everything but the messages by keyword"
        log.append(Render(where[0], self.name_or_path, conversation, kwargs))
        return real(self, conversation, **kwargs)

    return recording


@pytest.fixture(scope="module")
def renders() -> list[Render]:
    """Every render lessons 04-07 make (their English cells, run in order in replay mode) and
    every `/completions` prompt their scenarios render."""
    from transformers import PreTrainedTokenizerBase

    log: list[Render] = []
    where = [""]
    unexpected = []
    patch = pytest.MonkeyPatch()
    patch.setenv("LLM_MODE", "replay")
    patch.setattr(PreTrainedTokenizerBase, "apply_chat_template", _record(where, log))
    try:
        for lesson in RENDERING_LESSONS:
            namespace: dict[str, Any] = {"__name__": "__main__"}
            cells = lesson_cells(lesson)
            for number, cell in enumerate(c for c in cells if c.kind == "code"):
                where[0] = f"{lesson} code cell {number}"
                with contextlib.redirect_stdout(io.StringIO()):
                    try:  # the lesson's own cells, as the notebook runs them
                        exec(compile(cell.en, f"<{lesson}>", "exec"), namespace)
                    except Exception as exc:  # noqa: BLE001 (only tagged cells may raise)
                        if "raises-exception" not in cell.tags:
                            unexpected.append(f"{where[0]}: {type(exc).__name__}: {exc}")
        for notebook, scenarios in all_scenarios().items():
            for scenario in scenarios:
                if scenario.api == "completions":
                    where[0] = f"scenario {notebook}/{scenario.name}"
                    play(notebook, scenario)
    finally:
        patch.undo()
    assert not unexpected, f"lesson cells failed here, so their renders are missing: {unexpected}"
    return log


def official(render: Render) -> str:
    """The same render through transformers' own Jinja path, fed the vendored file."""
    from transformers.utils.chat_template_utils import render_jinja_template

    kwargs = dict(render.kwargs)
    kwargs.pop("tokenize", None)
    template = TEMPLATE_FILES[render.name].read_text(encoding="utf-8")
    rendered, _ = render_jinja_template(
        conversations=[render.conversation], chat_template=template, **kwargs
    )
    return rendered[0]


def outcome(render: Any) -> tuple[str, str]:
    """("ok", text) or (exception type, message): a render that must fail fails the same way."""
    try:
        return "ok", render()
    except Exception as exc:  # noqa: BLE001 (the comparison is the point)
        return type(exc).__name__, str(exc)


def test_the_lessons_and_scenarios_render_with_every_tokenizer(renders: list[Render]) -> None:
    used = {render.name for render in renders}
    assert used == set(TEMPLATE_FILES), f"no render found for {set(TEMPLATE_FILES) - used}"
    for lesson in RENDERING_LESSONS:
        assert any(r.where.startswith(lesson) for r in renders), f"{lesson} renders nothing"
    assert any(r.where.startswith("scenario") for r in renders), "no /completions scenario"


def test_every_render_equals_the_official_template(renders: list[Render]) -> None:
    differ, failed = [], []
    for render in renders:
        tokenizer = load_tokenizer(render.name)
        kwargs = {**render.kwargs, "tokenize": False}
        conversation = copy.deepcopy(render.conversation)
        ours = outcome(partial(tokenizer.apply_chat_template, conversation, **kwargs))
        theirs = outcome(partial(official, render))
        if ours != theirs:
            differ.append(f"{render!r}:\n  ours:     {ours!r:.300}\n  official: {theirs!r:.300}")
        if ours[0] != "ok":
            failed.append((render.where, *ours))
    assert not differ, "\n".join(differ)
    # The one render meant to fail: lesson 07 shows Qwen3.5 refusing string arguments.
    assert [(where.split()[0], kind, text) for where, kind, text in failed] == [
        ("07_qwen_today", "TypeError", "Can only get item pairs from a mapping.")
    ]
