"""Capture lesson 07's llama.cpp answers from a real `llama-server`, offline (PyPI only).

    python scripts/capture_llamacpp.py            # build (once), write the models, record
    python scripts/capture_llamacpp.py --build    # only build llama-server, print its path

Steps, each skipped when its result is already in the cache folder ($TOOLCALL_LLAMACPP_DIR,
default ~/.cache/toolcall-llamacpp, outside git):

1. `pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36` and build only the
   `llama-server` target of its `vendor/llama.cpp` (CPU, cmake, -j2); the build time is written
   to `build-time.txt`.
2. Write two tiny GGUF models with the `gguf` package: the real Qwen2 BPE vocabulary from
   `vendor/llama.cpp/models/ggml-vocab-qwen2.gguf`, Qwen3's added tokens, and llama.cpp's own
   `models/templates/Qwen-Qwen3-0.6B.jinja` (Hermes-style JSON calls) or `Qwen3.5-4B.jinja` (XML
   calls) as the chat template. The weights are STEERED, not trained: the greedy model writes
   exactly the text each lesson turn needs (a reasoning block and two calls; once a tool result
   is in the prompt, a reasoning block and a final answer). Everything around that text (the
   template, the prompt, the grammar, the parsing, the JSON and SSE the client sees) is
   llama.cpp's own.
3. Start `llama-server` on 127.0.0.1 (a free port, `--temp 0`, a fixed seed, a small context)
   and send lesson 07's llama.cpp requests, and a few more kept as evidence, through the
   project's record mode (`LLM_MODE=record`, `helpers.replay.connect`); again with
   `--no-jinja`, and with the Qwen3.5 model; then stop the server.
4. Write the exchanges to `data/captures/llamacpp.json` with the llama.cpp commit, this command
   and the date; `python -m helpers.replay synthesize` appends the lesson's part to
   `data/recordings/07_qwen_today.json` and never synthesizes over it.

How the steering works (docs/real_engines.md has more). With the attention and MLP outputs at
zero, a one-layer model is a bigram table (the next token depends only on the current one), so
the Qwen3 model's texts are tokenized such that no token id repeats inside them (the 151k
vocabulary has many spellings of the same text). Attention heads whose query and key sit in the
lowest-frequency RoPE pair, where the rotation is negligible, switch the few tokens whose
successor differs: one looks for a `<tool_response>` anywhere in the context (call or answer),
one for the marker that starts the second call. The Qwen3.5 model also copies the previous token
(a head on the highest RoPE frequencies) and has one MLP unit per (previous, current) rule.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # this checkout first (a shared venv)
SDIST = "llama-cpp-python==0.3.36"
SDIST_DIR = "llama_cpp_python-0.3.36"
CACHE = Path(os.environ.get("TOOLCALL_LLAMACPP_DIR", "~/.cache/toolcall-llamacpp")).expanduser()
CAPTURES = REPO_ROOT / "data" / "captures"
COMMAND = "python scripts/capture_llamacpp.py"
SEED = 7
CONTEXT = 4096
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # no network: the prebuilt web UI would be downloaded
    "-DLLAMA_OPENSSL=OFF",
]


def say(message: str) -> None:
    """Progress on stderr."""
    print(f"[capture_llamacpp] {message}", file=sys.stderr, flush=True)


# --- 1. the build -------------------------------------------------------------------------------


def source_dir(cache: Path = CACHE) -> Path:
    """`vendor/llama.cpp` of the unpacked sdist."""
    return cache / SDIST_DIR / "vendor" / "llama.cpp"


def server_binary(cache: Path = CACHE) -> Path:
    """Where the build puts `llama-server` ($LLAMA_SERVER overrides it)."""
    chosen = os.environ.get("LLAMA_SERVER", "").strip()
    return Path(chosen).expanduser() if chosen else cache / "build-server" / "bin" / "llama-server"


def llama_cpp_commit(cache: Path = CACHE) -> str:
    """The llama.cpp commit the sdist vendors, as its CHANGELOG names it for this release."""
    changelog = (cache / SDIST_DIR / "CHANGELOG.md").read_text(encoding="utf-8")
    release = changelog.split("## [0.3.36]", 1)[1].split("\n## [", 1)[0]
    found = re.search(r"ggml-org/llama\.cpp@([0-9a-f]{7,40})", release)
    if not found:
        raise RuntimeError("the sdist's CHANGELOG does not name the vendored llama.cpp commit")
    return found.group(1)


def fetch_sdist(cache: Path = CACHE) -> None:
    """Download and unpack the sdist (pip, from the package index) unless it is there."""
    if (cache / SDIST_DIR / "CHANGELOG.md").is_file():
        return
    cache.mkdir(parents=True, exist_ok=True)
    say(f"downloading the {SDIST} sdist")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", SDIST,
         "-d", str(cache)],
        check=True,
    )  # fmt: skip
    with tarfile.open(cache / f"{SDIST_DIR}.tar.gz") as archive:
        archive.extractall(cache, filter="data")


def build_command(cache: Path = CACHE) -> list[list[str]]:
    """The two cmake commands that build `llama-server` and nothing else."""
    build = cache / "build-server"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(source_dir(cache)), "-B", str(build), *generator, *CMAKE_FLAGS]
    configure.append(f"-DLLAMA_BUILD_COMMIT={llama_cpp_commit(cache)}")
    return [configure, ["cmake", "--build", str(build), "--target", "llama-server", "-j2"]]


def build_server(cache: Path = CACHE) -> Path:
    """Build `llama-server` once (CPU, server target only); record how long it took."""
    binary = server_binary(cache)
    if binary.is_file():
        return binary
    fetch_sdist(cache)
    started = time.monotonic()
    for command in build_command(cache):
        say(" ".join(command))
        subprocess.run(command, check=True)
    seconds = round(time.monotonic() - started)
    (cache / "build-time.txt").write_text(f"rc=0 seconds={seconds}\n", encoding="utf-8")
    say(f"llama-server built in {seconds} s")
    return binary


# --- 2. the steered models ----------------------------------------------------------------------

# Qwen3's added tokens (tokenizer.json of Qwen/Qwen3-0.6B): control tokens, then the tags that
# are ordinary text to the tokenizer's pre-splitting but single tokens (user-defined).
ADDED_TOKENS: list[tuple[str, bool]] = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", True),
    ("<|fim_middle|>", True),
    ("<|fim_suffix|>", True),
    ("<|fim_pad|>", True),
    ("<|repo_name|>", True),
    ("<|file_sep|>", True),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
]
FIRST_ADDED = 151643
IM_END = "<|im_end|>"
# Token types in GGUF (gguf.TokenType): NORMAL 1, CONTROL 3, USER_DEFINED 4.
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4

# Whitespace the parser's grammar takes in any amount (`p.space()` between tags): the steered
# text uses a different whitespace token at each place, since a token may occur only once.
# `GAP` is the same inside JSON, where a space (or none) reads best.
SLOT, GAP = "\x00", "\x01"
SPELLINGS: dict[str, list[bytes]] = {
    SLOT: [b"\n", b"\n\n", b"", b" \n", b"\n\n\n", b"\n ", b"  \n"],
    GAP: [b"", b" "],
}

CALL_REASONING = "Two cities, one day each: two calls."
ANSWER_REASONING = "Both results are in: sun in Paris and snow in Oslo"
ANSWER = "Tomorrow Paris will be sunny, while Oslo gets snow."
CALLS = [
    ("get_forecast", {"city": "Paris", "days": 1}),
    ("get_forecast", {"city": "Oslo", "days": 1}),
]


def compact(args: dict[str, Any]) -> str:
    """JSON arguments with a `GAP` (optional whitespace) after each colon and comma."""
    return json.dumps(args, separators=(f",{GAP}", f":{GAP}"))


def hermes_call(name: str, args: dict[str, Any]) -> str:
    """One call as Qwen3 writes it. The parser wants the template's "<tool_call>\n" and
    "\n</tool_call>" exactly; inside the JSON any whitespace goes."""
    return (
        f'<tool_call>\n{{"name":{GAP}"{name}",{GAP}"arguments":{GAP}{compact(args)}}}\n</tool_call>'
    )


def xml_call(name: str, args: dict[str, Any]) -> str:
    """One call as Qwen3.5 writes it (its template's rendering; the parser wants it exactly)."""
    params = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


@dataclass(frozen=True)
class ModelSpec:
    """One steered model: its file, the template it carries, and the texts it writes."""

    name: str
    template: str  # file in vendor/llama.cpp/models/templates
    first_part: str  # with no tool result in the prompt: the reasoning and the first call...
    second_part: str  # ...then, after the `mark` token, the second call
    answer: str  # the continuation once a `<tool_response>` is in the prompt
    trigram: bool = False  # True: the next token depends on the previous two (see write_gguf)
    # The token between the two calls. No lesson prompt contains it, so a head that looks for it
    # tells the second call from the first (they share most of their tokens). By default a
    # whitespace token.
    mark: str = "\n\n\n"

    def path(self, cache: Path = CACHE) -> Path:
        """Where the GGUF file goes."""
        return cache / "models" / f"{self.name}.gguf"


MODELS: dict[str, ModelSpec] = {
    "qwen3": ModelSpec(
        name="qwen3-tiny-steered",
        template="Qwen-Qwen3-0.6B.jinja",
        # The Qwen3 template's prompt ends with "assistant\n": the model opens <think> itself.
        first_part=f"<think>{CALL_REASONING}</think>{SLOT}{hermes_call(*CALLS[0])}",
        second_part=hermes_call(*CALLS[1]),
        answer=f"<think>{ANSWER_REASONING}</think>{SLOT}{ANSWER}",
    ),
    "qwen3.5": ModelSpec(
        name="qwen3.5-tiny-steered",
        template="Qwen3.5-4B.jinja",
        # The Qwen3.5 template's prompt ends with "<think>\n": the model starts reasoning. Its
        # parser wants many exact newlines, so this model reads two tokens, not one.
        first_part=f"{CALL_REASONING}\n</think>\n\n{xml_call(*CALLS[0])}",
        # The grammar allows no whitespace token between the calls that the prompt lacks, so
        # the second call's "<tool_call>" is spelled "<t" "ool" ..., and "<t" is the mark.
        second_part=xml_call(*CALLS[1]).removeprefix("<t"),
        mark="<t",
        answer=f"{ANSWER_REASONING}\n</think>\n\n{ANSWER}",
        trigram=True,
    ),
}


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the character standing for each byte in the vocabulary."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


@dataclass
class Vocabulary:
    """The Qwen2 BPE vocabulary with Qwen3's added tokens, and each token's bytes."""

    tokens: list[str]
    types: list[int]
    merges: list[str]
    by_bytes: dict[bytes, int]
    longest: int

    @classmethod
    def load(cls, cache: Path = CACHE) -> Vocabulary:
        """Read ggml-vocab-qwen2.gguf and put Qwen3's added tokens in place."""
        import gguf

        reader = gguf.GGUFReader(source_dir(cache) / "models" / "ggml-vocab-qwen2.gguf")
        tokens = list(reader.fields["tokenizer.ggml.tokens"].contents())
        types = list(reader.fields["tokenizer.ggml.token_type"].contents())
        merges = list(reader.fields["tokenizer.ggml.merges"].contents())
        for offset, (text, control) in enumerate(ADDED_TOKENS):
            tokens[FIRST_ADDED + offset] = text
            types[FIRST_ADDED + offset] = CONTROL if control else USER_DEFINED
        decode = byte_decoder()
        by_bytes: dict[bytes, int] = {}
        for token_id, (text, kind) in enumerate(zip(tokens, types, strict=True)):
            if kind == NORMAL:
                raw = bytes(decode[c] for c in text)
            elif kind == USER_DEFINED and not text.startswith("[PAD"):
                raw = text.encode("utf-8")
            else:
                continue  # control tokens and padding are never written by the steered model
            by_bytes.setdefault(raw, token_id)
        return cls(tokens, types, merges, by_bytes, max(map(len, by_bytes)))

    def spell(
        self,
        text: str,
        taken: set[Any],
        after: int | None = None,
        then: int | None = None,
    ) -> list[int]:
        """Token ids whose bytes join to `text`, none in `taken` and none repeated. With `after`
        (the token before the text), a (previous, current) pair may recur if the same token
        follows it each time, and `then` is the token that must follow the text. Each `SLOT` or
        `GAP` in `text` is whitespace the grammar accepts in any amount: its spellings are tried
        in order first, then in seeded random mixes."""
        pieces = re.split(f"([{SLOT}{GAP}])", text)
        for attempt in range(400):
            rng = random.Random(attempt)
            concrete = b"".join(
                (SPELLINGS[piece][0] if attempt == 0 else rng.choice(SPELLINGS[piece]))
                if piece in SPELLINGS
                else piece.encode("utf-8")
                for piece in pieces
            )
            found = self._spell_exactly(concrete, taken, after, then)
            if found is not None:
                return found
        raise RuntimeError(f"no spelling of {text!r} without a repeated token")

    def _spell_exactly(
        self,
        data: bytes,
        taken: set[Any],
        after: int | None,
        then: int | None = None,
        budget: int = 20_000,
    ) -> list[int] | None:
        """Longest pieces first, backtracking, giving up after `budget` steps. A tag that is one
        token in the vocabulary (`<think>`, `<tool_call>`...) starts a piece, so it is written as
        that one token wherever the no-repeat rule allows."""
        starts = {
            found.start()
            for tag, _ in ADDED_TOKENS
            for found in re.finditer(re.escape(tag.encode()), data)
        }
        choices = [
            [
                (token_id, size)
                for size in range(min(self.longest, len(data) - at), 0, -1)
                if (token_id := self.by_bytes.get(data[at : at + size])) is not None
                and not any(at < edge < at + size for edge in starts)
            ]
            for at in range(len(data))
        ]
        if after is not None:  # the tokens in `taken` are reserved for other places
            choices = [[o for o in options if o[0] not in taken] for options in choices]
        steps = [budget]

        def search(at: int, used: set[Any]) -> list[int] | None:
            if at == len(data):
                return []
            steps[0] -= 1
            if steps[0] < 0:
                return None
            for token_id, size in choices[at]:
                if token_id in used:
                    continue
                used.add(token_id)
                rest = search(at + size, used)
                used.discard(token_id)
                if rest is not None:
                    return [token_id, *rest]
            return None

        def search_pairs(
            at: int, rules: dict[tuple[Any, int], int], state: tuple[Any, int]
        ) -> list[int] | None:
            """The same, where a (previous, current) pair may recur if it is followed by the
            same token each time (the model reads two tokens)."""
            if at == len(data):
                return [] if then is None or rules.get(state, then) == then else None
            steps[0] -= 1
            if steps[0] < 0:
                return None
            for token_id, size in choices[at]:
                known = rules.get(state)
                if known is not None and known != token_id:
                    continue
                rules[state] = token_id
                rest = search_pairs(at + size, rules, (state[1], token_id))
                if known is None:
                    del rules[state]
                if rest is not None:
                    return [token_id, *rest]
            return None

        if after is not None:
            return search_pairs(0, {}, (None, after))
        return search(0, set(taken))


ROPE_BASE = 1_000_000.0
# The three contexts a state token can be in, told apart by the two attention heads.
FIRST, SECOND, ANSWER_CONTEXT = "first", "second", "answer"


def steering_table(vocab: Vocabulary, spec: ModelSpec, start: int) -> dict[int, dict[str, int]]:
    """`table[current][context] = next`: what the model writes after each token, by context."""
    end = vocab.tokens.index(IM_END)
    mark = vocab.by_bytes[spec.mark.encode()]
    first = [start, *vocab.spell(spec.first_part, {start, mark})]
    second = [mark, *vocab.spell(spec.second_part, {mark})]
    answer = [start, *vocab.spell(spec.answer, {start, mark}), end]
    table: dict[int, dict[str, int]] = {}
    for context, ids in (
        (FIRST, [*first, mark]),
        (SECOND, [*second, end]),
        (ANSWER_CONTEXT, answer),
    ):
        for current, following in zip(ids[:-1], ids[1:], strict=True):
            table.setdefault(current, {})[context] = following
    return table


def bigram_weights(vocab: Vocabulary, spec: ModelSpec, start_token: int) -> dict[str, Any]:
    """The Qwen3 model: next token = f(current token, two switches) (see the module docstring)."""
    import numpy as np

    table = steering_table(vocab, spec, start_token)
    # Residual dims: a constant 1, the two marker inputs, the two flags the heads write, then
    # one dim per state token (a token the model reads while writing).
    bias, result_key, mark_key, result_flag, mark_flag = range(5)
    states = sorted(table)
    n_embd = max(128, -(-(5 + len(states)) // 64) * 64)
    dim = {token_id: 5 + i for i, token_id in enumerate(states)}
    n_vocab = len(vocab.tokens)
    mark = vocab.by_bytes[spec.mark.encode()]

    embed = np.zeros((n_vocab, n_embd), dtype=np.float32)
    embed[:, bias] = 1.0
    embed[vocab.tokens.index("<tool_response>"), result_key] = 1.0
    embed[mark, mark_key] = 1.0
    for token_id, d in dim.items():
        embed[token_id, d] = 1.0

    # Logits: the usual next token gets `keep` from the current token's dim. Where the context
    # changes the next token, that token gets a little less from the current token's dim and a
    # boost from the flag that marks its context, so it wins exactly when the flag is on.
    # Every boost is well below `keep`, so a flag never makes a wrong token win elsewhere.
    keep = 20.0
    penalty = {SECOND: 2.0, ANSWER_CONTEXT: 2.0}
    boost = {SECOND: (mark_flag, 4.0), ANSWER_CONTEXT: (result_flag, 8.0)}
    output = np.zeros((n_vocab, n_embd), dtype=np.float32)
    for token_id, by_context in table.items():
        base_context = next(c for c in (FIRST, SECOND, ANSWER_CONTEXT) if c in by_context)
        base = by_context[base_context]
        output[base, dim[token_id]] += keep
        for context, following in by_context.items():
            if following == base:
                continue
            flag_dim, size = boost[context]
            output[following, dim[token_id]] += keep - penalty[context]
            output[following, flag_dim] = size

    # Two heads of size n_embd/2. Head 0 asks "is a <tool_response> in the context?", head 1
    # "has the mark been written?". A state token's normed input has about sqrt(n_embd/3) or
    # more in `bias`, a marker's as much in its key dim; the score q.k/sqrt(head) is then >= 40
    # on a marker and 0 elsewhere, so a head's output is ~1 with a marker present, else 0.
    head = n_embd // 2
    third = n_embd / 3
    qk = (40.0 * head**0.5) ** 0.5 / third**0.5
    wq = np.zeros((n_embd, n_embd), dtype=np.float32)
    wk = np.zeros((n_embd, n_embd), dtype=np.float32)
    wv = np.zeros((n_embd, n_embd), dtype=np.float32)
    wo = np.zeros((n_embd, n_embd), dtype=np.float32)
    for h, (key_dim, flag_dim, norm) in enumerate(
        ((result_key, result_flag, n_embd / 2), (mark_key, mark_flag, third))
    ):
        rope_dim = h * head + head - 2  # the head's lowest-frequency RoPE pair
        wq[rope_dim, bias] = qk
        wk[rope_dim, key_dim] = qk
        wv[h * head, key_dim] = 1.0 / norm**0.5  # 1 from the marker token, 0 from others
        wo[flag_dim, h * head] = 1.0
    return {"n_embd": n_embd, "embed": embed, "output": output, "q": wq, "k": wk, "v": wv, "o": wo}


def trigram_table(
    vocab: Vocabulary, spec: ModelSpec, start: int
) -> dict[tuple[int | None, int], dict[str, int]]:
    """`table[(previous, current)][context] = next`; `previous` is None for a prompt token the
    model never writes. The two calls are separate regions (the mark between them switches),
    since their last tokens are the same text."""
    end = vocab.tokens.index(IM_END)
    mark = vocab.by_bytes[spec.mark.encode()]
    first = [start, *vocab.spell(spec.first_part, {mark}, start, then=mark)]
    second = [mark, *vocab.spell(spec.second_part, {mark}, mark, then=end), end]
    answer = [start, *vocab.spell(spec.answer, {mark}, start, then=end), end]
    table: dict[tuple[int | None, int], dict[str, int]] = {}
    for context, ids, previous in (
        (FIRST, [*first, mark], None),
        (SECOND, second, first[-1]),
        (ANSWER_CONTEXT, answer, None),
    ):
        for current, following in zip(ids[:-1], ids[1:], strict=True):
            table.setdefault((previous, current), {})[context] = following
            previous = current
    return table


def trigram_weights(vocab: Vocabulary, spec: ModelSpec, start_token: int) -> dict[str, Any]:
    """The Qwen3.5 model: next token = f(previous token, current token, one switch).

    Head 0 is the `<tool_response>` switch of the Qwen3 model. Head 1 copies the previous token
    into the residual stream: its query and key use the eight highest RoPE frequencies, with the
    key turned one position ahead, so the score peaks at a distance of exactly one token. The
    MLP has one unit per rule (previous, current[, switch]): its gate opens only when all of them
    are present, and it writes the rule's own dim, which the output maps to the rule's next
    token."""
    import numpy as np

    table = trigram_table(vocab, spec, start_token)
    states = sorted({t for key in table for t in key if t is not None})
    count = len(states)
    mark = vocab.by_bytes[spec.mark.encode()]
    units: list[tuple[int | None, int, str | None, int]] = []  # previous, current, switch, next
    for (before, current), by_context in table.items():
        if len(set(by_context.values())) == 1:
            units.append((before, current, None, next(iter(by_context.values()))))
        else:
            units.extend((before, current, context, nxt) for context, nxt in by_context.items())
    # Residual dims: a constant 1, the "<tool_response>" input, the switch, "not a state"
    # (every token has exactly two ones, so every normed input has the same size), the current
    # token, the previous token as head 1 copies it (the last: "not a state"), one per rule.
    bias, result_key, result_flag, other, mark_flag = range(5)
    cur = {token_id: 5 + i for i, token_id in enumerate(states)}
    prev: dict[int | None, int] = {t: 5 + count + i for i, t in enumerate(states)}
    prev[None] = 5 + 2 * count
    rule = [6 + 2 * count + i for i in range(len(units))]
    head = -(-max(count + 1, (6 + 2 * count + len(units) + 2) // 3) // 32) * 32
    n_embd = 3 * head
    n_vocab = len(vocab.tokens)
    response = vocab.tokens.index("<tool_response>")

    embed = np.zeros((n_vocab, n_embd), dtype=np.float32)
    embed[:, bias] = 1.0
    embed[:, other] = 1.0
    embed[response, other], embed[response, result_key] = 0.0, 1.0
    for token_id, d in cur.items():
        embed[token_id, other], embed[token_id, d] = 0.0, 1.0

    half = n_embd / 2  # a normed input has sqrt(n_embd/2) in each of its two dims
    wq = np.zeros((n_embd, n_embd), dtype=np.float32)
    wk = np.zeros((n_embd, n_embd), dtype=np.float32)
    wv = np.zeros((n_embd, n_embd), dtype=np.float32)
    wo = np.zeros((n_embd, n_embd), dtype=np.float32)
    qk = (40.0 * head**0.5) ** 0.5 / half**0.5
    # Heads 0 and 2, the lowest-frequency pair: the <tool_response> and the mark switches (the
    # mark is read from its own token dim, so its input keeps two ones like every token's).
    for h, key_dim, flag_dim in ((0, result_key, result_flag), (2, cur[mark], mark_flag)):
        wq[h * head + head - 2, bias] = qk
        wk[h * head + head - 2, key_dim] = qk
        wv[h * head, key_dim] = 1.0 / half**0.5
        wo[flag_dim, h * head] = 1.0
    pairs = 8  # head 1: score(distance) = sum of cos(theta_i * (distance - 1)) over 8 pairs
    amplitude = (100.0 / pairs * head**0.5) ** 0.5 / half**0.5
    for i in range(pairs):
        theta = ROPE_BASE ** (-2 * i / head)
        wq[head + 2 * i, bias] = amplitude
        wk[head + 2 * i, bias] = amplitude * np.cos(theta)
        wk[head + 2 * i + 1, bias] = amplitude * np.sin(theta)
    for i, token_id in enumerate(states):  # the value: which token stood one position back
        wv[head + i, cur[token_id]] = 1.0 / half**0.5
        wo[prev[token_id], head + i] = 1.0
    wv[head + count, other] = 1.0 / half**0.5
    wo[prev[None], head + count] = 1.0

    # The MLP's input holds 3 to 5 ones (constant, current, previous, the switches that are
    # on), all normed to one size v (0.45 to 0.58 of sqrt(n_embd)). Counted in v through the
    # constant input, a unit's gate is (its inputs present) - 2 * threshold: +0.44 when both
    # tokens are there, -0.56 with one (threshold 0.78); with its switch as a third input, +0.5
    # and -0.5 (threshold 1.25). A switch that must be off weighs -3. `sharp` makes that +-10.
    root = n_embd**0.5
    sharp = 50.0 / root
    gate = np.zeros((len(units), n_embd), dtype=np.float32)
    up = np.zeros((len(units), n_embd), dtype=np.float32)
    down = np.zeros((n_embd, len(units)), dtype=np.float32)
    output = np.zeros((n_vocab, n_embd), dtype=np.float32)
    threshold = {None: 0.78, FIRST: 0.78, SECOND: 1.25, ANSWER_CONTEXT: 1.25}
    switches = {  # (result switch, mark switch) weights: on for its own context, off otherwise
        None: (0.0, 0.0),
        FIRST: (-3.0, -3.0),
        SECOND: (-3.0, 1.0),
        ANSWER_CONTEXT: (1.0, -3.0),
    }
    for u, (before, current, context, following) in enumerate(units):
        gate[u, cur[current]] = sharp
        gate[u, prev[before]] = sharp
        gate[u, result_flag] = sharp * switches[context][0]
        gate[u, mark_flag] = sharp * switches[context][1]
        gate[u, bias] = -sharp * threshold[context] * 2.0  # the constant input is ~0.5 of root
        up[u, bias] = 2.0 / root
        down[rule[u], u] = 1.0
        output[following, rule[u]] = 1.0
    return {
        "n_embd": n_embd, "embed": embed, "output": output,
        "q": wq, "k": wk, "v": wv, "o": wo, "gate": gate, "up": up, "down": down,
    }  # fmt: skip


def write_gguf(spec: ModelSpec, cache: Path = CACHE, start_token: int = 198) -> Path:
    """Write the steered one-layer model for `spec` (see the module docstring)."""
    import gguf
    import numpy as np

    vocab = Vocabulary.load(cache)
    weights = (trigram_weights if spec.trigram else bigram_weights)(vocab, spec, start_token)
    n_embd = weights["n_embd"]
    n_vocab = len(vocab.tokens)
    n_head = 3 if spec.trigram else 2
    head = n_embd // n_head
    ones = np.ones(n_embd, dtype=np.float32)
    embed, output = weights["embed"], weights["output"]
    wq, wk, wv, wo = weights["q"], weights["k"], weights["v"], weights["o"]
    n_ff = 32  # the Qwen3 model's MLP is all zeros
    gate = weights.get("gate", np.zeros((n_ff, n_embd), dtype=np.float32))
    up = weights.get("up", np.zeros((n_ff, n_embd), dtype=np.float32))
    down = weights.get("down", np.zeros((n_embd, n_ff), dtype=np.float32))
    n_ff = gate.shape[0]

    path = spec.path(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(spec.name)
    writer.add_description(
        "Steered, not trained: a one-layer model whose weights make greedy decoding write fixed "
        "texts for a tool-calling lesson (scripts/capture_llamacpp.py)."
    )
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(1)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(head)
    writer.add_rope_freq_base(ROPE_BASE)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.types)
    writer.add_token_merges(vocab.merges)
    writer.add_eos_token_id(vocab.tokens.index(IM_END))
    writer.add_pad_token_id(vocab.tokens.index("<|endoftext|>"))
    writer.add_bos_token_id(vocab.tokens.index("<|endoftext|>"))
    writer.add_add_bos_token(False)
    template = source_dir(cache) / "models" / "templates" / spec.template
    writer.add_chat_template(template.read_text(encoding="utf-8"))
    writer.add_tensor("token_embd.weight", embed.astype(np.float16))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output.astype(np.float16))
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    writer.add_tensor("blk.0.attn_q.weight", wq)
    writer.add_tensor("blk.0.attn_k.weight", wk)
    writer.add_tensor("blk.0.attn_v.weight", wv)
    writer.add_tensor("blk.0.attn_output.weight", wo)
    writer.add_tensor("blk.0.ffn_norm.weight", ones)
    writer.add_tensor("blk.0.ffn_gate.weight", gate)
    writer.add_tensor("blk.0.ffn_up.weight", up)
    writer.add_tensor("blk.0.ffn_down.weight", down)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# --- 3. the server ------------------------------------------------------------------------------


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_flags(spec: ModelSpec, port: int, cache: Path = CACHE) -> list[str]:
    """llama-server's arguments: greedy, seeded, one slot, a small context. This build's defaults
    `--jinja` and `--reasoning-format auto` (the same as `deepseek`) are not passed."""
    return [
        "-m", str(spec.path(cache)), "--alias", spec.name,
        "--host", "127.0.0.1", "--port", str(port),
        "-c", str(CONTEXT), "-np", "1", "--temp", "0", "--seed", str(SEED),
    ]  # fmt: skip


@contextmanager
def serve(spec: ModelSpec, *extra: str, cache: Path = CACHE) -> Iterator[str]:
    """Run llama-server with `spec`'s model on 127.0.0.1; yield its /v1 base URL; stop it."""
    port = free_port()
    log_path = cache / f"server-{spec.name}.log"
    command = [str(server_binary(cache)), *server_flags(spec, port, cache), *extra]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama-server exited ({process.returncode}):\n{tail}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not come up; see {log_path}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- 4. recording through record mode -----------------------------------------------------------

NOTEBOOK = "07_qwen_today"
ENGINE_PATH = "/engines/llamacpp/v1"


def question(**extra: Any) -> dict[str, Any]:
    """create() arguments of lesson 07's two-city question with its forecast tool, and `extra`."""
    from helpers.replay.scenarios.n07_qwen_today import COMPARE_PROMPT, FORECAST_TOOLS

    return {
        "messages": [{"role": "user", "content": COMPARE_PROMPT}],
        "tools": FORECAST_TOOLS,
        **extra,
    }


def lesson_requests() -> list[tuple[str, dict[str, Any]]]:
    """(label, create() arguments) of every llama.cpp request lesson 07 sends in replay mode:
    the same two-city question, streamed, without and with `parallel_tool_calls`."""
    base = question(stream=True)
    return [
        ("compare-stream/llamacpp/captured", base),
        ("compare-stream-parallel/llamacpp/captured", {**base, "parallel_tool_calls": True}),
    ]


def observation_requests() -> list[tuple[str, dict[str, Any]]]:
    """Requests no lesson sends, kept as evidence for what the lesson and profile say."""
    base = question()
    return [
        ("no-stream", base),
        ("parallel-false", {**base, "parallel_tool_calls": False}),
        # 20 tokens end inside the first call's name, 30 inside its arguments.
        ("cut-in-name", {**base, "max_tokens": 20}),
        ("cut-in-name-stream", {**base, "max_tokens": 20, "stream": True}),
        ("cut-in-arguments", {**base, "max_tokens": 30}),
        ("cut-in-arguments-stream", {**base, "max_tokens": 30, "stream": True}),
        ("usage-stream", {**base, "stream": True, "stream_options": {"include_usage": True}}),
        ("tool-choice-none", {**base, "tool_choice": "none"}),
        ("tool-choice-required", {**base, "tool_choice": "required"}),
    ]


def xml_requests() -> list[tuple[str, dict[str, Any]]]:
    """The same question to the Qwen3.5 model (XML calls, llama.cpp's Qwen3-Coder parser)."""
    base = question()
    return [
        ("qwen3.5/no-stream", base),
        ("qwen3.5/parallel-false", {**base, "parallel_tool_calls": False}),
        ("qwen3.5/stream", {**base, "stream": True}),
    ]


def _record_env(base_url: str, model: str, folder: Path) -> None:
    """Record mode towards `base_url` (llama-server needs no key; the client sends one)."""
    os.environ.update(
        LLM_MODE="record",
        QWEN_BASE_URL=base_url,
        QWEN_API_KEY="no-key",
        QWEN_MODEL=model,
        LLM_RECORD_DIR=str(folder),
    )


def _recorded(folder: Path, name: str) -> list[dict[str, Any]]:
    """The exchanges record mode wrote to `<folder>/<name>.json`."""
    from helpers.replay.cassette import load_cassette

    path = folder / f"{name}.json"
    if not path.is_file():
        raise RuntimeError(f"record mode wrote nothing to {path}")
    return [
        {"label": item.label, "request": item.request, "response": item.response}
        for item in load_cassette(path).interactions
    ]


def _send(client: Any, kwargs: dict[str, Any]) -> None:
    """Send one request; an HTTP error is an answer worth recording, not a failure."""
    import openai

    try:
        result = client.chat.completions.create(**kwargs)
        if kwargs.get("stream"):
            for _ in result:
                pass
    except openai.APIError as exc:
        say(f"  answered with an error (kept): {type(exc).__name__}: {str(exc)[:120]}")


@contextmanager
def recording(spec: ModelSpec, folder: Path, *extra: str, cache: Path = CACHE) -> Iterator[None]:
    """A llama-server for `spec` (with `extra` flags) and record mode pointed at it; record
    mode's proxies are stopped before the server."""
    from helpers.replay.modes import stop_servers

    with serve(spec, *extra, cache=cache) as base_url:
        _record_env(base_url, spec.name, folder)
        try:
            yield
        finally:
            stop_servers()


def _client(lesson: str) -> tuple[Any, str]:
    """A client that records into `<lesson>.json`, and the model name to send."""
    from openai import OpenAI

    from helpers.replay.modes import connect

    conn = connect("qwen", lesson=lesson)
    client = OpenAI(
        base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client(), max_retries=0
    )
    return client, conn.model_name


def _record_one(folder: Path, lesson: str, label: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Send one request recorded into `<lesson>.json`; return its exchange, labelled `label`."""
    client, model_name = _client(lesson)
    _send(client, {"model": model_name, **kwargs})
    [item] = _recorded(folder, lesson)
    return {**item, "label": label}


def record_all(spec: ModelSpec, folder: Path, cache: Path = CACHE) -> dict[str, Any]:
    """Run every request through record mode against a live llama-server; return the capture
    file's sections."""
    from helpers.loop import run_tool_loop
    from helpers.replay.scenarios.n07_qwen_today import (
        COMPARE_PROMPT,
        FORECAST_TOOLS,
        get_forecast,
    )
    from helpers.tools import ToolRegistry

    cassette: list[dict[str, Any]] = []
    observations: list[dict[str, Any]] = []
    with recording(spec, folder, cache=cache):
        for number, (label, kwargs) in enumerate(lesson_requests(), 1):
            say(f"lesson request: {label}")
            cassette.append(_record_one(folder, f"lesson-{number}", label, kwargs))
        for number, (label, kwargs) in enumerate(observation_requests(), 1):
            say(f"observation: {label}")
            observations.append(_record_one(folder, f"observation-{number}", label, kwargs))
        # The whole tool loop, as lesson 07 runs it on the vLLM profiles.
        client, model_name = _client("tool-loop")
        registry = ToolRegistry()
        registry.register(get_forecast, schema=FORECAST_TOOLS[0])
        messages = [{"role": "user", "content": COMPARE_PROMPT}]
        say("observation: tool loop")
        final = run_tool_loop(client, messages, registry, model=model_name)
        say(f"  final answer: {final.get('content')!r}")
        for number, item in enumerate(_recorded(folder, "tool-loop"), 1):
            observations.append({**item, "label": f"tool-loop/round-{number}"})
    with recording(spec, folder, "--no-jinja", cache=cache):
        say("observation: --no-jinja with tools")
        observations.append(_record_one(folder, "no-jinja", "no-jinja-with-tools", question()))
    with recording(MODELS["qwen3.5"], folder, cache=cache):
        for number, (label, kwargs) in enumerate(xml_requests(), 1):
            say(f"observation: {label}")
            observations.append(_record_one(folder, f"xml-{number}", label, kwargs))
    for item in cassette:
        item["request"]["path"] = ENGINE_PATH + item["request"]["path"].removeprefix("/v1")
    return {"cassettes": {NOTEBOOK: cassette}, "observations": observations}


def capture_meta(spec: ModelSpec, cache: Path = CACHE) -> dict[str, str]:
    """Where the capture comes from: build, server command, model, the command, the date."""
    commit = llama_cpp_commit(cache)
    flags = server_flags(spec, 0, cache)
    flags[flags.index("-m") + 1] = f"{spec.name}.gguf"
    flags[flags.index("--port") + 1] = "<free port>"
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    return {
        "source": f"captured from llama.cpp {commit} (tiny steered model, {date})",
        "engine": "llamacpp",
        "software": "llama.cpp",
        "commit": commit,
        "build": f"llama.cpp ggml-org/llama.cpp@{commit} as vendored in the {SDIST} sdist "
        "(PyPI), llama-server target only, CPU, cmake Release",
        "server_command": "llama-server " + " ".join(flags),
        "model": f"{spec.name}.gguf (the `qwen3.5/` observations: "
        f"{MODELS['qwen3.5'].name}.gguf with models/templates/{MODELS['qwen3.5'].template}): "
        f"written by {COMMAND}; the real Qwen2 BPE vocabulary (models/ggml-vocab-qwen2.gguf) "
        f"with Qwen3's added tokens and llama.cpp's own models/templates/{spec.template}; the "
        "weights are STEERED (one layer, not trained) so that greedy decoding writes a fixed "
        "reasoning block and two get_forecast calls, and a fixed final answer once tool "
        "results are in the prompt. The model's text is scripted; the prompt, grammar, parsing, "
        "ids and response shapes are llama-server's.",
        "command": COMMAND,
        "date": date,
    }


def main(argv: list[str] | None = None) -> int:
    """Build, write the model, record, and write data/captures/llamacpp.json."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="only build llama-server")
    parser.add_argument("--out", type=Path, default=CAPTURES / "llamacpp.json")
    args = parser.parse_args(argv)
    binary = build_server()
    if args.build:
        print(binary)
        return 0
    spec = MODELS["qwen3"]
    for model in MODELS.values():
        write_gguf(model)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="capture-llamacpp-") as tmp:
        sections = record_all(spec, Path(tmp))
    capture = {"meta": capture_meta(spec), **sections}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(capture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    say(f"wrote {args.out}; now run: python -m helpers.replay synthesize")
    return 0


if __name__ == "__main__":
    sys.exit(main())
