"""Lesson 06: thinking models (Kimi K2.6) in a tool loop: reasoning on the wire, the 400 a loop
gets when it drops it, the field names, <think> in raw text, and Kimi id hygiene."""

from nbbuild import Lesson, code, md

META = {
    "title": {
        "en": "Thinking models and tool calls",
        "ru": "Модели с рассуждением и вызов инструментов",
    },
    "summary": {
        "en": "Kimi K2.6's reasoning on the wire, the 400 when a loop drops it, `reasoning` vs `reasoning_content`, `<think>` in raw text, clean call ids for Kimi",
        "ru": "рассуждение Kimi K2.6 в ответе API, ошибка 400, когда цикл его теряет, `reasoning` и `reasoning_content`, `<think>` в сыром выводе, правильные id вызовов для Kimi",
    },
    "minutes_reading": (46, 65),
    "minutes_exercises": (24, 45),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_history_message", "check_normalize", "check_reasoning_of"),
}


LESSON = Lesson("06_thinking_models", [
    md(
        """
# Thinking models and tool calls

**Goal:** run a tool loop against a model that thinks before it answers (Kimi K2.6), see where its
reasoning travels, and keep the loop from failing on its second round.
""",
        """
# Модели с рассуждением и вызов инструментов

**Цель:** запустить цикл вызова инструментов с моделью, которая сначала рассуждает, а потом
отвечает (Kimi K2.6), увидеть, где передаётся её рассуждение (reasoning), и не дать циклу упасть во втором
раунде.
""",
    ),
    md(
        """
## What you will build

- a look at a thinking model's answer: `reasoning_content` next to `content` and `tool_calls`, and
  reasoning deltas that come first in a stream;
- a loop that rebuilds the assistant message from `content` and `tool_calls` only, as the guide's
  loops do: the Moonshot API refuses its second request with **400**; then the fix;
- three tool rounds with `run_tool_loop`, streamed and not; thinking switched off; why a forced
  `tool_choice` fails with thinking on;
- `reasoning` (current vLLM) versus `reasoning_content` (Moonshot, SGLang, llama.cpp);
- `<think>` in raw text and the K2-Thinking chat template; the parser's rule for a block that
  never closes;
- clean call ids for a self-hosted Kimi: foreign ids in the history make the model write broken ones.
""",
        """
## Что вы сделаете

- рассмотрите ответ модели с рассуждением (thinking model): поле `reasoning_content` рядом с
  `content` и `tool_calls` и дельты рассуждения (reasoning deltas), которые при потоковой выдаче
  (streaming) приходят первыми;
- запустите цикл, который собирает сообщение ассистента (assistant message) только из `content` и
  `tool_calls`, как циклы из руководства: API Moonshot отклонит второй запрос с ошибкой **400**;
  затем исправите это;
- проведёте три раунда вызовов через `run_tool_loop` с потоковой выдачей и без неё, отключите
  рассуждение и узнаете, почему принудительный `tool_choice` с ним несовместим;
- сравните поле `reasoning` (нынешний vLLM) и `reasoning_content` (Moonshot, SGLang, llama.cpp);
- разберёте `<think>` в сыром выводе модели (raw output) и шаблон чата (chat template)
  K2-Thinking, а также правило парсера (parser) для блока рассуждения, который так и не закрылся;
- приведёте id вызовов к виду, которого ждёт Kimi на своём сервере: из-за чужих id в истории
  диалога (conversation history) модель начинает писать id, которые парсер не может прочитать.
""",
    ),
    md(
        """
## Setup

Moonshot's current models (`kimi-k2.6`, `kimi-k2.7-code`, and `kimi-k3` of lesson 09) think. In
replay mode the answers come from cassettes **synthesized** from the documented formats of the
Moonshot API, vLLM and SGLang with a thinking model, not captured from a real service; the replay
server checks each history the way the Moonshot API does. The setup cell asks for the engine
profile `moonshot_thinking`, which answers as `kimi-k2.6`. With `LLM_MODE=live` (see
[lesson 00](00_start.ipynb)) the profile is ignored and the cells talk to your endpoint: set
`KIMI_MODEL=kimi-k2.6` to see what this lesson shows.
""",
        """
## Подготовка

Текущие модели Moonshot (`kimi-k2.6`, `kimi-k2.7-code` и `kimi-k3` из урока 09) рассуждают.
В режиме воспроизведения (replay) ответы берутся из кассет (cassettes), **синтезированных** по
документированным форматам API Moonshot, vLLM и SGLang для модели с рассуждением, а не записанных с
настоящего сервиса; сервер воспроизведения проверяет каждую историю так же, как API Moonshot.
Ячейка подготовки выбирает профиль движка (engine) `moonshot_thinking`, который отвечает от имени
`kimi-k2.6`. С `LLM_MODE=live` (см. [урок 00](00_start.ipynb)) профиль не используется, и ячейки
обращаются к вашему адресу API (endpoint): задайте `KIMI_MODEL=kimi-k2.6`, чтобы увидеть то, о чём
этот урок.
""",
    ),
    code(
        '''
from openai import OpenAI

from helpers import (
    ToolCallAccumulator,
    ToolRegistry,
    connect,
    load_tokenizer,
    normalize_kimi_ids,
    parse_kimi,
    run_tool_loop,
    set_language,
)
from helpers.display import show_chunks, show_messages, show_raw, show_tool_calls
from helpers.formats import KimiStreamParser

set_language("en")  # the language of the helpers' messages
conn = connect("kimi", engine="moonshot_thinking")  # replay: the Moonshot API with kimi-k2.6
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
''',
        ru={
            "# replay: the Moonshot API with kimi-k2.6": "# replay: API Moonshot с kimi-k2.6",
        },
    ),
    md(
        """
## 1. The tool

Register each tool in a `ToolRegistry`: `run_tool_loop` looks the called function up there by
name. Here is the weather tool of the earlier lessons.
""",
        """
## 1. Инструмент

Регистрируйте каждый инструмент в `ToolRegistry`: `run_tool_loop` ищет там вызванную функцию по
имени. Вот инструмент погоды из прошлых уроков.
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
registry.register(get_weather, schema=tools[0])
print(sorted(registry.tool_map))
''',
    ),
    md(
        """
## 2. Reasoning on the wire

Read the reasoning from its own field: `reasoning_content` on the Moonshot API, which the OpenAI
SDK does not declare but keeps, so read it with `getattr`. One request, three cities to check one
at a time; it sends no `temperature`, because the platform fixes the sampling of `kimi-k2.6` (1.0
with thinking).
""",
        """
## 2. Рассуждение в ответе API

Рассуждение читайте из отдельного поля: у API Moonshot это `reasoning_content`; в SDK OpenAI
такого поля нет, но SDK его сохраняет, поэтому читайте его через `getattr`. Один запрос: проверить
погоду в трёх городах по очереди; `temperature` в нём нет, потому что у `kimi-k2.6` платформа
фиксирует параметры выборки (с рассуждением температура 1.0).
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
response = client.chat.completions.create(model=model_name, messages=messages, tools=tools)
message = response.choices[0].message
print(getattr(message, "reasoning_content", None))  # not declared in the SDK's types
print(repr(message.content))
show_tool_calls(message.tool_calls)
''',
        ru={"# not declared in the SDK's types": "# в типах SDK этого поля нет"},
    ),
    md(
        """
The model thought first, then made one call; `content` is empty. In a stream the reasoning arrives
as deltas of its own, **before** any content or call:
""",
        """
Модель сначала рассуждала, затем сделала один вызов; `content` пуст. В потоке рассуждение
приходит отдельными дельтами (delta), **раньше** любого текста и вызовов:
""",
    ),
    code(
        '''
stream = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, stream=True
)
chunks = list(stream)
show_chunks(chunks)
''',
    ),
    md(
        """
## 3. A loop that drops the reasoning

A loop that puts only `content` and `tool_calls` back into the history fails on a thinking model
from its second round on. Here is lesson 03's fixed streaming loop, with `ToolCallAccumulator`
doing the gluing; like the guide's loops, it builds the assistant message from those two only:

`messages.append({"role": "assistant", "content": ..., "tool_calls": ...})`

That was enough for Kimi-K2-Instruct. A thinking model's API wants more.
""",
        """
## 3. Цикл, который теряет рассуждение

Если цикл возвращает в историю только `content` и `tool_calls`, то с моделью с рассуждением он
падает со второго раунда. Вот исправленный потоковый цикл из урока 03, фрагменты в нём склеивает
`ToolCallAccumulator`; как и циклы из руководства, он собирает сообщение ассистента только из этих
двух полей:

`messages.append({"role": "assistant", "content": ..., "tool_calls": ...})`

Для Kimi-K2-Instruct этого хватало. API модели с рассуждением требует большего.
""",
    ),
    code(
        '''
def streaming_loop(messages, max_rounds=8, **options):
    """Lesson 03's loop: the assistant message is rebuilt from content and tool_calls only."""
    for _ in range(max_rounds):
        accumulator = ToolCallAccumulator()
        for chunk in client.chat.completions.create(
            model=model_name, messages=messages, tools=tools, stream=True, **options
        ):
            accumulator.add(chunk)
        if not accumulator.tool_calls:
            return accumulator.content
        messages.append({"role": "assistant", "content": accumulator.content,
                         "tool_calls": accumulator.tool_calls})  # the reasoning is left out
        messages.extend(registry.call(tool_call) for tool_call in accumulator.tool_calls)
    raise RuntimeError(f"Still calling tools after {max_rounds} rounds.")
''',
        ru={"# the reasoning is left out": "# рассуждение не попадает в историю",
            'f"Still calling tools after {max_rounds} rounds."':
            'f"Модель всё ещё вызывает инструменты после {max_rounds} раундов."',
        '"""Lesson 03\'s loop: the assistant message is rebuilt from content and tool_calls only."""': '"""Цикл из урока 03: сообщение ассистента собирается только из content и tool_calls."""',
        },
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
streaming_loop(messages)
''',
        tags=("raises-exception",),
    ),
    md(
        """
`openai.BadRequestError`, HTTP 400, in Moonshot's wording: thinking is on, and the assistant
message at index 1, the one with the calls, came back without its `reasoning_content`. The first
request went through; the second, the first one with that message in the history, failed. The
history the loop tried to send:
""",
        """
`openai.BadRequestError`, HTTP 400, в формулировке Moonshot: рассуждение включено, а сообщение
ассистента с индексом 1 — то, где вызовы, — вернулось без своего `reasoning_content`. Первый запрос
прошёл, а второй, где это сообщение впервые оказалось в истории, завершился ошибкой. История,
которую цикл пытался отправить:
""",
    ),
    code(
        '''
show_messages(messages)
''',
    ),
    md(
        """
## 4. The fix: send the reasoning back

The rule: with thinking on, every assistant message with `tool_calls` in the history must carry
its `reasoning_content`. `ToolCallAccumulator` collects the reasoning deltas, remembers the field
name the server used, and puts the reasoning into `assistant_message()` under that name:
""",
        """
## 4. Исправление: вернуть рассуждение

Правило: при включённом рассуждении каждое сообщение ассистента с `tool_calls` в истории должно
содержать свой `reasoning_content`. `ToolCallAccumulator` собирает дельты рассуждения, запоминает,
как поле назвал сервер, и включает рассуждение в `assistant_message()` под этим же именем:
""",
    ),
    code(
        '''
accumulator = ToolCallAccumulator()
for chunk in chunks:
    accumulator.add(chunk)
print(accumulator.reasoning_key)
accumulator.assistant_message()
''',
    ),
    md(
        """
`run_tool_loop` appends exactly that message, so the same three rounds now go through, streamed:
""",
        """
`run_tool_loop` добавляет в историю именно такое сообщение, поэтому те же три раунда теперь
проходят, с потоковой выдачей:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
answer = run_tool_loop(client, messages, registry, model=model_name, stream=True)
print(answer["content"])
show_messages(messages)
''',
    ),
    md(
        """
And without streaming: `run_tool_loop` keeps a non-null `reasoning_content` (or `reasoning`) of the
SDK message when it copies the message into the history.
""",
        """
И без потоковой выдачи: копируя сообщение SDK в историю, `run_tool_loop` сохраняет непустое поле
`reasoning_content` (или `reasoning`).
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
answer = run_tool_loop(client, messages, registry, model=model_name)
print(answer["content"])
with_calls = [m for m in messages if m.get("tool_calls")]
print(len(with_calls), all(m.get("reasoning_content") for m in with_calls))
''',
    ),
    md(
        """
In your own loop the fix is one line: append `accumulator.assistant_message()` (streaming) or
keep the reasoning field of `response.choices[0].message` (non-streaming). The rule is not
Kimi's alone: DeepSeek refuses the same history with its own wording.

## 5. Switching thinking off

To switch thinking off on `kimi-k2.6`, send `thinking: {"type": "disabled"}` through
`extra_body` (it is not an SDK parameter). Without reasoning there is nothing to lose, and the loop
of step 3 works as it is:
""",
        """
В собственном цикле исправление занимает одну строку: добавляйте в историю
`accumulator.assistant_message()` (потоковая выдача) или сохраняйте поле рассуждения из
`response.choices[0].message` (без неё). Такое правило есть не только у Kimi: DeepSeek тоже
отклоняет такую историю, хотя текст ошибки у него свой.

## 5. Как отключить рассуждение

Чтобы отключить рассуждение у `kimi-k2.6`, передайте `thinking: {"type": "disabled"}` через
`extra_body` (в SDK такого параметра нет). Без рассуждения терять нечего, и цикл из шага 3 работает
без изменений:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
print(streaming_loop(messages, extra_body={"thinking": {"type": "disabled"}}))
''',
    ),
    md(
        """
`kimi-k2.7-code` always thinks and rejects `"disabled"`; K2-Thinking has no switch at all.
Moonshot recommends temperature 1.0 with thinking and 0.6 without; on the platform these values
are fixed.

## 6. A forced `tool_choice` and thinking

With thinking on, do not force a tool on `kimi-k2.6`: the API refuses both `"required"` (call
some tool in this turn) and a named function
(`{"type": "function", "function": {"name": "get_weather"}}`, call that one) with a 400. Kimi K3, which always thinks, behaves otherwise
(lessons 08 and 09); where the error's wording comes from is in the [reference](#reference). Here,
on `kimi-k2.6`:
""",
        """
`kimi-k2.7-code` рассуждает всегда и отклоняет `"disabled"`; у K2-Thinking переключателя нет
вовсе. Moonshot рекомендует температуру 1.0 с рассуждением и 0.6 без него; на платформе эти
значения зафиксированы.

## 6. Принудительный `tool_choice` и рассуждение

При включённом рассуждении не принуждайте `kimi-k2.6` к вызову: API отклоняет с ошибкой 400 и
`"required"` (вызвать в этом ходе какой-нибудь инструмент), и выбор функции по имени
(`{"type": "function", "function": {"name": "get_weather"}}`, вызвать именно её). Модель Kimi K3,
которая рассуждает всегда, ведёт себя иначе (уроки 08 и 09); откуда взят текст ошибки, сказано в
[справке](#reference). Здесь — на `kimi-k2.6`:
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Check the weather in Beijing, then Shanghai, then Moscow, one call at a time."}]
client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="required"
)
''',
        tags=("raises-exception",),
    ),
    code(
        '''
client.chat.completions.create(
    model=model_name, messages=messages, tools=tools,
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
)
''',
        tags=("raises-exception",),
    ),
    md(
        """
On `kimi-k2.6` with thinking on, a call forced before the model may think about whether to make
one is a contradiction the API resolves by refusing. Keep `tool_choice="auto"` (the default) and say in the prompt what
you need, or check the answer for calls in your code, as `run_tool_loop` does.

## 7. `reasoning` or `reasoning_content`

Read the reasoning under whichever name the server uses, and send it back under the same name:

| server | field in `message` and `delta` |
|---|---|
| Moonshot API, SGLang, llama.cpp (`--reasoning-format deepseek`) | `reasoning_content` |
| vLLM (current releases) | `reasoning` |
| Ollama | `reasoning` |
| OpenRouter | `reasoning`, plus `reasoning_details` |

The profile `vllm_thinking` answers like vLLM serving `moonshotai/Kimi-K2.6`:
""",
        """
У `kimi-k2.6` с включённым рассуждением требовать вызов раньше, чем модель подумает, нужен ли
он, — противоречие, и API просто отклоняет такой запрос. Оставляйте `tool_choice="auto"` (значение по умолчанию) и говорите в
промпте, что вам нужно, или проверяйте вызовы в ответе в своём коде, как это делает
`run_tool_loop`.

## 7. `reasoning` или `reasoning_content`

Читайте рассуждение под тем именем, которое дал сервер, и возвращайте под ним же:

| сервер | поле в `message` и `delta` |
|---|---|
| API Moonshot, SGLang, llama.cpp (`--reasoning-format deepseek`) | `reasoning_content` |
| vLLM (нынешние выпуски) | `reasoning` |
| Ollama | `reasoning` |
| OpenRouter | `reasoning` и ещё `reasoning_details` |

Профиль `vllm_thinking` отвечает как vLLM, на котором запущена `moonshotai/Kimi-K2.6`:
""",
    ),
    code(
        '''
if conn.replay_only("vllm_thinking is a recorded engine profile"):
    vllm = connect("kimi", engine="vllm_thinking")
    vllm_client = OpenAI(
        base_url=vllm.endpoint, api_key=vllm.api_key, http_client=vllm.http_client()
    )
    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    reply = vllm_client.chat.completions.create(
        model=vllm.model_name, messages=messages, tools=tools
    )
    fields = reply.choices[0].message.model_dump(exclude_none=True)
    print(sorted(fields))
    print(fields["reasoning"])
''',
        ru={'"vllm_thinking is a recorded engine profile"':
            '"профиль vllm_thinking есть только в кассетах"'},
    ),
    md(
        """
`run_tool_loop` sends the reasoning back under the name the server used, so the loop works on
both kinds of server without a setting:
""",
        """
`run_tool_loop` возвращает рассуждение под тем именем, которое использовал сервер, поэтому цикл
работает с обоими видами серверов без всяких настроек:
""",
    ),
    code(
        '''
if conn.replay_only("it needs the vllm_thinking profile above"):
    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    answer = run_tool_loop(vllm_client, messages, registry, model=vllm.model_name)
    print(answer["content"])
    print(sorted(messages[1]))
''',
        ru={'"it needs the vllm_thinking profile above"':
            '"ей нужен профиль vllm_thinking из ячейки выше"'},
    ),
    md(
        """
Kimi's chat template on the server reads `reasoning_content` from the history; when vLLM renamed
the field, templates that expected the old name broke for a while (the [reference](#reference) has
the history).

## 8. `<think>` in raw text

In raw text the reasoning is a `<think>...</think>` block in front of the tool-call markers:
split it off before you parse the calls. With `/completions` (lesson 04) you render the prompt
yourself; `load_tokenizer("kimi-k2-thinking")` carries the K2-Thinking chat template (where the
file comes from: [reference](#reference)). Look at what it does with an earlier finished exchange
and with the current tool loop:
""",
        """
Шаблон чата Kimi на сервере читает из истории `reasoning_content`; когда vLLM переименовал поле,
шаблоны, которые ждали старое имя, на время сломались (история — в [справке](#reference)).

## 8. `<think>` в сыром выводе

В сыром тексте рассуждение — это блок `<think>...</think>` перед маркерами вызова: отделите его,
прежде чем разбирать вызовы. С `/completions` (урок 04) промпт собираете вы сами;
`load_tokenizer("kimi-k2-thinking")` содержит шаблон чата K2-Thinking (откуда взят файл — в
[справке](#reference)). Посмотрите, что он делает с более ранним законченным обменом репликами и с
текущим циклом вызовов:
""",
    ),
    code(
        '''
tokenizer = load_tokenizer("kimi-k2-thinking")
call = {"id": "functions.get_weather:0", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
history = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!", "reasoning_content": "Greet back."},
    {"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."},
    {"role": "assistant", "content": "", "reasoning_content": "Use the tool.", "tool_calls": [call]},
    {"role": "tool", "tool_call_id": "functions.get_weather:0", "name": "get_weather",
     "content": '{"city": "Beijing", "weather": "Sunny"}'},
]
prompt = tokenizer.apply_chat_template(history, tools=tools, tokenize=False,
                                       add_generation_prompt=True)
show_raw(prompt[prompt.index("<|im_user|>"):])  # after the tools and the system turn
''',
        ru={"# after the tools and the system turn": "# после инструментов и системного сообщения"},
    ),
    md(
        """
The earlier answer keeps an empty `<think></think>`: its reasoning is dropped. The assistant turn
of the current tool loop keeps `<think>Use the tool.</think>`. The template also writes the tools
as compact JSON without a `# Tools` line, puts no indent before a tool result, and ends with the
assistant header without `<think>`: the model opens the block itself.

The model's output has three shapes. `parse_kimi` puts `<think>` blocks into `.reasoning`; a
`</think>` with no `<think>` before it means the prompt opened the block (the K2.5 and K2.6
templates do that with thinking on); a block that never closes ends at
`<|tool_calls_section_begin|>`, as in vLLM's and SGLang's reasoning parsers:
""",
        """
Более ранний ответ получил пустой `<think></think>`: его рассуждение отброшено. Ход ассистента из
текущего цикла вызовов сохраняет `<think>Use the tool.</think>`. Кроме того, шаблон записывает
инструменты компактным JSON без строки `# Tools`, не ставит отступ перед результатом инструмента и
заканчивается заголовком ассистента без `<think>`: блок модель открывает сама.

Сырой вывод модели бывает трёх видов. `parse_kimi` переносит блоки `<think>` в `.reasoning`;
`</think>` без предшествующего `<think>` означает, что блок открыл промпт (так делают шаблоны
K2.5 и K2.6 при включённом рассуждении); блок, который так и не закрылся, заканчивается на
`<|tool_calls_section_begin|>`, как в парсерах рассуждения vLLM и SGLang:
""",
    ),
    code(
        '''
call_text = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
)
outputs = {
    "closed": "<think>Beijing first.</think>" + call_text,
    "prompt opened it": "Beijing first.</think>" + call_text,
    "never closed": "<think>Beijing first." + call_text,
}
for shape, text in outputs.items():
    result = parse_kimi(text)
    print(f"{shape!r:19} {result.reasoning!r} {[c['id'] for c in result.tool_calls]} {result.errors}")
''',
        ru={'"closed"': '"закрыт"', '"prompt opened it"': '"открыл промпт"',
            '"never closed"': '"не закрыт"'},
    ),
    md(
        """
The same reasoning, the same call, no errors in all three. A call the model writes *inside* its
reasoning is still returned, and whatever looks odd (a `</think>` after the calls, say) is named in
`.errors`, never dropped in silence. `KimiStreamParser` does the same on a stream and emits the
reasoning as `{"reasoning_content": ...}` deltas, the same shape the API sends:
""",
        """
Одно и то же рассуждение, один и тот же вызов и ни одной ошибки во всех трёх случаях. Вызов,
который модель написала *внутри* рассуждения, всё равно возвращается, а всё подозрительное
(например, `</think>` после вызовов) попадает в `.errors` и никогда не теряется молча.
`KimiStreamParser` делает то же с потоком и выдаёт рассуждение дельтами
`{"reasoning_content": ...}`, в той же форме, что и API:
""",
    ),
    code(
        '''
parser = KimiStreamParser()
text = outputs["never closed"]
for start in range(0, len(text), 40):  # 40-character deltas
    for delta in parser.feed(text[start:start + 40]):
        print(delta)
print(parser.close(), parser.result.errors)
''',
        ru={"# 40-character deltas": "# дельты по 40 символов", '"never closed"': '"не закрыт"'},
    ),
    md(
        """
## 9. Clean call ids for a self-hosted Kimi

Before you send a history to a self-hosted Kimi (vLLM, SGLang), rewrite every call id to
`functions.NAME:N`, N counting calls over the whole conversation. Kimi models were trained on such
ids and the chat template shows them verbatim; the Moonshot API renames the ids itself, a
self-hosted server does not. With foreign ids in the history, for example `call_...` from a
conversation that started with another provider, the model starts to imitate them and the server's
parser cannot read the result (ids such as `call_59adf5614cfe...`, `functionsexec5` or a bare
`0`). The profile `sglang_drift` imitates this on SGLang:
""",
        """
## 9. Правильные id вызовов для Kimi на своём сервере

Прежде чем отправить историю Kimi на своём сервере (vLLM, SGLang), перепишите id каждого вызова в
вид `functions.NAME:N`, где N — номер вызова в диалоге. Модели Kimi обучены на таких id, а шаблон
чата показывает их модели как есть; API Moonshot переименовывает id сам, а свой сервер — нет. Если
в истории чужие id — например, `call_...` из диалога, начатого у другого провайдера, — модель
начинает им подражать, и парсер сервера не может прочитать результат (id вроде
`call_59adf5614cfe...`, `functionsexec5` или просто `0`). Профиль `sglang_drift` воспроизводит это
поведение SGLang:
""",
    ),
    code(
        '''
foreign_id = "call_8f14e45fceea167a5a36dedd"  # made up by another provider's client
history = [
    {"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."},
    {"role": "assistant", "content": "", "tool_calls": [{**call, "id": foreign_id}]},
    {"role": "tool", "tool_call_id": foreign_id, "name": "get_weather",
     "content": '{"city": "Beijing", "weather": "Sunny"}'},
    {"role": "assistant", "content": "It's sunny in Beijing today."},
    {"role": "user", "content": "And in Moscow?"},
]
''',
        ru={"# made up by another provider's client": "# придуман клиентом другого провайдера"},
    ),
    code(
        '''
if conn.replay_only("sglang_drift is a recorded engine profile"):
    sglang = connect("kimi", engine="sglang_drift")
    sglang_client = OpenAI(
        base_url=sglang.endpoint, api_key=sglang.api_key, http_client=sglang.http_client()
    )
    messages = list(history)
    answer = run_tool_loop(sglang_client, messages, registry, model=sglang.model_name)
    print("tool_calls" in answer)
    show_raw(answer["content"])
''',
        ru={'"sglang_drift is a recorded engine profile"':
            '"профиль sglang_drift есть только в кассетах"'},
    ),
    md(
        """
The loop stopped: the answer has no `tool_calls`, because the call the model wrote sits, raw, in
`content`. `parse_kimi` can still read it, and says what is wrong with the id. The function name
is lost with it: Kimi's parsers take the name from the id, and `call_...` holds none (newer vLLM
and SGLang parsers guess a name from the argument keys for some broken ids, never from `call_...`).
""",
        """
Цикл остановился: в ответе нет `tool_calls`, потому что вызов, который написала модель, лежит в
`content` в сыром виде. `parse_kimi` всё же может его прочитать и объясняет, что не так с id.
Вместе с id потерялось и имя функции: парсеры Kimi берут имя из id, а в `call_...` его нет (новые
парсеры vLLM и SGLang для некоторых испорченных id угадывают имя по ключам аргументов, но не из
`call_...`).
""",
    ),
    code(
        '''
if conn.replay_only("it needs the sglang_drift answer above"):
    leaked = parse_kimi(answer["content"])
    show_tool_calls(leaked.tool_calls)
    print(leaked.errors)
''',
        ru={'"it needs the sglang_drift answer above"':
            '"ей нужен ответ sglang_drift из ячейки выше"'},
    ),
    md(
        """
The prevention is on the client side: `normalize_kimi_ids` returns a copy of the history in which
every call id is `functions.{name}:{k}`, k counting calls over the conversation from 0, and every
`tool_call_id` follows its call. With that history the model stays on track:
""",
        """
Предотвратить это можно на стороне клиента: `normalize_kimi_ids` возвращает копию истории, где id
каждого вызова имеет вид `functions.{name}:{k}` (k — номер вызова в диалоге, с 0), а каждый
`tool_call_id` получает новый id своего вызова. С такой историей модель не сбивается:
""",
    ),
    code(
        '''
messages = normalize_kimi_ids(history)
show_messages(messages[1:3])
if conn.replay_only("sglang_drift is a recorded engine profile"):
    answer = run_tool_loop(sglang_client, messages, registry, model=sglang.model_name)
    print(answer["content"])
    show_tool_calls(messages[-3]["tool_calls"])
''',
        ru={'"sglang_drift is a recorded engine profile"':
            '"профиль sglang_drift есть только в кассетах"'},
    ),
    md(
        """
## 10. The rule to remember

**With thinking on, every assistant message with `tool_calls` goes back into the history with its
reasoning, under the field name the server used.** Which field, which engine:

| where | model id | reasoning field | thinking off |
|---|---|---|---|
| Moonshot API (`https://api.moonshot.ai/v1`) | `kimi-k2.6` | `reasoning_content` | `extra_body={"thinking": {"type": "disabled"}}` |
| Moonshot API | `kimi-k2.7-code` | `reasoning_content` | impossible: always on |
| your own vLLM | `moonshotai/Kimi-K2.6` | `reasoning` | `chat_template_kwargs: {"thinking": false}` |
| your own SGLang | `moonshotai/Kimi-K2.6` | `reasoning_content` | `chat_template_kwargs: {"thinking": false}` |
| your own vLLM or SGLang | `moonshotai/Kimi-K2-Thinking` | as the engine above | impossible: always on |

Serve them with vLLM's `--tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser
kimi_k2 --trust-remote-code` (`--reasoning-parser` moves the `<think>` text into the reasoning
field) and the vLLM version the model's recipe states as its minimum ([reference](#reference)).
K2.6 and K2-Thinking ship INT4 weights that need 8 H200 GPUs, so a class uses the platform.
""",
        """
## 10. Главное правило

**При включённом рассуждении каждое сообщение ассистента с `tool_calls` возвращается в историю
вместе с рассуждением, под тем именем поля, которое дал сервер.** Какое поле у какого движка:

| где | id модели | поле рассуждения | как отключить |
|---|---|---|---|
| API Moonshot (`https://api.moonshot.ai/v1`) | `kimi-k2.6` | `reasoning_content` | `extra_body={"thinking": {"type": "disabled"}}` |
| API Moonshot | `kimi-k2.7-code` | `reasoning_content` | никак: включено всегда |
| свой vLLM | `moonshotai/Kimi-K2.6` | `reasoning` | `chat_template_kwargs: {"thinking": false}` |
| свой SGLang | `moonshotai/Kimi-K2.6` | `reasoning_content` | `chat_template_kwargs: {"thinking": false}` |
| свой vLLM или SGLang | `moonshotai/Kimi-K2-Thinking` | как у движка выше | никак: включено всегда |

Запускайте их в vLLM с флагами `--tool-call-parser kimi_k2 --enable-auto-tool-choice
--reasoning-parser kimi_k2 --trust-remote-code` (`--reasoning-parser` переносит текст `<think>` в
поле рассуждения) и с той версией vLLM, которую рецепт модели называет минимальной
([справка](#reference)). Веса K2.6 и K2-Thinking в INT4 требуют 8 видеокарт H200, поэтому в классе
используют платформу.
""",
    ),
    md(
        """
## Summary

- A thinking model returns its reasoning in its own field (`reasoning_content` on Moonshot, SGLang
  and llama.cpp, `reasoning` on current vLLM and Ollama), and in a stream the reasoning deltas come
  before content and calls.
- With thinking on, the Moonshot API refuses a history whose assistant message with `tool_calls`
  lost its reasoning: **400 from the second round on**. Loops that rebuild the message from
  `content` and `tool_calls`, as the guide's do, hit it. Send the reasoning back under the name the
  server used: `ToolCallAccumulator.assistant_message()` and `run_tool_loop` do.
- `extra_body={"thinking": {"type": "disabled"}}` switches thinking off on `kimi-k2.6`; on it a
  forced `tool_choice` (`"required"` or a named function) and thinking do not mix (Kimi K3
  differs: lesson 08).
- In raw text the reasoning is a `<think>` block; `parse_kimi` and `KimiStreamParser` split it off,
  end an unclosed block at the tool-call section and keep every call.
- A self-hosted Kimi needs `functions.NAME:N` ids in its history: `normalize_kimi_ids`.
""",
        """
## Итоги

- Модель с рассуждением возвращает его в отдельном поле (`reasoning_content` у Moonshot, SGLang и
  llama.cpp, `reasoning` у нынешнего vLLM и Ollama), а в потоке дельты рассуждения приходят раньше
  текста и вызовов.
- При включённом рассуждении API Moonshot отклоняет историю, в которой сообщение ассистента с
  `tool_calls` потеряло рассуждение: **400 начиная со второго раунда**. На это натыкаются циклы,
  которые, как в руководстве, собирают сообщение из `content` и `tool_calls`. Возвращайте
  рассуждение под тем именем, которое дал сервер: так делают `ToolCallAccumulator.assistant_message()`
  и `run_tool_loop`.
- `extra_body={"thinking": {"type": "disabled"}}` отключает рассуждение у `kimi-k2.6`; у неё
  принудительный `tool_choice` (`"required"` или функция, выбранная по имени) и рассуждение
  несовместимы (у Kimi K3 иначе: урок 08).
- В сыром выводе рассуждение — это блок `<think>`; `parse_kimi` и `KimiStreamParser` отделяют его,
  заканчивают незакрытый блок на секции вызовов и сохраняют каждый вызов.
- Kimi на своём сервере должна видеть в истории id вида `functions.NAME:N`: для этого есть
  `normalize_kimi_ids`.
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

Sources and versions, checked in 2026-12; they change, the rules above do not.

- **vLLM versions.** Use the minimum the model's vLLM recipe states: the Kimi-K2.6 recipe's
  metadata sets 0.25.0 for the whole recipe; the Kimi-K2.5 recipe says 0.19.1 in its metadata and
  ">= 0.15.0" in its text; Moonshot's K2.6 deploy guide names 0.19.1 as manually verified.
- **The reasoning field on vLLM.** Renamed `reasoning` with `reasoning_content` kept as an alias
  (vLLM PR #27752), the alias removed in PR #33402 (January 2026); reports of the first release
  without it range from 0.16 to 0.23. How Kimi templates broke: vllm issue #33616.
- **Moonshot platform.** The model list (platform.kimi.ai, models overview) fixes `temperature`,
  `top_p` and `n` of `kimi-k2.6`; the 400 for another value ("only 1 is allowed") is known from
  users. The forced-`tool_choice` 400s of step 6 are known from users too (AstrBot PR #7825 for
  `"required"`, an oh-my-pi report for a named function), not from Moonshot's docs; the replay
  server copies their wording. `kimi-k2.5`'s announced sunset, 2026-08-31, has passed;
  `kimi-k2-0905-preview` and `kimi-k2-thinking(-turbo)` are reported retired by third parties
  (promptfoo's provider docs), while Moonshot's parameter page still lists the K2 columns. Check
  `GET /models`. `kimi-k2.7-code` always thinks. `kimi-k3` sets its depth with a top-level
  `reasoning_effort` (lesson 09). Users advise `max_tokens` of 16000 or more with thinking.
- **GPUs.** K2.6 and K2-Thinking ship INT4 weights that fit 8xH200 (vLLM recipes); the 16 GPUs of
  Moonshot's deploy guide are for K2-Instruct in FP8.
- **The K2-Thinking template** is llama.cpp's mirror of Moonshot's file, with the compact
  `tojson(separators=(',', ':'))` put back (llama.cpp had to drop it); it was not compared with
  Moonshot's own file byte for byte. The `</think>`-only prompts of K2.5/K2.6 follow
  tinker-cookbook's renderers.
- **Names from ids.** Newer Kimi parsers infer a name from argument keys for some malformed ids
  (vLLM PR #46127, SGLang PR #25362); none reads a name out of `call_<hex>`. The id drift: HF
  discussion #48 on Kimi-K2-Instruct, SGLang PR #21377.
- **What is synthesized.** Every answer in this lesson is synthesized. The missing-reasoning 400
  copies Moonshot's wording as users quote it (cherry-studio #12619, mastra #12592); agent
  frameworks ran into it with Kimi's thinking models again and again in 2026. The `reasoning`
  field follows vLLM's source.

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

Источники и версии, проверено в декабре 2026 года; они меняются, правила выше — нет.

- **Версии vLLM.** Берите минимальную версию, которую называет рецепт vLLM для модели: метаданные
  рецепта Kimi-K2.6 требуют 0.25.0 для всего рецепта; рецепт Kimi-K2.5 называет 0.19.1 в
  метаданных и «>= 0.15.0» в тексте; руководство Moonshot по развёртыванию K2.6 называет 0.19.1
  проверенной вручную.
- **Поле рассуждения в vLLM.** Переименовано в `reasoning`, а `reasoning_content` оставлено как
  псевдоним (PR vLLM #27752); псевдоним удалён в PR #33402 (январь 2026 года); первым выпуском без
  него пользователи называют разные версии, от 0.16 до 0.23. Как сломались шаблоны Kimi — issue
  vllm #33616.
- **Платформа Moonshot.** Список моделей (platform.kimi.ai, обзор моделей) фиксирует
  `temperature`, `top_p` и `n` у `kimi-k2.6`; ответ 400 на другое значение («only 1 is allowed»)
  известен от пользователей. Ошибки 400 на принудительный `tool_choice` из шага 6 тоже известны от
  пользователей (PR AstrBot #7825 для `"required"`, отчёт oh-my-pi для выбора функции по имени), а не из
  документации Moonshot; сервер воспроизведения повторяет их текст. Объявленная дата отключения
  `kimi-k2.5`, 2026-08-31, прошла; о снятии `kimi-k2-0905-preview` и `kimi-k2-thinking(-turbo)`
  пишут сторонние источники (документация провайдера promptfoo), а страница параметров Moonshot
  всё ещё перечисляет столбцы K2. Проверяйте `GET /models`. `kimi-k2.7-code` рассуждает всегда.
  `kimi-k3` задаёт глубину рассуждения полем верхнего уровня `reasoning_effort` (урок 09).
  Пользователи советуют в режиме рассуждения ставить `max_tokens` не меньше 16000.
- **Видеокарты.** Веса K2.6 и K2-Thinking в INT4 помещаются на 8xH200 (рецепты vLLM); 16
  видеокарт из руководства Moonshot по развёртыванию нужны K2-Instruct в FP8.
- **Шаблон K2-Thinking** взят из зеркала файла Moonshot в llama.cpp, с возвращённым компактным
  `tojson(separators=(',', ':'))` (llama.cpp пришлось его убрать); с собственным файлом Moonshot
  побайтно не сверен. Промпты K2.5/K2.6 с одним `</think>` — по рендерерам tinker-cookbook.
- **Имена из id.** Новые парсеры Kimi для некоторых испорченных id выводят имя из ключей
  аргументов (PR vLLM #46127, PR SGLang #25362); ни один не читает имя из `call_<hex>`. Дрейф id —
  обсуждение #48 у Kimi-K2-Instruct на HF, PR SGLang #21377.
- **Что синтезировано.** Все ответы этого урока синтезированы. Ошибка 400 без рассуждения
  повторяет текст Moonshot в том виде, в каком его цитируют пользователи (cherry-studio #12619,
  mastra #12592); в 2026 году на эту ошибку раз за разом натыкались агентные фреймворки (agent
  frameworks), работавшие с моделями Kimi с рассуждением. Поле `reasoning` — по исходному коду
  vLLM.

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. The assistant message for the history

Write `for_history(message)`: it gets an assistant message as a server returned it (a dict, like
`message.model_dump()`) and returns the dict to append to `messages`: `role`, `content`,
`tool_calls`, and the reasoning under the **same** field name the server used, when there is
any. The check tries a Moonshot answer, a vLLM answer, an answer without thinking and a final
answer, then sends your Moonshot message through the replay server's history check.
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Сообщение ассистента для истории

Напишите `for_history(message)`: она получает сообщение ассистента в том виде, в каком его вернул
сервер (словарь, как `message.model_dump()`), и возвращает словарь для `messages`: `role`,
`content`, `tool_calls` и рассуждение под **тем же** именем поля, что у сервера, если оно есть.
Проверка пробует ответ Moonshot, ответ vLLM, ответ без рассуждения и окончательный ответ, а затем
прогоняет ваше сообщение для Moonshot через проверку истории сервера воспроизведения.
""",
    ),
    code(
        '''
from helpers.exercises.n06 import check_history_message, check_normalize, check_reasoning_of


def for_history(message):
    # your code here
    return {"role": "assistant", "content": message.get("content"),
            "tool_calls": message.get("tool_calls")}
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_history_message(for_history)
''',
    ),
    code(
        '''
def for_history(message):
    kept = {"role": "assistant", "content": message.get("content")}
    for key in ("reasoning_content", "reasoning"):
        if message.get(key):
            kept[key] = message[key]
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    return kept


check_history_message(for_history)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. Kimi ids by hand

Write `normalize_ids(messages)`: a **new** list in which every assistant tool-call id becomes
`functions.{name}:{k}` (k counts calls over the whole conversation, from 0) and every
`tool_call_id` is renamed like the call it answers. The check compares your result with
`normalize_kimi_ids` on a history with OpenAI-style ids and on one with two calls in one message.
""",
        """
### Упражнение 2. Id для Kimi вручную

Напишите `normalize_ids(messages)`: она возвращает **новый** список, в котором id каждого вызова
ассистента становится `functions.{name}:{k}` (k — номер вызова в диалоге, с 0), а каждый
`tool_call_id` переименован так же, как вызов, на который он отвечает. Проверка сравнивает ваш
результат с `normalize_kimi_ids` на истории с id в стиле OpenAI и на истории с двумя вызовами в
одном сообщении.
""",
    ),
    code(
        '''
def normalize_ids(messages):
    # your code here
    return list(messages)
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_normalize(normalize_ids)
''',
    ),
    code(
        '''
import copy


def normalize_ids(messages):
    renamed, k, result = {}, 0, []
    for message in copy.deepcopy(messages):
        for tool_call in message.get("tool_calls") or []:
            new_id = f"functions.{tool_call['function']['name']}:{k}"
            renamed[tool_call["id"]], tool_call["id"], k = new_id, new_id, k + 1
        if message["role"] == "tool":
            message["tool_call_id"] = renamed.get(message["tool_call_id"], message["tool_call_id"])
        result.append(message)
    return result


check_normalize(normalize_ids)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 3. Reasoning from a stream

Write `reasoning_of(chunks)` that returns `(field_name, reasoning)` from a list of SDK chunks:
the name the server used (`"reasoning_content"` or `"reasoning"`) and the joined text, or
`(None, "")` when the model did not think aloud. It must not fail on a usage chunk
(`choices: []`). Read an undeclared field with `getattr(delta, name, None)`.
""",
        """
### Упражнение 3. Рассуждение из потока

Напишите `reasoning_of(chunks)`, которая по списку фрагментов (chunks) SDK возвращает
`(field_name, reasoning)`: имя поля, которое использовал сервер (`"reasoning_content"` или
`"reasoning"`), и склеенный текст, либо `(None, "")`, если модель не рассуждала. Функция не должна
падать на фрагменте со статистикой (`choices: []`). Необъявленное поле читайте через
`getattr(delta, name, None)`.
""",
    ),
    code(
        '''
def reasoning_of(chunks):
    # your code here
    return None, ""
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_reasoning_of(reasoning_of)
''',
    ),
    code(
        '''
def reasoning_of(chunks):
    name, text = None, ""
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        for key in ("reasoning_content", "reasoning"):
            piece = getattr(delta, key, None)
            if piece:
                name, text = name or key, text + piece
    return name, text


check_reasoning_of(reasoning_of)
''',
        hidden=True,
    ),
    md(
        """
[Next: 07 Qwen then and now](07_qwen_today.ipynb)
""",
        """
[Дальше: 07 Qwen тогда и сейчас](07_qwen_today.ipynb)
""",
    ),
])
