"""The lesson registry (scripts/registry.py): each lesson's facts live once, in its source's META,
and every table that shows them is generated from it and kept current."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import scripts_support

from helpers.lessons import CHECK_CALL, exercises_module, lesson_names
from helpers.paths import REPO_ROOT

registry = scripts_support.script("registry")
class_path = scripts_support.script("class_path")
LESSONS = registry.lessons()


def test_every_generated_table_is_current():
    stale = [str(path.relative_to(REPO_ROOT)) for path in registry.stale()]
    assert stale == [], f"{stale}: {registry.STALE_HINT}"


def test_every_file_with_generated_parts_is_generated():
    generated = {path.relative_to(REPO_ROOT).as_posix() for path in registry.outputs()}
    assert set(registry.DOCS) <= generated
    assert {f"notebooks/src/{name}.py" for name in lesson_names()} <= generated


def test_the_api_the_other_scripts_read():
    assert [x.name for x in LESSONS] == list(lesson_names())
    loop = next(x for x in LESSONS if x.name == "02_sync_loop")
    assert loop.number == 2
    assert loop.title == {"en": "The tool-call loop", "ru": "Цикл вызова инструментов"}
    assert set(loop.summary) == {"en", "ru"}
    assert loop.minutes == loop.minutes_reading + loop.minutes_exercises
    assert str(registry.Minutes(20, 25)) == "20-25"
    assert loop.in_class_path is True
    assert loop.engines == ("kimi",) and "replay" in loop.modes
    assert loop.exercises[0] == "check_needs_tools"
    for lesson in LESSONS:
        for lang in ("en", "ru"):
            assert lesson.notebook(lang) == REPO_ROOT / "notebooks" / lang / f"{lesson.name}.ipynb"
            assert lesson.notebook(lang).exists(), lesson.notebook(lang)
    with pytest.raises(ValueError, match="lang must be one of"):
        loop.notebook("de")


def test_the_in_class_lessons_are_the_path_of_class_path():
    in_class = [x.name for x in LESSONS if x.in_class_path]
    path = list(dict.fromkeys(block.lesson for block in class_path.PATH))
    assert in_class == path, (
        f"META says {in_class} are in the 90-minute path, scripts/class_path.py's PATH has "
        f"{path}: change `in_class_path` in the lessons' META or the PATH"
    )


def lesson_checks(name: str) -> list[str]:
    """The self-checks of the lesson's own module that its cells call, in order."""
    module = REPO_ROOT / "helpers" / "exercises" / f"{exercises_module(name)}.py"
    defined = set(re.findall(r"^def (check_\w+)\(", module.read_text(encoding="utf-8"), re.M))
    called = [c for cell in scripts_support.lesson_code(name) for c in CHECK_CALL.findall(cell)]
    return [c for c in dict.fromkeys(called) if c in defined]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda x: x.name)
def test_exercises_and_engines_are_what_the_lesson_does(lesson):
    assert list(lesson.exercises) == lesson_checks(lesson.name), (
        f"{lesson.source.name}: META['exercises'] should list the self-checks its cells call, "
        f"in order: {lesson_checks(lesson.name)}"
    )
    code = "\n".join(scripts_support.lesson_code(lesson.name))
    engines = sorted(set(re.findall(r'\bconnect\(\s*"(\w+)"', code)))
    assert sorted(lesson.engines) == engines, (
        f"{lesson.source.name}: META['engines'] should be what its cells connect() to: {engines}"
    )


def meta_change(source: Path, old: str, new: str) -> None:
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, (
        f"{source.name} no longer holds {old!r} once: point this test at what it holds now"
    )
    source.write_text(text.replace(old, new), encoding="utf-8")


def current_copy(tmp_path: Path) -> Path:
    """A copy of the series with every generated part current, so a test that plants a change
    sees only its own (a stale table in the tree fails `test_every_generated_table_is_current`
    alone)."""
    root = scripts_support.copy_of_the_series(tmp_path)
    registry.write(root)
    return root


def literal(value: str) -> str:
    """How a META string is written in a lesson source: in double quotes, as it reads."""
    return json.dumps(value, ensure_ascii=False)


def retitle(source: Path, lesson, title: dict[str, str]) -> None:
    for lang in ("en", "ru"):
        meta_change(
            source,
            f"{literal(lang)}: {literal(lesson.title[lang])}",
            f'"{lang}": {literal(title[lang])}',
        )


