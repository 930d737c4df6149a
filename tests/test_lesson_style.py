"""The lesson style of docs/authoring.md, checked on the committed notebooks (no kernel).

A lesson's steps teach the rule; provenance (PR numbers, version histories, "unconfirmed") lives in
one folded reference block after the Summary. What can be checked mechanically is checked here,
every rule for every lesson. `python tests/test_lesson_style.py` prints the counts for every
lesson.
"""

from __future__ import annotations

import re
import sys

import nbformat
import pytest

from helpers.lessons import lesson_names
from helpers.paths import NOTEBOOKS_DIR

LANGS = ("en", "ru")
# Lessons written to the style; a lesson from this number on must pass every rule (all of them).
STYLED_FROM = 0
REFERENCE_OPEN = {
    "en": "<details><summary>Reference</summary>",
    "ru": "<details><summary>Справка</summary>",
}
SUMMARY = {"en": "## Summary", "ru": "## Итоги"}
EXERCISES = {"en": "## Exercises", "ru": "## Упражнения"}
# The anchor the steps' "([reference](#reference))" links point at: the line right before
# <details>, outside it, so a click lands on the folded block's summary line.
ANCHOR = '<a id="reference"></a>'
MAX_HEDGES = 2
# Provenance a student does not need in a step: pull requests and issue numbers.
PR_NUMBER = re.compile(r"\bPR\s*#?\d+|(?<![\w&])#\d{4,}\b|/pull/\d+|\bpull/\d+|\w#\d{3,}\b")
# A version history: an engine or package name followed by a release number.
VERSION = re.compile(
    r"\b(?:vLLM|SGLang|llama\.cpp|openai|transformers|Ollama)\s*(?:>=|<=|==|>|<|v)?\s*\d+\.\d+",
    re.IGNORECASE,
)
# Hedges: words that tell the student a fact is shaky. A lesson's main text may carry two.
HEDGES = {
    "en": re.compile(
        r"\b(?:unconfirmed|not confirmed|unverified|not verified|reportedly|users report"
        r"|as users (?:report|quote)|is reported|are reported|secondary source|third-party"
        r"|apparently|we could not check|not (?:yet )?checked)\b",
        re.IGNORECASE,
    ),
    "ru": re.compile(
        r"не подтвержд\w*|не провер\w*|по сообщениям|вторичн\w+ источник\w*|сторонн\w+"
        r"|как сообщают|пользователи сообщают|судя по отзывам|якобы|по слухам",
        re.IGNORECASE,
    ),
}


