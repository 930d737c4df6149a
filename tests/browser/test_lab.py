"""The series as a student sees it: JupyterLab in Chromium runs a notebook, the widgets render and react.

    pytest -m browser tests/browser        # after `bash scripts/browser_setup.sh`

Per notebook: open it in a fresh workspace, Edit > Clear Outputs of All Cells (what is checked
comes from this run), Run > Run All Cells, wait for the kernel to go idle,
then check every cell against the committed notebook (cell order maps the page to the file):
every code cell ran; a cell shows an error exactly when it is tagged `raises-exception`, and the
same exception; every widget cell shows a rendered widget and no widget error; moving one control
changes what the widget shows. The repo's notebooks are never written (autosave is off, checkpoints
go to a temporary folder, and the test checks that the notebook and its folder did not change).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from helpers.paths import REPO_ROOT

pytestmark = pytest.mark.browser

RUN_TIMEOUT = 300  # seconds for Run All on one notebook (replay; about 10-30 s measured)
WIDGET_ERRORS = ("Error displaying widget", "model not found", "Loading widget")
KIMI_CALL = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
    '<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>'
)

# What the page shows for each cell, read in one pass (all cells stay in the DOM: windowing off).
CELLS_JS = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell'))
  .map(cell => {
    const outputs = Array.from(cell.querySelectorAll('.jp-OutputArea-output'));
    const errors = outputs.filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr');
    return {
      code: cell.classList.contains('jp-CodeCell'),
      hidden: !!cell.querySelector('.jp-InputPlaceholder'),
      prompt: (cell.querySelector('.jp-InputArea-prompt') || {}).textContent || '',
      outputs: outputs.length,
      errors: errors.map(o => o.innerText.slice(-400)),
      widgets: cell.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
      text: outputs.map(o => o.innerText).join('\\n'),
    };
  })"""
