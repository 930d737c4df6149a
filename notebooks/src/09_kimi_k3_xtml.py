"""Lesson 09: Kimi K3's XTML: the tag format, an offline render, K2 and K3 side by side, the K3
API contract."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Kimi K3's XTML", "ru": "XTML в Kimi K3"},
    "summary": {
        "en": "Kimi K3's tag format next to K2's, parsed by hand; the K3 API's rules",
        "ru": "теговый формат Kimi K3 рядом с форматом K2, разбор вручную; правила API K3",
    },
    "minutes_reading": (51, 70),
    "minutes_exercises": (24, 45),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_typed_value", "check_render_call", "check_result_tags"),
}

LESSON = Lesson("09_kimi_k3_xtml", [
    md(
        """
# Kimi K3's XTML

**Goal:** read and write Kimi K3's tag format by hand, parse it and compare it with Kimi-K2's
markers, and use K3 over the API by its rules.
""",
        """
# XTML в Kimi K3

**Цель:** научиться читать и писать теговый формат Kimi K3 вручную, разбирать его и сравнивать с
маркерами Kimi-K2, а также работать с K3 через API по его правилам.
""",
    ),
    md(
        """
## What you will build

- one conversation rendered twice: as Kimi-K2 writes it (lesson 04) and as Kimi K3 writes it;
- K3's prompt rendered offline, and compared with the one Jinja template known for it;
- the model's K3 output parsed with `parse_kimi_xtml`, compared with what `parse_kimi` finds in
  the K2 text, and streamed through `KimiXtmlStreamParser`;
- `tool_choice` and `response_format` as K3 sees them: system messages in the prompt;
- the K3 API: reasoning always on and sent back, the reasoning effort (`reasoning_effort`), which `tool_choice` values
  it takes, and what a vLLM server with the `kimi_k3` parsers streams.

Kimi K3's tool calls are no longer the special-token sections of lesson 04 but nested tags, a
format vLLM's docs call XTML.
""",
        """
## Что вы сделаете

- соберёте промпт для одного и того же диалога дважды: как его пишет Kimi-K2 (урок 04) и как его
  пишет Kimi K3;
- соберёте промпт K3 без сети и сравните его с единственным известным шаблоном Jinja для K3;
- разберёте вывод модели в формате K3 функцией `parse_kimi_xtml`, сравните результат с тем, что
  `parse_kimi` находит в тексте K2, и пропустите вывод K3 через потоковый парсер
  `KimiXtmlStreamParser`;
- увидите `tool_choice` и `response_format` так, как их видит K3: системными сообщениями в промпте;
- поработаете с API K3: рассуждение (reasoning) включено всегда и отправляется обратно, его
  глубину задаёт `reasoning_effort`, принимаются не все значения `tool_choice`, а сервер vLLM с
  парсерами `kimi_k3` отдаёт вызовы в потоке целиком.

Вызовы инструментов (tool calls) у модели Kimi K3 — уже не секции из спецтокенов, как в уроке 04,
а вложенные теги; в документации vLLM этот формат называют XTML.
""",
    ),
    md(
        """
## Setup

In replay mode the API answers below come from cassettes **synthesized** from the documented K3
API and parser behaviour, not captured from a real service; the raw texts are rendered here by the
course's code. With `LLM_MODE=live` (see [lesson 00](00_start.ipynb)) set `KIMI_MODEL=kimi-k3`
and the API cells talk to Moonshot's platform. No K3 tokenizer is loaded: the K3 text is
rendered by `render_kimi_xtml`; the K2 text by the course's offline K2 tokenizer, as in lesson 04.
""",
        """
## Подготовка

В режиме воспроизведения (replay) ответы API ниже берутся из кассет (cassettes),
**синтезированных** по документированному поведению API K3 и её парсеров, а не записанных с
настоящего сервиса; сырые тексты собирает прямо здесь код курса. В режиме live (`LLM_MODE=live`, см.
[урок 00](00_start.ipynb)) задайте `KIMI_MODEL=kimi-k3`, и ячейки с API будут обращаться к
платформе Moonshot. Токенизатор K3 не загружается: текст K3 пишет `render_kimi_xtml`, а текст K2 —
офлайн-токенизатор K2 из курса, как в уроке 04.
""",
    ),
    code(
        '''
import json

import openai
from openai import OpenAI

from helpers import connect, load_tokenizer, parse_kimi, set_language
from helpers.display import compare_table, show_tool_calls
from helpers.formats import KimiXtmlStreamParser, parse_kimi_xtml, render_kimi_xtml

set_language("en")  # the language of the helpers' messages
conn = connect("kimi", engine="moonshot_k3")  # replay: the Moonshot API with kimi-k3
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
''',
        ru={"# replay: the Moonshot API with kimi-k3": "# replay: API Moonshot с kimi-k3"},
    ),
    md(
        """
## 1. The tool

Describe each tool once, as a `tools` entry, and map its name to its function in `tool_map`:
the prompts and requests below send `tools`, and step 7 runs the call through `tool_map`. Here
they are for the weather tool of the earlier lessons.
""",
        """
## 1. Инструмент

Описывайте каждый инструмент один раз, элементом `tools`, и связывайте его имя с функцией в
`tool_map`: промпты и запросы ниже передают `tools`, а шаг 7 выполняет вызов через
`tool_map`. Вот они для инструмента погоды из прошлых уроков.
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
## 2. One conversation, two formats

Do not reuse K2's parser or prompt for K3: the same conversation becomes two different texts. A
whole round of the guide's dialog: the question, the assistant's call (with its reasoning), the
tool's result.
""",
        """
## 2. Один диалог, два формата

