"""Start a new lesson: its source, scenario module, self-check module and exercise tests.

    python scripts/new_lesson.py 10_tool_results "Tool results" "Результаты инструментов"

Writes four files that work together from the first minute (the skeleton sends the guide's weather
request, its scenario answers it, its exercise has a self-check and real tests), points the
previous lesson's last line at the new one, refuses to overwrite anything, and prints what is left
to do. It also adds the lesson's registry entry (`META` in its source) and regenerates what the
registry generates (README's table and hours, lesson 00's map, the teacher guides' tables: see
scripts/registry.py); the class-endpoint rows, synthesis and the build are left to the author.
docs/authoring.md walks through the same path.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout first (a shared venv)
sys.path.insert(0, str(ROOT / "scripts"))  # scripts/ is not a package
import registry  # noqa: E402

from helpers.lessons import (  # noqa: E402
    LESSON_NAME,
    exercises_module,
    lesson_names,
    scenario_module,
)

# How a lesson ends: a link to the next one, or (the last lesson) the end of the series.
NEXT = {
    "en": "[Next: {number} {title}]({name}.ipynb)",
    "ru": "[Дальше: {number} {title}]({name}.ipynb)",
}
END_WORDS = {"en": "end of the series", "ru": "конец серии"}
END = {
    "en": "That is the end of the series. Back to the start: [{number} {title}]({name}.ipynb)",
    "ru": "Это конец серии. Вернуться к началу: [{number} {title}]({name}.ipynb)",
}

# QQQ stands for three single quotes, which this template cannot hold.
SOURCE = r'''"""Lesson {number}: {title}."""

from nbbuild import Lesson, code, md

# The lesson's registry entry (scripts/registry.py): README, lesson 00's map, the teacher guides
# and the Next links are generated from it by `python scripts/registry.py --write`.
META = {{
    "title": {{"en": {title!r}, "ru": {title_ru!r}}},
    "summary": {{
        "en": "TODO one line: what the student learns (lesson 00's map, README, the guides)",
        "ru": "TODO одной строкой: чему научится студент",
    }},
    # TODO (fast, slow) minutes at student pace: `python scripts/build_deck.py --times` estimates
    "minutes_reading": (0, 0),
    "minutes_exercises": (0, 0),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_messages",),
}}

LESSON = Lesson("{name}", [
    md("""
# {title}

Goal: TODO one line: what the student can do after this lesson.
""", """
# {title_ru}

Цель: TODO одной строкой: что студент сумеет после урока.
"""),
    md("""
## Setup

In replay mode the model's answers come from cassettes synthesized from the documented formats
(not captured from a real service); `LLM_MODE=live` talks to a real model.
""", """
## Подготовка

В режиме воспроизведения (replay) ответы модели берутся из кассет (cassettes), синтезированных по
документированным форматам (это не записи ответов настоящего сервиса); `LLM_MODE=live` подключает
настоящую модель.
"""),
    code(QQQ
import json

from openai import OpenAI
from helpers import connect, set_language

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key, http_client=conn.http_client())
model_name = conn.model_name
# the guide's temperature, left out where a platform locks it (conn.settings)
settings = conn.settings(temperature=0.3)
conn
QQQ, ru={{
    "# the guide's temperature, left out where a platform locks it (conn.settings)": (
        "# температура из руководства; где платформа её фиксирует, conn.settings её не передаёт"
    ),
}}),
    md("""
## 1. The tool

The guide's weather tool, as in the earlier lessons.
""", """
## 1. Инструмент

Инструмент погоды из руководства, как в прошлых уроках.
"""),
    code(QQQ
WEATHER = {{"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}}


def get_weather(city: str) -> dict:
    """Get weather information. Call this tool when the user needs to get weather information

    Args:
        city: City name
    """
    return {{"city": city, "weather": WEATHER.get(city, "unknown")}}
QQQ),
    code(QQQ
tools = [{{
    "type": "function",
    "function": {{
        "name": "get_weather",
        "description": "Get weather information. "
                       "Call this tool when the user needs to get weather information",
        "parameters": {{
            "type": "object",
            "required": ["city"],
            "properties": {{"city": {{"type": "string", "description": "City name"}}}},
        }},
    }},
}}]
tool_map = {{"get_weather": get_weather}}
QQQ),
    md("""