def markdown_cells(lesson: str, lang: str) -> list[str]:
    """The markdown cells of one committed edition, in order."""
    notebook = nbformat.read(NOTEBOOKS_DIR / lang / f"{lesson}.ipynb", as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def split_reference(cells: list[str], lang: str) -> tuple[list[str], list[int]]:
    """The main text (every markdown cell with any reference block cut out) and the indices of
    the cells that open a reference block."""
    main, blocks = [], []
    for index, text in enumerate(cells):
        if "<details" in text:
            blocks.append(index)
            head, _, rest = text.partition("<details")
            _, _, tail = rest.partition("</details>")
            text = head + tail
        main.append(text)
    return main, blocks


def style_problems(lesson: str, lang: str, cells: list[str], *, styled: bool) -> list[str]:
    """Every breach of the lesson style in one edition's markdown cells."""
    where = f"{lang}/{lesson}"
    main, blocks = split_reference(cells, lang)
    problems = []
    if len(blocks) > 1 or (styled and len(blocks) != 1):
        problems.append(f"{where}: {len(blocks)} reference blocks, expected exactly one")
    for index in blocks:
        text = cells[index]
        if REFERENCE_OPEN[lang] not in text:
            problems.append(f"{where}: the reference block must open with {REFERENCE_OPEN[lang]!r}")
        if "</details>" not in text:
            problems.append(f"{where}: the reference block is not closed with </details>")
        if not text.partition("<details")[0].rstrip().endswith(ANCHOR):
            problems.append(f"{where}: the line right before <details> must be {ANCHOR!r}")
        summary = [i for i, c in enumerate(cells) if re.search(rf"^{SUMMARY[lang]}\s*$", c, re.M)]
        exercises = [i for i, c in enumerate(cells) if c.lstrip().startswith(EXERCISES[lang])]
        after = cells[index + 1 :]
        if not summary or summary[-1] > index:
            problems.append(f"{where}: the reference block must come after {SUMMARY[lang]!r}")
        if exercises and exercises[0] < index:
            problems.append(f"{where}: the reference block must come before {EXERCISES[lang]!r}")
        elif after and not after[0].lstrip().startswith(EXERCISES[lang]):
            if exercises or not all(re.match(r"\s*\[(?:Next|Дальше)", c) for c in after):
                problems.append(
                    f"{where}: only the exercises and the Next link may follow the reference block"
                )
    if not styled:
        hedges = [m.group(0) for text in main for m in HEDGES[lang].finditer(text)]
        if len(hedges) > MAX_HEDGES:
            problems.append(f"{where}: {len(hedges)} hedges outside the reference block: {hedges}")
        return problems
    for text in main:
        for pattern, what in ((PR_NUMBER, "a PR or issue number"), (VERSION, "a version")):
            for match in pattern.finditer(text):
                problems.append(f"{where}: {what} outside the reference block: {match.group(0)!r}")
    hedges = [m.group(0) for text in main for m in HEDGES[lang].finditer(text)]
    if len(hedges) > MAX_HEDGES:
        problems.append(f"{where}: {len(hedges)} hedges outside the reference block: {hedges}")
    return problems


def counts(lesson: str, lang: str) -> tuple[int, int, int]:
    """(hedges, PR numbers, reference blocks) of one edition, for the report."""
    cells = markdown_cells(lesson, lang)
    main, blocks = split_reference(cells, lang)
    hedges = sum(len(HEDGES[lang].findall(text)) for text in main)
    prs = sum(len(PR_NUMBER.findall(text)) for text in main)
    return hedges, prs, len(blocks)


def styled(lesson: str) -> bool:
    return int(lesson[:2]) >= STYLED_FROM


# ---------------------------------------------------------------------------------------------
# The checker on planted defects: each rule can fail.

GOOD = [
    "# T\n\n**Goal:** g",
    "## 1. Step\n\nSend the reasoning back.",
    "## Summary\n\n- the rule",
    '<a id="reference"></a>\n<details><summary>Reference</summary>\n\n- vLLM PR #27752, 0.17.x;'
    " unconfirmed.\n\n</details>",
    "## Exercises\n\n...",
    "[Next: 07 X](07_x.ipynb)",
]


def test_the_checker_passes_a_good_lesson():
    assert style_problems("06_x", "en", GOOD, styled=True) == []


@pytest.mark.parametrize(
    ("cells", "words"),
    [
        (GOOD[:1] + ["## 1. Step\n\nFixed in PR #27752."] + GOOD[2:], "a PR or issue number"),
        (GOOD[:1] + ["## 1. Step\n\nsee vllm#33616"] + GOOD[2:], "a PR or issue number"),
        (GOOD[:1] + ["## 1. Step\n\nsee github.com/x/y/pull/12"] + GOOD[2:], "PR or issue"),
        (
            GOOD[:1] + ["## 1. Step\n\nThe field is `reasoning` on vLLM >= 0.17."] + GOOD[2:],
            "version",
        ),
        (
            GOOD[:1] + ["## 1. Step\n\nUnconfirmed; reportedly; users report it."] + GOOD[2:],
            "3 hedges",
        ),
        ([c for c in GOOD if "<details>" not in c], "0 reference blocks"),
        (GOOD[:4] + GOOD[3:], "2 reference blocks"),
        ([GOOD[0], GOOD[3], GOOD[1], GOOD[2], GOOD[4]], "after '## Summary'"),
        (GOOD[:4] + ["## 2. Another step"] + GOOD[4:], "only the exercises"),
        (GOOD[:3] + ["<details><summary>Sources</summary>\n\nx\n\n</details>"] + GOOD[4:], "open"),
        (GOOD[:3] + ["<details><summary>Reference</summary>\n\nx"] + GOOD[4:], "not closed"),
        # lesson 10 once had both of these: the anchor inside the block, the block after the
        # exercises (only the Next link followed it); lesson 11 had no anchor at all
        (
            GOOD[:3]
            + ["<details><summary>Reference</summary>\n\n" + ANCHOR + "\n\nx\n\n</details>"]
            + GOOD[4:],
            "right before <details>",
        ),
        (GOOD[:3] + ["<details><summary>Reference</summary>\n\nx\n\n</details>"], "right before"),
        (GOOD[:3] + GOOD[4:5] + GOOD[3:4] + GOOD[5:], "before '## Exercises'"),
    ],
)
def test_the_checker_catches_a_planted_defect(cells, words):
    problems = style_problems("06_x", "en", cells, styled=True)
    assert any(words in p for p in problems), problems


def test_the_russian_hedges_are_counted():
    cells = GOOD[:1] + [
        "## 1. Шаг\n\nЭто не подтверждено; по сообщениям пользователей; из вторичного источника."
    ]
    cells += ["## Итоги", ANCHOR + "\n<details><summary>Справка</summary>\n\n</details>"]
    problems = style_problems("08_x", "ru", cells, styled=True)
    assert any("3 hedges" in p for p in problems), problems


def test_an_unstyled_lesson_is_held_to_the_hedge_budget_only():
    cells = ["## 1. Step\n\nFixed in PR #1234.", "## Summary"]
    assert style_problems("02_x", "en", cells, styled=False) == []
    cells.append("Unconfirmed, reportedly, apparently.")
    assert style_problems("02_x", "en", cells, styled=False)


# ---------------------------------------------------------------------------------------------
# The committed lessons.


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("lesson", lesson_names())
def test_lesson_style(lesson, lang):
    problems = style_problems(lesson, lang, markdown_cells(lesson, lang), styled=styled(lesson))
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    print(f"{'lesson':24} {'lang':4} {'hedges':>6} {'PRs':>4} {'blocks':>6}")
    for name in lesson_names():
        for language in LANGS:
            h, p, b = counts(name, language)
            print(f"{name:24} {language:4} {h:6} {p:4} {b:6}")
    sys.exit(0)
