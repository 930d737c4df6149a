"""tests/parity.py gives the same answer on every Python the README promises (3.10+): Python 3.12
tokenizes an f-string as several tokens (PEP 701), 3.10 and 3.11 as one."""

from __future__ import annotations

import tokenize

from parity import _kept_tokens, strip_comments

EN = "print(f\"{len(calls)} call(s) for {city!r}: {f'{n:>3}'}\")  # the count"
RU = "print(f\"{len(calls)} вызов(ов) для {city!r}: {f'{n:>3}'}\")  # число"


def test_an_f_string_is_one_string_on_every_python():
    assert _kept_tokens(EN) == [
        (tokenize.NAME, "print"),
        (tokenize.OP, "("),
        (tokenize.STRING, "S"),
        (tokenize.OP, ")"),
        (tokenize.NEWLINE, "\n"),
        (tokenize.ENDMARKER, ""),
    ]


def test_a_translated_f_string_keeps_parity_and_changed_code_does_not():
    assert strip_comments(EN) == strip_comments(RU)
    assert strip_comments(EN) != strip_comments(EN.replace("print(", "len("))
    assert strip_comments('x = f"{a}" + "b"') != strip_comments('x = f"{a}"')
