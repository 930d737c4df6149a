"""Lesson 12: measuring tool calling: a pre-flight of an endpoint, F1, schema accuracy, BFCL's
AST check and how much a small sample can tell."""

from nbbuild import Lesson, code, md

META = {
    "title": {"en": "Measuring tool calling", "ru": "Измеряем вызов инструментов"},
    "summary": {
        "en": "a pre-flight of an endpoint before a class, tool-call F1, schema accuracy, BFCL's AST check, intervals",
        "ru": "предполётная проверка адреса API перед занятием, F1 вызовов, доля аргументов, верных по схеме, проверка по AST из BFCL, интервалы",
    },
    "minutes_reading": (44, 50),
    "minutes_exercises": (16, 30),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_f1", "check_schema_accuracy"),
}

LESSON = Lesson("12_measuring", [
    md("""
# Measuring tool calling

**Goal:** check an endpoint before a class depends on it, and score tool calls with numbers you
can defend.

## What you will build

- a pre-flight of an endpoint, `python -m helpers.verify`, and its table for seven engines;
- tool-call precision, recall and F1, and schema accuracy, computed by hand;
- a structural check of calls (BFCL's "AST" check) on 28 items of the Berkeley Function Calling
  Leaderboard;
- a 95 % interval that says how much a small sample can tell.
""", """
# Измеряем вызов инструментов

**Цель:** проверить адрес API до того, как от него будет зависеть занятие, и оценивать вызовы
инструментов числами, которые можно обосновать.

## Что вы сделаете

- предполётную проверку (pre-flight) адреса API, `python -m helpers.verify`, и её таблицу для
  семи движков;
- точность (precision), полноту (recall) и F1 вызовов и долю аргументов, верных по схеме (schema
  accuracy), — всё вручную;
- структурную проверку вызовов (проверку по AST, как в BFCL) на 28 заданиях Berkeley Function
  Calling Leaderboard;
- 95-процентный доверительный интервал, который показывает, что может сказать маленькая выборка.
"""),
    md("""
## Setup

In replay mode the engines' answers come from a cassette synthesized from each engine's
documentation, and the answers to BFCL's questions come from a **scripted** model: they are written
to be mostly right with a few typical mistakes. So in replay the lesson measures the scorers and
the formats, not a model. With `LLM_MODE=live` the same cells measure your endpoint and your model. Where each answer
comes from: [Reference](#reference).
""", """
## Подготовка

В режиме воспроизведения (replay) ответы движков берутся из кассеты, синтезированной по
документации каждого движка, а ответы на вопросы BFCL даёт **заданная сценарием** модель: её ответы
написаны так, чтобы быть в основном верными, с несколькими типичными ошибками. Поэтому в этом
режиме урок измеряет сами способы оценки и форматы, а не модель. С `LLM_MODE=live` те же ячейки
измеряют ваш адрес API и вашу модель. Откуда взят каждый ответ: [Справка](#reference).
"""),
    code('''
import json
import math

from openai import OpenAI

from helpers import connect, set_language, verify
from helpers.arguments import validate_arguments
from helpers.display import compare_table
from helpers.paths import DATA_DIR
from helpers.tools import parse_arguments

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")  # Kimi-K2 on the Moonshot platform
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
conn
''', ru={"# Kimi-K2 on the Moonshot platform": "# Kimi-K2 на платформе Moonshot"}),
    md("""
## 1. Run the pre-flight before the class

Before 25 students depend on an endpoint, run the pre-flight against it:
`python -m helpers.verify --endpoint URL --model NAME --key-env VAR`. It sends at most 20
requests and prints one line per check: PASS, WARN, FAIL, N/A or N/R, with the field that was
wrong and the lesson that explains it; the exit status is 1 when a check failed.

From Python the same battery is `verify.run`:
""", """
## 1. Перед занятием запустите предполётную проверку

Прежде чем от адреса API будут зависеть 25 студентов, запустите на нём предполётную проверку:
`python -m helpers.verify --endpoint URL --model NAME --key-env VAR`. Она отправляет не больше 20
запросов и печатает по строке на проверку: PASS, WARN, FAIL, N/A или N/R — с полем, которое
оказалось неверным, и уроком, где это объяснено; код выхода 1 значит, что какая-то проверка не прошла.

Из Python тот же набор проверок запускает `verify.run`:
"""),
    code('''
checks = verify.run(conn.endpoint, model_name, conn.api_key)
for check in checks:
    print(check.line())
'''),
    md("""
Three lines say N/R: the cassette has no answer for these settings on the Moonshot platform (step 2
explains N/R; with a key, the same cell measures the real platform). The N/A line is a check that
does not apply here: this K2 sent no reasoning, so there was none to send back. A WARN would be a
difference your code must handle but the endpoint may keep.
""", """
В трёх строках стоит N/R: в кассете нет ответов платформы Moonshot на эти настройки (что значит N/R,
объясняет шаг 2; с ключом та же ячейка измерит настоящую платформу). Строка с N/A — проверка,
которая здесь неприменима: эта K2 не прислала рассуждения, так что возвращать было нечего. WARN
означал бы отличие, с которым должен справиться ваш код, но которое адрес API может оставить.
"""),
    md("""
## 2. One battery, seven engines

Run the same battery against every engine you might use and read the columns side by side. N/A
means the check does not apply to that engine: either it refused the setting with a 400 (not
supported) or, on the reasoning row, its model sent no reasoning; the line's evidence says which.
N/R means the replay cassette has no answer for it: no source says what that engine does, so there
is no data, not a behaviour.
""", """
## 2. Один набор проверок, семь движков

Запустите один и тот же набор проверок на каждом движке, который можете выбрать, и сравните
столбцы. N/A значит, что проверка к этому движку неприменима: либо он отверг настройку с ответом
400 (не поддерживает её), либо, в строке рассуждения, его модель не прислала рассуждения; что
именно, сказано в строке проверки. N/R значит, что в кассете нет ответа на такой запрос: ни один
источник не говорит, что делает этот движок, так что данных нет — это не поведение движка.
"""),
    code('''
ENGINES = {  # column -> (provider, engine profile)
    "K2": ("kimi", "moonshot"),
    "vLLM": ("kimi", "vllm"),
    "K2.6": ("kimi", "moonshot_thinking"),
    "K3": ("kimi", "moonshot_k3"),
    "llama.cpp": ("qwen", "llamacpp_hermes"),
    "stop": ("kimi", "stop_with_calls"),
    "no parser": ("kimi", "no_parser"),
}


def statuses(provider, engine):
    """One engine's status for each check of the battery."""
    engine_conn = connect(provider, engine=engine)
    found = verify.run(engine_conn.endpoint, engine_conn.model_name, engine_conn.api_key)
    return {check.name: check.status for check in found}
''', ru={"# column -> (provider, engine profile)": "# столбец -> (провайдер, профиль движка)",
        "One engine's status for each check of the battery.":
        "Статус каждой проверки набора на одном движке."}),
    code('''
if conn.replay_only("the seven recorded engine profiles"):
    columns = {name: statuses(*where) for name, where in ENGINES.items()}
    rows = [[name] + [columns[engine].get(name, "-") for engine in ENGINES]
            for name in columns["vLLM"]]
    compare_table(rows, ["check", *ENGINES])
''', ru={'["check", *ENGINES]': '["проверка", *ENGINES]',
        '"the seven recorded engine profiles"': '"семь записанных профилей движков"'}),
    md("""
Read it column by column. **vLLM** passes every check that applies; its N/A on the reasoning row,
like K2's and stop's, means that the model sent no reasoning, not that the engine refuses it.
**no parser**: the call arrived as text in `content`, so nothing else could be measured; the FAIL
line names the flag to add, on vLLM `--enable-auto-tool-choice --tool-call-parser kimi_k2`
(lessons 00 and 04). **K2.6** refuses a forced choice, and **K3** ignores a named one (lesson 08). **llama.cpp** makes two calls
under `parallel_tool_calls: false`, and **stop** says `finish_reason: "stop"` beside its calls,
which lesson 02's loop handles. A dash is a check the battery did not reach.
""", """
Читайте по столбцам. **vLLM** проходит все применимые к нему проверки; его N/A в строке
рассуждения, как и у K2 и stop, значит, что модель не прислала рассуждения, а не что движок его
отвергает. **no parser**: вызов пришёл текстом в `content`, поэтому больше ничего измерить нельзя;
строка с FAIL называет флаг, который нужно добавить, для vLLM это
`--enable-auto-tool-choice --tool-call-parser kimi_k2` (уроки 00 и 04). **K2.6** отвергает
принудительный выбор, а **K3** молча не учитывает выбор по имени (урок 08).
**llama.cpp** делает два вызова при `parallel_tool_calls: false`, а **stop** сообщает
`finish_reason: "stop"` рядом с вызовами — цикл из урока 02 с этим справляется. Прочерк — проверка,
до которой набор не дошёл.
"""),
    md("""
## 3. Tool-call F1: did it call when it should?

Label every request "needs a call" or not, and decide what counts as "called" before you count.
Then precision is, of the replies that called, the share that should have (`TP / (TP + FP)`);
recall is, of the requests that needed a call, the share that got one (`TP / (TP + FN)`); and F1
is their harmonic mean, `2PR / (P + R)`.

Five labelled questions, asked of two engines:
""", """
## 3. F1 вызовов: вызвала ли модель инструмент, когда следовало?

Пометьте каждый запрос: нужен ли в нём вызов, — и до подсчёта решите, что считается «вызвала».
Тогда точность — доля ответов с вызовом, где вызов и был нужен (`TP / (TP + FP)`); полнота — доля
запросов, которым нужен был вызов и которые его получили (`TP / (TP + FN)`); F1 — их среднее
гармоническое, `2PR / (P + R)`.

Зададим пять помеченных вопросов двум движкам:
"""),
    code('''
LABELLED = [  # (question, needs a tool call)
    (verify.ONE_CITY, True),
    (verify.TWO_CITIES, True),
    ("What time is it in Moscow now?", True),
    (verify.NO_TOOL_NEEDED, False),
    ("What is 2 + 2?", False),
]
expected = [needs for _, needs in LABELLED]


def ask_all(engine_conn):
    """The first choice of each labelled question's reply."""
    engine_client = OpenAI(
        base_url=engine_conn.endpoint,
        api_key=engine_conn.api_key,
        http_client=engine_conn.http_client(),
    )
    return [
        engine_client.chat.completions.create(
            model=engine_conn.model_name,
            messages=[{"role": "user", "content": question}],
            tools=verify.TOOLS,
        ).choices[0]
        for question, _ in LABELLED
    ]
''', ru={"# (question, needs a tool call)": "# (вопрос, нужен ли вызов)",
        "The first choice of each labelled question's reply.":
        "Первый вариант (choice) ответа на каждый помеченный вопрос."}),
    md("""
Count the three kinds of outcome by hand: a true positive (TP: called, should have), a false
positive (FP: called, should not have) and a false negative (FN: did not call, should have):
""", """
Посчитайте вручную три исхода: верный вызов (TP: вызвала, и это было нужно), лишний вызов (FP:
вызвала, а было не нужно) и пропущенный вызов (FN: не вызвала, а было нужно):
"""),
    code('''
def f1_row(called):
    tp = sum(e and c for e, c in zip(expected, called))
    fp = sum(c and not e for e, c in zip(expected, called))
    fn = sum(e and not c for e, c in zip(expected, called))
    return tp, fp, fn, round(2 * tp / (2 * tp + fp + fn), 2)  # F1 = 2PR / (P + R)


engines = {"K2": "moonshot", "stop": "stop_with_calls"}
if conn.mode != "replay":
    engines = {"": None}  # live mode: your endpoint only
for label, engine in engines.items():
    choices = ask_all(connect("kimi", engine=engine) if engine else conn)
    by_finish = [choice.finish_reason == "tool_calls" for choice in choices]
    by_calls = [bool(choice.message.tool_calls) for choice in choices]
    compare_table([["finish_reason", *f1_row(by_finish)], ["tool_calls", *f1_row(by_calls)]],
                  [f"{label} called by", "TP", "FP", "FN", "F1"])
''', ru={"# F1 = 2PR / (P + R)": "# то же, что 2PR / (P + R)",
        "# live mode: your endpoint only": "# режим live: только ваш адрес API",
        '"{label} called by"': '"{label} вызов по"'}),
    md("""
On the Moonshot platform the two rules agree. On the engine that says `"stop"` beside its calls, counting
`finish_reason == "tool_calls"` finds no call at all, so F1 is 0 although every call was made:
measure with the rule your loop uses (lesson 02: the message's `tool_calls`).
""", """
На платформе Moonshot оба правила совпадают. На движке, который сообщает `"stop"` рядом с вызовами, подсчёт по
`finish_reason == "tool_calls"` не находит ни одного вызова, и F1 равен 0, хотя все вызовы были
сделаны: измеряйте по тому правилу, которым пользуется ваш цикл (урок 02: `tool_calls` сообщения).
"""),
    md("""
## 4. BFCL's questions in OpenAI's schema words

BFCL writes its parameter schemas with Python's type names (`"dict"`, `"float"`): convert them to
JSON Schema's (`"object"`, `"number"`) before an OpenAI-compatible server sees them, or a
validating server refuses the tools.
""", """
## 4. Вопросы BFCL в терминах схем OpenAI

BFCL записывает схемы параметров именами типов Python (`"dict"`, `"float"`): переведите их в
термины JSON Schema (`"object"`, `"number"`), прежде чем их увидит OpenAI-совместимый сервер, иначе
проверяющий сервер отвергнет описание инструментов.
"""),
    code('''
items = json.loads((DATA_DIR / "bfcl" / "slice.json").read_text(encoding="utf-8"))
JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def to_json_schema(schema):
    """A BFCL schema with JSON Schema's type names."""
    out = dict(schema, type=JSON_TYPES.get(schema["type"], schema["type"]))
    if "properties" in schema:
        out["properties"] = {k: to_json_schema(v) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = to_json_schema(schema["items"])
    return out


def bfcl_tools(item):
    return [{"type": "function", "function": {**f, "parameters": to_json_schema(f["parameters"])}}
            for f in item["functions"]]


counts = {c: sum(i["category"] == c for i in items) for c in ("simple", "parallel", "irrelevance")}
print(len(items), "items:", counts)
print(items[0]["functions"][0]["parameters"]["type"], "->", bfcl_tools(items[0])[0]["function"]["parameters"]["type"])
''', ru={"A BFCL schema with JSON Schema's type names.": "Схема BFCL с именами типов JSON Schema.",
        '"items:"': '"заданий:"'}),
    md("""
Each question goes to the model with its own tools; the calls it makes are what the next two steps
score:
""", """
Каждый вопрос уходит модели со своими инструментами; её вызовы оценивают следующие два шага:
"""),
    code('''
answers = {}
for item in items:
    reply = client.chat.completions.create(
        model=model_name,
        messages=[{"role": "user", "content": item["question"]}],
        tools=bfcl_tools(item),
    )
    answers[item["id"]] = reply.choices[0].message.tool_calls or []
print(f"{sum(len(calls) for calls in answers.values())} calls in {len(answers)} replies")
''', ru={'"{sum(len(calls) for calls in answers.values())} calls in {len(answers)} replies"':
        '"вызовов: {sum(len(calls) for calls in answers.values())}, ответов: {len(answers)}"'}),
    md("""
## 5. Schema accuracy: can the call run?

Measure separately whether each call can run: schema accuracy is the share of calls whose
arguments are valid JSON that fits the tool's schema. F1 says whether the model called; schema
accuracy says whether the call can run at all.
""", """
## 5. Доля аргументов, верных по схеме: можно ли выполнить вызов?

Отдельно измеряйте, можно ли выполнить каждый вызов: доля аргументов, верных по схеме (schema
accuracy), — это доля вызовов, чьи аргументы являются корректным JSON и подходят под схему
инструмента. F1 говорит, вызвала ли модель инструмент, а эта доля — можно ли такой вызов вообще
выполнить.
"""),
    code('''
def fits_schema(call, tools):
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    arguments, problem = parse_arguments(call.function.arguments)
    if problem or call.function.name not in schemas:
        return False
    return not validate_arguments(arguments, schemas[call.function.name])


fits = [fits_schema(call, bfcl_tools(item)) for item in items for call in answers[item["id"]]]
print(f"schema accuracy: {sum(fits)} of {len(fits)} calls = {sum(fits) / len(fits):.0%}")
''', ru={"schema accuracy: {sum(fits)} of {len(fits)} calls":
        "верны по схеме: {sum(fits)} из {len(fits)} вызовов"}),
    md("""
## 6. The AST check: name, parameters, types, values

Score a call as right only after checking its name, its parameters and its values: the name is
the expected function, every parameter the answer needs is present, no unknown parameter appears,
and every value has the schema's type and is one of the allowed values. That is BFCL's "AST" check (it compares the parsed call, not its text); an
irrelevance question is right only when no call is made.
""", """
## 6. Проверка по AST: имя, параметры, типы, значения

Считайте вызов верным, только проверив имя, параметры и значения: имя совпадает с ожидаемой
функцией, все нужные параметры на месте, незнакомых параметров нет, а каждое значение имеет тип из
схемы и входит в список допустимых. Это и есть
проверка BFCL «по AST» (она сравнивает разобранный вызов, а не его текст); на вопрос из категории
irrelevance верен только ответ без вызова.
"""),
    code('''
PY_TYPES = {"integer": (int,), "number": (int, float), "string": (str,), "boolean": (bool,),
            "array": (list,), "object": (dict,)}


def normalized(value):
    """BFCL compares strings without case, spaces and punctuation."""
    if isinstance(value, str):
        return "".join(ch for ch in value.lower() if ch.isalnum())
    return value


def value_ok(value, schema, allowed):
    kinds = PY_TYPES.get(schema.get("type"), (object,))
    if isinstance(value, bool) and bool not in kinds:
        return False  # True is an int in Python, not in JSON Schema
    return isinstance(value, kinds) and normalized(value) in [normalized(a) for a in allowed]
''', ru={"BFCL compares strings without case, spaces and punctuation.":
        "BFCL сравнивает строки без учёта регистра, пробелов и знаков препинания.",
        "# True is an int in Python, not in JSON Schema":
        "# в Python True — это int, а в JSON Schema — нет"}),
    code('''
def call_ok(call, expected, tools):
    """One call against one ground-truth entry {name: {parameter: allowed values}}."""
    (name, parameters), = expected.items()
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    arguments, problem = parse_arguments(call.function.arguments)
    if problem or call.function.name != name:
        return False
    properties = schemas[name].get("properties", {})
    if set(arguments) - set(parameters):
        return False  # an unknown parameter
    for parameter, allowed in parameters.items():
        if parameter not in arguments:
            if "" not in allowed:  # "" among the allowed values: it may be left out
                return False
        elif not value_ok(arguments[parameter], properties.get(parameter, {}), allowed):
            return False
    return True


def ast_ok(item, calls):
    """BFCL's rule: irrelevance wants no call; otherwise each expected call matched once."""
    truth, tools, left = item["ground_truth"], bfcl_tools(item), list(calls)
    if len(calls) != len(truth):
        return False
    for expected in truth:  # in any order: each expected call takes the first call that fits
        match = next((call for call in left if call_ok(call, expected, tools)), None)
        if match is None:
            return False
        left.remove(match)
    return True
''', ru={"One call against one ground-truth entry {name: {parameter: allowed values}}.":
        "Один вызов против одной записи эталона {имя: {параметр: допустимые значения}}.",
        "# an unknown parameter": "# незнакомый параметр",
        '# "" among the allowed values: it may be left out':
        '# "" среди допустимых значений: параметр можно не указывать',
        "BFCL's rule: irrelevance wants no call; otherwise each expected call matched once.":
        "Правило BFCL: в irrelevance вызовов нет, иначе у каждого ожидаемого вызова своя пара.",
        "# in any order: each expected call takes the first call that fits":
        "# в любом порядке: ожидаемый вызов берёт первый подходящий"}),
    code('''
scores = {item["id"]: ast_ok(item, answers[item["id"]]) for item in items}
rows = []
for category in ("simple", "parallel", "irrelevance"):
    ok = [scores[i["id"]] for i in items if i["category"] == category]
    rows.append([category, f"{sum(ok)} / {len(ok)}"])
rows.append(["all", f"{sum(scores.values())} / {len(scores)}"])
compare_table(rows, ["category", "AST correct"])
print("wrong:", ", ".join(item_id for item_id, ok in scores.items() if not ok))
''', ru={'"category", "AST correct"': '"категория", "верно по AST"', '"wrong:"': '"неверны:"',
        '["all", ': '["все", '}),
    md("""
The scripted model's six mistakes are all found: a missing parameter (`simple_python_5`), a value
outside the allowed ones (`simple_python_7`), a number written as text (`simple_python_25`), three
calls where four were asked (`parallel_33`) and two calls to tools that do not fit
(`irrelevance_9`, `irrelevance_12`). Schema accuracy caught only one of them: the number written
as text.
""", """
Все шесть ошибок заданной сценарием модели найдены: пропущенный параметр (`simple_python_5`),
значение не из допустимых (`simple_python_7`), число, записанное строкой (`simple_python_25`), три
вызова там, где просили четыре (`parallel_33`), и два вызова неподходящих инструментов
(`irrelevance_9`, `irrelevance_12`). Проверка по схеме заметила только одну из них — число,
записанное строкой.
"""),
    md("""
## 7. How sure is a small sample?

Report a rate with its 95 % interval: with 18 of 20 right, the Wilson interval is about 70-97 %,
so 20 items cannot tell an endpoint that is right 75 % of the time from one that is right 95 % of
the time. The Wilson interval, unlike "p ± 1.96 √(p(1-p)/n)", stays inside 0-100 % and does not
collapse to a single point at 20 of 20.
""", """
## 7. Насколько можно доверять маленькой выборке?

Сообщайте долю вместе с её 95-процентным доверительным интервалом: при 18 верных из 20 интервал
Уилсона — около 70-97 %, то есть 20 заданий не отличат адрес API, ответы которого верны в 75 %
случаев, от того, где верны 95 %. Интервал Уилсона, в отличие от «p ± 1,96 √(p(1-p)/n)», не выходит за пределы 0-100 %
и не сжимается в точку при 20 верных из 20.
"""),
    code('''
def wilson(correct, total, z=1.96):
    """The 95 % Wilson score interval of correct / total."""
    p = correct / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return centre - half, centre + half


right = sum(scores.values())
for k, n in [(18, 20), (20, 20), (right, len(scores)), (180, 200)]:
    low, high = wilson(k, n)
    print(f"{k:>3} of {n:<3} = {k / n:4.0%}   95 % interval {low:4.0%} - {high:4.0%}")
''', ru={'"{k:>3} of {n:<3} = {k / n:4.0%}   95 % interval':
        '"{k:>3} из {n:<3} = {k / n:4.0%}   95-процентный интервал',
        "The 95 % Wilson score interval of correct / total.":
        "95-процентный интервал Уилсона для доли correct / total."}),
    md("""
Ten times the items narrow the interval about three times (180 of 200: 85-93 %). Moonshot's vendor
verifier sends thousands of requests for that reason; a pre-flight of tens of requests finds a
misconfigured server, not a small difference in quality.
""", """
В десять раз больше заданий сужают интервал примерно втрое (180 из 200: 85-93 %). Поэтому
проверка поставщиков от Moonshot (vendor verifier) отправляет тысячи запросов; предполётная
проверка из десятков запросов находит неправильно настроенный сервер, а не небольшую разницу в
качестве.
"""),
    md("""
## Summary

- Run `python -m helpers.verify` against an endpoint before a class depends on it: a FAIL names the
  field and the lesson; N/A is a check that does not apply (a setting refused with a 400, or no
  reasoning to send back), N/R in replay is missing data.
- F1 counts decisions (called or not), schema accuracy counts runnable calls, the AST check counts
  right calls; count "called" by the rule your loop uses.
- A rate from tens of items has an interval tens of points wide: say it with the interval.
""", """
## Итоги

- Прежде чем от адреса API будет зависеть занятие, запустите на нём `python -m helpers.verify`:
  FAIL называет поле и урок; N/A — проверка неприменима (настройка отвергнута с ответом 400 или
  рассуждения, которое надо вернуть, не было), N/R в режиме воспроизведения — отсутствие данных.
- F1 считает решения (вызвала или нет), доля верных по схеме — вызовы, которые можно выполнить,
  проверка по AST — верные вызовы; «вызвала» считайте по тому же правилу, что и ваш цикл.
- Доля, посчитанная на десятках заданий, имеет интервал шириной в десятки процентных пунктов:
  называйте её вместе с интервалом.
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- **The pre-flight** (`helpers/verify.py`) follows what Moonshot's K2 Vendor Verifier measures
  (tool-call F1 with "called" as `finish_reason == "tool_calls"` against the official API over
  4,000 requests, and schema accuracy; its thresholds: 73 % for K2-Thinking, 80 % for K2-0905) and
  its 2026 pytest pre-flights, at the scale of a class: at most 20 requests.
- **The engines' answers** in this lesson's cassette are synthesized from documentation, as in
  lesson 08: vLLM keeps only the first call under `parallel_tool_calls: false`
  (`maybe_filter_parallel_tool_calls` in `vllm/entrypoints/openai/utils.py`); Moonshot kimi-k2.6
  refuses a forced choice with thinking on; kimi-k3 ignores a named one (Kimi Vendor Verifier's K3
  tests); llama.cpp with a Hermes-format template keeps several calls under `false` (a capture of a
  real `llama-server`, lesson 07). Where no source says, nothing is recorded (N/R).
- **BFCL**: 28 items of BFCL v4 (12 `simple_python`, 8 `parallel`, 8 `irrelevance`) copied from the
  `bfcl-eval` package, version 2026.3.23, Apache License 2.0 (data/bfcl/README.md). The answers
  are a scripted model's, written in `helpers/replay/scenarios/n12_measuring.py`. BFCL's own
  checker also accepts an int for a float and compares lists and dicts element by element; the
  lesson's `ast_ok` covers the scalar parameters these items use. Items whose function names contain
  dots were left out: OpenAI-style APIs refuse dots in tool names (BFCL replaces them for those
  models).
- **The interval** is Wilson's score interval (E. B. Wilson, 1927); with 18 of 20 it is
  0.699-0.972.

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- **Предполётная проверка** (`helpers/verify.py`) повторяет то, что измеряет K2 Vendor Verifier от
  Moonshot (F1 вызовов, где «вызвала» значит `finish_reason == "tool_calls"`, в сравнении с
  официальным API на 4000 запросах, и долю аргументов, верных по схеме; пороги: 73 % для
  K2-Thinking, 80 % для K2-0905), и его проверки 2026 года на pytest, но в масштабе занятия: не
  больше 20 запросов.
- **Ответы движков** в кассете урока синтезированы по документации, как в уроке 08: vLLM при
  `parallel_tool_calls: false` оставляет только первый вызов (`maybe_filter_parallel_tool_calls` в
  `vllm/entrypoints/openai/utils.py`); Moonshot kimi-k2.6 при включённом рассуждении отвергает
  принудительный выбор; kimi-k3 молча не учитывает выбор по имени (тесты K3 в Kimi Vendor Verifier);
  llama.cpp с шаблоном в формате Hermes оставляет несколько вызовов при `false` (запись настоящего
  `llama-server`, урок 07). Где источник молчит, ничего не записано (N/R).
- **BFCL**: 28 заданий BFCL v4 (12 `simple_python`, 8 `parallel`, 8 `irrelevance`) взяты из пакета
  `bfcl-eval` версии 2026.3.23, лицензия Apache 2.0 (data/bfcl/README.md). Ответы даёт модель,
  заданная сценарием в `helpers/replay/scenarios/n12_measuring.py`. Проверка самого BFCL ещё
  принимает целое число вместо дробного и сравнивает списки и словари поэлементно; `ast_ok` урока
  покрывает скалярные параметры этих заданий. Задания, в именах функций которых есть точки, не
  взяты: OpenAI-совместимые API не принимают точки в именах инструментов (BFCL для таких моделей их
  заменяет).
- **Интервал** — интервал Уилсона (E. B. Wilson, 1927); при 18 из 20 он равен 0,699-0,972.

</details>
"""),
    md("""
## Exercises

Each exercise has a cell for you to edit and a self-check cell. As committed, the self-check says
"Not yet"; make it say "Correct!". A reference solution follows in a hidden cell.

### Exercise 1. Precision, recall and F1

Write `precision_recall_f1(expected, called)`: two lists of the same length, `expected[i]`
true when request `i` needed a call and `called[i]` true when the reply called. Return the tuple
`(precision, recall, f1)` as floats; a ratio whose denominator is zero is `0.0`.
""", """
## Упражнения

В каждом упражнении есть ячейка, которую вы правите, и ячейка самопроверки (self-check). В
исходном виде самопроверка говорит «Пока нет»; добейтесь «Верно!». Эталонное решение — в скрытой
ячейке следом.

### Упражнение 1. Точность, полнота и F1

Напишите `precision_recall_f1(expected, called)`: два списка одной длины, `expected[i]`
истинно, если запросу `i` нужен был вызов, а `called[i]` — если в ответе был вызов. Верните кортеж
`(precision, recall, f1)` из чисел с плавающей точкой; отношение с нулевым знаменателем равно `0.0`.
"""),
    code('''
def precision_recall_f1(expected, called):
    return 0.0, 0.0, 0.0  # your code here
''', ru={"# your code here": "# ваш код здесь"}),
    code('''
from helpers.exercises import n12

n12.check_f1(precision_recall_f1)
'''),
    code('''
def precision_recall_f1(expected, called):
    tp = sum(bool(e) and bool(c) for e, c in zip(expected, called))
    fp = sum(bool(c) and not e for e, c in zip(expected, called))
    fn = sum(bool(e) and not c for e, c in zip(expected, called))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


n12.check_f1(precision_recall_f1)
''', hidden=True),
    md("""
### Exercise 2. Schema accuracy

Write `schema_accuracy(tool_calls, tools)`: the share of the calls (dicts shaped like
`{"id": ..., "function": {"name": ..., "arguments": "<JSON text>"}}`) whose arguments are valid JSON
that fits their tool's schema in `tools` (use `parse_arguments` and `validate_arguments`, imported
in the setup cell; `parse_arguments` reads empty text, which engines send for a call without
arguments, as `{}`). A call to a tool not in `tools` does not fit; no calls gives `0.0`.
""", """
### Упражнение 2. Доля аргументов, верных по схеме

Напишите `schema_accuracy(tool_calls, tools)`: долю вызовов (словарей вида
`{"id": ..., "function": {"name": ..., "arguments": "<текст JSON>"}}`), чьи аргументы являются
корректным JSON и подходят под схему своего инструмента из `tools` (возьмите `parse_arguments` и
`validate_arguments`, импортированные в ячейке подготовки; пустой текст, который движки присылают
для вызова без аргументов, `parse_arguments` читает как `{}`). Вызов инструмента, которого нет в
`tools`, не подходит; если вызовов нет, ответ `0.0`.
"""),
    code('''
def schema_accuracy(tool_calls, tools):
    return 0.0  # your code here
''', ru={"# your code here": "# ваш код здесь"}),
    code('''
n12.check_schema_accuracy(schema_accuracy)
'''),
    code('''
from helpers.arguments import validate_arguments
from helpers.tools import parse_arguments


def schema_accuracy(tool_calls, tools):
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    fits = 0
    for call in tool_calls:
        name = call["function"]["name"]
        arguments, problem = parse_arguments(call["function"]["arguments"])
        if not problem and name in schemas and not validate_arguments(arguments, schemas[name]):
            fits += 1
    return fits / len(tool_calls) if tool_calls else 0.0


n12.check_schema_accuracy(schema_accuracy)
''', hidden=True),
    md("""
That is the end of the series. Back to the start: [00 Start here: how an LLM calls tools](00_start.ipynb)
""", """
Это конец серии. Вернуться к началу: [00 С чего начать: как LLM вызывает инструменты](00_start.ipynb)
"""),
])
