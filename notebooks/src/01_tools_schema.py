"""Lesson 01: describing a tool, tool_map, schemas from typed functions, argument checks."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Tools and their schemas", "ru": "Инструменты и их схемы"},
    "summary": {
        "en": "describe a function for the model, `tool_map`, schemas from typed functions, argument checks, the guide's first defect",
        "ru": "описание функции для модели, `tool_map`, схемы по функциям с аннотациями типов, проверка аргументов, первый дефект руководства",
    },
    "minutes_reading": (20, 25),
    "minutes_exercises": (15, 20),
    "timed": True,
    "in_class_path": True,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_schema", "check_call_tool", "check_typed_function"),
}

LESSON = Lesson("01_tools_schema", [
    md("""
# Tools and their schemas

**Goal:** describe a Python function so that a model can call it, and call it correctly when the model
asks.
""", """
# Инструменты и их схемы

**Цель:** описать функцию Python так, чтобы модель могла её вызвать, и правильно вызвать её, когда
модель попросит.
"""),
    md("""
## What you will build

The guide's `get_weather` tool with its JSON schema and a `tool_map`; the
same schema generated from a typed function; argument validation; and the fix for the guide's first
defect, the way it passes arguments to the function.
""", """
## Что вы сделаете

Вы опишете инструмент `get_weather` из руководства JSON-схемой и заведёте `tool_map`; построите ту
же схему по функции с аннотациями типов; добавите проверку аргументов и исправите первый дефект
руководства — то, как оно передаёт аргументы в функцию.
"""),
    md("""
## Setup

The same setup as in lesson 00. In replay mode the model's answers come from cassettes synthesized
from the documented formats (not captured from a real service); `LLM_MODE=live` talks to a real
model.
""", """
## Подготовка

Подготовка та же, что в уроке 00. В режиме воспроизведения (replay) ответы модели берутся из
кассет (cassettes), синтезированных по документированным форматам (это не записи ответов настоящего
сервиса); `LLM_MODE=live` включает режим live (с настоящей моделью).
"""),
    code('''
import json

from openai import OpenAI
from helpers import connect, set_language

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
settings = conn.settings(temperature=0.3)  # the guide's temperature; left out where the platform locks it
conn
''', ru={"# the guide's temperature; left out where the platform locks it": '# температура из руководства; не передаётся, где платформа её фиксирует'}),
    md("""
## 1. The function

Write the tool so that its result depends on its argument: then a wrong call shows at once. The
guide's `get_weather` is a stub that always answers "Sunny"; ours looks the city up in a small
table, and that will matter in step 5. The type hint and the docstring will matter in step 6.
""", """
## 1. Функция

Пишите инструмент так, чтобы его результат зависел от аргумента: тогда неверный вызов сразу
заметен. В руководстве `get_weather` — заглушка (stub), которая всегда отвечает «Sunny»; наша ищет
город в маленькой таблице, и это пригодится на шаге 5. Аннотация типа и docstring пригодятся на
шаге 6.
"""),
    code('''
WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict:
    """Get weather information. Call this tool when the user needs to get weather information

    Args:
        city: City name
    """
    return {"city": city, "weather": WEATHER.get(city, "unknown")}


get_weather("Moscow")
'''),
    md("""
## 2. The schema: a description for the model

Describe each tool in JSON: the model never sees your Python code, only the tool's name, what it
is for and which arguments it takes. This is the guide's description of `get_weather`, in the
format every OpenAI-compatible API accepts as `tools=`:
""", """
## 2. Схема: описание для модели

