"""Lesson 05: the same tool calling with Qwen2.5: Hermes format, the same loop, both parsers."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "The same loop with Qwen", "ru": "Тот же цикл с Qwen"},
    "summary": {
        "en": "the same loop with Qwen, two raw formats side by side",
        "ru": "тот же цикл с Qwen, два сырых формата рядом",
    },
    "minutes_reading": (25, 30),
    "minutes_exercises": (15, 20),
    "timed": True,
    "in_class_path": False,
    "engines": ("qwen",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_hermes_calls", "check_unparsed"),
}

LESSON = Lesson("05_qwen_comparison", [
    md(
        """
# The same loop with Qwen

**Goal:** run the same tool calls through Qwen2.5 and see that only the packaging changes: a tool
call is text in a format the model was trained on, and a parser turns it into `tool_calls`.
""",
        """
# Тот же цикл с Qwen

**Цель:** провести те же вызовы инструментов через Qwen2.5 и убедиться, что меняется только
упаковка: вызов инструмента — это текст в формате, которому обучена модель, а парсер превращает
его в `tool_calls`.
""",
    ),
    md(
        """
## What you will build

- the conversation of lesson 04 rendered by Qwen2.5's chat template (Hermes style) next to Kimi-K2's;
- the same `run_tool_loop` against a Qwen server (vLLM with `--tool-call-parser hermes`), and the Qwen
  documentation's example with two tools and two parallel calls;
- the manual loop over `/completions` with `parse_hermes`, and the trap of arguments encoded twice;
- the two raw formats and parsers side by side, and what a server that does not parse Qwen's calls
  sends;
- a summary of lessons 01-05: the guide's four defects and their fixes (lessons 06-09 go on
  with thinking models, today's Qwen, choosing tools and Kimi K3).
""",
        """
## Что вы сделаете

- примените к разговору из урока 04 шаблон чата (chat template) Qwen2.5 (в стиле Hermes) и
  сравните результат с шаблоном Kimi-K2;
- запустите тот же цикл `run_tool_loop` с сервером Qwen (vLLM с `--tool-call-parser hermes`), а
  затем пример из документации Qwen с двумя инструментами и двумя параллельными вызовами
  (parallel tool calls);
- напишете ручной цикл через `/completions` с парсером (parser) `parse_hermes` и разберётесь с
  ловушкой двойного кодирования аргументов;
- сравните два формата сырого вывода модели (raw output) и два парсера и посмотрите, что присылает
  сервер, который не разбирает вызовы Qwen;
- подведёте итоги уроков 01–05: четыре ошибки руководства и их исправления (уроки 06–09
  продолжают тему: модели с рассуждением, нынешние версии Qwen, выбор инструментов и Kimi K3).
""",
    ),
    md(
        """
## Setup

The model is `Qwen/Qwen2.5-7B-Instruct`, small enough for one GPU. In replay mode its answers come
from cassettes **synthesized** from the documented Qwen2.5 format and vLLM's `hermes` parser, not
captured from a real server. The offline tokenizer carries Qwen's official chat template and the
real marker ids, but ordinary words get different ids than in the real vocabulary. With
`LLM_MODE=live` and the `QWEN_*` variables ([lesson 00](00_start.ipynb)) the same cells talk to
your Qwen server, with the same tokenizer.
""",
        """
## Подготовка

Модель — `Qwen/Qwen2.5-7B-Instruct`, ей хватает одной видеокарты. В режиме воспроизведения
(replay) её ответы берутся из кассет (cassettes), **синтезированных** по документированному формату
Qwen2.5 и парсеру `hermes` из vLLM, а не записанных с настоящего сервера. У офлайн-токенизатора
(tokenizer) официальный шаблон чата Qwen и настоящие номера маркеров; обычные слова получают
другие id, чем в настоящем словаре. В режиме live (с настоящей моделью), с `LLM_MODE=live` и
переменными `QWEN_*` ([урок 00](00_start.ipynb)), те же ячейки обращаются к вашему серверу Qwen с
тем же токенизатором.
""",
    ),
    code(
        '''
import json

from openai import OpenAI

from helpers import (
    ToolRegistry, connect, load_tokenizer, parse_hermes, parse_kimi, run_tool_loop, set_language,
)
from helpers.display import compare_table, show_messages, show_raw, show_tool_calls
from helpers.formats import render_hermes_tool_calls, render_kimi_tool_calls
from helpers.templates import decode_tool_arguments, marker_tokens

set_language("en")  # the language of the helpers' messages
conn = connect("qwen")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
http_client = conn.http_client()  # plain HTTP for the raw /completions requests
endpoint = conn.endpoint
model_name = conn.model_name
settings = conn.settings(temperature=0.3)  # the guide's temperature; left out where the platform locks it
headers = {"Authorization": f"Bearer {conn.api_key}"}
conn
''',
        ru={"# the guide's temperature; left out where the platform locks it": '# температура из руководства; не передаётся, где платформа её фиксирует',
            "# plain HTTP for the raw /completions requests": "# обычный HTTP для сырых запросов к /completions"},
    ),
    md(
        """
