"""helpers.widgets: the pure state functions, and the widgets driven headless (no kernel)."""

import html
import re

import ipywidgets as widgets
import pytest
from openai.types.chat import ChatCompletionChunk
from output_language import language_problems

import helpers.widgets as hw
from helpers.i18n import reset_language, set_language
from helpers.widgets import (
    HERMES_EXAMPLES,
    KIMI_EXAMPLES,
    ParserPlayground,
    StreamViewer,
    compare_parsers,
    stream_state,
)

BASE = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
USAGE = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}


def chunk(delta=None, finish=None) -> dict:
    return BASE | {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


def piece(index, arguments, call_id=None, name=None) -> dict:
    p = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        p |= {"id": call_id, "type": "function"}
        p["function"]["name"] = name
    return p


# Two parallel calls whose argument fragments interleave, then finish_reason, then usage.
CHUNKS = [
    chunk({"role": "assistant", "content": "Checking <both>."}),
    chunk({"tool_calls": [piece(0, "", "functions.get_weather:0", "get_weather")]}),
    chunk({"tool_calls": [piece(1, "", "functions.get_time:1", "get_time")]}),
    chunk({"tool_calls": [piece(0, '{"city": '), piece(1, '{"tz": ')]}),
    chunk({"tool_calls": [piece(1, '"UTC"}')]}),
    chunk({"tool_calls": [piece(0, '"Paris"}')]}),
    chunk({}, "tool_calls"),
    BASE | {"choices": [], "usage": USAGE},
]


def test_stream_state_at_zero_knows_nothing():
    assert stream_state(CHUNKS, 0) == {
        "step": 0,
        "chunk": "",
        "content": "",
        "tool_calls": [],
        "finish_reason": None,
        "usage": None,
    }


def test_stream_state_in_the_middle_has_partial_interleaved_arguments():
    state = stream_state(CHUNKS, 5)
    assert state["chunk"] == "tool_calls[1] args='\"UTC\"}'"
    assert state["content"] == "Checking <both>."
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in state["tool_calls"]
    ] == [
        ("functions.get_weather:0", "get_weather", '{"city": '),
        ("functions.get_time:1", "get_time", '{"tz": "UTC"}'),
    ]
    assert state["finish_reason"] is None and state["usage"] is None


def test_stream_state_at_the_end_has_complete_calls_finish_reason_and_usage():
    state = stream_state(CHUNKS, len(CHUNKS))
    assert state["chunk"] == "usage prompt_tokens=5 completion_tokens=7 total_tokens=12"
    assert [c["function"]["arguments"] for c in state["tool_calls"]] == [
        '{"city": "Paris"}',
        '{"tz": "UTC"}',
    ]
    assert state["finish_reason"] == "tool_calls"
    assert state["usage"] == USAGE


def test_stream_state_same_for_sdk_chunks_and_rejects_bad_steps():
    sdk_chunks = [ChatCompletionChunk.model_validate(c) for c in CHUNKS]
    for step in range(len(CHUNKS) + 1):
        assert stream_state(sdk_chunks, step) == stream_state(CHUNKS, step)
    for bad in (-1, len(CHUNKS) + 1):
        with pytest.raises(ValueError, match="step must be between 0 and 8"):
            stream_state(CHUNKS, bad)


# --------------------------------------------------------------------------- compare_parsers

