"""Lesson 10: Tools from an MCP server: a real MCPServer in-process, its names and schemas mapped
for the model, its results as tool messages, the unchanged loop, the same server over HTTP."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Tools from an MCP server", "ru": "Инструменты с MCP-сервера"},
    "summary": {
        "en": "an MCP server's tools in the loop: names mapped for the model, schemas, `isError` results",
        "ru": "инструменты MCP-сервера в цикле: имена для модели, схемы, результаты с `isError`",
    },
    "minutes_reading": (29, 40),
    "minutes_exercises": (16, 30),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_map_tool_names", "check_result_content"),
}

LESSON = Lesson("10_mcp_tools", [
    md("""
# Tools from an MCP server

**Goal:** take the tools of an MCP server, give them to a model through `tools=` and run the
model's calls on that server with the same loop as before.
""", """
# Инструменты с MCP-сервера

**Цель:** взять инструменты MCP-сервера, передать их модели через `tools=` и выполнять вызовы
модели на этом сервере тем же циклом, что и раньше.
"""),
    md("""
## What you will build

- an MCP server with two tools, one with a dotted name (`weather.today`) and an output schema;
- a client that lists and calls them in-process, with no sockets;
- names and schemas the model's API accepts, mapped back when the model calls;
- tool messages made from results, from `isError` results and from JSON-RPC errors;
- `run_tool_loop` from lesson 02 answering a question with the server's tools;
- the same server over HTTP on 127.0.0.1, answering the same way.

The Model Context Protocol (MCP) is how most tools reach a model in 2026: a server lists its tools
(`tools/list`) and runs them (`tools/call`); the model never talks to it, your code does.
""", """
## Что вы сделаете

- MCP-сервер с двумя инструментами, у одного имя с точкой (`weather.today`) и схема результата
  (output schema);
- клиент, который получает их список и вызывает их внутри процесса, без сокетов;
- имена и схемы, которые принимает API модели, и обратное сопоставление имён, когда модель
  вызывает инструмент;
- сообщения с результатом из обычных результатов, из результатов с `isError` и из ошибок JSON-RPC;
- `run_tool_loop` из урока 02, который отвечает на вопрос с инструментами сервера;
- тот же сервер по HTTP на 127.0.0.1 с теми же ответами.

Протокол MCP (Model Context Protocol) — главный способ, которым инструменты попадают к модели в
2026 году: сервер отдаёт список инструментов (`tools/list`) и выполняет их (`tools/call`); модель с
сервером не говорит, с ним говорит ваш код.
"""),
    md("""
## Setup

In replay mode the model's answers come from cassettes synthesized from the documented formats
(not captured from a real service); `LLM_MODE=live` talks to a real model. The MCP server is always
local: it runs in this notebook.
""", """
## Подготовка

В режиме воспроизведения (replay) ответы модели берутся из кассет (cassettes), синтезированных по
документированным форматам (а не записанных с настоящего сервиса); `LLM_MODE=live` подключает
настоящую модель. MCP-сервер всегда локальный: он работает в этом ноутбуке.
"""),
    code('''
import json

from openai import OpenAI
from helpers import connect, set_language

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
'''),
    md("""
## 1. An MCP server is a set of decorated functions

Create an `MCPServer` and register each tool with `@server.tool(name=...)`: the type hints become
the input schema, and a return type such as a `TypedDict` becomes the output schema.
`weather.today` has a dot in its name, which MCP allows.
""", """
## 1. MCP-сервер — это набор функций с декоратором

Создайте `MCPServer` и зарегистрируйте каждый инструмент через `@server.tool(name=...)`: из
аннотаций типов получается схема входа (input schema), а тип результата, например `TypedDict`, даёт
схему результата. В имени `weather.today` есть точка: MCP это разрешает.
"""),
    code('''
from typing import TypedDict

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("weather-and-notes", log_level="CRITICAL")  # keep the server's log quiet
FORECASTS = {"Beijing": ("Sunny", 12), "Moscow": ("Snow", -3)}


class Forecast(TypedDict):
    city: str
    weather: str
    celsius: int


@server.tool(name="weather.today")
def weather_today(city: str) -> Forecast:
    """Today's weather in a city."""
    if city not in FORECASTS:
        raise ToolError(f"No forecast for {city!r}. Known cities: Beijing, Moscow.")
    weather, celsius = FORECASTS[city]
    return {"city": city, "weather": weather, "celsius": celsius}
