"""Every output of a notebook is in its edition's language: no English prose in the Russian edition,
no Cyrillic in the English one (the rules and the narrow allow-list: tests/output_language.py).

The checks first run on a small fixture: clean outputs that carry data on purpose must pass, and
each planted defect must be caught, in both directions, which proves the check can fail.
"""

from __future__ import annotations

import html
import io
import re
import tokenize

import nbformat
import pytest
from output_language import (
    ALLOWED,
    CYRILLIC,
    english_label,
    english_prose,
    english_sentence,
    language_problems,
    markdown_problems,
    markdown_shape,
)
from scripts_support import lesson_cells

from helpers.i18n import LANGUAGES as LANGS
from helpers.lessons import lesson_names
from helpers.paths import NOTEBOOKS_DIR

CHECKED_MIMES = ("text/plain", "text/markdown", "text/html")
TAG = nbformat.v4  # short name for building fixture outputs
EDITIONS = sorted(
    (lang, path.stem)
    for lang in LANGS
    for path in (NOTEBOOKS_DIR / lang).glob("[0-9][0-9]_*.ipynb")
)


def output_texts(nb) -> list[tuple[str, str]]:
    """(cell id, text) for what a student reads in each output: streams, results, errors.

    A traceback is skipped: its last line repeats `ename: evalue` (checked), the rest is code."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if "text" in out:
                found.append((cell.get("id"), "".join(out["text"])))
            if out.get("output_type") == "error":
                found.append((cell.get("id"), f"{out['ename']}: {out['evalue']}"))
            for mime in CHECKED_MIMES:
                value = out.get("data", {}).get(mime)
                if value is not None:
                    text = value if isinstance(value, str) else "".join(value)
                    if mime == "text/html":
                        text = _html_text(text)
                    if mime == "text/markdown":  # a fenced code block shows code on purpose
                        text = re.sub(r"```.*?```", "", text, flags=re.S)
                    found.append((cell.get("id"), text))
    return found


def _html_text(markup: str) -> str:
    """The text of an HTML output, one line per element."""
    return html.unescape(re.sub(r"<[^>]*>", "\n", markup))


def notebook_problems(nb, lesson: str, lang: str) -> list[str]:
    """Every output line of a notebook in the wrong language, with its cell id."""
    return [
        f"{lang}/{lesson} cell {cell_id}: {problem}"
        for cell_id, text in output_texts(nb)
        for problem in language_problems(lesson, lang, text)
    ]


@pytest.mark.parametrize(("lang", "lesson"), EDITIONS, ids=[f"{g}/{n}" for g, n in EDITIONS])
def test_outputs_speak_the_editions_language(lang, lesson):
    nb = nbformat.read(NOTEBOOKS_DIR / lang / f"{lesson}.ipynb", as_version=4)
    problems = notebook_problems(nb, lesson, lang)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("lesson", "snippet", "reason"), ALLOWED, ids=[f"{a[0]}:{a[1][:20]}" for a in ALLOWED]
)
def test_every_allowed_snippet_is_needed(lesson, snippet, reason):
    """An allow-list entry names a lesson, a reason, and data that its Russian outputs really show."""
    assert len(snippet) >= 6 and reason.strip(), (lesson, snippet)
    nb = nbformat.read(NOTEBOOKS_DIR / "ru" / f"{lesson}.ipynb", as_version=4)
    assert any(snippet in text for _, text in output_texts(nb)), (
        f"stale allow-list entry: {snippet!r}"
    )


# ---------------------------------------------------------------------------------------------
# The check itself, on fixture notebooks


def _nb(*outputs) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for i, out in enumerate(outputs):
        cell = nbformat.v4.new_code_cell("x")
        cell["id"] = f"c{i}"
        cell.outputs = [out]
        nb.cells.append(cell)
    return nb


def _stdout(text: str):
    return TAG.new_output("stream", name="stdout", text=text)


CLEAN_RU = [
    _stdout("Верно!\n"),
    _stdout(
        'Пока нет: в `message` нет ключа "tool_calls": используйте `message.get("tool_calls")`.\n'
    ),
    _stdout('{"error": "Arguments for get_weather are not valid JSON."}\n'),  # JSON: data
    _stdout("{'town': 'Beijing'} [\"arguments is missing the required 'city'\"]\n"),  # a repr
    _stdout(
        "[0] user\n    What's the weather like in Beijing today? Let's check using the tool.\n"
        '[1] assistant\n    (content: \'\')\n    -> get_weather({"city": "Beijing"}) [get_weather:0]\n'
    ),
    _stdout(
        '#  id             name         arguments\n0  get_weather:0  get_weather  {"city": "Beijing"}\n'
    ),
    _stdout("finish_reason: stop | tool_calls: []\n"),
    _stdout("It's sunny in Beijing today.\n"),  # allowed for 02_sync_loop: a model answer
    TAG.new_output(
        "error",
        ename="BadRequestError",
        evalue="Error code: 400 - Invalid parameter: "
        "messages with role 'tool' must be a response to a preceeding message",
        traceback=[],
    ),
    TAG.new_output("error", ename="IndexError", evalue="list index out of range", traceback=[]),
    TAG.new_output(
        "display_data", {"text/markdown": "режим **replay**: модель `moonshotai/Kimi-K2-Instruct`"}
    ),
    TAG.new_output(
        "display_data", {"text/markdown": "```python\nif x is not in the list:\n    pass\n```"}
    ),
]
CLEAN_EN = [
    _stdout('Not yet: message is a dict here: use message["tool_calls"].\n'),
    _stdout("1 message in the history: the tool never ran\n"),
    TAG.new_output("display_data", {"text/html": "<b>both parsers agree</b>"}),
]

# name -> (edition, output, a phrase the report must contain)
PLANTED = {
    "English sentence in ru stdout": (
        "ru",
        _stdout("1 message in the history: the tool never ran\n"),
        "English words",
    ),
    "English hint after a Russian word": (
        "ru",
        _stdout("Пока нет: the usage chunk has no choices\n"),
        "English words",
    ),
    "English table header in ru": (
        "ru",
        _stdout(
            "raw text written by  parse_kimi  parse_hermes\nKimi-K2              1           0\n"
        ),
        "no Russian one",
    ),
    "English label in ru": ("ru", _stdout("Kimi-K2  1 call(s)  0 call(s)\n"), "no Russian one"),
    "English in a ru exception": (
        "ru",
        TAG.new_output(
            "error",
            ename="ToolLoopLimitError",
            evalue="The model was still calling tools after 2 rounds",
            traceback=[],
        ),
        "English words",
    ),
    "English in ru markdown": (
        "ru",
        TAG.new_output(
            "display_data",
            {
                "text/markdown": "**replay** mode: answers replayed from recordings by a local server"
            },
        ),
        "English words",
    ),
    "English in ru html": (
        "ru",
        TAG.new_output(
            "display_data", {"text/html": "<div><b>the guide loses call(s) 'x:1'</b></div>"}
        ),
        "English words",
    ),
    "model answer outside its lesson": (
        "ru",
        _stdout("Beijing is sunny, Shanghai has light rain, and Moscow has snow.\n"),
        "English words",
    ),
    "one English sentence in a Russian line": (
        "ru",
        _stdout("Пока нет: верните список. Checking both cities now.\n"),
        "English sentence",
    ),
    "one-word English label in ru": (
        "ru",
        _stdout("'closed'            'Beijing first.' ['functions.get_weather:0'] []\n"),
        "English label",
    ),
    "English label with a colon in ru": (
        "ru",
        _stdout("skipped: нужен профиль vllm_thinking\n"),
        "English label",
    ),
    "Cyrillic in en stdout": ("en", _stdout("Пока нет: верните список\n"), "Cyrillic"),
    "Cyrillic in en exception": (
        "en",
        TAG.new_output("error", ename="ValueError", evalue="неизвестный язык", traceback=[]),
        "Cyrillic",
    ),
    "Cyrillic in en html": (
        "en",
        TAG.new_output("display_data", {"text/html": "<i>нет вызовов</i>"}),
        "Cyrillic",
    ),
}


def test_clean_fixture_outputs_pass():
    assert notebook_problems(_nb(*CLEAN_RU), "02_sync_loop", "ru") == []
    assert notebook_problems(_nb(*CLEAN_EN), "02_sync_loop", "en") == []


@pytest.mark.parametrize("defect", PLANTED)
def test_planted_defects_are_caught(defect):
    lang, output, phrase = PLANTED[defect]
    nb = _nb(*(CLEAN_RU if lang == "ru" else CLEAN_EN), output)
    problems = notebook_problems(nb, "04_manual_parsing", lang)
    assert problems and all(f"cell c{len(nb.cells) - 1}:" in p for p in problems), problems
    assert any(phrase in p for p in problems), problems


@pytest.mark.parametrize(
    "line",
    [
        "Пока нет: для случая «ответ без вызовов» ожидается False.",
        'вызовов: 2 [\'functions.get_weather:0 get_weather({"city": "Beijing"})\']',
        "Connection(mode='replay', provider='kimi', engine='moonshot')",
        "IndexError: list index out of range",
        "marker  <|tool_calls_section_begin|>",
        "Qwen/Qwen2.5-7B-Instruct -> Ready.",
    ],
)
def test_data_is_not_prose(line):
    assert english_prose(line) is None


@pytest.mark.parametrize(
    "line",
    [
        "8 messages in the history",
        "the guide raises IndexError: list index out of range",
        "no <|tool_calls_section_end|> at the end of the text (output cut off, e.g. by max_tokens?)",
        "id      token     special",
    ],
)
def test_prose_and_labels_are_caught(line):
    assert english_prose(line), line


@pytest.mark.parametrize(
    "line",
    [
        "Пока нет: для варианта «закрыт» ожидалось 'Beijing first.'",
        '"description": "Get weather information. Call this tool when the user needs it"',
        "reasoning: 'Three days for Paris, hour by hour.'",
        "moonshot         tool_calls     ''       get_weather:0",
        "| API Moonshot, SGLang, llama.cpp | `reasoning_content` |",
    ],
)
def test_data_names_and_json_keys_are_not_labels_or_sentences(line):
    assert english_sentence(line) is None and english_label(line) is None, line


# ---------------------------------------------------------------------------------------------
# The lessons' markdown: the same shape in both editions, each in its language

MARKDOWN_CELLS = [
    (name, index, cell)
    for name in lesson_names()
    for index, cell in enumerate(lesson_cells(name))
    if cell.kind == "markdown"
]


def test_markdown_cells_have_as_many_paragraphs_links_and_code_spans_in_both_editions():
    differ = [
        f"{name} cell {index}: en {markdown_shape(cell.en)}, ru {markdown_shape(cell.ru)} "
        "(paragraphs, links, code spans)"
        for name, index, cell in MARKDOWN_CELLS
        if markdown_shape(cell.en) != markdown_shape(cell.ru)
    ]
    assert not differ, "\n".join(differ)


def test_markdown_prose_speaks_the_editions_language():
    problems = [
        f"{name} cell {index}: {problem}"
        for name, index, cell in MARKDOWN_CELLS
        for lang in LANGS
        for problem in markdown_problems(name, lang, getattr(cell, lang))
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("en", "ru", "shape"),
    [
        ("One. Two.\n\nThree.", "Раз. Два.", "paragraphs"),
        ("See [lesson 03](03_streaming.ipynb).", "См. урок 03.", "links"),
        ("Use `json.loads` and `dict`.", "Используйте `json.loads` и dict.", "code spans"),
    ],
)
def test_a_markdown_cell_that_differs_between_the_editions_is_caught(en, ru, shape):
    index = ("paragraphs", "links", "code spans").index(shape)
    assert markdown_shape(en)[index] != markdown_shape(ru)[index]


@pytest.mark.parametrize(
    "prose",
    [
        "Модель отвечает сразу. The loop stops here.",
        "- первый пункт;\n- the second item is still English",
        "Вот так. Checking both cities now.",
    ],
)
def test_english_inside_russian_prose_is_caught(prose):
    assert markdown_problems("04_manual_parsing", "ru", prose), prose


# ---------------------------------------------------------------------------------------------
# Links to a lesson name it by its title; one Russian term for thinking models; no known calques

LESSON_LINK = re.compile(r"\[(?:(?:Next|Дальше): )?(\d\d) ([^\]]+)\]\((\d\d_\w+)\.ipynb\)")


def lesson_titles(lang: str) -> dict[str, str]:
    """Each lesson's H1 in one edition."""
    titles = {}
    for name in lesson_names():
        first = lesson_cells(name)[0]
        heading = getattr(first, lang).strip().splitlines()[0]
        titles[name] = heading.removeprefix("# ")
    return titles


