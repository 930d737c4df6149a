"""Self-checks for lesson 00: live settings, a vLLM command for Qwen, reading a response."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from helpers.exercises._verdict import (
    Explain,
    NotPlain,
    NotYet,
    call_student,
    case_of,
    exercise,
    on_battery,
    plain,
    returned,
    seeded,
    shorten,
    strict_equal,
)
from helpers.formats._common import tool_call_dict

MOONSHOT_URLS = ("https://api.moonshot.ai/v1", "https://api.moonshot.cn/v1")
# Platform model ids are lower-case names without a slash: kimi-k2.6, kimi-k2.7-code, ...
PLATFORM_ID = re.compile(r"^kimi-[a-z0-9][a-z0-9.\-]*$")
PLATFORM_EXAMPLES = "kimi-k2.6, kimi-k2.7-code"
# ids the lessons name as today's: a near miss gets "did you mean"
KNOWN_IDS = ("kimi-k2.6", "kimi-k2.7-code", "kimi-k3")
# Names a student types for Kimi-K2 that the platform serves no model under: the family's name
# and the Hugging Face repositories' names in lower case.
FAMILY_NAMES = frozenset(
    (
        "kimi kimi-k2 kimi-k2-instruct kimi-k2-instruct-0905 kimi-k2-base kimi-k2-thinking-model"
    ).split()
)


def _letters(model_id: str) -> str:
    """A model id without case and separators: kimi-k2-6, Kimi_K2.6 and kimi-k2.6 are alike."""
    return re.sub(r"[^a-z0-9]", "", model_id.lower())


# Ids third parties report retired in 2026 (Moonshot's own model guide no longer lists them).
RETIRED_IDS = frozenset(
    (
        "kimi-k2-0711-preview kimi-k2-0905-preview kimi-k2-turbo-preview kimi-k2-thinking "
        "kimi-k2-thinking-turbo kimi-latest kimi-k2.5"
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
    mode = str(env.get("LLM_MODE", "")).strip().lower()  # connect() reads it so too
    if mode == "record":
        raise NotYet(
            'LLM_MODE "record" talks to the real model but also writes every reply into the '
            'recordings; for plain work with the platform the mode is "live".',
            'в режиме LLM_MODE "record" уроки работают с настоящей моделью, но ещё и записывают '
            'каждый ответ в кассеты; для обычной работы с платформой нужен режим "live".',
        )
    if mode != "live":
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
    if model.lower() in FAMILY_NAMES:
        raise NotYet(
            f"{model!r} names the model family (or its Hugging Face repository), not a model the "
            f"platform serves: it answers 404 for it. Take a platform id such as "
            f"{PLATFORM_EXAMPLES}.",
            f"{model!r} — название семейства моделей (или их репозитория на Hugging Face), а не "
            "модель, которую обслуживает платформа: на него она ответит 404. Возьмите id "
            f"платформы, например {PLATFORM_EXAMPLES}.",
        )
    if model.lower().startswith("moonshot-"):
        raise NotYet(
            f"{model!r} is one of Moonshot's older moonshot-v1 models, not Kimi-K2: the lessons "
            f"need a Kimi id such as {PLATFORM_EXAMPLES}.",
            f"{model!r} — одна из старых моделей Moonshot (moonshot-v1), а не Kimi-K2: урокам "
            f"нужен id Kimi, например {PLATFORM_EXAMPLES}.",
        )
    near = next((k for k in KNOWN_IDS if _letters(k) == _letters(model) and k != model), None)
    if near:
        raise NotYet(
            f"{model!r} is not a platform id (the platform answers 404 for it); did you mean "
            f"{near!r}?",
            f"{model!r} — не id модели на платформе (платформа ответит на него 404); может быть, "
            f"вы имели в виду {near!r}?",
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
        words = _normal(shlex.split(str.__str__(command), comments=True))
    except ValueError as exc:
        raise NotYet(
            f"the command does not parse as a shell line: {exc}.",
            f"команда не разбирается как строка терминала: {exc}.",
        ) from exc
    while words and ENV_WORD.fullmatch(words[0]):  # CUDA_VISIBLE_DEVICES=0 vllm serve ...
        words = words[1:]
    served = _model_served(words)
    if served is None:
        raise NotYet(
            "this command does not start vLLM's OpenAI-compatible server (the vllm serve command, "
            "the older module form, or vLLM's docker image); the exercise asks for vLLM.",
            "эта команда не запускает OpenAI-совместимый сервер vLLM (команду vllm serve, её "
            "старую форму через модуль или docker-образ vLLM); в упражнении нужен именно vLLM.",
        )
    if served != MODEL:
        raise NotYet(
            f"this command serves {served!r}, not {MODEL}: vLLM's server command names the model "
            "it serves first.",
            f"эта команда запускает {served!r}, а не {MODEL}: команда сервера vLLM первым делом "
            "называет модель, которую обслуживает.",
        )
    _fits_four_gpus(words)
    valued = next((w for w in words if w.startswith("--enable-auto-tool-choice=")), None)
    if valued:
        raise NotYet(
            f"{valued}: --enable-auto-tool-choice is a switch that takes no value (vLLM's "
            "argument parser refuses one); write it alone.",
            f"{valued}: --enable-auto-tool-choice — переключатель без значения (парсер "
            "аргументов vLLM значение не примет); пишите его без =.",
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
VLLM_IMAGE = re.compile(r"(?:[\w.-]+/)?vllm/vllm-openai(?::[\w.-]+)?")
ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")  # a variable set for the command alone
# vLLM's OpenAI server started as a module: the form older docs and scripts use.
API_SERVER = "vllm.entrypoints.openai.api_server"


def _model_served(words: list[str]) -> str | None:
    """The model a vLLM command line serves: `vllm serve MODEL ...`, or
    `python -m vllm.entrypoints.openai.api_server --model MODEL ...`; None for anything else."""
    if words[:2] == ["vllm", "serve"]:
        positional = len(words) > 2 and not words[2].startswith("-")
        return words[2] if positional else _option(words, "--model")
    if words[:2] == ["docker", "run"]:  # vLLM's own image runs the OpenAI server
        image = next((i for i, w in enumerate(words) if VLLM_IMAGE.fullmatch(w)), None)
        return _option(words[image + 1 :], "--model") if image is not None else None
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


# --- exercise 3: reading a reply ------------------------------------------------------------------
# The fields `read_reply` returns: the key, where the value is in a reply (English, Russian).
FIELDS = (
    ("text", "the content of the assistant's message", "content сообщения ассистента"),
    ("finish_reason", "a field of the choice, next to message", "поле choice, рядом с message"),
    ("model", "the model the reply names at its top level", "модель, названная в самом ответе"),
    ("total_tokens", "a count in the reply's usage", "счётчик в usage ответа"),
)
KEYS = ", ".join(key for key, _, _ in FIELDS)
WANTED = (f"a dict with the keys {KEYS}", f"словарь с ключами {KEYS}")
# Step 4's reply as replay mode gives it (data/recordings/00_start.json): the example checked first.
STEP_4 = {
    "id": "chatcmpl-f7243299e03944e32244ce46",
    "model": "moonshotai/Kimi-K2-Instruct",
    "content": "Ready.",
    "finish_reason": "stop",
    "usage": (15, 1),
}
READING_MISTAKES = (
    Explain(
        TypeError,
        r"'(ChatCompletion\w*|Choice|CompletionUsage)' object is not subscriptable",
        "this {0} is an SDK object, not a dict: its fields are attributes, read with a dot.",
        "объект {0} — из SDK, а не словарь: его поля — атрибуты, их читают через точку.",
    ),
    Explain(
        AttributeError,
        r"'list' object has no attribute '(\w+)'",
        "the reply's choices is a list of answers, and .{0} belongs to one of them: the model's "
        "answer is the first choice.",
        "в ответе choices — это список вариантов ответа, а .{0} есть у каждого из них: ответ "
        "модели — первый вариант.",
    ),
    Explain(
        AttributeError,
        r"'(\w+)' object has no attribute '(content|role|tool_calls)'",
        "the field {1} belongs to the assistant's message, which sits in the reply's first "
        "choice; a {0} object has none.",
        "поле {1} есть у сообщения ассистента, а оно лежит в первом варианте ответа (choice); у "
        "объекта {0} такого поля нет.",
    ),
    Explain(
        AttributeError,
        r"'(\w+)' object has no attribute '(finish_reason|message)'",
        "the field {1} belongs to a choice, one item of the reply's choices; a {0} object has "
        "none.",
        "поле {1} есть у варианта ответа (choice), одного из элементов choices; у объекта {0} "
        "такого поля нет.",
    ),
    Explain(
        AttributeError,
        r"'(\w+)' object has no attribute '(\w+_tokens)'",
        "the field {1} belongs to the reply's usage; a {0} object has none.",
        "поле {1} есть у usage ответа; у объекта {0} такого поля нет.",
    ),
    Explain(
        AttributeError,
        r"'(\w+)' object has no attribute '(model|usage|choices|id)'",
        "the field {1} belongs to the reply itself, at its top level; a {0} object has none.",
        "поле {1} есть у самого ответа, на верхнем уровне; у объекта {0} такого поля нет.",
    ),
)


def reply_of(spec: Mapping[str, Any]) -> Any:
    """An SDK `ChatCompletion` built from a short description (see `STEP_4`): optional `calls`
    (tool names), `second` (the content of a second choice) and `details` (usage details)."""
    from openai.types.chat import ChatCompletion

    prompt, completion = spec["usage"]
    message: dict[str, Any] = {"role": "assistant", "content": spec["content"]}
    if spec.get("calls"):
        message["tool_calls"] = [
            tool_call_dict(f"{name}:{i}", name, '{"city": "Москва"}')
            for i, name in enumerate(spec["calls"])
        ]
    choices = [{"index": 0, "finish_reason": spec["finish_reason"], "message": message}]
    if "second" in spec:
        other = {"role": "assistant", "content": spec["second"]}
        choices.append({"index": 1, "finish_reason": "stop", "message": other})
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        **spec.get("details", {}),
    }
    body = {"object": "chat.completion", "created": 1764633600, "choices": choices, "usage": usage}
    return ChatCompletion.model_validate({"id": spec["id"], "model": spec["model"], **body})


def shown(spec: Mapping[str, Any]) -> str:
    """How a hint names a reply, in its own field names (the same in both languages)."""
    prompt, completion = spec["usage"]
    calls = f", tool_calls={list(spec['calls'])}" if spec.get("calls") else ""
    second = ", choices=2" if "second" in spec else ""
    return (
        f"<reply id={spec['id']!r}, model={spec['model']!r}, content={spec['content']!r}, "
        f"finish_reason={spec['finish_reason']!r}{calls}{second}, usage: prompt_tokens={prompt} "
        f"completion_tokens={completion} total_tokens={prompt + completion}>"
    )


def _read_reply(reply: Any) -> dict[str, Any]:
    """The reference: the four fields, read from the reply's JSON body (another route than the
    attributes the lesson uses, to the same values)."""
    body = reply.model_dump()
    first = body["choices"][0]
    fields = (first["message"]["content"], first["finish_reason"], body["model"])
    return dict(zip(("text", "finish_reason", "model"), fields, strict=True)) | {
        "total_tokens": body["usage"]["total_tokens"]
    }


def reply_battery() -> list[dict[str, Any]]:
    """Replies to read (seeded): other models and ids, Cyrillic, emoji and multi-line text, cut by
    max_tokens, tool calls with and without text, two choices, usage details; step 4's first."""
    rng = seeded("n00 read_reply")
    models = (
        "kimi-k2.6",
        "moonshotai/Kimi-K2-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "kimi-k2.5",
        "qwen3:8b",
    )
    texts = ("Ready.", "Готово.", "ready", "Sunny ☀️", "Line one.\nLine two.", "OK")
    specs = [dict(STEP_4)]
    for n in range(23):
        spec: dict[str, Any] = {
            "id": rng.choice(("chatcmpl-", "cmpl-", "chatcmpl-tool-")) + f"{rng.getrandbits(32):x}",
            "model": models[n % len(models)],
            "content": rng.choice(texts),
            "finish_reason": "stop",
            "usage": (rng.randint(8, 900), rng.randint(1, 60)),
        }
        shape = n % 6
        if shape == 1:
            spec.update(finish_reason="length", content="Ready and wait")
        elif shape == 2:
            spec.update(finish_reason="tool_calls", content=None, calls=["get_weather"])
        elif shape == 3:
            spec.update(finish_reason="tool_calls", content="Checking.", calls=["search_v2", "f"])
        elif shape == 4:
            spec["second"] = "Another answer."
        elif shape == 5:
            spec["details"] = {"prompt_tokens_details": {"cached_tokens": spec["usage"][0] // 2}}
        specs.append(spec)
    # Text with spaces and newlines at its edges: the content is read as the reply holds it.
    edges = {k: v for k, v in specs[-1].items() if k not in ("second", "details", "calls")}
    specs.append(edges | {"content": "  Ready.\n", "finish_reason": "stop"})
    return specs


def _same_fields(expected: dict[str, Any], got: Any) -> bool:
    """The four fields equal (types too); other keys of the learner's dict do not count."""
    return isinstance(got, dict) and all(
        key in got and strict_equal(value, got[key]) for key, value in expected.items()
    )


@exercise
def check_reading(read_reply: Any) -> None:
    """Exercise 3: `read_reply(reply)` returns the text, finish reason, model and total tokens of
    any chat completion, read from it (a value typed in from step 4's printout fits only that one
    reply)."""
    call = f"read_reply({shown(STEP_4)})"
    got = call_student(read_reply, reply_of(STEP_4), explain=READING_MISTAKES, case=(call, call))
    got = returned(got, call, WANTED)
    if not isinstance(got, dict):
        raise NotYet(
            f"{call} returned {shorten(got)}; the exercise wants {WANTED[0]}.",
            f"{call} вернула {shorten(got)}; в упражнении нужен {WANTED[1]}.",
        )
    missing = [key for key, _, _ in FIELDS if key not in got]
    if missing:
        raise NotYet(
            f"the dict read_reply returns has no key {', '.join(map(repr, missing))}; it needs "
            f"all of {KEYS}.",
            f"в словаре, который возвращает read_reply, нет ключа {', '.join(map(repr, missing))}; "
            f"нужны все: {KEYS}.",
        )
    expected = _read_reply(reply_of(STEP_4))
    for key, where_en, where_ru in FIELDS:
        if strict_equal(got[key], expected[key]):
            continue
        if key == "total_tokens":
            _tokens_hint(got[key], reply_of(STEP_4).usage, shown(STEP_4))
        raise NotYet(
            f"on step 4's recorded reply {shown(STEP_4)}, {key} should be "
            f"{shorten(expected[key])}, got {shorten(got[key])}: {key} is {where_en}.",
            f"на записанном ответе шага 4 {shown(STEP_4)} {key} должно быть "
            f"{shorten(expected[key])}, получено {shorten(got[key])}: {key} — это {where_ru}.",
        )
    on_battery(
        read_reply,
        _read_reply,
        [case_of(reply_of(spec), shown=shown(spec)) for spec in reply_battery()],
        name="read_reply",
        wanted=WANTED,
        explain=READING_MISTAKES,
        same=_same_fields,
        idea=(
            "Every reply has its own values: read each one from the reply the function is given "
            "(a value typed in from step 4's printout fits that one reply only).",
            "У каждого ответа свои значения: берите каждое из ответа, который получила функция "
            "(значение, переписанное из вывода шага 4, подходит только к тому ответу).",
        ),
    )


def _tokens_hint(got: Any, usage: Any, reply: str) -> None:
    """NotYet for a token count that is a part of the total, or not a whole number."""
    if isinstance(got, float) and got == usage.total_tokens:
        raise NotYet(
            f"on step 4's recorded reply {reply}, total_tokens is {got!r}, a float: a token "
            "count is a whole number (int), as the reply holds it.",
            f"на записанном ответе шага 4 {reply} total_tokens равно {got!r}, это float: число "
            "токенов целое (int), как в самом ответе.",
        )
    for field in ("completion_tokens", "prompt_tokens"):
        if strict_equal(got, getattr(usage, field)):
            raise NotYet(
                f"on step 4's recorded reply {reply}, total_tokens {got!r} is usage.{field}, "
                "one part of the count; the total counts the prompt and the answer together.",
                f"на записанном ответе шага 4 {reply} total_tokens {got!r} — это "
                f"usage.{field}, только часть счёта; общее число считает запрос и ответ вместе.",
            )
