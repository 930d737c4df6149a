"""The history and tools checks a real chat server makes, so replay fails the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# The texts below are OpenAI's (their misspelling "preceeding" included), as reported publicly.
ORPHAN_TOOL_MESSAGE = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
UNANSWERED_TOOL_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
UNKNOWN_TOOL_CALL_ID = (
    "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
)
ROLES = ("system", "assistant", "user", "function", "tool", "developer")


@dataclass
class ApiError(Exception):
    """An OpenAI-shaped error: HTTP status plus the fields of the `error` object."""

    status: int
    message: str
    type: str = "invalid_request_error"
    param: str | None = None
    code: str | None = None
    headers: dict[str, str] = field(default_factory=lambda: {"x-should-retry": "false"})

    def __str__(self) -> str:
        """The message alone, as the openai SDK would show it."""
        return self.message

    def body(self) -> dict[str, Any]:
        """The JSON body a server sends for this error."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


def _quoted(value: object) -> str:
    """A value as OpenAI quotes it in an error text: strings in single quotes, the rest as JSON."""
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _type_name(value: Any) -> str:
    """OpenAI's name for a JSON value's type, used in its 'Invalid type' messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _invalid_type(param: str, expected: str, value: Any) -> ApiError:
    """The 'Invalid type' error OpenAI gives for a field of the wrong JSON type."""
    got = _type_name(value)
    return ApiError(
        400,
        f"Invalid type for '{param}': expected {expected}, but got {got} instead.",
        param=param,
        code="invalid_type",
    )


def _missing(param: str) -> ApiError:
    """The 'Missing required parameter' error."""
    return ApiError(
        400,
        f"Missing required parameter: '{param}'.",
        param=param,
        code="missing_required_parameter",
    )


def check_tools(tools: Any) -> None:
    """Raise ApiError unless `tools` is a list of {"type": "function", "function": {...}}."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _invalid_type("tools", "an array", tools)
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise _invalid_type(where, "an object", tool)
        if "type" not in tool:
            raise _missing(f"{where}.type")
        if tool["type"] != "function":
            raise ApiError(
                400,
                f"Invalid value: {_quoted(tool['type'])}. Supported values are: 'function'.",
                param=f"{where}.type",
                code="invalid_value",
            )
        fn = tool.get("function")
        if fn is None:
            raise _missing(f"{where}.function")
        if not isinstance(fn, dict):
            raise _invalid_type(f"{where}.function", "an object", fn)
        if "name" not in fn:
            raise _missing(f"{where}.function.name")
        if not isinstance(fn["name"], str):
            raise _invalid_type(f"{where}.function.name", "a string", fn["name"])
        if not fn["name"]:
            raise ApiError(
                400,
                f"Invalid '{where}.function.name': empty string. Expected a string with minimum "
                "length 1, but got an empty string instead.",
                param=f"{where}.function.name",
                code="empty_string",
            )
        if "parameters" in fn and not isinstance(fn["parameters"], dict):
            raise _invalid_type(f"{where}.function.parameters", "an object", fn["parameters"])
        if "description" in fn and not isinstance(fn["description"], str):
            raise _invalid_type(f"{where}.function.description", "a string", fn["description"])


def _call_ids(message: dict[str, Any]) -> list[str]:
    """The ids of an assistant message's tool calls, in order (empty when it has none)."""
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        return []
    return [c.get("id") for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def _unanswered(index: int, pending: list[str]) -> ApiError:
    """The error for an assistant message whose calls were not all answered."""
    return ApiError(
        400,
        UNANSWERED_TOOL_CALLS.format(ids=", ".join(pending)),
        param=f"messages.[{index}].role",
    )


def check_messages(messages: Any) -> None:
    """Raise ApiError when the history breaks the rules a real server enforces."""
    if messages is None:
        raise _missing("messages")
    if not isinstance(messages, list):
        raise _invalid_type("messages", "an array", messages)
    if not messages:
        raise ApiError(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    calls: list[str] | None = None  # ids of the assistant message the current tool run answers
    pending: list[str] = []
    opened_at = -1
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _invalid_type(f"messages[{i}]", "an object", message)
        role = message.get("role")
        if role is None:
            raise _missing(f"messages[{i}].role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
            raise ApiError(
                400,
                f"Invalid value: {_quoted(role)}. Supported values are: {supported}.",
                param=f"messages[{i}].role",
                code="invalid_value",
            )
        if role == "tool":
            if calls is None:
                raise ApiError(400, ORPHAN_TOOL_MESSAGE, param=f"messages.[{i}].role")
            call_id = message.get("tool_call_id")
            if call_id is None:
                raise _missing(f"messages[{i}].tool_call_id")
            if call_id not in calls:
                raise ApiError(
                    400,
                    UNKNOWN_TOOL_CALL_ID.format(id=call_id),
                    param=f"messages.[{i}].tool_call_id",
                )
            if call_id in pending:
                pending.remove(call_id)
            continue
        if pending:
            raise _unanswered(opened_at, pending)
        calls = None
        if role == "assistant":
            if message.get("tool_calls") is not None and not isinstance(
                message["tool_calls"], list
            ):
                raise _invalid_type(f"messages[{i}].tool_calls", "an array", message["tool_calls"])
            ids = _call_ids(message)
            if ids:
                calls, pending, opened_at = ids, list(ids), i
    if pending:
        raise _unanswered(opened_at, pending)


def check_chat_request(body: Any) -> None:
    """Raise ApiError when a chat completions body would be rejected by a real server."""
    if not isinstance(body, dict):
        raise _invalid_type("body", "an object", body)
    if "model" not in body:
        raise ApiError(400, "you must provide a model parameter", param=None)
    check_messages(body.get("messages"))
    check_tools(body.get("tools"))
    check_thinking(body)


# --- Moonshot thinking models -------------------------------------------------------------------
# Moonshot's wording, as users report it (the index is the message's position in `messages`).
REASONING_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at "
    "index {index}"
)
# Reported by third parties (AstrBot PR #7825), not found in Moonshot's own docs: unconfirmed.
REQUIRED_WITH_THINKING = "tool_choice 'required' is incompatible with thinking enabled"
# Moonshot platform ids of models that think by default (kimi-k2-thinking always does).
MOONSHOT_THINKING_MODELS = frozenset(
    {"kimi-k2-thinking", "kimi-k2-thinking-turbo", "kimi-k2.5", "kimi-k2.6"}
)


def thinking_enabled(body: dict[str, Any]) -> bool:
    """Whether a Moonshot API request runs a thinking model with thinking on (the default)."""
    if body.get("model") not in MOONSHOT_THINKING_MODELS:
        return False
    thinking = body.get("thinking")
    disabled = isinstance(thinking, dict) and thinking.get("type") == "disabled"
    return not disabled or body.get("model", "").startswith("kimi-k2-thinking")


def check_thinking(body: dict[str, Any]) -> None:
    """Raise the 400s Moonshot gives with thinking on: `tool_choice="required"`, and an
    assistant message with `tool_calls` sent back without its `reasoning_content`."""
    if not thinking_enabled(body):
        return
    if body.get("tool_choice") == "required":
        raise ApiError(400, REQUIRED_WITH_THINKING, param="tool_choice")
    for index, message in enumerate(body.get("messages") or []):
        if (
            isinstance(message, dict)
            and message.get("role") == "assistant"
            and message.get("tool_calls")
            and not message.get("reasoning_content")
        ):
            raise ApiError(400, REASONING_MISSING.format(index=index), param=None)