Опишите каждый инструмент в JSON: модель никогда не видит ваш код на Python, только имя
инструмента, зачем он нужен и какие аргументы принимает. Вот описание `get_weather` из руководства
в формате, который любой OpenAI-совместимый API принимает в параметре `tools=`:
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
            "properties": {
                "city": {"type": "string", "description": "City name"},
            },
        },
    },
}]
'''),
    md("""
What each field means:

| field | meaning |
|---|---|
| `type` | `"function"`: the kind of tool every OpenAI-compatible server accepts |
| `function.name` | the name the model writes when it calls the tool; letters, digits, `_` and `-`, at most 64 characters (the Moonshot platform also wants at least 3, the first a letter or `_`) |
| `function.description` | when and why to use the tool: the model decides from this text, so write it for the model |
| `function.parameters` | a JSON Schema describing the arguments object |
| `parameters.type` | `"object"`: the arguments always arrive as one JSON object |
| `parameters.properties` | one entry per argument: its JSON type (`string`, `number`, `integer`, `boolean`, `array`, `object`), a description, optionally an `enum` of allowed values |
| `parameters.required` | the arguments the model must always fill in |

The description and the argument descriptions are part of the prompt: the model reads them to
decide whether to call the tool and what to put in the arguments.
""", """
Что означает каждое поле:

| поле | смысл |
|---|---|
| `type` | `"function"`: этот вид инструментов понимает любой OpenAI-совместимый сервер |
| `function.name` | имя, которое модель напишет, вызывая инструмент; буквы, цифры, `_` и `-`, не длиннее 64 символов (платформа Moonshot требует ещё и не короче 3 символов, первый — буква или `_`) |
| `function.description` | когда и зачем нужен инструмент: модель решает по этому тексту, поэтому пишите его для модели |
| `function.parameters` | JSON-схема (JSON Schema) объекта с аргументами |
| `parameters.type` | `"object"`: аргументы всегда приходят одним JSON-объектом |
| `parameters.properties` | по одному ключу на каждый аргумент: его JSON-тип (`string`, `number`, `integer`, `boolean`, `array`, `object`), описание и, если нужно, `enum` допустимых значений |
| `parameters.required` | аргументы, которые модель обязана заполнить |

Описание инструмента и описания аргументов — часть промпта: модель читает их, чтобы решить,
вызывать ли инструмент и что подставить в аргументы.
"""),
    md("""
## 3. `tool_map`: from a name to a function

Keep a dictionary from tool names to functions, `tool_map`: only the functions listed in it can
ever run, whatever the model writes. When the model asks for `get_weather`, your code looks the
name up there, as the guide does.
""", """
## 3. `tool_map`: от имени к функции

Заведите словарь «имя инструмента → функция», `tool_map`: выполниться могут только перечисленные в
нём функции, что бы ни написала модель. Когда модель просит `get_weather`, код ищет функцию с этим
именем в словаре, как и в руководстве.
"""),
    code('''
tool_map = {"get_weather": get_weather}

tool_map["get_weather"]("Shanghai")
'''),
    md("""
## 4. Where the arguments come from

The model sends a call's arguments as a JSON string: turn them into a dict with `json.loads` before
you use them. Here is one request with the tools, set up as in the guide (`temperature=0.3`,
`tool_choice="auto"`: the model decides whether to call a tool). The temperature travels in
`settings` from the setup cell, because `kimi-k2.6` on the Moonshot platform refuses any temperature
but its own, and `conn.settings` leaves it out there. The model answers with a tool call instead of
text:
""", """
## 4. Откуда берутся аргументы

Аргументы вызова модель присылает строкой JSON: прежде чем ими пользоваться, превратите их в
словарь через `json.loads`. Вот один запрос с инструментами, с теми же настройками, что в
руководстве (`temperature=0.3`, `tool_choice="auto"`: модель сама решает, вызывать ли инструмент).
Температура передаётся через
`settings` из ячейки подготовки: `kimi-k2.6` на платформе Moonshot не принимает никакую температуру,
кроме своей, и там `conn.settings` её не передаёт. Вместо текста модель отвечает вызовом:
"""),
    code('''
