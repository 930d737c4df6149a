"""Self-checks for lesson 00: live settings, a vLLM command for Qwen, reading a response."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from helpers.exercises._verdict import NotYet, exercise

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
    if not isinstance(env, Mapping):
        raise NotYet(
            "live_env must be a dict of variable names to values.",
            "live_env должен быть словарём «имя переменной → значение».",
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
    try:
        words = shlex.split(str(command))
    except ValueError as exc:
        raise NotYet(
            f"the command does not parse as a shell line: {exc}.",
            f"команда не разбирается как строка терминала: {exc}.",
        ) from exc
    if _model_served(words) != MODEL:
        raise NotYet(
            f"start with: vllm serve {MODEL} (or the older form: python -m "
            f"{API_SERVER} --model {MODEL})",
            f"начните с: vllm serve {MODEL} (или со старой формы: python -m "
            f"{API_SERVER} --model {MODEL})",
        )
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


def _option(words: list[str], name: str) -> str | None:
    """The value of `--name value` or `--name=value` in a split command line."""
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


@exercise
def check_reading(reply: Any, text: Any, finish_reason: Any, total_tokens: Any) -> None:
    """Exercise 3: the text, finish reason and total tokens of a chat completion."""
    choice = reply.choices[0]
    if text != choice.message.content:
        raise NotYet(
            "text is the assistant's content: reply.choices[0].message.content.",
            "text — это content ассистента: reply.choices[0].message.content.",
        )
    if finish_reason != choice.finish_reason:
        raise NotYet(
            "finish_reason lives on the choice, next to message.",
            "finish_reason лежит в choice, рядом с message.",
        )
    usage = reply.usage
    if total_tokens == usage.total_tokens:
        return
    for field in ("completion_tokens", "prompt_tokens"):
        if total_tokens == getattr(usage, field):
            raise NotYet(
                f"that is usage.{field}, one part of the count; the total of prompt and "
                "answer is reply.usage.total_tokens.",
                f"это usage.{field}, только часть счёта; сумма запроса и ответа — "
                "reply.usage.total_tokens.",
            )
    raise NotYet(
        "the token counts are in reply.usage; the total is reply.usage.total_tokens.",
        "счётчики токенов лежат в reply.usage; общее число — reply.usage.total_tokens.",
    )
