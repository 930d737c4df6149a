"""Offline tokenizers for Kimi-K2 and Qwen carrying the models' official chat templates.

The tokenizers live in `data/tokenizers/<name>/` (built by `scripts/build_tokenizers.py`): a small
byte-level BPE plus the format markers at their real ids, and the official chat template vendored
in `data/templates/` (sources and licences in its README). They are the same in every mode; nothing
is ever downloaded and no tokenizer code from a hub runs.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from helpers._hf import hub_offline, import_transformers
from helpers.i18n import tr
from helpers.paths import DATA_DIR, TOKENIZERS_DIR
from helpers.streaming import as_dict

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class Marker(NamedTuple):
    """A format marker: text, id, `special` flag, and whether the id is confirmed."""

    token: str
    id: int
    special: bool
    confirmed: bool


class MarkerToken(NamedTuple):
    """A marker as a given tokenizer holds it (what the lessons display)."""

    token: str
    id: int
    special: bool


# Kimi-K2: ids and flags from a copy of the real tokenizer_config (docs/notes.md). The im_* turn
# markers are special (dropped by skip_special_tokens); the tool markers are NOT, as in the model.
KIMI_K2_MARKERS: tuple[Marker, ...] = (
    Marker("<|im_end|>", 163586, True, True),
    Marker("<|im_user|>", 163587, True, True),
    Marker("<|im_assistant|>", 163588, True, True),
    Marker("<|im_system|>", 163594, True, True),
    Marker("<|tool_calls_section_begin|>", 163595, False, True),
    Marker("<|tool_calls_section_end|>", 163596, False, True),
    Marker("<|tool_call_begin|>", 163597, False, True),
    Marker("<|tool_call_argument_begin|>", 163598, False, True),
    Marker("<|tool_call_end|>", 163599, False, True),
    Marker("<|im_middle|>", 163601, True, True),
)

# Qwen2.5: <|im_start|>/<|im_end|> at the ids of the published Qwen2.5 tokenizer; the ids of
# <tool_call>/</tool_call> come from mirrored configs and are UNCONFIRMED (docs/notes.md).
QWEN2_5_MARKERS: tuple[Marker, ...] = (
    Marker("<|im_start|>", 151644, True, True),
    Marker("<|im_end|>", 151645, True, True),
    Marker("<tool_call>", 151657, False, False),
    Marker("</tool_call>", 151658, False, False),
)

# Qwen3 (Hermes JSON + <think>) and Qwen3.5 (XML calls + <think>), lesson 07. <think>/</think> at
# the ids of a mirrored Qwen3 tokenizer_config (not special, like the tool tags): UNCONFIRMED. For
# Qwen3.5 every id is Qwen3's, unconfirmed for that model's own vocabulary.
QWEN3_MARKERS: tuple[Marker, ...] = (
    *QWEN2_5_MARKERS,
    Marker("<think>", 151667, False, False),
    Marker("</think>", 151668, False, False),
)
QWEN3_5_MARKERS: tuple[Marker, ...] = tuple(m._replace(confirmed=False) for m in QWEN3_MARKERS)
# Kimi-K2-Thinking: the same marker tokens as Kimi-K2 and a template of its own (the real ids of
# <think> and </think> are not known here, so they stay ordinary text in the offline tokenizer).
MARKERS: dict[str, tuple[Marker, ...]] = {
    "kimi-k2": KIMI_K2_MARKERS,
    "qwen2.5": QWEN2_5_MARKERS,
    "qwen3": QWEN3_MARKERS,
    "qwen3.5": QWEN3_5_MARKERS,
    "kimi-k2-thinking": KIMI_K2_MARKERS,
}
TOKENIZER_NAMES: tuple[str, ...] = tuple(MARKERS)


TEMPLATES_DIR: Path = DATA_DIR / "templates"
# The official chat templates, vendored byte for byte (data/templates/README.md names each file's
# source repo, path, commit and licence, and the one documented edit in kimi_k2_thinking.jinja):
# `qwen2.5` -> qwen2_5.jinja, `kimi-k2-thinking` -> kimi_k2_thinking.jinja.
TEMPLATE_FILES: dict[str, Path] = {
    name: TEMPLATES_DIR / f"{name.replace('-', '_').replace('.', '_')}.jinja" for name in MARKERS
}


def local_tokenizer_dir(name: str) -> Path:
    """Folder of the offline tokenizer `name` inside the repo (one the series ships)."""
    if name not in MARKERS:
        valid = ", ".join(repr(n) for n in TOKENIZER_NAMES)
        raise ValueError(
            tr(
                f"Unknown tokenizer {name!r}; valid names: {valid}.",
                f"Неизвестный токенизатор {name!r}; допустимые имена: {valid}.",
            )
        )
    return TOKENIZERS_DIR / name


def load_tokenizer(name: str) -> PreTrainedTokenizerBase:
    """The offline tokenizer `name`: its markers at their real ids and the official chat template.
    The same in every mode (replay, live, record): nothing is downloaded."""
    folder = local_tokenizer_dir(name)
    if not (folder / "tokenizer.json").is_file():
        raise FileNotFoundError(
            tr(
                f"The offline tokenizer {name!r} is missing in {folder}; "
                "build it with `python scripts/build_tokenizers.py`.",
                f"Офлайн-токенизатора {name!r} нет в {folder}; "
                "соберите его командой `python scripts/build_tokenizers.py`.",
            )
        )
    with hub_offline():
        return tokenizer_class(folder).from_pretrained(str(folder), local_files_only=True)


def tokenizer_class(folder: Path) -> Any:
    """The class a tokenizer folder's `tokenizer_config.json` names, as `AutoTokenizer` would
    pick it, taken straight from transformers: `AutoTokenizer` first reads the `__init__` of
    every model transformers knows (~1,700 files, 0.5 s) before it looks at the folder."""
    transformers = import_transformers()
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    named = getattr(transformers, str(config.get("tokenizer_class", "")), None)
    return named if isinstance(named, type) else transformers.AutoTokenizer


def marker_tokens(tokenizer: PreTrainedTokenizerBase) -> list[MarkerToken]:
    """The Kimi-K2 / Qwen2.5 format markers this tokenizer holds as single tokens, by id."""
    vocab = tokenizer.get_vocab()
    added = tokenizer.added_tokens_decoder
    seen: dict[str, MarkerToken] = {}
    for marker in (*KIMI_K2_MARKERS, *QWEN2_5_MARKERS):
        token_id = vocab.get(marker.token)
        if token_id is None or marker.token in seen:
            continue
        special = bool(getattr(added.get(token_id), "special", False))
        seen[marker.token] = MarkerToken(marker.token, token_id, special)
    return sorted(seen.values(), key=lambda item: item.id)


def decode_tool_arguments(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Copies of `messages` with JSON-string arguments decoded, as vLLM does before templating."""
    decoded: list[dict[str, Any]] = []
    for original in messages:
        message = copy.deepcopy(as_dict(original))  # the caller's messages stay as they are
        if message.get("tool_calls"):
            message["tool_calls"] = [as_dict(call) for call in message["tool_calls"]]
        for tool_call in message.get("tool_calls") or []:
            function = tool_call.get("function", tool_call)
            arguments = function.get("arguments")
            if isinstance(arguments, str):  # invalid JSON is what the model wrote: kept as text
                with contextlib.suppress(json.JSONDecodeError):
                    function["arguments"] = json.loads(arguments)
        decoded.append(message)
    return decoded