''', ru={"# keep the server's log quiet": "# чтобы журнал сервера не шумел"}),
    md("""
The second tool reads a text file, and only from one folder: a name that leads outside it is
refused. `structured_output=False` keeps it a plain text tool, without an output schema.
""", """
Второй инструмент читает текстовый файл, и только из одной папки: имя, которое ведёт за её
пределы, он отклоняет. `structured_output=False` оставляет его простым текстовым инструментом, без
схемы результата.
"""),
    code('''
import tempfile
from pathlib import Path

NOTES = Path(tempfile.mkdtemp())
(NOTES / "packing.txt").write_text("Umbrella, warm scarf.")


@server.tool(name="read_file", structured_output=False)
def read_file(name: str) -> str:
    """Read a text file from the notes folder."""
    path = (NOTES / name).resolve()
    if path.parent != NOTES.resolve() or not path.is_file():
        raise ToolError(f"No note named {name!r}.")
    return path.read_text()
'''),
    md("""
## 2. Connect in-process: `tools/list`, then `tools/call`

Connect to the server object with `Client(server)`: no sockets, the right setup for a notebook
and for tests. `list_tools()` returns each tool's name, description and schemas.
""", """
## 2. Подключение внутри процесса: `tools/list`, затем `tools/call`

Подключайтесь к объекту сервера через `Client(server)`: без сокетов, как раз то, что нужно для
ноутбука и для тестов. `list_tools()` возвращает имя, описание и схемы каждого инструмента.
"""),
    code('''
from mcp import Client

async with Client(server) as session:
    listing = await session.list_tools()
    print("protocol:", session.protocol_version)
for tool in listing.tools:
    print(tool.name, "| output schema:", tool.output_schema is not None)
''', ru={'"protocol:"': '"протокол:"', '"| output schema:"': '"| схема результата:"'}),
    md("""
A call returns the result as text blocks in `content`; a tool with an output schema also returns
`structuredContent`, and a tool that failed sets `isError` instead of breaking the connection.
""", """
Вызов возвращает результат текстовыми блоками в `content`; инструмент со схемой результата
возвращает ещё и `structuredContent`, а инструмент, который не справился, ставит `isError` и не
обрывает соединение.
"""),
    code('''
async with Client(server) as session:
    result = await session.call_tool("weather.today", {"city": "Moscow"})
    missing = await session.call_tool("weather.today", {"city": "Paris"})
print(result.structured_content)
print(missing.is_error, missing.content[0].text)
'''),
    md("""
## 3. Map the names before they reach the model

Never send MCP names to the model unchanged: MCP allows dots and up to 128 characters, while
OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` and Moonshot `^[a-zA-Z_][a-zA-Z0-9-_]{2,63}$`. The listing
copied into `tools=` as it is gets a 400:
""", """
## 3. Сопоставьте имена, прежде чем отдать их модели

Не передавайте модели имена MCP как есть: MCP разрешает точки и до 128 символов, а OpenAI
принимает `^[a-zA-Z0-9_-]{1,64}$`, Moonshot — `^[a-zA-Z_][a-zA-Z0-9-_]{2,63}$`. Список,
скопированный в `tools=` без изменений, получает ошибку 400:
"""),
    code('''
messages = [{"role": "user", "content":
             "What's the weather in Moscow today, and what did I write in packing.txt?"}]
raw_tools = [{"type": "function", "function": {
    "name": tool.name, "description": tool.description, "parameters": tool.input_schema}}
    for tool in listing.tools]
client.chat.completions.create(model=model_name, messages=messages, tools=raw_tools)
''', tags=("raises-exception",)),
    md("""
`tool_names` gives each MCP name one the model's APIs accept (`.` becomes `_`; a short name or one
that starts with a digit gets `t_`; a long one is cut and keeps a hash) and returns the table from
the model's name back to the MCP name.
""", """
`tool_names` даёт каждому имени MCP такое, которое примут API моделей (`.` превращается в `_`;
короткое имя или имя с цифры в начале получает `t_`; длинное обрезается и сохраняет хеш), и
возвращает словарь, по которому имя для модели переводится обратно в имя MCP.
"""),
    code('''