messages = [{"role": "user", "content":
             "What's the weather like in Beijing today? Let's check using the tool."}]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools,
    tool_choice="auto", **settings,
)
choice = completion.choices[0]
print(choice.finish_reason)
'''),
    md("""
`finish_reason` is `"tool_calls"`: the model stopped to wait for a tool. Each call has an `id`, the
function's `name`, and the `arguments`:
""", """
Причина остановки (`finish_reason`) — `"tool_calls"`: модель остановилась и ждёт результата
инструмента. У каждого вызова есть `id`, имя функции `name` и аргументы `arguments`:
"""),
    code('''
tool_call = choice.message.tool_calls[0]
print(tool_call.id)
print(tool_call.function.name)
print(repr(tool_call.function.arguments))
'''),
    md("""
The arguments are a **string**: the JSON text the model wrote, token by token. On a self-hosted
server it is usually valid JSON, but nothing guarantees it (step 7; what strict mode changes is
lesson 08's subject). `json.loads` decodes the string into a dict:
""", """
Аргументы — это **строка**: JSON-текст, который модель написала токен за токеном. На своём
сервере это обычно корректный JSON, но гарантий нет (шаг 7; что меняет строгий режим, разбирает
урок 08). `json.loads` превращает строку в словарь:
"""),
    code('''
arguments = json.loads(tool_call.function.arguments)
arguments
'''),
    md("""
## 5. Calling the function: the guide's first defect

Unpack the arguments: call `tool_function(**arguments)`, not `tool_function(arguments)`. The guide
calls the function like this (MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`; where the line
stands in each version of the guide is in the [reference](#reference)):

```python
tool_result = tool_function(tool_call_arguments)
```

That passes the whole dict as **one positional argument**: inside the function, `city` is
`{"city": "Beijing"}`, not `"Beijing"`. Our function looks `city` up in a dict, so the mistake is
loud:
""", """
## 5. Вызов функции: первый дефект руководства

Распаковывайте аргументы: вызывайте `tool_function(**arguments)`, а не `tool_function(arguments)`.
Руководство вызывает функцию так (MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`; где эта
строка стоит в каждой версии руководства, сказано в [справке](#reference)):

```python
tool_result = tool_function(tool_call_arguments)
```

Так весь словарь уходит в функцию **одним позиционным аргументом**: внутри неё `city` равен
`{"city": "Beijing"}`, а не `"Beijing"`. Наша функция ищет `city` в словаре, поэтому ошибка видна
сразу:
"""),
    code('''
tool_function = tool_map[tool_call.function.name]
tool_function(arguments)
''', tags=("raises-exception",)),
    md("""
A dict cannot be the key of another dict, hence `unhashable type: 'dict'`. The guide's stub ignores its
argument, so the same bug passed unnoticed there:
""", """
Словарь нельзя сделать ключом другого словаря, отсюда `unhashable type: 'dict'`. Заглушка из руководства
свой аргумент игнорирует, поэтому там та же ошибка прошла незамеченной:
"""),
    code('''
def stub_get_weather(city):
    return {"weather": "Sunny"}  # ignores city, so any argument "works"


stub_get_weather(arguments)
''', ru={'# ignores city, so any argument "works"':
        "# city не используется, поэтому «работает» любой аргумент"}),
    md("""
The fix: unpack the dict into keyword arguments with `**`, so each JSON key becomes the parameter
of the same name. A test with a tool whose answer depends on its input catches the difference.
""", """
Исправление: распаковать словарь в именованные аргументы через `**`, тогда каждый ключ JSON станет
одноимённым параметром. Разницу сразу видно, если проверять на инструменте, ответ которого зависит
от аргумента.
"""),
    code('''
