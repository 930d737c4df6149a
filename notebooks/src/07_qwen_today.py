"""Lesson 07: Qwen then and now: Hermes JSON vs XML calls, typed values, thinking, laptop servers."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Qwen then and now", "ru": "Qwen тогда и сейчас"},
    "summary": {
        "en": "Qwen3's thinking and Qwen3.5's XML calls, typed values, Ollama and llama.cpp on a laptop",
        "ru": "рассуждения Qwen3 и вызовы в XML у Qwen3.5, типы значений, Ollama и llama.cpp на ноутбуке",
    },
    "minutes_reading": (41, 60),
    "minutes_exercises": (24, 45),
    "timed": False,
    "in_class_path": False,
    "engines": ("qwen",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_xml_calls", "check_typed", "check_split_think"),
}

LESSON = Lesson("07_qwen_today", [
    md(
        """
# Qwen then and now

**Goal:** see how tool calls changed between Qwen2.5 and today's Qwen3.5, handle both formats and
the reasoning of thinking models, and know what a small Qwen on your own laptop sends back.
""",
        """
# Qwen тогда и сейчас

**Цель:** увидеть, как изменились вызовы инструментов от Qwen2.5 до нынешнего Qwen3.5, научиться
разбирать оба формата и то, что пишут модели с рассуждением (thinking models), и понять, что
присылает маленькая Qwen, запущенная на вашем ноутбуке.
""",
    ),
    md(
        """
## What you will build

- one call written by the chat templates of Qwen3, which keeps Hermes JSON, and Qwen3.5, which
  writes **XML**;
- both raw formats read by their parsers, and the XML values typed by the tool's JSON schema, as
  vLLM's `qwen3_coder` parser does;
- the arguments trap of lesson 05 next to its new form: Qwen3.5 refuses arguments given as text;
- the `<think>` block in raw text, the `reasoning` field over the API, and `enable_thinking`;
- the same loop against two servers, and the streams of Ollama and llama.cpp side by side;
- the Kimi-K2 vs Qwen table of lesson 05 with the new columns.
""",
        """
## Что вы сделаете

- увидите, как один и тот же вызов записывают шаблоны чата (chat template) Qwen3, которая
  сохраняет JSON в стиле Hermes, и Qwen3.5, которая пишет **XML**;
- разберёте оба формата сырого вывода модели (raw output) их парсерами и приведёте значения из XML
  к типам из JSON-схемы инструмента — так, как это делает парсер `qwen3_coder` в vLLM;
- сравните ловушку с аргументами из урока 05 с её новой формой: Qwen3.5 не принимает аргументы в
  виде текста;
- найдёте блок `<think>` в сыром тексте, поле `reasoning` в ответе API и переключатель
  `enable_thinking`;
- запустите один и тот же цикл на двух серверах и сравните потоки Ollama и llama.cpp;
- дополните таблицу «Kimi-K2 и Qwen» из урока 05 новыми столбцами.
""",
    ),
    md(
        """
## Setup

The main model of this lesson is `Qwen/Qwen3.5-4B` behind vLLM with
`--tool-call-parser qwen3_coder --reasoning-parser qwen3`. In replay mode the vLLM and Ollama
answers come from cassettes **synthesized** from their documented formats, not captured from real
servers; the llama.cpp answers of section 8 are **captured** from a real `llama-server` running a
tiny model whose weights are set by hand (steered, not trained) to write this lesson's reasoning
and calls. The offline
tokenizers `qwen3` and `qwen3.5` carry the official chat templates of `Qwen/Qwen3-0.6B` and
`Qwen/Qwen3.5-4B` (copies kept in the repo), so the renders below are the real ones; only the ids
of ordinary words differ from the real tokenizer's. With `LLM_MODE=live` and the `QWEN_*` variables (for example a local
Ollama, see section 8) the cells that talk to a model use your server.
""",
        """
## Подготовка

Главная модель урока — `Qwen/Qwen3.5-4B`, запущенная в vLLM с флагами
`--tool-call-parser qwen3_coder --reasoning-parser qwen3`. В режиме воспроизведения (replay)
ответы vLLM и Ollama берутся из кассет (cassettes), **синтезированных** по документированным
форматам этих серверов, а не записанных с настоящих серверов; ответы llama.cpp в разделе 8
**записаны** с настоящего `llama-server`, на котором работает крошечная модель: её веса не обучены,
а выставлены вручную (steered), так что она пишет ровно те рассуждения и вызовы, которые нужны
уроку. Офлайн-токенизаторы (tokenizer) `qwen3` и
`qwen3.5` содержат официальные шаблоны чата `Qwen/Qwen3-0.6B` и `Qwen/Qwen3.5-4B` (копии хранятся в
репозитории), поэтому показанные ниже промпты — настоящие; от настоящего токенизатора отличаются
только номера обычных слов. С `LLM_MODE=live` и переменными `QWEN_*` (например, для локального Ollama, см.
раздел 8) ячейки, которые обращаются к модели, работают с вашим сервером.
""",
    ),
    code(
        '''
import json

from openai import OpenAI

from helpers import (
    ToolCallAccumulator, ToolRegistry, connect, load_tokenizer, parse_hermes, parse_qwen_xml,
    run_tool_loop, set_language,
)
from helpers.display import compare_table, show_chunks, show_tool_calls
from helpers.formats import convert_parameter, render_hermes_tool_calls, render_qwen_xml_tool_calls
from helpers.replay.captures import provenance
from helpers.templates import decode_tool_arguments

set_language("en")  # the language of the helpers' messages
conn = connect("qwen", engine="vllm_qwen3_coder")  # Qwen3.5 behind vLLM's qwen3_coder parser
qwen25_conn = connect("qwen")  # Qwen2.5 behind vLLM's hermes parser, for comparison
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
''',
        ru={"# Qwen3.5 behind vLLM's qwen3_coder parser": "# Qwen3.5 в vLLM с парсером qwen3_coder",
            "# Qwen2.5 behind vLLM's hermes parser, for comparison":
            "# Qwen2.5 в vLLM с парсером hermes, для сравнения"},
    ),
    md(
        """