from helpers.mcp import NAME_PATTERNS, tool_names

names = tool_names(tool.name for tool in listing.tools)
print(names)
for model_tool in names:
    assert all(pattern.fullmatch(model_tool) for pattern in NAME_PATTERNS.values())
print("accepted by:", ", ".join(NAME_PATTERNS))
''', ru={'"accepted by:"': '"принимают:"'}),
    md("""
Two MCP names that become one model name would send a call to the wrong tool, so `tool_names`
refuses them and names both:
""", """
Два имени MCP, которые превратились бы в одно имя для модели, отправили бы вызов не тому
инструменту, поэтому `tool_names` их отклоняет и называет оба:
"""),
    code('''
tool_names(["weather.today", "weather_today"])
''', tags=("raises-exception",)),
    md("""
## 4. The guide's `split('.')` meets a dotted name

Read a tool's name from a Kimi-K2 call id by cutting only the `functions.` prefix and the `:N`
index. The guide's `function_id.split('.')[1]` (MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`)
keeps only what lies between the first two dots, so an unmapped `weather.today` loses its second
half:
""", """
## 4. `split('.')` из руководства и имя с точкой

Имя инструмента из id вызова Kimi-K2 получают, отрезая только префикс `functions.` и номер `:N`.
Вариант руководства `function_id.split('.')[1]` (MoonshotAI/Kimi-K2,
`docs/tool_call_guidance.md`) оставляет лишь то, что между первыми двумя точками, и у
несопоставленного `weather.today` пропадает вторая половина:
"""),
    code('''
tool_map = {"weather.today": weather_today, "read_file": read_file}
function_id = "functions.weather.today:0"  # the id a Kimi-K2 model writes for this tool
name = function_id.split(".")[1].split(":")[0]  # the guide's way
tool_map[name]
''', tags=("raises-exception",), ru={
        "# the id a Kimi-K2 model writes for this tool": "# такой id Kimi-K2 пишет для этого инструмента",
        "# the guide's way": "# как в руководстве",
    }),
    md("""
The fix keeps everything between the prefix and the last colon; with mapped names there is no dot
left to trip on at all.
""", """
Исправление сохраняет всё между префиксом и последним двоеточием; а с сопоставленными именами
точек, о которые можно споткнуться, не остаётся вовсе.
"""),
    code('''
name = function_id.removeprefix("functions.").rsplit(":", 1)[0]
assert tool_map[name] is weather_today
name
'''),
    md("""
## 5. `tools/list` becomes `tools=`

Convert each MCP tool into a `tools=` entry: the mapped name, the description, and the input
schema as `parameters` without the SDK's `title` keywords, which Moonshot's strict schema subset
refuses.
""", """
## 5. Из `tools/list` получается `tools=`

Превратите каждый инструмент MCP в элемент `tools=`: сопоставленное имя, описание и схема входа в
роли `parameters`, но без ключевых слов `title`, которые добавляет SDK и которые Moonshot не
принимает в строгом режиме (strict mode).
"""),
    code('''
from helpers.mcp import moonshot_strict_problem, to_openai_tools

tools, names = to_openai_tools(listing.tools)
print("MCP schema:", moonshot_strict_problem(listing.tools[0].input_schema))
print("tools= schema:", moonshot_strict_problem(tools[0]["function"]["parameters"]))
print(json.dumps(tools[0], indent=1))
''', ru={'"MCP schema:"': '"схема MCP:"', '"tools= schema:"': '"схема в tools=:"'}),
    md("""
## 6. Results and errors become tool messages

Send the model what the server answered: `structuredContent` as its JSON text, plain text as it
is, and a failure (`isError`, or a JSON-RPC error such as an unknown tool) as `{"error": ...}` so
the model can read it and try again. The texts stay in English in both editions: they are for the
model.
""", """
## 6. Результаты и ошибки становятся сообщениями с результатом

Отдавайте модели то, что ответил сервер: `structuredContent` — его JSON-текстом, простой текст —
как есть, а неудачу (`isError` или ошибку JSON-RPC, например неизвестный инструмент) — в виде
`{"error": ...}`, чтобы модель прочитала её и попробовала снова. Тексты остаются английскими в
обеих версиях: они для модели.
"""),
    code('''
from mcp.shared.exceptions import MCPError

