"""Lesson 04: the prompt as text, the model's raw output, and parsing tool calls by hand."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Parsing tool calls by hand", "ru": "Ручной разбор вызовов инструментов"},
    "summary": {
        "en": "the chat template, special tokens, raw `/completions` output and its parser",
        "ru": "шаблон чата (chat template), спецтокены (special tokens), сырой вывод `/completions` и его парсер",
    },
    "minutes_reading": (44, 65),
    "minutes_exercises": (16, 30),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_name_from_id", "check_extract"),
}

VARIANT_RU = {
    '"textbook"': '"как в учебнике"',
    '"second section"': '"вторая секция"',
    '"cut off by max_tokens"': '"обрезано по max_tokens"',
    '"\'-\' in the name"': '"\'-\' в имени"',
    '"id without \'functions.\'"': '"id без \'functions.\'"',
}
CUT_RU = {'"cut off by max_tokens"': '"обрезано по max_tokens"'}

LESSON = Lesson("04_manual_parsing", [
    md(
        """
# Parsing tool calls by hand

**Goal:** see the prompt and the answer as the model sees them, plain text with marker tokens, and
turn that text into `tool_calls` yourself.
""",
        """
# Ручной разбор вызовов инструментов

**Цель:** увидеть промпт и ответ так, как их видит модель, — обычный текст со спецтокенами
(special tokens), — и самим превратить этот текст в `tool_calls`.
""",
    ),
    md(
        """
## What you will build

- the chat template rendered with `transformers`: the tools, the turns and the special tokens, with
  their ids;
- a raw request to `{endpoint}/completions` with `http_client.post`, and the raw text that
  comes back;
- `parse_kimi` on that text, and the guide's extractor next to it on real-world variants (a second
  section, a missing end marker, a `-` in a name);
- the guide's manual loop with its missing assistant message fixed, so the template shows the model
  its own calls;
- a parser playground widget, and what a chat server that does not parse Kimi-K2's format returns.

This lesson follows the guide's section on manual parsing (MoonshotAI/Kimi-K2,
`docs/tool_call_guidance.md`). It matters whenever the server in front of a model does not parse
tool calls: a missing flag, an engine without a Kimi-K2 parser, or your own inference code.

**You need:** basic regular expressions (`re.findall`, groups, the non-greedy `.*?`). Exercise 2
explains the rest step by step before you write your own: escaping `|` and the `re.DOTALL` flag.
""",
        """
## Что вы сделаете

- примените шаблон чата (chat template) через `transformers` и увидите инструменты, реплики и
  спецтокены с их номерами (id);
- отправите сырой запрос в `{endpoint}/completions` через `http_client.post` и получите сырой
  вывод модели (raw output);
- разберёте этот текст функцией `parse_kimi` и сравните её с парсером (parser) из руководства на
  вариантах, которые встречаются на практике: вторая секция, пропавший конечный маркер, `-` в
  имени;
- исправите ручной цикл из руководства, где тоже теряется сообщение ассистента (assistant
  message), чтобы шаблон показывал модели её собственные вызовы;
- поиграете с виджетом (widget) — песочницей для парсеров — и посмотрите, что возвращает
  чат-сервер, который не разбирает формат Kimi-K2.

Урок следует разделу руководства о ручном разборе вызовов (MoonshotAI/Kimi-K2,
`docs/tool_call_guidance.md`). Он пригодится всякий раз, когда сервер перед моделью не разбирает
вызовы сам: забыт флаг, у движка (engine) нет парсера для Kimi-K2 или модель запускает ваш
собственный код.

**Что нужно знать:** основы регулярных выражений (`re.findall`, группы, нежадное `.*?`).
Экранирование `|` и флаг `re.DOTALL` упражнение 2 объяснит по шагам, прежде чем вы напишете своё
выражение.
""",
    ),
    md(
        """
## Setup

In replay mode the raw texts and answers below come from cassettes **synthesized** from the
documented Kimi-K2 format, not captured from a real model. The tokenizer is an offline one built
for this course: it carries the official chat template and the real marker ids, but ordinary words
get different ids than in the real vocabulary of about 160k tokens. With `LLM_MODE=live` (see
[lesson 00](00_start.ipynb)) the cells talk to your endpoint with the same tokenizer. Raw
`/completions` needs a self-hosted engine such as vLLM or SGLang; hosted chat APIs may not offer it.
""",
        """
## Подготовка

В режиме воспроизведения (replay) сырые тексты и ответы ниже берутся из кассет (cassettes),
**синтезированных** по документированному формату Kimi-K2, а не записанных с настоящей модели.
Токенизатор (tokenizer) собран для курса и работает без сети: шаблон чата у него официальный, номера
маркеров настоящие, а вот обычные слова получают другие id, чем в настоящем словаре примерно на 160
тысяч токенов. В режиме live (с настоящей моделью), `LLM_MODE=live` (см. [урок 00](00_start.ipynb)),
ячейки обращаются к вашему адресу API (endpoint) с тем же токенизатором. Сырой `/completions` есть у движков, которые вы запускаете сами, например vLLM
или SGLang; облачные чат-API могут его не предоставлять.
""",
    ),
    code(
        '''
import json

from openai import OpenAI

from helpers import connect, guide_extract_tool_call_info, load_tokenizer, parse_kimi, set_language
from helpers.display import compare_table, show_messages, show_raw, show_tool_calls
from helpers.templates import marker_tokens
from helpers.widgets import ParserPlayground

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
http_client = conn.http_client()  # plain HTTP for the raw /completions requests
endpoint = conn.endpoint
model_name = conn.model_name
settings = conn.settings(temperature=0.3)  # the guide's temperature; left out where the platform locks it
headers = {"Authorization": f"Bearer {conn.api_key}"}  # a local vLLM ignores it; a cloud API needs it
conn
''',
        ru={"# the guide's temperature; left out where the platform locks it": '# температура из руководства; не передаётся, где платформа её фиксирует',
            "# plain HTTP for the raw /completions requests": "# обычный HTTP для сырых запросов к /completions",
            "# a local vLLM ignores it; a cloud API needs it":
            "# локальному vLLM ключ не нужен, облаку нужен"},
    ),
    md(
        """