Не используйте для K3 парсер и промпт от K2: один и тот же диалог превращается в два разных
текста. Целый раунд диалога из руководства: вопрос, вызов ассистента (с его рассуждением) и результат
инструмента.
""",
    ),
    code(
        '''
call = {"id": "functions.get_weather:0", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
messages = [
    {"role": "user", "content": "What's the weather like in Beijing today?"},
    {"role": "assistant", "content": "", "reasoning_content": "I should call get_weather.",
     "tool_calls": [call]},
    {"role": "tool", "tool_call_id": call["id"],
     "content": json.dumps(get_weather("Beijing"))},
]
''',
    ),
    md(
        """
Kimi-K2 first, with lesson 04's offline tokenizer and the official K2-Instruct-0905 template. We
print from the assistant's turn on:
""",
        """
Сначала Kimi-K2 — офлайн-токенизатором из урока 04 с официальным шаблоном чата (chat template)
K2-Instruct-0905. Печатаем всё, начиная с реплики ассистента:
""",
    ),
    code(
        '''
k2_tokenizer = load_tokenizer("kimi-k2")
k2_prompt = k2_tokenizer.apply_chat_template(
    messages, tools=tools, tokenize=False, add_generation_prompt=True
)
print(k2_prompt[k2_prompt.index("<|im_assistant|>"):])
''',
    ),
    md(
        """
Now Kimi K3. Every part of a K3 conversation is an element `<|open|>TAG attrs<|sep|>` ...
`<|close|>TAG<|sep|>`, and every message ends with `<|end_of_msg|>`. Only those four are special
tokens; the tag names (`message`, `think`, `response`, `tools`, `call`, `argument`) and their
attributes are ordinary text. The whole prompt is one line; a small helper starts a new line at
every tag, indented by depth, so we can read it:
""",
        """
Теперь Kimi K3. Каждая часть диалога K3 — элемент `<|open|>ТЕГ атрибуты<|sep|>` ...
`<|close|>ТЕГ<|sep|>`, а каждое сообщение заканчивается `<|end_of_msg|>`. Спецтокены (special
tokens) — только эти четыре; имена тегов (`message`, `think`, `response`, `tools`, `call`,
`argument`) и их атрибуты — обычный текст. Весь промпт — одна строка; маленькая функция начинает
новую строку у каждого тега и делает отступ по глубине вложенности, чтобы его можно было читать:
""",
    ),
    code(
        r'''
def show_xtml(text):
    """Print XTML with every tag on a new line, indented by how deep it is nested."""
    depth, lines = 0, []
    for piece in text.replace("<|open|>", "\n<|open|>").replace("<|close|>", "\n<|close|>").split("\n"):
        if piece.startswith("<|close|>"):
            depth -= 1
        if piece:
            lines.append("  " * depth + piece)
        if piece.startswith("<|open|>"):
            depth += 1
    print("\n".join(lines))
''',
        ru={
        '"""Print XTML with every tag on a new line, indented by how deep it is nested."""': '"""Напечатать XTML, каждый тег с новой строки, с отступом по глубине вложенности."""',
        },
    ),
    code(
        '''
k3_prompt = render_kimi_xtml(messages, tools=tools, thinking_effort="high")
show_xtml(k3_prompt[k3_prompt.index('<|open|>message role="assistant"'):])
''',
    ),
    md(
        """
The differences that matter to a parser and to a loop, in one table:
""",
        """
Сведём в таблицу различия, которые важны парсеру и циклу:
""",
    ),
    code(
        '''
rows = [
    ("reasoning", "not rendered (0905)", "think block"),
    ("call", "section with markers", "tools > call element"),
    ("call id in the text", "functions.get_weather:0", 'none: index="1"'),
    ("arguments", "one JSON text", "typed argument elements"),
    ("tool result", "## Return of <id>", 'tool="get_weather" index="1"'),
]
compare_table(rows, ("", "Kimi-K2", "Kimi K3"))
''',
        ru={'"not rendered (0905)"': '"не выводится (0905)"',
            '"section with markers"': '"секция с маркерами"',
            '"tools > call element"': '"элемент call внутри tools"',
            '"call id in the text"': '"id вызова в тексте"',
            "'none: index=\"1\"'": "'нет: index=\"1\"'",
            '"one JSON text"': '"один текст JSON"',
            '"typed argument elements"': '"типизированные элементы argument"',
            '"tool result"': '"результат инструмента"',
            '"reasoning"': '"рассуждение"', '"call"': '"вызов"', '"arguments"': '"аргументы"',
            '"think block"': '"блок think"'},
    ),
    md(
        """
