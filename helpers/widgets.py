"""Interactive views for the lessons: a chunk-by-chunk stream viewer and a parser playground.

The logic lives in pure functions (`stream_state`, `compare_parsers`) that tests call directly;
the widgets only turn their results into HTML. Widgets never print: they set the `value` of an
`ipywidgets.HTML`, because text printed into a `widgets.Output` reaches nbval as stray stdout.
Their text/plain repr is a short fixed string, so nothing random lands in a saved notebook.
Labels come in the notebook's language (`helpers.i18n`), chosen when a widget is built; protocol
words (`content`, `finish_reason`, `usage`, `id`, `name`) and the model's text stay verbatim.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from helpers.display import format_chunk, format_usage
from helpers.formats import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    SECTION_BEGIN,
    SECTION_END,
    guide_extract_tool_call_info,
    parse_hermes,
    parse_kimi,
)
from helpers.i18n import count, tr
from helpers.streaming import ToolCallAccumulator

_ERROR_STYLE = "color: var(--jp-error-color1, #c62828)"
_WRAP = "white-space: pre-wrap; word-break: break-all"  # long arguments wrap, spaces stay
_BOX_STYLE = "font-family: var(--jp-code-font-family, monospace); font-size: 12px"


# --------------------------------------------------------------------------- stream viewer


def stream_state(chunks: Sequence[Any], step: int) -> dict[str, Any]:
    """What a client knows after the first `step` chunks: last chunk line, content, calls so far."""
    if not 0 <= step <= len(chunks):
        raise ValueError(f"step must be between 0 and {len(chunks)}, got {step}")
    accumulator = ToolCallAccumulator()
    for chunk in chunks[:step]:
        accumulator.add(chunk)
    return {
        "step": step,
        "chunk": format_chunk(chunks[step - 1]) if step else "",
        "content": accumulator.content,
        "tool_calls": accumulator.tool_calls,
        "finish_reason": accumulator.finish_reason,
        "usage": accumulator.usage,
    }


def _e(value: Any) -> str:
    """HTML-escape any value shown in a view (model text may contain `<`, `&`, quotes)."""
    return html.escape(str(value))


def _calls_table(tool_calls: list[dict[str, Any]], arguments_label: str = "arguments") -> str:
    """Tool calls as an HTML table: index, id, name, arguments."""
    if not tool_calls:
        return f"<div><i>{tr('no tool calls', 'вызовов нет')}</i></div>"
    head = "".join(f"<th style='text-align:left'>{h}</th>" for h in ("#", "id", "name"))
    head += f"<th style='text-align:left'>{_e(arguments_label)}</th>"
    rows = []
    for index, call in enumerate(tool_calls):
        function = call.get("function") or {}
        cells = (index, call.get("id", ""), function.get("name", ""), function.get("arguments", ""))
        tds = "".join(f"<td><code style='{_WRAP}'>{_e(c)}</code></td>" for c in cells)
        rows.append(f"<tr>{tds}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def stream_state_html(state: Mapping[str, Any], total: int) -> str:
    """The HTML of one stream step: the current chunk, the calls growing, the content so far."""
    step = state["step"]
    nothing = tr("nothing received yet", "пока ничего не пришло")
    chunk = f"<code>{_e(state['chunk'])}</code>" if step else f"<i>{nothing}</i>"
    usage = state.get("usage")
    usage_text = format_usage(usage).removeprefix("usage ") if usage else "-"
    content = state["content"]
    empty = tr("no content yet", "content пока пуст")
    content_html = f"<pre>{_e(content)}</pre>" if content else f"<div><i>{empty}</i></div>"
    position = tr(f"chunk {step} of {total}", f"фрагмент {step} из {total}")
    return (
        f"<div style='{_BOX_STYLE}'>"
        f"<div><b>{position}</b>: {chunk}</div>"
        f"<div><b>{tr('tool calls so far', 'вызовы, собранные к этому моменту')}</b></div>"
        f"{_calls_table(state['tool_calls'], tr('arguments so far', 'arguments к этому моменту'))}"
        f"<div><b>{tr('content so far', 'content к этому моменту')}</b></div>{content_html}"
        f"<div><b>finish_reason</b>: <code>{_e(state['finish_reason'])}</code>"
        f" &nbsp; <b>usage</b>: <code>{_e(usage_text)}</code></div>"
        "</div>"
    )


class StreamViewer(widgets.VBox):
    """A slider over the chunks of one streamed response; the HTML below shows what has arrived."""

    def __init__(self, chunks: Iterable[Any], play: bool = True, interval: int = 400) -> None:
        """Build the slider (0..len(chunks)), an optional Play button, and the HTML view."""
        self.chunks = list(chunks)
        self.slider = widgets.IntSlider(max=len(self.chunks), description=tr("chunks", "фрагменты"))
        self.view = widgets.HTML()
        controls: list[widgets.Widget] = [self.slider]
        self.play: widgets.Play | None = None
        if play:
            self.play = widgets.Play(max=len(self.chunks), interval=interval)
            widgets.jslink((self.play, "value"), (self.slider, "value"))  # runs in the browser
            controls.insert(0, self.play)
        super().__init__([widgets.HBox(controls), self.view])
        self._drawn: int | None = None  # the step the view shows
        self.slider.observe(self._on_slide, names="value")
        self.show(0)

    def _draw(self, step: int) -> dict[str, Any]:
        """Show the state after `step` chunks in the view and return it."""
        state = stream_state(self.chunks, step)
        self.view.value = stream_state_html(state, len(self.chunks))
        self._drawn = step
        return state

    def _on_slide(self, change: Mapping[str, Any]) -> None:
        """Redraw the view when the slider moves (unless `show` has drawn that step already)."""
        if change["new"] != self._drawn:
            self._draw(change["new"])

    def show(self, step: int) -> dict[str, Any]:
        """Move to `step` (also from code) and return the state shown."""
        state = self._draw(step)
        self.slider.value = step
        return state

    def add(self, chunk: Any) -> dict[str, Any]:
        """Append one more chunk, stretch the slider (and Play) to it and show it."""
        self.chunks.append(chunk)
        self.slider.max = len(self.chunks)
        if self.play is not None:
            self.play.max = len(self.chunks)
        return self.show(len(self.chunks))

    def __repr__(self) -> str:
        """A fixed text/plain form: the saved notebook gets no widget internals."""
        return f"StreamViewer({len(self.chunks)} chunks)"


def watch_stream(stream: Iterable[Any], play: bool = True, interval: int = 400) -> list[Any]:
    """Show a stream while it arrives and return its chunks (what `list(stream)` returns).

    The viewer is displayed first, then redrawn after every chunk, so with `LLM_REPLAY_PACE=1`
    (or a real model) the calls and the text grow on screen at the model's pace; afterwards the
    slider and Play step through the same chunks again."""
    from IPython.display import display

    viewer = StreamViewer([], play=play, interval=interval)
    display(viewer)
    for chunk in stream:
        viewer.add(chunk)
    return viewer.chunks


# --------------------------------------------------------------------------- parser playground


def _kimi_call(call_id: str, arguments: str) -> str:
    """One Kimi-K2 call in raw form."""
    return f"{CALL_BEGIN}{call_id}{ARGUMENT_BEGIN}{arguments}{CALL_END}"


_BEIJING = '{"city": "Beijing"}'
_WEATHER = _kimi_call("functions.get_weather:0", _BEIJING)
_TIME = _kimi_call("functions.get_time:1", '{"timezone": "Asia/Shanghai"}')

KIMI_EXAMPLES: dict[str, str] = {
    "well-formed call": f"{SECTION_BEGIN}{_WEATHER}{SECTION_END}",
    "second section": f"{SECTION_BEGIN}{_WEATHER}{SECTION_END}\n"
    f"{SECTION_BEGIN}{_TIME}{SECTION_END}",
    "missing end marker": f"{SECTION_BEGIN}{CALL_BEGIN}functions.get_weather:0"
    f'{ARGUMENT_BEGIN}{{"city": "Bei',
    "'-' in id": f"{SECTION_BEGIN}{_kimi_call('functions.get-weather:0', _BEIJING)}{SECTION_END}",
    "bad JSON": f"{SECTION_BEGIN}{_kimi_call('functions.get_weather:0', '{city: Beijing}')}"
    f"{SECTION_END}",
    "text before the section": f"Let me check the weather.\n{SECTION_BEGIN}{_WEATHER}{SECTION_END}",
    "id without 'functions.'": f"{SECTION_BEGIN}{_kimi_call('get_weather:0', '{}')}{SECTION_END}",
}

_HERMES_WEATHER = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
)
_HERMES_TIME = (
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Asia/Shanghai"}}\n</tool_call>'
)

HERMES_EXAMPLES: dict[str, str] = {
    "well-formed call": _HERMES_WEATHER,
    "two calls": f"{_HERMES_WEATHER}\n{_HERMES_TIME}",
    "missing end tag": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bei',
    "bad JSON": "<tool_call>\n{name: get_weather, arguments: {city: Beijing}}\n</tool_call>",
    "text before the call": "Let me check the weather.\n" + _HERMES_WEATHER,
}

_EXAMPLES = {"kimi": KIMI_EXAMPLES, "hermes": HERMES_EXAMPLES}

# What the example picker shows (the examples' keys, which code uses, stay English).
_LABELS_RU = {
    "well-formed call": "правильный вызов",
    "second section": "вторая секция",
    "missing end marker": "нет маркера конца",
    "'-' in id": "'-' в id",
    "bad JSON": "неверный JSON",
    "text before the section": "текст перед секцией",
    "id without 'functions.'": "id без 'functions.'",
    "two calls": "два вызова",
    "missing end tag": "нет закрывающего тега",
    "text before the call": "текст перед вызовом",
}


def compare_parsers(text: str, fmt: str = "kimi") -> dict[str, Any]:
    """Run our parser and (for Kimi-K2) the guide's on `text`; return both results."""
    if fmt not in _EXAMPLES:
        raise ValueError(f"fmt must be 'kimi' or 'hermes', got {fmt!r}")
    result = parse_kimi(text) if fmt == "kimi" else parse_hermes(text)
    ours = {"content": result.content, "tool_calls": result.tool_calls, "errors": result.errors}
    base = {"fmt": fmt, "ours": ours}
    if fmt != "kimi":
        return base | {"guide": None, "same_calls": None, "differences": []}
    try:
        guide: dict[str, Any] = {"tool_calls": guide_extract_tool_call_info(text), "error": None}
    except IndexError as exc:
        # The guide's code fails only by indexing: `sections[0]` when the section end is
        # missing, `id.split(".")[1]` for an id without a dot. Showing that is the point; any
        # other exception would be a bug in our code and must not be hidden.
        guide = {"tool_calls": None, "error": f"{type(exc).__name__}: {exc}"}
    same = guide["error"] is None and guide["tool_calls"] == result.tool_calls
    return base | {
        "guide": guide,
        "same_calls": same,
        "differences": _guide_differences(ours, guide),
    }