## 1. The tool

Use the same weather tool, schema and `tool_map` as in the previous lessons.
""",
        """
## 1. Инструмент

Берём тот же инструмент погоды, его описание и `tool_map`, что и в прошлых уроках.
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
## 2. The prompt is text

Render the prompt with the model's **chat template** yourself to see what the model reads: a chat
server turns `messages` and `tools` into one string this way, then tokenizes it. The guide does this
itself with the real tokenizer:

```python
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained("moonshotai/Kimi-K2-Instruct", trust_remote_code=True)
```

That downloads the model's tokenizer files and runs their code. This lesson runs no code from the
hub: `load_tokenizer("kimi-k2")` gives the course's offline tokenizer. It carries Moonshot's official
chat template for **Kimi-K2-Instruct-0905** (a copy kept in the repo) and the real marker ids, so
the prompt text below is the one the real tokenizer writes; only ordinary words get other token ids.
Where the copy comes from, and which older template the guide's line loaded, is in the
[reference](#reference).
""",
        """
## 2. Промпт — это текст

Чтобы увидеть, что читает модель, примените **шаблон чата** модели сами: так чат-сервер
превращает `messages` и `tools` в одну строку, а потом разбивает её на токены. Руководство делает
это само, с настоящим токенизатором:

```python
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained("moonshotai/Kimi-K2-Instruct", trust_remote_code=True)
```

Эта строка скачивает файлы токенизатора модели и выполняет их код. В этом уроке код с хаба не
выполняется: `load_tokenizer("kimi-k2")` даёт офлайн-токенизатор курса. В нём официальный шаблон
чата Moonshot для **Kimi-K2-Instruct-0905** (копия хранится в репозитории) и настоящие номера
маркеров, поэтому текст промпта ниже — тот же, что пишет настоящий токенизатор; другие номера
получают только обычные слова. Откуда взята копия и какой более старый шаблон загружала строка из
руководства, сказано в [справке](#reference).
""",
    ),
    code(
        '''
tokenizer = load_tokenizer("kimi-k2")  # offline, with the official chat template

messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
# tokenize=False: we want the text, not token ids
prompt = tokenizer.apply_chat_template(
    messages, tools=tools, tokenize=False, add_generation_prompt=True
)
print(prompt)
''',
        ru={"# tokenize=False: we want the text, not token ids":
            "# tokenize=False: нужна строка, а не номера токенов",
            "# offline, with the official chat template": "# офлайн, с официальным шаблоном чата"},
    ),
    md(
        """
Hard to read in one piece. `show_raw` puts every marker on its own line: a `tool_declare` system
turn with the tools as JSON, a default system prompt, the user turn, and an open assistant turn
(`add_generation_prompt=True`) where the model starts writing.
""",
        """
Одним куском это читать тяжело. `show_raw` выносит каждый маркер на отдельную строку: системная
реплика `tool_declare` с инструментами в виде JSON, системный промпт по умолчанию, реплика
пользователя и открытая реплика ассистента (`add_generation_prompt=True`), с которой модель
начинает писать.
""",
    ),
    code(
        '''
show_raw(prompt)
''',
    ),
    md(
        """
Each marker is **one token** with its own id. The turn markers are "special" (dropped by
`skip_special_tokens=True`); the five tool-call markers are not, so they survive decoding and reach
whoever parses the text.
""",
        """
Каждый маркер — это **один токен** со своим id. Маркеры реплик — «специальные» (их убирает
`skip_special_tokens=True`), а пять маркеров вызова инструментов — нет, поэтому они сохраняются
при декодировании и доходят до того, кто разбирает текст.
""",
    ),
    code(
        '''
rows = [(m.id, m.token, "yes" if m.special else "no") for m in marker_tokens(tokenizer)]
compare_table(rows, ("id", "token", "special"))
''',
        ru={'"yes"': '"да"', '"no"': '"нет"', '"token", "special"': '"токен", "специальный"'},
    ),
    md(
        """
Encoding and decoding a short piece of an assistant turn shows both kinds:
""",
        """
Закодируем и раскодируем короткий кусок реплики ассистента, чтобы увидеть маркеры обоих видов:
""",
    ),
    code(
        '''
ids = tokenizer.encode("<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|>")
print(ids)  # marker ids are the real ones; ids of ordinary words are not
print(tokenizer.convert_ids_to_tokens(ids))
print(tokenizer.decode(ids, skip_special_tokens=True))
''',
        ru={"# marker ids are the real ones; ids of ordinary words are not":
            "# у маркеров настоящие id; id обычных слов здесь не как у настоящей модели"},
    ),
    md(
        """
The markers keep their real ids (163588, 163601, 163595); the ids of the word `assistant` in
between come from the course tokenizer's small vocabulary and differ from the real model's. Decoding
with `skip_special_tokens=True` drops the turn markers and keeps `<|tool_calls_section_begin|>`.

## 3. Asking for raw text

Send the rendered prompt to `/completions` to get the model's raw text: that old, template-free
endpoint continues a prompt and returns the generated text. Servers drop special tokens from that
text by default (`skip_special_tokens`), but Kimi-K2's tool-call markers are not special tokens, so
they come through. Nobody parses anything for us. The body is the guide's: `model`, `prompt`,
`max_tokens`.
""",
        """
Маркеры сохраняют настоящие id (163588, 163601, 163595), а id слова `assistant` между ними взяты
из маленького словаря учебного токенизатора и отличаются от настоящих. Декодирование с
`skip_special_tokens=True` убирает маркеры реплик и оставляет `<|tool_calls_section_begin|>`.

## 3. Запрашиваем сырой текст

Чтобы получить сырой текст модели, отправьте готовый промпт на `/completions`: этот старый адрес API
без шаблона продолжает промпт и возвращает сгенерированный текст. Спецтокены серверы по умолчанию из
него убирают (`skip_special_tokens`), но маркеры вызовов Kimi-K2 спецтокенами не считаются, поэтому
доходят до нас. Никто ничего за нас не разбирает. Тело запроса — как в руководстве: `model`,
`prompt`, `max_tokens`.
""",
    ),
    code(
        '''
def complete(prompt):
    """POST a prompt to {endpoint}/completions and return the raw generated text."""
    payload = {"model": model_name, "prompt": prompt, "max_tokens": 512}
    response = http_client.post(f"{endpoint}/completions", headers=headers, json=payload, timeout=120)
    response.raise_for_status()  # an HTTP error raises instead of passing silently
    return response.json()["choices"][0]["text"]


raw_output = complete(prompt)
show_raw(raw_output)
''',
        ru={"# an HTTP error raises instead of passing silently":
            "# ошибка HTTP — исключение, а не тихий пустой ответ",
        '"""POST a prompt to {endpoint}/completions and return the raw generated text."""': '"""Отправить промпт POST-запросом на {endpoint}/completions и вернуть сырой сгенерированный текст."""',
        },
    ),
    md(
        """
That is a tool call as the model writes it: a section, one call inside, the id
`functions.get_weather:0`, then `<|tool_call_argument_begin|>` and the arguments JSON.

## 4. Parsing it: `parse_kimi`

Turn raw Kimi-K2 text into calls with `parse_kimi`: it returns a `ParseResult` with the visible
`content`, OpenAI-shaped `tool_calls`, and a list of `errors` describing anything odd instead of
raising.
""",
        """
Вот так модель пишет вызов инструмента: секция, внутри один вызов, идентификатор
`functions.get_weather:0`, затем `<|tool_call_argument_begin|>` и JSON аргументов.

## 4. Разбор: `parse_kimi`

Превращайте сырой текст Kimi-K2 в вызовы функцией `parse_kimi`: она возвращает `ParseResult` с
видимым текстом `content`, вызовами `tool_calls` в формате OpenAI и списком `errors`, где парсер
описывает всё подозрительное, вместо того чтобы бросать исключения.
""",
    ),
    code(
        '''
parsed = parse_kimi(raw_output)
print(repr(parsed.content), parsed.errors)
show_tool_calls(parsed.tool_calls)
''',
    ),
    md(
        """
The guide's extractor (kept in `helpers` as `guide_extract_tool_call_info`) agrees on this text:
""",
        """
Парсер из руководства (он сохранён в `helpers` как `guide_extract_tool_call_info`) на этом тексте
даёт тот же результат:
""",
    ),
    code(
        '''
assert guide_extract_tool_call_info(raw_output) == parsed.tool_calls
''',
    ),
    md(
        """
## 5. The guide's extractor on real-world output

Test a parser on more than the textbook case: models and engines also write a second section, a
reply cut off, a `-` in a name, an id without `functions.`. Two small builders make the variants
easy to read:
""",
        """
## 5. Парсер из руководства на практике

Проверяйте парсер не только на учебном примере: модели и движки пишут и вторую секцию, и
обрезанный ответ, и `-` в имени, и id без `functions.`. Две маленькие функции-конструктора помогут
собрать варианты так, чтобы их было легко читать:
""",
    ),
    code(
        '''
def call(call_id, arguments):
    """One call as Kimi-K2 writes it."""
    return f"<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def section(*calls):
    """A tool-calls section around some calls."""
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"
''',
        ru={
        '"""One call as Kimi-K2 writes it."""': '"""Один вызов в том виде, в каком его пишет Kimi-K2."""',
        '"""A tool-calls section around some calls."""': '"""Секция вызовов вокруг нескольких вызовов."""',
        },
    ),
    code(
        '''
beijing = call("functions.get_weather:0", '{"city": "Beijing"}')
variants = {
    "textbook": section(beijing),
    "second section": section(beijing) + "Now Shanghai."
    + section(call("functions.get_weather:1", '{"city": "Shanghai"}')),
    "cut off by max_tokens": "<|tool_calls_section_begin|>" + beijing[:-20],  # the end is cut off
    "'-' in the name": section(call("functions.get-weather:0", '{"city": "Beijing"}')),
    "id without 'functions.'": section(call("get_weather:0", '{"city": "Beijing"}')),
}
show_raw(variants["cut off by max_tokens"])
''',
        ru={"# the end is cut off": "# обрезан конец", **VARIANT_RU},
    ),
    md(
        """
A reply cut off by `max_tokens` has a section begin and no section end. The guide takes the first
complete section with

`tool_calls_sections[0]`

and there is none:
""",
        """
У ответа, обрезанного по `max_tokens`, есть начало секции, но нет её конца. Руководство берёт
первую целую секцию строкой

`tool_calls_sections[0]`

а такой секции нет:
""",
    ),
    code(
        '''
guide_extract_tool_call_info(variants["cut off by max_tokens"])
''',
        ru=CUT_RU,
        tags=("raises-exception",),
    ),
    md(
        """
Now every variant through both parsers. `guide_result` turns an exception into a line of the table
instead of stopping the cell.
""",
        """
Теперь пропустим все варианты через оба парсера. `guide_result` превращает исключение в строку
таблицы, чтобы ячейка не останавливалась.
""",
    ),
    code(
        '''
def guide_result(text):
    """What the guide's extractor makes of `text`, as a short description."""
    try:
        return ", ".join(c["function"]["name"] for c in guide_extract_tool_call_info(text)) or "-"
    except IndexError as error:
        return f"IndexError: {error}"


def our_result(text):
    """What parse_kimi makes of `text`: call names and the number of errors reported."""
    parsed = parse_kimi(text)
    names = ", ".join(c["function"]["name"] for c in parsed.tool_calls) or "-"
    return f"{names} ({len(parsed.errors)} errors)"


rows = [(name, guide_result(text), our_result(text)) for name, text in variants.items()]
compare_table(rows, ("variant", "guide_extract_tool_call_info", "parse_kimi"))
''',
        ru={'f"{names} ({len(parsed.errors)} errors)"': 'f"{names} (ошибок: {len(parsed.errors)})"',
            '"variant"': '"вариант"',
        '"""What the guide\'s extractor makes of `text`, as a short description."""': '"""Что парсер из руководства делает из `text`, в виде короткого описания."""',
        '"""What parse_kimi makes of `text`: call names and the number of errors reported."""': '"""Что parse_kimi делает из `text`: имена вызовов и число найденных ошибок."""',
        },
    ),
    md(
        """
Read the guide's column row by row:

- **second section**: it only looks at the first section, so the Shanghai call is silently lost;
- **cut off**: `IndexError`, as above;
- **`-` in the name**: its id pattern `[\\w\\.]+:\\d+` has no `-`, so the call is skipped without a
  word: the worst kind of failure;
- **no `functions.` prefix** (a model writes ids like `get_weather:0` when its history showed it
  such ids, for example ones copied from the Moonshot API's answers; [reference](#reference)): the
  name is taken with `id.split(".")[1]`, which raises `IndexError`.

`parse_kimi` returns every call it can see and says what was wrong. For the cut-off reply the call is
returned with its damage described, so a loop can refuse to run it or ask again:
""",
        """
Пройдём по столбцу руководства сверху вниз:

- **вторая секция**: парсер смотрит только в первую секцию, и вызов для Шанхая молча теряется;
- **обрезанный ответ**: `IndexError`, как выше;
- **`-` в имени**: регулярное выражение для id `[\\w\\.]+:\\d+` не допускает `-`, поэтому вызов
  пропускается без единого сообщения — худший вид ошибки;
- **нет префикса `functions.`** (модель пишет id вида `get_weather:0`, если такие id были в её
  истории, например скопированные из ответов API Moonshot; [справка](#reference)):
  имя берётся через `id.split(".")[1]`, и это выбрасывает `IndexError`.

`parse_kimi` возвращает все вызовы, которые видит, и сообщает, что было не так. Для обрезанного
ответа вызов возвращается вместе с описанием повреждений, и цикл может отказаться его выполнять
или переспросить модель:
""",
    ),
    code(
        r'''
cut = parse_kimi(variants["cut off by max_tokens"])
show_tool_calls(cut.tool_calls)
print("\n".join(cut.errors))
''',
        ru=CUT_RU,
    ),
    md(
        """
## 6. The manual loop, fixed

Append the assistant message with the parsed calls before their results in the manual loop too: the
guide's manual loop, like its streaming loop, appends only the `role: "tool"` results. Here no
server checks the history, because we send text; the template simply renders what it is given. First
the helper from [lesson 03](03_streaming.ipynb) that runs the calls:
""",
        """
## 6. Исправляем ручной цикл

И в ручном цикле добавляйте сообщение ассистента с разобранными вызовами раньше их результатов:
ручной цикл руководства, как и потоковый, добавляет в историю только результаты `role: "tool"`.
Проверять историю диалога (conversation history) здесь некому:
мы отправляем текст, и шаблон просто подставляет в промпт то, что ему дали. Сначала вспомогательная
функция из [урока 03](03_streaming.ipynb), которая выполняет вызовы:
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
This is the end of the prompt the guide's loop sends in round 2:
""",
        """
Вот конец промпта, который цикл из руководства отправит во втором раунде:
""",
    ),
    code(
        '''
guide_history = messages + run_tool_calls(parsed.tool_calls)  # as in the guide: no call
guide_prompt = tokenizer.apply_chat_template(
    guide_history, tools=tools, tokenize=False, add_generation_prompt=True
)
show_raw(guide_prompt[guide_prompt.index("<|im_user|>"):])
''',
        ru={"# as in the guide: no call": "# как в руководстве: без вызова"},
    ),
    md(
        """
The user asks, and the next thing the model reads is "Return of functions.get_weather:0": a result of
a call that, as far as the prompt shows, it never made. The fix is the same as in lesson 03: append
the assistant message with the parsed calls first, `{"role": "assistant", "content": parsed.content,
"tool_calls": parsed.tool_calls}`. The template then writes the calls back into the prompt in the
model's own format.
""",
        """
Пользователь спрашивает, а следующее, что читает модель, — «Return of functions.get_weather:0»:
результат вызова, которого она, судя по промпту, не делала. Исправление то же, что в уроке 03:
сначала добавить сообщение ассистента с разобранными вызовами, `{"role": "assistant", "content":
parsed.content, "tool_calls": parsed.tool_calls}`. Тогда шаблон впишет вызовы обратно в промпт в
собственном формате модели.
""",
    ),
    code(
        '''
def manual_loop(messages, max_rounds=8):
    """The guide's manual loop, fixed: render, complete, parse, append the calls, run the tools."""
    for _ in range(max_rounds):
        prompt = tokenizer.apply_chat_template(
            messages, tools=tools, tokenize=False, add_generation_prompt=True
        )
        parsed = parse_kimi(complete(prompt))
        if not parsed.tool_calls:  # no calls: this is the final answer
            return parsed.content
        # the fix: the assistant message with the calls goes before the results
        messages.append(
            {"role": "assistant", "content": parsed.content, "tool_calls": parsed.tool_calls}
        )
        messages.extend(run_tool_calls(parsed.tool_calls))
    raise RuntimeError(f"Still calling tools after {max_rounds} rounds.")
''',
        ru={
            '"Still calling tools after {max_rounds} rounds."':
                '"Модель всё ещё вызывает инструменты после {max_rounds} раундов."',
            "# no calls: this is the final answer": "# нет вызовов: это окончательный ответ",
            "# the fix: the assistant message with the calls goes before the results":
                "# исправление: сообщение ассистента с вызовами — перед результатами",
        '"""The guide\'s manual loop, fixed: render, complete, parse, append the calls, run the tools."""': '"""Ручной цикл из руководства, исправленный: собрать промпт, получить продолжение, разобрать, добавить вызовы, выполнить инструменты."""',
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
And the end of the round-2 prompt, as the fixed loop sent it: the assistant turn holds the call in
Kimi-K2's markers, then comes its result.
""",
        """
А вот конец промпта второго раунда, как его отправил исправленный цикл: в реплике ассистента
стоит вызов в маркерах Kimi-K2, за ней — его результат.
""",
    ),
    code(
        '''
round_2 = tokenizer.apply_chat_template(
    messages[:3], tools=tools, tokenize=False, add_generation_prompt=True
)
show_raw(round_2[round_2.index("<|im_assistant|>"):])
''',
    ),
    md(
        """
## 7. Parser playground

Edit the raw text (or pick an example) and watch `parse_kimi` and the guide's extractor read it side
by side. Try deleting `<|tool_calls_section_end|>`, adding a second section, or putting a `-` in the
name. (A widget needs a running kernel: run the cell to see it.)
""",
        """
## 7. Песочница для парсеров

Меняйте сырой текст (или выберите пример) и смотрите, как его читают `parse_kimi` и парсер из
руководства. Попробуйте удалить `<|tool_calls_section_end|>`, добавить вторую секцию или
поставить `-` в имя. (Виджету нужно работающее ядро: выполните ячейку, чтобы его увидеть.)
""",
    ),
    code(
        '''
ParserPlayground(raw_output, fmt="kimi")
''',
        tags=("nbval-ignore-output",),
    ),
    md(
        """
## 8. A chat server that does not parse the calls

Start the chat server with a tool-call parser for the model's format: only then does the chat
endpoint (`/chat/completions`) turn the model's text into `tool_calls`. For Kimi-K2, vLLM needs
`--enable-auto-tool-choice --tool-call-parser kimi_k2` and SGLang `--tool-call-parser kimi_k2`. A
vLLM started with neither flag is the easy case: it refuses `tool_choice="auto"` with a 400 that
names the flags. The quiet case is a server that accepts the tools but does not parse Kimi-K2's
output (an engine with no Kimi-K2 parser, or a parser for another model's format): the request
succeeds and the markers land in `content`. The replay server's engine profile `no_parser` behaves
like that (in live mode your server's flags decide, so the next two cells print a note instead):
""",
        """
## 8. Чат-сервер, который не разбирает вызовы

Запускайте чат-сервер с парсером для формата модели: только тогда чат-API (`/chat/completions`)
превращает текст модели в `tool_calls`. Для Kimi-K2 vLLM запускают с
`--enable-auto-tool-choice --tool-call-parser kimi_k2`, а SGLang — с `--tool-call-parser kimi_k2`.
Если запустить vLLM совсем без этих флагов, ошибку легко заметить: запрос с `tool_choice="auto"`
получит ответ 400, где флаги названы. Хуже, когда сервер принимает инструменты, но не разбирает
вывод Kimi-K2 (у движка нет парсера для Kimi-K2 или указан парсер для формата другой модели): запрос
проходит успешно, а маркеры оказываются в `content`. Профиль движка `no_parser` на сервере
воспроизведения ведёт себя именно так (в режиме live всё решают флаги вашего сервера, поэтому две
следующие ячейки вместо этого печатают пометку):
""",
    ),
    code(
        '''
if conn.replay_only("no_parser is a recorded engine profile"):
    raw_conn = connect("kimi", engine="no_parser")  # a server that does not parse Kimi-K2 calls
    client = OpenAI(
        base_url=raw_conn.endpoint, api_key=raw_conn.api_key, http_client=raw_conn.http_client()
    )

    messages = [{"role": "user", "content": "What's the weather like in Beijing today? Let's check using the tool."}]
    completion = client.chat.completions.create(
        model=model_name, messages=messages, tools=tools, tool_choice="auto", **settings
    )
    choice = completion.choices[0]
    print("finish_reason:", choice.finish_reason)
    print("tool_calls:", choice.message.tool_calls)
    show_raw(choice.message.content)
''',
        ru={"# a server that does not parse Kimi-K2 calls":
            "# сервер, который не разбирает вызовы Kimi-K2",
            '"no_parser is a recorded engine profile"': '"профиль no_parser есть только в кассетах"'},
    ),
    md(
        """
`finish_reason` is `stop` and `tool_calls` is empty, so the guide's loop (and any loop that trusts
`tool_calls`) would show the markers to the user as the answer. The call is all there, as text, and
`parse_kimi` recovers it:
""",
        """
`finish_reason` равен `stop`, а `tool_calls` пуст, поэтому цикл из руководства (да и любой цикл,
который доверяет `tool_calls`) покажет пользователю маркеры в качестве ответа. При этом вызов
целиком на месте, просто в виде текста, и `parse_kimi` его восстанавливает:
""",
    ),
    code(
        '''
if conn.replay_only("it needs the no_parser answer above"):
    recovered = parse_kimi(choice.message.content)
    show_tool_calls(recovered.tool_calls)
    assert recovered.tool_calls == parsed.tool_calls
''',
        ru={'"it needs the no_parser answer above"': '"ей нужен ответ no_parser из ячейки выше"'},
    ),
    md(
        """
If you see markers like `<|tool_call_begin|>` in `content`, fix the server flags first; parsing
`content` yourself is the fallback when you cannot.

## Summary

- A prompt is text: the chat template writes tools, turns and earlier calls with marker tokens;
  `apply_chat_template(..., tokenize=False)` shows it. Marker ids are fixed by the vocabulary
  (`<|tool_calls_section_begin|>` is 163595); the tool markers are not "special" tokens.
- `/completions` returns the generated text (special tokens dropped by default; the tool markers
  are not special, so they stay); turning it into `tool_calls` is the parser's job, normally the
  server's (`--tool-call-parser kimi_k2`), here ours (`parse_kimi`).
- **The guide's extractor** reads only the first section, raises `IndexError` when the end
  marker is missing or the id has no `functions.` prefix, and silently skips ids with `-`. Parse every
  section, tolerate a cut-off, and report problems instead of dropping calls.
- The manual loop needs the assistant message too, so the template can show the model its own calls.
- A server that does not parse Kimi-K2's format returns the calls as text in `content`, with
  `finish_reason` `stop`.
""",
        """
Если видите в `content` маркеры вроде `<|tool_call_begin|>`, сначала исправьте флаги сервера;
разбирать `content` самим — запасной вариант на случай, когда это невозможно.

## Итоги

- Промпт — это текст: шаблон чата записывает инструменты, реплики и прежние вызовы с помощью
  маркеров-токенов; `apply_chat_template(..., tokenize=False)` это показывает. Номера маркеров
  заданы словарём (`<|tool_calls_section_begin|>` — 163595); маркеры вызовов не «специальные».
- `/completions` возвращает сгенерированный текст (спецтокены по умолчанию убраны, а маркеры
  вызовов не специальные и остаются); превращать его в `tool_calls` — работа парсера, обычно
  серверного (`--tool-call-parser kimi_k2`), а здесь нашего (`parse_kimi`).
- **Парсер из руководства** читает только первую секцию, падает с `IndexError`, если нет
  конечного маркера или у id нет префикса `functions.`, и молча пропускает id с `-`. Разбирайте
  все секции, не падайте на обрезанном ответе и сообщайте о проблемах, а не теряйте вызовы.
- Ручному циклу тоже нужно сообщение ассистента, чтобы шаблон показал модели её собственные
  вызовы.
- Сервер, который не разбирает формат Kimi-K2, возвращает вызовы текстом в `content`, а
  `finish_reason` равен `stop`.
""",
    ),
    md(
        """
<a id="reference"></a>
<details><summary>Reference</summary>

- **Where the answers come from.** The raw texts of steps 3 and 6 and the chat answer of step 8
  come from `data/recordings/04_manual_parsing.json`, which `python -m helpers.replay synthesize`
  wrote from the documented Kimi-K2 format (engine profiles `completions` and `no_parser`); no real
  model was called.
- **The guide.** The lesson follows the guide's section on manual parsing (MoonshotAI/Kimi-K2,
  `docs/tool_call_guidance.md`). `guide_extract_tool_call_info` in `helpers` behaves as the
  guide's `extract_tool_call_info` does; it is rewritten, not copied.
- **The chat template.** `data/templates/kimi_k2.jinja` is Moonshot's template for
  Kimi-K2-Instruct-0905 (September 2025), copied byte for byte from the tokenizer folder that
  alibaba/rtp-llm vendors (commit be512b94), under Moonshot's Modified MIT licence
  (`data/templates/LICENSE-Kimi-K2-modified-MIT.txt`). `tests/test_templates_official.py` checks
  its SHA-256.
- **The guide's template.** When the guide was written, the repo its line loads
  (`moonshotai/Kimi-K2-Instruct`) held the July 2025 template, which does not render the
  assistant's earlier calls or the `## Return of` header. That repo's template has been revised
  since.
- **The offline tokenizer.** `scripts/build_tokenizers.py` builds it: a small byte-level BPE
  trained on the course's own sentences, the format markers as single tokens at their real ids
  (163586 and up), and the vendored template. The real vocabulary has about 160k tokens.
- **Ids without `functions.`** (step 5). The Moonshot API writes ids like `get_weather:0`, and
  vLLM's Kimi-K2 parser tests hold raw text with such ids.

</details>
""",
        """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Откуда ответы.** Сырые тексты шагов 3 и 6 и ответ чата из шага 8 берутся из
  `data/recordings/04_manual_parsing.json`, который команда `python -m helpers.replay synthesize`
  написала по документированному формату Kimi-K2 (профили движков `completions` и `no_parser`);
  настоящая модель не вызывалась.
- **Руководство.** Урок следует разделу руководства о ручном разборе вызовов (MoonshotAI/Kimi-K2,
  `docs/tool_call_guidance.md`). `guide_extract_tool_call_info` в `helpers` ведёт себя так же, как
  `extract_tool_call_info` из руководства; функция переписана, а не скопирована.
- **Шаблон чата.** `data/templates/kimi_k2.jinja` — шаблон Moonshot для Kimi-K2-Instruct-0905
  (сентябрь 2025 года), скопированный байт в байт из папки токенизатора, которую хранит у себя
  alibaba/rtp-llm (коммит be512b94), под лицензией Modified MIT от Moonshot
  (`data/templates/LICENSE-Kimi-K2-modified-MIT.txt`). `tests/test_templates_official.py`
  проверяет его SHA-256.
- **Шаблон руководства.** Когда писалось руководство, в репозитории, который загружает его строка
  (`moonshotai/Kimi-K2-Instruct`), лежал шаблон июля 2025 года: он не выводит прежние вызовы
  ассистента и заголовок `## Return of`. С тех пор шаблон в этом репозитории обновляли.
- **Офлайн-токенизатор.** Его собирает `scripts/build_tokenizers.py`: маленький байтовый BPE,
  обученный на фразах самого курса, маркеры формата отдельными токенами с настоящими id (от 163586)
  и шаблон из репозитория. В настоящем словаре около 160 тысяч токенов.
- **Id без `functions.`** (шаг 5). API Moonshot пишет id вида `get_weather:0`, и в тестах парсера
  Kimi-K2 в vLLM есть сырой текст с такими id.

</details>
""",
    ),
    md(
        """
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. The function name inside an id

Write `name_from_id(call_id)` that returns the function name inside a Kimi-K2 call id:
`functions.get_weather:0` → `get_weather`. It must also handle ids without the `functions.` prefix
(`get_weather:0`, as Moonshot writes them), names with `-`, and names with `.`
(`functions.weather.today:3` → `weather.today`, as SGLang reads it). The starter is the guide's
expression.
""",
        """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Имя функции внутри id

Напишите `name_from_id(call_id)`, которая возвращает имя функции из идентификатора вызова
Kimi-K2: `functions.get_weather:0` → `get_weather`. Она должна справляться и с id без префикса
`functions.` (`get_weather:0`, как пишет Moonshot), и с именами, где есть `-` или `.`
(`functions.weather.today:3` → `weather.today`, как читает SGLang). В заготовке стоит выражение из
руководства.
""",
    ),
    code(
        '''
from helpers.exercises.n04 import check_extract, check_name_from_id


def name_from_id(call_id):
    # your code here
    return call_id.split(".")[1].split(":")[0]
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_name_from_id(name_from_id)
''',
    ),
    code(
        '''
def name_from_id(call_id):
    name = call_id.removeprefix("functions.")
    return name.rsplit(":", 1)[0] if ":" in name else name


check_name_from_id(name_from_id)
''',
        hidden=True,
    ),
    md(
        """
### Exercise 2. A better extractor

Write `extract_tool_calls(text)` returning OpenAI-shaped calls
(`{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}`) from **every**
section. It must accept ids with `-` or without `functions.`, spaces and newlines around the
markers (strip them from the id and the arguments), and a last call whose end markers were cut off
(return its arguments as they are). Regular expressions are fine, and your `name_from_id` helps; the
check compares your calls with `parse_kimi`'s on the variants above and a few more.
""",
        """
### Упражнение 2. Парсер получше

Напишите `extract_tool_calls(text)`, которая возвращает вызовы в формате OpenAI
(`{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}`) из **всех**
секций. Она должна принимать id с `-` или без `functions.`, пробелы и переводы строк вокруг
маркеров (уберите их из id и аргументов) и последний вызов, у которого обрезаны конечные маркеры
(его аргументы верните как есть). Регулярные выражения подойдут, пригодится и ваша `name_from_id`;
проверка сравнивает ваши вызовы с результатом `parse_kimi` на вариантах выше и ещё нескольких.
""",
    ),
    md(
        """
The starter is the guide's parser. Here is all of it, both patterns included; the comments say
where it goes wrong:
""",
        """
В заготовке стоит парсер из руководства. Ниже он целиком, вместе с обоими регулярными выражениями:
это исходный код модуля на английском, и его комментарии показывают, где парсер ошибается; их
пересказ по-русски — сразу после кода:
""",
    ),
    code(
        r'''
import inspect

from IPython.display import Markdown

from helpers.formats import guide

Markdown(f"```python\n{inspect.getsource(guide)}```")
''',
    ),
    md(
        """
What its comments say, in short:

- two patterns, as in the guide: a whole section (non-greedy, so it stops at the first section
  end) and one call inside it; the id pattern `[\\w\\.]+:\\d+` has no `-`;
- no `<|tool_calls_section_begin|>` in the text: the result is `[]`;
- only the first complete section is read: the calls of a second section are lost;
- a section that begins but never ends (output cut off by `max_tokens`) leaves no complete section,
  and `sections[0]` raises `IndexError` (kept on purpose);
- a call whose id contains `-` is skipped in silence;
- the name is `id.split(".")[1].split(":")[0]`: a name with `.` is cut short, and an id without
  the `functions.` prefix (such as the Moonshot API's `get_weather:0`) raises `IndexError`.
""",
        """
Что говорят комментарии в этом коде, вкратце:

- два регулярных выражения, как в руководстве: для секции целиком (нежадное, поэтому
  останавливается на конце первой секции) и для одного вызова внутри неё; в выражении для id
  `[\\w\\.]+:\\d+` нет `-`;
- если в тексте нет `<|tool_calls_section_begin|>`, результат — `[]`;
- читается только первая законченная секция: вызовы из второй теряются;
- если секция началась, но не закончилась (вывод обрезан по `max_tokens`), законченных секций нет,
  и `sections[0]` выбрасывает `IndexError` (так оставлено намеренно);
- вызов, в id которого есть `-`, молча пропускается;
- имя вычисляется как `id.split(".")[1].split(":")[0]`: имя с `.` обрезается, а на id без префикса
  `functions.` (например, `get_weather:0` из ответов API Moonshot) код падает с `IndexError`.
""",
    ),
    md(
        """
**Step 1.** Find every call, not every section: one pattern over the whole text sees the calls of
all sections. The markers contain `|`, which means "or" in a regular expression, so escape it:
`\\|` by hand, or let `re.escape` do it.
""",
        """
**Шаг 1.** Ищите каждый вызов, а не каждую секцию: одно выражение, применённое ко всему тексту,
находит вызовы во всех секциях. В маркерах есть `|`, а в регулярном выражении это «или», поэтому его надо
экранировать: вручную (`\\|`) или через `re.escape`.
""",
    ),
    code(
        r'''
import re

BEGIN = re.escape("<|tool_call_begin|>")
ARGUMENT_BEGIN = re.escape("<|tool_call_argument_begin|>")
print(BEGIN)
re.findall(BEGIN + r"\s*(.+?)\s*" + ARGUMENT_BEGIN, variants["second section"])
''',
        ru={'"second section"': VARIANT_RU['"second section"']},
    ),
    md(
        """
**Step 2.** In a regular expression `.` matches any character **except a newline**. Arguments may
span several lines (a model that pretty-prints its JSON), and then `(.*?)` stops at the first line
break and finds nothing. The `re.DOTALL` flag lets `.` match newlines too:
""",
        """
**Шаг 2.** В регулярном выражении `.` совпадает с любым символом, **кроме перевода строки**.
Аргументы могут занимать несколько строк (если модель печатает JSON с отступами), и тогда `(.*?)`
упирается в первый же перевод строки и ничего не находит. Флаг `re.DOTALL` разрешает `.`
совпадать и с переводом строки:
""",
    ),
    code(
        r'''
pretty = '<|tool_call_argument_begin|>{\n  "city": "Beijing"\n}<|tool_call_end|>'
ARGUMENTS = ARGUMENT_BEGIN + r"(.*?)" + re.escape("<|tool_call_end|>")
print(re.findall(ARGUMENTS, pretty))
print(re.findall(ARGUMENTS, pretty, re.DOTALL))
''',
    ),
    md(
        """
**Step 3.** The arguments run up to `<|tool_call_end|>`, or to the section end, or to the end of the
text when the output was cut off: put the three in one group with `|` between them (the last one is
`$`), and pass `re.DOTALL`. Then build each call with your `name_from_id`.
""",
        """
**Шаг 3.** Аргументы идут до `<|tool_call_end|>`, или до конца секции, или до конца текста, если
вывод обрезан: соберите эти три варианта в одну группу через `|` (последний — `$`) и передайте
`re.DOTALL`. Затем соберите каждый вызов с помощью вашей `name_from_id`.
""",
    ),
    code(
        '''
def extract_tool_calls(text):
    # your code here
    return guide_extract_tool_call_info(text)
''',
        ru={"# your code here": "# ваш код здесь"},
    ),
    code(
        '''
check_extract(extract_tool_calls)
''',
    ),
    code(
        r'''
import re

CALL_RE = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<id>.+?)\s*<\|tool_call_argument_begin\|>\s*"
    r"(?P<arguments>.*?)\s*(?:<\|tool_call_end\|>|<\|tool_calls_section_end\|>|$)",
    re.DOTALL,
)


def extract_tool_calls(text):
    return [
        {"id": m["id"], "type": "function",
         "function": {"name": name_from_id(m["id"]), "arguments": m["arguments"]}}
        for m in CALL_RE.finditer(text)
    ]


check_extract(extract_tool_calls)
''',
        hidden=True,
    ),
    md(
        """
[Next: 05 The same loop with Qwen](05_qwen_comparison.ipynb)
""",
        """
[Дальше: 05 Тот же цикл с Qwen](05_qwen_comparison.ipynb)
""",
    ),
])
