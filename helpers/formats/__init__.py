"""Raw tool-call formats: parse and render what Kimi-K2 and Qwen (Hermes style) generate.

- `parse_kimi`, `KimiStreamParser`, `render_kimi_tool_calls`, `kimi_name_from_id`: Kimi-K2 markers;
- `parse_hermes`, `HermesStreamParser`, `render_hermes_tool_calls`: Qwen2.5 `<tool_call>` JSON;
- `guide_extract_tool_call_info`: the Kimi-K2 guide's parser, kept to show its defects.
"""

from helpers.formats._common import ParseResult
from helpers.formats.guide import guide_extract_tool_call_info
from helpers.formats.hermes import (
    HermesStreamParser,
    parse_hermes,
    render_hermes_tool_calls,
)
from helpers.formats.kimi import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    KIMI_MARKERS,
    SECTION_BEGIN,
    SECTION_END,
    KimiStreamParser,
    kimi_name_from_id,
    parse_kimi,
    render_kimi_tool_calls,
)

__all__ = [
    "ARGUMENT_BEGIN",
    "CALL_BEGIN",
    "CALL_END",
    "KIMI_MARKERS",
    "SECTION_BEGIN",
    "SECTION_END",
    "HermesStreamParser",
    "KimiStreamParser",
    "ParseResult",
    "guide_extract_tool_call_info",
    "kimi_name_from_id",
    "parse_hermes",
    "parse_kimi",
    "render_hermes_tool_calls",
    "render_kimi_tool_calls",
]
