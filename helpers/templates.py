"""Offline chat templates and tokenizers for Kimi-K2 and Qwen2.5; the real hub ones only on request.

The local tokenizers live in `data/tokenizers/<name>/` (built by `scripts/build_tokenizers.py`):
a small byte-level BPE plus the format markers at their real ids, and a chat template written for
the course that reproduces the documented renders. `source="hub"` loads the real tokenizer and
fails fast, with a clear message, when the hub cannot be reached. `source="auto"` follows LLM_MODE:
the offline tokenizer in replay mode; in live and record mode the real one, or, when it cannot be
loaded, the offline one with a one-line note saying why.
"""

from __future__ import annotations

import copy
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from helpers._hf import import_transformers
from helpers.paths import DATA_DIR, TOKENIZERS_DIR

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

MARKERS: dict[str, tuple[Marker, ...]] = {"kimi-k2": KIMI_K2_MARKERS, "qwen2.5": QWEN2_5_MARKERS}
MARKER_IDS: dict[str, dict[str, int]] = {
    name: {marker.token: marker.id for marker in markers} for name, markers in MARKERS.items()
}
TOKENIZER_NAMES: tuple[str, ...] = tuple(MARKERS)
HUB_REPOS: dict[str, str] = {
    "kimi-k2": "moonshotai/Kimi-K2-Instruct",
    "qwen2.5": "Qwen/Qwen2.5-7B-Instruct",
}
TEMPLATES_DIR: Path = DATA_DIR / "templates"
TEMPLATE_FILES: dict[str, Path] = {
    "kimi-k2": TEMPLATES_DIR / "kimi_k2.jinja",
    "qwen2.5": TEMPLATES_DIR / "qwen2_5.jinja",
}
HUB_PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


class TokenizerUnavailableError(OSError):
    """The real tokenizer could not be loaded (hub offline or unreachable, or a package missing)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message  # a short clause for one-line notes


def _check_name(name: str) -> None:
    """Reject names other than the two tokenizers the series ships."""
    if name not in MARKERS:
        valid = ", ".join(repr(n) for n in TOKENIZER_NAMES)
        raise ValueError(f"Unknown tokenizer {name!r}; valid names: {valid}.")


def local_tokenizer_dir(name: str) -> Path:
    """Folder of the offline tokenizer `name` inside the repo."""
    _check_name(name)
    return TOKENIZERS_DIR / name


def load_tokenizer(name: str, source: str = "local") -> PreTrainedTokenizerBase:
    """The offline tokenizer (`"local"`), the real one (`"hub"`), or the one LLM_MODE calls for
    (`"auto"`: local in replay mode; in live/record mode the hub, falling back to local)."""
    _check_name(name)
    if source == "local":
        return _load_local(name)
    if source == "hub":
        return _load_hub(name)
    if source == "auto":
        return _load_auto(name)
    raise ValueError(f"Unknown source {source!r}; valid sources: 'local', 'hub', 'auto'.")


def _load_auto(name: str) -> PreTrainedTokenizerBase:
    """Replay: the offline tokenizer. Live/record: the real one if it loads, else the offline one
    with a one-line note (the notebook goes on: the offline template renders the same prompt)."""
    from helpers.replay.modes import current_mode

    if current_mode() == "replay":
        return _load_local(name)
    try:
        return _load_hub(name)
    except TokenizerUnavailableError as exc:
        reason = exc.reason
    except Exception as exc:  # remote tokenizer code that breaks on this transformers version
        reason = f"its code failed with {type(exc).__name__}: {_first_line(exc)}"
    print(
        f"Note: the real {name} tokenizer ({HUB_REPOS[name]}) could not be loaded: {reason}. "
        f"Using the offline one from data/tokenizers/{name}/: its chat template reproduces the "
        "documented render, so /completions gets the same prompt text."
    )
    return _load_local(name)


def _first_line(exc: object) -> str:
    """The first line of a message (or exception), shortened: enough for a one-line note."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _load_local(name: str) -> PreTrainedTokenizerBase:
    """Load the committed tokenizer folder by path, with hub access disabled."""
    folder = local_tokenizer_dir(name)
    if not (folder / "tokenizer.json").is_file():
        raise FileNotFoundError(
            f"The offline tokenizer {name!r} is missing in {folder}; "
            "build it with `python scripts/build_tokenizers.py`."
        )
    transformers = import_transformers()
    return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def _env_true(variable: str) -> bool:
    """Whether an environment flag such as HF_HUB_OFFLINE is switched on."""
    return os.environ.get(variable, "").strip().lower() in _TRUE


