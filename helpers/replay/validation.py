"""The history and tools checks a real chat server makes, so replay fails the same way."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from helpers.arguments import json_kind
from helpers.catalog import MODEL_NAMES

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


def _invalid(param: str, code: str, message: str) -> ApiError:
    """OpenAI's 400 for the request field `param`, with its error `code`."""
    return ApiError(400, message, param=param, code=code)


def _invalid_type(param: str, expected: str, value: Any) -> ApiError:
    """The 'Invalid type' error OpenAI gives for a field of the wrong JSON type."""
    got = json_kind(value).en
    message = f"Invalid type for '{param}': expected {expected}, but got {got} instead."
    return _invalid(param, "invalid_type", message)


def _missing(param: str) -> ApiError:
    """The 'Missing required parameter' error."""
    return _invalid(param, "missing_required_parameter", f"Missing required parameter: '{param}'.")


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
            message = f"Invalid value: {_quoted(tool['type'])}. Supported values are: 'function'."
            raise _invalid(f"{where}.type", "invalid_value", message)
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
            raise _invalid(
                f"{where}.function.name",
                "empty_string",
                f"Invalid '{where}.function.name': empty string. Expected a string with minimum "
                "length 1, but got an empty string instead.",
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
        raise _invalid(
            "messages",
            "empty_array",
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
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
            message = f"Invalid value: {_quoted(role)}. Supported values are: {supported}."
            raise _invalid(f"messages[{i}].role", "invalid_value", message)
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


# Sampling and length fields a recording ignores but a real server checks: (kind, least value).
NUMBER_FIELDS = {
    "temperature": ("a decimal", 0),
    "top_p": ("a decimal", 0),
    "max_tokens": ("an integer", 1),
    "max_completion_tokens": ("an integer", 1),
    "n": ("an integer", 1),
}


def check_numbers(body: dict[str, Any]) -> None:
    """Raise OpenAI's 400 for a sampling or length field of the wrong type or below its least
    value (`temperature: "hot"`, `max_tokens: -1`): replay ignores them, a live server does not."""
    for param, (kind, least) in NUMBER_FIELDS.items():
        value = body.get(param)
        if value is None:
            continue
        whole = kind == "an integer"
        if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
            raise _invalid_type(param, kind, value)
        if not least <= value < float("inf"):  # NaN and infinity fail too
            raise ApiError(
                400,
                f"Invalid '{param}': {kind.split()[-1]} below minimum value. Expected a value "
                f">= {least}, but got {value} instead.",
                param=param,
                code=f"{kind.split()[-1]}_below_min_value",
            )
    if not isinstance(body.get("stream", False), bool | None):
        raise _invalid_type("stream", "a boolean", body["stream"])


def check_chat_request(body: Any, engine: str | None = None) -> None:
    """Raise ApiError when a chat completions body would be rejected by a real server.

    `engine` is the replay path's engine profile (None: the provider's default). The Moonshot
    rules apply to a Moonshot platform model id, and to the `moonshot` profile, whose cassettes
    name the model as self-hosted engines do."""
    if not isinstance(body, dict):
        raise _invalid_type("body", "an object", body)
    if "model" not in body:
        raise ApiError(400, "you must provide a model parameter", param=None)
    check_messages(body.get("messages"))
    check_tools(body.get("tools"))
    check_numbers(body)
    check_moonshot(body)
    if not is_moonshot_model(body.get("model")) and (
        engine == "moonshot" or (engine is None and body.get("model") == MODEL_NAMES["kimi"])
    ):
        check_moonshot_tools(body.get("tools"))


# --- The Moonshot platform (model ids `kimi-...`) ------------------------------------------------
# Sources (platform.kimi.ai, read for this series in 2026): /docs/api/models-overview (sampling
# that "cannot be modified"), /docs/api/tool-use (strict tools, name pattern, 128 functions),
# /docs/guide/use-kimi-k2-thinking-model (the `thinking` parameter per model). Wordings marked
# "reported" are Moonshot's as users quote them; "ours" means Moonshot's exact text is not known.

# Moonshot's wording, as users report it (the index is the message's position in `messages`).
REASONING_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at "
    "index {index}"
)
# Reported by third parties (AstrBot PR #7825; oh-my-pi for the named form), not found in
# Moonshot's own docs: unconfirmed.
REQUIRED_WITH_THINKING = "tool_choice 'required' is incompatible with thinking enabled"
NAMED_WITH_THINKING = "tool_choice 'specified' is incompatible with thinking enabled"
# The answer to another sampling value: documented only as "cannot be modified"; the 400 and its
# text are reported by third parties for the temperature in thinking mode (unconfirmed).
LOCKED_SAMPLING = "invalid {name}: only {value} is allowed for this model"
# Ours: Moonshot documents the rule, not the error text.
STRICT_SCHEMA = (
    "tools[{index}].function.parameters: {problem}; tools are strict by default on this "
    'platform (function.strict defaults to true): remove it, or send "strict": false'
)
BAD_TOOL_NAME = (
    "tools[{index}].function.name {name!r} must match ^[a-zA-Z_][a-zA-Z0-9-_]{{2,63}}$ "
    "(3 to 64 letters, digits, '_' or '-', not starting with a digit or '-')"
)
TOO_MANY_TOOLS = "at most 128 functions may be sent in tools, not {count}"
THINKING_ONLY = "thinking cannot be disabled for model {model}"

# Kimi K3 (kimi-k3): Kimi-Vendor-Verifier's `tests/k3_features` (read for this series in 2026)
# check that thinking is always on with its reasoning kept ("keep": "all"), that `tool_choice`
# takes only "auto", "none" or "required" (a named function is accepted and silently ignored,
# another value is a 400), that "required" with no tools (or `tools: []`) is a 400, and that
# `thinking.effort` is low, high or max. The verifier checks the status; the texts are ours.
K3_MODELS = frozenset({"kimi-k3"})
K3_CHOICES = ("auto", "none", "required")
K3_EFFORTS = ("low", "high", "max")
K3_REQUIRED_WITHOUT_TOOLS = "tool_choice 'required' needs at least one tool in 'tools'"
K3_BAD_CHOICE = "tool_choice must be 'auto', 'none' or 'required' for this model, not {value}"
K3_BAD_EFFORT = "thinking.effort must be 'low', 'high' or 'max', not {value}"
# No switch: K2-Thinking always thinks (what it does with "disabled" is unconfirmed: treated as
# ignored); K2.7-Code documents "disabled" as an error.
ALWAYS_THINKING = frozenset({"kimi-k2-thinking", "kimi-k2-thinking-turbo", *K3_MODELS})
REFUSES_DISABLED = frozenset({"kimi-k2.7-code", "kimi-k2.7-code-highspeed"})
# `temperature`, `top_p` and `n` "cannot be modified" (models overview). The temperature is 1.0
# with thinking and 0.6 without (Moonshot's recommended values; the fixed 0.6 without thinking is
# a third party's statement, unconfirmed).
LOCKED_SAMPLING_MODELS = frozenset({"kimi-k2.5", "kimi-k2.6"})
# Models that think by default: those above; the switch `thinking: {"type": "disabled"}` works for
# K2.5 and K2.6.
MOONSHOT_THINKING_MODELS = ALWAYS_THINKING | REFUSES_DISABLED | LOCKED_SAMPLING_MODELS
FIXED_TOP_P = 0.95
# Moonshot's JSON-schema subset (MFJS): keywords a strict tool schema may not use anywhere.
FORBIDDEN_KEYWORDS = ("title", "format", "$comment", "prefixItems")
TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9\-_]{2,63}")
MAX_FUNCTIONS = 128