STATUS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const indicator = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = panel ? Array.from(panel.querySelectorAll('.jp-InputArea-prompt')) : [];
  return {status: indicator ? indicator.dataset.status : null,
          running: prompts.some(p => p.textContent.includes('*')),
          dialog: (document.querySelector('.jp-Dialog') || {}).innerText || null};
}"""


@dataclass
class Lesson:
    """A notebook to open, the widget it must show, and how to move that widget."""

    relpath: str
    widget: str  # the class whose construction marks a widget cell
    interaction: str  # "slider" or "textarea"


LESSONS = [
    Lesson("notebooks/en/03_streaming.ipynb", "watch_stream", "slider"),
    Lesson("notebooks/ru/04_manual_parsing.ipynb", "ParserPlayground", "textarea"),
]


def shoot(target, shots: Path | None, name: str) -> None:
    """Save a screenshot of a page or element when $BROWSER_SHOTS_DIR is set."""
    if shots is not None:
        target.screenshot(path=str(shots / f"{name}.png"))


def wait_until_idle(page, timeout: float) -> None:
    """Wait until no cell is queued or running and the kernel is idle, three polls in a row."""
    deadline, calm = time.monotonic() + timeout, 0
    while calm < 3:
        state = page.evaluate(STATUS_JS)
        if state["dialog"]:
            raise AssertionError(f"JupyterLab shows a dialog: {state['dialog'][:300]!r}")
        calm = calm + 1 if state["status"] == "idle" and not state["running"] else 0
        if time.monotonic() > deadline:
            raise AssertionError(f"the notebook did not finish within {timeout} s: {state}")
        time.sleep(0.5)


def menu(page, title: str, command: str) -> None:
    """Click a menu bar entry, then one of its items (by JupyterLab command id)."""
    page.click(f"li.lm-MenuBar-item:has-text('{title}')")
    page.click(f"li.lm-Menu-item[data-command='{command}']")


def open_and_run_all(page, lab, relpath: str) -> None:
    """Open a notebook, wait for its kernel, clear the saved outputs, then Run > Run All Cells.

    Clearing first makes every output on the page come from this run, not from the file.
    """
    page.goto(lab.lab_url(relpath))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    lab.wait_for_kernel(relpath)
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000
    )
    menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function(
        "() => !document.querySelector('.jp-NotebookPanel .jp-OutputArea-output')"
    )
    menu(page, "Run", "runmenu:run-all")
    wait_until_idle(page, RUN_TIMEOUT)


def cell_problems(nb, shown: list[dict], widget: str) -> list[str]:
    """Compare what the page shows for each cell with the committed notebook's cells and tags."""
    if len(shown) != len(nb.cells):
        return [f"the page shows {len(shown)} cells, the notebook has {len(nb.cells)}"]
    problems = []
    for index, (cell, seen) in enumerate(zip(nb.cells, shown, strict=True)):
        at = f"cell {index} ({cell.get('id')})"
        if cell.cell_type != "code":
            continue
        if not seen["hidden"] and not re.fullmatch(r"\s*\[\d+\]:\s*", seen["prompt"]):
            problems.append(f"{at} did not run: prompt {seen['prompt']!r}")
        if cell.get("outputs") and not seen["outputs"]:
            problems.append(f"{at} shows no output; the committed notebook has some")
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        expected = [o.ename for o in cell.get("outputs", []) if o.output_type == "error"]
        if seen["errors"] and not tagged:
            problems.append(
                f"{at} shows an error but is not tagged raises-exception: {seen['errors'][0]!r}"
            )
        if tagged and not seen["errors"]:
            problems.append(f"{at} is tagged raises-exception but shows no error")
        if tagged and seen["errors"] and expected and expected[0] not in seen["errors"][-1]:
            problems.append(
                f"{at} shows {seen['errors'][-1]!r}, the notebook expects {expected[0]}"
            )
        if any(e in seen["text"] for e in WIDGET_ERRORS):
            problems.append(f"{at} shows a widget error: {seen['text'][:300]!r}")
        if re.search(rf"\b{widget}\(", cell.source) and not seen["widgets"]:
            problems.append(
                f"{at} builds a {widget} but shows no rendered widget: {seen['text'][:200]!r}"
            )
    return problems


def widget_view_text(cell) -> str:
    """The text of the HTML views inside a widget cell's output (not its controls)."""
    return "\n".join(cell.locator(".widget-html").all_inner_texts())


def wait_for_view(cell, done, timeout: float = 15) -> str:
    """Poll the widget view until `done(text)` holds (or time runs out); its last text."""
    deadline = time.monotonic() + timeout
    text = widget_view_text(cell)
    while not done(text) and time.monotonic() < deadline:
        time.sleep(0.2)
        text = widget_view_text(cell)
    return text


def slider_settled(cell):
    """A `done` test: the view shows the chunk the slider's readout shows (the kernel caught up)."""
    readout = cell.locator(".widget-slider .widget-readout").first
    return lambda text: bool(
        re.search(rf"(?:chunk|фрагмент) {readout.inner_text().strip()} (?:of|из) \d+", text)
    )


def move_slider(page, cell) -> None:
    """Drag the first slider handle of the cell most of the way to the right, as a student would."""
    track = cell.locator(".widget-slider .noUi-base").first
    handle = cell.locator(".widget-slider .noUi-handle").first
    track.scroll_into_view_if_needed()
    box, grip = track.bounding_box(), handle.bounding_box()
    page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2, steps=10)
    page.mouse.up()


def edit_textarea(page, cell) -> None:
    """Replace the playground's raw text with one call whose arguments name Oslo."""
    area = cell.locator(".widget-textarea textarea").first
    area.scroll_into_view_if_needed()
    area.fill(KIMI_CALL)


