"""`watch_stream`: the stream viewer shown first and redrawn as each chunk arrives, so that a paced
replay (`LLM_REPLAY_PACE=1`) or a real model is seen arriving, not only waited for."""

from __future__ import annotations

import time

from test_widgets import CHUNKS

import helpers.widgets as hw


def test_the_viewer_is_shown_before_the_first_chunk_and_drawn_after_each(monkeypatch):
    events: list[tuple[str, int]] = []
    shown: list[object] = []

    def fake_display(widget):  # what Jupyter does with it: render, then follow its updates
        shown.append(widget)
        events.append(("displayed", 0))
        widget.view.observe(
            lambda change: events.append(("drawn", len(widget.chunks))), names="value"
        )

    monkeypatch.setattr("IPython.display.display", fake_display)

    def arriving():
        for n, chunk in enumerate(CHUNKS, 1):
            time.sleep(0.01)  # a model typing (the paced replay waits 55 ms a token)
            events.append(("arrived", n))
            yield chunk

    chunks = hw.watch_stream(arriving())
    assert chunks == CHUNKS and len(shown) == 1
    assert events[0] == ("displayed", 0)
    # Each chunk is drawn right after it arrives, before the next one comes.
    expected = [("displayed", 0)]
    for n in range(1, len(CHUNKS) + 1):
        expected += [("arrived", n), ("drawn", n)]
    assert events == expected
    viewer = shown[0]
    assert viewer.slider.max == len(CHUNKS) and viewer.play.max == len(CHUNKS)
    assert f"chunk {len(CHUNKS)} of {len(CHUNKS)}" in viewer.view.value


def test_an_empty_stream_leaves_the_empty_view(monkeypatch):
    monkeypatch.setattr("IPython.display.display", lambda widget: None)
    assert hw.watch_stream(iter([]), play=False) == []