## 1. The tool

Register the weather tool in a `ToolRegistry` this time: `run_tool_loop` looks the called function
up there by name.
""",
        """
## 1. Инструмент

На этот раз зарегистрируйте инструмент погоды в `ToolRegistry`: `run_tool_loop` ищет там
вызванную функцию по имени.
""",
    ),
    code(
        '''
WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict:
    """Look the weather up in a fixed table (a stub for a real weather API)."""
    return {"city": city, "weather": WEATHER.get(city, "unknown")}
''',
        ru={
        '"""Look the weather up in a fixed table (a stub for a real weather API)."""': '"""Найти погоду в фиксированной таблице (заглушка вместо настоящего API погоды)."""',
        },
    ),
    code(
        '''
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
registry = ToolRegistry()
_ = registry.register(get_weather, schema=tools[0])
''',
    ),
    md(
        """
## 2. One conversation, two templates

Render one conversation with both templates to compare the formats: here lesson 04's question,
the assistant's call and the tool's result. The arguments are given as a dict here, so both
templates write them as JSON.
""",
        """
## 2. Один разговор, два шаблона

Чтобы сравнить форматы, примените оба шаблона к одному разговору: здесь это вопрос, вызов от
ассистента и результат инструмента из урока 04. Аргументы здесь заданы словарём, чтобы оба шаблона
записали их как JSON.
""",
    ),
    code(
        '''
conversation = [
    {"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."},
    {"role": "assistant", "content": "", "tool_calls": [{
        "id": "functions.get_weather:0", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Beijing"}},
    }]},
    {"role": "tool", "tool_call_id": "functions.get_weather:0", "name": "get_weather",
     "content": '{"city": "Beijing", "weather": "Sunny"}'},
]
''',
    ),
    code(
        '''
qwen_tokenizer = load_tokenizer("qwen2.5")  # offline tokenizers with the official templates
kimi_tokenizer = load_tokenizer("kimi-k2")

qwen_prompt = qwen_tokenizer.apply_chat_template(
    conversation, tools=tools, tokenize=False, add_generation_prompt=True
)
print(qwen_prompt)
''',
        ru={"# offline tokenizers with the official templates":
            "# офлайн-токенизаторы с официальными шаблонами"},
    ),
    md(
        """
Things to notice in Qwen's prompt:

- the tools go into the **system prompt**, one JSON per line inside `<tools></tools>`, with an
  instruction telling the model to answer in `<tool_call></tool_call>` tags;
- the call is **one JSON object** `{"name": ..., "arguments": {...}}` between `<tool_call>` tags;
  there is no call id in the text;
- the result comes back inside a **user** turn, wrapped in `<tool_response>`; the `tool_call_id` is
  not rendered at all: results are matched to calls by order.

Now Kimi-K2's render of the same conversation, from the assistant turn on:
""",
        """
Что видно в промпте Qwen:

- инструменты попадают в **системный промпт**, по одному JSON на строку внутри `<tools></tools>`,
  вместе с указанием отвечать в тегах `<tool_call></tool_call>`;
- вызов — это **один JSON-объект** `{"name": ..., "arguments": {...}}` между тегами `<tool_call>`;
  идентификатора вызова в тексте нет;
- результат возвращается внутри реплики **пользователя**, обёрнутый в `<tool_response>`;
  `tool_call_id` в промпт не попадает вовсе: результаты сопоставляются с вызовами по порядку.

А вот тот же разговор в шаблоне Kimi-K2, начиная с реплики ассистента:
""",
    ),
    code(
        '''
kimi_prompt = kimi_tokenizer.apply_chat_template(
    conversation, tools=tools, tokenize=False, add_generation_prompt=True
)
show_raw(kimi_prompt[kimi_prompt.index("<|im_assistant|>"):])
''',
    ),
    md(
        """
The markers of both formats and their ids. In both models a tool-call marker is a single token that
is not "special", so it survives `skip_special_tokens=True`; only the turn markers are special. Kimi-K2
has five such markers with a fixed structure, Qwen two tags around JSON (`<tool_call>` is 151657,
`</tool_call>` 151658).
""",
        """