## 2. One request

TODO: what this request shows.
""", """
## 2. Один запрос

TODO: что показывает этот запрос.
"""),
    code(QQQ
messages = [{{"role": "user", "content":
             "What's the weather like in Beijing today? Let's check using the tool."}}]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, tool_choice="auto", **settings
)
choice = completion.choices[0]
print("finish_reason:", choice.finish_reason)
print("arguments:", choice.message.tool_calls[0].function.arguments)
QQQ),
    md("""
## Summary

- TODO: what the student learned, in two or three points.
""", """
## Итоги

- TODO: чему научился студент, в двух-трёх пунктах.
"""),
    md("""
<a id="reference"></a>
<details><summary>Reference</summary>

- TODO: where each fact of the lesson comes from (a document, a pull request, a version).

</details>
""", """
<a id="reference"></a>
<details><summary>Справка</summary>

- TODO: откуда взят каждый факт урока (документ, пулл-реквест, версия).

</details>
"""),
    md("""
## Exercises

**1.** Write `my_messages`: a conversation of one user message that asks for the weather in
Moscow.
""", """
## Упражнения

**1.** Напишите `my_messages`: диалог из одного сообщения пользователя с вопросом о погоде в
Москве.
"""),
    code(QQQ
my_messages = []  # your conversation here
QQQ, ru={{"# your conversation here": "# ваш диалог здесь"}}),
    code(QQQ
from helpers.exercises import {module}

{module}.check_messages(my_messages)
QQQ),
    code(QQQ
my_messages = [{{"role": "user", "content": "What's the weather in Moscow?"}}]
QQQ, hidden=True),
    code(QQQ
{module}.check_messages(my_messages)
QQQ, hidden=True),
    md("""
{ending_en}
""", """
{ending_ru}
"""),
])
'''

SCENARIOS = '''"""Lesson {number}: the answers to the lesson's requests (TODO: say which)."""

from helpers.replay.scenarios import Scenario
from helpers.replay.scenarios.common import ONE_CALL_TURNS, guide_scenario

NOTEBOOK = "{name}"

SCENARIOS: list[Scenario] = [
    # Step 2: the guide's weather request, answered with one call for Beijing.
    guide_scenario("weather", ONE_CALL_TURNS),
]
'''

EXERCISES = '''"""Self-checks for lesson {number}: TODO say what the exercises practise."""

from __future__ import annotations

from typing import Any

from helpers.exercises._verdict import NotYet, exercise


@exercise
def check_messages(messages: Any) -> None:
    """Exercise 1: a conversation of one user message asking for the weather in Moscow."""
    if not isinstance(messages, list) or len(messages) != 1:
        raise NotYet(
            "my_messages should be a list with exactly one message.",
            "my_messages должен быть списком ровно из одного сообщения.",
        )
    message = messages[0]
    if not isinstance(message, dict) or message.get("role") != "user":
        raise NotYet(
            'the message is a dict with "role": "user".',
            'сообщение — словарь с "role": "user".',
        )
    if "moscow" not in str(message.get("content", "")).lower():
        raise NotYet(
            "ask about Moscow in the message's content.",
            "спросите в content сообщения о Москве (Moscow).",
        )
'''

TESTS = '''"""Self-checks of lesson {number}: the reference passes, mistakes get a hint."""

from __future__ import annotations

import pytest
from exercise_answers import solution
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers.exercises import {module}


def test_the_reference_solution_passes(capsys):
    reference = solution("{name}", "my_messages")  # read from the lesson's hidden cells
    assert verdict_of(capsys, {module}.check_messages, reference).strip() == CORRECT


