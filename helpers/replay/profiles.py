"""Engine profiles: how each serving stack turns the same model output into an API response.

The model writes the same text everywhere; what differs is the server around it. A profile
records the differences the lessons teach (documented by Moonshot, vLLM, SGLang and Qwen; what is
assumed is listed in `docs/notes.md`): the tool call ids, the `finish_reason` when calls are
made, whether the calls are parsed out of the text at all, and how an empty `content` is reported.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from helpers.catalog import DEFAULT_ENGINES, MODEL_NAMES

NamedChoice = Literal["calls_of_it", "one_call", "ignored"]
"""A named `tool_choice`: calls of that tool only (OpenAI's promise), exactly one call (vLLM's
structured output holds one function's arguments), or no effect at all (Kimi K3 on Moonshot's
platform treats it as if no `tool_choice` were sent)."""
IdStyle = Literal[
    "moonshot", "model", "history", "hermes", "vllm16", "vllm24", "ollama", "llamacpp"
]


@dataclass(frozen=True)
class EngineProfile:
    """One serving stack's behaviour around tool calls (ids, finish_reason, parsing)."""

    name: str
    summary: str
    id_style: IdStyle
    providers: tuple[str, ...] = ("kimi",)
    streamed_id_style: IdStyle | None = None  # the ids of a streamed reply, when they differ
    finish_with_calls: str = "tool_calls"
    parses_calls: bool = True
    empty_content: str | None = None  # `content` reported when the model wrote only calls
    lists_empty_tool_calls: bool = True  # `"tool_calls": []` in a message without calls (vLLM)
    response_id_hex: int = 32  # length of the hex part of `chatcmpl-...` ids
    reasoning_field: str | None = None  # where a thinking model's reasoning goes in the reply
    model_name: str | None = None  # the served model; None: the provider's `MODEL_NAMES` entry
    whole_calls: bool = False  # streaming: each call in ONE delta, arguments complete (Ollama)
    parallel_by_default: bool = True  # False: one call per reply unless the request sends
    # `parallel_tool_calls: true`
    system_fingerprint: str | None = None  # sent on every response and chunk when set
    drifts_on_foreign_ids: bool = False  # foreign history ids make the model write odd ids
    honours_parallel_false: bool = True  # False: `parallel_tool_calls: false` may still give
    # several calls (llama.cpp with a Hermes-format template keeps `(tool-call space)+`)
    named_choice: NamedChoice = "calls_of_it"  # what a named `tool_choice` lets the model write

    def base_path(self, provider: str) -> str:
        """URL prefix the replay server serves this profile under, e.g. `/v1`."""
        if DEFAULT_ENGINES[provider] == self.name:
            return "/v1"
        return f"/engines/{self.name}/v1"

    def call_id(
        self, model_id: str, name: str, history_count: int, index: int, seed: str, stream: bool
    ) -> str:
        """Id the API reports for the `index`-th call of a reply the model wrote as `model_id`."""
        style = (self.streamed_id_style if stream else None) or self.id_style
        if style == "moonshot":
            return model_id.removeprefix("functions.")
        if style == "model":
            return model_id
        if style == "history":
            return f"functions.{name}:{history_count + index}"
        seed = f"{seed}|call|{index}"
        if style in _HEX_IDS:  # hermes, vllm16; vllm24: vLLM's qwen3_coder stream (uuid4 hex)
            prefix, length = _HEX_IDS[style]
            return prefix + stable_hex(seed, length)
        digits = bytes.fromhex(stable_hex(seed, 64))
        if style == "ollama":  # `call_` + 8 characters from [a-z0-9]
            return "call_" + "".join(_ALNUM[b % 36] for b in digits[:8])
        return "".join(_ALNUM[b % 62] for b in digits[:32])  # llama.cpp: 32 letters and digits


# Shared settings. `_BARE`: content `""` beside calls and no `tool_calls: []` in a message
# without calls. The Moonshot platform answers so for every model; so do llama.cpp and Ollama.
_BARE: dict[str, Any] = dict(empty_content="", lists_empty_tool_calls=False)
_MOONSHOT: dict[str, Any] = dict(id_style="moonshot", response_id_hex=24, **_BARE)
_LLAMACPP: dict[str, Any] = dict(id_style="llamacpp", reasoning_field="reasoning_content", **_BARE)

