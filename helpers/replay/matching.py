"""Which recording answers a request: a canonical request form, and a diff for the closest miss.

Two requests match when their canonical forms are equal. The canonical form keeps everything a
model would see differently and drops what it would not (see data/recordings/README.md).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from helpers.i18n import Text, shorten, tr
from helpers.replay.cassette import Interaction

# Sampling knobs and bookkeeping: they change how a model samples or what is logged, not what it
# is shown, and a recording cannot honour them anyway.
IGNORED_FIELDS = frozenset(
    "temperature top_p top_k min_p seed user frequency_penalty presence_penalty "
    "repetition_penalty logit_bias metadata store service_tier safety_identifier "
    "prompt_cache_key".split()
)
# Credentials a client may put at the top of a body: never recorded, so never matched either.
CREDENTIAL_FIELDS = frozenset(
    {"api_key", "apikey", "api-key", "authorization", "access_token", "secret_key", "password"}
)
# Length limits are matched for raw completions (they decide where the text stops) but not for
# chat, where lessons and learners set them freely.
CHAT_IGNORED_FIELDS = frozenset({"max_tokens", "max_completion_tokens"})
# Values equal to the server default are dropped, so sending them or not is the same request.
DEFAULTS: dict[str, Any] = {"stream": False, "n": 1, "tool_choice": "auto", "tools": []}
# Null fields an SDK response message carries when it is appended to `messages` as is.
ASSISTANT_EMPTY_FIELDS = ("refusal", "audio", "function_call", "annotations", "tool_calls")
# Order in which fields are compared, so the first difference reported is the most telling.
FIELD_ORDER = tuple(
    "path model messages prompt tools tool_choice stream stream_options max_tokens role name "
    "content tool_call_id tool_calls id type function arguments".split()
)
SHOW_CHARS = 80
LIVE_HINT = Text(
    "Replay mode answers only the exact requests recorded for the lessons, so a request you "
    "changed (a prompt, a tool, a setting) has no answer here: that is expected when you "
    "experiment. To try your change on a real model, switch to live mode (lesson 00, step 3; "
    "README.md, section Modes) in one of two ways:\n"
    "  - a local model, no GPU needed: Ollama or llama.cpp on your computer (lesson 07, "
    "section 8 gives the commands), then LLM_MODE=live with QWEN_BASE_URL, QWEN_API_KEY and "
    "QWEN_MODEL;\n"
    "  - the class endpoint, if your teacher runs one: LLM_MODE=live with the values you are "
    "given for KIMI_BASE_URL, KIMI_API_KEY and KIMI_MODEL (or the QWEN_* ones) "
    "(docs/class_endpoint.md).",
    "В режиме воспроизведения (replay) есть ответы только на те запросы, что записаны для "
    "уроков, поэтому на изменённый вами запрос (промпт, инструмент, настройку) ответа нет: для "
    "экспериментов это нормально. Чтобы проверить изменение на настоящей модели, перейдите в "
    "режим live (урок 00, шаг 3 «Режим live») одним из двух способов:\n"
    "  - локальная модель, GPU не нужен: Ollama или llama.cpp на вашем компьютере (команды — "
    "в уроке 07, раздел 8), затем LLM_MODE=live и переменные QWEN_BASE_URL, QWEN_API_KEY, "
    "QWEN_MODEL;\n"
    "  - общий сервер класса, если его поднял преподаватель: LLM_MODE=live и значения "
    "KIMI_BASE_URL, KIMI_API_KEY, KIMI_MODEL (или QWEN_*), которые он вам даст "
    "(docs/class_endpoint.ru.md).",
)


class _Missing:
    """Marks a field present on one side of a comparison only."""

    def __repr__(self) -> str:
        """Shown as '(absent)' in messages."""
        return "(absent)"


MISSING = _Missing()


def canonical_path(path: str) -> str:
    """The request path without query string, duplicate slashes or a trailing slash."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    path = re.sub(r"/{2,}", "/", path)
    return path.rstrip("/") or "/"


def is_chat_path(path: str) -> bool:
    """True for a chat completions path (with or without an engine prefix)."""
    return canonical_path(path).endswith("/chat/completions")


