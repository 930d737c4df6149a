"""Lesson 06: thinking models (Kimi K2.6) in a tool loop: reasoning on the wire, the 400 a loop
gets when it drops it, the field names, <think> in raw text, and Kimi id hygiene."""

from nbbuild import Lesson, code, md


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
- `reasoning` (vLLM >= 0.17) versus `reasoning_content` (Moonshot, SGLang, llama.cpp);
- `<think>` in raw text and the K2-Thinking chat template; the parser's rule for a block that
  never closes;
- id hygiene for a self-hosted Kimi: foreign ids in the history make the model write broken ones.
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
- сравните поле `reasoning` (vLLM >= 0.17) и `reasoning_content` (Moonshot, SGLang, llama.cpp);
- разберёте `<think>` в сыром выводе модели (raw output) и шаблон чата (chat template)
  K2-Thinking, а также правило парсера (parser) для блока рассуждения, который так и не закрылся;
- наведёте порядок в id вызовов для Kimi на своём сервере: из-за чужих id в истории диалога
  (conversation history) модель начинает писать id, которые парсер не может прочитать.
""",
    ),
    md(
        """
## Setup

Moonshot's current models (`kimi-k2.6`, `kimi-k2.5`, `kimi-k2.7-code`) think by default. In
replay mode the answers come from cassettes **synthesized** from the documented formats of the
Moonshot API, vLLM and SGLang with a thinking model, not captured from a real service; the replay
server checks each history the way the Moonshot API does. The setup cell asks for the engine
profile `moonshot_thinking`, which answers as `kimi-k2.6`. With `LLM_MODE=live` (see
[lesson 00](00_start.ipynb)) the profile is ignored and the cells talk to your endpoint: set
`KIMI_MODEL=kimi-k2.6` to see what this lesson shows.
""",
        """
## Подготовка

Текущие модели Moonshot (`kimi-k2.6`, `kimi-k2.5`, `kimi-k2.7-code`) по умолчанию рассуждают.
В режиме воспроизведения (replay) ответы берутся из записей (cassettes), **синтезированных** по
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
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key)
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

The weather tool of the earlier lessons, registered in a `ToolRegistry` for `run_tool_loop`.
""",
        """
## 1. Инструмент

