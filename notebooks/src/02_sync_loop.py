"""Lesson 02: the synchronous tool-call loop, engines that disagree, parallel calls, errors, limits."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "The tool-call loop", "ru": "Цикл вызова инструментов"},
    "summary": {
        "en": "`client.chat.completions.create` with tools, `finish_reason`, the loop, engines that disagree, parallel calls, errors, round limits",
        "ru": "`client.chat.completions.create` с инструментами, `finish_reason`, цикл, расхождения между движками, параллельные вызовы, ошибки, лимит раундов",
    },
    "minutes_reading": (25, 30),
    "minutes_exercises": (15, 20),
    "timed": True,
    "in_class_path": True,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_needs_tools", "check_answer_calls", "check_tool_content"),
}

LOOP = '''
def tool_loop(client, messages, max_rounds=8):
    """Ask, run the requested tools, repeat; stop when the reply has no tool calls."""
    for _ in range(max_rounds):
        completion = client.chat.completions.create(
            model=model_name, messages=messages, tools=tools,
            tool_choice="auto", **settings,
        )
        message = completion.choices[0].message
        messages.append(message)
        if not message.tool_calls:  # no calls: this is the answer, whatever finish_reason says
            return message
        for tool_call in message.tool_calls:
            arguments = json.loads(tool_call.function.arguments)
            tool_result = tool_map[tool_call.function.name](**arguments)
            messages.append({"role": "tool", "tool_call_id": tool_call.id,
                             "name": tool_call.function.name,
                             "content": json.dumps(tool_result)})
    raise RuntimeError(f"Still calling tools after {max_rounds} rounds.")
'''

GUIDE_LOOP = '''
def guide_loop(client, messages):
    """The guide's loop (with the ** fix): repeat while finish_reason == "tool_calls"."""
    finish_reason = None
    while finish_reason is None or finish_reason == "tool_calls":
        completion = client.chat.completions.create(
            model=model_name, messages=messages, tools=tools,
            tool_choice="auto", **settings,
        )
        choice = completion.choices[0]
        finish_reason = choice.finish_reason
        if finish_reason == "tool_calls":
            messages.append(choice.message)
            for tool_call in choice.message.tool_calls:
                arguments = json.loads(tool_call.function.arguments)
                tool_result = tool_map[tool_call.function.name](**arguments)
                messages.append({"role": "tool", "tool_call_id": tool_call.id,
                                 "name": tool_call.function.name,
                                 "content": json.dumps(tool_result)})
    return choice.message
'''

LESSON = Lesson("02_sync_loop", [
    md("""
# The tool-call loop

**Goal:** write the loop that lets a model call your tools until it can answer, and make it work on
every server, not only the one you tested.
""", """
# Цикл вызова инструментов

**Цель:** написать цикл, в котором модель вызывает ваши инструменты, пока не сможет ответить, и
добиться, чтобы он работал на любом сервере, а не только на том, где вы его проверяли.
"""),
    md("""
## What you will build

The guide's loop with `client.chat.completions.create`, step by step; the
same dialog replayed from four engine profiles, where the guide's stop rule fails on one of them; a
loop with a stop rule that works everywhere; and `run_tool_loop`, the same logic as a helper, with
parallel calls, a tool error the model recovers from, and a round limit.
""", """
## Что вы сделаете

Вы шаг за шагом напишете цикл из руководства на `client.chat.completions.create`; проведёте тот же
диалог через четыре разных движка (engines) и увидите, что на одном из них правило остановки из
руководства ломается; напишете цикл с правилом остановки, которое работает везде; и освоите
`run_tool_loop` — ту же логику в виде готовой функции, с параллельными вызовами (parallel tool
calls), ошибкой инструмента, после которой модель исправляется, и лимитом раундов.
"""),
    md("""
## Setup

In replay mode the answers come from cassettes synthesized from the documented formats of Kimi-K2
and of each engine (not captures of a real service); `LLM_MODE=live` talks to a real model.
""", """
## Подготовка

В режиме воспроизведения (replay) ответы берутся из кассет (cassettes), синтезированных по
документированным форматам Kimi-K2 и каждого движка (это не записи ответов настоящего сервиса);
`LLM_MODE=live` включает режим live (с настоящей моделью).
"""),
    code('''