from helpers.mcp import error_content, tool_content

print(tool_content(result))
print(tool_content(missing))
print(error_content(MCPError(-32602, "Unknown tool: weather.tomorrow")))
'''),
    md("""
A plain exception inside a tool is different: the server keeps its message and the model gets only
"Error executing tool ...", so raise `ToolError` with a sentence the model can act on.
""", """
Обычное исключение внутри инструмента ведёт себя иначе: сервер оставляет его текст у себя, а
модель получает только «Error executing tool ...», поэтому поднимайте `ToolError` с фразой, по
которой модель сможет действовать.
"""),
    md("""
## 7. The unchanged loop with the server's tools

Put the server's tools into a `ToolRegistry` (lesson 01) with `mcp_registry(server)`: each tool
becomes a `tools/call` to the server under its MCP name, so `run_tool_loop` from lesson 02 runs as
it is.
""", """
## 7. Прежний цикл с инструментами сервера

Положите инструменты сервера в `ToolRegistry` (урок 01) через `mcp_registry(server)`: каждый
инструмент становится вызовом `tools/call` к серверу под своим именем в MCP, поэтому
`run_tool_loop` из урока 02 работает без изменений.
"""),
    code('''
from helpers.loop import run_tool_loop
from helpers.mcp import mcp_registry

registry, names = mcp_registry(server)
messages = [{"role": "user", "content":
             "What's the weather in Moscow today, and what did I write in packing.txt?"}]
answer = run_tool_loop(client, messages, registry, model=model_name)
print([call["function"]["name"] for call in messages[1]["tool_calls"]])
print(answer["content"])
'''),
    md("""
## 8. The same server over HTTP

Serve the very same `server` over Streamable HTTP on 127.0.0.1 and give `Client` a transport to
that URL: the tools and the answers do not change, because the transport is not part of the tool.
Its HTTP client comes from `httpx2`, the HTTP library that `mcp` and `openai` install, and it
ignores proxy variables (`trust_env=False`): a lab's proxy cannot reach this machine's server.
""", """
## 8. Тот же сервер по HTTP

Запустите тот же самый `server` по Streamable HTTP на 127.0.0.1 и передайте `Client` транспорт к
этому URL: инструменты и ответы не меняются, потому что транспорт не часть инструмента.
Его HTTP-клиент взят из `httpx2` — HTTP-библиотеки, которую устанавливают `mcp` и `openai`, — и
не смотрит на переменные прокси (`trust_env=False`): прокси учебного класса не доберётся до
сервера на этой машине.
"""),
    code('''
import httpx2
from mcp.client.streamable_http import streamable_http_client

from helpers.mcp import serve_http

with serve_http(server) as url:  # a real HTTP server in a thread, stopped at the end
    async with httpx2.AsyncClient(trust_env=False) as http_client:  # no proxy to this machine
        async with Client(streamable_http_client(url, http_client=http_client)) as remote:
            remote_listing = await remote.list_tools()
            remote_result = await remote.call_tool("weather.today", {"city": "Moscow"})
