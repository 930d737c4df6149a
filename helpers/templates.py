"""Offline chat templates and tokenizers for Kimi-K2 and Qwen2.5; real templates only on request.

The local tokenizers live in `data/tokenizers/<name>/` (built by `scripts/build_tokenizers.py`):
a small byte-level BPE plus the format markers at their real ids, and a chat template written for
the course that reproduces the documented renders. `source="hub"` downloads ONLY the real chat
template file (from the repo and pinned commit in HUB_TEMPLATES) and puts it on the offline
tokenizer: no remote tokenizer code runs, ever. `source="auto"` follows LLM_MODE: the offline
tokenizer in replay mode; in live and record mode the real template, or, when it cannot be
fetched, the offline one with a one-line note saying why.
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

from helpers._hf import hub_offline, import_transformers
from helpers.i18n import tr
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

# Qwen3 (Hermes JSON + <think>) and Qwen3.5 (XML calls + <think>), lesson 07. <think>/</think> at
# the ids of a mirrored Qwen3 tokenizer_config (not special, like the tool tags): UNCONFIRMED. For
# Qwen3.5 every id is Qwen3's, unconfirmed for that model's own vocabulary.
QWEN3_MARKERS: tuple[Marker, ...] = (
    *QWEN2_5_MARKERS,
    Marker("<think>", 151667, False, False),
    Marker("</think>", 151668, False, False),
)
QWEN3_5_MARKERS: tuple[Marker, ...] = tuple(m._replace(confirmed=False) for m in QWEN3_MARKERS)
MARKERS.update({"qwen3": QWEN3_MARKERS, "qwen3.5": QWEN3_5_MARKERS})
# Kimi-K2-Thinking: the same marker tokens as Kimi-K2 and a template of its own (the real ids of
# <think> and </think> are not known here, so they stay ordinary text in the offline tokenizer).
MARKERS["kimi-k2-thinking"] = KIMI_K2_MARKERS
MARKER_IDS: dict[str, dict[str, int]] = {
    name: {marker.token: marker.id for marker in markers} for name, markers in MARKERS.items()
}
TOKENIZER_NAMES: tuple[str, ...] = tuple(MARKERS)


class HubTemplate(NamedTuple):
    """Where the real chat template lives: repo, file, and the commit it is fetched at."""

    repo: str
    filename: str  # a .jinja file, or tokenizer_config.json with a "chat_template" field
    revision: str | None  # a full commit hash a maintainer checked; None: not pinned, not fetched


# Commit hashes of the hub repos whose template a maintainer has read and compared with the
# documented render (docs/notes.md, "Pinned templates"). None until someone has: nothing here can
# reach the hub to check one, and a branch name such as "main" would let the template change
# under the course without notice.
KIMI_K2_0905_REVISION: str | None = None
QWEN2_5_REVISION: str | None = None

# One entry per template: a new model is one more line here and in MARKERS / TEMPLATE_FILES.
HUB_TEMPLATES: dict[str, HubTemplate] = {
    "kimi-k2": HubTemplate(
        "moonshotai/Kimi-K2-Instruct-0905", "chat_template.jinja", KIMI_K2_0905_REVISION
    ),
    "qwen2.5": HubTemplate("Qwen/Qwen2.5-7B-Instruct", "tokenizer_config.json", QWEN2_5_REVISION),
    # K2-Thinking: not pinned, so never fetched (the offline template follows a mirror's copy).
    "kimi-k2-thinking": HubTemplate("moonshotai/Kimi-K2-Thinking", "chat_template.jinja", None),
}
HUB_REPOS: dict[str, str] = {name: spec.repo for name, spec in HUB_TEMPLATES.items()}
TEMPLATES_DIR: Path = DATA_DIR / "templates"
TEMPLATE_FILES: dict[str, Path] = {
    "kimi-k2": TEMPLATES_DIR / "kimi_k2.jinja",
    "qwen2.5": TEMPLATES_DIR / "qwen2_5.jinja",
    "kimi-k2-thinking": TEMPLATES_DIR / "kimi_k2_thinking.jinja",
}
# Qwen3 / Qwen3.5 (lesson 07): no revision checked yet, so live mode falls back to the offline ones.
HUB_TEMPLATES.update(
    {
        "qwen3": HubTemplate("Qwen/Qwen3-0.6B", "tokenizer_config.json", None),
        "qwen3.5": HubTemplate("Qwen/Qwen3.5-4B", "tokenizer_config.json", None),
    }
)
HUB_REPOS.update({"qwen3": "Qwen/Qwen3-0.6B", "qwen3.5": "Qwen/Qwen3.5-4B"})
TEMPLATE_FILES.update(
    {"qwen3": TEMPLATES_DIR / "qwen3.jinja", "qwen3.5": TEMPLATES_DIR / "qwen3_5.jinja"}
)
HUB_PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


class TokenizerUnavailableError(OSError):
    """The real chat template could not be fetched (hub offline or unreachable, or not pinned)."""

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
    """The offline tokenizer (`"local"`), the offline one with the real chat template (`"hub"`),
    or the one LLM_MODE calls for (`"auto"`: local in replay mode, else hub, else local)."""
    _check_name(name)
    if source == "local":
        return _load_local(name)
    if source == "hub":
        return _load_hub(name)
    if source == "auto":
        return _load_auto(name)
    raise ValueError(f"Unknown source {source!r}; valid sources: 'local', 'hub', 'auto'.")


def _load_auto(name: str) -> PreTrainedTokenizerBase:
    """Replay: the offline tokenizer. Live/record: the real template if it can be fetched, else
    the offline one with a one-line note (the notebook goes on with the documented render)."""
    from helpers.replay.modes import current_mode

    if current_mode() == "replay":
        return _load_local(name)
    try:
        return _load_hub(name)
    except TokenizerUnavailableError as exc:
        reason = exc.reason
    spec = HUB_TEMPLATES.get(name)
    repo = spec.repo if spec else tr("no hub repo known", "репозиторий на хабе неизвестен")
    print(
        tr(
            f"Note: the real {name} chat template ({repo}) could not be fetched: {reason}. "
            f"Using the offline one from data/tokenizers/{name}/, which reproduces the "
            "documented render, so /completions gets the same prompt text.",
            f"Примечание: настоящий шаблон чата {name} ({repo}) скачать не удалось: {reason}. "
            f"Берём офлайн-шаблон из data/tokenizers/{name}/: он воспроизводит документированный "
            "промпт, так что /completions получит тот же текст.",
        )
    )
    return _load_local(name)


def _first_line(exc: object) -> str:
    """The first line of a message (or exception), shortened: enough for a one-line note."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _load_local(name: str) -> PreTrainedTokenizerBase:
    """Load the committed tokenizer folder by path, with hub access disabled while it loads."""
    folder = local_tokenizer_dir(name)
    if not (folder / "tokenizer.json").is_file():
        raise FileNotFoundError(
            f"The offline tokenizer {name!r} is missing in {folder}; "
            "build it with `python scripts/build_tokenizers.py`."
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


def _unavailable(name: str, reason: str) -> TokenizerUnavailableError:
    """The error for a template that cannot be fetched: why, and what to do instead."""
    spec = HUB_TEMPLATES.get(name) or HubTemplate("?", "?", None)
    return TokenizerUnavailableError(
        tr(
            f"Cannot fetch the real {name} chat template ({spec.repo}, {spec.filename}): "
            f"{reason}. Use load_tokenizer({name!r}), the offline tokenizer in "
            f"data/tokenizers/{name}/ with the documented template and markers.",
            f"Не удалось скачать настоящий шаблон чата {name} ({spec.repo}, {spec.filename}): "
            f"{reason}. Используйте load_tokenizer({name!r}) — офлайн-токенизатор из "
            f"data/tokenizers/{name}/ с документированным шаблоном и маркерами.",
        ),
        reason=reason,
    )


def fetch_hub_template(name: str) -> str:
    """The real chat template text: one file from the hub at the pinned commit (cache first)."""
    _check_name(name)
    spec = HUB_TEMPLATES.get(name)
    if spec is None:
        raise _unavailable(
            name, tr("no hub template is listed for it", "шаблон на хабе для него не указан")
        )
    if not spec.revision:
        raise _unavailable(
            name,
            tr(
                "no verified revision of it is pinned in helpers/templates.py (HUB_TEMPLATES)",
                "в helpers/templates.py (HUB_TEMPLATES) не закреплена проверенная ревизия",
            ),
        )
    endpoint = _hub_endpoint()
    offline = _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE")
    if not offline and not _hub_reachable(endpoint):
        raise _unavailable(
            name, tr(f"the hub {endpoint} cannot be reached", f"хаб {endpoint} недоступен")
        )
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(
            spec.repo, spec.filename, revision=spec.revision, local_files_only=offline
        )
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        if offline:
            reason = tr(
                "HF_HUB_OFFLINE=1 is set and the file is not in the local Hugging Face cache",
                "задан HF_HUB_OFFLINE=1, а в локальном кэше Hugging Face этого файла нет",
            )
        else:
            reason = tr(
                f"the download failed ({_first_line(exc)})",
                f"загрузка не удалась ({_first_line(exc)})",
            )
        raise _unavailable(name, reason) from exc
    if spec.filename.endswith(".json"):
        try:
            template = json.loads(text).get("chat_template")
        except (ValueError, AttributeError):
            template = None
        if not isinstance(template, str):
            raise _unavailable(
                name,
                tr(f"{spec.filename} has no chat_template", f"в {spec.filename} нет chat_template"),
            )
        return template
    return text


def _load_hub(name: str) -> PreTrainedTokenizerBase:
    """The offline tokenizer carrying the real chat template (no remote code is ever run)."""
    template = fetch_hub_template(name)
    tokenizer = _load_local(name)
    tokenizer.chat_template = template
    return tokenizer


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
