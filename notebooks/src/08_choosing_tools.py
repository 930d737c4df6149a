"""Lesson 08: choosing tools: tool_choice, parallel_tool_calls and strict, engine by engine."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Choosing tools", "ru": "Выбор инструментов"},
    "summary": {
        "en": "`tool_choice`, parallel calls and `strict` on five engines: what is refused, ignored or enforced",
        "ru": "`tool_choice`, параллельные вызовы и `strict` на пяти движках: что отвергается, не учитывается или соблюдается",
    },
    "minutes_reading": (36, 50),
    "minutes_exercises": (24, 45),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi", "qwen"),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_one_call", "check_named_choice", "check_strict_tool"),
}

# Student-facing strings of the outcome and table cells, shared by the cells that print them.
OUTCOME_RU = {
    '"refused (400)"': '"отказ (400)"',
    '"not recorded (404)"': '"не записано (404)"',
    '"text"': '"текст"',
    '"1 call"': '"1 вызов"',
    '" calls"': '" вызова"',
    '"""What one request gets back: refused, text, or how many tool calls."""':
    '"""Что возвращает один запрос: отказ, текст или сколько вызовов."""',
}

LESSON = Lesson("08_choosing_tools", [
    md("""
# Choosing tools

**Goal:** know what `tool_choice`, `parallel_tool_calls` and `strict` promise, and what each engine
really does with them, so that you pick settings that hold on the server you deploy to.
""", """
# Выбор инструментов

**Цель:** понять, что обещают `tool_choice`, `parallel_tool_calls` и `strict` и что с ними на самом
деле делает каждый движок, чтобы выбирать настройки, которые работают на вашем сервере.
"""),
    md("""
## What you will build

- a small function that sums up one request's answer: refused, text, one call or several;
- the four values of `tool_choice` sent to vLLM;
- a compatibility table of five engines, computed from their answers, not typed by hand;
- the Moonshot platform's two surprises: forced choices refused with thinking on, and the
  platform's Kimi K3 ignoring a named function without a word;
- llama.cpp's parallel calls that stay on, and Moonshot's strict schemas.
""", """
## Что вы сделаете

- напишете маленькую функцию, которая подводит итог ответа на один запрос: отказ, текст, один
  вызов или несколько;
- отправите в vLLM четыре значения `tool_choice`;
- соберёте таблицу совместимости пяти движков (engine) — она вычисляется из их ответов, а не
  набирается вручную;
- увидите два сюрприза платформы Moonshot: ошибку 400 в ответ на принудительный выбор
  инструмента при включённом рассуждении и модель Kimi K3, которая молча не учитывает выбор
  инструмента по имени;
- разберёте параллельные вызовы llama.cpp, которые не выключаются, и строгие схемы Moonshot.
"""),
    md("""
## Setup