## 1. A tool with typed parameters

Give every parameter a type in its JSON schema: in Qwen3.5's XML calls every value is text, and
only the schema's type turns `"3"` back into `3`. Here is a forecast tool with an integer and a
boolean parameter.
""",
        """
## 1. Инструмент с типизированными параметрами

Задайте каждому параметру тип в его JSON-схеме: в XML-вызовах Qwen3.5 каждое значение — текст, и
только тип из схемы превращает `"3"` обратно в `3`. Вот инструмент прогноза погоды с целым и
логическим параметрами.
""",
    ),
    code(
        '''
FORECAST = {"Paris": ["Sunny", "Cloudy", "Light rain"], "Oslo": ["Snow", "Snow", "Cloudy"]}


def get_forecast(city: str, days: int = 1, hourly: bool = False) -> dict:
    """Look the forecast up in a fixed table (a stub for a real weather API)."""
    outlook = FORECAST.get(city, ["unknown"] * 3)[: max(1, min(days, 3))]
    return {"city": city, "days": outlook, "hourly": hourly}
''',
        ru={
        '"""Look the forecast up in a fixed table (a stub for a real weather API)."""': '"""Найти прогноз в фиксированной таблице (заглушка вместо настоящего API погоды)."""',
        },
    ),
    code(
        '''
tools = [{
    "type": "function",
    "function": {
        "name": "get_forecast",
        "description": "Get the weather forecast for a city.",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "description": "Number of days, 1 to 3"},
                "hourly": {"type": "boolean", "description": "Hour-by-hour detail"},
            },
        },
    },
}]
''',
    ),
    code(
        '''
registry = ToolRegistry()
_ = registry.register(get_forecast, schema=tools[0])
''',
    ),
    md(
        """
## 2. One call, two templates

Before you parse, check which template your Qwen uses: Qwen3 writes calls as Hermes-style JSON,
Qwen3.5 and later as XML. A short conversation: the question, the assistant's call (arguments as
a dict), the tool's result. Qwen3 (both of its releases) keeps Qwen2.5's Hermes format; Qwen3.5, 3.6 and 3.8 write calls the
way Qwen3-Coder does.
""",
        """
## 2. Один вызов, два шаблона

Прежде чем разбирать вывод, узнайте, какой шаблон у вашей Qwen: Qwen3 пишет вызовы в JSON в стиле
Hermes, Qwen3.5 и новее — в XML. Короткий диалог: вопрос, вызов от ассистента (аргументы —
словарь), результат инструмента. Qwen3 (оба её выпуска) сохраняет формат Hermes из Qwen2.5, а Qwen3.5, 3.6 и 3.8 записывают
вызовы так же, как Qwen3-Coder.
""",
    ),
    code(
        '''
conversation = [
    {"role": "user", "content": "What's the 3-day forecast for Paris, hour by hour?"},
    {"role": "assistant", "content": "", "tool_calls": [{
        "id": "call_0", "type": "function",
        "function": {"name": "get_forecast", "arguments": {"city": "Paris", "days": 3, "hourly": True}},
    }]},
    {"role": "tool", "tool_call_id": "call_0", "content": json.dumps(get_forecast("Paris", 3, True))},
]
qwen3 = load_tokenizer("qwen3")  # the course's offline tokenizers
qwen35 = load_tokenizer("qwen3.5")


def from_assistant(tokenizer, messages):
    """The render of `messages` from the last assistant turn on."""
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    return text[text.rindex("<|im_start|>assistant"):]


print(from_assistant(qwen3, conversation))
''',
        ru={"# the course's offline tokenizers": "# офлайн-токенизаторы курса",
        '"""The render of `messages` from the last assistant turn on."""': '"""Промпт из `messages`, начиная с последнего хода ассистента."""',
        },
    ),
    code(
        '''
print(from_assistant(qwen35, conversation))
''',
    ),
    md(
        """
The result goes back the same way in both, as `<tool_response>` inside a user turn. The call does
not: Qwen3 writes one JSON object, Qwen3.5 writes a `<function=...>` element with one
`<parameter=...>` element per argument, each value on its own lines **as plain text**, written with
Jinja's `string` filter: the boolean comes out as Python's `True`, not JSON's `true`. Qwen3.5 also
puts an empty `<think>` block into every assistant turn after the last user message, even when
there was no reasoning. The prompt changed too: Qwen3.5 puts the tools block first and your system
message after it, Qwen3 the other way round.
""",
        """
Результат в обоих случаях возвращается одинаково — как `<tool_response>` внутри реплики
пользователя. А вот вызов записан по-разному: Qwen3 пишет один JSON-объект, а Qwen3.5 — элемент
`<function=...>`, в котором на каждый аргумент свой элемент `<parameter=...>`, и каждое значение
стоит на отдельных строках **обычным текстом**, записанным через фильтр Jinja `string`: логическое
значение выходит как `True` из Python, а не `true` из JSON. Кроме того, Qwen3.5 вставляет пустой
блок `<think>` в каждую реплику ассистента после последнего сообщения пользователя, даже если
рассуждения не было. Изменился и промпт: Qwen3.5 ставит блок с инструментами первым, а ваше
системное сообщение — после него; у Qwen3 наоборот.
""",
    ),
    code(
        '''
with_system = [{"role": "system", "content": "Answer in one sentence."}, *conversation]
for name, tokenizer in [("Qwen3", qwen3), ("Qwen3.5", qwen35)]:
    text = tokenizer.apply_chat_template(with_system, tools=tools, tokenize=False)
    first = "system message" if text.index("Answer in one") < text.index("# Tools") else "tools"
    print(f"{name}: {first} first")
''',
        ru={'"system message"': '"системное сообщение"', '"tools"': '"инструменты"',
            'f"{name}: {first} first"': 'f"{name}: сначала {first}"'},
    ),
    md(
        """