Маркеры обоих форматов и их номера. У обеих моделей маркер вызова — это один токен, который не
считается спецтокеном (special token), поэтому `skip_special_tokens=True` его не убирает;
специальные только маркеры реплик. У Kimi-K2 таких маркеров пять и строгая структура, у Qwen — два
тега вокруг JSON (`<tool_call>` — 151657, `</tool_call>` — 151658).
""",
    ),
    code(
        '''
rows = [("Qwen2.5", m.id, m.token, "yes" if m.special else "no")
        for m in marker_tokens(qwen_tokenizer)]
rows += [("Kimi-K2", m.id, m.token, "yes" if m.special else "no")
         for m in marker_tokens(kimi_tokenizer)]
compare_table(rows, ("model", "id", "token", "special"))
''',
        ru={'"yes"': '"да"', '"no"': '"нет"',
            '"model", "id", "token", "special"': '"модель", "id", "токен", "специальный"'},
    ),
    md(
        """
## 3. The same loop with a Qwen server

Serve Qwen2.5 with vLLM using the same pair of flags, with the parser `hermes` instead of
`kimi_k2`:

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
```

The client code does not change at all: the same `run_tool_loop`, the same tools.
""",
        """
## 3. Тот же цикл с сервером Qwen

При развёртывании (deployment) запускайте Qwen2.5 в vLLM с той же парой флагов, только парсер —
`hermes`, а не `kimi_k2`:

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
```

Клиентский код не меняется совсем: тот же `run_tool_loop`, те же инструменты.
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
answer = run_tool_loop(
    client, messages, registry, model=model_name, tool_choice="auto", **settings
)
print(answer["content"])
''',
    ),
    md(
        """
Expect the call id to come from the server, not from Qwen: Qwen writes no id, so vLLM invents one,
`chatcmpl-tool-` and random hex digits (how many depends on the vLLM release:
[reference](#reference)). Kimi-K2 writes the id in its output (`functions.get_weather:0`).
""",
        """
Идентификатор вызова здесь придумывает сервер, а не Qwen: Qwen не пишет id, поэтому vLLM создаёт
его сам — `chatcmpl-tool-` и случайные шестнадцатеричные цифры (сколько их, зависит от выпуска
vLLM: [справка](#reference)). Kimi-K2 пишет id прямо в своём выводе (`functions.get_weather:0`).
""",
    ),
    code(
        '''
call = messages[1]["tool_calls"][0]
print(call["id"].startswith("chatcmpl-tool-"), len(call["id"]))
print(call["function"]["name"], call["function"]["arguments"])
assert messages[2]["tool_call_id"] == call["id"]
''',
    ),
    md(
        """
## 4. The Qwen documentation's example: two tools, two calls

Write each tool as a typed Python function with a Google-style docstring and let
`ToolRegistry.register(fn)` build its schema, as `transformers` does for Qwen's template. The
example is the one the Qwen docs walk through every framework they cover: two temperature tools
and a question that needs both.
""",
        """
## 4. Пример из документации Qwen: два инструмента, два вызова

Пишите каждый инструмент как функцию Python с аннотациями типов и docstring в стиле Google, а
описание пусть строит `ToolRegistry.register(fn)`, как это делает `transformers` для шаблона Qwen.
Пример взят из документации Qwen, где он проходит через разделы для всех фреймворков: два
инструмента, которые сообщают температуру, и вопрос, для ответа на который нужны оба.
""",
    ),
    code(
        '''
def get_current_temperature(location: str, unit: str = "celsius") -> dict:
    """Get the current temperature at a location.

    Args:
        location: The location, in the format "City, State, Country".
        unit: The unit of the temperature, "celsius" by default. (choices: ["celsius", "fahrenheit"])
    """
    value = 26.1 if unit == "celsius" else 79.0  # a fixed stub value
    return {"temperature": value, "location": location, "unit": unit}
''',
        ru={'# a fixed stub value': '# заглушка: постоянное значение'},
    ),
    code(
        '''
def get_temperature_date(location: str, date: str, unit: str = "celsius") -> dict:
    """Get the temperature at a location on a given date.

    Args:
        location: The location, in the format "City, State, Country".
        date: The date, in the format "Year-Month-Day".
        unit: The unit of the temperature, "celsius" by default. (choices: ["celsius", "fahrenheit"])
    """
    value = 25.9 if unit == "celsius" else 78.6  # a fixed stub value
    return {"temperature": value, "location": location, "date": date, "unit": unit}
''',
        ru={'# a fixed stub value': '# заглушка: постоянное значение'},
    ),
    code(
        '''
temperature_tools = ToolRegistry()
temperature_tools.register(get_current_temperature)
temperature_tools.register(get_temperature_date)
print(json.dumps(temperature_tools.schemas[0]["function"]["parameters"], indent=1))
''',
    ),
    md(
        """
In the docs' example the current date is given in the system message, so the model can turn
"tomorrow" into a date.
""",
        """
В примере из документации дата указана в системном сообщении, чтобы модель могла превратить
«завтра» в конкретную дату.
""",
    ),
    code(
        r'''