@pytest.mark.parametrize(
    "wrong",
    [
        [],  # the committed starter
        [{{"role": "assistant", "content": "Moscow"}}],
        [{{"role": "user", "content": "Weather in Paris?"}}],
        "What's the weather in Moscow?",
    ],
)
def test_mistakes_get_a_hint_in_both_languages(capsys, wrong):
    out = verdict_of(capsys, {module}.check_messages, wrong)
    assert out.startswith(NOT_YET), out
    assert any("а" <= ch <= "я" for ch in out.split("\\n", 1)[1]), "the Russian hint is missing"
'''


def titles(path: Path) -> dict[str, str]:
    """A lesson source's titles, {"en": ..., "ru": ...}, from its registry entry (`META`)."""
    try:
        return registry.load(path).title
    except (registry.RegistryError, SyntaxError, OSError) as exc:
        raise SystemExit(f"cannot read the title of {path.name}: {exc}") from None


def ending(template: dict[str, str], name: str, title: dict[str, str]) -> dict[str, str]:
    """A lesson's last line in both languages, linking lesson `name` titled `title`."""
    return {
        lang: template[lang].format(number=name[:2], title=title[lang], name=name)
        for lang in template
    }


def neighbours(name: str, root: Path) -> tuple[str | None, str | None, str | None]:
    """The lessons before and after `name` in the series, and the first lesson."""
    lessons = lesson_names(root / "notebooks" / "src")
    before = [lesson for lesson in lessons if lesson < name]
    after = [lesson for lesson in lessons if lesson > name]
    return (
        (before[-1] if before else None),
        (after[0] if after else None),
        (lessons[0] if lessons else None),
    )


def paths_for(name: str, root: Path = ROOT) -> list[Path]:
    """The four new files of lesson `name`: source, scenarios, self-checks, their tests."""
    module = exercises_module(name)
    return [
        root / "notebooks" / "src" / f"{name}.py",
        root / "helpers" / "replay" / "scenarios" / f"{scenario_module(name)}.py",
        root / "helpers" / "exercises" / f"{module}.py",
        root / "tests" / f"test_exercises_{module}.py",
    ]


def files_for(name: str, title: str, title_ru: str, root: Path = ROOT) -> dict[Path, str]:
    """The four new files of lesson `name`, path -> text."""
    number, module = name[:2], exercises_module(name)
    src = root / "notebooks" / "src"
    _, after, first = neighbours(name, root)
    if after:
        last = ending(NEXT, after, titles(src / f"{after}.py"))
    elif first:
        last = ending(END, first, titles(src / f"{first}.py"))
    else:
        last = ending(END, name, {"en": title, "ru": title_ru})
    fields = {
        "name": name,
        "number": number,
        "module": module,
        "title": title,
        "title_ru": title_ru,
        "ending_en": last["en"],
        "ending_ru": last["ru"],
    }
    texts = [
        SOURCE.format(**fields).replace("QQQ", "'''"),
        *(template.format(**fields) for template in (SCENARIOS, EXERCISES, TESTS)),
    ]
    return dict(zip(paths_for(name, root), texts, strict=True))


def create(name: str, title: str, title_ru: str, root: Path = ROOT) -> list[Path]:
    """Write the new lesson's files; refuse a bad name or any file that exists already."""
    if not LESSON_NAME.match(name):
        raise SystemExit(f"{name!r}: a lesson name is NN_lowercase_words, e.g. 10_tool_results")
    taken = sorted(root.glob(f"notebooks/src/{name[:2]}_*.py"))
    if taken:
        raise SystemExit(f"lesson number {name[:2]} is taken by {taken[0].relative_to(root)}")
    existing = [str(p.relative_to(root)) for p in paths_for(name, root) if p.exists()]
    if existing:
        raise SystemExit(f"refusing to overwrite {existing}")
    try:
        registry.lessons(root)  # every other entry must read before anything is written
    except registry.RegistryError as exc:
        raise SystemExit(f"{exc}; nothing was written") from None
    files = files_for(name, title, title_ru, root)
    before, after, _ = neighbours(name, root)
    patched = link_previous(before, after, name, {"en": title, "ru": title_ru}, root)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    generated = [p for p in registry.write(root) if p not in files and p not in patched]
    return [*files, *patched, *generated]