def is_moonshot_model(model: Any) -> bool:
    """Whether `model` is a Moonshot platform id (`kimi-...`), not a self-hosted model name."""
    return isinstance(model, str) and model.startswith("kimi-")


def thinking_enabled(body: dict[str, Any]) -> bool:
    """Whether a Moonshot API request runs a thinking model with thinking on (the default)."""
    model = body.get("model")
    if model not in MOONSHOT_THINKING_MODELS:
        return False
    thinking = body.get("thinking")
    disabled = isinstance(thinking, dict) and thinking.get("type") == "disabled"
    return not disabled or model in ALWAYS_THINKING


def check_moonshot(body: dict[str, Any]) -> None:
    """Raise the 400s the Moonshot platform gives: strict tool schemas, tool names, locked
    sampling, and the thinking rules. Other model names are not checked."""
    if not is_moonshot_model(body.get("model")):
        return
    check_moonshot_tools(body.get("tools"))
    model = body["model"]
    thinking = body.get("thinking")
    if model in REFUSES_DISABLED and isinstance(thinking, dict):
        if thinking.get("type") == "disabled":
            raise ApiError(400, THINKING_ONLY.format(model=model), param="thinking")
    if model in LOCKED_SAMPLING_MODELS:
        check_locked_sampling(body)
    if model in K3_MODELS:
        check_k3_options(body)
    check_thinking(body)