print([tool.name for tool in remote_listing.tools])
print(tool_content(remote_result) == tool_content(result))
''', ru={"# a real HTTP server in a thread, stopped at the end":
         "# настоящий HTTP-сервер в потоке, в конце он останавливается",
         "# no proxy to this machine": "# к этой машине без прокси"}, id="10-4cfbb284"),
    md("""
## Summary

- An MCP server's `tools/list` is not `tools=` yet: map the names reversibly and refuse
  collisions, and drop what the model's API refuses from the schemas.
- Give the model every outcome as a tool message: `structuredContent` as JSON, `isError` and
  JSON-RPC errors as `{"error": ...}`.
- With that, the loop from lesson 02 runs MCP tools unchanged, in-process or over HTTP.
  ([Reference](#reference))
""", """
## Итоги

- `tools/list` MCP-сервера — это ещё не `tools=`: сопоставьте имена обратимо, не допускайте
  одинаковых имён и уберите из схем то, что отвергает API модели.
- Передавайте модели любой исход сообщением с результатом: `structuredContent` — как JSON,
  `isError` и ошибки JSON-RPC — как `{"error": ...}`.
- После этого цикл из урока 02 выполняет инструменты MCP без изменений, внутри процесса или по
  HTTP. ([Справка](#reference))
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- MCP specification 2026-07-28 (modelcontextprotocol/modelcontextprotocol,
  `docs/specification/2026-07-28/server/tools.mdx`): tool names SHOULD be 1 to 128 characters of
  `A-Z a-z 0-9 _ - .`, unique per server; clients that combine servers SHOULD prefix names with a
  server id. Tool execution errors come back as results with `isError: true`, protocol errors as
  JSON-RPC errors; a tool returning `structuredContent` SHOULD also return it as text. The
  revision is stateless (no `initialize`; `server/discover`).
- Python SDK: `mcp` 2.3.0 from PyPI (`pip index versions mcp`, December 2026). In 2.x `FastMCP`
  became `MCPServer`; `from mcp.server.fastmcp import FastMCP` raises `ModuleNotFoundError` with a
  migration hint. This lesson's client reported protocol 2026-07-28 in-process and over HTTP. The
  SDK answers a call of an unknown tool with an `isError` result (not the spec's JSON-RPC
  `-32602`), so step 6 builds that `MCPError` by hand, in the form the spec gives.
- Name patterns: OpenAI's `^[a-zA-Z0-9_-]{1,64}$` (as its 400 errors and BFCL's checker quote
  it); Moonshot's `^[a-zA-Z_][a-zA-Z0-9-_]{2,63}$` (platform.kimi.ai, tool-use docs). vLLM checks
  no pattern, but its `kimi_k2` tool parser (`vllm/tool_parsers/kimi_k2_tool_parser.py` at commit
  c853e154) reads the name back as `function_id.split(":")[0].split(".")[-1]`, which breaks on a
  dot too.
- The 400 in step 3 comes from this series' replay server, which applies Moonshot's documented
  rules (`helpers/replay/validation.py`); the wording is the series' own.
- The model's side (`data/recordings/10_mcp_tools.json`) is synthesized by
  `python -m helpers.replay synthesize` from `helpers/replay/scenarios/n10_mcp_tools.py`, following
  Moonshot's documented response format; it is not a capture. The tool results in it are the texts
  this lesson's server gives.

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- Спецификация MCP 2026-07-28 (modelcontextprotocol/modelcontextprotocol,
  `docs/specification/2026-07-28/server/tools.mdx`): имена инструментов SHOULD состоять из 1–128
  символов `A-Z a-z 0-9 _ - .` и быть уникальными в пределах сервера; клиенты, которые объединяют
  серверы, SHOULD добавлять к именам префикс сервера. Ошибки выполнения инструмента приходят как
  результаты с `isError: true`, ошибки протокола — как ошибки JSON-RPC; инструмент, который
  возвращает `structuredContent`, SHOULD вернуть его и текстом. Эта редакция не хранит состояние
  (нет `initialize`; есть `server/discover`).
- SDK для Python: `mcp` 2.3.0 из PyPI (`pip index versions mcp`, декабрь 2026). В версиях 2.x
  `FastMCP` стал `MCPServer`; `from mcp.server.fastmcp import FastMCP` поднимает
  `ModuleNotFoundError` с подсказкой о переходе. Клиент этого урока сообщил протокол 2026-07-28 и
  внутри процесса, и по HTTP. На вызов неизвестного инструмента SDK отвечает результатом с
  `isError` (а не ошибкой JSON-RPC `-32602` из спецификации), поэтому в шаге 6 `MCPError` собран
  вручную, в том виде, который даёт спецификация.
- Шаблоны имён: у OpenAI `^[a-zA-Z0-9_-]{1,64}$` (так его приводят ошибки 400 и проверка BFCL); у
  Moonshot `^[a-zA-Z_][a-zA-Z0-9-_]{2,63}$` (platform.kimi.ai, документация по инструментам). vLLM
  шаблон не проверяет, но его парсер `kimi_k2` (`vllm/tool_parsers/kimi_k2_tool_parser.py`,
  коммит c853e154) получает имя как `function_id.split(":")[0].split(".")[-1]`, и на точке это
  тоже ломается.
- Ошибку 400 в шаге 3 даёт сервер воспроизведения этой серии, который применяет документированные
  правила Moonshot (`helpers/replay/validation.py`); формулировка — наша.
- Сторона модели (`data/recordings/10_mcp_tools.json`) синтезирована командой
  `python -m helpers.replay synthesize` из `helpers/replay/scenarios/n10_mcp_tools.py` по
  документированному формату ответов Moonshot; это не ответы, записанные с сервиса. Результаты инструментов в ней — те
  тексты, которые даёт сервер этого урока.

</details>
"""),
    md("""
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Names for the model

Write `map_tool_names(mcp_names)` without `helpers.mcp`: return a dict from the model's name to
the MCP name. The model's name: every character outside `[a-zA-Z0-9_-]` becomes `_`; if the result
does not start with a letter or `_`, or is shorter than 3 characters, put `t_` in front; if it is
then longer than 64, keep its first 55 characters and add `_` and the first 8 hex digits of
`hashlib.sha1(mcp_name.encode()).hexdigest()`. Raise `ValueError` when two different MCP names get
the same model name.
""", """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Имена для модели

Напишите `map_tool_names(mcp_names)` без `helpers.mcp`: она возвращает словарь от имени для модели
к имени MCP. Имя для модели: каждый символ вне `[a-zA-Z0-9_-]` заменяется на `_`; если результат
начинается не с буквы и не с `_` или короче 3 символов, впереди ставится `t_`; если после этого он
длиннее 64 символов, оставьте первые 55 символов и добавьте `_` и первые 8 шестнадцатеричных цифр
`hashlib.sha1(mcp_name.encode()).hexdigest()`. Если два разных имени MCP получают одно имя для
модели, поднимите `ValueError`.
"""),
    code('''
