"""Build the offline Kimi-K2 and Qwen tokenizers into data/tokenizers/ (offline, reproducible).

Each tokenizer is a small byte-level BPE trained on the short course corpus below (so any text,
Russian and Chinese included, tokenizes without unknown tokens), plus the format markers as single
tokens at their real ids, plus the model's official chat template vendored in data/templates/.
The vocabulary is a dict with a gap: ordinary tokens take ids 0..N-1 and the markers sit at
151644+ / 163586+.

Usage: python scripts/build_tokenizers.py [--out FOLDER]   (default: data/tokenizers)
Running it twice gives byte-identical files (tests/test_templates.py checks the committed ones).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout first

from helpers._hf import import_transformers  # noqa: E402
from helpers.paths import REPO_ROOT, TOKENIZERS_DIR  # noqa: E402
from helpers.templates import MARKERS, TEMPLATE_FILES, Marker  # noqa: E402

# The byte-level base: 256 byte symbols plus merges learnt from CORPUS, at most this many tokens.
BASE_VOCAB_SIZE = 1024
MIN_FREQUENCY = 2
TITLES = {"kimi-k2": "Kimi-K2", "qwen2.5": "Qwen2.5"}
TITLES.update({"qwen3": "Qwen3", "qwen3.5": "Qwen3.5"})
TITLES["kimi-k2-thinking"] = "Kimi-K2-Thinking"  # Kimi-K2's markers, the K2-Thinking template

# Training text for the base merges: the words the lessons show (EN, RU, ZH, JSON, code).
CORPUS: tuple[str, ...] = (
    "What's the weather like in Beijing today? Let's check using the tool.",
    "What's the weather like in Paris right now? How about tomorrow?",
    "What's the temperature in San Francisco now? And in Moscow?",
    "Get weather information. Call this tool when the user needs to get weather information.",
    "Get the current weather in a given location. The city and state, e.g. San Francisco, CA.",
    "You are a helpful assistant. You may call one or more functions to assist with the query.",
    "You are provided with function signatures within XML tags.",
    "For each function call, return a json object with function name and arguments.",
    "The model writes the tool calls as text; the server parses them and returns tool_calls.",
    "The assistant message with the calls comes before the tool results in the history.",
    "It is sunny and warm in Beijing today: 25 degrees, light wind from the north.",
    "Streaming sends the arguments in small fragments; join them by index before parsing.",
    "Search the news about Los Angeles today and summarize the three most important stories.",
    '{"city": "Beijing"}',
    '{"city": "Moscow", "unit": "celsius"}',
    '{"location": "Paris, France", "unit": "celsius"}',
    '{"weather": "Sunny", "temperature": 22, "unit": "celsius", "condition": "sunny"}',
    '{"content": "Los Angeles today"}',
    '{"error": "Unknown city: the tool could not find it"}',
    '{"type": "function", "function": {"name": "get_weather", "description": "Get weather"}}',
    '"parameters": {"type": "object", "required": ["city"], "properties": {"city": '
    '{"type": "string", "description": "City name"}}}',
    '{"role": "tool", "tool_call_id": "functions.get_weather:0", "name": "get_weather"}',
    '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_0", "type": "function"}]}',
    "functions.get_weather:0 functions.get_news:1 functions.get_current_weather:2",
    "# Tools\n## Return of functions.get_weather:0\n",
    'def get_weather(city: str) -> dict:\n    return {"weather": "Sunny"}\n',
    "arguments = json.loads(tool_call.function.arguments)\nresult = tool_map[name](**arguments)\n",
    "for chunk in stream:\n    if chunk.choices:\n        delta = chunk.choices[0].delta\n",
    "Какая сегодня погода в Пекине? Давай проверим с помощью инструмента.",
    "Какая погода сейчас в Москве? А завтра в Санкт-Петербурге?",
    "Модель вызывает инструмент: сервер разбирает вызов и возвращает результат.",
    "Сообщение ассистента с вызовами идёт перед результатами инструментов.",
    "Потоковая выдача присылает аргументы по частям; склеиваем их по индексу.",
    "Сегодня в Москве солнечно, плюс двадцать градусов, ветер слабый.",
    "Инструмент вернул ошибку: город не найден. Модель исправит аргументы.",
    "北京今天天气怎么样？我们用工具查一下。",
    "巴黎现在的天气怎么样？明天呢？",
    "今天北京晴天，气温二十五度，有微风。",
    "模型调用工具，服务器解析调用并返回结果。",
    "你是一个有帮助的助手。你可以调用一个或多个函数来帮助用户。",
)


def _train_base() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Train the byte-level BPE base on CORPUS: its vocab (ids 0..N-1) and merges."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=BASE_VOCAB_SIZE,
        min_frequency=MIN_FREQUENCY,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    model = json.loads(tokenizer.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return dict(model["vocab"]), merges


def _backend(markers: Sequence[Marker]) -> object:
    """A `tokenizers.Tokenizer`: the base BPE with the markers added at their ids."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    vocab, merges = _train_base()
    top = max(vocab.values())
    for marker in markers:
        if marker.token in vocab or marker.id <= top:
            raise ValueError(f"marker {marker.token!r} clashes with the base vocabulary")
        vocab[marker.token] = marker.id
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    # The vocab already holds the markers, so adding them reuses their ids (checked below).
    for marker in markers:
        token = AddedToken(marker.token, special=marker.special, normalized=False)
        if marker.special:
            tokenizer.add_special_tokens([token])
        else:
            tokenizer.add_tokens([token])
        if tokenizer.token_to_id(marker.token) != marker.id:
            raise RuntimeError(f"marker {marker.token!r} did not keep id {marker.id}")
    return tokenizer