@pytest.mark.parametrize("lang", LANGS)
def test_a_link_to_a_lesson_is_titled_as_the_lesson(lang):
    titles = lesson_titles(lang)
    wrong = [
        f"{name}: [{number} {text}] links {target}, titled {titles.get(target)!r}"
        for name, _, cell in MARKDOWN_CELLS
        for number, text, target in LESSON_LINK.findall(getattr(cell, lang))
        if target in titles and (number != target[:2] or text != titles[target])
    ]
    assert not wrong, "\n".join(wrong)


def test_the_link_title_check_can_fail():
    assert LESSON_LINK.findall("[Дальше: 07 Qwen сегодня](07_qwen_today.ipynb)") == [
        ("07", "Qwen сегодня", "07_qwen_today")
    ]
    assert lesson_titles("ru")["07_qwen_today"] != "Qwen сегодня"


# Russian wordings a student found unnatural (word-by-word renderings of the English), and the
# thinking-model synonyms: the series says «модель с рассуждением» (thinking model) throughout.
CALQUES = (
    "думающ",
    "рассуждающ",
    "рассчитывает vLLM",
    "запускает Kimi-K2",
    'говорит `"stop"`',
    "сверх идеального",
    "не только учебный случай",
    "проводит один пример",
    "заставляют модель писать",
    "второй — первый",
    "только другими словами",
    "разрешает его отказом",
    "число считает вызовы",
    "считает вызовы по всему",
    "следует за своим вызовом",
    "Аргументы-текст",
    "останавливает применение",
    "Правила по одному значению",
    "Id модели берите",
    "несёт дельту",
    "роняет `chunk",
    "узнаёт режим",
    "кладёт дату",
    "проходит руководство",
)


