"""`scripts/new_lesson.py` writes a lesson whose pieces fit together, and never overwrites one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import scripts_support
from lesson_checks import lesson_problems
from sentence_parity import lesson_differences
from test_lesson_style import style_problems, styled

from helpers.paths import REPO_ROOT


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for folder in ("notebooks/src", "helpers/replay/scenarios", "helpers/exercises", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "data" / "recordings").mkdir(parents=True)
    return tmp_path


def test_a_new_lesson_builds_and_lacks_only_its_cassette(root):
    new_lesson, nbbuild = scripts_support.script("new_lesson"), scripts_support.script("nbbuild")
    written = new_lesson.create("09_tool_choice", "Choosing a tool", "Выбор инструмента", root)
    assert {p.relative_to(root).as_posix() for p in written} == {
        "notebooks/src/09_tool_choice.py",
        "helpers/replay/scenarios/n09_tool_choice.py",
        "helpers/exercises/n09.py",
        "tests/test_exercises_n09.py",
    }
    problems = lesson_problems(
        root / "notebooks/src", root / "helpers/replay/scenarios", root / "data/recordings"
    )
    assert problems == [
        "lesson 09_tool_choice has no cassette data/recordings/09_tool_choice.json: "
        "run `python -m helpers.replay synthesize`"
    ]
    lesson = nbbuild.load_lesson(root / "notebooks/src/09_tool_choice.py")
    en, ru = nbbuild.to_notebook(lesson, "en"), nbbuild.to_notebook(lesson, "ru")
    assert en.cells[0].source.startswith("# Choosing a tool")
    assert ru.cells[0].source.startswith("# Выбор инструмента")
    assert 'set_language("ru")' in "".join(c.source for c in ru.cells)
    for path in written:  # every generated Python file compiles
        compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_it_refuses_a_bad_name_a_taken_number_and_overwriting(root):
    new_lesson = scripts_support.script("new_lesson")
    with pytest.raises(SystemExit, match="NN_lowercase_words"):
        new_lesson.create("9_Tool", "T", "Т", root)
    (root / "notebooks/src/09_other.py").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match="is taken by notebooks/src/09_other.py"):
        new_lesson.create("09_tool_choice", "T", "Т", root)
    (root / "helpers/exercises/n10.py").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="refusing to overwrite"):
        new_lesson.create("10_more", "T", "Т", root)
    assert (root / "helpers/exercises/n10.py").read_text(encoding="utf-8") == "# mine\n"
    assert not (root / "notebooks/src/10_more.py").exists()


def meta(title: tuple[str, str]) -> str:
    """A lesson's registry entry (scripts/registry.py) with these titles."""
    return (
        f"META = {{'title': {{'en': {title[0]!r}, 'ru': {title[1]!r}}},\n"
        "    'summary': {'en': 'a lesson', 'ru': 'урок'}, 'minutes_reading': (10, 20),\n"
        "    'minutes_exercises': (5, 5), 'timed': False, 'in_class_path': False,\n"
        "    'engines': ('kimi',), 'modes': ('replay',), 'exercises': ()}\n"
    )


def write_lesson(src: Path, name: str, title: tuple[str, str], last: tuple[str, str]) -> str:
    """Write a minimal lesson source (its registry entry, its title and its last line, in both
    languages) into `src`; return its text."""
    text = (
        f"from nbbuild import Lesson, md\n\n{meta(title)}\n"
        f'LESSON = Lesson("{name}", [\n'
        f'    md("# {title[0]}", "# {title[1]}"),\n'
        f'    md("""{last[0]}""", """{last[1]}"""),\n])\n'
    )
    (src / f"{name}.py").write_text(text, encoding="utf-8")
    return text


def last_lines(path: Path) -> tuple[str, str]:
    """The en and ru text of a lesson source's last cell."""
    nbbuild = scripts_support.script("nbbuild")
    cell = nbbuild.load_lesson(path).cells[-1]
    return cell.en, cell.ru


