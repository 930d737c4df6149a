"""Shared helpers for the tool-calling series: `from helpers import ToolRegistry, connect, ...`.

Names are imported lazily on first use, so `import helpers` stays cheap and starts nothing.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "ToolRegistry": "helpers.tools",
    "tool_result_content": "helpers.tools",
    "tool_error_content": "helpers.tools",
    "schema_from_function": "helpers.tools",
    "validate_arguments": "helpers.tools",
    "ToolCallAccumulator": "helpers.streaming",
    "run_tool_loop": "helpers.loop",
    "ask_model": "helpers.loop",
    "ToolLoopError": "helpers.loop",
    "ToolLoopLimitError": "helpers.loop",
    "TruncatedToolCallError": "helpers.loop",
    "normalize_kimi_ids": "helpers.kimi_ids",
    "ParseResult": "helpers.formats",
    "parse_kimi": "helpers.formats",
    "KimiStreamParser": "helpers.formats",
    "parse_hermes": "helpers.formats",
    "HermesStreamParser": "helpers.formats",
    "guide_extract_tool_call_info": "helpers.formats",
    "render_kimi_tool_calls": "helpers.formats",
    "render_hermes_tool_calls": "helpers.formats",
    "kimi_name_from_id": "helpers.formats",
    "parse_qwen_xml": "helpers.formats",
    "QwenXmlStreamParser": "helpers.formats",
    "render_qwen_xml_tool_calls": "helpers.formats",
    "load_tokenizer": "helpers.templates",
    "marker_tokens": "helpers.templates",
    "decode_tool_arguments": "helpers.templates",
    "show_messages": "helpers.display",
    "show_tool_calls": "helpers.display",
    "show_chunks": "helpers.display",
    "show_raw": "helpers.display",
    "compare_table": "helpers.display",
    "StreamViewer": "helpers.widgets",
    "ParserPlayground": "helpers.widgets",
    "connect": "helpers.replay",
    "Connection": "helpers.replay",
    "LiveSettingsError": "helpers.replay",
    "current_mode": "helpers.replay",
    "set_language": "helpers.i18n",
    "language": "helpers.i18n",
    "tr": "helpers.i18n",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import an exported name from its module the first time it is asked for."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'helpers' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