_PROFILES: list[EngineProfile] = [
    EngineProfile(
        name="moonshot",
        **_MOONSHOT,
        summary="Moonshot platform API: ids `name:N` (N counts every call in the dialog), "
        'finish_reason `tool_calls`, content `""` when only calls are made; tools are strict '
        "by default (a schema outside Moonshot's JSON-schema subset, a bad name or more than "
        "128 functions: a 400).",
    ),
    EngineProfile(
        name="vllm",
        summary="vLLM with `--tool-call-parser kimi_k2`: ids `functions.name:N` as the model "
        "wrote them, finish_reason `tool_calls`, content null when only calls are made.",
        id_style="model",
        named_choice="one_call",  # structured outputs hold one function's arguments
    ),
    EngineProfile(
        name="sglang",
        summary="SGLang with `--tool-call-parser kimi_k2`: ids `functions.name:K` where K = "
        "calls already in the request history + index, finish_reason `tool_calls`.",
        id_style="history",
        lists_empty_tool_calls=False,
    ),
    EngineProfile(
        name="stop_with_calls",
        summary="vLLM answering a forced `tool_choice` (named: vllm issue #9209; "
        "`required`: the Qwen3-8B answer in vllm PR #20662; SGLang reported the same in "
        "sglang #2877): calls parsed like vLLM, but finish_reason `stop` while `tool_calls` "
        "are present.",
        id_style="model",
        finish_with_calls="stop",
    ),
    EngineProfile(
        name="no_parser",
        providers=("kimi", "qwen"),
        summary="A server started WITHOUT the tool-call parser flag: no `tool_calls`, the raw "
        "call markers arrive inside `content`, finish_reason `stop`.",
        id_style="model",
        finish_with_calls="stop",
        parses_calls=False,
    ),
    EngineProfile(
        name="vllm_hermes",
        providers=("qwen",),
        summary="vLLM with `--tool-call-parser hermes` (Qwen2.5): ids `chatcmpl-tool-<hex>` "
        "invented by the server, content = text before the first `<tool_call>`, "
        "finish_reason `tool_calls`.",
        id_style="hermes",
    ),
    # Kimi thinking models (K2-Thinking, K2.5, K2.6): the same call markers with a reasoning part in
    # front, which each stack reports under its own field name.
    EngineProfile(
        name="moonshot_thinking",
        **_MOONSHOT,
        summary="Moonshot platform API with a thinking model (kimi-k2.6): reasoning in "
        "`reasoning_content`, streamed before the content; ids `name:N`; a history whose "
        "assistant tool-call message lacks `reasoning_content` gets a 400, and so does a forced "
        '`tool_choice` (`"required"` or a named function; the texts are reported by third '
        "parties, unconfirmed); `temperature`, `top_p` and `n` are fixed (another value: a 400, "
        "as third parties report), tools are strict (Moonshot's JSON-schema subset).",
        reasoning_field="reasoning_content",
        model_name="kimi-k2.6",
    ),
    EngineProfile(
        name="vllm_thinking",
        summary="vLLM >= 0.17 with `--tool-call-parser kimi_k2 --reasoning-parser kimi_k2` "
        "serving Kimi-K2.6: reasoning in the field `reasoning` (renamed from "
        "`reasoning_content`), ids `functions.name:N` as the model wrote them.",
        id_style="model",
        reasoning_field="reasoning",
        model_name="moonshotai/Kimi-K2.6",
    ),
    EngineProfile(
        name="sglang_drift",
        summary="SGLang with its `kimi_k2` tool-call and reasoning parsers serving Kimi-K2.6: "
        "with native history ids it answers like `sglang`; when the history holds "
        "foreign ids (`call_...`), the model copies their style, the parser cannot read the "
        "call, and the raw markers arrive in `content` with `tool_calls: []`.",
        id_style="history",
        reasoning_field="reasoning_content",
        model_name="moonshotai/Kimi-K2.6",
        drifts_on_foreign_ids=True,
    ),
    # Qwen today (lesson 07): Qwen3.5 behind vLLM's XML parser, and the two laptop servers.
    EngineProfile(
        name="vllm_qwen3_coder",
        providers=("qwen",),
        summary="vLLM >= 0.17 with `--tool-call-parser qwen3_coder --reasoning-parser qwen3` "
        "serving Qwen3.5 (XML calls): reasoning in the field `reasoning`, ids invented by the "
        "server: `chatcmpl-tool-<16 hex>` in a whole answer, `call_<24 hex>` when the parser "
        "streams (vllm/tool_parsers/qwen3coder_tool_parser.py), content null when only calls "
        "are made.",
        id_style="vllm16",
        streamed_id_style="vllm24",
        response_id_hex=16,
        reasoning_field="reasoning",
        model_name="Qwen/Qwen3.5-4B",
    ),
    EngineProfile(
        name="ollama",
        **_BARE,
        providers=("qwen",),
        summary="Ollama's OpenAI-compatible endpoint (`/v1`) serving qwen3:0.6b: ids `call_` + 8 "
        'characters [a-z0-9], each streamed call whole in one chunk, content `""` with calls, '
        "reasoning in the field `reasoning`, an empty `delta: {}` finish chunk with "
        "finish_reason `tool_calls`, `system_fingerprint` `fp_ollama`; `tool_choice` is not "
        "supported.",
        id_style="ollama",
        reasoning_field="reasoning",
        model_name="qwen3:0.6b",
        whole_calls=True,
        system_fingerprint="fp_ollama",
    ),
    EngineProfile(
        name="llamacpp",
        **_LLAMACPP,
        providers=("qwen",),
        summary="llama.cpp's `llama-server` (ggml-org/llama.cpp@0c1e57098, the defaults "
        "`--jinja` and `--reasoning-format auto`, which acts as `deepseek`) serving a tiny "
        "steered GGUF with the Qwen3 template; lesson 07's answers are captures "
        "(data/captures/llamacpp.json). "
        "Observed: reasoning in `reasoning_content`; parallel calls on by default (two calls "
        "with no flag, and with `parallel_tool_calls: false` too); ids of 32 letters and "
        'digits; content `""` with calls in a whole reply; a stream opens with `{"role": '
        '"assistant", "content": null}`, each call\'s first chunk carries its index, id, name '
        "and first argument fragment; `system_fingerprint` on every chunk; a call cut by "
        "`max_tokens` before its name is complete is dropped; with `--no-jinja` a request with "
        "tools gets HTTP 500 `tools param requires --jinja flag`.",
        model_name="qwen3-tiny-steered",
        system_fingerprint="b1-0c1e57098",
    ),
    # Choosing tools (lesson 08): engines whose `tool_choice` and `parallel_tool_calls` handling the
    # lesson compares (with `vllm`, `moonshot_thinking` and `ollama` above).
    EngineProfile(
        name="moonshot_k3",
        **_MOONSHOT,
        summary="Moonshot platform API with Kimi K3 (`kimi-k3`, thinking always on): reasoning in "
        "`reasoning_content`, which must come back with every assistant message; "
        "`thinking.effort` low, high or max; `tool_choice` accepts only auto, none and "
        "required (required with no tools and any other string: a 400), and a named function "
        "is silently ignored, as if no `tool_choice` were sent (Kimi-Vendor-Verifier's K3 "
        "tests); tools strict by default. Ids `name:N` as for K2 (unconfirmed for K3).",
        reasoning_field="reasoning_content",
        model_name="kimi-k3",
        named_choice="ignored",
    ),
    EngineProfile(
        name="llamacpp_hermes",
        **_LLAMACPP,
        providers=("qwen",),
        summary="llama.cpp's `llama-server` (`--jinja`, the default) serving a Qwen3 GGUF, whose "
        "template writes Hermes-style `<tool_call>` JSON: calls constrained by a grammar; the "
        "parallel default comes from the template's capabilities (on for Qwen3), and with the "
        "Hermes format `parallel_tool_calls: false` still allows several calls (the grammar "
        "keeps `(tool-call space)+`); `required` lets text come before the first call; "
        "reasoning in `reasoning_content`; ids of 32 letters and digits.",
        model_name="Qwen3-8B-Q8_0.gguf",
        honours_parallel_false=False,
    ),
    # Kimi K3 (July 2026, lesson 09): the model writes XTML tags, not K2's call sections; no call
    # id is in the text, so the server invents one. Reasoning is always on and goes back in the
    # history. The platform's profile, `moonshot_k3`, is above (lesson 08 uses it too).
    EngineProfile(
        name="vllm_kimi_k3",
        summary="vLLM with `--tool-call-parser kimi_k3 --reasoning-parser kimi_k3` serving "
        "Kimi-K3: reasoning in the field `reasoning`; the text has no call ids, so the server "
        "invents `functions.name:N` (N counts the calls of the conversation); streaming sends "
        "each call whole when its closing tag arrives.",
        id_style="history",
        reasoning_field="reasoning",
        model_name="moonshotai/Kimi-K3",
        whole_calls=True,
    ),
]
PROFILES: dict[str, EngineProfile] = {profile.name: profile for profile in _PROFILES}


