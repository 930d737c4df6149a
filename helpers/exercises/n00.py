"""Self-checks for lesson 00: live settings, a vLLM command for Qwen, reading a response."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from helpers.exercises._verdict import NotPlain, NotYet, exercise, plain, shorten, strict_equal

MOONSHOT_URLS = ("https://api.moonshot.ai/v1", "https://api.moonshot.cn/v1")
# Platform model ids are lower-case names without a slash: kimi-k2.6, kimi-k2.7-code, ...
PLATFORM_ID = re.compile(r"^(?:kimi|moonshot)-[a-z0-9][a-z0-9.\-]*$")
PLATFORM_EXAMPLES = "kimi-k2.6, kimi-k2.5"
# Ids third parties report retired in 2026 (Moonshot's own model guide no longer lists them).
RETIRED_IDS = frozenset(
    (
        "kimi-k2-0711-preview kimi-k2-0905-preview kimi-k2-turbo-preview kimi-k2-thinking "
        "kimi-k2-thinking-turbo kimi-latest"
    ).split()
)


@exercise
def check_live_env(env: Mapping[str, str]) -> None:
    """Exercise 1: the variables that switch the series to Kimi-K2 on the Moonshot platform."""
    try:
        env = plain(env)
    except NotPlain as refused:
        env = refused
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise NotYet(
            'live_env must be a dict of variable names to text values, e.g. {"LLM_MODE": "..."}.',
            'live_env должен быть словарём «имя переменной → текст», например {"LLM_MODE": "..."}.',
        )
    if any("KEY" in name.upper() for name in env):
        raise NotYet(
            "leave the API key out of the notebook: export KIMI_API_KEY in your shell.",
            "не пишите ключ в блокнот: задайте KIMI_API_KEY в терминале через export.",
        )
    if env.get("LLM_MODE") != "live":
        raise NotYet(
            'LLM_MODE must be "live" to talk to a real model.',
            'чтобы работать с настоящей моделью, LLM_MODE должен быть "live".',
        )
    url = str(env.get("KIMI_BASE_URL", "")).strip().rstrip("/")
    if url in ("https://api.moonshot.ai", "https://api.moonshot.cn"):
        raise NotYet(
            "the base URL needs the /v1 part: the SDK appends /chat/completions to it.",
            "в адресе нужен /v1: SDK дописывает к нему /chat/completions.",
        )
    if url not in MOONSHOT_URLS:
        raise NotYet(
            "KIMI_BASE_URL should be the Moonshot platform: https://api.moonshot.ai/v1.",
            "KIMI_BASE_URL должен вести на платформу Moonshot: https://api.moonshot.ai/v1.",
        )
    model = str(env.get("KIMI_MODEL", "")).strip()
    if not model:
        raise NotYet(
            f"KIMI_MODEL needs a model id of the platform, e.g. {PLATFORM_EXAMPLES}.",
            f"в KIMI_MODEL нужен id модели на платформе, например {PLATFORM_EXAMPLES}.",
        )
    if "/" in model:
        raise NotYet(
            f"{model} is a Hugging Face repository id (owner/name); the platform "
            f"names its models without a slash, e.g. {PLATFORM_EXAMPLES}.",
            f"{model} — это id репозитория на Hugging Face (владелец/имя); на платформе "
            f"модели называются без косой черты, например {PLATFORM_EXAMPLES}.",
        )
    if model in RETIRED_IDS:
        raise NotYet(
            f"{model} was reported retired in 2026; take a model the platform serves today, "
            "e.g. kimi-k2.6.",
            f"{model}, по сообщениям, снята с платформы в 2026 году; возьмите модель, которую "
            "платформа обслуживает сейчас, например kimi-k2.6.",
        )
    if not PLATFORM_ID.match(model):
        raise NotYet(
            f"{model!r} does not look like a platform model id such as {PLATFORM_EXAMPLES}.",
            f"{model!r} не похож на id модели платформы, например {PLATFORM_EXAMPLES}.",
        )


@exercise
def check_qwen_command(command: str) -> None:
    """Exercise 2: a vLLM command serving Qwen2.5-7B-Instruct with parsed tool calls."""
    if not isinstance(command, str) or len(command) > 2000:
        raise NotYet(
            "command must be the command line as one string.",
            "command должен быть командной строкой, одной строкой текста.",
        )
    try:
        words = _normal(shlex.split(str.__str__(command)))
    except ValueError as exc:
        raise NotYet(
            f"the command does not parse as a shell line: {exc}.",
            f"команда не разбирается как строка терминала: {exc}.",
        ) from exc
    served = _model_served(words)
    if served is None:
        raise NotYet(
            "this command does not start vLLM's OpenAI-compatible server (the vllm serve command, "
            "or the older module form); the exercise asks for vLLM.",
            "эта команда не запускает OpenAI-совместимый сервер vLLM (команду vllm serve или её "
            "старую форму через модуль); в упражнении нужен именно vLLM.",
        )
    if served != MODEL:
        raise NotYet(
            f"this command serves {served!r}, not {MODEL}: vLLM's server command names the model "
            "it serves first.",
            f"эта команда запускает {served!r}, а не {MODEL}: команда сервера vLLM первым делом "
            "называет модель, которую обслуживает.",
        )
    _fits_four_gpus(words)
    if "--enable-auto-tool-choice" not in words:
        raise NotYet(
            "add --enable-auto-tool-choice: without it vLLM answers a request with "
            'tool_choice="auto" (what the lessons send, and vLLM\'s default when a request has '
            "tools) with a 400; "
            'only a named tool or "required" works without the flag.',
            "добавьте --enable-auto-tool-choice: без него vLLM отвечает 400 на запрос с "
            'tool_choice="auto" (его передают уроки, и его же vLLM подразумевает, если в запросе '
            "есть tools); без "
            'флага работают только конкретный инструмент или "required".',
        )
    parser = _option(words, "--tool-call-parser")
    if parser is None:
        raise NotYet(
            "add --tool-call-parser: without a parser the calls stay text in content.",
            "добавьте --tool-call-parser: без парсера вызовы остаются текстом в content.",
        )
    if parser != "hermes":
        raise NotYet(
            f"Qwen2.5 writes Hermes-style <tool_call> blocks: the parser is hermes, not {parser}.",
            f"Qwen2.5 пишет вызовы в стиле Hermes (<tool_call>): нужен парсер hermes, "
            f"а не {parser}.",
        )


MODEL = "Qwen/Qwen2.5-7B-Instruct"
# vLLM's OpenAI server started as a module: the form older docs and scripts use.
API_SERVER = "vllm.entrypoints.openai.api_server"


def _model_served(words: list[str]) -> str | None:
    """The model a vLLM command line serves: `vllm serve MODEL ...`, or
    `python -m vllm.entrypoints.openai.api_server --model MODEL ...`; None for anything else."""
    if words[:2] == ["vllm", "serve"]:
        positional = len(words) > 2 and not words[2].startswith("-")
        return words[2] if positional else _option(words, "--model")
    python = re.fullmatch(r"(?:.*/)?python[\d.]*", words[0]) if words else None
    if python and words[1:3] == ["-m", API_SERVER]:
        return _option(words, "--model")
    return None


def _option(words: list[str], name: str, *aliases: str) -> str | None:
    """The value of `--name value` or `--name=value` in a split command line; given twice, the
    last one (argparse keeps the last)."""
    found = None
    for i, word in enumerate(words):
        for flag in (name, *aliases):
            if word == flag and i + 1 < len(words):
                found = words[i + 1]
            elif word.startswith(flag + "="):
                found = word.split("=", 1)[1]
    return found


def _normal(words: list[str]) -> list[str]:
    """Long options as vLLM's argument parser reads them: `--enable_auto_tool_choice` is
    `--enable-auto-tool-choice` (it turns `_` into `-` in an option's name, not in its value)."""
    out = []
    for word in words:
        if word.startswith("--"):
            key, eq, value = word.partition("=")
            word = key.replace("_", "-") + eq + value
        out.append(word)
    return out


GPUS = 4
HEADS = 28  # Qwen2.5-7B-Instruct's attention heads: tensor parallelism must divide them


def _fits_four_gpus(words: list[str]) -> None:
    """NotYet when the parallel sizes need more than the machine's four GPUs or do not divide
    the model's attention heads (vLLM refuses to start then)."""
    sizes = {}
    for name, alias in (
        ("--tensor-parallel-size", "-tp"),
        ("--pipeline-parallel-size", "-pp"),
        ("--data-parallel-size", "-dp"),
    ):
        value = _option(words, name, alias)
        try:
            sizes[name] = int(value) if value is not None else 1
        except ValueError:
            raise NotYet(
                f"{name} takes a whole number, not {value!r}.",
                f"{name} принимает целое число, а не {value!r}.",
            ) from None
    tp = sizes["--tensor-parallel-size"]
    total = tp * sizes["--pipeline-parallel-size"] * sizes["--data-parallel-size"]
    if min(sizes.values()) < 1 or total > GPUS:
        raise NotYet(
            f"these parallel sizes need {total} GPUs, and the machine has {GPUS}: vLLM would not "
            "start.",
            f"таким размерам параллелизма нужно GPU: {total}, а в машине их {GPUS}: vLLM не "
            "запустится.",
        )
    if HEADS % tp:
        raise NotYet(
            f"--tensor-parallel-size {tp} does not divide the model's {HEADS} attention heads: "
            "vLLM refuses to start.",
            f"--tensor-parallel-size {tp} не делит {HEADS} голов внимания модели: vLLM "
            "откажется запускаться.",
        )


@exercise
def check_reading(reply: Any, text: Any, finish_reason: Any, total_tokens: Any) -> None:
    """Exercise 3: the text, finish reason and total tokens of a chat completion."""
    from openai.types.chat import ChatCompletion

    if not isinstance(reply, ChatCompletion) or not reply.choices or reply.usage is None:
        raise NotYet(
            "reply is not the response of step 4 any more: run step 4's cell again, then this one.",
            "reply — уже не ответ из шага 4: запустите ещё раз ячейку шага 4, а затем эту.",
        )
    choice, usage = reply.choices[0], reply.usage
    for name, value, want, where_en, where_ru in (
        (
            "text",
            text,
            choice.message.content,
            "the content of the assistant's message",
            "content сообщения ассистента",
        ),
        (
            "finish_reason",
            finish_reason,
            choice.finish_reason,
            "a field of the choice, next to message",
            "поле choice, рядом с message",
        ),
        (
            "total_tokens",
            total_tokens,
            usage.total_tokens,
            "a count in the reply's usage",
            "счётчик в usage ответа",
        ),
    ):
        try:
            got = plain(value)
        except NotPlain as refused:
            raise NotYet(
                f"{name} is {refused.en}; read a plain value from reply ({where_en}).",
                f"{name} — это {refused.ru}; возьмите из reply обычное значение ({where_ru}).",
            ) from None
        if strict_equal(got, want):
            continue
        if name == "total_tokens":
            _tokens_hint(got, usage)
        raise NotYet(
            f"{name} is {shorten(got)}, and that is not what reply holds there: {name} is "
            f"{where_en}; read it from reply rather than typing it.",
            f"{name} равно {shorten(got)}, а в reply там другое: {name} — это {where_ru}; "
            "возьмите значение из reply, а не вписывайте его.",
        )


def _tokens_hint(got: Any, usage: Any) -> None:
    """NotYet for a token count that is a part of the total, or not a whole number."""
    if isinstance(got, float) and got == usage.total_tokens:
        raise NotYet(
            f"total_tokens is {got!r}, a float: a token count is a whole number (int), as the "
            "reply holds it.",
            f"total_tokens равно {got!r}, это float: число токенов целое (int), как в самом "
            "ответе.",
        )
    for field in ("completion_tokens", "prompt_tokens"):
        if strict_equal(got, getattr(usage, field)):
            raise NotYet(
                f"total_tokens {got!r} is usage.{field}, one part of the count; the total "
                "counts the prompt and the answer together.",
                f"total_tokens {got!r} — это usage.{field}, только часть счёта; общее число "
                "считает запрос и ответ вместе.",
            )