def _hub_endpoint() -> str:
    """The hub address huggingface_hub would use (HF_ENDPOINT or the public hub)."""
    return os.environ.get("HF_ENDPOINT", "").strip() or "https://huggingface.co"


def _hub_reachable(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """One short HEAD request: any HTTP answer means the hub can be reached (proxies honoured)."""
    request = urllib.request.Request(endpoint, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _load_hub(name: str) -> PreTrainedTokenizerBase:
    """Load the real tokenizer; offline or unreachable hub -> local cache or a fast, clear error."""
    repo = HUB_REPOS[name]
    endpoint = _hub_endpoint()
    if _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"):
        offline, why = True, "HF_HUB_OFFLINE=1 is set (hub access disabled)"
    elif not _hub_reachable(endpoint):
        offline, why = True, f"the hub {endpoint} cannot be reached"
    else:
        offline, why = False, ""
    kwargs: dict[str, Any] = {"trust_remote_code": True} if name == "kimi-k2" else {}
    transformers = import_transformers()
    try:
        return transformers.AutoTokenizer.from_pretrained(repo, local_files_only=offline, **kwargs)
    except ImportError as exc:
        raise TokenizerUnavailableError(
            f"The real {name} tokenizer ({repo}) needs a package or name that is missing: {exc}. "
            f"Install it, or use the offline tokenizer: load_tokenizer({name!r}).",
            reason=f"its code needs something missing here: {_first_line(exc)}",
        ) from exc
    except (OSError, ValueError) as exc:
        if offline:
            reason = f"{why} and {repo} is not in the local Hugging Face cache"
        else:
            reason = f"loading {repo} from {endpoint} failed ({exc})"
        raise TokenizerUnavailableError(
            f"Cannot load the real {name} tokenizer: {reason}. "
            f"Offline (replay mode) use load_tokenizer({name!r}), the tokenizer shipped in "
            f"data/tokenizers/{name}/ with the same chat template and markers. For the real one, "
            "go online (unset HF_HUB_OFFLINE, check the network, proxy or HF_ENDPOINT) once to "
            "fill the cache, then it also loads offline.",
            reason=_first_line(reason),
        ) from exc


def marker_tokens(tokenizer: PreTrainedTokenizerBase) -> list[MarkerToken]:
    """The Kimi-K2 / Qwen2.5 format markers this tokenizer holds as single tokens, by id."""
    vocab = tokenizer.get_vocab()
    added = tokenizer.added_tokens_decoder
    seen: dict[str, MarkerToken] = {}
    for marker in (*KIMI_K2_MARKERS, *QWEN2_5_MARKERS):
        token_id = vocab.get(marker.token)
        if token_id is None or marker.token in seen:
            continue
        added_token = added.get(token_id)
        special = bool(added_token.special) if added_token is not None else False
        seen[marker.token] = MarkerToken(marker.token, token_id, special)
    return sorted(seen.values(), key=lambda item: item.id)


def _plain_dict(value: Any) -> dict[str, Any]:
    """A deep, plain-dict copy of a message or tool call (SDK objects via `model_dump`)."""
    if callable(getattr(value, "model_dump", None)):
        return value.model_dump(exclude_none=True)
    return copy.deepcopy(dict(value))


def decode_tool_arguments(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Copies of `messages` with JSON-string arguments decoded, as vLLM does before templating."""
    decoded: list[dict[str, Any]] = []
    for original in messages:
        message = _plain_dict(original)
        if message.get("tool_calls"):
            message["tool_calls"] = [_plain_dict(call) for call in message["tool_calls"]]
        for tool_call in message.get("tool_calls") or []:
            function = tool_call.get("function", tool_call)
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    function["arguments"] = json.loads(arguments)
                except json.JSONDecodeError:
                    pass  # invalid JSON is what the model wrote: keep it as text
        decoded.append(message)
    return decoded
