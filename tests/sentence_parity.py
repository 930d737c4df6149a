"""Sentence-level parity of the two editions' prose: the checks behind tests/test_sentence_parity.py.

`markdown_shape` (tests/output_language.py) compares whole cells: paragraphs, links, code spans.
A sentence added to one edition, or left out of it, keeps all three. Here each markdown cell is
cut into the units a reader reads (a paragraph, a list item, a table row: `markdown_blocks`) and
the units are compared one by one, in order:

- the same number of units;
- in each unit, the same number of sentences (a sentence ends with `.`, `!`, `?` or `…` before
  a capital letter, a digit, a backtick or the end; abbreviations and decimals do not end one);
- in each unit, as many code spans, and every code span of the Russian unit without Cyrillic is
  one of the English unit's (a placeholder such as `<what went wrong>` may be translated).

A translation may split one long sentence in two on purpose; each such unit is an entry of
`ALLOWED` below (lesson, the English unit's first words, what differs, why), and an entry that no
unit needs any more fails the suite, so the list only shrinks.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from output_language import CODE_SPAN, CYRILLIC, markdown_blocks

# Abbreviations that end with a full stop inside a sentence (case-sensitive).
ABBREVIATION = re.compile(
    r"(?<![\w.])(?:e\.g|i\.e|etc|vs|cf|approx|т\. ?е|т\. ?д|т\. ?п|т\. ?к|т\. ?н|см|ср|др|напр"
    r"|англ|рис|стр|гл|им|с\. ?\d+)\."
)
URL = re.compile(r"https?://\S*[^\s.,;:!?)»]")
DECIMAL = re.compile(r"\d\.\d")
LIST_MARK = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
HEADING_NUMBER = re.compile(r"^#+\s*\d+\.\s*")
SENTENCE_END = re.compile(r"(?<=[.!?…])[\"»)*_]*\s+(?=[\"«(*_\[]*[A-ZА-ЯЁ0-9`])")

# (lesson, the English unit's first words, what differs, why): "sentences +1" allows exactly one
# sentence more in the Russian unit (a split), "sentences -1" one fewer (a merge).
SPLIT = "the Russian splits one long English sentence in two; the facts are the same"
MERGE = "the Russian joins two English sentences in one; the facts are the same"
ALLOWED: tuple[tuple[str, str, str, str], ...] = (
    ("00_start", "- It **thinks** before it answers (lesson 06).", "sentences +1", SPLIT),
    ("00_start", "Lesson 04 also sends a rendered prompt", "sentences +1", SPLIT),
    ("02_sync_loop", "Expect engines to differ in the details", "sentences +1", SPLIT),
    ("03_streaming", "One cell connects to the model.", "sentences +1", SPLIT),
    ("03_streaming", "- A thinking model (Kimi K2.6 or K2.7-Code", "sentences +1", SPLIT),
    ("09_kimi_k3_xtml", "- **K3's named `tool_choice`**", "sentences +1", SPLIT),
    ("11_untrusted_results", "- OWASP Top 10 for LLM Applications", "sentences -1", MERGE),
    (
        "02_sync_loop",
        "`run_tool_loop(client, messages, registry, model=...)` packages",
        "code spans",
        "the Russian says «в историю» (into the history) for `messages`",
    ),
)


def sentences(unit: str) -> list[str]:
    """The sentences of one unit of prose (code spans and URLs cannot end one)."""
    text = CODE_SPAN.sub("`c`", unit)
    text = URL.sub("URL", text)
    text = DECIMAL.sub("0", text)
    text = ABBREVIATION.sub("A", text)
    text = HEADING_NUMBER.sub("", LIST_MARK.sub("", text.strip()))
    return [part for part in SENTENCE_END.split(text) if part.strip()]


@dataclass(frozen=True)
class Difference:
    """One unit whose editions differ: where, what, and the text a maintainer fixes."""

    lesson: str
    cell: str
    en: str
    ru: str
    what: str  # "units", "sentences +N" / "sentences -N" (Russian minus English) or "code spans"
    detail: str

    def allowed(self) -> bool:
        return any(
            lesson == self.lesson and self.en.startswith(start) and what == self.what
            for lesson, start, what, _ in ALLOWED
        )

    def message(self) -> str:
        head = f"{self.lesson} cell {self.cell}: {self.detail}\n    en: {self.en[:110]!r}"
        if self.ru:
            head += f"\n    ru: {self.ru[:110]!r}"
        return head + (
            "\n    -> say the same thing in both editions (add the missing sentence to the other "
            "edition, or delete the extra one) in notebooks/src/"
            f"{self.lesson}.py, then `scripts/nbbuild.py --no-execute {self.lesson}`; if one "
            "edition splits a sentence on purpose, add the unit to ALLOWED in "
            "tests/sentence_parity.py with the reason"
        )


def _code_spans(unit: str) -> Counter[str]:
    return Counter(CODE_SPAN.findall(unit))


def unit_differences(lesson: str, cell: str, en: str, ru: str) -> list[Difference]:
    """The units of one markdown cell that differ between its editions."""
    units_en, units_ru = markdown_blocks(en), markdown_blocks(ru)
    if len(units_en) != len(units_ru):
        first = next(
            (
                i
                for i, (a, b) in enumerate(zip(units_en, units_ru, strict=False))
                if len(sentences(a)) != len(sentences(b))
            ),
            min(len(units_en), len(units_ru)),
        )
        at_en = units_en[first] if first < len(units_en) else ""
        at_ru = units_ru[first] if first < len(units_ru) else ""
        detail = (
            f"{len(units_en)} paragraphs/list items/table rows in en, {len(units_ru)} in ru; "
            f"the first that differs is number {first + 1}"
        )
        return [Difference(lesson, cell, at_en, at_ru, "units", detail)]
    found = []
    for number, (a, b) in enumerate(zip(units_en, units_ru, strict=True), 1):
        count_en, count_ru = len(sentences(a)), len(sentences(b))
        if count_en != count_ru:
            detail = (
                f"unit {number} has {count_en} sentence(s) in en and {count_ru} in ru: "
                "a sentence is in one edition only"
            )
            what = f"sentences {count_ru - count_en:+d}"
            found.append(Difference(lesson, cell, a, b, what, detail))
        spans_en, spans_ru = _code_spans(a), _code_spans(b)
        latin_ru = Counter({s: n for s, n in spans_ru.items() if not CYRILLIC.search(s)})
        extra = sorted((latin_ru - spans_en).elements())
        if sum(spans_en.values()) != sum(spans_ru.values()) or extra:
            detail = (
                f"unit {number} has {sum(spans_en.values())} code span(s) in en and "
                f"{sum(spans_ru.values())} in ru" + (f"; only ru has {extra}" if extra else "")
            )
            found.append(Difference(lesson, cell, a, b, "code spans", detail))
    return found


def lesson_differences(lesson: str, cells, ids: list[str]) -> list[Difference]:
    """Every differing unit of a lesson's markdown cells (`cells` as nbbuild reads them)."""
    return [
        difference
        for cell, cell_id in zip(cells, ids, strict=True)
        if cell.kind == "markdown"
        for difference in unit_differences(lesson, cell_id, cell.en, cell.ru)
    ]