def canonical_arguments(arguments: Any) -> Any:
    """Argument JSON compared by value when it parses (whitespace, key order), raw otherwise."""
    if not isinstance(arguments, str):
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    return json.dumps(parsed, ensure_ascii=False, sort_keys=True)


def canonical_tool_call(call: Any) -> Any:
    """A tool call with `type` defaulted, nulls and the stream-only `index` dropped."""
    if not isinstance(call, dict):
        return call
    out = {k: v for k, v in call.items() if v is not None and k != "index"}
    out.setdefault("type", "function")
    function = out.get("function")
    if isinstance(function, dict):
        function = {k: v for k, v in function.items() if v is not None}
        if "arguments" in function:
            function["arguments"] = canonical_arguments(function["arguments"])
        out["function"] = function
    return out


def canonical_message(message: Any) -> Any:
    """A chat message as a model would see it: nulls dropped, empty assistant content as ""."""
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if v is not None}
    if out.get("role") == "assistant":
        if out.get("content") in (None, "", []):
            out["content"] = ""
        for key in ASSISTANT_EMPTY_FIELDS:
            if out.get(key) in ([], {}):
                del out[key]
        if isinstance(out.get("tool_calls"), list):
            out["tool_calls"] = [canonical_tool_call(c) for c in out["tool_calls"]]
    return out


def canonical_tool(tool: Any) -> Any:
    """A tool declaration with null fields dropped (its schema is kept as is)."""
    if not isinstance(tool, dict):
        return tool
    out = {k: v for k, v in tool.items() if v is not None}
    if isinstance(out.get("function"), dict):
        out["function"] = {k: v for k, v in out["function"].items() if v is not None}
    return out


