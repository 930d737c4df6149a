"""Lesson 03: tool calls in a stream: chunks, assembly by index, and the guide's two defects."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Streaming tool calls", "ru": "Вызов инструментов при потоковой выдаче"},
    "summary": {
        "en": "streaming, chunks, assembling calls by `index`, the missing assistant message",
        "ru": "потоковая выдача (streaming), фрагменты (chunks), сборка вызовов по `index`, потерянное сообщение ассистента",
    },
    "minutes_reading": (30, 35),
    "minutes_exercises": (20, 25),
    "timed": True,
    "in_class_path": True,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_assemble", "check_history", "check_usage"),
}

LESSON = Lesson("03_streaming", [
    md(
        """
# Streaming tool calls

**Goal:** receive a tool call piece by piece, glue the pieces together by `index`, and fix the two
bugs hidden in the guide's streaming loop.
""",
        """
# Вызов инструментов при потоковой выдаче

**Цель:** получить вызов инструмента по частям при потоковой выдаче (streaming), склеить части по
`index` и исправить две ошибки, спрятанные в потоковом цикле из руководства.
""",
    ),
    md(
        """
## What you will build

- a look at the chunks of a streamed answer: what arrives first, what comes in fragments, where
  `finish_reason` is;
- the guide's accumulation by `index`, written out as a small function, then the same with
  `ToolCallAccumulator`;
- the guide's streaming loop run as published: the replay server, which checks the history as
  OpenAI's API does, answers **400**, because the assistant message with the calls never reaches
  the history; then the fix;
- the second, latent bug: a final chunk with the token counts (`usage`) and `choices: []` crashes
  `chunk.choices[0]`;
- `run_tool_loop(..., stream=True)`, a widget that replays a stream chunk by chunk, and parallel calls
  whose fragments interleave.

This lesson follows the section "Tool calling in streaming mode" of the Kimi-K2 guide
(MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`).
""",
        """
## Что вы сделаете

- рассмотрите фрагменты (chunks) потокового ответа: что приходит первым, что приходит по частям и
  где находится причина остановки (`finish_reason`);
- напишете склейку вызовов по `index`, как в руководстве, в виде маленькой функции, а затем
  сделаете то же с помощью `ToolCallAccumulator`;
- запустите потоковый цикл из руководства как есть: сервер воспроизведения, который проверяет
  историю так же, как API OpenAI, ответит **400**, потому что сообщение ассистента (assistant
  message) с вызовами так и не попадает в историю диалога (conversation history); затем исправите
  это;
- найдёте вторую, скрытую ошибку: на последнем фрагменте со статистикой токенов (`usage`), у
  которого `choices: []`, падает `chunk.choices[0]`;
- воспользуетесь `run_tool_loop(..., stream=True)` и виджетом (widget), который проигрывает поток
  фрагмент за фрагментом, и разберёте параллельные вызовы (parallel tool calls), чьи фрагменты
  приходят вперемешку.

Урок следует разделу руководства Kimi-K2 о вызове инструментов при потоковой выдаче
(MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`).
""",
    ),
    md(
        """
## Setup

