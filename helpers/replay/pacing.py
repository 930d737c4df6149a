"""The waits of a paced replay (`LLM_REPLAY_PACE=1`): each chunk waits for the tokens it carries.

A paced stream plays as fast as a real engine would have written it, whatever the cassette's
chunks look like: the first chunk waits for the prompt to be read, every later chunk for the
tokens the model had to write to produce it (its new text, plus the markup of a tool call the
server does not stream, plus the end-of-turn token). The delays stored in a cassette
(`delay_ms`) are not used: synthesized ones are made up, and the llama.cpp captures' are those
of a one-layer steered model.

Where the numbers come from: llama.cpp on a desktop CPU, a 7B model, as measured by one of its
maintainers (slaren) in ggml-org/llama.cpp issue #34 ("benchmarks?", comment of 2023-08-12):
i9-13900K, DDR5-6400, 8 threads, 54.74 ms per generated token (`gen 128`, 18.3 tokens/s) and
29.70 ms per prompt token (`pp 512`). The llama.cpp captures in data/captures/llamacpp.json store
llama-server's own `timings` too, but of the steered one-layer model of docs/real_engines.md:
1.6-3.0 ms per token warm (26.7 ms on the first, cold request), the server's overhead rather than
a model's speed, so they are not used here.

Tokens are counted without a vocabulary (the offline tokenizers in data/tokenizers are small
stand-ins): a text is cut the way byte-level BPE tokenizers (GPT-4's, Qwen's) cut it before
merging (a word with the character before it, up to three digits, a run of punctuation,
whitespace). A real vocabulary splits rare words further, so the count is a lower bound and the
pace is at most as slow as the measured engine's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

TOKEN_S = 0.05474  # one generated token (llama.cpp issue #34, 7B, 8 threads: 54.74 ms/token)
PROMPT_TOKEN_S = 0.02970  # one prompt token read before the first chunk (same: 29.70 ms/token)
FIRST_CHUNK_MAX_S = 2.0  # a long prompt (many tools) waits at most this long, not 10 s in class
CALL_MARKUP = 6  # tokens a model writes around a call's name that the server does not stream
# (Kimi-K2: `<|tool_call_begin|>functions.` ... `:0<|tool_call_argument_begin|>`; Hermes/Qwen:
# `<tool_call>` and the JSON keys `{"name": "` `", "arguments": `): 6 is below both

# A letter run with one character before it, up to 3 digits, a punctuation run, whitespace
# (the pre-tokenizer pattern of GPT-4-style BPE, with Python's classes for \p{L} and \p{N}).
_PIECE = re.compile(
    r"'(?:[sdmt]|ll|ve|re)|(?:[^\r\n\w]|_)?[^\W\d_]+|\d{1,3}| ?(?:[^\s\w]|_)+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    re.IGNORECASE,
)


def count_tokens(text: str) -> int:
    """How many tokens `text` takes at least (its BPE pre-tokens)."""
    return len(_PIECE.findall(text))


def prompt_text(body: Mapping[str, Any]) -> str:
    """The text a request asks the model to read: its messages (or prompt) and tools."""
    if isinstance(body.get("prompt"), str):
        return body["prompt"]
    parts = [json.dumps(body.get("tools") or [], ensure_ascii=False)]
    for message in body.get("messages") or []:
        if isinstance(message, Mapping):
            parts.append(json.dumps(message, ensure_ascii=False))
    return "\n".join(parts)


def _pieces(data: Any) -> tuple[dict[tuple, str], int]:
    """A chunk's new text per channel (choice, field or call) and its hidden tokens."""
    texts: dict[tuple, str] = {}
    hidden = 0
    if not isinstance(data, Mapping):
        return texts, hidden  # "[DONE]"
    for choice in data.get("choices") or []:
        if not isinstance(choice, Mapping):
            continue
        at = choice.get("index", 0)
        if isinstance(choice.get("text"), str):  # /completions
            texts[(at, "text")] = choice["text"]
        delta = choice.get("delta") if isinstance(choice.get("delta"), Mapping) else {}
        for key, value in delta.items():
            if isinstance(value, str) and key != "role":
                texts[(at, key)] = value
        for n, item in enumerate(delta.get("tool_calls") or []):
            if not isinstance(item, Mapping):
                continue
            function = item.get("function") if isinstance(item.get("function"), Mapping) else {}
            channel = (at, "call", item.get("index", n))
            name, arguments = function.get("name") or "", function.get("arguments") or ""
            texts[channel] = texts.get(channel, "") + str(name) + str(arguments)
            if name:
                hidden += CALL_MARKUP
        if choice.get("finish_reason") is not None:
            hidden += 1  # the end-of-turn (or end-of-call) token
    return texts, hidden


def stream_delays(body: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> list[float]:
    """Seconds to wait before each SSE event of a replayed stream answering `body`."""
    written: dict[tuple, str] = {}
    delays = []
    for i, event in enumerate(events):
        texts, tokens = _pieces(event.get("data"))
        for channel, text in texts.items():
            before = written.get(channel, "")
            written[channel] = before + text
            tokens += max(0, count_tokens(written[channel]) - count_tokens(before))
        wait = tokens * TOKEN_S
        if i == 0:
            wait += min(count_tokens(prompt_text(body)) * PROMPT_TOKEN_S, FIRST_CHUNK_MAX_S)
        delays.append(wait)
    return delays