def _guide_differences(ours: Mapping[str, Any], guide: Mapping[str, Any]) -> list[str]:
    """Say in words where the guide's result falls short of ours (empty when it does not)."""
    if guide["error"] is not None:
        return [
            tr(f"the guide raises {guide['error']}", f"код руководства падает: {guide['error']}")
        ]
    differences = []
    lost = [c["id"] for c in ours["tool_calls"] if c not in guide["tool_calls"]]
    wrong = [c["id"] for c in guide["tool_calls"] if c not in ours["tool_calls"]]
    if lost:
        calls = tr("call", "вызов") if len(lost) == 1 else tr("calls", "вызовы")
        ids = ", ".join(map(repr, lost))
        differences.append(
            tr(f"the guide loses {calls} {ids}", f"код руководства теряет {calls} {ids}")
        )
    if wrong:
        calls = "call" if len(wrong) == 1 else "calls"
        ids = ", ".join(map(repr, wrong))
        differences.append(
            tr(f"the guide reads {calls} {ids} differently", f"код руководства читает иначе: {ids}")
        )
    if ours["errors"]:
        problems = count(
            len(ours["errors"]), ("problem", "problems"), ("проблему", "проблемы", "проблем")
        )
        differences.append(
            tr(
                f"the guide reports none of the {problems}",
                f"код руководства не сообщает ни про одну из: {problems}",
            )
        )
    if ours["content"]:
        differences.append(
            tr("the guide does not return the content", "код руководства не возвращает content")
        )
    return differences