def test_the_russian_prose_has_no_known_calques():
    found = [
        f"{name} cell {index}: {calque!r}"
        for name, index, cell in MARKDOWN_CELLS
        for calque in CALQUES
        if calque.lower() in cell.ru.lower()
    ]
    assert not found, "\n".join(found)


# --- comments in the Russian edition's code ------------------------------------------------------


def english_comments(source: str) -> list[str]:
    """The comments of a code cell that are English words only (at least two, no Cyrillic): a
    comment the `ru=` dict of the lesson's source forgot to translate."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [
        token.string
        for token in tokens
        if token.type == tokenize.COMMENT
        and not CYRILLIC.search(token.string)
        and len(re.findall(r"[A-Za-z]{2,}", token.string)) >= 2
    ]


@pytest.mark.parametrize("lesson", lesson_names())
def test_the_russian_editions_code_comments_are_russian(lesson):
    nb = nbformat.read(NOTEBOOKS_DIR / "ru" / f"{lesson}.ipynb", as_version=4)
    found = [
        c for cell in nb.cells if cell.cell_type == "code" for c in english_comments(cell.source)
    ]
    assert not found, f"ru/{lesson}: comments left in English (translate them in `ru=`): {found}"


def test_an_english_comment_in_russian_code_is_caught():
    source = 'chunks = watch(stream)  # the view grows\nlabel = "# not a comment"  # окно растёт\n'
    assert english_comments(source) == ["# the view grows"]