def test_a_title_or_minutes_changed_in_one_place_changes_every_table(tmp_path):
    root = current_copy(tmp_path)
    series = registry.lessons(root)
    lesson = next(x for x in series if x.name == "02_sync_loop")
    source = lesson.source
    title = {"en": "The loop by hand", "ru": "Цикл своими руками"}
    retitle(source, lesson, title)
    old_reading, more = lesson.minutes_reading, registry.Minutes(6, 7)
    meta_change(
        source,
        f'"minutes_reading": ({old_reading.low}, {old_reading.high})',
        f'"minutes_reading": ({old_reading.low + more.low}, {old_reading.high + more.high})',
    )
    reading, minutes = old_reading + more, lesson.minutes + more
    core = registry._span([x.minutes for x in series if x.number <= registry.CORE_LAST]) + more
    before = {path: path.read_text(encoding="utf-8") for path in registry.outputs(root)}
    changed = {path.relative_to(root).as_posix() for path in registry.write(root)}
    assert changed == {
        "README.md",
        "docs/teacher_guide.md",
        "docs/teacher_guide.ru.md",
        "docs/class_endpoint.md",
        "docs/class_endpoint.ru.md",
        "notebooks/src/00_start.py",  # its map
        "notebooks/src/01_tools_schema.py",  # its Next link
        "notebooks/src/02_sync_loop.py",  # its H1s
    }
    assert registry.stale(root) == []
    text = {p: (root / p).read_text(encoding="utf-8") for p in changed}
    for old in (lesson.label("en"), lesson.label("ru"), f"[{lesson.title['en']}]"):
        assert not [p for p, t in text.items() if old in t], old
    readme = text["README.md"]
    assert (
        "| 2 | [The loop by hand](notebooks/en/02_sync_loop.ipynb) | [Цикл своими руками]" in readme
    )
    assert f"| {minutes} |" in readme.split("| 2 | [The loop by hand]", 1)[1].split("\n", 1)[0]
    assert f"({core} minutes)" in readme  # the hours line of lessons 00-05
    row = f"{minutes} ({reading} + {lesson.minutes_exercises})"
    for guide, lang in (("docs/teacher_guide.md", "en"), ("docs/teacher_guide.ru.md", "ru")):
        assert f"| 02 {title[lang]} | {row} |" in text[guide]
    for doc, lang in (("docs/class_endpoint.md", "en"), ("docs/class_endpoint.ru.md", "ru")):
        assert f"\n| 02 {title[lang]} | " in text[doc]
    start = text["notebooks/src/00_start.py"]
    assert "| [02 The loop by hand](02_sync_loop.ipynb) |" in start
    assert "| [02 Цикл своими руками](02_sync_loop.ipynb) |" in start
    nbbuild = scripts_support.nbbuild()
    previous = nbbuild.load_lesson(root / "notebooks/src/01_tools_schema.py").cells[-1]
    assert (previous.en.strip(), previous.ru.strip()) == (
        "[Next: 02 The loop by hand](02_sync_loop.ipynb)",
        "[Дальше: 02 Цикл своими руками](02_sync_loop.ipynb)",
    )
    first = nbbuild.load_lesson(source).cells[0]
    assert first.en.strip().startswith("# The loop by hand\n")
    assert first.ru.strip().startswith("# Цикл своими руками\n")
    # in the lesson sources only the lines that showed the old title (or minutes) changed
    shown = "|".join(re.escape(lesson.title[lang]) for lang in ("en", "ru")) + "|minutes_reading"
    for path, old_text in before.items():
        if path.suffix == ".py":
            new_lines = set(path.read_text(encoding="utf-8").splitlines())
            gone = [line for line in old_text.splitlines() if line not in new_lines]
            assert all(re.search(shown, g) for g in gone), gone


RETITLES = {
    "shorter": {"en": "Loop", "ru": "Цикл"},
    "longer": {
        "en": "The tool-call loop, written out by hand step by step",
        "ru": "Цикл вызова инструментов, написанный своими руками шаг за шагом",
    },
}


@pytest.mark.parametrize("how", RETITLES)
def test_a_title_change_rewrites_only_its_rows_of_the_class_endpoint_tables(tmp_path, how):
    root = current_copy(tmp_path)
    lesson = next(x for x in registry.lessons(root) if x.name == "02_sync_loop")
    docs = ("docs/class_endpoint.md", "docs/class_endpoint.ru.md")
    before = {doc: (root / doc).read_text(encoding="utf-8") for doc in docs}
    retitle(lesson.source, lesson, RETITLES[how])
    registry.write(root)
    for doc, lang in zip(docs, ("en", "ru"), strict=True):
        old = before[doc].splitlines(keepends=True)
        new = (root / doc).read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(new) == len(old), f"{doc}: {len(old)} lines became {len(new)}"
        changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
        assert changed, f"{doc}: the row of {lesson.name} was not retitled"
        for a, b in changed:  # only the title cell of 02's rows, the rest byte for byte
            assert a.startswith(f"| {lesson.label(lang)} |"), (doc, a)
            assert b.startswith(f"| 02 {RETITLES[how][lang]} |"), (doc, b)
            assert a.split(" |", 1)[1] == b.split(" |", 1)[1], (doc, a, b)