def _ours_html(ours: Mapping[str, Any]) -> str:
    """Our parser's result: content, calls, errors."""
    content = ours["content"]
    errors = ours["errors"]
    errors_html = (
        "<ul>" + "".join(f"<li style='{_ERROR_STYLE}'>{_e(e)}</li>" for e in errors) + "</ul>"
        if errors
        else f"<div><i>{tr('no errors', 'ошибок нет')}</i></div>"
    )
    return (
        f"<div><b>content</b>: <code>{_e(repr(content))}</code></div>"
        f"{_calls_table(ours['tool_calls'])}<div><b>errors</b></div>{errors_html}"
    )


def _guide_html(guide: Mapping[str, Any]) -> str:
    """The guide's result: its calls, or the exception it raised."""
    if guide["error"] is not None:
        raised = tr("raised", "исключение")
        error = _e(guide["error"])
        return f"<div style='{_ERROR_STYLE}'><b>{raised}</b> <code>{error}</code></div>"
    return (
        f"<div><b>content</b>: <i>{tr('not extracted', 'не извлекается')}</i></div>"
        f"{_calls_table(guide['tool_calls'])}"
        f"<div><i>{tr('reports no errors', 'об ошибках не сообщает')}</i></div>"
    )


def comparison_html(comparison: Mapping[str, Any]) -> str:
    """Both parsers' results side by side, as HTML."""
    ours_name = "parse_kimi" if comparison["fmt"] == "kimi" else "parse_hermes"
    ours_title = tr(f"{ours_name} (ours)", f"{ours_name} (наш)")
    ours = _ours_html(comparison["ours"])
    guide = comparison["guide"]
    if guide is None:
        return f"<div style='{_BOX_STYLE}'><b>{ours_title}</b>{ours}</div>"
    differences = comparison["differences"]
    verdict = (
        "<ul>" + "".join(f"<li><b>{_e(d)}</b></li>" for d in differences) + "</ul>"
        if differences
        else f"<div><b>{tr('both parsers agree', 'оба парсера согласны')}</b></div>"
    )
    cell = "<td style='vertical-align: top; padding-right: 2em'>"
    guide_title = tr(
        "guide_extract_tool_call_info (guide)", "guide_extract_tool_call_info (руководство)"
    )
    return (
        f"<div style='{_BOX_STYLE}'>{verdict}<table><tr>"
        f"<th style='text-align:left'>{ours_title}</th>"
        f"<th style='text-align:left'>{guide_title}</th></tr>"
        f"<tr>{cell}{ours}</td>{cell}{_guide_html(guide)}</td></tr></table></div>"
    )