tool_result = tool_function(**arguments)
assert tool_result["city"] == arguments["city"]  # the answer depends on the input now
tool_result
''', ru={"# the answer depends on the input now": "# теперь ответ зависит от аргумента"}),
    md("""
Lesson 02 sends this result back to the model as a message with `role: "tool"`.

## 6. The schema from a typed function

Build the schema from the function's type hints and docstring: a hand-written schema easily
drifts out of sync with the code. `transformers` can build the schema
from the function itself (`get_json_schema`): type hints give the JSON types, the docstring's first
part gives the description, the Google-style `Args:` section gives each argument's description,
and parameters without a default become `required`. `schema_from_function` wraps it:
""", """
Урок 02 отправит этот результат модели сообщением с `role: "tool"`.

## 6. Схема по аннотациям типов

Стройте схему по аннотациям типов и docstring функции: схема, написанная вручную, легко
расходится с кодом. `transformers` умеет строить схему по самой
функции (`get_json_schema`): аннотации типов дают JSON-типы, первая часть docstring — описание,
раздел `Args:` в стиле Google — описания аргументов, а параметры без значения по умолчанию попадают
в `required`. `schema_from_function` — обёртка над ней:
"""),
    code('''
from helpers import schema_from_function

generated = schema_from_function(get_weather)
print(json.dumps(generated, indent=2))
'''),
    md("""
The keys come in a different order, but it is the same schema as the hand-written one. (Because
`get_weather` has a return annotation, `-> dict`, `get_json_schema` also adds a `"return"` entry,
which is not part of the OpenAI format, so `schema_from_function` drops it. It also rewrites the
`prefixItems` that `get_json_schema` makes from a `tuple[...]` hint as `items`, since the Moonshot
platform's strict tools refuse `prefixItems`: lesson 08.)
""", """
Ключи идут в другом порядке, но схема та же, что написана вручную. (У `get_weather` есть аннотация
возвращаемого значения, `-> dict`, поэтому `get_json_schema` добавляет ещё поле `"return"`; в
формате OpenAI его нет, и `schema_from_function` его убирает. А `prefixItems`, которое
`get_json_schema` делает из аннотации `tuple[...]`, она переписывает в `items`: строгие инструменты
платформы Moonshot `prefixItems` не принимают: урок 08.)
"""),
    code('''
assert generated == tools[0]
'''),
    md("""
`ToolRegistry` keeps the schemas and the functions together: `registry.schemas` is the `tools=`
list, `registry.tool_map` the name-to-function map. `register` builds the schema from the function,
or takes one you wrote (`register(fn, schema=...)`).
""", """
`ToolRegistry` хранит схемы и функции вместе: `registry.schemas` — список для `tools=`,
`registry.tool_map` — словарь «имя → функция». `register` строит схему по функции или берёт
готовую (`register(fn, schema=...)`).
"""),
    code('''
from helpers import ToolRegistry

registry = ToolRegistry()
registry.register(get_weather)
assert registry.schemas == tools
registry.tool_map
'''),
    md("""
## 7. Validating arguments

Check the arguments against the schema before you run the tool: models make mistakes (a wrong name,
a number instead of a string, a missing field). `validate_arguments` checks a decoded dict against
the `parameters` schema and lists the problems (an empty list means fine). The problems are written
for the model, so they are in English in both editions, like the prompts: they travel back to it in
a tool message.
""", """
## 7. Проверка аргументов

Проверяйте аргументы по схеме до запуска инструмента: модели ошибаются (не то имя, число вместо
строки, пропущенное поле). `validate_arguments` сверяет полученный из JSON словарь со схемой
`parameters` и перечисляет проблемы (пустой список — всё в порядке). Эти фразы адресованы модели,
поэтому они на английском в обоих изданиях, как и промпты: модель получит их в сообщении с
результатом (tool message).
"""),
    code('''
from helpers import validate_arguments

parameters = tools[0]["function"]["parameters"]
for candidate in [{"city": "Beijing"}, {"town": "Beijing"}, {"city": 42}]:
    print(candidate, validate_arguments(candidate, parameters))