messages = [
    {"role": "system", "content": "You are Qwen, created by Alibaba Cloud. "
     "You are a helpful assistant.\n\nCurrent Date: 2024-09-30"},
    {"role": "user", "content": "What's the temperature in San Francisco now? How about tomorrow?"},
]
answer = run_tool_loop(
    client, messages, temperature_tools, model=model_name, tool_choice="auto", **settings
)
for call in messages[2].get("tool_calls", []):  # two parallel calls in one message
    print(call["function"]["name"], call["function"]["arguments"])
print(answer["content"])
''',
        ru={'# two parallel calls in one message': '# два параллельных вызова в одном сообщении'},
    ),
    md(
        """
Two parallel calls in one assistant message, both answered before the next request, exactly as with
Kimi-K2 in lesson 02.

## 5. Raw text and `parse_hermes`

Reuse lesson 04's manual loop for Qwen and change only the template and the parser
(`parse_hermes`). First one raw request:
""",
        """
Два параллельных вызова в одном сообщении ассистента, на оба есть ответы до следующего запроса —
ровно как с Kimi-K2 в уроке 02.

## 5. Сырой текст и `parse_hermes`

Берите для Qwen ручной цикл из урока 04 и меняйте в нём только шаблон и парсер (`parse_hermes`).
Сначала один сырой запрос:
""",
    ),
    code(
        '''
def complete(prompt):
    """POST a prompt to {endpoint}/completions and return the raw generated text."""
    payload = {"model": model_name, "prompt": prompt, "max_tokens": 512}
    response = http_client.post(f"{endpoint}/completions", headers=headers, json=payload, timeout=120)
    response.raise_for_status()
    return response.json()["choices"][0]["text"]


messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
prompt = qwen_tokenizer.apply_chat_template(
    messages, tools=tools, tokenize=False, add_generation_prompt=True
)
raw_output = complete(prompt)
show_raw(raw_output)
''',
        ru={
        '"""POST a prompt to {endpoint}/completions and return the raw generated text."""': '"""Отправить промпт POST-запросом на {endpoint}/completions и вернуть сырой сгенерированный текст."""',
        },
    ),
    code(
        '''
parsed = parse_hermes(raw_output)
print(repr(parsed.content), parsed.errors)
show_tool_calls(parsed.tool_calls)
''',
    ),
    md(
        """
`parse_hermes` invents ids (`call_0`, `call_1`, ...) because the text has none. Before putting the
call back into the history there is a trap. OpenAI-style `arguments` are a JSON **string**, and Qwen2.5's
template writes arguments with `tojson`, so a string gets encoded a second time:
""",
        """
`parse_hermes` придумывает id (`call_0`, `call_1`, ...), потому что в тексте их нет. Прежде чем
вернуть вызов в историю, нужно обойти ловушку. В формате OpenAI `arguments` — это JSON-**строка**, а
шаблон Qwen2.5 записывает аргументы через `tojson`, так что строка кодируется второй раз:
""",
    ),
    code(
        '''
history = messages + [
    {"role": "assistant", "content": parsed.content, "tool_calls": parsed.tool_calls}
]
as_string = qwen_tokenizer.apply_chat_template(history, tools=tools, tokenize=False)
# the same history with the arguments decoded from a JSON string into a dict
decoded = qwen_tokenizer.apply_chat_template(
    decode_tool_arguments(history), tools=tools, tokenize=False
)
print(as_string[as_string.rindex("<tool_call>"):])
print(decoded[decoded.rindex("<tool_call>"):])
''',
        ru={"# the same history with the arguments decoded from a JSON string into a dict":
            "# та же история, но аргументы разобраны из JSON-строки в словарь"},
    ),
    md(
        """
The first render shows the model escaped quotes it never writes itself. vLLM decodes the arguments
before templating; `decode_tool_arguments` does the same on copies of the messages. With that, the
manual loop for Qwen (the assistant message goes in before the results, as always):
""",
        """
В первом промпте модель увидела бы экранированные кавычки, которых сама никогда не пишет. vLLM
перед применением шаблона разбирает аргументы из JSON; `decode_tool_arguments` делает то же с
копиями сообщений. С учётом этого ручной цикл для Qwen выглядит так (сообщение ассистента, как
всегда, — перед результатами):
""",
    ),
    code(
        '''
