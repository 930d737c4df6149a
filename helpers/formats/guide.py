"""The Kimi-K2 guide's `extract_tool_call_info`, rewritten with the same behaviour and bugs."""

from __future__ import annotations

import re
from typing import Any

# The guide's two patterns, in the same spirit: a whole section (non-greedy, so it stops at
# the first section end) and one call inside it. The id pattern `[\w\.]+:\d+` has no `-`.
_GUIDE_SECTION_RE = re.compile(
    r"<\|tool_calls_section_begin\|>(.*?)<\|tool_calls_section_end\|>", re.DOTALL
)
_GUIDE_CALL_RE = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<call_id>[\w\.]+:\d+)\s*"
    r"<\|tool_call_argument_begin\|>\s*(?P<arguments>.*?)\s*<\|tool_call_end\|>",
    re.DOTALL,
)


def guide_extract_tool_call_info(text: str) -> list[dict[str, Any]]:
    """The guide's parser, kept to show its defects; use `parse_kimi` for real work.

    Same behaviour as the guide's `extract_tool_call_info`:
    - no `<|tool_calls_section_begin|>` in the text: returns `[]`;
    - otherwise it reads ONLY the first complete section: calls in a second section are lost;
    - when there is a section begin but no section end (output cut off by `max_tokens`), the
      list of complete sections is empty and taking its first item raises `IndexError`;
    - an id must match `[\\w\\.]+:\\d+`, so a call whose id contains `-` is silently skipped;
    - the name is `id.split(".")[1].split(":")[0]`: a name containing `.` is cut short, and an
      id without the `functions.` prefix (as the Moonshot API writes them) raises `IndexError`.
    """
    if "<|tool_calls_section_begin|>" not in text:
        return []  # no tool calls at all
    sections = _GUIDE_SECTION_RE.findall(text)
    first_section = sections[0]  # IndexError when the section end is missing: kept on purpose
    tool_calls = []
    for match in _GUIDE_CALL_RE.finditer(first_section):
        call_id = match.group("call_id")  # e.g. "functions.get_weather:0"
        name = call_id.split(".")[1].split(":")[0]
        tool_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": match.group("arguments")},
            }
        )
    return tool_calls