def test_a_next_link_to_the_wrong_lesson_is_pointed_at_the_next_one(tmp_path):
    root = current_copy(tmp_path)
    source = root / "notebooks/src/01_tools_schema.py"
    meta_change(
        source,
        "[Next: 02 The tool-call loop](02_sync_loop.ipynb)",
        "[Next: 03 Streaming](03_streaming.ipynb)",
    )
    assert registry.stale(root) == [source]
    registry.write(root)
    assert "[Next: 02 The tool-call loop](02_sync_loop.ipynb)" in source.read_text("utf-8")
    assert registry.stale(root) == []


def test_a_lesson_missing_from_the_guide_or_a_stale_table_says_what_to_do(tmp_path, capsys):
    root = current_copy(tmp_path)
    guide = root / "docs/teacher_guide.ru.md"
    text = guide.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| 11 "))
    guide.write_text(text.replace(row + "\n", ""), encoding="utf-8")
    readme = root / "README.md"
    shown = f"| {registry.lessons(root)[-1].minutes} |"  # the last lesson's minutes, in README
    assert shown in readme.read_text("utf-8"), shown
    readme.write_text(readme.read_text("utf-8").replace(shown, "| 1 |", 1), encoding="utf-8")
    assert set(registry.stale(root)) == {guide, readme}
    assert registry.main(["--check"], root=root) == 1
    out = capsys.readouterr().out
    assert "docs/teacher_guide.ru.md: generated from the lessons' META" in out
    assert "run `python scripts/registry.py --write`" in out
    registry.write(root)
    assert row in guide.read_text(encoding="utf-8")
    guide.write_text(text.replace("<!-- /registry:time-table -->", ""), encoding="utf-8")
    with pytest.raises(registry.RegistryError, match="teacher_guide.ru.md: expected one pair of"):
        registry.outputs(root)


BAD_META = {
    "a missing field": ('    "timed": False,\n', "", "META's keys must be"),
    "a name instead of a literal": ('"timed": False', '"timed": TIMED', "must be a literal dict"),
    "reversed minutes": ("(44, 50)", "(50, 44)", "is reversed"),
    "one language only": ('"ru": "Измеряем вызов инструментов"', '"de": "x"', "'en' and 'ru'"),
    "a table's bar in a summary": ("intervals", "intervals | more", "holds '|'"),
    "an unknown mode": ('"modes": ("replay",', '"modes": ("offline",', "takes values of"),
}


# A lesson source of a known state (the fields of lesson 12's), whatever the series holds today.
GOOD_SOURCE = """from nbbuild import Lesson, md

META = {
    "title": {"en": "Measuring tool calling", "ru": "Измеряем вызов инструментов"},
    "summary": {
        "en": "a pre-flight of an endpoint, tool-call F1, BFCL's AST check, intervals",
        "ru": "предполётная проверка адреса API, F1 вызовов, проверка BFCL по AST, интервалы",
    },
    "minutes_reading": (44, 50),
    "minutes_exercises": (15, 20),
    "timed": False,
    "in_class_path": False,
    "engines": ("kimi",),
    "modes": ("replay", "live", "record"),
    "exercises": ("check_f1",),
}

LESSON = Lesson("12_measuring", [md("# Measuring tool calling", "# Измеряем вызов инструментов")])
"""


@pytest.mark.parametrize("case", BAD_META)
def test_a_bad_meta_is_refused_naming_the_file_and_field(tmp_path, case):
    old, new, message = BAD_META[case]
    source = tmp_path / "12_measuring.py"
    source.write_text(GOOD_SOURCE, encoding="utf-8")
    assert registry.load(source).minutes_reading == (44, 50)  # the known state reads
    meta_change(source, old, new)
    with pytest.raises(registry.RegistryError, match=re.escape(message)) as error:
        registry.load(source)
    assert str(error.value).startswith("12_measuring.py: ")


def test_hours_round_outwards_to_the_half_hour_in_both_languages():
    assert registry.hours(registry.Minutes(245, 325), "en") == "4-5.5 hours"
    assert registry.hours(registry.Minutes(245, 325), "ru") == "4-5,5 часа"
    assert registry.hours(registry.Minutes(61, 119), "ru") == "1-2 часа"
    assert registry.hours(registry.Minutes(270, 300), "ru") == "4.5-5 часов".replace(".", ",")
    assert registry.hours(registry.Minutes(0, 60), "ru") == "0-1 час"


def test_the_kit_index_lists_every_lesson_from_the_registry():
    build_kit = scripts_support.script("build_kit")
    names = [x.name for x in LESSONS]
    for lang in ("en", "ru"):
        index = build_kit.lesson_index(lang, names).splitlines()
        assert len(index) == len(LESSONS)
        for line, lesson in zip(index, LESSONS, strict=True):
            assert f"[{lesson.label(lang)}](notebooks/{lang}/{lesson.name}.ipynb)" in line
            assert f"{lesson.minutes}" in line and lesson.summary[lang] in line
