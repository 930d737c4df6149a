"""The committed outputs of the same code show the same data in both editions (the rules:
tests/output_parity.py). Checked on every lesson, then on a copy of lesson 01 whose Russian code
asks for `get_weather("Москва")` (the issue-30 omission): the code parity misses it, this catches it.
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from output_parity import output_differences
from parity import check_parity
from scripts_support import lesson_code

from helpers.i18n import LANGUAGES as LANGS
from helpers.lessons import lesson_names
from helpers.paths import NOTEBOOKS_DIR

LESSONS = lesson_names()


def editions(name: str) -> list[nbformat.NotebookNode]:
    return [nbformat.read(NOTEBOOKS_DIR / lang / f"{name}.ipynb", as_version=4) for lang in LANGS]


@pytest.mark.parametrize("name", LESSONS)
def test_the_same_code_shows_the_same_data_in_both_editions(name):
    problems = output_differences(*editions(name), name)
    assert not problems, "\n".join(problems)


def _run(name: str, expression: str) -> str:
    """What the lesson's own definitions (its `WEATHER = ` cell) give for `expression`: the
    output the mutated cell would show, computed here instead of in a kernel."""
    namespace: dict = {}
    for source in lesson_code(name):
        if source.startswith("WEATHER = "):  # the table, the function and the call
            exec(compile(source, f"<{name}>", "exec"), namespace)  # the lesson's own cell
    return repr(eval(expression, namespace))


def test_a_translated_data_literal_is_caught():
    """Planted into a known state: the "Russian" edition is a copy of the English one, so the
    planted literal is the only difference whatever the committed Russian edition holds (an
    omission there fails the test above, once)."""
    name = "01_tools_schema"
    en = editions(name)[0]
    ru = copy.deepcopy(en)
    call = 'get_weather("Moscow")'
    cells = [c for c in ru.cells if c.cell_type == "code" and c.source.endswith(call)]
    assert cells, f"no code cell of en/{name} ends with {call}: plant into another call"
    cell = cells[0]
    cell.source = cell.source.replace(call, 'get_weather("Москва")')
    cell.outputs[0]["data"]["text/plain"] = _run(name, 'get_weather("Москва")')
    assert "'unknown'" in cell.outputs[0]["data"]["text/plain"]
    assert check_parity(en, ru, name) == []  # the code parity cannot see it
    problems = output_differences(en, ru, name)
    assert len(problems) == 1, problems
    assert f"{name} cell {cell.id}: the Russian output shows ['unknown']" in problems[0]
    assert f"notebooks/src/{name}.py" in problems[0]


def test_a_changed_number_is_caught_and_translated_words_are_not():
    def nb(*texts):
        notebook = nbformat.v4.new_notebook()
        for text in texts:
            cell = nbformat.v4.new_code_cell("x")
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            notebook.cells.append(cell)
        return notebook

    en = nb("Not yet: 2 calls for 'Beijing', id get_weather:0\n", "JSON ok\n")
    same = nb("Пока нет: 2 вызова для 'Beijing', id get_weather:0\n", "json в порядке\n")
    assert output_differences(en, same, "x") == []
    other = nb("Пока нет: 3 вызова для 'Beijing', id get_weather:0\n", "json в порядке\n")
    assert "only en ['2'], only ru ['3']" in output_differences(en, other, "x")[0]