def canonical_request(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The canonical form of a request: what decides which recording answers it."""
    chat = is_chat_path(path)
    ignored = IGNORED_FIELDS | CHAT_IGNORED_FIELDS if chat else IGNORED_FIELDS
    out: dict[str, Any] = {"path": canonical_path(path)}
    for key, value in body.items():
        if key in ignored or value is None or key.lower() in CREDENTIAL_FIELDS:
            continue
        if key in DEFAULTS and value == DEFAULTS[key] and type(value) is type(DEFAULTS[key]):
            continue
        if key == "messages" and isinstance(value, list):
            value = [canonical_message(m) for m in value]
        elif key == "tools" and isinstance(value, list):
            value = [canonical_tool(t) for t in value]
        out["body.path" if key == "path" else key] = value
    return out


def request_key(canonical: dict[str, Any]) -> str:
    """A hashable text for a canonical request (key order does not matter)."""
    return json.dumps(canonical, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _ordered_keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Keys of both dicts: the telling ones first (FIELD_ORDER), then the rest sorted."""
    keys = set(a) | set(b)
    first = [k for k in FIELD_ORDER if k in keys]
    return first + sorted(keys - set(first))


def first_difference(a: Any, b: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The first field where `a` and `b` differ, with both values (MISSING when absent)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in _ordered_keys(a, b):
            sub = f"{where}.{key}" if where else key
            found = first_difference(a.get(key, MISSING), b.get(key, MISSING), sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            i = min(len(a), len(b))
            x = a[i] if i < len(a) else MISSING
            y = b[i] if i < len(b) else MISSING
            return f"{where}[{i}]", x, y
        return None
    if a == b and type(a) is type(b):
        return None
    return where, a, b


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items two sequences share."""
    same = (x == y for x, y in zip(a, b, strict=False))
    return sum(1 for _ in itertools.takewhile(bool, same))


def _closeness(request: dict[str, Any], recorded: dict[str, Any]) -> tuple[Any, ...]:
    """A sort key: larger means the recording is closer to the request."""

    def same(key: str) -> bool:
        return request.get(key, MISSING) == recorded.get(key, MISSING)

    def prefix(key: str) -> int:
        x, y = request.get(key), recorded.get(key)
        if isinstance(x, list | str) and isinstance(y, list | str) and type(x) is type(y):
            return _common_prefix(x, y)
        return 0

    def length_gap(key: str) -> int:
        x, y = request.get(key), recorded.get(key)
        return -abs(len(x) - len(y)) if isinstance(x, list) and isinstance(y, list) else 0

    others = (set(request) | set(recorded)) - {"path", "model", "messages", "prompt"}
    return (
        is_chat_path(request["path"]) == is_chat_path(recorded["path"]),
        same("path"),
        same("model"),
        prefix("messages"),
        length_gap("messages"),
        prefix("prompt"),
        same("messages") or same("prompt"),
        same("tools"),
        sum(same(k) for k in others),
    )


def _for_display(value: Any) -> Any:
    """A copy with dict keys in FIELD_ORDER (role before content...), for readable messages."""
    if isinstance(value, dict):
        return {k: _for_display(value[k]) for k in _ordered_keys(value, {})}
    if isinstance(value, list):
        return [_for_display(v) for v in value]
    return value


def show_value(value: Any, other: Any = MISSING) -> str:
    """A value for a message, cut to about SHOW_CHARS; strings start near where they differ."""
    if value is MISSING:
        return "(absent)"
    if not isinstance(value, str):
        return shorten(json.dumps(_for_display(value), ensure_ascii=False), SHOW_CHARS)
    start = 0
    if isinstance(other, str):  # keep the difference in view: start near it when it is far in
        same = _common_prefix(value, other)
        if same > SHOW_CHARS - 30:
            start = same - 20
    piece = value[start : start + SHOW_CHARS - 6]
    text = json.dumps(piece, ensure_ascii=False)
    head = "..." if start else ""
    tail = "..." if start + len(piece) < len(value) else ""
    return f"{head}{text}{tail}"


def _author_hint(cassette: str, scenarios: str | None) -> str:
    """What a lesson's author does when a cell's request changed on purpose."""
    if scenarios:
        return tr(
            f"If you changed this cell on purpose (lesson authors): update {scenarios} and run "
            "`python -m helpers.replay synthesize` (docs/authoring.md).",
            f"Если вы изменили эту ячейку намеренно (для авторов урока): поправьте {scenarios} и "
            "выполните `python -m helpers.replay synthesize` (docs/authoring.md).",
        )
    return tr(
        f"{cassette} was recorded, not synthesized: record it again with LLM_MODE=record.",
        f"{cassette} записан, а не синтезирован: запишите его заново с LLM_MODE=record.",
    )


def mismatch_message(
    request: dict[str, Any],
    candidates: Sequence[tuple[dict[str, Any], Interaction]],
    scenario_files: Mapping[str, str] | None = None,
) -> tuple[str, str | None]:
    """The 404 text for an unrecorded request, and the name of the first differing field (in the
    notebook's language: the server runs in the kernel, so this is the student's explanation).

    `scenario_files` maps a cassette file to the scenario module it was synthesized from: the
    text then also tells a lesson's author which file to change and which command to run."""
    lines = [
        tr(
            "No recorded answer matches this request (replay mode).",
            "Для этого запроса нет записанного ответа (режим воспроизведения).",
        ),
        str(LIVE_HINT),
    ]
    # the closest recording; the first loaded one on ties
    best = max(candidates, key=lambda c: _closeness(request, c[0]), default=None)
    field: str | None = None
    if best is None:
        lines.append(tr("No recordings are loaded at all.", "Записи не загружены вовсе."))
    else:
        canonical, interaction = best
        shown = repr(interaction.label) if interaction.label else f"#{interaction.index}"
        lines.append(
            tr(
                f"Closest recording: {interaction.name}.",
                f"Ближайшая запись: {shown} из файла {interaction.cassette}.",
            )
        )
        diff = first_difference(request, canonical)
        if diff is not None:
            field, mine, theirs = diff
            lines.append(tr(f"First difference at {field}:", f"Первое различие в поле {field}:"))
            lines.append(tr("  this request: ", "  этот запрос: ") + show_value(mine, theirs))
            lines.append(tr("  recording:    ", "  запись:       ") + show_value(theirs, mine))
        lines.append(
            _author_hint(interaction.cassette, (scenario_files or {}).get(interaction.cassette))
        )
    return "\n".join(lines), field
