"""The same code prints the same data in both editions: the check behind tests/test_output_parity.py.

`check_parity` (tests/parity.py) compares the editions' code with string literals set aside, and
their outputs by shape only, so a translated data literal passes it: Russian code
`get_weather("Москва")` prints `'weather': 'unknown'` where the English `get_weather("Moscow")`
prints `'Snow'`. The committed outputs of each pair of code cells are compared here instead, in
what a translation leaves alone:

- the numbers (digits) are the same, as a multiset: a count, an index, a status code, a score;
- every Latin word of the Russian output also appears in the English output of the same cell:
  the Russian edition prints no English prose (tests/test_output_language.py), so its Latin words
  are data (names, ids, values, field names), and data does not change with the language. The
  protocol words a Russian message may use as terms (`id`, `json`: `PROTOCOL`) are exempt.

The helpers' messages (`tr()`, `set_language`) and the strings a cell translates for the student
change words of the language only, which both rules ignore.
"""

from __future__ import annotations

import re
from collections import Counter

from output_language import PROTOCOL
from parity import code_cells

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
LATIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TEXT_MIMES = ("text/plain", "text/markdown", "text/html")


def output_text(cell) -> str:
    """Everything a code cell's outputs show as text: streams, results, error name and message."""
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append("".join(out["text"]))
        if out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        for mime in TEXT_MIMES:
            value = out.get("data", {}).get(mime)
            if value is not None:
                parts.append(value if isinstance(value, str) else "".join(value))
    return ANSI.sub("", "\n".join(parts))


def _data_words(text: str) -> set[str]:
    return {w for w in LATIN_WORD.findall(text) if w.lower() not in PROTOCOL}


def output_differences(en, ru, name: str) -> list[str]:
    """Pairs of code cells whose committed outputs show different data in the two editions."""
    problems = []
    for a, b in zip(code_cells(en), code_cells(ru), strict=False):
        text_en, text_ru = output_text(a), output_text(b)
        if text_en == text_ru:
            continue
        where = f"{name} cell {a.get('id', '?')}"
        fix = (
            f"the same code must do the same in both editions: a translated data literal "
            f"(a `ru={{...}}` entry of notebooks/src/{name}.py that changes a value, not a comment "
            "or a message for the student) changes what it computes; translate only comments and "
            f"the strings a student reads, then `scripts/nbbuild.py {name}`"
        )
        numbers_en, numbers_ru = Counter(NUMBER.findall(text_en)), Counter(NUMBER.findall(text_ru))
        if numbers_en != numbers_ru:
            only_en = sorted((numbers_en - numbers_ru).elements())
            only_ru = sorted((numbers_ru - numbers_en).elements())
            problems.append(
                f"{where}: the outputs show other numbers: only en {only_en}, only ru {only_ru}; "
                + fix
            )
        extra = sorted(_data_words(text_ru) - set(LATIN_WORD.findall(text_en)))
        if extra:
            problems.append(
                f"{where}: the Russian output shows {extra}, which the English output of the same "
                "code does not; " + fix
            )
    return problems