K3's text holds **no call id**. The result comes back as `message role="tool"` with the tool's name
and the call's `index`, and results are put in the order of the assistant's `tool_calls`, matched
by `tool_call_id`. The id still matters to you (the API needs it to match results), but the model
never sees it: a server invents one for each call it parses. The effort we asked for is a system
message at the top of the prompt; the platform's tests accept only `low`, `high` and `max` as its
value (where the message's wording comes from: [reference](#reference)):
""",
        """
В тексте K3 **нет id вызова**. Результат возвращается сообщением `message role="tool"` с именем
инструмента и индексом вызова `index`, а сами результаты ставятся в порядке `tool_calls`
ассистента (какой результат к какому вызову относится, определяют по `tool_call_id`). Для вас id по-прежнему важен (по нему API находит
результат), но модель его не видит: сервер придумывает id каждому вызову, который разобрал.
Заданная глубина рассуждения (effort) — системное сообщение в начале промпта; тесты платформы
принимают в нём только `low`, `high` и `max` (откуда взят текст сообщения — в
[справке](#reference)):
""",
    ),
    code(
        '''
start = k3_prompt.index('<|open|>message role="system" type="thinking-effort"')
end = k3_prompt.index('<|open|>message role="user"')
show_xtml(k3_prompt[start:end])
''',
    ),
    md(
        """
## 3. Where the K3 prompt comes from

Render K3 prompts with `render_kimi_xtml`, not with a chat template: **K3 ships no Jinja
template**, its tokenizer renders a conversation with a program. `render_kimi_xtml` follows the
one Jinja template known for K3, kept in `data/templates/kimi_k3.jinja` (where it comes from:
[reference](#reference)). Here is one place where the two differ, on our conversation:
""",
        """
## 3. Откуда берётся промпт K3

Собирайте промпт K3 функцией `render_kimi_xtml`, а не шаблоном чата: **шаблона Jinja у K3
нет**, её токенизатор собирает промпт из диалога программой. `render_kimi_xtml` следует
единственному известному шаблону Jinja для K3, копия которого лежит в
`data/templates/kimi_k3.jinja` (откуда он взят — в [справке](#reference)). Вот место, где они
расходятся на нашем диалоге:
""",
    ),
    code(
        '''
from transformers.utils.chat_template_utils import render_jinja_template

from helpers.paths import DATA_DIR

template = (DATA_DIR / "templates" / "kimi_k3.jinja").read_text(encoding="utf-8")
rendered, _ = render_jinja_template(
    conversations=[messages], tools=tools, chat_template=template,
    add_generation_prompt=True, thinking_effort="high",
)
llama_prompt = rendered[0]
print("the same text:", llama_prompt == k3_prompt)
show_xtml(llama_prompt[llama_prompt.index('<|open|>call'):llama_prompt.index('<|close|>tools')])
''',
        ru={'"the same text:"': '"тексты совпадают:"'},
    ),
    md(
        """
The template writes the arguments, JSON text in OpenAI's messages, as one `json` block;
`render_kimi_xtml` decodes the text first and writes typed `argument` elements, as servers do
before they render. Both forms are legal K3: a call carries either typed elements or one `json`
block. The course writes the typed form, the one vLLM's `kimi_k3` parser describes (section 5).
""",
        """
Шаблон записывает аргументы (в сообщениях OpenAI это текст JSON) одним блоком `json`, а
`render_kimi_xtml` сначала декодирует текст и пишет типизированные элементы `argument`, как это
делают серверы, прежде чем собрать промпт. Обе формы допустимы в K3: у вызова либо типизированные элементы,
либо один блок `json`. Курс пишет типизированную форму — ту, что описывает парсер `kimi_k3` в
vLLM (раздел 5).
""",
    ),
    md(
        """
## 4. The model's output, parsed

Parse K3's output with `parse_kimi_xtml(text, opened="think")`, and since K3 writes no call ids,
pass `call_offset=` so that the ids the parser invents stay unique. The prompt ends where the model
starts: inside an open assistant message and an open `think` block (thinking is on). What the
model writes next is the rest of the assistant message above.
Cut it out of the history's render: that is K3's raw output for this call (where this text
comes from: [reference](#reference)).
""",
        """
## 4. Разбираем вывод модели

Разбирайте вывод K3 функцией `parse_kimi_xtml(text, opened="think")`, а так как K3 не пишет id
вызовов, передавайте `call_offset=`, чтобы придуманные парсером id не повторялись. Промпт
заканчивается там, где начинает модель: внутри открытого сообщения ассистента и открытого блока
`think` (рассуждение включено). Дальше модель пишет остаток сообщения ассистента, который
мы видели выше. Вырежем его из промпта, собранного для истории, — это сырой вывод K3 для этого
вызова (откуда взят этот текст — в [справке](#reference)).
""",
    ),
    code(
        '''
question = messages[:1]
k3_generation_prompt = render_kimi_xtml(question, tools=tools, thinking_effort="high")
k3_history = render_kimi_xtml(messages[:2], tools=tools, thinking_effort="high",
                              add_generation_prompt=False)
raw_k3 = k3_history.removeprefix(k3_generation_prompt)
print(k3_generation_prompt[k3_generation_prompt.rindex("<|open|>message"):])
print(raw_k3)
''',
    ),
    md(
        """
The same call in K2's format, cut from lesson 04's template the same way:
""",
        """
Тот же вызов в формате K2, вырезанный таким же способом из шаблона урока 04:
""",
    ),
    code(
        '''
k2_generation_prompt = k2_tokenizer.apply_chat_template(
    question, tools=tools, tokenize=False, add_generation_prompt=True
)
k2_history = k2_tokenizer.apply_chat_template(messages[:2], tools=tools, tokenize=False)
raw_k2 = k2_history.removeprefix(k2_generation_prompt).removesuffix("<|im_end|>")
print(raw_k2)
''',
    ),
    md(
        """
`parse_kimi` reads K2's text; `parse_kimi_xtml` reads K3's. `opened="think"` says the prompt
already opened the `think` block, so the text before `<|close|>think<|sep|>` is reasoning:
""",
        """
`parse_kimi` читает текст K2, `parse_kimi_xtml` — текст K3. `opened="think"` сообщает парсеру,
что блок `think` уже открыт в промпте, поэтому текст до `<|close|>think<|sep|>` — рассуждение:
""",
    ),
    code(
        '''
k2 = parse_kimi(raw_k2)
k3 = parse_kimi_xtml(raw_k3, opened="think")
rows = [
    ("reasoning", k2.reasoning, k3.reasoning),
    ("content", repr(k2.content), repr(k3.content)),
    ("id", k2.tool_calls[0]["id"], k3.tool_calls[0]["id"]),
    ("name", k2.tool_calls[0]["function"]["name"], k3.tool_calls[0]["function"]["name"]),
    ("arguments", k2.tool_calls[0]["function"]["arguments"], k3.tool_calls[0]["function"]["arguments"]),
    ("errors", k2.errors, k3.errors),
]
compare_table(rows, ("", "parse_kimi (K2)", "parse_kimi_xtml (K3)"))
''',
        ru={'"reasoning"': '"рассуждение"', '"errors"': '"ошибки (errors)"'},
    ),
    md(
        """
The same call either way. K2's id was in the text; K3's text has no id, so the parser invents
`functions.get_weather:0` in the form vLLM uses for Kimi models. The number at the end counts calls
over the whole conversation, and the parser cannot see earlier turns: `call_offset=` tells it how
many calls came before, so `parse_kimi_xtml(text, call_offset=2)` names this call
`functions.get_weather:2`, and ids stay unique across the conversation. K2's text has no reasoning
here because the 0905 template does not render it.

**Typed values.** A `string` value is raw text: no quotes, no escaping, newlines as they are. Any
other type (`number`, `boolean`, `null`, `object`, `array`) is compact JSON. The parser turns them
into one JSON object:
""",
        """
В обоих случаях вызов один и тот же. У K2 id был в тексте, а в тексте K3 id нет, поэтому парсер
придумывает `functions.get_weather:0` — в той форме, в какой vLLM делает id для моделей Kimi. Число
в конце — номер вызова во всём диалоге, а прежних ходов парсер не видит: `call_offset=` сообщает
ему, сколько вызовов было раньше, так что `parse_kimi_xtml(text, call_offset=2)` назовёт этот вызов
`functions.get_weather:2`, и id не повторятся в пределах диалога. Рассуждения у K2 здесь нет,
потому что шаблон 0905 его не выводит.

**Типизированные значения.** Значение типа `string` — сырой текст: без кавычек, без
экранирования (escaping), переводы строк как есть. Любой другой тип (`number`, `boolean`, `null`,
`object`, `array`) — компактный JSON. Парсер собирает из них один объект JSON:
""",
    ),
    code(
        r'''
raw_typed = (
    '<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|>'
    '<|open|>call tool="save_note" index="1"<|sep|>'
    '<|open|>argument key="text" type="string"<|sep|>He said "hi"\nthen left<|close|>argument<|sep|>'
    '<|open|>argument key="stars" type="number"<|sep|>4.5<|close|>argument<|sep|>'
    '<|open|>argument key="public" type="boolean"<|sep|>false<|close|>argument<|sep|>'
    '<|open|>argument key="tags" type="array"<|sep|>["a","b"]<|close|>argument<|sep|>'
    '<|close|>call<|sep|><|close|>tools<|sep|>'
)
typed = parse_kimi_xtml(raw_typed, opened="think")
print(typed.tool_calls[0]["function"]["arguments"])
assert json.loads(typed.tool_calls[0]["function"]["arguments"])["stars"] == 4.5
''',
    ),
    md(
        """
## 5. Streaming: each call whole

Count a K3 call only once its `<|close|>call<|sep|>` has arrived, and expect it in one piece:
vLLM's `kimi_k3` parser sends each call whole at that point, never argument fragments.
`KimiXtmlStreamParser` does the same. Feed it the raw text five
characters at a time and note where the call comes out:
""",
        """
## 5. Потоковая выдача: каждый вызов целиком

Засчитывайте вызов K3 только после того, как пришёл его `<|close|>call<|sep|>`, и ждите его
целиком: парсер `kimi_k3` в vLLM отдаёт каждый вызов в этот момент одним куском, а не аргументы по
частям. `KimiXtmlStreamParser` поступает так же. Подадим ему
сырой текст по пять символов и посмотрим, где появится вызов:
""",
    ),
    code(
        '''
parser = KimiXtmlStreamParser(opened="think")
read = ""
for start in range(0, len(raw_k3), 5):
    piece = raw_k3[start:start + 5]
    read += piece
    for delta in parser.feed(piece):
        if "tool_calls" in delta:
            print("after", len(read), "of", len(raw_k3), "characters, read up to:", repr(read[-24:]))
            show_tool_calls(delta["tool_calls"])
parser.close()
assert parser.result.tool_calls == k3.tool_calls
''',
        ru={'"after"': '"после"', '"of"': '"из"', '"characters, read up to:"': '"символов, прочитано до:"'},
    ),
    md(
        """
**A cut-off call is not a call.** If the output stops before `<|close|>call<|sep|>` (a
`max_tokens` limit, a dropped connection), a string argument may be cut short and still look like
valid JSON. The parser does not return such a call; it reports it in `errors` with what it read:
""",
        """
**Обрезанный вызов — не вызов.** Если вывод оборвался до `<|close|>call<|sep|>` (лимит
`max_tokens`, обрыв соединения), строковый аргумент может оказаться обрезанным и при этом выглядеть
как корректный JSON. Такой вызов парсер не возвращает, а сообщает о нём в `errors` вместе с тем,
что успел прочитать:
""",
    ),
    code(
        '''
cut = raw_k3[:raw_k3.index("Beijing") + 4]
cut_result = parse_kimi_xtml(cut, opened="think")
print(cut_result.tool_calls)
for error in cut_result.errors:
    print("-", error)
''',
    ),
    md(
        """
Compare lesson 04: `parse_kimi` returns a cut-off K2 call with an error, because K2's arguments
are one JSON text and a cut JSON text does not parse. K3's raw string values give no such signal.

## 6. `tool_choice` and `response_format` are prompt text

When you render K3 prompts yourself, pass `tool_choice` and `response_format` to
`render_kimi_xtml`: they do not reach K3 as settings, the renderer writes them into the prompt as
system option messages. `"required"`:
""",
        """
Сравните с уроком 04: `parse_kimi` возвращает обрезанный вызов K2 с ошибкой, потому что аргументы
K2 — один текст JSON, а обрезанный JSON не разбирается. У сырых строковых значений K3 такого
признака нет.

## 6. `tool_choice` и `response_format` — это текст промпта

Собирая промпт K3 сами, передавайте `tool_choice` и `response_format` в `render_kimi_xtml`: до
K3 они доходят не как настройки, программа сборки промпта вписывает их туда системными сообщениями
с опциями. `"required"`:
""",
    ),
    code(
        '''
required_prompt = render_kimi_xtml(question, tools=tools, tool_choice="required")
show_xtml(required_prompt[required_prompt.index('<|open|>message role="user"'):])
''',
    ),
    md(
        """
`"none"` writes a similar sentence; `"auto"` writes nothing. A named function also writes
nothing, which fits the platform ignoring a named choice (section 7).
""",
        """
`"none"` пишет похожую фразу, `"auto"` не пишет ничего. Выбор функции по имени тоже ничего не добавляет,
и это согласуется с тем, что платформа такой выбор не учитывает (раздел 7).
""",
    ),
    code(
        '''
named = {"type": "function", "function": {"name": "get_weather"}}
assert render_kimi_xtml(question, tools=tools, tool_choice=named) == render_kimi_xtml(question, tools=tools)
''',
    ),
    md(
        """
A JSON `response_format` becomes a system message with the schema:
""",
        """
`response_format` с JSON превращается в системное сообщение со схемой:
""",
    ),
    code(
        '''
schema = {"type": "object", "properties": {"weather": {"type": "string"}}, "required": ["weather"]}
response_format = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
json_prompt = render_kimi_xtml(question, response_format=response_format)
show_xtml(json_prompt[json_prompt.index('<|open|>message role="user"'):])
''',
    ),
    md(
        """
## 7. The K3 API contract

On Moonshot's platform `kimi-k3` always thinks: send its reasoning back with every assistant
message, and set how deeply it thinks with the top-level `reasoning_effort`. The rules (their
sources are in the [reference](#reference)):

- the reasoning comes back in `reasoning_content`, and the assistant messages you send back must
  carry it (thinking cannot be switched off, and K3 keeps the reasoning of the whole
  conversation);
- `reasoning_effort` is `low`, `high` or `max` (the default); it is an SDK parameter, so no
  `extra_body` is needed. The K2.x `thinking` field is not needed either; the vendor verifier
  also accepts `thinking: {"effort": ...}` ([reference](#reference));
- `tool_choice` takes `"auto"`, `"none"` and `"required"` (unlike `kimi-k2.6`, which refuses
  `"required"` with thinking on: lesson 08); `"required"` with no tools is a 400; **a named
  function is silently ignored**, as if no `tool_choice` were sent.

One round with the effort set to `high`:
""",
        """
## 7. Правила API K3

На платформе Moonshot `kimi-k3` рассуждает всегда: отправляйте её рассуждение обратно с каждым
сообщением ассистента, а глубину рассуждения задавайте полем верхнего уровня `reasoning_effort`.
Правила (их источники — в [справке](#reference)):

- рассуждение приходит в `reasoning_content`, и сообщения ассистента, которые вы отправляете
  обратно, должны его содержать (выключить рассуждение нельзя, а K3 хранит рассуждения всего
  диалога);
- `reasoning_effort` принимает `low`, `high` или `max` (по умолчанию); это параметр SDK, так что
  `extra_body` не нужен. Поле `thinking` из K2.x тоже не нужно; набор проверок для поставщиков
  принимает и `thinking: {"effort": ...}` ([справка](#reference));
- `tool_choice` принимает `"auto"`, `"none"` и `"required"` (в отличие от `kimi-k2.6`, которая с
  включённым рассуждением отклоняет `"required"`: урок 08); `"required"` без инструментов — ошибка
  400; **выбор функции по имени молча не учитывается**, как будто `tool_choice` не передан вовсе.

Один раунд с глубиной `high`:
""",
    ),
    code(
        '''
reasoning_effort = "high"  # low, high or max (the default)
messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto",
    reasoning_effort=reasoning_effort,
)
message = completion.choices[0].message
print("reasoning_content:", getattr(message, "reasoning_content", None))
show_tool_calls(message.tool_calls)
''',
        ru={"# low, high or max (the default)": "# low, high или max (по умолчанию)"},
    ),
    md(
        """
Put the assistant message into the history **with** its `reasoning_content`, then the result.
The call's id came from the server (the model wrote none), in K2's `name:N` form:
""",
        """
Добавим в историю сообщение ассистента **вместе** с `reasoning_content`, а за ним — результат.
Id вызова пришёл от сервера (модель его не писала), в форме `name:N`, как у K2:
""",
    ),
    code(
        '''
tool_call = message.tool_calls[0]
assistant = {"role": "assistant", "content": message.content,
             "reasoning_content": getattr(message, "reasoning_content", None),
             "tool_calls": [tool_call.model_dump(exclude_none=True)]}
result = tool_map[tool_call.function.name](**json.loads(tool_call.function.arguments))
tool_message = {"role": "tool", "tool_call_id": tool_call.id, "name": tool_call.function.name,
                "content": json.dumps(result)}
messages += [assistant, tool_message]
''',
    ),
    md(
        """
The second round sends this history back, reasoning included:
""",
        """
Второй раунд отправляет эту историю обратно вместе с рассуждением:
""",
    ),
    code(
        '''
final = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto",
    reasoning_effort=reasoning_effort,
)
print(final.choices[0].message.content)
''',
    ),
    md(
        """
Drop the reasoning from that assistant message and the same request is refused (the wording is
K2.6's from lesson 06):
""",
        """
Уберём рассуждение из этого сообщения ассистента — и тот же запрос будет отклонён (текст ошибки
тот же, что у K2.6 в уроке 06):
""",
    ),
    code(
        '''
stripped = {k: v for k, v in assistant.items() if k != "reasoning_content"}
without_reasoning = [stripped if m is assistant else m for m in messages]
try:
    client.chat.completions.create(
        model=model_name, messages=without_reasoning, tools=tools, tool_choice="auto",
        reasoning_effort=reasoning_effort,
    )
except openai.BadRequestError as error:
    print(error)
''',
    ),
    md(
        """
A named `tool_choice`, on a question that needs no tool. OpenAI would force a `get_weather` call;
the platform's K3 ignores the choice, and the model just answers (the kimi-code K3 endpoint
answers a 400 instead, [reference](#reference)):
""",
        """
Теперь выберем функцию по имени в `tool_choice` для вопроса, которому инструмент не нужен. OpenAI
заставил бы модель вызвать `get_weather`; K3 на платформе выбор не учитывает и просто отвечает
(адрес kimi-code для K3 вместо этого отвечает 400, [справка](#reference)):
""",
    ),
    code(
        '''
messages = [{"role": "user", "content": "Say hello to the class in one short sentence."}]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice=named,
    reasoning_effort=reasoning_effort,
)
print("tool_calls:", completion.choices[0].message.tool_calls)
print("content:", completion.choices[0].message.content)
''',
    ),
    md(
        """
No error tells you the choice was ignored: if a call must happen, check `tool_calls` yourself (or
use `"required"`, which K3 does honour). `"required"` with no tools is refused before the model
runs:
""",
        """
Никакая ошибка не сообщит, что выбор не учтён: если вызов обязателен, проверяйте
`tool_calls` сами (или используйте `"required"`, который K3 соблюдает). `"required"` без
инструментов отклоняется ещё до запуска модели:
""",
    ),
    code(
        '''
try:
    client.chat.completions.create(
        model=model_name, messages=messages, tool_choice="required",
        reasoning_effort=reasoning_effort,
    )
except openai.BadRequestError as error:
    print(error)
''',
    ),
    md(
        """
## 8. K3 on vLLM

On your own vLLM, read K3's reasoning from `reasoning` and expect each call in one delta.
Self-hosted, K3 runs as `vllm serve moonshotai/Kimi-K3 --enable-auto-tool-choice
--tool-call-parser kimi_k3 --reasoning-parser kimi_k3`. vLLM reports the reasoning in the field
`reasoning`, invents ids `functions.NAME:N`, and streams each call in one delta. In live mode
your server answers, and the cell prints a note instead. One difference to remember: vLLM keeps K3's named `tool_choice`
(its strict tool calling, on by default, forces the named call with a grammar: lesson 08), the
platform ignores it ([reference](#reference)).
""",
        """
## 8. K3 на vLLM

На своём vLLM читайте рассуждение K3 из поля `reasoning` и ждите каждый вызов одной дельтой.
На своём сервере K3 запускают так: `vllm serve moonshotai/Kimi-K3 --enable-auto-tool-choice
--tool-call-parser kimi_k3 --reasoning-parser kimi_k3`. vLLM отдаёт рассуждение в поле
`reasoning`, придумывает id вида `functions.NAME:N` и передаёт в потоке каждый вызов одной дельтой
(delta). В режиме live отвечает ваш сервер, и ячейка вместо этого печатает пометку. Одно различие стоит
запомнить: vLLM соблюдает выбор функции по имени в `tool_choice` для K3 (его строгий режим вызовов
(strict tool calling), включённый по умолчанию, обеспечивает нужный вызов грамматикой: урок 08), а
платформа этот выбор не учитывает ([справка](#reference)).
""",
    ),
    code(
        '''
if conn.replay_only("vllm_kimi_k3 is a recorded engine profile"):
    vllm = connect("kimi", engine="vllm_kimi_k3")  # vLLM with the kimi_k3 parsers
    vllm_client = OpenAI(
        base_url=vllm.endpoint, api_key=vllm.api_key, http_client=vllm.http_client()
    )
    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    stream = vllm_client.chat.completions.create(
        model=vllm.model_name, messages=messages, tools=tools, tool_choice="auto", stream=True
    )
    reasoning, call_deltas = "", []
    for chunk in stream:
        if not chunk.choices:  # the usage chunk: choices == []
            continue
        delta = chunk.choices[0].delta
        reasoning += getattr(delta, "reasoning", None) or ""
        call_deltas += delta.tool_calls or []
    print("reasoning:", reasoning)
    print("tool call deltas:", len(call_deltas))
    for item in call_deltas:
        print(item.id, item.function.name, item.function.arguments)
''',
        ru={"# vLLM with the kimi_k3 parsers": "# vLLM с парсерами kimi_k3",
            "# the usage chunk: choices == []": "# фрагмент со статистикой: choices == []",
            '"reasoning:"': '"рассуждение:"', '"tool call deltas:"': '"дельт с вызовами:"',
            '"vllm_kimi_k3 is a recorded engine profile"': '"профиль vllm_kimi_k3 есть только в кассетах"'},
    ),
    md(
        """
In this stream the reasoning came in many small deltas; the call came in one, whole,
with its id and all its arguments. The call assembly of lesson 03 (`ToolCallAccumulator`),
written for arguments in fragments, still works: it just gets one fragment.

## Summary

- K3 writes everything as elements `<|open|>TAG attrs<|sep|>` ... `<|close|>TAG<|sep|>`; messages
  end with `<|end_of_msg|>`; an assistant message holds `think`, `response` and `tools` blocks.
- A call is `<|open|>call tool="NAME" index="N"<|sep|>` with typed `argument` elements (strings
  raw, other types compact JSON) or one `json` block. No id is in the text: the server invents it;
  results are matched by tool and index.
- K3 ships no Jinja template; `render_kimi_xtml` follows the one template known for it.
  `tool_choice` and `response_format` become system messages in the prompt.
- Parse K3 with `parse_kimi_xtml` / `KimiXtmlStreamParser`: a call counts only when its
  `<|close|>call<|sep|>` was read, and is streamed whole.
- On the platform, K3 always thinks: send `reasoning_content` back, pick the effort with the
  top-level `reasoning_effort` (`low`, `high`, `max`), and remember that a named `tool_choice` is
  silently ignored there (vLLM keeps it).
""",
        """
В этом потоке рассуждение пришло множеством маленьких дельт, а вызов — одной,
целиком, с id и всеми аргументами. Склейка вызовов из урока 03 (`ToolCallAccumulator`),
рассчитанная на аргументы по частям, работает и здесь: она просто получает аргументы одним куском.

## Итоги

- K3 записывает всё элементами `<|open|>ТЕГ атрибуты<|sep|>` ... `<|close|>ТЕГ<|sep|>`;
  сообщения заканчиваются `<|end_of_msg|>`; в сообщении ассистента есть блоки `think`, `response`
  и `tools`.
- Вызов — это `<|open|>call tool="ИМЯ" index="N"<|sep|>` с типизированными элементами `argument`
  (строки — сырым текстом, другие типы — компактным JSON) или с одним блоком `json`. Id в тексте
  нет: его придумывает сервер; результаты сопоставляются по инструменту и индексу.
- Шаблона Jinja у K3 нет; `render_kimi_xtml` следует единственному известному для неё шаблону.
  `tool_choice` и `response_format` становятся системными сообщениями в промпте.
- Разбирайте K3 функциями `parse_kimi_xtml` и `KimiXtmlStreamParser`: вызов засчитывается, только
  когда прочитан его `<|close|>call<|sep|>`, и в потоке приходит целиком.
- На платформе K3 рассуждает всегда: отправляйте `reasoning_content` обратно, задавайте глубину
  рассуждения полем верхнего уровня `reasoning_effort` (`low`, `high`, `max`) и помните, что выбор
  функции по имени в `tool_choice` там молча не учитывается (vLLM его соблюдает).
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

Sources, checked in 2026-12.

- **Where the K3 prompt comes from.** K2 ships a Jinja chat template; K3's tokenizer renders a
  conversation with a program (vLLM calls it "a render program, not a Jinja template"), and the
  course has no copy of it. The one Jinja template known is llama.cpp's
  `models/templates/Kimi-K3.jinja`, a reconstruction by llama.cpp's authors, not Moonshot's file:
  a secondary source, not compared with Moonshot's program byte for byte. The course's copy,
  `data/templates/kimi_k3.jinja`, has its source and licence in the note beside it, and the
  course's tests compare it with `render_kimi_xtml` on many conversations.
- **K3's texts in the steps.** Kimi K3 was announced by Moonshot in July 2026. The thinking-effort
  message of step 2 and the option messages of step 6 are worded as in llama.cpp's reconstruction,
  which also names a `medium` effort and has no message for a named function; Moonshot's own
  wording is not published, nor is which argument form (typed elements or one `json` block) its
  program writes. Step 4's K3 output is cut from the course's renderer, not captured from a real
  K3. The 400 for `"required"` without tools is the replay server's wording; the platform's is not
  published.
- **Reasoning effort.** Moonshot's platform guide "Use reasoning effort" documents the top-level
  `reasoning_effort` (`low` / `high` / `max`, default `max`) and says K3 always reasons and needs no
  K2.x `thinking` configuration. Moonshot's Kimi-Vendor-Verifier (`test_thinking_effort.py`) also
  accepts `thinking: {"effort": ...}`; its docstring and its assertion disagree on which one wins
  when both are sent, so send one.
- **K3's named `tool_choice`**: ignored on the platform (the vendor verifier's tests); the separate
  kimi-code K3 endpoint reportedly answers 400 (oh-my-pi PR #5994). vLLM's `kimi_k3` parser
  refuses a named choice when `VLLM_ENFORCE_STRICT_TOOL_CALLING` is off
  (`VLLM_ENFORCE_STRICT_TOOL_CALLING=0`: a 400 saying that the choice requires strict tool
  calling); the variable defaults to true (`vllm/envs.py`).
- **Unconfirmed for K3**: the `name:N` form of the platform's ids (K2's form is used) and the
  wording of the missing-reasoning 400 (K2.5/K2.6's, as users quote it).
- **What is synthesized.** The platform answers come from the vendor verifier's K3 tests; the
  `vllm_kimi_k3` profile from vLLM's `kimi_k3` parsers (reasoning in `reasoning`, ids
  `functions.NAME:N`, each call in one delta).

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

Источники, проверено в декабре 2026 года.

- **Откуда берётся промпт K3.** К K2 прилагается шаблон чата на Jinja; токенизатор K3 собирает
  промпт программой (vLLM так и пишет: это программа, а не шаблон Jinja), и копии этой программы в
  курсе нет. Единственный известный шаблон Jinja — `models/templates/Kimi-K3.jinja` из llama.cpp,
  реконструкция авторов llama.cpp, а не файл Moonshot: вторичный источник, с программой Moonshot
  побайтно не сверен. У копии курса, `data/templates/kimi_k3.jinja`, источник и лицензия указаны в
  заметке рядом, а тесты курса сравнивают её с `render_kimi_xtml` на многих диалогах.
- **Тексты K3 в шагах.** Moonshot представила Kimi K3 в июле 2026 года. Системное сообщение о
  глубине рассуждения в шаге 2 и сообщения с опциями в шаге 6 сформулированы как в реконструкции
  llama.cpp, где упомянута и глубина `medium`, а сообщения для выбора функции по имени нет;
  собственные формулировки Moonshot не опубликованы, как и то, какую форму аргументов
  (типизированные элементы или один блок `json`) пишет её программа. Вывод K3 в шаге 4 вырезан из
  промпта, который собирает код курса, а не получен от настоящей K3. Ошибка 400 на `"required"` без
  инструментов сформулирована сервером воспроизведения; текст платформы не опубликован.
- **Глубина рассуждения.** Руководство платформы Moonshot «Use reasoning effort» документирует поле
  верхнего уровня `reasoning_effort` (`low` / `high` / `max`, по умолчанию `max`) и говорит, что K3
  рассуждает всегда и настройка `thinking` из K2.x ей не нужна. Kimi-Vendor-Verifier от Moonshot
  (`test_thinking_effort.py`) принимает и `thinking: {"effort": ...}`; его docstring и проверка
  расходятся в том, что побеждает, если передать оба, поэтому передавайте одно.
- **Выбор функции по имени в `tool_choice` у K3**: на платформе не учитывается (тесты набора проверок для
  поставщиков); отдельный адрес kimi-code для K3, по сообщениям, отвечает 400 (PR oh-my-pi #5994).
  Парсер `kimi_k3` в vLLM отклоняет выбор по имени, когда `VLLM_ENFORCE_STRICT_TOOL_CALLING`
  выключен (`VLLM_ENFORCE_STRICT_TOOL_CALLING=0`: ошибка 400 о том, что такой выбор требует
  строгого режима); по умолчанию переменная включена (`vllm/envs.py`).
- **Для K3 не подтверждены**: форма `name:N` у id платформы (используется форма K2) и текст ошибки
  400 без рассуждения (текст K2.5/K2.6 в том виде, в каком его цитируют пользователи).
- **Что синтезировано.** Ответы платформы — по тестам K3 из набора проверок для поставщиков;
  профиль `vllm_kimi_k3` — по парсерам `kimi_k3` в vLLM (рассуждение в `reasoning`, id
  `functions.NAME:N`, каждый вызов одной дельтой).

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Read a typed value

Write `typed_value(text, kind)` that turns the text of one K3 `argument` element into a Python
value: `kind` is the element's `type` attribute. Remember which type is written raw.
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Прочитайте типизированное значение

Напишите `typed_value(text, kind)`, которая превращает текст одного элемента `argument` K3 в
значение Python; `kind` — атрибут `type` этого элемента. Вспомните, какой тип пишется сырым
текстом.
""",
    ),
    code(
        '''
from helpers.exercises.n09 import check_render_call, check_typed_value


def typed_value(text, kind):
    # your code here
    return json.loads(text)
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_typed_value(typed_value)
''',
    ),
    code(
        '''
def typed_value(text, kind):
    return text if kind == "string" else json.loads(text)


check_typed_value(typed_value)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. Write a call

Write `render_call(name, index, arguments)` returning one K3 call element for a dict of
arguments, exactly as `render_kimi_xtml` writes it: `<|open|>call tool="NAME" index="N"<|sep|>`,
then one `argument` element per key in the dict's order with its `type` (`string`, `number`,
`boolean`, `null`, `object` or `array`), then `<|close|>call<|sep|>`. Strings are raw; other values
are compact JSON with every character as it is, Cyrillic too
(`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`). Careful: in Python `True` is also
an `int`.
""",
        """
### Упражнение 2. Запишите вызов

Напишите `render_call(name, index, arguments)`, которая возвращает один элемент вызова K3 для
словаря аргументов ровно так, как его пишет `render_kimi_xtml`:
`<|open|>call tool="ИМЯ" index="N"<|sep|>`, затем по элементу `argument` на каждый ключ в порядке
словаря, с его `type` (`string`, `number`, `boolean`, `null`, `object` или `array`), затем
`<|close|>call<|sep|>`. Строки пишутся как есть, остальные значения — компактным JSON, где каждый
символ, в том числе кириллица, остаётся как есть
(`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`). Осторожно: в Python `True` —
тоже `int`.
""",
    ),
    code(
        '''
def render_call(name, index, arguments):
    # your code here
    return f'<|open|>call tool="{name}" index="{index}"<|sep|><|close|>call<|sep|>'
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_render_call(render_call)
''',
    ),
    code(
        '''
def xtml_type(value):
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", dict: "object"}.get(type(value), "array")


def render_call(name, index, arguments):
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(
            value, ensure_ascii=False, separators=(",", ":"))
        parts.append(f'<|open|>argument key="{key}" type="{xtml_type(value)}"<|sep|>{text}<|close|>argument<|sep|>')
    return "".join(parts) + "<|close|>call<|sep|>"


check_render_call(render_call)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 3. Which call does a result answer?

K3's prompt has no ids, so each tool result is written with its call's tool name and `index`.
Write `result_tags(messages)` that returns one dict for the whole conversation, mapping the
`tool_call_id` of every `role: "tool"` message to `(tool_name, index)` as K3 renders it: the tool
result answers the call with that id in the **latest** assistant message before it, and `index`
is that call's position in the message's `tool_calls`, counted from 1. Results may come back in
any order.
""",
        """
### Упражнение 3. На какой вызов отвечает результат?

В промпте K3 нет id, поэтому каждый результат инструмента записывается с именем инструмента и
`index` своего вызова. Напишите `result_tags(messages)`, которая возвращает один словарь на весь
диалог — `tool_call_id` каждого сообщения `role: "tool"` → `(имя_инструмента, index)`, как это
записывает K3: результат отвечает на вызов с этим id в **последнем** перед ним сообщении
ассистента, а `index` — место этого вызова в `tool_calls` сообщения, считая с 1. Результаты могут
приходить в любом порядке.
""",
    ),
    code(
        '''
from helpers.exercises.n09 import check_result_tags


def result_tags(messages):
    # your code here
    tool_messages = [m for m in messages if m["role"] == "tool"]
    return {m["tool_call_id"]: (m.get("name"), n) for n, m in enumerate(tool_messages)}
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_result_tags(result_tags)
''',
    ),
    code(
        '''
def result_tags(messages):
    tags, calls = {}, []
    for message in messages:
        if message["role"] == "assistant":
            calls = message.get("tool_calls") or []
        elif message["role"] == "tool":
            for index, call in enumerate(calls, start=1):
                if call["id"] == message["tool_call_id"]:
                    tags[call["id"]] = (call["function"]["name"], index)
    return tags


check_result_tags(result_tags)
''',
        hidden=True,
    ),
    md(
        """
[Next: 10 Tools from an MCP server](10_mcp_tools.ipynb)
""",
        """
[Дальше: 10 Инструменты с MCP-сервера](10_mcp_tools.ipynb)
""",
    ),
])
