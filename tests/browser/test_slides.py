"""The class decks as the teacher shows them: Chromium opens both reveal.js decks, steps through
every slide, and checks that none overflows the slide area and that the loop diagram, the key
outputs and the exercises are there. Screenshots of every slide go to build/deck-shots/.

    pytest -m browser tests/browser/test_slides.py      # after `bash scripts/browser_setup.sh`
"""

from __future__ import annotations

import pytest
import scripts_support

from helpers.paths import REPO_ROOT

pytestmark = pytest.mark.browser

build_deck = scripts_support.script("build_deck")
SHOTS = REPO_ROOT / "build" / "deck-shots"

# For the current slide: its kind, whether its content is taller or wider than the slide, and
# the parts a test looks for.
SLIDE_JS = """() => {
  const s = Reveal.getCurrentSlide();
  const c = Reveal.getConfig();
  const r = s.getBoundingClientRect();
  const scale = Reveal.getScale();
  const tooWide = Array.from(s.querySelectorAll('pre, svg, table, p, li, h2, h3'))
    .some(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > r.right + 2);
  return {kind: s.dataset.kind, height: s.scrollHeight, limit: c.height, tooWide: tooWide,
          top: r.top, bottom: r.top + s.scrollHeight * scale, viewport: window.innerHeight,
          svg: !!s.querySelector('svg.loop-diagram path'), output: (s.querySelector('pre.output')
          || {}).innerText || '', notes: (s.querySelector('aside.notes') || {}).textContent || '',
          code: s.querySelectorAll('pre code').length, text: s.innerText};
}"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    out = tmp_path_factory.mktemp("deck")
    build_deck.build(out, pdf=False)
    return out


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_slide_fits_and_the_deck_shows_the_loop_outputs_and_exercises(decks, browser, lang):
    page = browser.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((decks / f"deck.{lang}.html").as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    total = page.evaluate("Reveal.getTotalSlides()")
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = []
    for index in range(total):
        page.evaluate(f"Reveal.slide({index})")
        page.wait_for_timeout(50)
        info = page.evaluate(SLIDE_JS)
        page.screenshot(path=str(SHOTS / f"{lang}_{index:02d}_{info['kind']}.png"))
        where = f"{lang} slide {index} ({info['kind']}): {info['text'][:60]!r}"
        assert info["height"] <= info["limit"], f"{where} is {info['height']} px tall"
        assert not info["tooWide"], f"{where} has content wider than the slide"
        assert 0 <= info["top"] and info["bottom"] <= info["viewport"] + 1, where
        assert info["notes"].strip(), f"{where} has no speaker notes"
        seen.append(info)
    page.close()
    assert not [u for u in requests if not u.startswith("file:")], requests  # nothing but the file
    kinds = [s["kind"] for s in seen]
    assert total == len(build_deck.slides(lang)) and kinds.count("step") == sum(
        len(b.steps) for b in build_deck.PATH
    )
    assert any(s["svg"] for s in seen if s["kind"] == "diagram")
    outputs = [s["output"] for s in seen if s["kind"] == "output"]
    assert len(outputs) == len(build_deck.KEY_OUTPUTS)
    assert any("Error code: 400" in o for o in outputs)  # the missing assistant message
    assert any("tool_calls[0] args=" in o for o in outputs)  # a stream assembling
    assert any("get_weather" in o for o in outputs)  # the request's call
    exercises = [s for s in seen if s["kind"] == "exercise"]
    assert len(exercises) == sum(len(b.exercises) for b in build_deck.PATH)
    assert all(s["code"] == 0 for s in exercises)  # a task, never a solution
