"""Tool-call id hygiene for self-hosted Kimi: rewrite a history's ids to `functions.NAME:IDX`.

Kimi models were trained on ids of the form `functions.get_weather:0`, with IDX counting calls over
the whole conversation, and the chat template shows them the ids verbatim. A history holding
foreign ids (`call_59ad…` from an OpenAI-style client, `get_weather:0` repeated every round) makes
a self-hosted model (vLLM, SGLang) drift into ids like `functionsexec5` or a bare `0`, which the
server's parser then misreads. Moonshot's own API renames history ids itself before the model
sees them; `normalize_kimi_ids` does the same on the client side.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from helpers.streaming import as_dict


def _copied(obj: Any) -> Any:
    """A deep copy of a message or tool call as plain dicts (SDK objects as the SDK sends them)."""
    return copy.deepcopy(as_dict(obj, exclude_none=False, exclude_unset=True))


def _name_of(call: Mapping[str, Any]) -> str:
    """The function name of a tool call dict, or "" when a broken history has none."""
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else ""


def normalize_kimi_ids(messages: list[Any]) -> list[dict[str, Any]]:
    """Return a copy of `messages` with every tool-call id rewritten to `functions.{name}:{k}`.

    k counts the calls over the whole conversation from 0. Each `role: "tool"` message's
    `tool_call_id` follows its call: it is looked up among the calls of the latest assistant
    message first (ids like `get_weather:0` repeat from round to round), then among earlier ones.
    An id that matches no call is left as it is. The input is never changed.
    """
    out: list[dict[str, Any]] = []
    latest: dict[str, list[str]] = {}  # old id -> new ids, for the latest assistant message
    earlier: dict[str, str] = {}  # old id -> new id of its last call in earlier messages
    counter = 0
    for original in messages:
        message = _copied(original)
        out.append(message)
        if not isinstance(message, dict):
            continue
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and isinstance(calls, list) and calls:
            earlier.update({old: new_ids[-1] for old, new_ids in latest.items()})
            latest = {}
            message["tool_calls"] = [_copied(call) for call in calls]
            for call in message["tool_calls"]:
                if not isinstance(call, dict):
                    continue
                new_id = f"functions.{_name_of(call)}:{counter}"
                counter += 1
                old_id = call.get("id")
                if isinstance(old_id, str):
                    latest.setdefault(old_id, []).append(new_id)
                call["id"] = new_id
        elif message.get("role") == "tool":
            old_id = message.get("tool_call_id")
            if not isinstance(old_id, str):
                continue
            if old_id in latest:
                queue = latest[old_id]
                # two calls sharing one id (a broken server): answer them in order
                message["tool_call_id"] = queue.pop(0) if len(queue) > 1 else queue[0]
            elif old_id in earlier:
                message["tool_call_id"] = earlier[old_id]
    return out
