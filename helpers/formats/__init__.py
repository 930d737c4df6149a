"""Raw tool-call formats: parse and render what Kimi (K2, K3) and Qwen models generate.

- `parse_kimi`, `KimiStreamParser`, `render_kimi_tool_calls`, `kimi_name_from_id`: Kimi-K2 markers;
- `parse_hermes`, `HermesStreamParser`, `render_hermes_tool_calls`: Qwen2.5 / Qwen3 JSON calls;
- `parse_qwen_xml`, `QwenXmlStreamParser`, `render_qwen_xml_tool_calls`: Qwen3-Coder / Qwen3.5+ XML;
- `parse_kimi_xtml`, `KimiXtmlStreamParser`, `render_kimi_xtml`: Kimi K3's XTML tags;
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
from helpers.formats.kimi_xtml import KimiXtmlStreamParser, parse_kimi_xtml, render_kimi_xtml
from helpers.formats.qwen_xml import (
    QwenXmlStreamParser,
    convert_parameter,
    parse_qwen_xml,
    render_qwen_xml_tool_calls,
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
    "KimiXtmlStreamParser",
    "ParseResult",
    "QwenXmlStreamParser",
    "convert_parameter",
    "guide_extract_tool_call_info",
    "kimi_name_from_id",
    "parse_hermes",
    "parse_kimi",
    "parse_kimi_xtml",
    "parse_qwen_xml",
    "render_hermes_tool_calls",
    "render_kimi_tool_calls",
    "render_kimi_xtml",
    "render_qwen_xml_tool_calls",
]