'''),
    md("""
`registry.call` does the whole job for one call: it decodes the JSON, validates it, runs the
function with `**arguments` and returns the ready `role: "tool"` message. It never raises for the
model's mistakes: the message then carries an error the model can read and fix (lesson 02 shows the
model retrying).
""", """
`registry.call` делает всю работу для одного вызова: разбирает JSON, проверяет аргументы, вызывает
функцию с `**arguments` и возвращает готовое сообщение с `role: "tool"`. Ошибки модели не приводят
к исключению: вместо результата в сообщение попадает описание ошибки, которое модель прочитает и
сможет исправить (в уроке 02 модель так и делает).
"""),
    code('''
registry.call(tool_call)
'''),
    md("""
The same with three typical mistakes: a wrong argument name, broken JSON, an unknown tool. Below
is the `content` of the messages the model gets (data for the model, so in English): the required
`city` is missing and `town` is unexpected; the arguments are not valid JSON; there is no tool
`get_wether`, only `get_weather`.
""", """
То же самое с тремя типичными ошибками: не то имя аргумента, сломанный JSON, неизвестный
инструмент. Ниже — `content` сообщений, которые получит модель (данные для неё, поэтому по-английски):
отсутствует обязательный `city` и есть лишний `town`; аргументы — некорректный JSON; инструмента
`get_wether` нет, есть только `get_weather`.
"""),
    code('''
mistakes = [
    ("get_weather", '{"town": "Beijing"}'),
    ("get_weather", '{"city": "Beijing"'),
    ("get_wether", '{"city": "Beijing"}'),
]
for name, text in mistakes:
    bad_call = {"id": "get_weather:1", "type": "function",
                "function": {"name": name, "arguments": text}}
    print(registry.call(bad_call)["content"])
'''),
    md("""
## Summary

- A tool is a Python function plus a JSON schema: `type`, `function.name`, `function.description`
  and `function.parameters` (a JSON Schema with `properties` and `required`).
- `tool_map` (or `ToolRegistry`) maps the name the model writes to the function; nothing else runs.
- The model sends arguments as JSON **text**: decode it (`json.loads`), then call `function(**arguments)`. The
  guide's `tool_function(tool_call_arguments)` passes the dict as one argument; its stub hid that.
- `schema_from_function` builds the schema from type hints and a Google docstring;
  `validate_arguments` and `registry.call` turn the model's mistakes into messages it can read.
""", """
## Итоги

- Инструмент — это функция Python плюс JSON-схема: `type`, `function.name`, `function.description`
  и `function.parameters` (JSON-схема с `properties` и `required`).
- `tool_map` (или `ToolRegistry`) сопоставляет имя, которое пишет модель, с функцией; больше ничего
  не выполняется.
- Аргументы модель присылает JSON-**текстом**: разберите его (`json.loads`) и вызывайте
  `function(**arguments)`. `tool_function(tool_call_arguments)` из руководства передаёт словарь
  одним аргументом; заглушка это скрывала.
- `schema_from_function` строит схему по аннотациям типов и docstring в стиле Google;
  `validate_arguments` и `registry.call` превращают ошибки модели в сообщения, которые она может
  прочитать.
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- **`tool_function(tool_call_arguments)`** (step 5): the Russian translation this series follows
  has the line in all three of its loops; the English original of
  `docs/tool_call_guidance.md` (MoonshotAI/Kimi-K2, at commit a80b4224) has it only in the
  streaming loop.

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- **`tool_function(tool_call_arguments)`** (шаг 5): в русском переводе, по которому идёт серия,
  эта строка есть во всех трёх циклах; в английском оригинале `docs/tool_call_guidance.md`
  (MoonshotAI/Kimi-K2, коммит a80b4224) — только в потоковом.

</details>
"""),
    md("""
## Exercises

Edit the first cell of each exercise, then run the self-check below it until it says "Correct!".
A reference solution is in the collapsed cell that follows.

### Exercise 1. A schema by hand

Write the schema of a tool `convert_temperature` with two required arguments: `value`, a number,
and `to_unit`, a string that is either `"celsius"` or `"fahrenheit"` (use `enum`). Give the tool
and both arguments a description.
""", """
## Упражнения

Измените первую ячейку каждого упражнения и запускайте самопроверку (self-check) под ней, пока она
не ответит «Верно!». Эталонное решение — в следующей, свёрнутой ячейке.

### Упражнение 1. Схема вручную

Напишите схему инструмента `convert_temperature` с двумя обязательными аргументами: `value` — число
и `to_unit` — строка, равная `"celsius"` или `"fahrenheit"` (используйте `enum`). Дайте описание
инструменту и обоим аргументам.
"""),
    code('''
