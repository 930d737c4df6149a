"""Lesson 00: what tool calling is, the three modes, serving Kimi-K2 or Qwen, a connection check."""

from nbbuild import Lesson, code, md

META = {
    "title": {
        "en": "Start here: how an LLM calls tools",
        "ru": "С чего начать: как LLM вызывает инструменты",
    },
    "summary": {
        "en": "the tool-call loop as a picture, the three modes, a connection check",
        "ru": "цикл вызова инструментов на картинке, три режима, проверка подключения",
    },
    "minutes_reading": (12, 15),
    "minutes_exercises": (8, 10),
    "timed": True,
    "in_class_path": True,
    "engines": ("kimi", "qwen"),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_live_env", "check_qwen_command", "check_reading"),
}

LESSON = Lesson("00_start", [
    md("""
# Start here: how an LLM calls tools

**Goal:** understand the tool-call loop, pick a mode (replay, live or record) and check that your
connection to a model works.

This unit follows Moonshot AI's guide to tool calling with Kimi-K2
(MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`) step by step, fixes the places where the guide's
code only works by luck, and compares Kimi-K2 with Qwen.
""", """
# С чего начать: как LLM вызывает инструменты

**Цель:** понять, как устроен цикл вызова инструментов, выбрать режим работы (replay, live или record)
и проверить, что подключение к модели работает.

В этой серии уроков мы шаг за шагом разбираем руководство Moonshot AI по вызову инструментов в Kimi-K2
(MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`), исправляем места, где код руководства работает
лишь по счастливой случайности, и сравниваем Kimi-K2 с Qwen.
"""),
    md("""
## What you will build

A working `client` for Kimi-K2 (and one for Qwen) that runs offline in
replay mode or against a real server in live mode, and a quick check that the server answers.
""", """
## Что вы сделаете

Вы настроите клиент `client` для Kimi-K2 (и ещё один для Qwen), который работает без сети в режиме
воспроизведения (replay) или обращается к настоящему серверу в режиме live (с настоящей моделью), и
быстро проверите, что сервер отвечает.
"""),
    md("""
## Setup

One cell connects the notebook to a model. `connect("kimi")` reads the mode from the environment
and returns the endpoint, key and model name to use; the rest is the ordinary `openai` client you
would use in any project.
""", """
## Подготовка

Блокнот подключается к модели одной ячейкой. `connect("kimi")` определяет режим по переменным
окружения и возвращает адрес API (endpoint), ключ и имя модели; дальше работает обычный клиент
`openai`, как в любом проекте.
"""),
    code('''
from openai import OpenAI
from helpers import connect, set_language

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
'''),
    md("""
By default you are in **replay** mode: a small OpenAI-compatible server inside this notebook answers
from recordings (cassettes). The shipped cassettes are **synthesized** from the documented formats
of Kimi-K2, Qwen and the serving engines; they are not captures of a real service. Here the model
is called `moonshotai/Kimi-K2-Instruct` (its Hugging Face name), and the answers are shaped like the
Moonshot platform's: that is the engine profile `moonshot`; lesson 02 uses the others. Set
`LLM_MODE=live` to talk to a real model (step 3).
""", """
По умолчанию включён режим воспроизведения: маленький OpenAI-совместимый сервер прямо внутри
блокнота отвечает по заранее сохранённым кассетам (cassettes). Кассеты в репозитории
**синтезированы** по документированным форматам Kimi-K2, Qwen и движков, на которых эти модели
запускают; это не записи ответов настоящего сервиса. Модель здесь зовётся
`moonshotai/Kimi-K2-Instruct` (это её имя на Hugging Face), а ответы оформлены так, как их
отдаёт платформа Moonshot: это профиль движка `moonshot`, остальные профили понадобятся в уроке 02.
Чтобы работать с настоящей моделью, задайте `LLM_MODE=live` (шаг 3).
"""),
    md("""
## 1. What tool calling is

The model never runs anything itself: it writes a request to call a tool, and your code runs the
function and sends the result back. A model cannot look anything up by itself: it only writes text.
Tool calling (also called function calling) lets it write a structured request instead, "call
`get_weather` with `{"city": "Beijing"}`". Your code decides what runs, and the model continues from
the result.

```mermaid
sequenceDiagram
    participant App as Your code
    participant LLM as Model (Kimi-K2)
    participant Fn as get_weather()
    App->>LLM: messages + tools (JSON schemas)
    loop while the reply has tool_calls
        LLM-->>App: assistant message: tool_calls (id, name, arguments)
        App->>Fn: get_weather(city="Beijing")
        Fn-->>App: {"weather": "Sunny"}
        App->>LLM: history + assistant message + role "tool" results
    end
    LLM-->>App: final answer (content, no tool_calls)
```

Three things travel over the wire, and the next lessons take them one at a time:
the **tools** (a description of each function as a JSON schema, lesson 01), the **tool calls** the
model writes (lesson 02; streamed piece by piece in lesson 03; as raw text in lesson 04) and the
**tool results** you send back as messages with `role: "tool"`.
""", """
## 1. Что такое вызов инструментов

Сама модель ничего не запускает: она пишет запрос на вызов инструмента, а ваш код выполняет
функцию и отправляет результат обратно. Узнать что-то сама по себе модель не может: она только
пишет текст. Вызов инструментов (tool calling; его ещё называют вызовом функций, function calling)
позволяет ей вместо ответа написать структурированный запрос: «вызови `get_weather` с
`{"city": "Beijing"}`». Что выполнять, решает ваш код, а модель продолжает, получив результат.

```mermaid
sequenceDiagram
    participant App as Ваш код
    participant LLM as Модель (Kimi-K2)
    participant Fn as get_weather()
    App->>LLM: messages + tools (JSON-схемы)
    loop пока в ответе есть tool_calls
        LLM-->>App: сообщение ассистента: tool_calls (id, имя, аргументы)
        App->>Fn: get_weather(city="Beijing")
        Fn-->>App: {"weather": "Sunny"}
        App->>LLM: история + сообщение ассистента + результаты с role "tool"
    end
    LLM-->>App: итоговый ответ (content, без tool_calls)
```

По сети передаются три вещи, и следующие уроки разбирают их по одной: **инструменты** (описание
каждой функции в виде JSON-схемы, урок 01), **вызовы**, которые пишет модель (урок 02; как они
приходят по частям — урок 03; как они выглядят сырым текстом — урок 04), и **результаты
инструментов**, которые вы возвращаете сообщениями с `role: "tool"`.
"""),
    md("""
## 2. Three modes

Choose the mode with the environment variable `LLM_MODE`: `replay` (the default), `live` or
`record`.

| mode | what answers | you need |
|---|---|---|
| `replay` (default) | a local server answering from `data/recordings/*.json` | nothing: no key, no network |
| `live` | a real OpenAI-compatible endpoint | a base URL, a key and a model name |
| `record` | the live endpoint, through a local proxy that writes new cassettes | the same as live |

Replay answers only the requests the lessons send; if you change a prompt, the server says which
recording came closest and where your request differs, and reminds you how to switch to live mode.

The `conn` shown by the setup cell says which mode is on. `endpoint` is the address of the
OpenAI-compatible API (with the `/v1` part), exactly what you would pass to `OpenAI(base_url=...)`
in your own code. `conn.http_client()` is the SDK's own HTTP client (`DefaultHttpxClient`); for a
server on this machine it ignores proxy variables (`trust_env=False`), so a lab's `HTTP_PROXY`
never catches the requests to it. For a remote API in your own project, leave `http_client` out.
""", """
## 2. Три режима

Режим выбирают переменной окружения `LLM_MODE`: `replay` (по умолчанию), `live` или `record`.

| режим | кто отвечает | что нужно |
|---|---|---|
| `replay` (по умолчанию) | локальный сервер, отвечающий из `data/recordings/*.json` | ничего: ни ключа, ни сети |
| `live` | настоящий OpenAI-совместимый API | адрес, ключ и имя модели |
| `record` | настоящий API через локальный прокси, который пишет новые кассеты | то же, что для live |

В режиме воспроизведения сервер отвечает только на те
запросы, которые отправляют уроки; если вы измените запрос, сервер скажет, какая запись ближе всего
и чем ваш запрос от неё отличается, и напомнит, как перейти в режим live.

Какой режим включён, видно по `conn` в ячейке подготовки. `endpoint` — адрес OpenAI-совместимого
API вместе с `/v1`, ровно то, что вы передали бы в `OpenAI(base_url=...)` в своём коде.
`conn.http_client()` — собственный HTTP-клиент SDK (`DefaultHttpxClient`); для сервера на этой
машине он не смотрит на переменные прокси (`trust_env=False`), поэтому `HTTP_PROXY` лаборатории не
перехватит запросы к нему. Для удалённого API в своём проекте `http_client` можно не передавать.
"""),
    md("""
## 3. Going live

For live mode, set three variables per model family in the shell **before** you start Jupyter.
Keep the key out of notebooks and out of git:

| variable | Kimi-K2 | Qwen |
|---|---|---|
| base URL | `KIMI_BASE_URL` | `QWEN_BASE_URL` |
| API key | `KIMI_API_KEY` | `QWEN_API_KEY` |
| model name | `KIMI_MODEL` | `QWEN_MODEL` |

The simplest real Kimi-K2 is the Moonshot platform (an OpenAI-compatible API):

```bash
export LLM_MODE=live
export KIMI_BASE_URL=https://api.moonshot.ai/v1
export KIMI_API_KEY=...            # your key from the platform console
export KIMI_MODEL=kimi-k2.6              # a model the platform serves today
jupyter lab
```

Use `kimi-k2.6`, the platform's current model; the series was first written for
`kimi-k2-0905-preview` ([reference](#reference)). The newer model differs in two ways the lessons
handle for you:

- It **thinks** before it answers (lesson 06). Lessons 01, 02 and 04 run with thinking on; to
  turn it off, `export KIMI_THINKING=off`, and they add
  `extra_body={"thinking": {"type": "disabled"}}` to their requests. Lesson 03 always sends it,
  because its hand-written streaming loop drops the reasoning (why that fails: lesson 06), and so
  does this lesson's connection check (step 4).
- Its `temperature`, `top_p` and `n` "cannot be modified" (Moonshot's model list). The lessons keep
  the guide's `temperature=0.3` in `settings = conn.settings(temperature=0.3)` and leave it out of
  requests to such a model.

Lesson 04 also sends a rendered prompt to the raw `/completions` endpoint, which self-hosted
engines offer and the Moonshot API does not document: run that lesson against your own server or in
replay mode.

`LLM_MODE=record` works the same way and also writes what it sees to `recordings-new/`, so you can
replay a real conversation later; the key is never written to disk.
""", """
## 3. Режим live

Для режима live задайте три переменные на каждое семейство моделей в терминале **до** запуска
Jupyter. Ключ не храните ни в блокнотах, ни в git:

| переменная | Kimi-K2 | Qwen |
|---|---|---|
| адрес | `KIMI_BASE_URL` | `QWEN_BASE_URL` |
| ключ API | `KIMI_API_KEY` | `QWEN_API_KEY` |
| имя модели | `KIMI_MODEL` | `QWEN_MODEL` |

Проще всего получить настоящую Kimi-K2 через платформу Moonshot (у неё OpenAI-совместимый API):

```bash
export LLM_MODE=live
export KIMI_BASE_URL=https://api.moonshot.ai/v1
export KIMI_API_KEY=...            # ваш ключ из консоли платформы
export KIMI_MODEL=kimi-k2.6              # модель, которую платформа обслуживает сейчас
jupyter lab
```

Берите `kimi-k2.6` — нынешнюю модель платформы; сначала серия была написана для
`kimi-k2-0905-preview` ([справка](#reference)). Новая модель отличается в двух вещах, и уроки это
учитывают сами:

- Она **рассуждает** перед ответом (урок 06). Уроки 01, 02 и 04 работают с включённым
  рассуждением; чтобы его выключить, задайте `export KIMI_THINKING=off`, и они добавят к запросам
  `extra_body={"thinking": {"type": "disabled"}}`. Урок 03 передаёт это всегда: его самодельный
  потоковый цикл теряет рассуждение (чем это плохо — в уроке 06). Так же поступает и проверка
  подключения в этом уроке (шаг 4).
- Её `temperature`, `top_p` и `n` «изменить нельзя» (список моделей Moonshot). Уроки хранят
  `temperature=0.3` из руководства в `settings = conn.settings(temperature=0.3)` и не передают её
  такой модели.

Урок 04 ещё и отправляет готовый промпт на «сырой» адрес `/completions`: он есть у движков, которые
вы запускаете на своём сервере, а в документации API Moonshot его нет. Этот урок запускайте на своём сервере или в режиме
воспроизведения.

`LLM_MODE=record` работает так же, но ещё и сохраняет увиденное в `recordings-new/`, чтобы потом
воспроизводить настоящий диалог; ключ на диск не попадает.
"""),
    md("""
### Serving Kimi-K2 yourself

The server must be started with a **tool-call parser** that matches the model, on a vLLM release
and a chat template no older than the minimum in the [reference](#reference). Without
`--enable-auto-tool-choice`, vLLM refuses `tool_choice="auto"` (what the guide and these lessons
send) with a 400 that names the missing flags; a named tool or `tool_choice="required"` works without
that flag. With a parser for another format, the calls come back as plain text inside `content`
(lesson 04 shows what that looks like). The deploy guide serves Kimi-K2 on 16 GPUs over two
nodes, so both commands below are one part of a multi-node setup:

```bash
# vLLM and the chat template: at least the minimum in the reference
vllm serve moonshotai/Kimi-K2-Instruct-0905 --trust-remote-code \\
    --enable-auto-tool-choice --tool-call-parser kimi_k2 \\
    --tensor-parallel-size 16          # 16 GPUs over two nodes: see the deploy guide

# SGLang
python -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct-0905 --trust-remote-code \\
    --tool-call-parser kimi_k2 --tp 16 --nnodes 2   # plus the multi-node options
```

Then `KIMI_BASE_URL=http://<server>:8000/v1` (vLLM's default port; SGLang's is 30000), any
non-empty `KIMI_API_KEY` unless the server was started with one, and
`KIMI_MODEL=moonshotai/Kimi-K2-Instruct-0905`.
""", """
### Свой сервер с Kimi-K2

Сервер нужно запускать с **парсером вызовов** (tool-call parser), подходящим к модели, на версии
vLLM и шаблоне чата не старее минимальных, названных в [справке](#reference). Без
`--enable-auto-tool-choice` vLLM отвечает на `tool_choice="auto"` (его передают и руководство, и
эти уроки) ошибкой 400 и называет недостающие флаги; вызов конкретного инструмента или
`tool_choice="required"` работает и без этого флага. С парсером для чужого формата вызовы придут
обычным текстом внутри `content` (как это выглядит, покажет урок 04). Согласно руководству
по развёртыванию (deployment), Kimi-K2 работает на 16 GPU в двух узлах, поэтому обе команды ниже —
лишь часть многоузловой конфигурации:

```bash
# vLLM и шаблон чата: не старее минимума из справки
vllm serve moonshotai/Kimi-K2-Instruct-0905 --trust-remote-code \\
    --enable-auto-tool-choice --tool-call-parser kimi_k2 \\
    --tensor-parallel-size 16          # 16 GPU на двух узлах: см. руководство по развёртыванию

# SGLang
python -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct-0905 --trust-remote-code \\
    --tool-call-parser kimi_k2 --tp 16 --nnodes 2   # плюс параметры для нескольких узлов
```

Дальше: `KIMI_BASE_URL=http://<сервер>:8000/v1` (порт vLLM по умолчанию; у SGLang — 30000), любой
непустой `KIMI_API_KEY`, если сервер запущен без ключа, и `KIMI_MODEL=moonshotai/Kimi-K2-Instruct-0905`.
"""),
    md("""
### Why 16 GPUs, and what to do with four

With four GPUs, do not serve Kimi-K2 yourself: use a hosted one, or serve a smaller model that calls
tools the same way. Kimi-K2 is a mixture-of-experts (MoE) model with about **1 trillion** parameters
(about 32 billion of them work on each token). Even in FP8, one byte per parameter, the weights
alone take about 1 TB, before any memory for the context. Moonshot's deploy guide therefore plans
vLLM and SGLang for **16 GPUs** such as H200, with FP8 weights and a 128k context. KTransformers,
which keeps most of the weights in CPU memory, runs it on far fewer GPUs, but slowly: too slowly for
a class. (The later K2.6 and K2-Thinking ship INT4 weights, which fit on 8 H200.) With four GPUs,
what you can do:

- use Kimi-K2 through the Moonshot platform or any other OpenAI-compatible host (the code is the same);
- serve a smaller open model that calls tools the same way, for example Qwen2.5-7B-Instruct: its
  weights take about 15 GB in bf16, so it fits on one card:

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
```

and set `QWEN_BASE_URL`, `QWEN_API_KEY`, `QWEN_MODEL=Qwen/Qwen2.5-7B-Instruct`. Qwen writes its
calls in a different text format (Hermes style, lesson 05), so the parser flag is `hermes`, not
`kimi_k2`; the loop in your code does not change.
""", """
### Почему 16 GPU и что делать с четырьмя

С четырьмя GPU не поднимайте Kimi-K2 сами: пользуйтесь ею через сервис или запустите модель
поменьше, которая вызывает инструменты так же. Kimi-K2 — модель со смесью экспертов (mixture of
experts, MoE), в ней около **1 трлн** параметров (на каждый токен работают примерно 32 млрд из них).
Даже в FP8, по байту на параметр, одни веса занимают около 1 ТБ, и это ещё без памяти под контекст.
Поэтому руководство Moonshot по развёртыванию предполагает для vLLM и SGLang **16 GPU** уровня H200,
веса в FP8 и контекст 128k. KTransformers, который держит большую часть весов в оперативной памяти,
запускает её на гораздо меньшем числе GPU, но медленно — для занятия слишком медленно. (Более
поздние K2.6 и K2-Thinking поставляются с весами в INT4, которые помещаются на 8 H200.) С четырьмя
картами можно сделать вот что:

- обращаться к Kimi-K2 через платформу Moonshot или любой другой OpenAI-совместимый сервис (код тот же);
- поднять модель поменьше, которая вызывает инструменты так же, например Qwen2.5-7B-Instruct: её
  веса в bf16 занимают около 15 ГБ, так что она помещается на одну карту:

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
```

и задать `QWEN_BASE_URL`, `QWEN_API_KEY`, `QWEN_MODEL=Qwen/Qwen2.5-7B-Instruct`. Qwen записывает
вызовы в другом текстовом формате (в стиле Hermes, урок 05), поэтому флаг парсера — `hermes`, а не
`kimi_k2`; цикл в вашем коде остаётся прежним.
"""),
    md("""
## 4. Check the connection

Check the connection with two requests, in any mode: list the server's models, then send one tiny
chat request. First: which models does the server serve? Your `model_name` must be among them.
""", """
## 4. Проверка подключения

Проверяйте подключение двумя запросами, в любом режиме: запросите список моделей сервера, затем
отправьте один крошечный запрос к чату. Первый: какие модели есть на сервере? Ваша модель
(`model_name`) должна быть в этом списке.
"""),
    code('''
available = [model.id for model in client.models.list()]
print(available)
print(model_name in available)
'''),
    md("""
(The replay server lists every model it has recordings for, so Qwen shows up here too.)
Second: one tiny chat request without tools. `max_tokens` keeps a live request cheap. A model that
thinks before it answers (`kimi-k2.6`, lesson 06) would spend those 10 tokens on its reasoning and
stop with `"length"` and no answer, so `conn.settings(thinking=False)` switches thinking off for
the Moonshot models that have the switch, stops with a clear error on those that always think, and
adds nothing for any other model.
""", """
(Сервер воспроизведения перечисляет все модели, для которых у него есть кассеты, поэтому здесь виден
и Qwen.) Второй — крошечный запрос к чату без инструментов; `max_tokens` не даст запросу к
настоящей модели обойтись дорого. Модель, которая рассуждает перед ответом (`kimi-k2.6`, урок 06),
потратила бы эти 10 токенов на рассуждение и остановилась бы с `"length"`, так и не ответив. Поэтому
`conn.settings(thinking=False)` выключает рассуждение у тех моделей Moonshot, где его можно
выключить, с понятной ошибкой останавливается на тех, что рассуждают всегда, а для остальных
моделей ничего к запросу не добавляет.
"""),
    code('''
reply = client.chat.completions.create(
    model=model_name,
    messages=[{"role": "user", "content": "Reply with one word: ready"}],
    max_tokens=10,
    **conn.settings(thinking=False),
)
choice = reply.choices[0]
print(choice.message.content, "|", choice.finish_reason)
'''),
    md("""
`finish_reason` is `"stop"`: the model finished on its own. In the next lessons you will also see
`"tool_calls"` (the model wants tools run) and `"length"` (it hit `max_tokens`). The response also
says how many tokens were used (in replay mode these numbers are synthesized too):
""", """
Причина остановки (`finish_reason`) — `"stop"`: модель закончила сама. Дальше вы встретите и
`"tool_calls"` (модель просит выполнить инструменты), и `"length"` (ответ упёрся в `max_tokens`).
Ещё в ответе есть число потраченных токенов (в режиме воспроизведения эти числа тоже
синтезированы):
"""),
    code('''
print(reply.model)
print(reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens)
'''),
    md("""
The same check against Qwen. In live mode this needs the `QWEN_*` variables; without them
`connect` explains what to set instead of failing somewhere deep in the SDK.
""", """
Та же проверка для Qwen. В режиме live для неё нужны переменные `QWEN_*`; если их нет, `connect`
объяснит, что задать, а не упадёт где-то в глубине SDK.
"""),
    code('''
from helpers.replay import LiveSettingsError

try:
    qwen = connect("qwen")
except LiveSettingsError as error:
    print(error)  # live mode without QWEN_* variables: what to set
else:
    qwen_client = OpenAI(
        base_url=qwen.endpoint, api_key=qwen.api_key, http_client=qwen.http_client()
    )
    qwen_reply = qwen_client.chat.completions.create(
        model=qwen.model_name,
        messages=[{"role": "user", "content": "Reply with one word: ready"}],
        max_tokens=10,
    )
    print(qwen.model_name, "->", qwen_reply.choices[0].message.content)
''', ru={"# live mode without QWEN_* variables: what to set":
        "# режим live без переменных QWEN_*: что задать"}),
    md("""
## 5. The lesson map

Take lessons 01-05 in order, because they build the loop step by step; lessons 06-12 each take one
topic further.

| lesson | what you learn |
|---|---|
| [01 Tools and their schemas](01_tools_schema.ipynb) | describe a function for the model, `tool_map`, schemas from typed functions, argument checks, the guide's first defect |
| [02 The tool-call loop](02_sync_loop.ipynb) | `client.chat.completions.create` with tools, `finish_reason`, the loop, engines that disagree, parallel calls, errors, round limits |
| [03 Streaming tool calls](03_streaming.ipynb) | streaming, chunks, assembling calls by `index`, the missing assistant message |
| [04 Parsing tool calls by hand](04_manual_parsing.ipynb) | the chat template, special tokens, raw `/completions` output and its parser |
| [05 The same loop with Qwen](05_qwen_comparison.ipynb) | the same loop with Qwen, two raw formats side by side |
| [06 Thinking models and tool calls](06_thinking_models.ipynb) | Kimi K2.6's reasoning on the wire, the 400 when a loop drops it, `reasoning` vs `reasoning_content`, `<think>` in raw text, clean call ids for Kimi |
| [07 Qwen then and now](07_qwen_today.ipynb) | Qwen3's thinking and Qwen3.5's XML calls, typed values, Ollama and llama.cpp on a laptop |
| [08 Choosing tools](08_choosing_tools.ipynb) | `tool_choice`, parallel calls and `strict` on five engines: what is refused, ignored or enforced |
| [09 Kimi K3's XTML](09_kimi_k3_xtml.ipynb) | Kimi K3's tag format next to K2's, parsed by hand; the K3 API's rules |
| [10 Tools from an MCP server](10_mcp_tools.ipynb) | an MCP server's tools in the loop: names mapped for the model, schemas, `isError` results |
| [11 Tool results are untrusted input](11_untrusted_results.ipynb) | an injected instruction in a tool result; least privilege, an approval gate, spotlighting; AgentDojo's banking attacks |
| [12 Measuring tool calling](12_measuring.ipynb) | a pre-flight of an endpoint before a class, tool-call F1, schema accuracy, BFCL's AST check, intervals |
""", """
## 5. Карта уроков

Уроки 01–05 проходите по порядку, потому что в них шаг за шагом строится цикл; уроки 06–12
развивают каждый свою тему.

| урок | о чём |
|---|---|
| [01 Инструменты и их схемы](01_tools_schema.ipynb) | описание функции для модели, `tool_map`, схемы по функциям с аннотациями типов, проверка аргументов, первый дефект руководства |
| [02 Цикл вызова инструментов](02_sync_loop.ipynb) | `client.chat.completions.create` с инструментами, `finish_reason`, цикл, расхождения между движками, параллельные вызовы, ошибки, лимит раундов |
| [03 Вызов инструментов при потоковой выдаче](03_streaming.ipynb) | потоковая выдача (streaming), фрагменты (chunks), сборка вызовов по `index`, потерянное сообщение ассистента |
| [04 Ручной разбор вызовов инструментов](04_manual_parsing.ipynb) | шаблон чата (chat template), спецтокены (special tokens), сырой вывод `/completions` и его парсер |
| [05 Тот же цикл с Qwen](05_qwen_comparison.ipynb) | тот же цикл с Qwen, два сырых формата рядом |
| [06 Модели с рассуждением и вызов инструментов](06_thinking_models.ipynb) | рассуждение Kimi K2.6 в ответе API, ошибка 400, когда цикл его теряет, `reasoning` и `reasoning_content`, `<think>` в сыром выводе, правильные id вызовов для Kimi |
| [07 Qwen тогда и сейчас](07_qwen_today.ipynb) | рассуждения Qwen3 и вызовы в XML у Qwen3.5, типы значений, Ollama и llama.cpp на ноутбуке |
| [08 Выбор инструментов](08_choosing_tools.ipynb) | `tool_choice`, параллельные вызовы и `strict` на пяти движках: что отвергается, не учитывается или соблюдается |
| [09 XTML в Kimi K3](09_kimi_k3_xtml.ipynb) | теговый формат Kimi K3 рядом с форматом K2, разбор вручную; правила API K3 |
| [10 Инструменты с MCP-сервера](10_mcp_tools.ipynb) | инструменты MCP-сервера в цикле: имена для модели, схемы, результаты с `isError` |
| [11 Результаты инструментов — недоверенные данные](11_untrusted_results.ipynb) | внедрённая инструкция в результате инструмента; минимальные привилегии, подтверждение вызова, выделение; атаки банковского набора AgentDojo |
| [12 Измеряем вызов инструментов](12_measuring.ipynb) | предполётная проверка адреса API перед занятием, F1 вызовов, доля аргументов, верных по схеме, проверка по AST из BFCL, интервалы |
"""),
    md("""
## Summary

- Tool calling is a loop: the model asks for a call, your code runs it and sends the result back,
  until the model answers without calls.
- `LLM_MODE` picks the mode: `replay` (default, synthesized recordings, offline), `live`
  (`KIMI_*` / `QWEN_*` variables) or `record`.
- Kimi-K2 needs a tool-call parser on the server (`--tool-call-parser kimi_k2`) and, with vLLM or
  SGLang, 16 GPUs for K2-Instruct in FP8 (H200-class, 128k context, per the deploy guide; K2.6 and
  K2-Thinking ship INT4 weights that fit 8 H200); with four GPUs, use a hosted Kimi or serve Qwen
  with `--tool-call-parser hermes`.
- `client.models.list()` plus one tiny request is a quick check that a connection works.
""", """
## Итоги

- Вызов инструментов — это цикл: модель просит вызов, ваш код выполняет его и возвращает результат,
  пока модель не ответит без вызовов.
- Режим задаёт `LLM_MODE`: `replay` (по умолчанию, синтезированные кассеты, без сети), `live`
  (переменные `KIMI_*` / `QWEN_*`) или `record`.
- Для Kimi-K2 нужен парсер вызовов на сервере (`--tool-call-parser kimi_k2`), а для vLLM или
  SGLang — 16 GPU для K2-Instruct в FP8 (уровня H200, контекст 128k, по руководству по
  развёртыванию; веса K2.6 и K2-Thinking в INT4 помещаются на 8 H200); с четырьмя GPU пользуйтесь
  Kimi через платформу Moonshot или поднимите Qwen с `--tool-call-parser hermes`.
- `client.models.list()` и один крошечный запрос — быстрая проверка подключения.
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- **Where the answers come from.** In replay, the two chat answers of step 4 (Kimi-K2 and Qwen)
  come from `data/recordings/00_start.json`, which `python -m helpers.replay synthesize` wrote from
  the documented formats (engine profiles `moonshot` and `vllm_hermes`); no real service was
  called, and the token counts are made up, not measured.
- **The guide.** The series follows Moonshot AI's guide (MoonshotAI/Kimi-K2,
  `docs/tool_call_guidance.md`, Modified MIT licence) in its Russian translation; lesson 01's
  reference says where the English original differs.
- **`kimi-k2-0905-preview`.** The series was first written for this model. Third parties
  (promptfoo's provider docs), not Moonshot, report it retired in 2026; `GET /models` on the
  platform lists what it serves today.
- **The locked sampling settings.** That `temperature`, `top_p` and `n` of `kimi-k2.6` cannot be
  modified comes from Moonshot's model list (platform.kimi.ai, models overview).
- **vLLM for Kimi-K2-Instruct-0905.** The minimum is vLLM 0.11.0 with the model's chat template at
  or after commit 94a4053e. Sources: vLLM's blog of 2025-10-28, which names that commit for the
  template update, and Moonshot's K2-Vendor-Verifier README, not re-checked since.
- **The server flags.** The 400 from vLLM for `tool_choice="auto"` without
  `--enable-auto-tool-choice`: vllm #9986; calls arriving as plain text with a missing or wrong
  parser: vllm #17161 and #11786.
- **GPUs.** 16 H200-class GPUs over two nodes, FP8 weights and a 128k context: Moonshot's deploy
  guide (MoonshotAI/Kimi-K2, `docs/deploy_guidance.md`). K2.6's and K2-Thinking's INT4 weights on
  8 H200: vLLM's recipes (details in lesson 06's reference).

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Откуда ответы.** В режиме воспроизведения оба ответа чата из шага 4 (Kimi-K2 и Qwen) берутся
  из `data/recordings/00_start.json`, который команда `python -m helpers.replay synthesize`
  написала по документированным форматам (профили движков `moonshot` и `vllm_hermes`); настоящий
  сервис не вызывался, а числа токенов придуманы, а не измерены.
- **Руководство.** Серия следует руководству Moonshot AI (MoonshotAI/Kimi-K2,
  `docs/tool_call_guidance.md`, лицензия Modified MIT) в русском переводе; чем от него отличается
  английский оригинал, сказано в справке урока 01.
- **`kimi-k2-0905-preview`.** Сначала серия была написана для этой модели. О том, что в 2026 году
  её сняли с платформы, пишут сторонние источники (документация провайдера promptfoo), а не
  Moonshot; что платформа обслуживает сейчас, показывает `GET /models`.
- **Зафиксированные параметры.** То, что `temperature`, `top_p` и `n` у `kimi-k2.6` изменить
  нельзя, сказано в списке моделей Moonshot (platform.kimi.ai, обзор моделей).
- **vLLM для Kimi-K2-Instruct-0905.** Минимум — vLLM 0.11.0 и шаблон чата модели с коммита
  94a4053e или новее. Источники: блог vLLM от 2025-10-28, где этот коммит назван для обновления
  шаблона, и README K2-Vendor-Verifier от Moonshot, которое с тех пор не перепроверялось.
- **Флаги сервера.** Ошибка 400 от vLLM на `tool_choice="auto"` без `--enable-auto-tool-choice` —
  vllm #9986; вызовы обычным текстом при отсутствующем или чужом парсере — vllm #17161 и #11786.
- **Видеокарты.** 16 GPU уровня H200 на двух узлах, веса в FP8 и контекст 128k — из руководства
  Moonshot по развёртыванию (MoonshotAI/Kimi-K2, `docs/deploy_guidance.md`). Веса K2.6 и
  K2-Thinking в INT4 на 8 H200 — по рецептам vLLM (подробности — в справке урока 06).

</details>
"""),
    md("""
## Exercises

Each exercise has a cell to edit and a self-check below it. As shipped the check says "Not yet";
edit the cell, run both, and aim for "Correct!". A reference solution follows in a collapsed cell.

### Exercise 1. Settings for the Moonshot platform

Fill in, as a dict, the environment variables that switch this series to the live Kimi-K2 on the
Moonshot platform (for real you `export` them in the shell, as in step 3). Leave the key out: it
belongs in your shell, not in a notebook.
""", """
## Упражнения

В каждом упражнении есть ячейка, которую нужно изменить, и самопроверка под ней. В исходном виде
проверка отвечает «Пока нет»; поправьте ячейку, запустите обе и добейтесь ответа «Верно!».
Эталонное решение — ниже, в свёрнутой ячейке.

### Упражнение 1. Настройки для платформы Moonshot

Заполните в виде словаря переменные окружения, которые переключают уроки на настоящую Kimi-K2 на
платформе Moonshot (по-настоящему их задают через `export` в терминале, как на шаге 3). Ключ не
пишите: ему место в терминале, а не в блокноте.
"""),
    code('''
live_env = {
    "LLM_MODE": "replay",
    "KIMI_BASE_URL": "",
    "KIMI_MODEL": "",
}
'''),
    code('''
from helpers.exercises import n00

n00.check_live_env(live_env)
'''),
    code('''
live_env = {
    "LLM_MODE": "live",
    "KIMI_BASE_URL": "https://api.moonshot.ai/v1",
    "KIMI_MODEL": "kimi-k2.6",
}
''', hidden=True),
    code('''
n00.check_live_env(live_env)
'''),
    md("""
### Exercise 2. Serve a model that fits four GPUs

Write the command that serves `Qwen/Qwen2.5-7B-Instruct` with vLLM so that, with
`tool_choice="auto"` as the lessons send it, tool calls come back parsed in `tool_calls`.
""", """
### Упражнение 2. Модель, которая помещается на четыре GPU

Напишите команду, которая запускает `Qwen/Qwen2.5-7B-Instruct` в vLLM так, чтобы при
`tool_choice="auto"`, как его передают уроки, вызовы приходили уже разобранными в `tool_calls`.
"""),
    code('''
command = "vllm serve Qwen/Qwen2.5-7B-Instruct"
'''),
    code('''
n00.check_qwen_command(command)
'''),
    code('''
command = "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes"
''', hidden=True),
    code('''
n00.check_qwen_command(command)
'''),
    md("""
### Exercise 3. Read a response

`read_reply(reply)` gets a chat completion like `reply` of step 4 and returns a dict of four of its
fields: `text` (the message's content, as the reply holds it), `finish_reason`, `model` and
`total_tokens`. The self-check calls it on replies you have not seen (other models and counts, a
reply with tool calls and no text), so read each value from `reply`; a value typed in from step 4's
printout fits that one reply only.
""", """
### Упражнение 3. Прочитайте ответ

`read_reply(reply)` получает ответ чата, такой же, как `reply` на шаге 4, и возвращает словарь из
четырёх его полей: `text` (content сообщения в том виде, в каком он есть в ответе),
`finish_reason`, `model` и `total_tokens`. Самопроверка вызывает функцию на ответах, которых вы не
видели (другие модели и числа токенов, ответ с вызовами инструментов и без текста), поэтому каждое
значение берите из `reply`: значение, переписанное из вывода шага 4, подходит только к тому ответу.
"""),
    code('''
def read_reply(reply):
    """The text, finish reason, model and total tokens of a chat completion."""
    return {
        "text": None,
        "finish_reason": None,
        "model": None,
        "total_tokens": None,
    }
'''),
    code('''
n00.check_reading(read_reply)
'''),
    code('''
def read_reply(reply):
    """The text, finish reason, model and total tokens of a chat completion."""
    choice = reply.choices[0]
    return {
        "text": choice.message.content,
        "finish_reason": choice.finish_reason,
        "model": reply.model,
        "total_tokens": reply.usage.total_tokens,
    }
''', hidden=True),
    code('''
n00.check_reading(read_reply)
'''),
    md("""
[Next: 01 Tools and their schemas](01_tools_schema.ipynb)
""", """
[Дальше: 01 Инструменты и их схемы](01_tools_schema.ipynb)
"""),
])