class ParserPlayground(widgets.VBox):
    """Edit raw model output and watch our parser and the guide's read it, side by side."""

    def __init__(self, text: str | None = None, fmt: str = "kimi") -> None:
        """Build the example picker, the editable text and the results view."""
        if fmt not in _EXAMPLES:
            raise ValueError(f"fmt must be 'kimi' or 'hermes', got {fmt!r}")
        self.fmt = fmt
        self.examples = dict(_EXAMPLES[fmt])
        first = next(iter(self.examples.values()))
        self.picker = widgets.Dropdown(
            options=[(tr(name, _LABELS_RU.get(name, name)), name) for name in self.examples],
            value=None,
            description=tr("example", "пример"),
        )
        self.text = widgets.Textarea(  # continuous_update is on by default
            value=first if text is None else text, rows=6, layout=widgets.Layout(width="100%")
        )
        self.view = widgets.HTML()
        super().__init__([self.picker, self.text, self.view])
        self.picker.observe(self._on_pick, names="value")
        self.text.observe(lambda change: self.refresh(), names="value")  # redraw after every edit
        self.refresh()

    def _on_pick(self, change: Mapping[str, Any]) -> None:
        """Load the chosen example into the text area (which redraws the view)."""
        if change["new"] is not None:
            self.text.value = self.examples[change["new"]]

    def load(self, name: str) -> None:
        """Load an example by name, as the dropdown does (also when it is already selected)."""
        self.picker.value = name
        self.text.value = self.examples[name]

    def refresh(self) -> dict[str, Any]:
        """Parse the current text, show the result, and return it."""
        comparison = compare_parsers(self.text.value, self.fmt)
        self.view.value = comparison_html(comparison)
        return comparison

    def __repr__(self) -> str:
        """A fixed text/plain form: the saved notebook gets no widget internals."""
        return f"ParserPlayground(fmt={self.fmt!r})"
