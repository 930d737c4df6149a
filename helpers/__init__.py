"""Shared helpers for the tool-calling series: `from helpers import ToolRegistry, connect, ...`.

Names are imported lazily on first use, so `import helpers` stays cheap and starts nothing.
"""

from importlib import import_module
from typing import Any

# The public names, by the module of `helpers` each lives in.
_MODULES = {
    "tools": (
        "ToolRegistry schema_from_function validate_arguments "
        "tool_result_content tool_error_content"
    ),
    "streaming": "ToolCallAccumulator",
    "loop": "run_tool_loop ask_model ToolLoopError ToolLoopLimitError TruncatedToolCallError",
    "kimi_ids": "normalize_kimi_ids",
    "formats": (
        "ParseResult guide_extract_tool_call_info kimi_name_from_id "
        "parse_kimi KimiStreamParser render_kimi_tool_calls "
        "parse_hermes HermesStreamParser render_hermes_tool_calls "
        "parse_qwen_xml QwenXmlStreamParser render_qwen_xml_tool_calls"
    ),
    "templates": "load_tokenizer marker_tokens decode_tool_arguments",
    "display": "show_messages show_tool_calls show_chunks show_raw compare_table",
    "widgets": "StreamViewer ParserPlayground",
    "replay": "connect Connection LiveSettingsError current_mode",
    "i18n": "set_language language tr",
}
_EXPORTS = {
    name: f"helpers.{module}" for module, names in _MODULES.items() for name in names.split()
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
