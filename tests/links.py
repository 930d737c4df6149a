"""Relative links in the repository's Markdown resolve: the check behind tests/test_links.py.

Every relative link of README.md, docs/*.md and the lessons' markdown cells (inline
`[text](target)`, reference definitions `[id]: target`, HTML `href="..."`) must name a file or
folder that exists, and its `#anchor` must exist in the target: a heading's GitHub slug (lower
case, punctuation dropped, spaces to `-`, `-1`, `-2` for repeats) or an explicit
`<a id="...">`/`<a name="...">`. Code (fenced blocks, backticks) is example text, not a link.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HREF = re.compile(r"""\bhref=["']([^"']+)["']""")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
EXPLICIT = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def without_code(markdown: str) -> str:
    return CODE_SPAN.sub(" ", FENCE.sub(" ", markdown))


def link_targets(markdown: str) -> list[str]:
    """The relative link targets of a Markdown text, in order (external URLs and mail left out)."""
    text = without_code(markdown)
    found = INLINE.findall(text) + REFERENCE.findall(text) + HREF.findall(text)
    return [t for t in found if not EXTERNAL.match(t)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, letters, digits, `-` and `_`
    kept, each space a `-`."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    text = text.replace("`", "").lower()
    kept = "".join(
        ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in ("L", "N", "M")
    )
    return kept.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every anchor a Markdown text defines: its headings' slugs (repeats numbered) and ids."""
    found, seen = set(), {}
    for _, heading in HEADING.findall(FENCE.sub(" ", markdown)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found | set(EXPLICIT.findall(markdown))


def notebook_markdown(path: Path) -> str:
    """A notebook's markdown cells, one text (what GitHub renders for its anchors)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "markdown"
    )


def markdown_of(path: Path) -> str:
    return notebook_markdown(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")


def link_problems(path: Path, markdown: str, root: Path) -> list[str]:
    """Each relative link of `markdown` (the text of `path`) whose file or anchor is missing."""
    problems = []
    where = path.relative_to(root)
    for target in link_targets(markdown):
        file_part, _, anchor = unquote(target).partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(
                f"{where}: the link ({target}) names {file_part!r}, which does not exist: fix the "
                "path (relative to this file) or restore the file"
            )
        elif (
            anchor
            and linked.suffix in (".md", ".ipynb")
            and anchor not in anchors(markdown_of(linked))
        ):
            problems.append(
                f"{where}: the link ({target}) points at #{anchor}, which "
                f"{linked.relative_to(root) if linked != path else 'this file'} does not define: "
                "use the slug of an existing heading (GitHub: lower case, punctuation dropped, "
                'spaces to "-") or add <a id="' + anchor + '"></a> there'
            )
    return problems