## 3. Raw text and two parsers

Parse raw Qwen text with the parser of its format: `parse_hermes` for Qwen3's JSON,
`parse_qwen_xml` for Qwen3.5's XML. Neither format carries a call id, so both parsers invent
`call_0`, `call_1`, ...; a server invents its own. Below, what each model generates for the same
call (the `render_*` functions write the templates' format), and what the parsers make of it.
""",
        """
## 3. Сырой текст и два парсера

Разбирайте сырой текст Qwen парсером (parser) его формата: `parse_hermes` — JSON у Qwen3,
`parse_qwen_xml` — XML у Qwen3.5. Ни в одном формате нет идентификатора вызова, поэтому оба
парсера придумывают `call_0`, `call_1`, ...; сервер придумывает свои. Ниже — что каждая модель
генерирует для одного и того же вызова (функции `render_*` пишут в формате шаблонов) и что из
этого делают парсеры.
""",
    ),
    code(
        r'''
tool_calls = [{"id": "call_0", "type": "function", "function": {
    "name": "get_forecast", "arguments": '{"city": "Paris", "days": 3, "hourly": true}'}}]
raw = {
    "Qwen3": render_hermes_tool_calls(tool_calls),
    "Qwen3.5": render_qwen_xml_tool_calls(tool_calls),
}
for name, text in raw.items():
    print(f"--- {name}\n{text}")
''',
    ),
    code(
        '''
show_tool_calls(parse_hermes(raw["Qwen3"]).tool_calls)
show_tool_calls(parse_qwen_xml(raw["Qwen3.5"]).tool_calls)
''',
    ),
    md(
        """
The XML shows the boolean as the template writes it, `True`. Look at the second table: `"3"` and
`"True"` are **strings**. The XML text has no types, and without the tool list the parser cannot
know that `days` is an integer. `get_forecast` would get `days="3"`, and `days + 1` would fail.

## 4. Typed parameters

Always pass the tools to `parse_qwen_xml(text, tools)`: like vLLM's `qwen3_coder` parser, it
converts each value to the type its parameter has in the tool schema. Here it is on the same
text:
""",
        """
Логическое значение в XML записано так, как его пишет шаблон: `True`. Посмотрите на вторую
таблицу: `"3"` и `"True"` — это **строки**. В тексте XML нет типов, и без списка инструментов
парсер не может знать, что `days` — целое число. Функция `get_forecast` получила бы `days="3"`,
и `days + 1` упало бы с ошибкой.

## 4. Типизированные параметры

Всегда передавайте инструменты в `parse_qwen_xml(text, tools)`: как и парсер `qwen3_coder` в
vLLM, она приводит каждое значение к типу его параметра в схеме инструмента. Вот она на том же
тексте:
""",
    ),
    code(
        '''
typed = parse_qwen_xml(raw["Qwen3.5"], tools)
show_tool_calls(typed.tool_calls)
assert json.loads(typed.tool_calls[0]["function"]["arguments"]) == {
    "city": "Paris", "days": 3, "hourly": True}
''',
    ),
    md(
        """
The rules, one value at a time (`convert_parameter` is the function both parsers use). Some are
surprising: a whole `number` becomes an integer, any boolean other than `true` (in any case)
becomes `false`, `"null"` stays text for a `string` parameter (it is null for the other types), and
objects written as Python literals (single quotes, `None`) are read with `ast.literal_eval`, which
accepts literals only and never runs code. A value that does not convert stays a string.
""",
        """
Вот как правила действуют на отдельные значения (`convert_parameter` — функция, которой
пользуются оба парсера).
Некоторые из них неожиданны: целое значение типа `number` становится целым числом, любое логическое
значение, кроме `true` (в любом регистре), становится `false`, `"null"` у параметра типа `string`
остаётся текстом (у остальных типов это null), а объекты в записи Python (одинарные кавычки, `None`)
читаются через `ast.literal_eval`, который принимает только литералы и никогда не выполняет код.
Значение, которое не удалось преобразовать, остаётся строкой.
""",
    ),
    code(
        '''
samples = [("3", "integer"), ("three", "integer"), ("2.0", "number"), ("2.5", "number"),
           ("True", "boolean"), ("yes", "boolean"), ("null", "string"), ("[6, 12]", "array"),
           ("{'wind': None}", "object")]
rows = []
for text, kind in samples:
    value, _ = convert_parameter(text, "x", {"x": {"type": kind}})
    rows.append((repr(text), kind, json.dumps(value)))
compare_table(rows, ("text in the XML", "schema type", "JSON value"))
''',
        ru={'"text in the XML", "schema type", "JSON value"':
            '"текст в XML", "тип в схеме", "значение JSON"'},
    ),
    md(
        """
## 5. Arguments as text: encoded twice, or refused

Before you apply Qwen3.5's template to a history, decode every call's `arguments` into a dict
(`decode_tool_arguments`): OpenAI-style `arguments` are a JSON **string**, which Qwen2.5's
template encodes a second time (lesson 05) and Qwen3.5's refuses. Qwen3 inserts a string as it
is. Qwen3.5 iterates over the arguments, so it needs a **mapping** (a dict), and a string stops
the render:
""",
        """
## 5. Аргументы строкой: закодированы дважды или отвергнуты

Прежде чем применить шаблон Qwen3.5 к истории, разберите `arguments` каждого вызова в словарь
(`decode_tool_arguments`): в формате OpenAI `arguments` — это JSON-**строка**, которую шаблон
Qwen2.5 кодирует второй раз (урок 05), а шаблон Qwen3.5 не принимает. Qwen3 вставляет строку как
есть. Qwen3.5 перебирает аргументы по одному, поэтому ей нужен **словарь** (mapping), а на строке
шаблон выдаёт ошибку:
""",
    ),
    code(
        '''
history = [conversation[0], {"role": "assistant", "content": "", "tool_calls": tool_calls}]
qwen25 = load_tokenizer("qwen2.5")
for name, tokenizer in [("Qwen2.5", qwen25), ("Qwen3", qwen3)]:
    text = tokenizer.apply_chat_template(history, tools=tools, tokenize=False)
    print(name, text[text.rindex("<tool_call>"):text.rindex("</tool_call>")])
''',
    ),
    code(
        '''
qwen35.apply_chat_template(history, tools=tools, tokenize=False)
''',
        tags=("raises-exception",),
    ),
    md(
        """
The error says only that a string is not a mapping. The fix: decode the arguments first, as vLLM
does before it applies a template.
""",
        """
Ошибка говорит лишь, что строка — не словарь. Исправление: сначала разберите аргументы из JSON,
как vLLM делает перед применением шаблона.
""",
    ),
    code(
        '''
text = qwen35.apply_chat_template(decode_tool_arguments(history), tools=tools, tokenize=False)
print(text[text.rindex("<tool_call>"):])
''',
    ),
    md(
        """
## 6. Thinking: `<think>` in the text, `reasoning` in the API

Split the reasoning off before you read the answer: in raw text it is the block that ends with
`</think>`, over the API it is the server's reasoning field. Qwen3 (the first, hybrid release) and
Qwen3.5 think by default: before answering they write their reasoning between `<think>` and
`</think>` (a later Qwen3 release split this in two: its Instruct model never thinks, its Thinking
model always does). Qwen3 writes the whole block; our parsers split it off into
`ParseResult.reasoning`:
""",
        """
## 6. Рассуждение: `<think>` в тексте, `reasoning` в API

Отделяйте рассуждение (reasoning), прежде чем читать ответ: в сыром тексте это блок, который
кончается на `</think>`, в ответе API — отдельное поле сервера. Qwen3 (первый, гибридный выпуск) и
Qwen3.5 по умолчанию рассуждают: прежде чем ответить, они записывают своё рассуждение между
`<think>` и `</think>` (в более позднем выпуске Qwen3 это разделили: модель Instruct не рассуждает
никогда, модель Thinking — всегда). Qwen3 пишет блок целиком; наши парсеры отделяют его в
`ParseResult.reasoning`:
""",
    ),
    code(
        r'''
qwen3_output = "<think>\nThree days for Paris, hour by hour.\n</think>\n\n" + raw["Qwen3"]
parsed = parse_hermes(qwen3_output)
print("reasoning:", repr(parsed.reasoning))
print("content:  ", repr(parsed.content))
show_tool_calls(parsed.tool_calls)
''',
    ),
    md(
        """
Qwen3.5's template opens the block itself: the generation prompt ends with `<think>\\n`, so the
model's output starts inside the reasoning and shows only `</think>`. With `enable_thinking=False`
the template writes an empty block instead, and the model answers at once (Qwen3's template does the
same for `enable_thinking=False`).
""",
        """
Шаблон Qwen3.5 открывает блок сам: промпт для генерации заканчивается на `<think>\\n`, поэтому
вывод модели начинается прямо внутри рассуждения, и в нём виден только `</think>`. С
`enable_thinking=False` шаблон вместо этого вставляет пустой блок, и модель отвечает сразу
(шаблон Qwen3 при `enable_thinking=False` делает то же самое).
""",
    ),
    code(
        '''
question = conversation[:1]
for thinking in (True, False):
    prompt = qwen35.apply_chat_template(
        question, tools=tools, tokenize=False, add_generation_prompt=True, enable_thinking=thinking
    )
    print(f"enable_thinking={thinking}: the prompt ends with {prompt[prompt.rindex('assistant'):]!r}")
''',
        ru={"the prompt ends with": "промпт заканчивается на"},
    ),
    code(
        r'''
qwen35_output = "Three days for Paris, hour by hour.\n</think>\n\n" + raw["Qwen3.5"]
parsed = parse_qwen_xml(qwen35_output, tools)  # a lone </think>: the prompt opened the block
print("reasoning:", repr(parsed.reasoning))
show_tool_calls(parsed.tool_calls)
''',
        ru={"# a lone </think>: the prompt opened the block":
            "# одинокий </think>: блок открыл промпт"},
    ),
    md(
        """
A server does the same with its reasoning parser (`--reasoning-parser qwen3`) and returns the
reasoning in a separate field. Its name depends on the server: current vLLM says `reasoning`
(older releases `reasoning_content`; the [reference](#reference) has the history), llama.cpp says
`reasoning_content`, Ollama `reasoning`. The OpenAI SDK does not declare these fields, so read
them with `getattr`:
""",
        """
Сервер делает то же самое своим парсером рассуждений (`--reasoning-parser qwen3`) и возвращает
рассуждение в отдельном поле. Его название зависит от сервера: нынешний vLLM пишет `reasoning`
(старые выпуски — `reasoning_content`; история — в [справке](#reference)), llama.cpp —
`reasoning_content`, Ollama — `reasoning`. В типах OpenAI SDK этих полей нет, поэтому читайте их
через `getattr`:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the 3-day forecast for Paris, hour by hour?"}]
completion = client.chat.completions.create(model=model_name, messages=messages, tools=tools)
message = completion.choices[0].message
print("reasoning:", getattr(message, "reasoning", None))
print("content:", message.content)
show_tool_calls(message.tool_calls)
''',
    ),
    md(
        """
## 7. The same loop on two servers

Qwen2.5 behind the `hermes` parser and Qwen3.5 behind `qwen3_coder`: the model writes different
text, the server parses it, and the client code does not change at all.
""",
        """
## 7. Один цикл на двух серверах

Qwen2.5 с парсером `hermes` и Qwen3.5 с `qwen3_coder`: модели пишут разный текст, сервер его
разбирает, а клиентский код не меняется совсем.
""",
    ),
    code(
        r'''
servers = {"Qwen2.5 (hermes)": qwen25_conn, "Qwen3.5 (qwen3_coder)": conn}
for name, server in servers.items():
    server_client = OpenAI(
        base_url=server.endpoint, api_key=server.api_key, http_client=server.http_client()
    )
    messages = [{"role": "user", "content": "What's the 3-day forecast for Paris, hour by hour?"}]
    answer = run_tool_loop(server_client, messages, registry, model=server.model_name)
    arguments = messages[1]["tool_calls"][0]["function"]["arguments"]
    print(f"{name}: get_forecast({arguments})\n  -> {answer['content']}")
''',
    ),
    md(
        """
The same call with the same typed arguments, because each server parsed its model's format.

## 8. What a laptop endpoint sends

On a laptop, serve a small Qwen with Ollama or llama.cpp (no GPU needed), raise Ollama's context
to 16k tokens, and never rely on the shape of ids or chunks. Both servers give it an
OpenAI-compatible API:

```bash
# Ollama: downloads the model and serves it
ollama run qwen3:0.6b
export LLM_MODE=live QWEN_BASE_URL=http://localhost:11434/v1 QWEN_API_KEY=ollama QWEN_MODEL=qwen3:0.6b

# llama.cpp: the model's chat template (--jinja) and the reasoning field are on by default
llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 -c 16384
export LLM_MODE=live QWEN_BASE_URL=http://localhost:8080/v1 QWEN_API_KEY=none QWEN_MODEL=<id from /v1/models>
```

Ollama's context is 4096 tokens by default on machines without a big GPU, so a long tool list or
history is cut silently and the tools seem ignored: start it with
`OLLAMA_CONTEXT_LENGTH=16384 ollama serve`. Current llama.cpp builds use the model's chat template
(`--jinja`) and put reasoning into `reasoning_content` without being asked; started with
`--no-jinja`, the server answers any request that carries `tools` with HTTP 500
`tools param requires --jinja flag`. (Where the model names above come from: the
[reference](#reference).)

The same two-city question, streamed from each (where each stream comes from: the
[reference](#reference)):
""",
        """
Один и тот же вызов с одинаковыми типизированными аргументами: каждый сервер разобрал формат своей
модели.

## 8. Что присылает сервер на ноутбуке

Самая дешёвая настоящая Qwen — маленькая модель на вашем компьютере, видеокарта не нужна. Два
популярных сервера предоставляют для неё OpenAI-совместимый API:

```bash
# Ollama: скачивает модель и запускает её
ollama run qwen3:0.6b
export LLM_MODE=live QWEN_BASE_URL=http://localhost:11434/v1 QWEN_API_KEY=ollama QWEN_MODEL=qwen3:0.6b

# llama.cpp: шаблон чата модели (--jinja) и поле рассуждения включены по умолчанию
llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 -c 16384
export LLM_MODE=live QWEN_BASE_URL=http://localhost:8080/v1 QWEN_API_KEY=none QWEN_MODEL=<id from /v1/models>
```

У Ollama на машинах без мощной видеокарты контекст по умолчанию — 4096 токенов, поэтому длинный
список инструментов или история обрезаются без предупреждения, и кажется, что модель игнорирует
инструменты: запускайте `OLLAMA_CONTEXT_LENGTH=16384 ollama serve`. Современные сборки llama.cpp
сами включают шаблон чата модели (`--jinja`) и выносят рассуждение в поле `reasoning_content`;
если запустить сервер с `--no-jinja`, любой запрос с `tools` получит HTTP 500
`tools param requires --jinja flag`. (Откуда взяты имена моделей выше — в [справке](#reference).)

Тот же вопрос про два города в потоковой выдаче (streaming) от каждого сервера (откуда взят каждый
поток — в [справке](#reference)):
""",
    ),
    code(
        '''
if conn.replay_only("ollama and llamacpp are recorded engine profiles"):
    question = [{"role": "user", "content": "Compare tomorrow's forecast for Paris and Oslo."}]
    for engine in ("ollama", "llamacpp"):
        laptop = connect("qwen", engine=engine)
        laptop_client = OpenAI(
            base_url=laptop.endpoint, api_key=laptop.api_key, http_client=laptop.http_client()
        )
        stream = laptop_client.chat.completions.create(
            model=laptop.model_name, messages=question, tools=tools, stream=True
        )
        print(f"--- {engine} ({laptop.model_name}): {provenance(engine)}")
        show_chunks(list(stream))
''',
        ru={'"ollama and llamacpp are recorded engine profiles"':
            '"профили ollama и llamacpp есть только в кассетах"'},
    ),
    md(
        """
Read the two streams line by line:

- **ids**: Ollama `call_` + 8 characters, llama.cpp 32 letters and digits, vLLM `chatcmpl-tool-`
  + 16 hex digits in a whole answer but `call_` + 24 hex when its `qwen3_coder` parser streams:
  never rely on an id's shape;
- llama.cpp's first chunk is `{"role": "assistant", "content": null}` (line 0 shows no
  `content`), and every chunk names the build in `system_fingerprint`;
- **reasoning** arrives first, under `reasoning` (Ollama) or `reasoning_content` (llama.cpp);
- Ollama sends **each call whole in one chunk**, arguments complete ([reference](#reference));
  llama.cpp's first chunk of a call carries its index, id, name **and**
  the first piece of the arguments (`{`), and small fragments follow. Accumulating by `index`
  (lesson 03) handles both;
- the last chunk has an empty `delta` and `finish_reason: "tool_calls"` (llama.cpp adds its
  `timings`);
- llama.cpp made **both** calls without being asked: it takes the default of
  `parallel_tool_calls` from the chat template, and Qwen3's template allows several calls. On the
  same server, even `parallel_tool_calls: false` still brought two calls in Qwen3's JSON format
  (with Qwen3.5's XML format, `false` did limit the reply to one call). Sent explicitly, `true`
  changes nothing here:
""",
        """
Прочитайте оба потока строка за строкой:

- **id**: у Ollama — `call_` и 8 символов, у llama.cpp — 32 буквы и цифры, у vLLM —
  `chatcmpl-tool-` и 16 шестнадцатеричных цифр в цельном ответе, но `call_` и 24 шестнадцатеричные
  цифры, когда его парсер `qwen3_coder` отдаёт поток: никогда не полагайтесь на вид id;
- первый фрагмент llama.cpp — `{"role": "assistant", "content": null}` (в строке 0 нет
  `content`), и в каждом фрагменте поле `system_fingerprint` называет сборку сервера;
- **рассуждение** приходит первым, в поле `reasoning` (Ollama) или `reasoning_content` (llama.cpp);
- Ollama присылает **каждый вызов целиком в одном фрагменте** (chunk), с полными аргументами
  ([справка](#reference)); у llama.cpp первый фрагмент
  вызова содержит его index, id, имя **и** первый кусок аргументов (`{`), а за ним идут мелкие части.
  Склейка по `index` (урок 03) справляется с обоими вариантами;
- у последнего фрагмента пустая `delta` и `finish_reason: "tool_calls"` (llama.cpp добавляет ещё
  свои `timings`);
- llama.cpp сделал **оба** вызова без всякой просьбы: значение `parallel_tool_calls` по умолчанию
  он берёт из шаблона чата, а шаблон Qwen3 разрешает несколько вызовов. На том же сервере даже
  `parallel_tool_calls: false` не помешал второму вызову в JSON-формате Qwen3 (с XML-форматом
  Qwen3.5 значение `false` действительно оставило один вызов). Явное `true` здесь ничего не
  меняет:
""",
    ),
    code(
        '''
if conn.replay_only("llamacpp is a recorded engine profile"):
    laptop = connect("qwen", engine="llamacpp")
    laptop_client = OpenAI(
        base_url=laptop.endpoint, api_key=laptop.api_key, http_client=laptop.http_client()
    )
    stream = laptop_client.chat.completions.create(
        model=laptop.model_name, messages=question, tools=tools, stream=True,
        parallel_tool_calls=True,
    )
    accumulator = ToolCallAccumulator()
    for chunk in stream:
        accumulator.add(chunk)
    print(provenance("llamacpp"))
    show_tool_calls(accumulator.tool_calls)
''',
        ru={'"llamacpp is a recorded engine profile"':
            '"профиль llamacpp есть только в кассетах"'},
    ),
    md(
        """
Ollama's OpenAI-compatible endpoint does not support `tool_choice`, so the requests above leave it
out.

## 9. Kimi-K2 and Qwen, then and now

Pick the parser by model, not by family: Kimi-K2 → `kimi_k2`, Qwen2.5 and Qwen3 → `hermes`,
Qwen3.5 → `qwen3_coder`. Here is lesson 05's table with the new columns; the reasoning rows describe
vLLM, and the other servers' field names are in section 6.
""",
        """
OpenAI-совместимый адрес API (endpoint) Ollama не поддерживает `tool_choice`, поэтому запросы
выше его не передают.

## 9. Kimi-K2 и Qwen: тогда и сейчас

Выбирайте парсер по модели, а не по семейству: Kimi-K2 — `kimi_k2`, Qwen2.5 и Qwen3 — `hermes`,
Qwen3.5 — `qwen3_coder`. Вот таблица из урока 05 с новыми столбцами; строки о рассуждении описывают
vLLM, а как называются поля у других серверов, сказано в разделе 6.
""",
    ),
    code(
        r'''
compare_table(
    [
        ("call format", "marker tokens + JSON", "<tool_call> JSON", "<tool_call> JSON",
         "<tool_call> XML"),
        ("call id", "written by the model", "by the server", "by the server", "by the server"),
        ("vLLM tool parser", "kimi_k2", "hermes", "hermes", "qwen3_coder"),
        ("vLLM reasoning parser", "-", "-", "qwen3", "qwen3"),
        ("reasoning field", "-", "-", "reasoning", "reasoning"),
        ("thinking switch", "-", "-", "enable_thinking", "enable_thinking"),
        ("template prompt ends", "assistant turn", "assistant\\n", "assistant\\n",
         "assistant\\n<think>\\n"),
        ("string arguments", "-", "encoded twice", "kept as is", "refused"),
        ("our parser", "parse_kimi", "parse_hermes", "parse_hermes", "parse_qwen_xml"),
    ],
    ("", "Kimi-K2-Instruct", "Qwen2.5", "Qwen3", "Qwen3.5"),
)
''',
        ru={
            '"call format"': '"формат вызова"',
            '"marker tokens + JSON"': '"токены-маркеры + JSON"',
            '"call id"': '"id вызова"',
            '"written by the model"': '"пишет модель"',
            '"by the server", "by the server", "by the server"':
            '"придумывает сервер", "придумывает сервер", "придумывает сервер"',
            '"vLLM tool parser"': '"парсер вызовов vLLM"',
            '"vLLM reasoning parser"': '"парсер рассуждений vLLM"',
            '"reasoning field"': '"поле рассуждения"',
            '"thinking switch"': '"переключатель рассуждения"',
            '"template prompt ends"': '"конец промпта шаблона"',
            '"assistant turn"': '"реплика ассистента"',
            '"string arguments"': '"аргументы-строки"',
            '"encoded twice"': '"кодирует дважды"',
            '"kept as is"': '"оставляет как есть"',
            '"refused"': '"отвергает"',
            '"our parser"': '"наш парсер"',
        },
    ),
    md(
        """
Kimi's own thinking models have a reasoning field too (lesson 06); K2.6 can switch
thinking off, K2-Thinking cannot. Lessons 00-05 follow K2-Instruct, which does not think; live on
the platform they get `kimi-k2.6`, which does (lesson 00, section 3, says how they cope).

## Summary

- Qwen3 keeps the Hermes JSON format; Qwen3.5 and later write XML calls, served by vLLM with
  `--tool-call-parser qwen3_coder --reasoning-parser qwen3`.
- XML values are text: type them by the tool's schema (`parse_qwen_xml(text, tools)`), or `days`
  arrives as `"3"`.
- String arguments in the history: Qwen2.5 encodes them twice, Qwen3 keeps them, Qwen3.5 refuses
  them; `decode_tool_arguments` suits all three.
- Reasoning is a `<think>` block in raw text (Qwen3.5's prompt opens it) and a separate field over
  the API, named differently by each server.
- Laptop servers differ in ids, chunking and defaults (llama.cpp takes `parallel_tool_calls` from
  the chat template, Ollama cuts the context at 4k); the loop of lessons 02 and 03 works on all of
  them.
""",
        """
У моделей Kimi с рассуждением тоже есть поле для рассуждения (урок 06); K2.6 умеет
выключать рассуждение, K2-Thinking — нет. Уроки 00-05 разбирают K2-Instruct, которая не рассуждает;
в режиме live на платформе им отвечает `kimi-k2.6`, которая рассуждает (как уроки с этим
справляются, сказано в уроке 00, раздел 3).

## Итоги

- Qwen3 сохраняет формат JSON в стиле Hermes; Qwen3.5 и новее пишут вызовы в XML, и vLLM
  запускают с `--tool-call-parser qwen3_coder --reasoning-parser qwen3`.
- Значения в XML — это текст: приводите их к типам по схеме инструмента
  (`parse_qwen_xml(text, tools)`), иначе `days` придёт как `"3"`.
- Аргументы-строки в истории диалога: Qwen2.5 кодирует их дважды, Qwen3 оставляет как есть, Qwen3.5
  не принимает; `decode_tool_arguments` подходит для всех трёх.
- Рассуждение — это блок `<think>` в сыром тексте (у Qwen3.5 его открывает промпт) и отдельное
  поле в ответе API, которое каждый сервер называет по-своему.
- Серверы на ноутбуке различаются id, нарезкой на фрагменты и настройками по умолчанию
  (llama.cpp берёт `parallel_tool_calls` из шаблона чата, Ollama обрезает контекст до 4k); цикл из
  уроков 02 и 03 работает со всеми.
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

Sources, checked in 2026-12.

- **The reasoning field on vLLM**: renamed `reasoning`, with `reasoning_content` kept as an alias
  (vLLM PR #27752), the alias removed in PR #33402 (January 2026); users name releases from 0.16 to
  0.23 as the first without it, so check your server's answer rather than its version.
- **Model names for laptops**: the Ollama tags `qwen3:0.6b`, `qwen3:1.7b`, `qwen3:4b` are from
  Ollama's own library (Qwen's Ollama guide lists only `qwen2.5`); the GGUF repository
  `Qwen/Qwen3-1.7B-GGUF` follows Qwen's naming pattern and is unconfirmed.
- **The streams of step 8**: Ollama's is synthesized from its documented behaviour, and
  llama.cpp's is a capture from a real `llama-server` serving a one-layer model with Qwen's real vocabulary and
  Qwen3's chat template; its weights are set by hand, not trained, so it always writes the same
  reasoning and calls, and everything else (prompt, grammar, parsing, ids, chunks) is the server's
  own.
- **The llama.cpp captures**: `llama-server` built from the llama.cpp source that the
  `llama-cpp-python` 0.3.36 package vendors, serving one-layer models whose weights are set by hand
  (docs/real_engines.md says how they are made and rebuilt). Its default `--reasoning-format auto`
  does what `deepseek` does.
- **Qwen3's releases**: the first, hybrid Qwen3 (April 2025) and Qwen3-2507 (July 2025), which
  split Instruct and Thinking models.
- **vLLM's `qwen3_coder` ids**: `call_` + 24 hex when streaming is the legacy parser class's form;
  current vLLM routes `qwen3_coder` to an engine-based parser whose ids were not checked.
- **Ollama sends each call whole**: read from its parser code, unconfirmed on the wire.

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

Источники, проверено в декабре 2026 года.

- **Поле рассуждения в vLLM**: переименовано в `reasoning`, а `reasoning_content` оставлено как
  псевдоним (PR vLLM #27752); псевдоним удалён в PR #33402 (январь 2026 года); первым выпуском без
  него пользователи называют разные версии, от 0.16 до 0.23, так что проверяйте ответ своего
  сервера, а не его версию.
- **Имена моделей для ноутбука**: теги Ollama `qwen3:0.6b`, `qwen3:1.7b`, `qwen3:4b` взяты из
  библиотеки самой Ollama (руководство Qwen по Ollama перечисляет только `qwen2.5`); имя
  GGUF-репозитория `Qwen/Qwen3-1.7B-GGUF` построено по схеме имён Qwen и не подтверждено.
- **Потоки шага 8**: поток Ollama синтезирован по документированному поведению, а поток
  llama.cpp снят с настоящего `llama-server`, который обслуживает однослойную модель с настоящим словарём Qwen
  и шаблоном чата Qwen3; её веса не обучены, а выставлены вручную, так что она всегда пишет одни и
  те же рассуждение и вызовы, а всё остальное (промпт, грамматика, разбор, id, фрагменты потока) —
  работа самого сервера.
- **Кассеты llama.cpp**: `llama-server` собран из исходников llama.cpp, вложенных в пакет
  `llama-cpp-python` 0.3.36, и обслуживает однослойные модели с весами, выставленными вручную (как
  они сделаны и как их пересобрать, описано в docs/real_engines.md). Его значение по умолчанию
  `--reasoning-format auto` работает как `deepseek`.
- **Выпуски Qwen3**: первый, гибридный Qwen3 (апрель 2025 года) и Qwen3-2507 (июль 2025 года), в
  котором модели Instruct и Thinking разделены.
- **Id у `qwen3_coder` в vLLM**: `call_` и 24 шестнадцатеричные цифры в потоке — форма старого
  класса парсера; нынешний vLLM направляет `qwen3_coder` в парсер на стороне движка, чьи id не
  проверены.
- **Ollama присылает каждый вызов целиком**: так следует из кода её парсера, на реальном потоке не
  подтверждено.

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Read XML calls by hand

Write `xml_calls(text)` returning a list of `(name, parameters)` pairs, `parameters` a dict of
strings, for every `<function=NAME>...</function>` block in `text`. Each value sits between the
newline after `<parameter=KEY>` and the newline before `</parameter>`; keep the newlines inside it.
(`re.findall` with `re.DOTALL` is enough.)
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Разберите вызовы в XML вручную

Напишите `xml_calls(text)`, которая возвращает список пар `(name, parameters)`, где `parameters` —
словарь строк, для каждого блока `<function=NAME>...</function>` в `text`. Значение стоит между
переводом строки после `<parameter=KEY>` и переводом строки перед `</parameter>`; переводы строк
внутри значения сохраняйте. (Хватит `re.findall` с `re.DOTALL`.)
""",
    ),
    code(
        '''
from helpers.exercises.n07 import check_split_think, check_typed, check_xml_calls


def xml_calls(text):
    # your code here
    return []
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_xml_calls(xml_calls)
''',
    ),
    code(
        r'''
import re


def xml_calls(text):
    calls = []
    for name, body in re.findall(r"<function=(.*?)>(.*?)</function>", text, re.DOTALL):
        parameters = re.findall(r"<parameter=(.*?)>\n(.*?)\n</parameter>", body, re.DOTALL)
        calls.append((name, dict(parameters)))
    return calls


check_xml_calls(xml_calls)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. Type a value as vLLM does

Write `typed(value, kind)` for the simple schema types: a `"string"` stays as it is, `"null"`
included; for the other types `"null"` (any case) is `None`; `"integer"` goes through `int`; `"number"` through `float`, and a whole number becomes an
`int`; `"boolean"` is `True` only for `"true"` in any case; anything else, and any value that does
not convert, stays the string.
""",
        """
### Упражнение 2. Приведите значение к типу, как vLLM

Напишите `typed(value, kind)` для простых типов схемы: значение типа `"string"` остаётся как есть,
даже `"null"`; для остальных типов `"null"` (в любом регистре) — это `None`; значение типа `"integer"` преобразуйте через `int`, типа `"number"` — через
`float`, и целое число становится `int`; `"boolean"` равно `True` только для `"true"` в любом
регистре; всё остальное, а также значение, которое не удалось преобразовать, остаётся строкой.
""",
    ),
    code(
        '''
def typed(value, kind):
    # your code here
    return value
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_typed(typed)
''',
    ),
    code(
        '''
def typed(value, kind):
    if kind == "string":
        return value
    if value.lower() == "null":
        return None
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            number = float(value)
            return int(number) if number.is_integer() else number
    except ValueError:
        return value
    if kind == "boolean":
        return value.lower() == "true"
    return value


check_typed(typed)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 3. Split the reasoning off

Write `split_think(text)` returning `(reasoning, answer)`, both stripped of surrounding whitespace.
The reasoning is everything before `</think>`, without a leading `<think>`; when the text has no
`</think>` there is no reasoning. Remember Qwen3.5: its output may start inside the block.
""",
        """
### Упражнение 3. Отделите рассуждение

Напишите `split_think(text)`, которая возвращает `(reasoning, answer)` без пробелов и переводов
строк по краям. Рассуждение — всё до `</think>`, без открывающего `<think>`; если `</think>` в
тексте нет, то и рассуждения нет. Помните про Qwen3.5: её вывод может начинаться внутри блока.
""",
    ),
    code(
        '''
def split_think(text):
    # your code here
    return "", text
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_split_think(split_think)
''',
    ),
    code(
        '''
def split_think(text):
    if "</think>" not in text:
        return "", text.strip()
    reasoning, answer = text.split("</think>", 1)
    return reasoning.replace("<think>", "").strip(), answer.strip()


check_split_think(split_think)
''',
        hidden=True,
    ),
    md(
        """
[Next: 08 Choosing tools](08_choosing_tools.ipynb)
""",
        """
[Дальше: 08 Выбор инструментов](08_choosing_tools.ipynb)
""",
    ),
])