GET_WEATHER = {
    "id": "functions.get_weather:0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}


def test_compare_parsers_agree_on_a_well_formed_call():
    result = compare_parsers(KIMI_EXAMPLES["well-formed call"])
    assert result["ours"] == {"content": "", "tool_calls": [GET_WEATHER], "errors": []}
    assert result["guide"] == {"tool_calls": [GET_WEATHER], "error": None}
    assert result["same_calls"] is True and result["differences"] == []


@pytest.mark.parametrize(
    ("example", "ours_ids", "guide_ids", "guide_error", "difference"),
    [
        (
            "second section",
            ["functions.get_weather:0", "functions.get_time:1"],
            ["functions.get_weather:0"],
            None,
            "the guide loses call 'functions.get_time:1'",
        ),
        (
            "missing end marker",
            ["functions.get_weather:0"],
            None,
            "IndexError: list index out of range",
            "the guide raises IndexError: list index out of range",
        ),
        (
            "'-' in id",
            ["functions.get-weather:0"],
            [],
            None,
            "the guide loses call 'functions.get-weather:0'",
        ),
        (
            "bad JSON",
            ["functions.get_weather:0"],
            ["functions.get_weather:0"],
            None,
            "the guide reports none of the 1 problem",
        ),
        (
            "text before the section",
            ["functions.get_weather:0"],
            ["functions.get_weather:0"],
            None,
            "the guide does not return the content",
        ),
        (
            "id without 'functions.'",
            ["get_weather:0"],
            None,
            "IndexError: list index out of range",
            "the guide raises IndexError: list index out of range",
        ),
    ],
)
def test_compare_parsers_differ_exactly_where_the_guide_is_defective(
    example, ours_ids, guide_ids, guide_error, difference
):
    result = compare_parsers(KIMI_EXAMPLES[example])
    assert [c["id"] for c in result["ours"]["tool_calls"]] == ours_ids
    guide_calls = result["guide"]["tool_calls"]
    assert (None if guide_calls is None else [c["id"] for c in guide_calls]) == guide_ids
    assert result["guide"]["error"] == guide_error
    assert result["differences"] == [difference]


def test_compare_parsers_our_side_reports_the_defects_it_survives():
    cut = compare_parsers(KIMI_EXAMPLES["missing end marker"])["ours"]
    assert any("no <|tool_calls_section_end|>" in e for e in cut["errors"])
    assert (
        compare_parsers(KIMI_EXAMPLES["'-' in id"])["ours"]["tool_calls"][0]["function"]["name"]
        == "get-weather"
    )
    assert "not valid JSON" in compare_parsers(KIMI_EXAMPLES["bad JSON"])["ours"]["errors"][0]
    assert compare_parsers(KIMI_EXAMPLES["text before the section"])["ours"]["content"] == (
        "Let me check the weather."
    )


def test_compare_parsers_hermes_has_no_guide_side_and_bad_fmt_is_rejected():
    result = compare_parsers(HERMES_EXAMPLES["two calls"], fmt="hermes")
    assert [c["function"]["name"] for c in result["ours"]["tool_calls"]] == [
        "get_weather",
        "get_time",
    ]
    assert result["guide"] is None and result["differences"] == []
    assert compare_parsers(HERMES_EXAMPLES["missing end tag"], fmt="hermes")["ours"]["errors"]
    with pytest.raises(ValueError, match="fmt must be"):
        compare_parsers("x", fmt="qwen")


def test_compare_parsers_names_calls_the_guide_reads_differently_in_both_languages(monkeypatch):
    def misread(text):
        calls = hw.parse_kimi(text).tool_calls
        return [c | {"function": c["function"] | {"arguments": "{}"}} for c in calls]

    monkeypatch.setattr(hw, "guide_extract_tool_call_info", misread)
    text = KIMI_EXAMPLES["well-formed call"]
    assert compare_parsers(text)["differences"] == [
        "the guide loses call 'functions.get_weather:0'",
        "the guide reads call 'functions.get_weather:0' differently",
    ]
    set_language("ru")
    try:
        assert compare_parsers(text)["differences"] == [
            "код руководства теряет вызов 'functions.get_weather:0'",
            "код руководства читает иначе: 'functions.get_weather:0'",
        ]
    finally:
        reset_language()


def test_compare_parsers_does_not_hide_exceptions_other_than_the_guides(monkeypatch):
    def broken(text):
        raise TypeError("a bug of ours")

    monkeypatch.setattr(hw, "guide_extract_tool_call_info", broken)
    with pytest.raises(TypeError, match="a bug of ours"):
        compare_parsers(KIMI_EXAMPLES["well-formed call"])


# --------------------------------------------------------------------------- StreamViewer


def _descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _descendants(child)


def test_stream_viewer_redraws_when_the_slider_moves(capsys):
    viewer = StreamViewer(CHUNKS)
    assert isinstance(viewer, widgets.VBox)
    assert (viewer.slider.min, viewer.slider.max, viewer.slider.value) == (0, len(CHUNKS), 0)
    assert "chunk 0 of 8" in viewer.view.value and "nothing received yet" in viewer.view.value
    viewer.slider.value = 2  # as the user dragging the slider
    assert "chunk 2 of 8" in viewer.view.value
    assert "get_weather" in viewer.view.value and "get_time" not in viewer.view.value
    viewer.slider.value = 5
    assert "get_time" in viewer.view.value
    assert "{&quot;tz&quot;: &quot;UTC&quot;}" in viewer.view.value  # arguments so far, escaped
    assert "Checking &lt;both&gt;." in viewer.view.value and "<both>" not in viewer.view.value
    assert capsys.readouterr().out == ""  # nothing printed: nbval would see it


def test_stream_viewer_show_sets_the_slider_and_returns_the_state():
    viewer = StreamViewer(CHUNKS, play=False)
    state = viewer.show(len(CHUNKS))
    assert viewer.slider.value == len(CHUNKS)
    assert state["finish_reason"] == "tool_calls"
    assert "<code>tool_calls</code>" in viewer.view.value
    assert "prompt_tokens=5 completion_tokens=7 total_tokens=12" in viewer.view.value
    assert viewer.play is None
    assert not any(isinstance(w, widgets.Play) for w in _descendants(viewer))


def test_stream_viewer_has_play_no_output_widget_and_a_fixed_repr():
    viewer = StreamViewer(iter(CHUNKS))  # a generator is read once
    kinds = [type(w) for w in _descendants(viewer)]
    assert widgets.Play in kinds and widgets.Output not in kinds
    assert viewer.play.max == viewer.slider.max == len(CHUNKS)
    assert repr(viewer) == "StreamViewer(8 chunks)"
    assert viewer._repr_mimebundle_()["text/plain"] == "StreamViewer(8 chunks)"


# --------------------------------------------------------------------------- ParserPlayground


def test_parser_playground_updates_on_every_edit(capsys):
    playground = ParserPlayground(KIMI_EXAMPLES["well-formed call"])
    assert "both parsers agree" in playground.view.value
    assert "get_weather" in playground.view.value
    playground.text.value = KIMI_EXAMPLES["missing end marker"]  # as the user typing
    assert "IndexError: list index out of range" in playground.view.value
    assert "no &lt;|tool_calls_section_end|&gt;" in playground.view.value  # our error, escaped
    playground.text.value = KIMI_EXAMPLES["well-formed call"].replace("get_weather", "get_news")
    assert "get_news" in playground.view.value and "IndexError" not in playground.view.value
    assert capsys.readouterr().out == ""


def test_parser_playground_examples_load_into_the_text():
    playground = ParserPlayground()
    assert playground.text.value == next(iter(KIMI_EXAMPLES.values()))
    assert set(playground.examples) >= {
        "second section",
        "missing end marker",
        "'-' in id",
        "bad JSON",
        "text before the section",
    }
    playground.picker.value = "second section"
    assert playground.text.value == KIMI_EXAMPLES["second section"]
    assert "the guide loses call &#x27;functions.get_time:1&#x27;" in playground.view.value
    playground.text.value = "edited"
    playground.load("second section")  # already selected in the dropdown: still reloads
    assert playground.text.value == KIMI_EXAMPLES["second section"]


def test_parser_playground_hermes_and_repr():
    playground = ParserPlayground(fmt="hermes")
    assert "parse_hermes (ours)" in playground.view.value
    assert "guide_extract_tool_call_info" not in playground.view.value
    playground.load("bad JSON")
    assert "not valid JSON" in playground.view.value
    assert repr(playground) == "ParserPlayground(fmt='hermes')"
    assert widgets.Output not in [type(w) for w in _descendants(playground)]
    with pytest.raises(ValueError, match="fmt must be"):
        ParserPlayground(fmt="qwen")


# --------------------------------------------------------------------------- the notebook's language


def _text(markup: str) -> str:
    """The text a student reads in a widget's HTML."""
    return html.unescape(re.sub(r"<[^>]*>", "\n", markup))


@pytest.fixture(params=["en", "ru"])
def lang(request):
    set_language(request.param)
    yield request.param
    reset_language()


def test_stream_viewer_speaks_the_notebooks_language(lang):
    viewer = StreamViewer(CHUNKS)
    assert viewer.slider.description == {"en": "chunks", "ru": "фрагменты"}[lang]
    for step in range(len(CHUNKS) + 1):
        viewer.show(step)
        problems = language_problems("", lang, _text(viewer.view.value))
        assert not problems, (step, problems)
    assert {"en": "chunk 8 of 8", "ru": "фрагмент 8 из 8"}[lang] in viewer.view.value


def test_parser_playground_speaks_the_notebooks_language(lang):
    for fmt, examples in (("kimi", KIMI_EXAMPLES), ("hermes", HERMES_EXAMPLES)):
        playground = ParserPlayground(fmt=fmt)
        labels = [label for label, _ in playground.picker.options]
        assert not language_problems("", lang, "\n".join(labels)), labels
        assert playground.picker.description == {"en": "example", "ru": "пример"}[lang]
        for name in examples:
            playground.load(name)
            text = _text(playground.view.value)
            # our parser's error messages come from helpers/formats, outside this module
            for error in playground.refresh()["ours"]["errors"]:
                text = text.replace(error, "")
            problems = language_problems("", lang, text)
            assert not problems, (fmt, name, problems)
    assert (
        "правильный вызов",
        "well-formed call",
    ) in ParserPlayground().picker.options or lang == "en"