def test_a_lesson_added_at_the_end_takes_over_the_end_of_the_series(root):
    new_lesson = scripts_support.script("new_lesson")
    src = root / "notebooks/src"
    write_lesson(
        src,
        "00_start",
        ("Start here", "С чего начать"),
        (  # the closing line may say more than the template's
            "That is the end of the series for now. Back to the start: "
            "[00 Start here](00_start.ipynb)",
            "Пока это конец серии. Вернуться к началу: [00 С чего начать](00_start.ipynb)",
        ),
    )
    written = new_lesson.create("01_more", "More", "Ещё", root)
    assert src / "00_start.py" in written
    assert last_lines(src / "00_start.py") == (
        "[Next: 01 More](01_more.ipynb)",
        "[Дальше: 01 Ещё](01_more.ipynb)",
    )
    assert last_lines(src / "01_more.py") == (
        "That is the end of the series. Back to the start: [00 Start here](00_start.ipynb)",
        "Это конец серии. Вернуться к началу: [00 С чего начать](00_start.ipynb)",
    )
    # what the author must still write is marked, and the series test finds it
    left = scripts_support.template_leftovers("01_more", root)
    assert {line.split(":")[0] for line in left} == {
        "notebooks/src/01_more.py",
        "helpers/replay/scenarios/n01_more.py",
        "helpers/exercises/n01.py",
    }


def test_a_lesson_inserted_in_the_middle_links_both_ways(root):
    new_lesson = scripts_support.script("new_lesson")
    src = root / "notebooks/src"
    write_lesson(
        src,
        "00_start",
        ("Start", "Начало"),
        ("[Next: 02 End](02_end.ipynb)", "[Дальше: 02 Конец](02_end.ipynb)"),
    )
    end = write_lesson(
        src,
        "02_end",
        ("End", "Конец"),
        (
            "That is the end of the series. Back to the start: [00 Start](00_start.ipynb)",
            "Это конец серии. Вернуться к началу: [00 Начало](00_start.ipynb)",
        ),
    )
    new_lesson.create("01_middle", "Middle", "Середина", root)
    assert last_lines(src / "00_start.py") == (
        "[Next: 01 Middle](01_middle.ipynb)",
        "[Дальше: 01 Середина](01_middle.ipynb)",
    )
    assert last_lines(src / "01_middle.py") == (
        "[Next: 02 End](02_end.ipynb)",
        "[Дальше: 02 Конец](02_end.ipynb)",
    )
    assert (src / "02_end.py").read_text(encoding="utf-8") == end


def test_a_previous_lesson_without_the_expected_ending_stops_everything(root):
    new_lesson = scripts_support.script("new_lesson")
    src = root / "notebooks/src"
    before = write_lesson(src, "00_start", ("Start", "Начало"), ("Bye.", "Пока."))
    with pytest.raises(SystemExit, match="no en line to replace"):
        new_lesson.create("01_more", "More", "Ещё", root)
    assert (src / "00_start.py").read_text(encoding="utf-8") == before
    assert not (src / "01_more.py").exists()


def test_a_new_lesson_gets_a_registry_entry_and_every_generated_table(tmp_path):
    new_lesson, registry = scripts_support.script("new_lesson"), scripts_support.script("registry")
    root = scripts_support.copy_of_the_series(tmp_path)
    last = registry.lessons(root)[-1]
    name = f"{last.number + 1:02d}_tool_budget"
    written = new_lesson.create(name, "Tool budgets", "Бюджет инструментов", root)
    entry = registry.load(root / "notebooks/src" / f"{name}.py", root)
    assert entry.title == {"en": "Tool budgets", "ru": "Бюджет инструментов"}
    assert "TODO" in entry.summary["en"]  # the author still writes it (test_notebooks finds it)
    label = {"en": f"{name[:2]} Tool budgets", "ru": f"{name[:2]} Бюджет инструментов"}
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"| [Tool budgets](notebooks/en/{name}.ipynb) | [Бюджет инструментов]" in readme
    for lang, guide in (("en", "teacher_guide.md"), ("ru", "teacher_guide.ru.md")):
        assert f"| {label[lang]} | 0 (0 + 0) |" in (root / "docs" / guide).read_text("utf-8")
    start = (root / "notebooks/src/00_start.py").read_text(encoding="utf-8")
    for lang in ("en", "ru"):
        assert f"| [{label[lang]}]({name}.ipynb) |" in start  # lesson 00's map, both editions
    assert last_lines(last.source) == (
        f"[Next: {label['en']}]({name}.ipynb)",
        f"[Дальше: {label['ru']}]({name}.ipynb)",
    )
    assert {root / "README.md", root / "notebooks/src/00_start.py", last.source} <= set(written)
    assert registry.stale(root) == []
    # the test template takes the reference from the lesson's hidden cells instead of copying it
    tests = (root / "tests" / f"test_exercises_n{name[:2]}.py").read_text(encoding="utf-8")
    assert f'solution("{name}", "my_messages")' in tests
    reference_test = tests.split("def test_the_reference_solution_passes")[1].split("@pytest")[0]
    assert "Moscow" not in reference_test