def manual_loop(messages, max_rounds=8):
    """Render with Qwen's template, complete, parse Hermes calls, run them through the registry."""
    for _ in range(max_rounds):
        prompt = qwen_tokenizer.apply_chat_template(
            decode_tool_arguments(messages), tools=tools, tokenize=False, add_generation_prompt=True
        )
        parsed = parse_hermes(complete(prompt))
        if not parsed.tool_calls:  # no calls: this is the final answer
            return parsed.content
        messages.append(
            {"role": "assistant", "content": parsed.content, "tool_calls": parsed.tool_calls}
        )
        messages.extend(registry.call(tool_call) for tool_call in parsed.tool_calls)
    raise RuntimeError(f"Still calling tools after {max_rounds} rounds.")
''',
        ru={'# no calls: this is the final answer': '# нет вызовов: это окончательный ответ',
            '"Still calling tools after {max_rounds} rounds."':
                '"Модель всё ещё вызывает инструменты после {max_rounds} раундов."',
        '"""Render with Qwen\'s template, complete, parse Hermes calls, run them through the registry."""': '"""Собрать промпт шаблоном Qwen, получить продолжение, разобрать вызовы Hermes, выполнить их через реестр."""',
        },
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
print(manual_loop(messages))
show_messages(messages)
''',
    ),
    md(
        """
## 6. Two formats side by side

Match the parser to the model's format: a parser only understands its own, and in the other one
it sees plain text and finds no calls. Below, the same call written by each model and read by each
parser.
""",
        """
## 6. Два формата рядом

Подбирайте парсер под формат модели: каждый парсер понимает только свой формат, а в чужом видит
обычный текст и вызовов не находит. Ниже — один и тот же вызов в записи каждой модели, прочитанный каждым
парсером.
""",
    ),
    code(
        '''
tool_calls = [{"id": "functions.get_weather:0", "type": "function",
               "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}]
raw = {"Kimi-K2": render_kimi_tool_calls(tool_calls), "Qwen2.5": render_hermes_tool_calls(tool_calls)}
for name, text in raw.items():
    print(name, repr(text))
''',
    ),
    code(
        '''
rows = []
for name, text in raw.items():
    kimi, hermes = parse_kimi(text), parse_hermes(text)  # every text through both parsers
    rows.append((name, f"calls: {len(kimi.tool_calls)}", f"calls: {len(hermes.tool_calls)}"))
compare_table(rows, ("raw text written by", "parse_kimi", "parse_hermes"))
''',
        ru={'# every text through both parsers': '# каждый текст — обоими парсерами',
            '"calls: {': '"вызовов: {', '"raw text written by"': '"чей сырой текст"'},
    ),
    md(
        """
And the whole comparison in one table:
""",
        """
И всё сравнение одной таблицей:
""",
    ),
    code(
        '''
compare_table(
    [
        ("call wrapper", "<|tool_calls_section_begin|> + <|tool_call_begin|>", "<tool_call>"),
        ("call payload", "id, <|tool_call_argument_begin|>, JSON", '{"name", "arguments"}'),
        ("call id", "written by the model", "invented by the server"),
        ("tools in the prompt", "tool_declare system turn", "system prompt, <tools>"),
        ("tool result", "system turn, '## Return of <id>'", "user turn, <tool_response>"),
        ("results matched by", "tool_call_id", "order"),
        ("vLLM flag", "--tool-call-parser kimi_k2", "--tool-call-parser hermes"),
        ("our parser", "parse_kimi", "parse_hermes"),
    ],
    ("", "Kimi-K2", "Qwen2.5"),
)
''',
        ru={
            '"call wrapper"': '"обёртка вызова"',
            '"call payload"': '"содержимое вызова"',
            '"call id"': '"id вызова"',
            '"written by the model"': '"пишет модель"',
            '"invented by the server"': '"придумывает сервер"',
            '"tools in the prompt"': '"инструменты в промпте"',
            '"tool_declare system turn"': '"системная реплика tool_declare"',
            '"system prompt, <tools>"': '"системный промпт, <tools>"',
            '"tool result"': '"результат инструмента"',
            '"system turn, \'## Return of <id>\'"': '"системная реплика, \'## Return of <id>\'"',
            '"user turn, <tool_response>"': '"реплика user, <tool_response>"',
            '"results matched by"': '"результат находят по"',
            '"order"': '"порядку"',
            '"vLLM flag"': '"флаг vLLM"',
            '"our parser"': '"наш парсер"',
        },
    ),
    md(
        """
## 7. A server that does not parse Qwen's calls

When `tool_calls` is empty, look for `<tool_call>` tags in `content`: a server without a parser for
Qwen's format passes the call on as text. As with Kimi-K2 in lesson 04, a vLLM started with neither
flag refuses `tool_choice="auto"` with a 400, which is easy to notice. The quiet case is a server
that accepts the tools but has no parser for Qwen's format (or one for another model's format): the
model still writes its call, and nobody parses it. The replay server's `no_parser` profile behaves
like that (in live mode your server's flags decide, so the next two cells print a note instead):
""",
        """
## 7. Сервер, который не разбирает вызовы Qwen

Если `tool_calls` пуст, поищите теги `<tool_call>` в `content`: сервер без парсера для формата Qwen
передаёт вызов дальше обычным текстом. Как и с Kimi-K2 в уроке 04, vLLM, запущенный совсем без
флагов, отвечает на `tool_choice="auto"` ошибкой 400, и это легко заметить. Хуже, когда сервер
принимает инструменты, но парсера для формата Qwen у него нет (или указан парсер для другой модели):
модель по-прежнему пишет вызов, только разбирать его некому. Профиль `no_parser` на сервере
воспроизведения ведёт себя именно так (в режиме live всё решают флаги вашего сервера, поэтому две
следующие ячейки вместо этого печатают пометку):
""",
    ),
    code(
        '''
if conn.replay_only("no_parser is a recorded engine profile"):
    raw_conn = connect("qwen", engine="no_parser")  # a server that does not parse the calls
    raw_client = OpenAI(
        base_url=raw_conn.endpoint, api_key=raw_conn.api_key, http_client=raw_conn.http_client()
    )

    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    completion = raw_client.chat.completions.create(
        model=model_name, messages=messages, tools=tools, tool_choice="auto", **settings
    )
    choice = completion.choices[0]
    print("finish_reason:", choice.finish_reason, "| tool_calls:", choice.message.tool_calls)
    show_raw(choice.message.content)
''',
        ru={'# a server that does not parse the calls': '# сервер, который не разбирает вызовы',
            '"no_parser is a recorded engine profile"': '"профиль no_parser есть только в кассетах"'},
    ),
    code(
        '''
if conn.replay_only("it needs the no_parser answer above"):
    show_tool_calls(parse_hermes(choice.message.content).tool_calls)
''',
        ru={'"it needs the no_parser answer above"': '"ей нужен ответ no_parser из ячейки выше"'},
    ),
    md(
        """
This is the main lesson of the series so far. The model only ever produces text. A tool
call is text in a format the model was trained on: dedicated marker tokens for Kimi-K2, JSON in
`<tool_call>` tags for Qwen. The server's parser (`kimi_k2`, `hermes`) turns that text into the
`tool_calls` field; without it, or with the wrong one, you get the text. Knowing the format lets you
check what the server did and parse it yourself when you must.
""",
        """
Это главный вывод уроков 00–05. Модель всегда выдаёт только текст. Вызов инструмента — это
текст в формате, которому модель обучена: отдельные маркеры-токены у Kimi-K2, JSON в тегах
`<tool_call>` у Qwen. Парсер сервера (`kimi_k2`, `hermes`) превращает этот текст в поле
`tool_calls`; без парсера или с чужим парсером вы получите сам текст. Зная формат, вы можете
проверить, что сделал сервер, и при необходимости разобрать вывод сами.
""",
    ),
    md(
        """
## Summary

- Qwen2.5 uses the Hermes format: one JSON object per call in `<tool_call>` tags, tools in the
  system prompt, results in `<tool_response>` inside a user turn, matched by order; no id in the text.
- The client code is the same for both models: `run_tool_loop` does not care who parses the calls.
- Serving: vLLM `--enable-auto-tool-choice --tool-call-parser hermes` for Qwen, `kimi_k2` for Kimi-K2.
- In a manual loop, decode JSON-string arguments before Qwen2.5's template (`decode_tool_arguments`)
  or they are encoded twice.

## Lessons 01-05 in one table: the guide's defects and their fixes

| # | where in the guide | what goes wrong | fix | lesson |
|---|---|---|---|---|
| 1 | `tool_function(tool_call_arguments)` | the whole dict arrives as one positional argument | `tool_function(**arguments)`, arguments checked first | 01 |
| 2 | `while finish_reason == "tool_calls"` | some engines report `stop` although the message has calls | loop while the message has `tool_calls`; bound the rounds | 02 |
| 3 | streaming and manual loops | the assistant message with the calls is never appended: a 400 from servers that check the history (OpenAI, Moonshot), a confused model elsewhere | append it before the `role: "tool"` results | 03, 04 |
| 4 | `extract_tool_call_info` | first section only, `IndexError` without the end marker, ids with `-` skipped | parse every section, tolerate cut-offs, report errors | 04 |

And one latent bug: `chunk.choices[0]` fails on the usage chunk (`choices: []`); guard with
`if chunk.choices` (lesson 03).

## What to read next

- Lessons 06-09 of this series: thinking models in a tool loop (the reasoning in the history,
  `<think>` in raw text), Qwen today (Qwen3.5's XML calls, a small Qwen on a laptop with Ollama or
  llama.cpp), `tool_choice` engine by engine, and Kimi K3's tag format.
- The source guide and deployment flags: MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md` and
  `docs/deploy_guidance.md`.
- Qwen's "Function Calling" documentation (Qwen-Agent, transformers, Ollama, vLLM).
- vLLM's "Tool Calling" documentation: every `--tool-call-parser` and what it expects.
- SGLang's tool parser documentation, for the same from the SGLang side.
- In this repository: `helpers/formats/` (both parsers, streaming versions with linear cost) and
  `helpers/loop.py` (`run_tool_loop`, the loop with every fix).
""",
        """
## Итоги

- Qwen2.5 использует формат Hermes: по одному JSON-объекту на вызов в тегах `<tool_call>`,
  инструменты в системном промпте, результаты в `<tool_response>` внутри реплики пользователя,
  сопоставление по порядку; id в тексте нет.
- Клиентский код для обеих моделей одинаков: для `run_tool_loop` неважно, кто разбирает вызовы.
- Развёртывание: vLLM `--enable-auto-tool-choice --tool-call-parser hermes` для Qwen, `kimi_k2` для
  Kimi-K2.
- В ручном цикле разбирайте аргументы из JSON-строки перед шаблоном Qwen2.5
  (`decode_tool_arguments`), иначе они закодируются дважды.

## Уроки 01–05 одной таблицей: ошибки руководства и их исправления

| № | где в руководстве | что идёт не так | исправление | урок |
|---|---|---|---|---|
| 1 | `tool_function(tool_call_arguments)` | весь словарь приходит одним позиционным аргументом | `tool_function(**arguments)`, аргументы сначала проверяются | 01 |
| 2 | `while finish_reason == "tool_calls"` | некоторые движки присылают `stop`, хотя в сообщении есть вызовы | продолжать, пока в сообщении есть `tool_calls`; ограничить число раундов | 02 |
| 3 | потоковый и ручной циклы | сообщение ассистента с вызовами не добавляется: ошибка 400 от серверов, которые проверяют историю (OpenAI, Moonshot), или сбитая с толку модель на остальных | добавлять его перед результатами `role: "tool"` | 03, 04 |
| 4 | `extract_tool_call_info` | только первая секция, `IndexError` без конечного маркера, id с `-` пропускаются | разбирать все секции, не падать на обрезанном ответе, сообщать об ошибках | 04 |

И одна скрытая ошибка: `chunk.choices[0]` падает на фрагменте со статистикой (`choices: []`);
проверяйте `if chunk.choices` (урок 03).

## Что почитать дальше

- Уроки 06–09 этой серии: модели с рассуждением в цикле вызова инструментов (рассуждение в
  истории диалога, `<think>` в сыром выводе), Qwen сегодня (вызовы в XML у Qwen3.5, маленькая Qwen
  на ноутбуке через Ollama или llama.cpp), `tool_choice` на разных движках и теговый формат Kimi K3.
- Исходное руководство и флаги развёртывания: MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md` и
  `docs/deploy_guidance.md`.
- Документация Qwen «Function Calling» (Qwen-Agent, transformers, Ollama, vLLM).
- Документация vLLM «Tool Calling»: все варианты `--tool-call-parser` и что каждый ожидает.
- Документация SGLang о парсерах вызовов — то же самое со стороны SGLang.
- В этом репозитории: `helpers/formats/` (оба парсера и их потоковые версии с линейной
  стоимостью) и `helpers/loop.py` (`run_tool_loop`, цикл со всеми исправлениями).
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

- **Where the answers come from.** Every answer of this lesson comes from
  `data/recordings/05_qwen_comparison.json`, which `python -m helpers.replay synthesize` wrote from
  the documented Qwen2.5 format and the behaviour of vLLM's `hermes` parser (engine profiles
  `vllm_hermes`, `completions` and `no_parser`); no real server was called.
- **The call ids.** vLLM invented `chatcmpl-tool-` ids with 32 hex digits until vLLM PR #29375
  (merged 2025-11-25) cut them to 16. The cassettes keep the older 32-digit form.
- **The Qwen template.** `data/templates/qwen2_5.jinja` is the chat template of
  Qwen/Qwen2.5-7B-Instruct, copied byte for byte from the llama.cpp files inside the PyPI source
  distribution of llama-cpp-python 0.3.36 (llama.cpp commit 0c1e5709), under Apache-2.0
  (`data/templates/LICENSE-Apache-2.0.txt`). Where Kimi-K2's template comes from is in lesson 04's
  reference.
- **The offline tokenizers** are built by `scripts/build_tokenizers.py`: a small vocabulary of the
  course's own sentences plus the format markers at their real ids (`<tool_call>` is 151657).
- **The temperature example** of step 4 (the two tools, the system message with its date, the
  question) follows Qwen's "Function Calling" documentation.

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Откуда ответы.** Все ответы этого урока берутся из `data/recordings/05_qwen_comparison.json`,
  который команда `python -m helpers.replay synthesize` написала по документированному формату
  Qwen2.5 и поведению парсера `hermes` из vLLM (профили движков `vllm_hermes`, `completions` и
  `no_parser`); настоящий сервер не вызывался.
- **Id вызовов.** vLLM придумывал id `chatcmpl-tool-` с 32 шестнадцатеричными цифрами, пока PR vLLM
  #29375 (принят 2025-11-25) не сократил их до 16. Кассеты сохраняют прежний вид с 32 цифрами.
- **Шаблон Qwen.** `data/templates/qwen2_5.jinja` — шаблон чата Qwen/Qwen2.5-7B-Instruct,
  скопированный байт в байт из файлов llama.cpp в исходном дистрибутиве llama-cpp-python 0.3.36 на
  PyPI (коммит llama.cpp 0c1e5709), под лицензией Apache-2.0
  (`data/templates/LICENSE-Apache-2.0.txt`). Откуда взят шаблон Kimi-K2, сказано в справке урока 04.
- **Офлайн-токенизаторы** собирает `scripts/build_tokenizers.py`: маленький словарь из фраз самого
  курса плюс маркеры формата с настоящими id (`<tool_call>` — 151657).
- **Пример с температурой** из шага 4 (два инструмента, системное сообщение с датой, вопрос) взят
  из документации Qwen «Function Calling».

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Parse Hermes calls by hand

Write `hermes_calls(text)` returning a list of `(name, arguments)` pairs, `arguments` as a dict, for
every `<tool_call>...</tool_call>` block in `text`. The check uses one call, a sentence followed by
two calls, and text with no calls at all. (`re.findall` and `json.loads` are enough.)
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Разберите вызовы Hermes вручную

Напишите `hermes_calls(text)`, которая возвращает список пар `(name, arguments)`, где `arguments` —
словарь, для каждого блока `<tool_call>...</tool_call>` в `text`. Проверка подаёт один вызов,
фразу и два вызова после неё и текст совсем без вызовов. (Хватит `re.findall` и `json.loads`.)
""",
    ),
    code(
        '''
from helpers.exercises.n05 import check_hermes_calls, check_unparsed


def hermes_calls(text):
    # your code here
    return []
''',
        ru={'# your code here': '# ваш код здесь'},
    ),
    code(
        '''
check_hermes_calls(hermes_calls)
''',
    ),
    code(
        '''
import re


def hermes_calls(text):
    calls = []
    for block in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL):
        call = json.loads(block)
        calls.append((call["name"], call["arguments"]))
    return calls


check_hermes_calls(hermes_calls)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. Notice calls the server did not parse

Write `has_unparsed_calls(message)` that takes an assistant message dict (`content`, maybe
`tool_calls`) and returns `True` when `content` holds tool-call markup of either format while
`tool_calls` is empty or missing, and `False` otherwise (a real `bool`). That is the symptom of a
server that does not parse the calls (a missing or wrong `--tool-call-parser`); a loop can then raise
a clear error instead of showing markers to the user.
""",
        """
### Упражнение 2. Заметьте вызовы, которые сервер не разобрал

Напишите `has_unparsed_calls(message)`: она принимает словарь сообщения ассистента (`content` и,
возможно, `tool_calls`) и возвращает `True`, если в `content` есть разметка вызова любого из двух
форматов, а `tool_calls` пуст или отсутствует, и `False` в остальных случаях (именно `bool`). Это
признак сервера, который не разбирает вызовы (не указан или указан не тот `--tool-call-parser`);
тогда цикл может выдать понятную ошибку, а не показывать пользователю маркеры.
""",
    ),
    code(
        '''
def has_unparsed_calls(message):
    # your code here
    return False
''',
        ru={'# your code here': '# ваш код здесь'},
    ),
    code(
        '''
check_unparsed(has_unparsed_calls)
''',
    ),
    code(
        '''
def has_unparsed_calls(message):
    content = message.get("content") or ""
    markup = "<|tool_call_begin|>" in content or "<tool_call>" in content
    return markup and not message.get("tool_calls")


check_unparsed(has_unparsed_calls)
''',
        hidden=True,
    ),
    md(
        """
[Next: 06 Thinking models and tool calls](06_thinking_models.ipynb)
""",
        """
[Дальше: 06 Модели с рассуждением и вызов инструментов](06_thinking_models.ipynb)
""",
    ),
])
