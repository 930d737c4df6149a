"""The language of everything the helpers print, display or raise for a student.

A notebook chooses it once, in its setup cell: `set_language("ru")` in the Russian edition,
`set_language("en")` in the English one (the build writes the right one into each edition). Every
student-facing text in `helpers/` is written as a pair and picked at the moment it is shown:

    raise ToolLoopError(tr("the model asked for no tool", "модель не запросила инструмент"))

That is the whole mechanism: no `if lang == ...` anywhere else. Texts that belong to someone else
(a server's own error message, a model's output, JSON) are shown verbatim; a Russian explanation
goes next to them, never instead of them.

Without `set_language`, the language comes from the environment variable `LLM_LANG` (`en` or `ru`),
then defaults to English.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

LANGUAGES = ("en", "ru")
DEFAULT_LANGUAGE = "en"
ENV_VAR = "LLM_LANG"

_chosen: str | None = None


def set_language(lang: str) -> str:
    """Choose the language of the helpers' messages for this kernel ("en" or "ru")."""
    global _chosen
    value = str(lang).strip().lower()
    if value not in LANGUAGES:
        raise ValueError(
            f"set_language: unknown language {lang!r}; use one of {', '.join(LANGUAGES)} / "
            f"неизвестный язык {lang!r}; допустимы: {', '.join(LANGUAGES)}"
        )
    _chosen = value
    return value


def reset_language() -> None:
    """Forget `set_language` (tests use this): the environment or the default applies again."""
    global _chosen
    _chosen = None


def language() -> str:
    """The language in force: `set_language`, else `$LLM_LANG`, else English."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get(ENV_VAR, "").strip().lower()
    return env if env in LANGUAGES else DEFAULT_LANGUAGE


def tr(en: str, ru: str) -> str:
    """Pick the text in the language in force."""
    return ru if language() == "ru" else en


@dataclass(frozen=True)
class Text:
    """A student-facing text in both languages, for constants defined at import time.

    `str(text)` gives the language in force at the moment it is shown, so a module-level
    `Text(...)` follows a later `set_language`.
    """

    en: str
    ru: str

    def __str__(self) -> str:
        return tr(self.en, self.ru)


def russian_plural(n: int, one: str, few: str, many: str) -> str:
    """The Russian form of a noun after the number `n`: 1 вызов, 2 вызова, 5 вызовов, 21 вызов."""
    n = abs(n)
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def count(n: int, en: tuple[str, str], ru: tuple[str, str, str]) -> str:
    """`n` and its noun in the language in force: count(2, ("call", "calls"),
    ("вызов", "вызова", "вызовов")) is "2 calls" or "2 вызова"."""
    noun = (en[0] if n == 1 else en[1]) if language() != "ru" else russian_plural(n, *ru)
    return f"{n} {noun}"


def shorten(text: str, limit: int = 80) -> str:
    """Cut `text` to `limit` characters and say how many were left out: `abcd…[+2 chars]` (the
    one helper for shortening what a message shows)."""
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} {tr('chars', 'симв.')}]"