def check_k3_options(body: dict[str, Any]) -> None:
    """Kimi K3's `tool_choice` subset and thinking effort: "required" needs tools, a named
    function passes (the platform ignores it), any other value and an unknown effort are 400s."""
    choice = body.get("tool_choice")
    if choice is not None and not isinstance(choice, dict) and choice not in K3_CHOICES:
        raise ApiError(400, K3_BAD_CHOICE.format(value=_quoted(choice)), param="tool_choice")
    if choice == "required" and not body.get("tools"):
        raise ApiError(400, K3_REQUIRED_WITHOUT_TOOLS, param="tool_choice")
    thinking = body.get("thinking")
    effort = thinking.get("effort") if isinstance(thinking, dict) else None
    if effort is not None and effort not in K3_EFFORTS:
        raise ApiError(400, K3_BAD_EFFORT.format(value=_quoted(effort)), param="thinking.effort")


def check_locked_sampling(body: dict[str, Any]) -> None:
    """`temperature`, `top_p` and `n` are fixed for kimi-k2.6 and kimi-k2.5: another value is
    refused (sending the fixed value, or nothing, is accepted)."""
    fixed = {
        "temperature": 1.0 if thinking_enabled(body) else 0.6,
        "top_p": FIXED_TOP_P,
        "n": 1,
    }
    for name, value in fixed.items():
        sent = body.get(name)
        if sent is not None and sent != value:
            shown = int(value) if float(value).is_integer() else value
            raise ApiError(400, LOCKED_SAMPLING.format(name=name, value=shown), param=name)


def schema_problem(schema: Any, path: str = "", root: bool = True) -> str | None:
    """The first thing in a JSON schema that Moonshot's strict subset refuses, or None."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            found = schema_problem(item, f"{path}[{i}]", root=False)
            if found:
                return found
        return None
    if not isinstance(schema, dict):
        return None
    for key in FORBIDDEN_KEYWORDS:
        if key in schema and not (path.endswith(".properties") or path == "properties"):
            return f"{path + '.' if path else ''}{key} is not supported in strict mode"
    if "$defs" in schema and not root:
        return f"{path}.$defs: $defs are allowed only at the root"
    ref = schema.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        return f"{path + '.' if path else ''}$ref {ref!r}: only internal references (#/...)"
    enum = schema.get("enum")
    if isinstance(enum, list) and len({type(v).__name__ for v in enum}) > 1:
        return f"{path + '.' if path else ''}enum mixes value types"
    for key, value in schema.items():
        if key in ("enum", "const", "default", "examples", "description"):
            continue
        found = schema_problem(value, f"{path}.{key}" if path else key, root=False)
        if found:
            return found
    return None


def check_moonshot_tools(tools: Any) -> None:
    """Names by Moonshot's pattern, at most 128 functions, strict schemas in its subset."""
    if not isinstance(tools, list):
        return
    if len(tools) > MAX_FUNCTIONS:
        raise ApiError(400, TOO_MANY_TOOLS.format(count=len(tools)), param="tools")
    for index, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict):
            continue
        name = fn.get("name")
        if isinstance(name, str) and not TOOL_NAME.fullmatch(name):
            param = f"tools[{index}].function.name"
            raise ApiError(400, BAD_TOOL_NAME.format(index=index, name=name), param=param)
        if fn.get("strict") is False:
            continue
        problem = schema_problem(fn.get("parameters"))
        if problem:
            message = STRICT_SCHEMA.format(index=index, problem=problem)
            raise ApiError(400, message, param=f"tools[{index}].function.parameters")


def check_thinking(body: dict[str, Any]) -> None:
    """Raise the 400s Moonshot gives with thinking on: a forced `tool_choice` (`"required"` or a
    named function; not on K3), and an assistant message with `tool_calls` sent back without its
    `reasoning_content` (with `thinking.keep: "all"`, on K2.7-Code and on K3: every assistant
    message)."""
    if not thinking_enabled(body):
        return
    choice = body.get("tool_choice")
    if body.get("model") in K3_MODELS:  # K3 takes "required" and ignores a named choice
        choice = None
    if choice == "required":
        raise ApiError(400, REQUIRED_WITH_THINKING, param="tool_choice")
    if isinstance(choice, dict):
        raise ApiError(400, NAMED_WITH_THINKING, param="tool_choice")
    thinking = body.get("thinking")
    keep_all = body.get("model") in REFUSES_DISABLED | K3_MODELS or (
        isinstance(thinking, dict) and thinking.get("keep") == "all"
    )
    for index, message in enumerate(body.get("messages") or []):
        if (
            isinstance(message, dict)
            and message.get("role") == "assistant"
            and (keep_all or message.get("tool_calls"))
            and not message.get("reasoning_content")
        ):
            raise ApiError(400, REASONING_MISSING.format(index=index), param=None)