The main engine of this lesson is vLLM serving Kimi-K2 (`--tool-call-parser kimi_k2`). In replay
mode every answer comes from a cassette **synthesized** from each engine's documentation, not
captured from real servers (the sources of each engine are in the [reference](#reference)). Where
the cassette has no answer of an engine to a setting, the table below says "not recorded". With `LLM_MODE=live` and the `KIMI_*`
variables the cells talk to your server, and the table gets one column: that server.
""", """
## Подготовка

Главный движок урока — vLLM с моделью Kimi-K2 (`--tool-call-parser kimi_k2`). В режиме
воспроизведения (replay) все ответы берутся из кассеты (cassette), **синтезированной** по
документации каждого движка, а не записанной с настоящих серверов (источники по каждому движку — в
[справке](#reference)). Если в кассете нет ответа движка на настройку, таблица ниже так и
пишет: «не записано». С
`LLM_MODE=live` и переменными `KIMI_*` ячейки работают с вашим сервером, а в таблице остаётся один
столбец — этот сервер.
"""),
    code('''
import openai
from openai import OpenAI

from helpers import connect, set_language
from helpers.display import compare_table, show_tool_calls

set_language("en")  # the language of the helpers' messages
conn = connect("kimi", engine="vllm")  # Kimi-K2 behind vLLM's kimi_k2 parser
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
''', ru={"# Kimi-K2 behind vLLM's kimi_k2 parser": "# Kimi-K2 в vLLM с парсером kimi_k2"}),
    md("""
## 1. One question, many possible answers

Judge a setting by what comes back, summed up per request. The guide's weather tool and a question that needs it twice: the model may call `get_weather` for
both cities at once (parallel calls), call it once, or answer in words.
""", """
## 1. Один вопрос, много возможных ответов

Судите о настройке по тому, что приходит в ответ, и подводите итог каждого запроса. Инструмент погоды из руководства и вопрос, для которого он нужен дважды: модель может вызвать
`get_weather` сразу для обоих городов (параллельные вызовы), вызвать его один раз или ответить
словами.
"""),
    code('''
tools = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get weather information. "
                       "Call this tool when the user needs to get weather information",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    },
}]
messages = [{"role": "user", "content": "Do I need an umbrella in Beijing or in Shanghai today?"}]
'''),
    md("""
Every request below sends these `messages` and `tools`; only the settings change. `outcome` sums
up the answer in a few words. A refusal is an answer too: `openai` raises `BadRequestError` for an
HTTP 400, and we keep it as a result instead of letting it stop the cell.
""", """
Все запросы ниже отправляют эти `messages` и `tools`; меняются только настройки. `outcome`
подводит итог ответа в нескольких словах. Отказ — тоже ответ: на HTTP 400 библиотека `openai`
выбрасывает `BadRequestError`, и мы сохраняем его как результат, а не даём ему остановить ячейку.
"""),
    code('''
def outcome(client, model_name, **settings):
    """What one request gets back: refused, text, or how many tool calls."""
    try:
        completion = client.chat.completions.create(
            model=model_name, messages=messages, tools=tools, **settings
        )
    except openai.BadRequestError:
        return "refused (400)"
    except openai.NotFoundError:
        return "not recorded (404)"
    tool_calls = completion.choices[0].message.tool_calls or []
    if not tool_calls:
        return "text"
    return "1 call" if len(tool_calls) == 1 else str(len(tool_calls)) + " calls"


outcome(client, model_name, tool_choice="auto")
''', ru=OUTCOME_RU),
    md("""
## 2. What each setting promises

For exactly one call on vLLM, name the function, or force a call with `"required"` and add
`parallel_tool_calls=False` (vLLM then keeps only the first call); on any other engine, count the
calls you get. The settings and their names are OpenAI's, and each is a promise, not a guarantee:

| setting | promise |
|---|---|
| `tool_choice="auto"` | the model decides: text, one call or several (the default when `tools` are sent) |
| `tool_choice="none"` | no call, text only (the default without `tools`) |
| `tool_choice="required"` | at least one call; how many is the model's choice |
| `tool_choice={"type": "function", "function": {"name": "get_weather"}}` | a call of that function |
| `parallel_tool_calls=False` | at most one call per reply (the default is `True`) |
| `"strict": True` in a function | the arguments follow the schema exactly |

No single value means "exactly one call": on vLLM a named function gives one because its grammar
holds one function's arguments, and `parallel_tool_calls=False` caps the count only where the
engine keeps that promise. Here is how vLLM answers the four values of `tool_choice`:
""", """
## 2. Что обещает каждая настройка

Чтобы получить в vLLM ровно один вызов, выберите функцию по имени или принудите модель к вызову
через `"required"` и добавьте `parallel_tool_calls=False` (тогда vLLM оставит только первый вызов);
на любом другом движке считайте полученные вызовы. Эти настройки и их названия придумала OpenAI, и
каждая из них — обещание, а не гарантия:

| настройка | обещание |
|---|---|
| `tool_choice="auto"` | решает модель: текст, один вызов или несколько (по умолчанию, если переданы `tools`) |
| `tool_choice="none"` | никаких вызовов, только текст (по умолчанию без `tools`) |
| `tool_choice="required"` | хотя бы один вызов; сколько именно, выбирает модель |
| `tool_choice={"type": "function", "function": {"name": "get_weather"}}` | вызов именно этой функции |
| `parallel_tool_calls=False` | не больше одного вызова в ответе (по умолчанию `True`) |
| `"strict": True` в описании функции | аргументы в точности соответствуют схеме |

Ни одно значение само по себе не означает «ровно один вызов»: в vLLM выбор функции по имени даёт
один вызов, потому что его грамматика описывает аргументы одной функции, а
`parallel_tool_calls=False` ограничивает число вызовов только там, где движок держит это обещание.
Вот как vLLM отвечает на четыре значения `tool_choice`:
"""),
    code('''
named = {"type": "function", "function": {"name": "get_weather"}}
for tool_choice in ["auto", "none", "required", named]:
    print(tool_choice, "->", outcome(client, model_name, tool_choice=tool_choice))
'''),
    md("""
On vLLM a forced choice is kept by a grammar: for `"required"` and a named function vLLM
constrains generation with **structured outputs** built from the tool schemas, so the model
cannot write anything but calls, and a named function gives exactly one call. This is vLLM's
strict tool calling, switched on by default (`VLLM_ENFORCE_STRICT_TOOL_CALLING=1`); with it on,
a tool that says `"strict": true` constrains `"auto"` too. The first forced request is slower
while the grammar compiles. With `"none"` the tools are still written into the prompt;
start vLLM with `--exclude-tools-when-tool-choice-none` to leave them out.
""", """
В vLLM принудительный выбор соблюдается с помощью грамматики: для `"required"` и выбора функции
по имени vLLM ограничивает генерацию **структурированным выводом** (structured outputs) по схемам
инструментов, так что модель не может написать ничего, кроме вызовов, а выбор по имени даёт ровно
один вызов. Это строгий режим вызовов (strict tool calling) vLLM, он включён по умолчанию
(`VLLM_ENFORCE_STRICT_TOOL_CALLING=1`); в нём инструмент с `"strict": true` ограничивает и режим
`"auto"`. Первый запрос с принудительным выбором выполняется дольше, пока грамматика
компилируется. При `"none"` инструменты всё равно попадают в промпт; чтобы их убрать, запустите vLLM
с флагом `--exclude-tools-when-tool-choice-none`.
"""),
    code('''
if conn.replay_only("vLLM's answer to a named function"):
    completion = client.chat.completions.create(
        model=model_name, messages=messages, tools=tools, tool_choice=named
    )
    show_tool_calls(completion.choices[0].message.tool_calls)
''', ru={'"vLLM\'s answer to a named function"': '"ответ vLLM на выбор функции по имени"'}),
    md("""
One call, for Beijing only: the grammar holds one function's arguments, so there is room for one
city only. A loop that forces a
tool should expect to ask again for the rest.

## 3. The same settings on five engines

Before you rely on a setting, check it on the engine you deploy to: the same request gets
different answers on different engines. Now five settings go to five engines. Each column is one engine, each row one setting,
and each cell is what `outcome` made of that engine's answer: in replay mode the recorded answer,
or the 400 the replay server gives where the engine documents one. Read three kinds of cell
apart: "refused (400)" is the engine saying no, a call count that breaks the setting's promise is
the engine ignoring it, and "not recorded (404)" is no data at all: the cassette holds no answer
of that engine to that setting.
""", """
Один вызов, только для Пекина: грамматика описывает аргументы одной функции, поэтому места
хватает только на один город.
Если цикл принуждает модель к вызову, будьте готовы запросить остальное следующим запросом.

## 3. Те же настройки на пяти движках

Прежде чем полагаться на настройку, проверьте её на том движке, где будете работать: один и тот же
запрос получает на разных движках разные ответы. Теперь отправим пять настроек пяти движкам. Столбец — это движок, строка — настройка, а
ячейка — то, что `outcome` извлекла из ответа этого движка: в режиме воспроизведения — записанный
ответ или 400, который сервер воспроизведения выдаёт там, где движок такую ошибку документирует.
Различайте три вида ячеек: «отказ (400)» — движок говорит «нет»; число вызовов, нарушающее обещание
настройки, — движок её молча не учитывает; «не записано (404)» — данных нет вовсе: в кассете нет ответа
этого движка на эту настройку.
"""),
    code('''
SETTINGS = {
    'tool_choice="auto"': {"tool_choice": "auto"},
    'tool_choice="none"': {"tool_choice": "none"},
    'tool_choice="required"': {"tool_choice": "required"},
    "named: get_weather": {"tool_choice": named},
    "auto, parallel_tool_calls=False": {"tool_choice": "auto", "parallel_tool_calls": False},
}
ENGINES = {  # column -> (provider, engine profile)
    "Moonshot K2.6": ("kimi", "moonshot_thinking"),
    "Moonshot K3": ("kimi", "moonshot_k3"),
    "vLLM": ("kimi", "vllm"),
    "llama.cpp": ("qwen", "llamacpp_hermes"),
    "Ollama": ("qwen", "ollama"),
}
''', ru={"# column -> (provider, engine profile)": "# столбец -> (провайдер, профиль движка)",
        '"named: get_weather"': '"по имени: get_weather"'}),
    code('''
def column(engine_conn):
    """One engine's answers to every setting."""
    engine_client = OpenAI(
        base_url=engine_conn.endpoint,
        api_key=engine_conn.api_key,
        http_client=engine_conn.http_client(),
    )
    return [outcome(engine_client, engine_conn.model_name, **s) for s in SETTINGS.values()]


if conn.replay_only("the five recorded engines"):
    columns = {
        name: column(connect(provider, engine=engine))
        for name, (provider, engine) in ENGINES.items()
    }
else:
    columns = {conn.model_name: column(conn)}
rows = list(zip(SETTINGS, *columns.values()))  # the setting, then one cell per engine
compare_table(rows, ["request settings", *columns])
''', ru={'"the five recorded engines"': '"пять записанных движков"',
        '"request settings"': '"настройки запроса"',
        "# the setting, then one cell per engine":
        "# настройка и по ячейке на каждый движок",
        '"""One engine\'s answers to every setting."""': '"""Ответы одного движка на каждую настройку."""',
        }),
    md("""
Read the table row by row:

- **auto** and **none** behave the same on every engine recorded.
- **required**: refused by Kimi K2.6 with thinking on, kept by the other engines recorded.
- **a named function**: refused by K2.6, kept by vLLM (one call), ignored by the platform's K3
  (two calls, as under `"auto"`).
- **parallel_tool_calls=False**: ignored by llama.cpp (two calls), not recorded for the others.
  Current vLLM keeps only the first call ([reference](#reference)), but the cassette has no vLLM
  answer to show it.

The next sections take these engines one at a time.

## 4. Moonshot: thinking refuses a forced choice, K3 ignores a name

On Moonshot's platform, switch thinking off for a request that forces a tool: with thinking on,
K2.6 refuses `"required"` and a named function with HTTP 400. The switch is lesson 06's
`extra_body={"thinking": {"type": "disabled"}}`; this lesson's cassette holds no answer with
thinking off, so the cell shows only the two refusals (where their texts come from:
[reference](#reference)):
""", """
Читайте таблицу по строкам:

- **auto** и **none** ведут себя одинаково на всех записанных движках.
- **required**: Kimi K2.6 с включённым рассуждением отвечает на него отказом, остальные записанные
  движки его соблюдают.
- **выбор функции по имени**: K2.6 отказывает, vLLM соблюдает (один вызов), K3 на платформе его
  молча не учитывает (два вызова, как при `"auto"`).
- **parallel_tool_calls=False**: llama.cpp его молча не учитывает (два вызова), для остальных не
  записано. Нынешний vLLM оставляет только первый вызов ([справка](#reference)), но ответа vLLM,
  который бы это показал, в кассете нет.

Дальше разберём эти движки по одному.

## 4. Moonshot: рассуждение несовместимо с принудительным выбором, K3 не учитывает имя

На платформе Moonshot выключайте рассуждение в запросе, который принуждает к вызову: с включённым
рассуждением K2.6 отвечает HTTP 400 и на `"required"`, и на выбор функции по имени. Переключатель —
из урока 06, `extra_body={"thinking": {"type": "disabled"}}`; ответа с выключенным рассуждением в
кассете урока нет, поэтому ячейка показывает только два отказа (откуда взяты их тексты — в
[справке](#reference)):
"""),
    code('''
if conn.replay_only("Kimi K2.6 on the Moonshot platform"):
    k26 = connect("kimi", engine="moonshot_thinking")
    k26_client = OpenAI(base_url=k26.endpoint, api_key=k26.api_key, http_client=k26.http_client())
    for tool_choice in ["required", named]:
        try:
            k26_client.chat.completions.create(
                model=k26.model_name, messages=messages, tools=tools, tool_choice=tool_choice
            )
        except openai.BadRequestError as error:
            print(error.status_code, repr(error.body["message"]))
''', ru={'"Kimi K2.6 on the Moonshot platform"': '"Kimi K2.6 на платформе Moonshot"'}),
    md("""
On the platform's Kimi K3, never rely on a named function: it is **silently ignored**, and the
request is answered as if it had no `tool_choice`. The other values work as usual: `"auto"`,
`"none"` and `"required"` are accepted, `"required"` without tools and any other string
get a 400. No error tells you about the name; only the calls do (the kimi-code endpoint answers a
400 instead, lesson 09).
""", """
У модели Kimi K3 на платформе никогда не полагайтесь на выбор функции по имени: он **молча не
учитывается**, и запрос обрабатывается так, будто `tool_choice` в нём нет. Остальные значения
работают как обычно: `"auto"`, `"none"` и `"required"` принимаются,
`"required"` без инструментов и любая другая строка получают 400. Никакая ошибка не скажет, что имя не
учтено, — это видно только по вызовам (адрес kimi-code вместо этого отвечает 400, урок 09).
"""),
    code('''
if conn.replay_only("Kimi K3 on the Moonshot platform"):
    k3 = connect("kimi", engine="moonshot_k3")
    k3_client = OpenAI(base_url=k3.endpoint, api_key=k3.api_key, http_client=k3.http_client())
    completion = k3_client.chat.completions.create(
        model=k3.model_name, messages=messages, tools=tools, tool_choice=named
    )
    show_tool_calls(completion.choices[0].message.tool_calls)
''', ru={'"Kimi K3 on the Moonshot platform"': '"Kimi K3 на платформе Moonshot"'}),
    md("""
Both calls are `get_weather` only because this conversation has one tool. With several tools, the
"forced" request could call any of them, or none. (The ids take K2's `name:N` form; the
[reference](#reference) says how sure that is for K3.)

## 5. llama.cpp: a grammar, and parallel calls from the template

On llama.cpp, count the calls yourself even with `parallel_tool_calls: false`: `llama-server`
constrains calls with a grammar, but two details differ from OpenAI's promises. The default of `parallel_tool_calls` comes from the chat template's
capabilities, and Qwen3's template says it supports parallel calls, so they are on. And with a
Hermes-style template (Qwen3's `<tool_call>` JSON) even `parallel_tool_calls: false` keeps the
grammar rule that allows one call *or more*; Qwen3.5's XML template does give one call. Its
`"required"` also lets the model write some text before the first call. The answer below, to
`"required"`, has text before two calls:
""", """
Оба вызова — `get_weather` только потому, что в этом диалоге один инструмент. Будь инструментов
несколько, «принудительный» запрос мог бы вызвать любой из них или ни одного. (Id здесь в форме
`name:N`, как у K2; насколько это верно для K3, сказано в [справке](#reference).)

## 5. llama.cpp: грамматика и параллельные вызовы из шаблона

С llama.cpp считайте вызовы сами даже при `parallel_tool_calls: false`: `llama-server`
ограничивает вызовы грамматикой, но две детали расходятся с обещаниями OpenAI. Значение `parallel_tool_calls` по умолчанию берётся из
возможностей шаблона чата (chat template), а шаблон Qwen3 заявляет поддержку параллельных вызовов,
поэтому они включены. А с шаблоном в стиле Hermes (JSON в `<tool_call>` у Qwen3) даже
`parallel_tool_calls: false` оставляет в грамматике правило «один вызов *или больше*»; шаблон
Qwen3.5 с XML действительно даёт один вызов. Кроме того, при `"required"` модель может написать
немного текста перед первым вызовом. В ответе ниже на `"required"` текст стоит перед двумя
вызовами:
"""),
    code('''
if conn.replay_only("llama.cpp serving Qwen3"):
    llama = connect("qwen", engine="llamacpp_hermes")
    llama_client = OpenAI(
        base_url=llama.endpoint, api_key=llama.api_key, http_client=llama.http_client()
    )
    message = llama_client.chat.completions.create(
        model=llama.model_name, messages=messages, tools=tools, tool_choice="required"
    ).choices[0].message
    print(repr(message.content))
    show_tool_calls(message.tool_calls)
''', ru={'"llama.cpp serving Qwen3"': '"llama.cpp с моделью Qwen3"'}),
    md("""
## 6. Ollama and SGLang

Do not count on `tool_choice` with Ollama: its OpenAI-compatible endpoint (`/v1`) lists it as
**not supported**. You may send it; the cassette records Ollama's default answer only.

SGLang has no column: no source of ours says what it does with each `tool_choice` value. On any
engine, look at `tool_calls`, not at `finish_reason` (lesson 02): SGLang and vLLM have both
answered `finish_reason: "stop"` with calls in the message ([reference](#reference)).

## 7. `strict`: who checks the schema

Write every schema you send to Moonshot inside its strict subset, or say `"strict": false`:
`"strict": true` in a function promises arguments that follow its schema, and the platform makes
tools **strict by default** (`strict` omitted means `true`). On OpenAI you ask for strict mode, and
the schema must then close every object (`"additionalProperties": false`) and list every property
in `required` (an optional one takes `["string", "null"]`). On vLLM strict tool calling is on by
default (section 2), and a strict tool constrains `"auto"` too.

Moonshot's subset has no `title`, `format`, `$comment` or `prefixItems`, among other limits. A
plain-looking date field is enough for a 400:
""", """
## 6. Ollama и SGLang

Не рассчитывайте на `tool_choice` в Ollama: её OpenAI-совместимый адрес API (endpoint) `/v1`
числит этот параметр **неподдерживаемым**. Отправить его можно; в кассете есть только ответ Ollama
по умолчанию.

Столбца для SGLang нет: ни один наш источник не говорит, что он делает с каждым значением
`tool_choice`. На любом движке смотрите на `tool_calls`, а не на `finish_reason` (урок 02): и
SGLang, и vLLM отвечали `finish_reason: "stop"` при вызовах в сообщении ([справка](#reference)).

## 7. `strict`: кто проверяет схему

Каждую схему для Moonshot пишите в пределах её строгого подмножества или указывайте
`"strict": false`: `"strict": true` в описании функции обещает аргументы, которые в точности
следуют схеме, а платформа делает инструменты **строгими по умолчанию** (если `strict` не указан,
он равен `true`). У OpenAI строгий режим включают явно, и тогда схема должна закрывать каждый объект
(`"additionalProperties": false`) и перечислять все свойства в `required` (необязательное свойство
получает тип `["string", "null"]`). В vLLM строгий режим вызовов включён по умолчанию (раздел 2), и
строгий инструмент ограничивает и режим `"auto"`.

В подмножестве JSON-схемы Moonshot среди прочего нет `title`, `format`, `$comment` и
`prefixItems`. Безобидного на вид поля с датой достаточно для ошибки 400:
"""),
    code('''
dated_tool = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city on a date.",
        "parameters": {
            "type": "object",
            "required": ["city", "date"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "date": {"type": "string", "format": "date"},
            },
        },
    },
}
dated_messages = [{"role": "user", "content": "What will the weather be in Beijing on 2026-12-02?"}]
'''),
    code('''
if conn.replay_only("Kimi K2.6 on the Moonshot platform"):
    try:
        k26_client.chat.completions.create(
            model=k26.model_name, messages=dated_messages, tools=[dated_tool]
        )
    except openai.BadRequestError as error:
        print(error.status_code, repr(error.body["message"]))
''', ru={'"Kimi K2.6 on the Moonshot platform"': '"Kimi K2.6 на платформе Moonshot"'}),
    md("""
Two fixes: write the date's shape in the `description` instead of `format` (exercise 3), or say
`"strict": false` in so many words, and the platform accepts the schema as it is:
""", """
Исправить можно двумя способами: описать вид даты в `description` вместо `format` (упражнение 3)
или прямо написать `"strict": false`, и тогда платформа примет схему как есть:
"""),
    code('''
if conn.replay_only("Kimi K2.6 on the Moonshot platform"):
    loose_tool = {"type": "function", "function": {**dated_tool["function"], "strict": False}}
    completion = k26_client.chat.completions.create(
        model=k26.model_name, messages=dated_messages, tools=[loose_tool]
    )
    show_tool_calls(completion.choices[0].message.tool_calls)
''', ru={'"Kimi K2.6 on the Moonshot platform"': '"Kimi K2.6 на платформе Moonshot"'}),
    md("""
## Summary

- `"auto"` and `"none"` mean the same on every engine recorded; `"required"`, a named function and
  `parallel_tool_calls` depend on the engine: refused (Moonshot K2.6 with thinking on), ignored
  (a named function on the platform's Kimi K3, `parallel_tool_calls: false` on llama.cpp with a
  Hermes template), or enforced by a grammar (vLLM, llama.cpp). "Not recorded" is no data, not a
  behaviour.
- No single value means "exactly one call": on vLLM a named function gives one, and so does
  `"required"` with `parallel_tool_calls=False` (vLLM keeps the first call); on other engines,
  count the calls you get.
- Moonshot's tools are strict by default, within its JSON-schema subset; `"strict": false` must be
  written out.
- Build the table for your own server and keep the check in your loop: count the calls you get.
""", """
## Итоги

- `"auto"` и `"none"` на всех записанных движках значат одно и то же; `"required"`, выбор функции по
  имени и `parallel_tool_calls` зависят от движка: он отказывает (Moonshot K2.6 с включённым
  рассуждением), молча не учитывает настройку (выбор по имени у Kimi K3 на платформе,
  `parallel_tool_calls: false` у llama.cpp с шаблоном Hermes) или соблюдает её с помощью
  грамматики (vLLM, llama.cpp). «Не записано» — это отсутствие данных, а не поведение движка.
- Ни одно значение само по себе не означает «ровно один вызов»: в vLLM один вызов даёт выбор
  функции по имени, а также `"required"` вместе с `parallel_tool_calls=False` (vLLM оставляет
  первый вызов); на других движках считайте полученные вызовы.
- Инструменты Moonshot строгие по умолчанию и должны укладываться в его подмножество JSON-схемы;
  `"strict": false` нужно писать явно.
- Соберите такую таблицу для своего сервера и оставьте проверку в цикле: считайте вызовы, которые
  приходят.
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

Sources, checked in 2026-12.

- **What the cassette is made from.** Moonshot's platform docs and third-party reports of its
  errors; the Kimi K3 tests of Moonshot's vendor verifier; vLLM's tool-calling docs and source;
  llama.cpp's behaviour as observed on a real `llama-server`; Ollama's OpenAI-compatibility docs.
- **Moonshot's forced-choice 400s** are not in Moonshot's docs; their texts are the ones users
  quote (AstrBot PR #7825 for `"required"`, an oh-my-pi report for a named function). Switching
  thinking off for such a request is what open-source clients do (oh-my-pi PR #1078, merged;
  simstudio's Kimi provider).
- **K3's named `tool_choice`**: silently ignored on the platform, and the other values behave as
  step 4 says (the vendor verifier's tests);
  the separate kimi-code K3 endpoint reportedly answers 400 (oh-my-pi PR #5994). K3's ids in the
  `name:N` form on the platform are not confirmed by any source; the replay server uses K2's form.
- **vLLM's strict tool calling.** `VLLM_ENFORCE_STRICT_TOOL_CALLING` defaults to true in
  `vllm/envs.py` (the default flipped to true in vLLM 0.24.0, by a third-party note); with it on,
  vLLM adds a structural tag to requests with tools, and `"required"` and a named function are
  constrained to calls. Set to 0, the JSON-schema path for `"required"` and named choices remains,
  but vLLM's `kimi_k3` parser refuses a named choice with a 400 that names the variable (lesson 09).
- **vLLM and `parallel_tool_calls=False`.** Current vLLM keeps only the first call of a reply,
  whole or streamed, when the request says `parallel_tool_calls: false`
  (`maybe_filter_parallel_tool_calls` in `vllm/entrypoints/openai/utils.py`, as in lesson 12), so
  `"required"` with it gives exactly one call. This lesson's cassette has no vLLM answer to that
  setting, so the table says "not recorded".
- **llama.cpp** (step 5): the template's parallel default and the Hermes grammar that allows one
  call or more under `parallel_tool_calls: false` were seen on a real `llama-server`; step 5's
  answer is synthesized to match, it is not one of lesson 07's captures.
- **The strict-mode 400** in step 7 is worded by the replay server, which applies the documented
  subset; the platform's own wording is not published.
- **OpenAI's rules** (the default `parallel_tool_calls=True`, strict schemas closing every object)
  come from secondary sources here; that a forced choice plus `parallel_tool_calls=False` gives
  exactly one call on OpenAI is not confirmed by our sources.
- **`finish_reason: "stop"` with calls**: sglang issue #2877; vllm issue #9209 under a named choice.
- **Ollama**: what the server does with each `tool_choice` value is not documented; the cassette
  records its default answer only.

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

Источники, проверено в декабре 2026 года.

- **Из чего сделана кассета.** Документация платформы Moonshot и сообщения сторонних разработчиков
  о её ошибках; тесты Kimi K3 из набора проверок Moonshot для поставщиков; документация и исходный
  код vLLM о вызове инструментов; поведение llama.cpp, замеченное на настоящем `llama-server`;
  документация Ollama об OpenAI-совместимости.
- **Ошибки 400 Moonshot на принудительный выбор** в документации Moonshot не описаны; их тексты —
  те, что цитируют пользователи (PR AstrBot #7825 для `"required"`, отчёт oh-my-pi для выбора
  функции по имени). Выключать рассуждение для такого запроса — именно так поступают клиенты с
  открытым кодом (PR oh-my-pi #1078, принят; провайдер Kimi в simstudio).
- **Выбор функции по имени в `tool_choice` у K3**: на платформе молча не учитывается, а остальные
  значения ведут себя, как сказано в шаге 4 (тесты набора проверок для поставщиков); отдельный адрес kimi-code для K3, по сообщениям, отвечает 400 (PR oh-my-pi #5994).
  Форму id `name:N` у K3 на платформе не подтверждает ни один источник; сервер воспроизведения
  берёт форму K2.
- **Строгий режим вызовов vLLM.** `VLLM_ENFORCE_STRICT_TOOL_CALLING` по умолчанию включён в
  `vllm/envs.py` (по заметке стороннего разработчика, значение по умолчанию стало true в vLLM
  0.24.0); в этом режиме vLLM добавляет к запросам с инструментами структурный тег (structural tag),
  и `"required"` и выбор по имени ограничены вызовами. Если задать 0, для `"required"` и выбора по
  имени остаётся путь через JSON-схему, но парсер `kimi_k3` в vLLM отвечает на выбор по имени
  ошибкой 400, в тексте которой названа эта переменная (урок 09).
- **vLLM и `parallel_tool_calls=False`.** Нынешний vLLM при `parallel_tool_calls: false` в
  запросе оставляет только первый вызов ответа, целого или потокового
  (`maybe_filter_parallel_tool_calls` в `vllm/entrypoints/openai/utils.py`, как в уроке 12), так
  что `"required"` вместе с этим флагом даёт ровно один вызов. В кассете урока нет ответа vLLM на
  эту настройку, поэтому в таблице «не записано».
- **llama.cpp** (шаг 5): значение параллельных вызовов по умолчанию из шаблона и грамматика Hermes,
  которая при `parallel_tool_calls: false` допускает один вызов или больше, замечены на настоящем
  `llama-server`; ответ в шаге 5 синтезирован по этим наблюдениям, это не одна из кассет урока 07
  с настоящего сервера.
- **Ошибка 400 строгого режима** в шаге 7 сформулирована сервером воспроизведения, который
  применяет документированное подмножество; собственный текст платформы не опубликован.
- **Правила OpenAI** (`parallel_tool_calls=True` по умолчанию, строгие схемы, закрывающие каждый
  объект) известны здесь из вторичных источников; то, что у OpenAI принудительный выбор вместе с
  `parallel_tool_calls=False` даёт ровно один вызов, наши источники не подтверждают.
- **`finish_reason: "stop"` при вызовах**: issue sglang #2877; issue vllm #9209 при выборе по имени.
- **Ollama**: что сервер делает с каждым значением `tool_choice`, не документировано; в кассете
  записан только ответ по умолчанию.

</details>
"""),
    md("""
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Exactly one call on vLLM

Set `settings` to the keyword arguments for `client.chat.completions.create` that guarantee
exactly one call of `get_weather` from the vLLM server of this lesson, whatever the question.
""", """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Ровно один вызов в vLLM

Запишите в `settings` именованные аргументы для `client.chat.completions.create`, которые
гарантируют ровно один вызов `get_weather` от сервера vLLM из этого урока, каким бы ни был вопрос.
"""),
    code('''
from helpers.exercises.n08 import check_named_choice, check_one_call, check_strict_tool

settings = {"tool_choice": "auto"}  # your settings here
''', ru={"# your settings here": "# ваши настройки здесь"}),
    code('''
check_one_call(settings)
'''),
    code('''
settings = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
check_one_call(settings)
''', hidden=True),
    md("""
### Exercise 2. Who refuses, who ignores

A request names a function: `tool_choice={"type": "function", "function": {"name":
"get_weather"}}`. Of the engines `"Moonshot K2.6"` (thinking on), `"Moonshot K3"` and `"vLLM"`,
put into `refuses` the ones that answer with HTTP 400, and into `ignores` the ones that accept the
request and answer as if no `tool_choice` were sent.
""", """
### Упражнение 2. Кто отказывает, кто молча не учитывает

Запрос называет функцию по имени: `tool_choice={"type": "function", "function": {"name":
"get_weather"}}`. Из движков `"Moonshot K2.6"` (рассуждение включено), `"Moonshot K3"` и `"vLLM"`
положите в `refuses` те, что отвечают HTTP 400, а в `ignores` — те, что принимают запрос и отвечают
так, будто `tool_choice` не передан.
"""),
    code('''
refuses = set()  # engines answering with HTTP 400
ignores = set()  # engines answering as if no tool_choice were sent
''', ru={"# engines answering with HTTP 400": "# движки, которые отвечают HTTP 400",
        "# engines answering as if no tool_choice were sent":
        "# движки, которые отвечают так, будто tool_choice нет"}),
    code('''
check_named_choice(refuses, ignores)
'''),
    code('''
refuses = {"Moonshot K2.6"}
ignores = {"Moonshot K3"}
check_named_choice(refuses, ignores)
''', hidden=True),
    md("""
### Exercise 3. A strict schema Moonshot accepts

Change `my_tool` so that the Moonshot platform accepts it **in strict mode** (leave `strict` out):
keep the function's name and both parameters, and say in the date's `description` what a date
looks like instead of using `format`.
""", """
### Упражнение 3. Строгая схема, которую примет Moonshot

Измените `my_tool` так, чтобы платформа Moonshot приняла его **в строгом режиме** (`strict` не
указывайте): сохраните имя функции и оба параметра, а вид даты опишите в `description` вместо
`format`.
"""),
    code('''
my_tool = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city on a date.",
        "parameters": {
            "type": "object",
            "required": ["city", "date"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "date": {"type": "string", "format": "date"},
            },
        },
    },
}
'''),
    code('''
check_strict_tool(my_tool)
'''),
    code('''
my_tool = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city on a date.",
        "parameters": {
            "type": "object",
            "required": ["city", "date"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "date": {"type": "string", "description": "The date as YYYY-MM-DD"},
            },
        },
    },
}
check_strict_tool(my_tool)
''', hidden=True),
    md("""
[Next: 09 Kimi K3's XTML](09_kimi_k3_xtml.ipynb)
""", """
[Дальше: 09 XTML в Kimi K3](09_kimi_k3_xtml.ipynb)
"""),
])