def _readme(name: str, size: int) -> str:
    """The README.md of a built tokenizer folder."""
    title = TITLES[name]
    real_size = "160k" if name.startswith("kimi") else "150k"
    rows = "\n".join(
        f"| `{m.id}` | `{m.token.replace('|', chr(92) + '|')}` | {'yes' if m.special else 'no'} | "
        f"{'real' if m.confirmed else 'unconfirmed'} |"
        for m in sorted(MARKERS[name], key=lambda m: m.id)
    )
    template = TEMPLATE_FILES[name].relative_to(REPO_ROOT).as_posix()
    unconfirmed = ""
    if not all(m.confirmed for m in MARKERS[name]):
        unconfirmed = (
            "\nIds marked *unconfirmed* come from mirrored configs, not from the real tokenizer\n"
            "files; check them against the real tokenizer in live mode.\n"
        )
    return f"""# Offline {title} tokenizer (built for the course)

Built by `python scripts/build_tokenizers.py` with the `tokenizers` library, no network;
rebuilding gives byte-identical files. Load it with `helpers.templates.load_tokenizer({name!r})`.

This is **not** the real {title} vocabulary. The base is a small byte-level BPE ({size} tokens
trained on a few course sentences) so that any text, Russian and Chinese included, tokenizes; but
ordinary-text ids and token counts differ from the real {real_size}-token vocabulary. Only the
format markers below are single tokens at their real ids (the vocabulary has a gap up to them).
"Special" ones are dropped by `decode(..., skip_special_tokens=True)`; the others survive it, as in
the real model.

| id | token | special | id source |
|---|---|---|---|
{rows}
{unconfirmed}
The chat template (`chat_template.jinja`) is a byte-for-byte copy of `{template}`, the model's
official template; `data/templates/README.md` names its source, commit and licence. Every mode
(replay, live, record) uses this folder: nothing is downloaded.
"""


def build(name: str, folder: Path) -> Path:
    """Build tokenizer `name` into `folder` (created; files it held are replaced)."""
    transformers = import_transformers()
    markers = MARKERS[name]
    backend = _backend(markers)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, clean_up_tokenization_spaces=False
    )
    tokenizer.chat_template = TEMPLATE_FILES[name].read_text(encoding="utf-8")
    size = backend.get_vocab_size(with_added_tokens=False) - len(markers)
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp)
        tokenizer.save_pretrained(str(staging))
        (staging / "README.md").write_text(_readme(name, size), encoding="utf-8", newline="\n")
        if folder.exists():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, folder)
    return folder


def build_all(out: Path = TOKENIZERS_DIR) -> list[Path]:
    """Build every tokenizer into `out/<name>/`."""
    return [build(name, out / name) for name in MARKERS]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=TOKENIZERS_DIR, help="output folder")
    args = parser.parse_args(argv)
    for folder in build_all(args.out):
        files = sorted(p for p in folder.iterdir() if p.is_file())
        total = sum(p.stat().st_size for p in files)
        print(f"{folder}: {len(files)} files, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