def test_a_lesson_without_a_registry_entry_stops_everything(root):
    new_lesson = scripts_support.script("new_lesson")
    src = root / "notebooks/src"
    text = write_lesson(src, "00_start", ("Start", "Начало"), ("End of the series.", "Конец."))
    (src / "00_start.py").write_text(text.replace("META =", "ABOUT ="), encoding="utf-8")
    with pytest.raises(SystemExit, match="00_start.py: needs exactly one top-level `META"):
        new_lesson.create("01_more", "More", "Ещё", root)
    assert not (src / "01_more.py").exists()


def test_a_generated_lesson_passes_the_style_and_parity_checks(root):
    """What the author starts from already passes tests/test_lesson_style.py (as a styled lesson:
    one folded reference block after the Summary) and the sentence parity of both editions."""
    new_lesson, nbbuild = scripts_support.script("new_lesson"), scripts_support.script("nbbuild")
    name = "06_tool_budget"
    written = new_lesson.create(name, "Tool budgets", "Бюджет инструментов", root)
    lesson = nbbuild.load_lesson(root / "notebooks/src" / f"{name}.py")
    assert styled(name)
    for lang in ("en", "ru"):
        notebook = nbbuild.to_notebook(lesson, lang)
        cells = [c.source for c in notebook.cells if c.cell_type == "markdown"]
        assert style_problems(name, lang, cells, styled=True) == []
    assert lesson_differences(name, lesson.cells, nbbuild.cell_ids(lesson)) == []
    python = [p for p in written if p.suffix == ".py" and "notebooks" not in p.parts]
    assert {p.relative_to(root).as_posix() for p in python} == {
        "helpers/replay/scenarios/n06_tool_budget.py",
        "helpers/exercises/n06.py",
        "tests/test_exercises_n06.py",
    }


@pytest.mark.dev_tools
def test_a_generated_lesson_is_ruff_formatted(root):
    """`ruff format --check` with the repository's settings (ruff is in requirements-dev.txt:
    CI runs this after installing it, `pytest -m dev_tools`)."""
    new_lesson = scripts_support.script("new_lesson")
    written = new_lesson.create("06_tool_budget", "Tool budgets", "Бюджет инструментов", root)
    python = [p for p in written if p.suffix == ".py" and "notebooks" not in p.parts]
    assert len(python) == 3, python
    ruff = Path(sys.executable).with_name("ruff")
    check = subprocess.run(
        [str(ruff), "format", "--check", "--diff", "--config", str(REPO_ROOT / "pyproject.toml")]
        + [str(p) for p in python],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_generated_lesson_sends_the_settings_the_strict_stand_in_accepts(root):
    new_lesson = scripts_support.script("new_lesson")
    name = "06_tool_budget"
    new_lesson.create(name, "Tool budgets", "Бюджет инструментов", root)
    source = (root / "notebooks/src" / f"{name}.py").read_text(encoding="utf-8")
    assert "settings = conn.settings(temperature=0.3)" in source
    assert 'tool_choice="auto", **settings' in source
    assert source.count("temperature=0.3") == 1  # only through conn.settings, never in a call


def test_the_next_steps_name_the_wrong_answers_and_the_tests_to_run():
    steps = scripts_support.script("new_lesson").next_steps("13_tool_budget")
    assert "six rows" in steps and "tests/test_exercises_table.py" in steps
    for test in ("tests/test_lesson_style.py", "tests/test_live_mode.py -k 13_tool_budget"):
        assert test in steps, test