_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Server-invented ids of the form prefix + hex digits: style -> (prefix, number of digits).
_HEX_IDS = {
    "hermes": ("chatcmpl-tool-", 32),
    "vllm16": ("chatcmpl-tool-", 16),
    "vllm24": ("call_", 24),
}


def stable_hex(text: str, length: int) -> str:
    """Deterministic hex digits derived from `text` (stands in for a server's random ids)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def get_profile(provider: str, engine: str | None) -> EngineProfile:
    """The profile serving `provider` at `engine` (None = the provider's default engine)."""
    if provider not in DEFAULT_ENGINES:
        raise ValueError(
            f"unknown provider {provider!r}; expected one of {sorted(DEFAULT_ENGINES)}"
        )
    name = engine or DEFAULT_ENGINES[provider]
    if name not in PROFILES:
        raise ValueError(f"unknown engine profile {name!r}; expected one of {sorted(PROFILES)}")
    profile = PROFILES[name]
    if provider not in profile.providers:
        raise ValueError(f"engine profile {name!r} does not serve provider {provider!r}")
    return profile


def replay_model(provider: str, engine: str | None = None) -> str:
    """The model name replay serves for `provider` at `engine` (thinking profiles name theirs)."""
    profile = PROFILES.get(engine or DEFAULT_ENGINES.get(provider, ""))
    return (profile.model_name if profile else None) or MODEL_NAMES[provider]