def link_previous(
    before: str | None, after: str | None, name: str, title: dict[str, str], root: Path
) -> list[Path]:
    """Point the previous lesson's last line (its Next link, or the end of the series) at the new
    lesson; return the patched source (none when there is no previous lesson)."""
    if before is None:
        return []
    path = root / "notebooks" / "src" / f"{before}.py"
    text = path.read_text(encoding="utf-8")
    link = ending(NEXT, name, title)
    for lang in ("en", "ru"):
        if after:
            old = re.compile(
                re.escape(NEXT[lang].split("{")[0])
                + r"[^\]]*\]\("
                + re.escape(after)
                + r"\.ipynb\)"
            )
        else:
            words = END_WORDS[lang]  # the line may say more ("for now"): any such line
            old = re.compile(rf'[^\n"]*{words}[^\n"]*?\]\(\d\d_\w+\.ipynb\)', re.IGNORECASE)
        text, found = old.subn(lambda _, new=link[lang]: new, text, count=1)
        if not found:
            raise SystemExit(
                f"{path.relative_to(root)}: no {lang} line to replace with {link[lang]!r} "
                f"(expected {'a Next link to ' + after if after else 'the end-of-series line'}); "
                "nothing was written"
            )
    path.write_text(text, encoding="utf-8")
    return [path]


def next_steps(name: str) -> str:
    """What is left after the files are written, as commands and edits, in order."""
    link = neighbours(name, ROOT)[0] or "(none)"
    return f"""
Left to do (docs/authoring.md, "Add a lesson"):
  1. Write the lesson: replace every TODO in notebooks/src/{name}.py (its META too: summary,
     minutes); what a cell sends to the model goes into helpers/replay/scenarios/n{name}.py
     (prompts shared with other lessons live in helpers/replay/scenarios/common.py).
  2. .venv/bin/python -m helpers.replay synthesize            # writes data/recordings/{name}.json
  3. .venv/bin/python scripts/nbbuild.py {name}              # builds and runs both editions
  4. .venv/bin/python scripts/registry.py --write   # after META changes: README, lesson 00's map,
     the teacher guides, the Next links; then rebuild the prose of the lessons it names:
     .venv/bin/python scripts/nbbuild.py --no-execute 00_start {link}
     By hand: a row in the live table and a column in the load table of docs/class_endpoint.md
     and docs/class_endpoint.ru.md.
  5. Six wrong answers per check: tests/test_exercises_table.py's WRONG needs at least six rows
     for each check_* of helpers/exercises/n{name[:2]}.py (row(n{name[:2]}.check_messages, <wrong
     answer>, "<English hint words>", "<Russian hint words>", "{name[:2]}-1 <label>")); its
     test_every_check_has_six_wrong_answers names every check that has fewer.
  6. .venv/bin/pytest tests/test_registry.py tests/test_notebooks.py tests/test_lesson_drift.py \\
       tests/test_exercises_n{name[:2]}.py tests/test_exercises_table.py \\
       tests/test_lesson_style.py notebooks/en/{name}.ipynb notebooks/ru/{name}.ipynb
     .venv/bin/pytest tests/test_live_mode.py -k {name}   # the strict kimi-k2.6 stand-in too
     tests/test_notebooks.py names anything still missing (scenario module, cassette, table rows);
     The folded reference block after the Summary (tests/test_lesson_style.py) is a TODO too.
"""


def main(argv: list[str] | None = None) -> int:
    """Command line: `new_lesson.py NN_name "English title" "Русское название"`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="NN_lowercase_words, e.g. 10_tool_results")
    parser.add_argument("title", help="the English title (the notebook's H1)")
    parser.add_argument("title_ru", help="the Russian title")
    args = parser.parse_args(argv)
    for path in create(args.name, args.title, args.title_ru):
        print(f"wrote {path.relative_to(ROOT)}")
    print(next_steps(args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
