"""The tool-call loop, sync or streaming, with the guide's defects fixed.

- The loop goes on while the assistant message carries tool calls and stops when it carries none,
  whatever `finish_reason` says: engines send `stop` with calls, or `tool_calls` with none.
- The assistant message with the calls is appended BEFORE their `role: "tool"` results.
- Tools run through a `ToolRegistry`, which unpacks arguments and reports failures to the model.
"""

from __future__ import annotations

from typing import Any

from helpers.streaming import REASONING_KEYS, ToolCallAccumulator, as_dict
from helpers.tools import ToolRegistry


class ToolLoopError(RuntimeError):
    """Base class for the loop's own errors."""


class ToolLoopLimitError(ToolLoopError):
    """The model was still calling tools when the round limit was reached."""


class TruncatedToolCallError(ToolLoopError):
    """Generation stopped at max_tokens in the middle of a tool call."""


def _describe(tool_calls: list[dict[str, Any]]) -> str:
    """Short `name(arguments)` list for error messages."""
    return ", ".join(
        f"{c['function']['name']}({c['function']['arguments'][:60]})" for c in tool_calls
    )


def assistant_message_from(message: Any) -> dict[str, Any]:
    """A clean assistant message dict from an SDK message (no null extras like `refusal`).

    A non-null `reasoning_content` / `reasoning` stays, under the name the server used.
    """
    message = as_dict(message)
    clean: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    calls = [
        {
            "id": call.get("id", ""),
            "type": "function",
            "function": {
                "name": call["function"].get("name", ""),
                "arguments": call["function"].get("arguments", ""),
            },
        }
        for call in message.get("tool_calls") or []
    ]
    for key in REASONING_KEYS:  # a thinking model's API wants its reasoning back
        if isinstance(message.get(key), str):
            clean[key] = message[key]
    if calls:
        clean["tool_calls"] = calls
    return clean


def ask_model(
    client: Any,
    messages: list[dict[str, Any]],
    *,
    model: str,
    stream: bool = False,
    **create_kwargs: Any,
) -> tuple[dict[str, Any], str | None]:
    """One request: return the assistant message (a dict) and the finish_reason."""
    if not stream:
        completion = client.chat.completions.create(model=model, messages=messages, **create_kwargs)
        if not completion.choices:
            body = repr(as_dict(completion))[:200]
            raise ToolLoopError(f"The server answered without choices: {body}")
        choice = completion.choices[0]
        return assistant_message_from(choice.message), choice.finish_reason
    accumulator = ToolCallAccumulator()
    for chunk in client.chat.completions.create(
        model=model, messages=messages, stream=True, **create_kwargs
    ):
        accumulator.add(chunk)
    return accumulator.assistant_message(), accumulator.finish_reason


def run_tool_loop(
    client: Any,
    messages: list[dict[str, Any]],
    registry: ToolRegistry,
    *,
    model: str,
    stream: bool = False,
    max_rounds: int = 8,
    **create_kwargs: Any,
) -> dict[str, Any]:
    """Ask, run the requested tools, answer, repeat; return the final assistant message.

    `messages` is extended in place with every assistant message and tool result.
    """
    if max_rounds < 1:
        raise ValueError("max_rounds must be at least 1.")
    create_kwargs.setdefault("tools", registry.schemas)
    for _ in range(max_rounds):
        message, finish_reason = ask_model(
            client, messages, model=model, stream=stream, **create_kwargs
        )
        tool_calls = message.get("tool_calls", [])
        if tool_calls and finish_reason == "length":
            raise TruncatedToolCallError(
                "The model hit max_tokens (finish_reason='length') in the middle of a tool call: "
                f"{_describe(tool_calls)}. Nothing was run; raise max_tokens and ask again."
            )
        messages.append(message)
        if not tool_calls:
            return message
        messages.extend(registry.call(call) for call in tool_calls)
    raise ToolLoopLimitError(
        f"The model was still calling tools after max_rounds={max_rounds} rounds "
        f"(last calls: {_describe(tool_calls)}). The history so far is in `messages`; "
        "raise max_rounds if the task needs more steps, or check what the tools answer."
    )