One cell connects to the model. In replay mode (the default) the answers come from cassettes that
were **synthesized** from the documented wire formats of Moonshot's API, not captured from a real
service; set `LLM_MODE=live` (see [lesson 00](00_start.ipynb)) to stream from a real Kimi-K2
endpoint instead. In replay a stream arrives all at once; with `LLM_REPLAY_PACE=1` set before
starting Jupyter, each chunk waits for the tokens it carries at 55 ms a token, a 7B model's speed
on a desktop CPU ([reference](#reference)), so a stream of this lesson takes 2-4 s.
""",
        """
## Подготовка

Одна ячейка подключается к модели. В режиме воспроизведения (replay), который включён по
умолчанию, ответы берутся из кассет (cassettes), **синтезированных** по документированным
форматам API Moonshot, а не записанных с настоящего сервиса. Чтобы получать поток от настоящей
Kimi-K2, включите режим live (с настоящей моделью): `LLM_MODE=live` (см. [урок 00](00_start.ipynb)).
Сервер воспроизведения отдаёт поток сразу целиком; если запустить Jupyter с `LLM_REPLAY_PACE=1`,
каждый фрагмент ждёт столько, сколько модель писала бы его токены, по 55 мс на токен (скорость
модели на 7B параметров на настольном процессоре, [справка](#reference)), и поток этого урока идёт
2–4 с.
""",
    ),
    code(
        '''
import json

from openai import OpenAI

from helpers import ToolCallAccumulator, ToolRegistry, connect, run_tool_loop, set_language
from helpers.display import format_chunk, show_chunks, show_messages, show_tool_calls
from helpers.widgets import watch_stream

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
# the guide's temperature (left out where the platform locks it), and thinking off: the loop
# below rebuilds assistant messages without the model's reasoning (why that fails: lesson 06)
settings = conn.settings(temperature=0.3, thinking=False)
conn
''',
        ru={"# the guide's temperature (left out where the platform locks it), and thinking off: the loop":
            "# температура из руководства (не передаётся, где платформа её фиксирует), рассуждение выключено:",
            "# below rebuilds assistant messages without the model's reasoning (why that fails: lesson 06)":
            "# цикл ниже собирает сообщения ассистента без рассуждения модели (чем это плохо — урок 06)"},
    ),
    md(
        """
## 1. The tool

Test streaming with a tool whose result depends on its argument: a call glued together wrongly
then shows at once. It is the weather tool of lessons 01 and 02 (a fixed table: the result depends
on `city`), with the guide's schema and a `tool_map`, so only the streaming is new.
""",
        """
## 1. Инструмент

Проверяйте потоковую выдачу на инструменте, результат которого зависит от аргумента: тогда
неверно склеенный вызов сразу заметен. Это инструмент погоды из уроков 01 и 02 (фиксированная
таблица: результат зависит от `city`) с описанием из руководства и `tool_map`, так что новое здесь
только потоковая выдача.
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
tool_map = {"get_weather": get_weather}
''',
    ),
    md(
        """
## 2. What a chunk is

Read a streamed answer chunk by chunk: with `stream=True` each chunk carries only a **delta**, what
is new since the previous chunk. The SDK returns an iterator of `ChatCompletionChunk` objects
instead of one completion. We print each chunk the moment it arrives and keep them all in a list.
""",
        """
## 2. Что такое фрагмент

Читайте потоковый ответ фрагмент за фрагментом: с `stream=True` каждый фрагмент содержит только
**дельту** (delta) — то, что появилось после предыдущего фрагмента. SDK возвращает не один ответ, а
итератор объектов `ChatCompletionChunk`. Будем печатать каждый фрагмент в момент его прихода и
сохранять все в список.
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
stream = client.chat.completions.create(
    model=model_name,
    messages=messages,
    tools=tools,
    tool_choice="auto",
    stream=True,
    **settings,
)
chunks = []
for chunk in stream:  # one line per chunk, printed the moment it arrives
    print(len(chunks), format_chunk(chunk), flush=True)
    chunks.append(chunk)
''',
        ru={"# one line per chunk, printed the moment it arrives":
            "# по строке на фрагмент, печатается сразу, как он пришёл"},
    ),
    md(
        """
Each line shows one chunk's fields that are set. Read it top to bottom:
the first chunk announces the role; the first tool-call delta brings `index`, `id` and the function
`name` with empty `arguments`; then the arguments JSON arrives a few characters at a time; the last
chunk has an empty delta and `finish_reason`.

That last chunk is also the only sign that the stream arrived whole. A connection cut halfway may
raise an error, but it may also just end the stream early, and then the calls you assembled are
half-written. So `finish_reason` has one safe use: if no chunk carried it, do not run anything.
Our fixed loop later in this lesson checks it, and `run_tool_loop` refuses such a stream too.
""",
        """
В каждой строке — заполненные поля одного фрагмента. Читайте сверху вниз:
первый фрагмент сообщает роль; первая дельта вызова содержит `index`, `id` и имя функции `name`
с пустыми `arguments`; затем JSON аргументов приходит по нескольку символов; у последнего
фрагмента дельта пустая, зато есть `finish_reason`.

Этот последний фрагмент — ещё и единственный признак того, что поток дошёл целиком. Если
соединение оборвётся на середине, может возникнуть ошибка, а может поток просто закончится раньше
времени — и собранные вызовы окажутся недописанными. Поэтому у `finish_reason` есть одно надёжное
применение: если ни один фрагмент его не принёс, ничего не запускайте. Наш исправленный цикл
дальше в этом уроке это проверяет, и `run_tool_loop` тоже отказывается от такого потока.
""",
    ),
    md(
        """
The same as an SDK object: an argument fragment is a `ChoiceDeltaToolCall` whose `id` and
`function.name` are `None`. Only `index` says which call it belongs to.
""",
        """
То же самое в виде объекта SDK: часть аргументов — это `ChoiceDeltaToolCall`, у которого `id` и
`function.name` равны `None`. К какому вызову она относится, говорит только `index`.
""",
    ),
    code(
        '''
pieces = [chunk.choices[0].delta.tool_calls[0] for chunk in chunks
          if chunk.choices and chunk.choices[0].delta.tool_calls]
fragment = pieces[min(2, len(pieces) - 1)]  # chunk 3 above; live streams vary
print(fragment.index, fragment.id, fragment.function.name, repr(fragment.function.arguments))
''',
        ru={"# chunk 3 above; live streams vary":
            "# фрагмент 3 выше; в режиме live поток может быть другим"},
    ),
    md(
        """
## 3. Gluing the pieces by `index`

Glue a call together by `index`: append each fragment's `id`, `name` and `arguments` strings to the
call with that `index`. The guide keeps a list of calls and grows it up to `index` when a fragment
starts a new call. Here is the same logic as a
function over a finished stream; it returns the three things a loop needs. Like the guide, it reads
`chunk.choices[0]` without a check (step 5 shows why that matters).
""",
        """
## 3. Склейка частей по `index`

Склеивайте вызов по `index`: строки `id`, `name` и `arguments` из каждой части дописывайте к
вызову с тем же `index`. Руководство ведёт список вызовов и удлиняет его до `index`, когда часть
начинает новый вызов. Вот та
же логика в виде функции над уже полученным потоком; она возвращает три вещи, нужные циклу. Как и
руководство, функция читает `chunk.choices[0]` без проверки (чем это плохо, покажет шаг 5).
""",
    ),
    code(
        '''
def assemble(chunks):
    """Glue a stream's deltas into (content, tool_calls, finish_reason), as the guide does."""
    content, tool_calls, finish_reason = "", [], None
    for chunk in chunks:
        delta = chunk.choices[0].delta  # as in the guide: no check
        content += delta.content or ""
        for piece in delta.tool_calls or []:
            while len(tool_calls) <= piece.index:  # a new call: grow the list
                tool_calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = tool_calls[piece.index]
            call["id"] += piece.id or ""
            call["function"]["name"] += piece.function.name or ""
            call["function"]["arguments"] += piece.function.arguments or ""
        finish_reason = chunk.choices[0].finish_reason or finish_reason
    return content, tool_calls, finish_reason
''',
        ru={
            "# as in the guide: no check": "# как в руководстве: без проверки",
            "# a new call: grow the list": "# новый вызов: расширяем список",
        '"""Glue a stream\'s deltas into (content, tool_calls, finish_reason), as the guide does."""': '"""Склеить дельты потока в (content, tool_calls, finish_reason), как в руководстве."""',
        },
    ),
    code(
        '''
content, tool_calls, finish_reason = assemble(chunks)
print(repr(content), finish_reason)
show_tool_calls(tool_calls)
assert "city" in json.loads(tool_calls[0]["function"]["arguments"])  # glued into valid JSON
''',
        ru={"# glued into valid JSON": "# склеился корректный JSON"},
    ),
    md(
        """
`helpers.ToolCallAccumulator` does the same job and also copes with what real engines send besides
the happy path: chunks without `choices`, deltas without `function`, a missing `index`. Feed it chunk by
chunk; it gives the assistant message ready to append to the history (`content` is `None` when the
model wrote no text, as in the non-streaming API).
""",
        """
`helpers.ToolCallAccumulator` делает то же самое и вдобавок справляется с тем, чего нет в
идеальном случае, но что присылают настоящие движки (engines): фрагменты без `choices`, дельты без
`function`, отсутствующий `index`. Передавайте ему фрагменты по одному, и он отдаст готовое
сообщение ассистента для истории диалога (`content` равно `None`, если модель не написала текста,
как и в API без потоковой выдачи).
""",
    ),
    code(
        '''
accumulator = ToolCallAccumulator()
for chunk in chunks:
    accumulator.add(chunk)
assert accumulator.tool_calls == tool_calls
accumulator.assistant_message()
''',
    ),
    md(
        """
## 4. The guide's loop and the missing assistant message

Append the assistant message that made the calls before their results: the guide's streaming loop
leaves it out. First, a small helper that runs the calls the way lesson 01 taught: unpack the
arguments with `**` and answer each call with a `role: "tool"` message carrying its `tool_call_id`.
""",
        """
## 4. Цикл из руководства и потерянное сообщение ассистента

Добавляйте сообщение ассистента, в котором сделаны вызовы, раньше их результатов: потоковый цикл
из руководства его пропускает. Сначала — маленькая вспомогательная функция, которая выполняет
вызовы так, как учил урок 01: распаковывает аргументы через `**` и отвечает на каждый вызов
сообщением `role: "tool"` с его `tool_call_id`.
""",
    ),
    code(
        '''
def run_tool_calls(tool_calls):
    """Run each call with unpacked arguments; return the role "tool" messages answering them."""
    results = []
    for tool_call in tool_calls:
        name = tool_call["function"]["name"]
        arguments = json.loads(tool_call["function"]["arguments"])
        result = tool_map[name](**arguments)  # unpacked, as in lesson 01
        results.append({"role": "tool", "tool_call_id": tool_call["id"], "name": name,
                        "content": json.dumps(result)})
    return results
''',
        ru={"# unpacked, as in lesson 01": "# распаковка аргументов, как в уроке 01",
        '"""Run each call with unpacked arguments; return the role "tool" messages answering them."""': '"""Выполнить каждый вызов с распакованными аргументами; вернуть ответные сообщения role "tool"."""',
        },
    ),
    md(
        """
Now the guide's streaming loop with our `assemble`. Look at what happens when `finish_reason` is
`tool_calls`: the guide goes straight to

`for tool_call in tool_calls:`

and appends only the tool results. The assistant message that *made* the calls is never appended.
The replay server checks the history as OpenAI's API does (Moonshot's checks it too; vLLM has no
such check of its own), so the second request fails. (One line is ours, not the guide's: at most 3
rounds, so that against a real server that does not check the history the loop cannot keep sending
paid requests.)
""",
        """
Теперь потоковый цикл из руководства с нашей функцией `assemble`. Посмотрите, что происходит,
когда `finish_reason` равен `tool_calls`: руководство сразу переходит к строке

`for tool_call in tool_calls:`

и добавляет в историю только результаты инструментов. Сообщение ассистента, в котором эти вызовы
*сделаны*, не добавляется вовсе. Сервер воспроизведения проверяет историю так же, как API OpenAI
(API Moonshot тоже её проверяет, а у vLLM своей такой проверки нет), поэтому второй запрос
завершается ошибкой. (Одна строка здесь наша, а не из руководства: не больше 3 раундов, чтобы с
настоящим сервером без такой проверки истории цикл не отправлял платные запросы бесконечно.)
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
finish_reason, rounds = None, 0
while (finish_reason is None or finish_reason == "tool_calls") and rounds < 3:  # the bound is ours
    rounds += 1
    stream = client.chat.completions.create(
        model=model_name, messages=messages,
        tools=tools, tool_choice="auto", stream=True, **settings,
    )
    content, tool_calls, finish_reason = assemble(stream)
    if finish_reason == "tool_calls":
        messages.extend(run_tool_calls(tool_calls))  # as in the guide: results only
print(content)
''',
        ru={
            "# as in the guide: results only": "# как в руководстве: только результаты",
            "# the bound is ours": "# ограничение — наше",
        },
        tags=("raises-exception",),
    ),
    md(
        """
`openai.BadRequestError`, HTTP 400. The second request sent a history with a tool result that
answers nothing: message 1 has `role: "tool"`, and no assistant message with `tool_calls` comes
before it.
""",
        """
`openai.BadRequestError`, HTTP 400. Во втором запросе отправлена история, где результат инструмента ни
на что не отвечает: у сообщения 1 `role: "tool"`, а перед ним нет сообщения ассистента с
`tool_calls`.
""",
    ),
    code(
        '''
show_messages(messages)
''',
    ),
    md(
        """
The 400 above is replayed from a synthesized cassette, in OpenAI's wording
([reference](#reference)). A server that does not check the history is worse: it renders the prompt
anyway, and the model reads a result of a call it never made. Each call must be answered, and each
answer must follow the message that made the call. The fix is one line: append the assistant
message, with its `content` and `tool_calls`, **before** the results. We also stop when there are no
tool calls rather than on `finish_reason`, as lesson 02 showed.
""",
        """
Ошибка 400 выше воспроизводится из синтезированной кассеты, в формулировке OpenAI
([справка](#reference)). Сервер без проверки истории ещё опаснее: он всё равно соберёт промпт, и
модель прочитает результат вызова, которого не делала. На каждый вызов нужен ответ, и каждый ответ
должен идти после сообщения, в котором сделан вызов. Исправление — одна строка: добавить сообщение
ассистента с `content` и `tool_calls` **перед** результатами. Заодно будем останавливаться, когда
вызовов нет, а не по `finish_reason`: так учил урок 02.
""",
    ),
    code(
        '''
def streaming_loop(messages, max_rounds=8, **options):
    """The guide's streaming loop, fixed: the assistant message goes in before the results."""
    for _ in range(max_rounds):
        stream = client.chat.completions.create(
            model=model_name, messages=messages,
            tools=tools, tool_choice="auto", stream=True, **settings, **options,
        )
        content, tool_calls, finish_reason = assemble(stream)
        if finish_reason is None:  # no last chunk: the stream was cut, the calls may be too
            raise RuntimeError("The stream ended before its last chunk; ask again.")
        if not tool_calls:  # no calls: this is the final answer
            return content
        # the fix: first the assistant message with the calls, then the results
        messages.append({"role": "assistant", "content": content, "tool_calls": tool_calls})
        messages.extend(run_tool_calls(tool_calls))
    raise RuntimeError(f"Still calling tools after {max_rounds} rounds.")
''',
        ru={
            '"Still calling tools after {max_rounds} rounds."':
                '"Модель всё ещё вызывает инструменты после {max_rounds} раундов."',
            '"The stream ended before its last chunk; ask again."':
                '"Поток оборвался до последнего фрагмента; повторите запрос."',
            "# no last chunk: the stream was cut, the calls may be too":
                "# нет последнего фрагмента: поток оборван, вызовы могут быть недописаны",
            "# no calls: this is the final answer": "# нет вызовов: это окончательный ответ",
            "# the fix: first the assistant message with the calls, then the results":
                "# исправление: сначала сообщение ассистента с вызовами, потом результаты",
        '"""The guide\'s streaming loop, fixed: the assistant message goes in before the results."""': '"""Потоковый цикл из руководства, исправленный: сообщение ассистента идёт в историю раньше результатов."""',
        },
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
print(streaming_loop(messages))
show_messages(messages)
''',
    ),
    md(
        """
Now the history reads as a conversation: the question, the assistant's call, the result answering
that call by `tool_call_id`; the final answer is printed above it.

## 5. The latent bug: the usage chunk

Skip a chunk whose `choices` is empty: when you ask for token usage, a stream's last chunk has
`choices: []`. A stream does not report token usage unless you ask. With
`stream_options={"include_usage": True}`
the OpenAI API (and vLLM and SGLang, which follow it) sends one more chunk after the last delta:
`usage` filled in and `choices: []`. The replay server does the same. The guide's loop reads

`delta = chunk.choices[0].delta`

for every chunk, and so does our `assemble`:
""",
        """
Теперь история читается как разговор: вопрос, вызов от ассистента и результат, который отвечает
на этот вызов по `tool_call_id`; окончательный ответ напечатан над ними.

## 5. Скрытая ошибка: фрагмент со статистикой

Пропускайте фрагмент с пустым `choices`: если запросить статистику токенов, последний фрагмент
потока приходит с `choices: []`. Поток не сообщает, сколько потрачено токенов, пока вы об этом не
попросите. С
`stream_options={"include_usage": True}` API OpenAI (а вслед за ним vLLM и SGLang) после последней
дельты присылает ещё один фрагмент: `usage` заполнено, а `choices: []`. Сервер воспроизведения
делает так же. Цикл из руководства для каждого фрагмента выполняет

`delta = chunk.choices[0].delta`

и наша `assemble` тоже:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
streaming_loop(messages, stream_options={"include_usage": True})
''',
        tags=("raises-exception",),
    ),
    md(
        """
`IndexError: list index out of range`: the empty `choices` list of the final chunk. Here are the
last two chunks of that stream:
""",
        """
`IndexError: list index out of range` — это пустой список `choices` последнего фрагмента. Вот два
последних фрагмента этого потока:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
stream = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto",
    stream=True, **settings, stream_options={"include_usage": True},
)
usage_chunks = list(stream)
show_chunks(usage_chunks[-2:])
''',
    ),
    md(
        """
The fix is a guard: skip a chunk when `chunk.choices` is empty. `streaming_loop` looks `assemble`
up by name each time it runs, so redefining `assemble` fixes the loop too.
""",
        """
Исправление — проверка: пропускать фрагмент, если `chunk.choices` пуст. `streaming_loop` ищет
`assemble` по имени при каждом запуске, поэтому новое определение `assemble` чинит и цикл.
""",
    ),
    code(
        '''
def assemble(chunks):
    """Glue a stream's deltas into (content, tool_calls, finish_reason); skip usage chunks."""
    content, tool_calls, finish_reason = "", [], None
    for chunk in chunks:
        if not chunk.choices:  # the usage chunk: choices == []
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for piece in delta.tool_calls or []:
            while len(tool_calls) <= piece.index:
                tool_calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = tool_calls[piece.index]
            call["id"] += piece.id or ""
            if piece.function:  # some engines send a delta without function
                call["function"]["name"] += piece.function.name or ""
                call["function"]["arguments"] += piece.function.arguments or ""
        finish_reason = chunk.choices[0].finish_reason or finish_reason
    return content, tool_calls, finish_reason
''',
        ru={
            "# the usage chunk: choices == []": "# фрагмент со статистикой: choices == []",
            "# some engines send a delta without function":
                "# некоторые движки присылают дельту без function",
        '"""Glue a stream\'s deltas into (content, tool_calls, finish_reason); skip usage chunks."""': '"""Склеить дельты потока в (content, tool_calls, finish_reason); пропустить фрагменты со статистикой."""',
        },
    ),
    code(
        '''
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
print(streaming_loop(messages, stream_options={"include_usage": True}))
''',
    ),
    md(
        """
The new `assemble` also checks `piece.function` before reading it: some engines send a tool-call
delta without `function`, and the guide reads that field unguarded too. `ToolCallAccumulator` has
had both guards all along.

## 6. The helper: `run_tool_loop(..., stream=True)`

Use `run_tool_loop(..., stream=True)` for a streamed loop: it has all of this lesson's fixes built
in. The loop from lesson 02 takes `stream=True`: it assembles each answer with
`ToolCallAccumulator`, appends the assistant message before the results and runs the tools through a
`ToolRegistry` (arguments checked and unpacked). It sends the same requests as our fixed loop.
""",
        """
Новая версия `assemble` проверяет и `piece.function`, прежде чем его читать: некоторые движки
присылают дельту вызова без `function`, а руководство и это поле читает без проверки. В
`ToolCallAccumulator` обе проверки есть с самого начала.

## 6. Готовая функция: `run_tool_loop(..., stream=True)`

Для потокового цикла берите `run_tool_loop(..., stream=True)`: все исправления этого урока в нём уже
есть. Цикл из урока 02 принимает `stream=True`: он собирает каждый ответ через
`ToolCallAccumulator`, добавляет сообщение ассистента перед результатами и выполняет инструменты
через `ToolRegistry` (аргументы проверяются и распаковываются). Запросы он отправляет те же, что наш
исправленный цикл.
""",
    ),
    code(
        '''
registry = ToolRegistry()
registry.register(get_weather, schema=tools[0])

messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
answer = run_tool_loop(
    client, messages, registry, model=model_name, stream=True, tool_choice="auto", **settings
)
print(answer["content"])
''',
    ),
    md(
        """
## 7. Watching a stream grow

Watch a stream grow with `watch_stream(stream)`: it shows a viewer at once and redraws it after
every chunk. This answer has two calls after a sentence of text: you see the text, then call 0, then
call 1 grow fragment by fragment as they arrive (at a model's pace with `LLM_REPLAY_PACE=1`).
`watch_stream` returns the chunks, like `list(stream)`;
afterwards press Play or move the slider to watch them again. (A widget needs a running kernel: run
the cell to see it.)
""",
        """
## 7. Как растёт поток

Следите за ростом потока через `watch_stream(stream)`: функция сразу показывает окно просмотра и
перерисовывает его после каждого фрагмента. В этом ответе два вызова после одной фразы текста:
текст, потом вызов 0, потом вызов 1 растут по мере того, как приходят фрагменты (с
`LLM_REPLAY_PACE=1` — в темпе настоящей модели). `watch_stream` возвращает фрагменты, как
`list(stream)`; потом нажмите Play или двигайте ползунок, чтобы посмотреть их ещё раз.
(Виджету нужно работающее ядро: выполните ячейку, чтобы его увидеть.)
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Compare the weather in Beijing and Shanghai today."}]
stream = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto",
    stream=True, **settings,
)
parallel_chunks = watch_stream(stream)  # the view grows as the chunks arrive
''',
        ru={"# the view grows as the chunks arrive": "# окно растёт по мере прихода фрагментов"},
        tags=("nbval-ignore-output",),
    ),
    md(
        """
Here every fragment of call 0 arrives before call 1 starts. The protocol does not promise that.

## 8. Parallel calls whose fragments interleave

Glue fragments by `index`, never onto the latest call: the fragments of two calls may take turns.
In the next answer they do. Look at the `tool_calls[i]` column.
(This stream is synthesized to show what the protocol allows, whether or not your engine does it;
a real engine may send one call after the other, and then both lines below come out right.)
""",
        """
Здесь все части вызова 0 приходят раньше, чем начинается вызов 1. Протокол этого не обещает.

## 8. Параллельные вызовы вперемешку

Склеивайте части по `index`, а не к последнему вызову: части двух вызовов могут чередоваться. В
следующем ответе так и происходит. Посмотрите на столбец `tool_calls[i]`.
(Этот поток синтезирован, чтобы показать, что допускает протокол, даже если ваш движок так не
делает; настоящий сервер может присылать вызовы один за другим, и тогда обе строки ниже окажутся
правильными.)
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Compare the weather in Shanghai and Moscow today."}]
stream = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto",
    stream=True, **settings,
)
interleaved = list(stream)
show_chunks(interleaved)
''',
    ),
    md(
        """
A shortcut you may see in quick scripts glues each fragment onto the *latest* call. It works on the
first stream and breaks here:
""",
        """
В наспех написанных скриптах встречается упрощение: каждая часть приклеивается к *последнему*
начатому вызову. На первом потоке это работает, а здесь ломается:
""",
    ),
    code(
        '''
def glue_to_latest(chunks):
    """A wrong shortcut: ignore `index` and append every fragment to the latest call."""
    calls = []
    for chunk in chunks:
        for piece in (chunk.choices[0].delta.tool_calls if chunk.choices else None) or []:
            if piece.id:
                calls.append({"id": piece.id, "name": piece.function.name, "arguments": ""})
            calls[-1]["arguments"] += piece.function.arguments or ""  # index is ignored
    return [call["arguments"] for call in calls]


print(glue_to_latest(parallel_chunks))
print(glue_to_latest(interleaved))
''',
        ru={"# index is ignored": "# index не учитывается",
        '"""A wrong shortcut: ignore `index` and append every fragment to the latest call."""': '"""Неверное упрощение: не смотреть на `index` и дописывать каждый фрагмент к последнему вызову."""',
        },
    ),
    md(
        """
The second call swallowed the fragments of the first, and neither string is valid JSON. Gluing by
`index` gets both calls right, and the whole loop goes through:
""",
        """
Второй вызов проглотил части первого, и ни одна из строк не является корректным JSON. Склейка по
`index` собирает оба вызова верно, и весь цикл доходит до ответа:
""",
    ),
    code(
        '''
content, tool_calls, finish_reason = assemble(interleaved)
show_tool_calls(tool_calls)

messages = [{"role": "user", "content": "Compare the weather in Shanghai and Moscow today."}]
print(streaming_loop(messages))  # both results reach the model before the next request
''',
        ru={"# both results reach the model before the next request":
            "# оба результата уходят модели до следующего запроса"},
    ),
    md(
        """
## Summary

- A streamed answer is a sequence of chunks; each carries a delta. A tool call's first delta has
  `index`, `id` and `name`; later ones only `index` and an argument fragment; `finish_reason` comes
  in the last chunk that has `choices`.
- Glue fragments by `index`, never by arrival order: parallel calls may interleave.
- **The guide's defect:** its streaming loop never appends the assistant message with `tool_calls`
  before the `role: "tool"` results; servers that check the history (OpenAI's and Moonshot's APIs,
  for example) refuse the request (400).
  Append `{"role": "assistant", "content": content, "tool_calls": tool_calls}` first.
- **The latent defect:** `chunk.choices[0]` fails on the usage chunk (`choices: []`) that
  `stream_options={"include_usage": True}` adds. Guard with `if chunk.choices`.
- In your own code: `ToolCallAccumulator` for one stream, `run_tool_loop(..., stream=True)` for the
  loop.
- A thinking model (Kimi K2.6 or K2.7-Code, current ids on the Moonshot platform) also streams its
  reasoning, and the assistant message you append must carry it back: lesson 06 shows the 400 this
  loop would get on its second round, and the fix (`accumulator.assistant_message()`).
""",
        """
## Итоги

- Потоковый ответ — это последовательность фрагментов, в каждом — дельта. Первая дельта вызова
  содержит `index`, `id` и `name`, следующие — только `index` и часть аргументов; `finish_reason`
  приходит в последнем фрагменте, где есть `choices`.
- Склеивайте части по `index`, а не по порядку прихода: параллельные вызовы могут чередоваться.
- **Ошибка руководства:** потоковый цикл не добавляет сообщение ассистента с `tool_calls` перед
  результатами `role: "tool"`; серверы, которые проверяют историю (например, API OpenAI и
  Moonshot), отклоняют такой запрос (400).
  Сначала добавляйте `{"role": "assistant", "content": content, "tool_calls": tool_calls}`.
- **Скрытая ошибка:** `chunk.choices[0]` падает на фрагменте со статистикой (`choices: []`),
  который добавляет `stream_options={"include_usage": True}`. Проверяйте `if chunk.choices`.
- В своём коде: `ToolCallAccumulator` для одного потока, `run_tool_loop(..., stream=True)` для
  всего цикла.
- Модель с рассуждением (Kimi K2.6 или K2.7-Code — сегодняшние модели платформы Moonshot) присылает в потоке
  ещё и рассуждение, и добавляемое в историю сообщение ассистента должно вернуть его серверу. В
  уроке 06 этот цикл получает 400 во втором раунде, там же показано исправление
  (`accumulator.assistant_message()`).
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

- **Where the answers come from.** Every answer of this lesson is replayed from
  `data/recordings/03_streaming.json`, which `python -m helpers.replay synthesize` wrote from the
  documented streaming format of Moonshot's API (engine profile `moonshot`); no real service was
  called, and the chunks' sizes and delays are made up.
- **The guide.** The lesson follows the section "Tool calling in streaming mode" of
  MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`; its loop is run as published, with one bound on
  the rounds added.
- **The 400 of step 4.** The replay server checks the history as OpenAI's API does and answers in
  OpenAI's wording as it is quoted publicly, misspelling "preceeding" included
  (`helpers/replay/validation.py`). For the same mistake Moonshot documents
  `tool_call_id not found`; no Moonshot answer was captured for this lesson.
- **The pace.** `LLM_REPLAY_PACE=1` waits 54.74 ms per written token and 29.70 ms per prompt token:
  llama.cpp running a 7B model on an i9-13900K with 8 threads, as one of its maintainers measured
  it (ggml-org/llama.cpp issue #34, comment of 2023-08-12). Tokens are counted without a real
  vocabulary, so the pace is at most that slow (`helpers/replay/pacing.py`).
- **The interleaved stream of step 8** is synthesized to show what the protocol allows; no engine
  is known to send the fragments of two calls in turns.

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Откуда ответы.** Все ответы этого урока воспроизводятся из `data/recordings/03_streaming.json`,
  который команда `python -m helpers.replay synthesize` написала по документированному формату
  потоковой выдачи API Moonshot (профиль движка `moonshot`); настоящий сервис не вызывался, а
  размеры фрагментов и паузы между ними придуманы.
- **Руководство.** Урок следует разделу «Tool calling in streaming mode» руководства
  MoonshotAI/Kimi-K2, `docs/tool_call_guidance.md`; его цикл запускается как есть, добавлено только
  ограничение числа раундов.
- **Ошибка 400 из шага 4.** Сервер воспроизведения проверяет историю так же, как API OpenAI, и
  отвечает в формулировке OpenAI, как её цитируют в открытых источниках, вместе с опечаткой
  «preceeding» (`helpers/replay/validation.py`). Для той же ошибки Moonshot документирует
  `tool_call_id not found`; ответов Moonshot для этого урока не записывали.
- **Темп.** `LLM_REPLAY_PACE=1` ждёт 54,74 мс на каждый написанный токен и 29,70 мс на токен
  промпта: так llama.cpp выполнял модель на 7B параметров на i9-13900K в 8 потоков по замеру одного
  из его сопровождающих (ggml-org/llama.cpp, issue #34, комментарий от 2023-08-12). Токены
  считаются без настоящего словаря, поэтому темп не медленнее этого (`helpers/replay/pacing.py`).
- **Поток с чередованием из шага 8** синтезирован, чтобы показать, что допускает протокол; движки,
  которые присылают части двух вызовов по очереди, неизвестны.

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Assemble tool calls from chunks

Write `assemble_tool_calls(chunks)` that returns the list of tool calls (dicts shaped like
`{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}`) from a list of SDK
chunks. The check feeds it streams with interleaved calls, a usage chunk and a delta without
`function`.
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Соберите вызовы из фрагментов

Напишите `assemble_tool_calls(chunks)`, которая по списку фрагментов SDK возвращает список
вызовов (словари вида
`{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}`). Проверка подаёт ей
потоки с чередующимися вызовами, фрагментом статистики и дельтой без `function`.
""",
    ),
    code(
        '''
from helpers.exercises.n03 import broken_history, check_assemble, check_history, check_usage


def assemble_tool_calls(chunks):
    tool_calls = []
    # your code here
    return tool_calls
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_assemble(assemble_tool_calls)
''',
    ),
    code(
        '''
def assemble_tool_calls(chunks):
    tool_calls = []
    for chunk in chunks:
        if not chunk.choices:
            continue
        for piece in chunk.choices[0].delta.tool_calls or []:
            while len(tool_calls) <= piece.index:
                tool_calls.append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = tool_calls[piece.index]
            call["id"] += piece.id or ""
            if piece.function:
                call["function"]["name"] += piece.function.name or ""
                call["function"]["arguments"] += piece.function.arguments or ""
    return tool_calls


check_assemble(assemble_tool_calls)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. Repair a broken history

`broken` is what the guide's loop sends in its second request: the question and a tool result, with
no assistant message between them.
""",
        """
### Упражнение 2. Почините сломанную историю

`broken` — то, что цикл из руководства отправляет во втором запросе: вопрос и результат
инструмента без сообщения ассистента между ними.
""",
    ),
    code(
        '''
broken = broken_history()
show_messages(broken)
''',
    ),
    md(
        """
Write `repair(messages, content, tool_calls)` that returns a **new** list with the assistant message
`{"role": "assistant", "content": content, "tool_calls": tool_calls}` inserted right before the
first `role: "tool"` message that answers one of `tool_calls` (its `tool_call_id` is a call's `id`;
an earlier round's results stay where they are). The check calls `repair(broken, "", tool_calls)`
with the call `get_weather:0` that the result answers, then runs the same history checks as the
replay server.
""",
        """
Напишите `repair(messages, content, tool_calls)`, которая возвращает **новый** список, где
сообщение ассистента `{"role": "assistant", "content": content, "tool_calls": tool_calls}`
вставлено прямо перед первым сообщением `role: "tool"`, которое отвечает на один из `tool_calls`
(его `tool_call_id` равен `id` вызова; результаты более раннего раунда остаются на месте).
Проверка вызывает
`repair(broken, "", tool_calls)` с вызовом `get_weather:0`, на который отвечает результат, и
проверяет историю так же, как сервер воспроизведения.
""",
    ),
    code(
        '''
def repair(messages, content, tool_calls):
    # your code here
    return list(messages)
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_history(repair)
''',
    ),
    code(
        '''
def repair(messages, content, tool_calls):
    assistant = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    ids = {tool_call["id"] for tool_call in tool_calls}
    first_tool = next(i for i, m in enumerate(messages) if m.get("tool_call_id") in ids)
    return messages[:first_tool] + [assistant] + messages[first_tool:]


check_history(repair)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 3. Read the usage safely

Write `total_tokens(chunks)` that returns `usage.total_tokens` from a stream's chunks, or `None` when
the stream has no usage chunk. It must not fail on `choices: []`.
""",
        """
### Упражнение 3. Аккуратно прочитайте статистику

Напишите `total_tokens(chunks)`, которая возвращает `usage.total_tokens` из фрагментов потока или
`None`, если фрагмента со статистикой нет. Функция не должна падать на `choices: []`.
""",
    ),
    code(
        '''
def total_tokens(chunks):
    # your code here
    return 0
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_usage(total_tokens)
''',
    ),
    code(
        '''
def total_tokens(chunks):
    for chunk in chunks:
        if chunk.usage:
            return chunk.usage.total_tokens
    return None


check_usage(total_tokens)
''',
        hidden=True,
    ),
    md(
        """
## Exit quiz

Six questions on lessons 00-03, one letter each. Put your letters in `answers` and run the check;
it names the first question that is not right yet and the step to reread.
""",
        """
## Итоговый тест

Шесть вопросов по урокам 00-03, на каждый — одна буква. Впишите буквы в `answers` и запустите
проверку: она назовёт первый вопрос, ответ на который пока неверен, и шаг, который стоит перечитать.
""",
    ),
    code(
        '''
from helpers.exercises import quiz

quiz.show_questions()
''',
    ),
    code(
        '''
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: ""}
''',
    ),
    code(
        '''
quiz.check_quiz(answers)
''',
    ),
    code(
        '''
answers = {1: "b", 2: "a", 3: "c", 4: "b", 5: "a", 6: "c"}
''',
        hidden=True,
    ),
    code(
        '''
quiz.check_quiz(answers)
''',
    ),
    md(
        """
[Next: 04 Parsing tool calls by hand](04_manual_parsing.ipynb)
""",
        """
[Дальше: 04 Ручной разбор вызовов инструментов](04_manual_parsing.ipynb)
""",
    ),
])