def folder_state(notebook: Path) -> tuple[list[str], str]:
    """The names in a notebook's folder and the notebook's sha256: the test must write neither."""
    names = sorted(p.name for p in notebook.parent.iterdir())
    return names, hashlib.sha256(notebook.read_bytes()).hexdigest()


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.relpath for lesson in LESSONS])
def test_lesson_runs_in_jupyterlab_and_its_widget_reacts(lab, browser, shots, lesson):
    path = REPO_ROOT / lesson.relpath
    assert path.exists(), f"{lesson.relpath} does not exist yet"
    nb = nbformat.read(path, as_version=4)
    before_files = folder_state(path)
    stem = lesson.relpath.replace("notebooks/", "").replace("/", "_").removesuffix(".ipynb")
    page = browser.new_page()
    try:
        open_and_run_all(page, lab, lesson.relpath)
        shoot(page, shots, f"{stem}_1_after_run_all")
        problems = cell_problems(nb, page.evaluate(CELLS_JS), lesson.widget)
        assert not problems, "\n".join(problems)

        widget_cells = [
            i for i, c in enumerate(nb.cells) if re.search(rf"\b{lesson.widget}\(", c.source)
        ]
        assert widget_cells, f"no cell of {lesson.relpath} builds a {lesson.widget}"
        cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(widget_cells[-1])
        cell.scroll_into_view_if_needed()
        before = widget_view_text(cell)
        assert before.strip(), f"the {lesson.widget} view is empty"
        shoot(cell, shots, f"{stem}_2_widget_before")
        if lesson.interaction == "slider":
            move_slider(page, cell)
            after = wait_for_view(cell, slider_settled(cell))
            assert slider_settled(cell)(after), f"the view does not follow the slider: {after!r}"
            assert re.search(r"chunk [1-9]\d* of \d+", after), after
        else:
            edit_textarea(page, cell)
            after = wait_for_view(cell, lambda text: "Oslo" in text)
            assert "Oslo" in after and "Oslo" not in before, after
        shoot(cell, shots, f"{stem}_3_widget_after")
        assert after != before, f"moving the {lesson.widget} control changed nothing it shows"
    finally:
        page.close()
        lab.shutdown_kernels()
    assert folder_state(path) == before_files, f"the browser run wrote into {path.parent}"


def test_lab_renders_and_updates_a_plain_ipywidgets_slider(browser, shots, tmp_path, start_lab):
    """The harness and the widget extension alone: an IntSlider linked to an HTML view."""
    folder = tmp_path / "root"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    }
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import ipywidgets as w\n"
            "slider = w.IntSlider(value=0, min=0, max=10)\n"
            "view = w.HTML('chunk 0 of 10')\n"
            "slider.observe(lambda c: setattr(view, 'value', f\"chunk {c['new']} of 10\"), 'value')\n"
            "w.VBox([slider, view])"
        ),
        nbformat.v4.new_code_cell(
            "raise ValueError('expected')", metadata={"tags": ["raises-exception"]}
        ),
        nbformat.v4.new_code_cell("print('still runs after a tagged error')"),
    ]
    nbformat.write(nb, folder / "slider.ipynb")
    with start_lab(folder, tmp_path) as server:
        page = browser.new_page()
        try:
            open_and_run_all(page, server, "slider.ipynb")
            problems = cell_problems(nb, page.evaluate(CELLS_JS), "IntSlider")
            cell = page.locator(".jp-NotebookPanel .jp-Cell").first
            before = widget_view_text(cell)
            move_slider(page, cell)
            after = wait_for_view(cell, slider_settled(cell))
            settled = slider_settled(cell)(after)
            shoot(page, shots, "harness_intslider")
        finally:
            page.close()
            server.shutdown_kernels()
    assert not problems, "\n".join(problems)
    assert before == "chunk 0 of 10"
    assert re.fullmatch(r"chunk [1-9]\d* of 10", after), after
    assert settled, f"the view does not follow the slider: {after!r}"
    assert json.loads((folder / "slider.ipynb").read_text())["cells"][0]["outputs"] == []