import json

from openai import OpenAI
from helpers import connect, set_language
from helpers.display import compare_table, show_messages, show_tool_calls

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
settings = conn.settings(temperature=0.3)  # the guide's temperature; left out where the platform locks it
conn
''', ru={"# the guide's temperature; left out where the platform locks it": '# температура из руководства; не передаётся, где платформа её фиксирует'}),
    md("""
## 1. The tool from lesson 01

This lesson reuses lesson 01's tool unchanged: the weather function, its schema and the `tool_map`.
""", """
## 1. Инструмент из урока 01

Инструмент берём из урока 01 без изменений: функцию погоды, её схему и `tool_map`.
"""),
    code('''
WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict:
    """Get weather information. Call this tool when the user needs to get weather information

    Args:
        city: City name
    """
    return {"city": city, "weather": WEATHER.get(city, "unknown")}
'''),
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
tool_map = {"get_weather": get_weather}
'''),
    md("""
## 2. One request: `finish_reason` and `tool_calls`

Read two fields of the reply: `finish_reason` says why the model stopped, `message.tool_calls`
lists what to run. Here is the guide's question, sent with the guide's settings:
""", """
## 2. Один запрос: `finish_reason` и `tool_calls`

В ответе читайте два поля: причину остановки (`finish_reason`) и `message.tool_calls` — список
того, что нужно выполнить. Вопрос и настройки запроса — из руководства:
"""),
    code('''
user_message = {"role": "user", "content":
                "What's the weather like in Beijing today? Let's check using the tool."}
messages = [user_message]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools,
    tool_choice="auto", **settings,
)
choice = completion.choices[0]
print(choice.finish_reason)
show_tool_calls(choice.message.tool_calls)
'''),
    md("""
These two fields of `choice` drive the loop. Here `finish_reason` is `"tool_calls"`: the model is
waiting for tool results. `choice.message.tool_calls` lists what to run: an `id`, the
function's name and the arguments as JSON text.
""", """
На этих двух полях `choice` и держится цикл. Здесь `finish_reason` равен `"tool_calls"`: модель
ждёт результатов инструментов. `choice.message.tool_calls` перечисляет, что нужно выполнить:
`id`, имя функции и аргументы JSON-текстом.
"""),
    md("""
## 3. Answer the calls

Append the assistant message with the calls first, then one `role: "tool"` message per call. The
history must show the model its own request before the answers to it. `tool_call_id` says which
call a result answers; `content` is text, so the result is encoded as JSON. `name` is not part of
OpenAI's own format, but the guide sends it, and Kimi-K2's chat template writes it into the tool
turn (lesson 04). `choice.message` is an SDK object; the SDK accepts it back in `messages` as is.
""", """
## 3. Отвечаем на вызовы

Сначала добавьте сообщение ассистента (assistant message) с вызовами, затем по одному сообщению
с результатом (`role: "tool"`) на каждый вызов. В истории диалога (conversation history) модель
должна увидеть свой запрос раньше, чем ответы на него. `tool_call_id` указывает, на какой
вызов отвечает результат; `content` — это текст, поэтому результат кодируем в JSON. Поля `name` в
формате OpenAI нет, но руководство его передаёт, а шаблон чата Kimi-K2 вписывает его в заголовок
ответа инструмента (урок 04). `choice.message` — объект SDK; SDK принимает его обратно в `messages`
как есть.
"""),
    code('''
messages.append(choice.message)
for tool_call in choice.message.tool_calls:
    arguments = json.loads(tool_call.function.arguments)
    tool_result = tool_map[tool_call.function.name](**arguments)
    messages.append({"role": "tool", "tool_call_id": tool_call.id,
                     "name": tool_call.function.name, "content": json.dumps(tool_result)})
show_messages(messages)
'''),
    md("""
Now the same request again, with the longer history. The model has what it needs and answers in
text; there are no tool calls this time.
""", """
Теперь тот же запрос ещё раз, с удлинившейся историей. У модели есть всё нужное, и она отвечает
текстом; вызовов на этот раз нет.
"""),
    code('''
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools,
    tool_choice="auto", **settings,
)
choice = completion.choices[0]
print(choice.finish_reason, "|", choice.message.content)
'''),
    md("""
## 4. The loop, as in the guide

The guide's loop repeats steps 2 and 3 while `finish_reason` is `"tool_calls"`, and stops on any
other value. It means to stop when the model no longer asks for tools. Here is that loop as a
function (with the `**` fix from lesson 01). Like the guide's code, it takes `model_name`, `tools`
and `tool_map` from the cells above.
""", """
## 4. Цикл, как в руководстве

Цикл из руководства повторяет шаги 2 и 3, пока `finish_reason` равен `"tool_calls"`, и
останавливается при любом другом значении. Задумано, что так цикл остановится, когда модель
перестанет просить инструменты. Вот этот цикл в виде функции (с
исправлением `**` из урока 01). Как и код руководства, она берёт `model_name`, `tools` и `tool_map`
из ячеек выше.
"""),
    code(GUIDE_LOOP),
    code('''
messages = [user_message]
answer = guide_loop(client, messages)
print(answer.content)
'''),
    md("""
## 5. The same dialog on four engines

Expect engines to differ in the details of the same call: its id, `content` and `finish_reason`.
A comment in the guide's own code warns that `finish_reason` at the end of tool calls can differ
between engines. The replay server can answer like four serving stacks (engine profiles): the
Moonshot platform (the default), vLLM and SGLang with the `kimi_k2` parser, and `stop_with_calls`,
modelled on a reported case: vLLM answering a forced `tool_choice` (a named tool, or `"required"`)
with the calls parsed but `finish_reason="stop"` (the sources are in the [reference](#reference)).
`connect(..., engine=...)` picks one. In live mode `engine` is ignored: all four clients talk to
your one server, so the comparisons in sections 5 and 6 print a one-line note instead of running
(`conn.replay_only(...)` is `True` only in replay mode).
""", """
## 5. Один диалог на четырёх движках

Будьте готовы к тому, что движки расходятся в деталях одного и того же вызова: id, `content` и
`finish_reason`. Комментарий в коде самого руководства предупреждает: `finish_reason` в конце
вызовов у разных движков может быть разным. Сервер воспроизведения умеет отвечать как четыре разных
сервера — профили движков (engine profiles): платформа Moonshot (по умолчанию), vLLM и SGLang с
парсером `kimi_k2` и профиль `stop_with_calls`. Он повторяет случай из отчётов об ошибках: vLLM
отвечал на принудительный `tool_choice` (конкретный инструмент или `"required"`) разобранными
вызовами, но с `finish_reason="stop"` (источники — в [справке](#reference)). Профиль
выбирается через `connect(..., engine=...)`. В режиме live `engine` не учитывается: все четыре
клиента обращаются к вашему единственному серверу, поэтому сравнения из разделов 5 и 6 вместо
запуска печатают короткую пометку (`conn.replay_only(...)` возвращает `True` только в режиме
воспроизведения).
"""),
    code('''
clients = {}
for engine in ["moonshot", "vllm", "sglang", "stop_with_calls"]:
    engine_conn = connect("kimi", engine=engine)
    clients[engine] = OpenAI(
        base_url=engine_conn.endpoint,
        api_key=engine_conn.api_key,
        http_client=engine_conn.http_client(),
    )
'''),
    md("""
The first request of the dialog, sent to each engine:
""", """
Первый запрос диалога, отправленный каждому движку:
"""),
    code('''
if conn.replay_only("the four engine profiles are recordings"):
    rows = []
    for engine, engine_client in clients.items():
        completion = engine_client.chat.completions.create(
            model=model_name, messages=[user_message], tools=tools,
            tool_choice="auto", **settings,
        )
        choice = completion.choices[0]
        rows.append((engine, choice.finish_reason, repr(choice.message.content),
                     choice.message.tool_calls[0].id))
    compare_table(rows, ["engine", "finish_reason", "content", "tool call id"])
''', ru={'"the four engine profiles are recordings"': '"четыре профиля движков есть только в кассетах"',
         '"engine", "finish_reason", "content", "tool call id"':
         '"движок", "finish_reason", "content", "id вызова"'}),
    md("""
Every engine returned the same call, yet the details differ: the Moonshot platform writes ids like
`get_weather:0`, vLLM and SGLang use the model's own format `functions.get_weather:0`; `content`
is `''` or `None`; and `stop_with_calls` says `"stop"` although there is a call to run. Never parse the id
for information, and never rely on `finish_reason` alone. (These answers are synthesized from each
engine's documented behaviour, not measured, and details change between versions: the `sglang`
profile sends `None` as late-2025 SGLang did, while current SGLang sends `''`.)

## 6. Where the guide's stop rule fails

A loop that stops on `finish_reason` quits too early when an engine sends `"stop"` with a call:
the tool never runs. Run the guide's loop on `stop_with_calls`:
""", """
Все движки вернули один и тот же вызов, но детали разные: платформа Moonshot пишет id вида
`get_weather:0`, а у vLLM и SGLang id в формате самой модели, `functions.get_weather:0`; `content`
равен `''` или `None`; а `stop_with_calls` сообщает `"stop"`, хотя вызов выполнить нужно. Не извлекайте
сведения из id и не полагайтесь на один только `finish_reason`. (Эти ответы синтезированы по
документированному поведению движков, а не измерены, и детали меняются от версии к версии: профиль
`sglang` отдаёт `None`, как SGLang в конце 2025 года, а нынешний SGLang отдаёт `''`.)

## 6. Где ломается правило остановки из руководства

Цикл, который останавливается по `finish_reason`, выходит слишком рано, если движок присылает
`"stop"` вместе с вызовом: инструмент так и не выполняется. Запустим цикл из руководства на
`stop_with_calls`:
"""),
    code('''
if conn.replay_only("the stop_with_calls engine is a recorded profile"):
    messages = [user_message]
    answer = guide_loop(clients["stop_with_calls"], messages)
    print(answer.content)
    print("messages in the history:", len(messages), "(the tool never ran)")
    show_tool_calls(answer.tool_calls)
''', ru={'"the stop_with_calls engine is a recorded profile"':
         '"профиль stop_with_calls есть только в кассетах"',
         '"messages in the history:"': '"сообщений в истории:"',
         '"(the tool never ran)"': '"(инструмент так и не запустился)"'}),
    md("""
The loop saw `"stop"` and quit after the first request: the tool never ran, and the "answer" has
no text, so the guide's final `print(choice.message.content)` would print just `None`. The call was
right there in `answer.tool_calls`.

## 7. A stop rule that works everywhere

Stop the loop when the reply has no `tool_calls`, whatever `finish_reason` says. Look at the
message itself: if it carries tool calls, run them and ask again; if it carries none, it is the
answer. The loop also gets a round limit, so a model that keeps calling
tools cannot loop forever.
""", """
Цикл увидел `"stop"` и вышел после первого же запроса: инструмент так и не выполнился, в «ответе»
нет текста, и финальный `print(choice.message.content)` из руководства напечатал бы просто `None`.
А вызов всё это время лежал в `answer.tool_calls`.

## 7. Правило остановки, которое работает везде

Останавливайте цикл, когда в ответе нет `tool_calls`, что бы ни говорил `finish_reason`. Смотрите
на само сообщение: если в нём есть вызовы, выполните их и спросите снова; если вызовов нет, это и
есть ответ. Заодно у цикла появляется лимит раундов, чтобы
он не длился вечно, если модель без конца вызывает инструменты.
"""),
    code(LOOP, ru={"# no calls: this is the answer, whatever finish_reason says":
                   "# вызовов нет: это ответ, что бы ни говорил finish_reason",
                   '"Still calling tools after {max_rounds} rounds."':
                   '"Модель всё ещё вызывает инструменты после {max_rounds} раундов."'}),
    md("""
The same dialog on all four engines now ends with an answer:
""", """
Теперь тот же диалог на всех четырёх движках заканчивается ответом:
"""),
    code('''
for engine, engine_client in clients.items():  # live mode: your one server, four times
    answer = tool_loop(engine_client, [user_message])
    print(f"{engine:16} tool_calls={answer.tool_calls!r:5} {answer.content}")
''', ru={"# live mode: your one server, four times": "# режим live: ваш сервер, четыре раза"}),
    md("""
Look at `tool_calls` in the final answers: Moonshot and SGLang leave the field out (`None`), while
vLLM and `stop_with_calls` send an **empty list**, `[]`. Both mean "no calls", so test the list's
truth (`if message.tool_calls:`), never `is not None` or `"tool_calls" in message`: on vLLM those
would take the final answer for a call. Exercise 1 checks this case.
""", """
Посмотрите на `tool_calls` в окончательных ответах: Moonshot и SGLang это поле не присылают
(`None`), а vLLM и `stop_with_calls` присылают **пустой список** `[]`. И то и другое значит «вызовов
нет», поэтому проверяйте список на истинность (`if message.tool_calls:`), а не `is not None` и не
`"tool_calls" in message`: на vLLM такая проверка примет окончательный ответ за вызов. Этот случай
проверяет упражнение 1.
"""),
    md("""
## 8. The same logic as a helper: `run_tool_loop`

`run_tool_loop(client, messages, registry, model=...)` packages this loop. On top of it, it runs
tools through a `ToolRegistry` (lesson 01), so bad JSON, wrong arguments or a failing tool become
an error message for the model instead of an exception; it appends plain dicts to `messages`; it raises
`ToolLoopLimitError` after `max_rounds`; and it refuses to run a call cut off by `max_tokens`.
Extra keyword arguments go to `client.chat.completions.create`.

Note the switch from SDK objects to dicts. Until now the history held `choice.message`, the SDK's
`ChatCompletionMessage`, read with dots (`message.tool_calls`). `run_tool_loop` appends plain dicts
instead, the same JSON shape the API receives (`{"role": "assistant", "content": ...,
"tool_calls": [...]}`), read with brackets: `message["content"]`, or `message.get("tool_calls")`
when a key may be missing. A dict can be printed, saved as JSON, compared and written by hand; the
SDK's object turns into one with `choice.message.model_dump(exclude_none=True)`. From here on, and
in the exercises, messages are dicts.
""", """
## 8. Та же логика в готовой функции: `run_tool_loop`

`run_tool_loop(client, messages, registry, model=...)` — этот же цикл, упакованный в функцию.
Сверх того она выполняет инструменты через `ToolRegistry` (урок 01), поэтому сломанный JSON,
неверные аргументы или упавший инструмент превращаются в сообщение об ошибке для модели, а не в
исключение; добавляет в историю обычные словари; бросает `ToolLoopLimitError` после `max_rounds`
раундов и отказывается выполнять вызов, обрезанный по `max_tokens`. Остальные именованные
аргументы она передаёт в `client.chat.completions.create`.

Обратите внимание: здесь объекты SDK сменяются словарями. До сих пор в истории лежал
`choice.message` — объект SDK `ChatCompletionMessage`, поля которого читаются через точку
(`message.tool_calls`). `run_tool_loop` добавляет в историю обычные словари той же JSON-формы, что
получает API (`{"role": "assistant", "content": ..., "tool_calls": [...]}`), а их читают в
квадратных скобках: `message["content"]` или `message.get("tool_calls")`, если ключа может не быть.
Словарь можно напечатать, сохранить в JSON, сравнить и написать вручную; объект SDK превращается в
словарь через `choice.message.model_dump(exclude_none=True)`. Дальше, и в упражнениях тоже,
сообщения — словари.
"""),
    code('''
from helpers import ToolRegistry, run_tool_loop

registry = ToolRegistry()
registry.register(get_weather, schema=tools[0])
assert registry.schemas == tools
'''),
    md("""
The engine where the guide's loop failed:
""", """
Движок, на котором сломался цикл из руководства:
"""),
    code('''
messages = [user_message]
answer = run_tool_loop(clients["stop_with_calls"], messages, registry, model=model_name,
                       tool_choice="auto", **settings)
show_messages(messages)
'''),
    md("""
## 9. Parallel calls

Answer each call in a message with its own `role: "tool"` message carrying the matching
`tool_call_id`. A model may ask for several calls at once, and all the answers go back in the next
request.
""", """
## 9. Параллельные вызовы

Отвечайте на каждый вызов из сообщения отдельным сообщением с `role: "tool"` и соответствующим
`tool_call_id`. Модель может попросить несколько вызовов сразу (это и есть параллельные вызовы), и
все ответы отправляются в следующем запросе.
"""),
    code('''
messages = [{"role": "user", "content": "Compare the weather in Beijing and Shanghai today."}]
answer = run_tool_loop(client, messages, registry, model=model_name,
                       tool_choice="auto", **settings)
show_messages(messages)
'''),
    md("""
Here the model also wrote a line of text next to its calls. That text is not the answer yet; the
loop goes on because there are calls.

## 10. A tool error goes back to the model

Send a bad call's error back to the model as its tool result instead of crashing the loop. The
registry does exactly that when the model gets the arguments wrong, and the model can try again. The
error text is written for the model, in English in both editions: message `[2]` below says the
required `city` is missing and `town` is unexpected. (In replay the first, wrong call is scripted so
you can see this path; a live model may get it right the first time.)
""", """
Здесь модель написала рядом с вызовами ещё и строчку текста. Это пока не ответ: раз есть вызовы,
цикл продолжается.

## 10. Ошибка инструмента возвращается модели

Ошибку неверного вызова возвращайте модели как результат инструмента, а не обрывайте цикл. Реестр
так и делает, когда модель ошибается в аргументах, и модель может попробовать снова. Текст ошибки
адресован модели, поэтому он на английском в обоих изданиях: в сообщении `[2]` ниже сказано, что не
хватает обязательного аргумента `city`, а `town` — лишний. (В режиме воспроизведения первый,
неверный вызов прописан в сценарии, чтобы показать этот путь; настоящая модель вполне может сразу
передать верные аргументы.)
"""),
    code('''
messages = [{"role": "user", "content": "What's the weather in Beijing? Use the weather tool."}]
answer = run_tool_loop(client, messages, registry, model=model_name,
                       tool_choice="auto", **settings)
show_messages(messages)
'''),
    md("""
## 11. A limit on rounds

Cap the number of rounds, so that a model that keeps calling tools cannot keep the loop going
forever. Some tasks take several rounds: here the user asks for three cities one call at a time.
With `max_rounds=2` the loop gives up and says so; the history so far stays in `messages`. (A live
model may make all three calls at once; then the loop finishes within the limit and nothing is
raised.)
""", """
## 11. Лимит раундов

Ограничивайте число раундов, чтобы цикл не шёл вечно, если модель без конца вызывает инструменты.
Некоторым задачам нужно несколько раундов: здесь пользователь просит три города по одному
вызову за раз. С `max_rounds=2` цикл сдаётся и сообщает об этом; история на этот момент остаётся в
`messages`. (Настоящая модель может сделать все три вызова сразу; тогда цикл уложится в лимит и
исключения не будет.)
"""),
    code('''
one_at_a_time = {"role": "user", "content":
                 "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}
messages = [one_at_a_time]
run_tool_loop(client, messages, registry, model=model_name, max_rounds=2,
              tool_choice="auto", **settings)
''', tags=("raises-exception",)),
    md("""
With the default limit (8 rounds) the same task finishes: three rounds of calls, then the answer.
""", """
С лимитом по умолчанию (8 раундов) та же задача доходит до конца: три раунда вызовов, потом ответ.
"""),
    code('''
messages = [one_at_a_time]
answer = run_tool_loop(client, messages, registry, model=model_name,
                       tool_choice="auto", **settings)
print(answer["content"])
print("messages in the history:", len(messages))
''', ru={'"messages in the history:"': '"сообщений в истории:"'}),
    md("""
## Summary

- One round: `client.chat.completions.create(..., tools=tools)`, read `choice.message.tool_calls`,
  append the assistant message, then one `role: "tool"` message per call (`tool_call_id`, JSON
  `content`), and ask again.
- Engines differ in call ids, in `content` (`''` or `None`) and in `finish_reason`; one reports
  `"stop"` with calls present, and the guide's `while finish_reason == "tool_calls"` loop then
  quits without running the tool.
- Stop when the message has **no tool calls**, and bound the number of rounds.
- `run_tool_loop` packages that loop with validation, error messages for the model, parallel calls
  and `max_rounds` (`ToolLoopLimitError`).
""", """
## Итоги

- Один раунд: `client.chat.completions.create(..., tools=tools)`, прочитать
  `choice.message.tool_calls`, добавить сообщение ассистента, затем по сообщению с `role: "tool"`
  на каждый вызов (`tool_call_id`, `content` в JSON) и спросить снова.
- Движки расходятся в id вызовов, в `content` (`''` или `None`) и в `finish_reason`; один сообщает
  `"stop"`, хотя вызовы есть, и цикл руководства `while finish_reason == "tool_calls"` выходит, не
  выполнив инструмент.
- Останавливайтесь, когда в сообщении **нет вызовов**, и ограничивайте число раундов.
- `run_tool_loop` — этот цикл в готовом виде: проверка аргументов, ошибки для модели,
  параллельные вызовы и `max_rounds` (`ToolLoopLimitError`).
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- **The `stop_with_calls` profile** (step 5) is modelled on engine bug reports, not on a capture:
  vLLM answering a forced `tool_choice` with parsed calls and `finish_reason="stop"` (vLLM issue
  #9209 and PR #20662), and the same shape in SGLang (issue #2877).

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Профиль `stop_with_calls`** (шаг 5) сделан по отчётам об ошибках движков, а не записан с
  сервера: vLLM отвечал на принудительный `tool_choice` разобранными вызовами и
  `finish_reason="stop"` (issue vLLM #9209 и PR #20662); такой же ответ — у SGLang
  (issue #2877).

</details>
"""),
    md("""
## Exercises

Edit the first cell of each exercise, then run the self-check until it says "Correct!". A
reference solution is in the collapsed cell that follows.

### Exercise 1. The stop rule

`needs_tools(message, finish_reason)` decides whether the loop must run tools and ask again. As
written it uses the guide's rule. Make it work on every engine. `message` is a plain dict, not
step 7's SDK object: read it with `message["tool_calls"]`, or `message.get("tool_calls")` when the
key may be missing.
""", """
## Упражнения

Измените первую ячейку каждого упражнения и запускайте самопроверку (self-check), пока она не
ответит «Верно!». Эталонное решение — в следующей, свёрнутой ячейке.

### Упражнение 1. Правило остановки

`needs_tools(message, finish_reason)` решает, нужно ли циклу выполнить инструменты и спросить
снова. Сейчас в ней правило из руководства. Сделайте так, чтобы она работала на любом движке.
`message` здесь — обычный словарь, а не объект SDK из шага 7: читайте его как
`message["tool_calls"]` или `message.get("tool_calls")`, если ключа может не быть.
"""),
    code('''
def needs_tools(message, finish_reason):
    """True when the assistant message asks for tools to be run."""
    return finish_reason == "tool_calls"
'''),
    code('''
from helpers.exercises import n02

n02.check_needs_tools(needs_tools)
'''),
    code('''
def needs_tools(message, finish_reason):
    """True when the assistant message asks for tools to be run."""
    return bool(message.get("tool_calls"))
''', hidden=True),
    code('''
n02.check_needs_tools(needs_tools)
'''),
    md("""
### Exercise 2. Answer every call

`answer_calls(message, tool_map)` must return the `role: "tool"` messages for **all** calls of an
assistant message, in order, each with `tool_call_id`, `name` and the result as JSON `content`.
As written it answers only the first call.
""", """
### Упражнение 2. Ответ на каждый вызов

`answer_calls(message, tool_map)` должна вернуть сообщения с `role: "tool"` для **всех** вызовов
из сообщения ассистента, по порядку, у каждого — `tool_call_id`, `name` и результат в `content` в
виде JSON. Сейчас она отвечает только на первый вызов.
"""),
    code('''
def answer_calls(message, tool_map):
    """The role "tool" messages answering the calls of one assistant message."""
    tool_call = message["tool_calls"][0]
    arguments = json.loads(tool_call["function"]["arguments"])
    tool_result = tool_map[tool_call["function"]["name"]](**arguments)
    return [{"role": "tool", "tool_call_id": tool_call["id"],
             "name": tool_call["function"]["name"], "content": json.dumps(tool_result)}]
'''),
    code('''
n02.check_answer_calls(answer_calls)
'''),
    code('''
def answer_calls(message, tool_map):
    """The role "tool" messages answering the calls of one assistant message."""
    results = []
    for tool_call in message["tool_calls"]:
        arguments = json.loads(tool_call["function"]["arguments"])
        tool_result = tool_map[tool_call["function"]["name"]](**arguments)
        results.append({"role": "tool", "tool_call_id": tool_call["id"],
                        "name": tool_call["function"]["name"],
                        "content": json.dumps(tool_result)})
    return results
''', hidden=True),
    code('''
n02.check_answer_calls(answer_calls)
'''),
    md("""
### Exercise 3. Errors are news for the model

`tool_content(function, arguments_text)` returns the `content` for one call. Make it never raise:
if the arguments are not valid JSON, or the function raises, return JSON text
`{"error": "<what went wrong>"}` instead, so the model can read it and retry.
""", """
### Упражнение 3. Ошибка — тоже информация для модели

`tool_content(function, arguments_text)` возвращает `content` для одного вызова. Сделайте так,
чтобы она никогда не бросала исключений: если аргументы — некорректный JSON или функция падает,
верните JSON-текст `{"error": "<что пошло не так>"}`, чтобы модель прочитала его и попробовала
снова.
"""),
    code('''
def tool_content(function, arguments_text):
    """The content of the role "tool" message for one call; never raises."""
    arguments = json.loads(arguments_text)
    return json.dumps(function(**arguments))
'''),
    code('''
n02.check_tool_content(tool_content)
'''),
    code('''
def tool_content(function, arguments_text):
    """The content of the role "tool" message for one call; never raises."""
    try:
        arguments = json.loads(arguments_text)
    except json.JSONDecodeError as error:
        return json.dumps({"error": f"Arguments are not valid JSON: {error}"})
    try:
        return json.dumps(function(**arguments))
    except Exception as error:  # the model should hear about any failure
        return json.dumps({"error": f"{type(error).__name__}: {error}"})
''', ru={"# the model should hear about any failure": "# модель должна узнать о любом сбое"},
         hidden=True),
    code('''
n02.check_tool_content(tool_content)
'''),
    md("""
[Next: 03 Streaming tool calls](03_streaming.ipynb)
""", """
[Дальше: 03 Вызов инструментов при потоковой выдаче](03_streaming.ipynb)
"""),
])