Инструмент погоды из прошлых уроков, зарегистрированный в `ToolRegistry` для `run_tool_loop`.
""",
    ),
    code(
        '''
WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict:
    """Look the weather up in a fixed table (a stub for a real weather API)."""
    return {"city": city, "weather": WEATHER.get(city, "unknown")}
''',
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

One request, three cities to check one at a time. The request sends no `temperature`: Moonshot's
model list says the temperature, `top_p` and `n` of `kimi-k2.6` and `kimi-k2.5` "cannot be
modified" (1.0 with thinking). The answer carries a field the OpenAI SDK does not declare, `reasoning_content`; the
SDK keeps it anyway, so read it with `getattr`.
""",
        """
## 2. Рассуждение в ответе API

Один запрос: проверить погоду в трёх городах по очереди. `temperature` в запросе нет: в списке
моделей Moonshot сказано, что температуру, `top_p` и `n` у `kimi-k2.6` и `kimi-k2.5` «изменить
нельзя» (с рассуждением это 1.0). В ответе есть поле, которого SDK OpenAI не объявляет, —
`reasoning_content`; SDK его всё равно сохраняет, читайте его через `getattr`.
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

Here is lesson 03's fixed streaming loop, with `ToolCallAccumulator` doing the gluing. Like the
guide's loops, it builds the assistant message from `content` and `tool_calls` only:

`messages.append({"role": "assistant", "content": ..., "tool_calls": ...})`

That was enough for Kimi-K2-Instruct. A thinking model's API wants more.
""",
        """
## 3. Цикл, который теряет рассуждение

Вот исправленный потоковый цикл из урока 03, склейку в нём делает `ToolCallAccumulator`. Как и
циклы из руководства, он собирает сообщение ассистента только из `content` и `tool_calls`:

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
            'f"Модель всё ещё вызывает инструменты после {max_rounds} раундов."'},
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
request went through; the second, the first one with that message in the history, failed. This is
the error users of agent frameworks reported again and again in 2026 with `kimi-k2.5` and
`kimi-k2.6`. The history the loop tried to send:
""",
        """
`openai.BadRequestError`, HTTP 400, в формулировке Moonshot: рассуждение включено, а сообщение
ассистента с индексом 1 — то, где вызовы, — вернулось без своего `reasoning_content`. Первый запрос
прошёл, а второй, где это сообщение впервые оказалось в истории, завершился ошибкой. Именно об этой ошибке в 2026
году снова и снова сообщали пользователи фреймворков для агентов с `kimi-k2.5` и `kimi-k2.6`.
История, которую цикл пытался отправить:
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

`kimi-k2.5` and `kimi-k2.6` accept `thinking: {"type": "disabled"}`. It is not an SDK parameter,
so it goes through `extra_body`. Without reasoning there is nothing to lose, and the loop of step 3
works as it is:
""",
        """
В собственном цикле исправление занимает одну строку: добавляйте в историю
`accumulator.assistant_message()` (потоковая выдача) или сохраняйте поле рассуждения из
`response.choices[0].message` (без неё). Такое правило есть не только у Kimi: DeepSeek тоже
отклоняет такую историю, хотя текст ошибки у него свой.

## 5. Как отключить рассуждение

`kimi-k2.5` и `kimi-k2.6` принимают `thinking: {"type": "disabled"}`. В SDK такого параметра нет,
поэтому он передаётся через `extra_body`. Без рассуждения терять нечего, и цикл из шага 3 работает
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
`kimi-k2.7-code` rejects `"disabled"`, and K2-Thinking has no switch at all: it always thinks.
Moonshot recommends temperature 1.0 with thinking and 0.6 without; on the platform these values
are fixed.

## 6. A forced `tool_choice` and thinking

`"required"` forces the model to call some tool in this turn, a named function
(`{"type": "function", "function": {"name": "get_weather"}}`) forces that one. With thinking on,
Moonshot's `kimi-k2.5` and `kimi-k2.6` refuse both with a 400 (the wording is as users report it;
see the box in step 10). Kimi K3, which always thinks, behaves otherwise (lessons 08 and 09). Here, on
`kimi-k2.6`:
""",
        """
`kimi-k2.7-code` отклоняет `"disabled"`, а у K2-Thinking переключателя нет вовсе: она рассуждает
всегда. Moonshot рекомендует температуру 1.0 с рассуждением и 0.6 без него; на платформе эти
значения зафиксированы.

## 6. Принудительный `tool_choice` и рассуждение

`"required"` заставляет модель вызвать в этом ходе какой-нибудь инструмент, а указанная функция
(`{"type": "function", "function": {"name": "get_weather"}}`) — именно её. При включённом
рассуждении `kimi-k2.5` и `kimi-k2.6` у Moonshot отклоняют оба варианта с ошибкой 400 (текст ошибки
— такой, как его приводят пользователи; см. справку в шаге 10). Kimi K3, которая рассуждает
всегда, ведёт себя иначе (уроки 08 и 09). Здесь — на
`kimi-k2.6`:
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
For these two models, a tool call forced before the model may think about whether to make one is
a contradiction the API resolves by refusing. Keep `tool_choice="auto"` (the default) and say in the prompt what
you need, or check the answer for calls in your code, as `run_tool_loop` does.

## 7. `reasoning` or `reasoning_content`

The same reasoning has different names on different servers:

| server | field in `message` and `delta` |
|---|---|
| Moonshot API, SGLang, llama.cpp (`--reasoning-format deepseek`) | `reasoning_content` |
| vLLM >= 0.17 | `reasoning` |
| Ollama | `reasoning` |
| OpenRouter | `reasoning`, plus `reasoning_details` |

The profile `vllm_thinking` answers like vLLM serving `moonshotai/Kimi-K2.6`:
""",
        """
Для этих двух моделей требовать вызов инструмента раньше, чем модель подумает, нужен ли он, —
противоречие, и API просто отклоняет такой запрос. Оставляйте `tool_choice="auto"` (значение по умолчанию) и говорите в
промпте, что вам нужно, или проверяйте вызовы в ответе в своём коде, как это делает
`run_tool_loop`.

## 7. `reasoning` или `reasoning_content`

Поле с рассуждением на разных серверах называется по-разному:

| сервер | поле в `message` и `delta` |
|---|---|
| API Moonshot, SGLang, llama.cpp (`--reasoning-format deepseek`) | `reasoning_content` |
| vLLM >= 0.17 | `reasoning` |
| Ollama | `reasoning` |
| OpenRouter | `reasoning` и ещё `reasoning_details` |

Профиль `vllm_thinking` отвечает как vLLM, на котором запущена `moonshotai/Kimi-K2.6`:
""",
    ),
    code(
        '''
if conn.replay_only("vllm_thinking is a recorded engine profile"):
    vllm = connect("kimi", engine="vllm_thinking")
    vllm_client = OpenAI(base_url=vllm.endpoint, api_key=vllm.api_key)
    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    reply = vllm_client.chat.completions.create(
        model=vllm.model_name, messages=messages, tools=tools
    )
    fields = reply.choices[0].message.model_dump(exclude_none=True)
    print(sorted(fields))
    print(fields["reasoning"])
''',
        ru={'"vllm_thinking is a recorded engine profile"':
            '"профиль vllm_thinking есть только в записях"'},
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
Kimi's chat template on the server reads `reasoning_content` from the history; when vLLM removed
that name, templates that expected it briefly broke (see the box in step 10).

## 8. `<think>` in raw text

Behind the API fields, a thinking model writes its reasoning as plain text between `<think>` and
`</think>`, in front of the usual tool-call markers. With `/completions` (lesson 04) you render
the prompt yourself. `load_tokenizer("kimi-k2-thinking")` carries the K2-Thinking chat template as
llama.cpp mirrors it, with the compact `tojson(separators=(',', ':'))` of Moonshot's file put back
(llama.cpp had to drop it; Moonshot's own file was not compared byte for byte). Look at what it
does with an earlier finished exchange and with the current tool loop:
""",
        """
Шаблон чата Kimi на сервере читает из истории `reasoning_content`; когда vLLM убрал это имя,
шаблоны, которые на него рассчитывали, на время сломались (см. справку в шаге 10).

## 8. `<think>` в сыром выводе

За полями API стоит обычный текст: модель пишет рассуждение между `<think>` и `</think>`, перед
привычными маркерами вызова. С `/completions` (урок 04) промпт собираете вы сами.
`load_tokenizer("kimi-k2-thinking")` содержит шаблон чата K2-Thinking в том виде, в каком его
хранит зеркало в llama.cpp, с возвращённым компактным `tojson(separators=(',', ':'))` из файла
Moonshot (llama.cpp пришлось его убрать; с собственным файлом Moonshot побайтно не сверено).
Посмотрите, что он делает с более ранним законченным обменом репликами и с текущим циклом вызовов:
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
## 9. Id hygiene for a self-hosted Kimi

Kimi models were trained on call ids of the form `functions.get_weather:0`, the number counting
calls over the whole conversation, and the chat template shows them the ids verbatim. The Moonshot
API renames the ids in a history itself before the model sees them. A self-hosted Kimi (vLLM,
SGLang) does not: if the history holds foreign ids, for example `call_...` from a conversation that
started with another provider, the model starts to imitate them, and the server's parser cannot
read the result. Reported cases include `call_59adf5614cfe...`, `functionsexec5` and a bare `0`.
The profile `sglang_drift` imitates this on SGLang:
""",
        """
## 9. Порядок в id вызовов для Kimi на своём сервере

Модели Kimi обучены на id вызовов вида `functions.get_weather:0`, где число — порядковый номер
вызова в диалоге, а шаблон чата показывает модели id как есть. API Moonshot сам переименовывает id в истории,
прежде чем их увидит модель. Kimi на своём сервере (vLLM, SGLang) этого не делает: если в истории
чужие id — например, `call_...` из диалога, начатого у другого провайдера, — модель начинает им
подражать, и парсер сервера не может прочитать результат. Среди известных случаев —
`call_59adf5614cfe...`, `functionsexec5` и просто `0`. Профиль `sglang_drift` воспроизводит это
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
    sglang_client = OpenAI(base_url=sglang.endpoint, api_key=sglang.api_key)
    messages = list(history)
    answer = run_tool_loop(sglang_client, messages, registry, model=sglang.model_name)
    print("tool_calls" in answer)
    show_raw(answer["content"])
''',
        ru={'"sglang_drift is a recorded engine profile"':
            '"профиль sglang_drift есть только в записях"'},
    ),
    md(
        """
The loop stopped: the answer has no `tool_calls`, because the call the model wrote sits, raw, in
`content`. `parse_kimi` can still read it, and says what is wrong with the id. The function name
is lost with it: Kimi's parsers take the name from the id, and `call_...` holds none.
""",
        """
Цикл остановился: в ответе нет `tool_calls`, потому что вызов, который написала модель, лежит в
`content` в сыром виде. `parse_kimi` всё же может его прочитать и объясняет, что не так с id.
Вместе с id потерялось и имя функции: парсеры Kimi берут имя из id, а в `call_...` его нет.
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
            '"профиль sglang_drift есть только в записях"'},
    ),
    md(
        """
## 10. Which model ids and server flags to use

| where | model id | thinking |
|---|---|---|
| Moonshot API (`https://api.moonshot.ai/v1`) | `kimi-k2.6`, `kimi-k2.5` | on by default; off with `extra_body={"thinking": {"type": "disabled"}}` |
| Moonshot API | `kimi-k2.7-code` | always on; `"disabled"` is an error |
| your own vLLM or SGLang | `moonshotai/Kimi-K2.6`, `moonshotai/Kimi-K2.5` | on by default; off per request with `chat_template_kwargs: {"thinking": false}` |
| your own vLLM or SGLang | `moonshotai/Kimi-K2-Thinking` | always on: no switch |

The vLLM flags for all of them: `--tool-call-parser kimi_k2 --enable-auto-tool-choice
--reasoning-parser kimi_k2 --trust-remote-code`; `--reasoning-parser` is the flag that moves the
`<think>` text into the reasoning field. These are large models (K2-Thinking runs in INT4 on 8
H200 GPUs), so a class uses the platform.

**The one rule to remember:** with thinking on, every assistant message goes back into the history
with its reasoning, under the field name the server used.

> **Reference: versions, reports, sources** (checked in 2026; they change, the rule above does not)
> - vLLM: Moonshot's K2.6 deploy guide recommends 0.19.1; the K2.5 recipe asks for 0.15.0 or newer
>   (its 0.25.0 line is for the B300 EAGLE3 and CPU KV-offload path only). The reasoning field was
>   renamed `reasoning` in vLLM PR #27752 and the old name removed in #33402 (0.17.x);
>   vllm#33616 tells how Kimi templates broke.
> - Moonshot platform: the model list (platform.kimi.ai, models overview) fixes `temperature`,
>   `top_p` and `n` of `kimi-k2.6`/`kimi-k2.5`; the answer to another value (a 400, "only 1 is
>   allowed") is reported by users. The forced-`tool_choice` 400s are reported by users (AstrBot
>   PR #7825 for `"required"`, an oh-my-pi report for a named function), not in Moonshot's docs.
>   `kimi-k2-0905-preview`, the other preview ids and `kimi-k2-thinking(-turbo)` are reported
>   retired in 2026 (promptfoo's provider docs), `kimi-k2.5` is to follow on 2026-08-31;
>   `kimi-k3` always thinks and sets its depth with `thinking.effort` (Kimi-Vendor-Verifier's K3
>   tests; lesson 09). Users also
>   report advice to give thinking mode `max_tokens` of 16000 or more.
> - Real vs synthesized: every answer in this lesson is synthesized. The missing-reasoning 400
>   copies Moonshot's wording as users quote it (cherry-studio #12619, mastra #12592); the
>   `reasoning` field, vLLM's source; the K2-Thinking render, llama.cpp's mirror of the template;
>   the `</think>`-only prompts of K2.5/K2.6, tinker-cookbook's renderers; the id drift, HF
>   discussion #48 on Kimi-K2-Instruct, SGLang PR #21377 and vLLM PR #46127.
""",
        """
## 10. Какие id моделей и флаги сервера использовать

| где | id модели | рассуждение |
|---|---|---|
| API Moonshot (`https://api.moonshot.ai/v1`) | `kimi-k2.6`, `kimi-k2.5` | включено по умолчанию; выключается через `extra_body={"thinking": {"type": "disabled"}}` |
| API Moonshot | `kimi-k2.7-code` | включено всегда; `"disabled"` — ошибка |
| свой vLLM или SGLang | `moonshotai/Kimi-K2.6`, `moonshotai/Kimi-K2.5` | включено по умолчанию; выключается в запросе через `chat_template_kwargs: {"thinking": false}` |
| свой vLLM или SGLang | `moonshotai/Kimi-K2-Thinking` | включено всегда: переключателя нет |

Флаги vLLM для всех этих моделей: `--tool-call-parser kimi_k2 --enable-auto-tool-choice
--reasoning-parser kimi_k2 --trust-remote-code`; именно `--reasoning-parser` переносит текст
`<think>` в поле рассуждения. Это большие модели (K2-Thinking в INT4 работает на 8 видеокартах
H200), поэтому в классе используют платформу.

**Главное правило:** при включённом рассуждении каждое сообщение ассистента возвращается в историю
вместе с рассуждением, под тем именем поля, которое дал сервер.

> **Справка: версии, отчёты, источники** (проверено в 2026 году; они меняются, правило выше — нет)
> - vLLM: руководство Moonshot по развёртыванию K2.6 советует 0.19.1; рецепт K2.5 требует 0.15.0
>   или новее (строка про 0.25.0 относится только к варианту B300 с EAGLE3 и выгрузкой KV-кэша на
>   CPU). Поле рассуждения переименовано в `reasoning` в PR vLLM #27752, старое имя удалено в
>   #33402 (0.17.x); как из-за этого сломались шаблоны Kimi, описано в vllm#33616.
> - Платформа Moonshot: список моделей (platform.kimi.ai, обзор моделей) фиксирует
>   `temperature`, `top_p` и `n` у `kimi-k2.6`/`kimi-k2.5`; ответ на другое значение (400, «only 1
>   is allowed») известен из сообщений пользователей. Ошибки 400 на принудительный `tool_choice`
>   тоже известны от пользователей (PR AstrBot #7825 для `"required"`, отчёт oh-my-pi для
>   указанной функции), а не из документации Moonshot. `kimi-k2-0905-preview`,
>   другие id с окончанием -preview и `kimi-k2-thinking(-turbo)`, по сообщениям, сняты в 2026 году
>   (документация провайдера promptfoo), `kimi-k2.5` последует 2026-08-31; `kimi-k3` рассуждает
>   всегда, а глубину рассуждения задаёт `thinking.effort` (тесты Kimi-Vendor-Verifier для K3; урок
>   09). Пользователи также советуют в режиме рассуждения ставить `max_tokens` не меньше 16000.
> - Настоящее и синтезированное: все ответы этого урока синтезированы. Ошибка 400 без рассуждения
>   повторяет текст Moonshot в том виде, в каком его цитируют пользователи (cherry-studio #12619,
>   mastra #12592); поле `reasoning` — по исходному коду vLLM; промпт K2-Thinking — по зеркалу
>   шаблона в llama.cpp; промпты K2.5/K2.6 с одним `</think>` — по рендерерам tinker-cookbook;
>   дрейф id — по обсуждению #48 у Kimi-K2-Instruct на HF, PR SGLang #21377 и PR vLLM #46127.
""",
    ),
    md(
        """
## Summary

- A thinking model returns its reasoning in its own field (`reasoning_content` on Moonshot, SGLang
  and llama.cpp, `reasoning` on vLLM >= 0.17 and Ollama), and in a stream the reasoning deltas come
  before content and calls.
- With thinking on, the Moonshot API refuses a history whose assistant message with `tool_calls`
  lost its reasoning: **400 from the second round on**. Loops that rebuild the message from
  `content` and `tool_calls`, as the guide's do, hit it. Send the reasoning back under the name the
  server used: `ToolCallAccumulator.assistant_message()` and `run_tool_loop` do.
- `extra_body={"thinking": {"type": "disabled"}}` switches thinking off on `kimi-k2.5`/`kimi-k2.6`;
  on them a forced `tool_choice` (`"required"` or a named function) and thinking do not mix (Kimi
  K3 differs: lesson 08).
- In raw text the reasoning is a `<think>` block; `parse_kimi` and `KimiStreamParser` split it off,
  end an unclosed block at the tool-call section and keep every call.
- A self-hosted Kimi needs `functions.NAME:IDX` ids in its history: `normalize_kimi_ids`.
""",
        """
## Итоги

- Модель с рассуждением возвращает его в отдельном поле (`reasoning_content` у Moonshot, SGLang и
  llama.cpp, `reasoning` у vLLM >= 0.17 и Ollama), а в потоке дельты рассуждения приходят раньше
  текста и вызовов.
- При включённом рассуждении API Moonshot отклоняет историю, в которой сообщение ассистента с
  `tool_calls` потеряло рассуждение: **400 начиная со второго раунда**. На это натыкаются циклы,
  которые, как в руководстве, собирают сообщение из `content` и `tool_calls`. Возвращайте
  рассуждение под тем именем, которое дал сервер: так делают `ToolCallAccumulator.assistant_message()`
  и `run_tool_loop`.
- `extra_body={"thinking": {"type": "disabled"}}` отключает рассуждение у `kimi-k2.5`/`kimi-k2.6`;
  у них принудительный `tool_choice` (`"required"` или указанная функция) и рассуждение
  несовместимы (у Kimi K3 иначе: урок 08).
- В сыром выводе рассуждение — это блок `<think>`; `parse_kimi` и `KimiStreamParser` отделяют его,
  заканчивают незакрытый блок на секции вызовов и сохраняют каждый вызов.
- Kimi на своём сервере должна видеть в истории id вида `functions.NAME:IDX`: для этого есть
  `normalize_kimi_ids`.
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