import hashlib
import re

from helpers.exercises.n10 import check_map_tool_names


def map_tool_names(mcp_names):
    # your code here
    return {name.replace(".", "_"): name for name in mcp_names}
''', ru={"# your code here": "# ваш код здесь"}),
    code('''
check_map_tool_names(map_tool_names)
'''),
    code('''
import hashlib
import re


def map_tool_names(mcp_names):
    names = {}
    for mcp_name in mcp_names:
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", mcp_name)
        if not re.match(r"[a-zA-Z_]", name) or len(name) < 3:
            name = "t_" + name
        if len(name) > 64:
            name = name[:55] + "_" + hashlib.sha1(mcp_name.encode()).hexdigest()[:8]
        if name in names and names[name] != mcp_name:
            raise ValueError(f"{names[name]!r} and {mcp_name!r} both become {name!r}")
        names[name] = mcp_name
    return names


check_map_tool_names(map_tool_names)
''', hidden=True),
    md("""
### Exercise 2. A failed call as a tool message

Write `result_content(result)`: `result` is a `tools/call` result as JSON data (a dict with
`content`, and maybe `isError` and `structuredContent`). Join the `text` of the blocks whose
`type` is `"text"` with `"\\n"`. If `isError` is `true`, return `json.dumps({"error": <that
text>})`, with `"The tool failed and gave no message."` as the text when there is none;
otherwise, if `structuredContent` is there and not `None`, return its `json.dumps`; otherwise
return the text.
""", """
### Упражнение 2. Неудачный вызов как сообщение с результатом

Напишите `result_content(result)`: `result` — результат `tools/call` в виде JSON-данных (словарь с
`content` и, возможно, `isError` и `structuredContent`). Соедините через `"\\n"` поле `text` тех
блоков, у которых `type` равен `"text"`. Если `isError` равно `true`, верните
`json.dumps({"error": <этот текст>})`, а если текста нет — с текстом `"The tool failed and gave
no message."`; иначе, если `structuredContent` есть и не `None`, верните его `json.dumps`; иначе
верните текст.
"""),
    code('''
from helpers.exercises.n10 import check_result_content


def result_content(result):
    # your code here
    return result["content"][0]["text"]
''', ru={"# your code here": "# ваш код здесь"}),
    code('''
check_result_content(result_content)
'''),
    code(r'''
import json


def result_content(result):
    text = "\n".join(block["text"] for block in result.get("content", [])
                     if block.get("type") == "text")
    if result.get("isError") is True:
        return json.dumps({"error": text or "The tool failed and gave no message."})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


check_result_content(result_content)
''', hidden=True),
    md("""
[Next: 11 Tool results are untrusted input](11_untrusted_results.ipynb)
""", """
[Дальше: 11 Результаты инструментов — недоверенные данные](11_untrusted_results.ipynb)
"""),
])