my_schema = {
    "type": "function",
    "function": {
        "name": "convert_temperature",
        "description": "",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}
'''),
    code('''
from helpers.exercises import n01

n01.check_schema(my_schema)
'''),
    code('''
my_schema = {
    "type": "function",
    "function": {
        "name": "convert_temperature",
        "description": "Convert a temperature between Celsius and Fahrenheit.",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The temperature to convert"},
                "to_unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                            "description": "The unit to convert to"},
            },
            "required": ["value", "to_unit"],
        },
    },
}
''', hidden=True),
    code('''
n01.check_schema(my_schema)
'''),
    md("""
### Exercise 2. Call a tool correctly

`call_tool` receives one tool call as a dict (the shape the API sends) and the `tool_map`. As
written it repeats the guide's mistake. Fix it. The self-check runs it on a small test tool,
`greet(name, punctuation="!")`.
""", """
### Упражнение 2. Правильный вызов инструмента

`call_tool` получает один вызов — словарь той же формы, что присылает API, — и `tool_map`. Сейчас
она повторяет ошибку руководства. Исправьте её. Самопроверка запускает её на маленьком тестовом
инструменте `greet(name, punctuation="!")`.
"""),
    code('''
def call_tool(tool_call, tool_map):
    """Run one tool call and return the function's result."""
    function = tool_map[tool_call["function"]["name"]]
    arguments = json.loads(tool_call["function"]["arguments"])
    return function(arguments)
'''),
    code('''
n01.check_call_tool(call_tool)
'''),
    code('''
def call_tool(tool_call, tool_map):
    """Run one tool call and return the function's result."""
    function = tool_map[tool_call["function"]["name"]]
    arguments = json.loads(tool_call["function"]["arguments"])
    return function(**arguments)
''', hidden=True),
    code('''
n01.check_call_tool(call_tool)
'''),
    md("""
### Exercise 3. Let the function describe itself

Add type hints and a Google-style docstring to `convert_temperature` so that
`schema_from_function` produces a schema like the one in exercise 1 (`float` becomes `"number"`).
Hint: the docstring can list allowed values as `(choices: ["celsius", "fahrenheit"])` at the end of
an argument's description.
""", """
### Упражнение 3. Пусть функция опишет себя сама

Добавьте в `convert_temperature` аннотации типов и docstring в стиле Google, чтобы
`schema_from_function` выдала схему, как в упражнении 1 (`float` превращается в `"number"`).
Подсказка: допустимые значения можно перечислить в docstring в конце описания аргумента:
`(choices: ["celsius", "fahrenheit"])`.
"""),
    code('''
def convert_temperature(value, to_unit):
    """Convert a temperature."""
    if to_unit == "fahrenheit":
        return value * 9 / 5 + 32
    return (value - 32) * 5 / 9
'''),
    code('''
n01.check_typed_function(convert_temperature)
'''),
    code('''
def convert_temperature(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    if to_unit == "fahrenheit":
        return value * 9 / 5 + 32
    return (value - 32) * 5 / 9
''', hidden=True),
    code('''
n01.check_typed_function(convert_temperature)
'''),
    md("""
[Next: 02 The tool-call loop](02_sync_loop.ipynb)
""", """
[Дальше: 02 Цикл вызова инструментов](02_sync_loop.ipynb)
"""),
])
