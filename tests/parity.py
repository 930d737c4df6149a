"""RU/EN parity of two editions of a notebook: the same cells, the same code once comments and
the text of strings are set aside, outputs of the same shape. Used for the committed notebooks
(`test_notebooks.py`) and the student edition (`test_student_edition.py`)."""

from __future__ import annotations

import io
import tokenize


def code_cells(nb) -> list:
    """The code cells of a notebook, in order."""
    return [c for c in nb.cells if c.cell_type == "code"]


# Python 3.12+ (PEP 701) tokenizes an f-string as FSTRING_START, its parts, FSTRING_END (3.14 does
# the same for t-strings); 3.10 and 3.11 give one STRING token. Both are folded into one "S".
_STRING_STARTS = {
    getattr(tokenize, n) for n in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, n)
}
_STRING_ENDS = {
    getattr(tokenize, n) for n in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, n)
}


def _kept_tokens(src: str) -> list[tuple[int, str]]:
    """(type, text) of the tokens that parity compares: no comments or blank lines, every string
    literal (an f-string whole, with what is inside its braces) as "S", the same on every Python."""
    kept: list[tuple[int, str]] = []
    depth = 0  # f-strings open at this point (they nest)
    for token in tokenize.generate_tokens(io.StringIO(src + "\n").readline):
        if token.type in _STRING_STARTS:
            depth += 1
            if depth == 1:
                kept.append((tokenize.STRING, "S"))
        elif token.type in _STRING_ENDS:
            depth -= 1
        elif depth:
            continue
        elif token.type == tokenize.STRING:
            kept.append((tokenize.STRING, "S"))
        elif token.type == tokenize.NEWLINE:
            kept.append((token.type, "\n"))
        elif token.type not in (tokenize.COMMENT, tokenize.NL):
            kept.append((token.type, token.string))
    return kept


def strip_comments(src: str) -> str:
    """Code without comments, blank lines or the text of string literals (tokenize-based, as in
    the before-stop hook): an edition may translate comments and the strings it shows a student."""
    try:
        return tokenize.untokenize(_kept_tokens(src))
    except (tokenize.TokenError, SyntaxError):
        return src  # not Python (a magic?): then it must match character for character


def cell_where(name: str, cell) -> str:
    """`<lesson> cell <id>`: where a problem is, for a message."""
    return f"{name} cell {cell.get('id', '?')}"


def cell_shape(cell) -> tuple:
    """What must match between editions: kind, tags, hidden flag."""
    hidden = bool(cell.metadata.get("jupyter", {}).get("source_hidden"))
    return cell.cell_type, tuple(cell.metadata.get("tags", [])), hidden


def comparable_outputs(cell) -> list[tuple]:
    """The structure of a cell's outputs, which both editions share (their text is in each
    edition's language): kind, stream name, MIME types, exception class; consecutive streams
    joined (flush timing splits them)."""
    shapes: list[tuple] = []
    for out in cell.get("outputs", []):
        shape = (
            out["output_type"],
            out.get("name"),
            tuple(sorted(out.get("data", {}))),
            out.get("ename"),
        )
        if not (shapes and shape[0] == "stream" and shapes[-1] == shape):
            shapes.append(shape)
    return shapes


def check_parity(en, ru, name: str = "") -> list[str]:
    """Same cell sequence; code equal once comments and strings are stripped; outputs of the same shape."""
    shapes_en, shapes_ru = [cell_shape(c) for c in en.cells], [cell_shape(c) for c in ru.cells]
    if shapes_en != shapes_ru:
        for i, (a, b) in enumerate(zip(shapes_en, shapes_ru, strict=False)):
            if a != b:
                return [f"{name}: cell {i} is {a} in en but {b} in ru (kind, tags, hidden)"]
        return [f"{name}: en has {len(shapes_en)} cells, ru has {len(shapes_ru)}"]
    problems = []
    for a, b in zip(code_cells(en), code_cells(ru), strict=True):
        if strip_comments(a.source) != strip_comments(b.source):
            problems.append(
                f"{cell_where(name, a)}: code differs between en and ru beyond comments"
            )
        elif comparable_outputs(a) != comparable_outputs(b):
            problems.append(
                f"{cell_where(name, a)}: outputs differ between en and ru (one edition is stale?)"
            )
    return problems
