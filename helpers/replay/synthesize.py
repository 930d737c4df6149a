"""Build the shipped cassettes from the scenario declarations and the engine profiles.

`python -m helpers.replay synthesize [--out DIR] [--check]`. For every scenario this plays the
client's part: it sends the request a notebook sends, lets the engine profile answer with the
turn the scenario declares (as JSON or as SSE chunks), appends the assistant message and then one
`role: "tool"` message per call, exactly as `run_tool_loop` does, and asks again. Everything is
derived from hashes of the request, so two runs give byte-identical files. The files say in
`meta.source` that they are synthesized from documented formats, not captured from a service.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from helpers.catalog import TOKENIZERS
from helpers.formats import (
    ParseResult,
    parse_hermes,
    parse_kimi,
    render_hermes_tool_calls,
    render_kimi_tool_calls,
)
from helpers.formats._common import tool_call_dict
from helpers.lessons import scenario_module
from helpers.paths import RECORDINGS_DIR
from helpers.replay import captures
from helpers.replay.cassette import FORMAT_VERSION, dump_cassette, load_cassette, save_cassette
from helpers.replay.matching import canonical_request, request_key
from helpers.replay.profiles import EngineProfile, get_profile, replay_model, stable_hex
from helpers.replay.scenarios import RUN_TOOL, Scenario, Turn, all_scenarios
from helpers.replay.scenarios.common import lesson_registry
from helpers.replay.server import served_id
from helpers.replay.validation import ApiError, check_chat_request
from helpers.streaming import arguments_text
from helpers.tools import tool_result_content

SOURCE = (
    "synthesized from documented formats by `python -m helpers.replay synthesize` "
    "(not a capture of a real service)"
)
EPOCH = 1751328000  # 2025-07-01 00:00:00 UTC: every synthesized `created` lies in the month after
CALL_START: dict[str, str] = {"kimi": "<|tool_calls_section_begin|>", "qwen": "<tool_call>"}
COMPLETIONS_SUMMARY = (
    "/completions: the raw text the model generates (tool-call markers included), no parsing; "
    "the prompt is the chat template render of the messages and tools."
)

# Marker tokens travel as one streamed piece each; other text is cut into word-sized pieces.
_MARKER_RE = re.compile(r"(<\|[a-z_]+\|>|</?tool_call>)")
_WORD_RE = re.compile(r"\s*\S+|\s+")


class ScenarioError(ValueError):
    """A scenario declaration cannot be played (wrong number of results, misplaced final turn)."""


@dataclass
class Reply:
    """What an engine answers to one chat request, before it is written as JSON or SSE."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    reasoning: str | None = None  # thinking profiles: sent under `profile.reasoning_field`


# --- the model's side ---------------------------------------------------------------------------


def history_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls of the assistant messages of a history, in order."""
    assistant = [m for m in messages if m.get("role") == "assistant"]
    return [call for message in assistant for call in message.get("tool_calls") or []]


def count_calls(messages: list[dict[str, Any]]) -> int:
    """How many tool calls the assistant messages of a history hold."""
    return len(history_calls(messages))


def model_calls(turn: Turn, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's calls as Kimi-K2 writes them: ids `functions.{name}:{n}`, n over the dialog."""
    start = count_calls(history)
    return [
        tool_call_dict(f"functions.{name}:{start + i}", name, arguments_text(arguments))
        for i, (name, arguments) in enumerate(turn.tool_calls)
    ]


def render_output(provider: str, content: str, calls: list[dict[str, Any]]) -> str:
    """The text the model generates: the content, then the calls in the provider's raw format."""
    if not calls:
        return content
    render = render_kimi_tool_calls if provider == "kimi" else render_hermes_tool_calls
    return render(calls, content)


def engine_reply(
    profile: EngineProfile,
    provider: str,
    turn: Turn,
    history: list[dict[str, Any]],
    seed: str,
    stream: bool,
) -> Reply:
    """What `profile` makes of the model's output for a chat request."""
    reasoning = turn.reasoning if profile.reasoning_field else None
    calls = model_calls(turn, history)
    if not calls:
        return Reply(turn.content or "", [], turn.finish_reason or "stop", reasoning)
    foreign = foreign_ids(history) if profile.drifts_on_foreign_ids else []
    if foreign:  # the model copies the style of the ids it saw; the parser cannot read them
        for index, call in enumerate(calls):
            call["id"] = drifted_id(foreign[-1], call, index, seed)
    raw = render_output(provider, turn.content or "", calls)  # before the engine renames ids
    finish = turn.finish_reason or profile.finish_with_calls
    if not profile.parses_calls or foreign:
        return Reply(raw, [], finish, reasoning)
    before = raw[: raw.index(CALL_START[provider])]
    history_count = count_calls(history)
    for index, call in enumerate(calls):
        name = call["function"]["name"]
        call["id"] = profile.call_id(call["id"], name, history_count, index, seed, stream)
    return Reply(before or profile.empty_content, calls, finish, reasoning)


_NATIVE_KIMI_ID_RE = re.compile(r"functions\.[^:\s]+:\d+")


def foreign_ids(history: list[dict[str, Any]]) -> list[str]:
    """Assistant tool-call ids in a history that are not Kimi's native `functions.name:N`."""
    ids = [call.get("id") or "" for call in history_calls(history)]
    return [i for i in ids if not _NATIVE_KIMI_ID_RE.fullmatch(i)]


def drifted_id(example: str, call: dict[str, Any], index: int, seed: str) -> str:
    """The odd id a Kimi model writes after seeing `example`-style ids in its history.

    Reported cases: OpenAI-style `call_<hex>` copied from the client (`call_59adf5614cfe...`),
    the punctuation lost (`functionsexec5`), a bare counter (`0`)."""
    if example.startswith("call_"):
        return "call_" + stable_hex(f"{seed}|drift|{index}", 24)
    if example.isdigit():
        return str(index)
    return "functions" + call["function"]["name"].replace("_", "") + str(index)


def parse_output(provider: str, text: str) -> ParseResult:
    """Parse raw model text the way the lesson's client does (Kimi markers or Hermes tags)."""
    return parse_kimi(text) if provider == "kimi" else parse_hermes(text)


# --- response envelopes -------------------------------------------------------------------------


def request_seed(path: str, body: dict[str, Any]) -> str:
    """A digest of the request as the replay server matches it (ids, times, pacing derive from it).

    Requests the server treats as the same (e.g. differing only in `temperature`) therefore get
    byte-identical answers, wherever they appear: the server refuses two different answers.
    """
    return served_id(request_key(canonical_request(path, body)))  # the name the server logs


def usage(prompt_chars: int, completion_chars: int) -> dict[str, int]:
    """Plausible token counts (about four characters per token)."""
    prompt, completion = max(1, prompt_chars // 4), max(1, completion_chars // 4)
    total = prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def reply_chars(reply: Reply) -> int:
    """Length of what the model generated (reasoning, content, call names and arguments)."""
    calls = sum(
        len(c["function"]["name"]) + len(c["function"]["arguments"]) for c in reply.tool_calls
    )
    return len(reply.reasoning or "") + len(reply.content or "") + calls


def chat_message(reply: Reply, profile: EngineProfile) -> dict[str, Any]:
    """The `choices[0].message` of a non-streamed chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning and profile.reasoning_field:
        message[profile.reasoning_field] = reply.reasoning
    if reply.tool_calls or profile.lists_empty_tool_calls:
        message["tool_calls"] = copy.deepcopy(reply.tool_calls)
    return message


def envelope(seed: str, prefix: str, hex_digits: int, obj: str, model: str) -> dict[str, Any]:
    """The fields every response and chunk starts with: id, object, created (a deterministic
    Unix time within 30 days after EPOCH), model."""
    rid = f"{prefix}-{stable_hex(seed, hex_digits)}"
    created = EPOCH + int(seed[:8], 16) % (30 * 86400)
    return {"id": rid, "object": obj, "created": created, "model": model}


def text_pieces(text: str) -> list[str]:
    """Cut text into streamed pieces: each marker whole, other text word by word."""
    pieces: list[str] = []
    for part in _MARKER_RE.split(text):
        pieces.extend([part] if _MARKER_RE.fullmatch(part) else _WORD_RE.findall(part))
    return pieces


def fragments(text: str, seed: str) -> list[str]:
    """Cut argument JSON into fragments of 2-7 characters, sizes fixed by `seed`."""
    sizes = itertools.cycle(2 + int(ch, 16) % 6 for ch in stable_hex(seed, 64))
    pieces, pos = [], 0
    while pos < len(text):
        size = next(sizes)
        pieces.append(text[pos : pos + size])
        pos += size
    return pieces


def tool_call_deltas(
    calls: list[dict[str, Any]], interleave: bool, seed: str, whole: bool = False
) -> list[dict]:
    """Streamed `tool_calls` delta items: per call a header, then argument fragments (or, with
    `whole`, each call complete in one item, as Ollama sends them)."""
    if whole:
        return [{"index": index, **copy.deepcopy(call)} for index, call in enumerate(calls)]
    per_call: list[list[dict[str, Any]]] = []
    for index, call in enumerate(calls):
        header = {"index": index, **call, "function": {**call["function"], "arguments": ""}}
        pieces = fragments(call["function"]["arguments"], f"{seed}|{index}")
        per_call.append([header, *({"index": index, "function": {"arguments": p}} for p in pieces)])
    if not interleave:
        return [item for items in per_call for item in items]
    rounds = itertools.zip_longest(*per_call)  # item 0 of each call, then item 1 of each...
    return [item for items in rounds for item in items if item is not None]


def sse_events(choices: list[dict], head: dict, use: dict, include_usage: bool, seed: str) -> list:
    """The SSE events of a stream: one chunk per choice (with `include_usage`: `usage: null` on
    each, then a usage chunk with no choices), then `[DONE]`. The delays are deterministic: a
    slower first token, then 15-40 ms per chunk."""
    chunks: list[dict[str, Any] | str] = [{**head, "choices": [choice]} for choice in choices]
    if include_usage:
        chunks = [{**chunk, "usage": None} for chunk in chunks]
        chunks.append({**head, "choices": [], "usage": use})
    delays = bytes.fromhex(stable_hex(f"{seed}|pace", 64))
    events = []
    for i, data in enumerate([*chunks, "[DONE]"]):
        jitter = delays[i % len(delays)]
        delay = 120 + jitter % 121 if i == 0 else 15 + jitter % 26
        events.append({"data": data, "delay_ms": delay})
    return events


def chat_choices(reply: Reply, profile: EngineProfile, interleave: bool, seed: str) -> list[dict]:
    """The choices of a streamed chat completion, one per chunk: the role, the reasoning, the
    content, the calls, the finish."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    key = profile.reasoning_field
    if reply.reasoning and key:  # thinking models: all reasoning before the content
        deltas += [{key: piece} for piece in text_pieces(reply.reasoning)]
    deltas += [{"content": piece} for piece in text_pieces(reply.content or "")]
    calls = tool_call_deltas(reply.tool_calls, interleave, seed, profile.whole_calls)
    deltas += [{"tool_calls": [item]} for item in calls]
    choices = [{"index": 0, "delta": delta, "finish_reason": None} for delta in deltas]
    choices.append({"index": 0, "delta": {}, "finish_reason": reply.finish_reason})
    return choices


def completion_choice(text: str, finish_reason: str | None) -> dict[str, Any]:
    """One `text_completion` choice."""
    return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}


# --- the client's side --------------------------------------------------------------------------


def endpoint(scenario: Scenario) -> str:
    """The path the scenario's requests go to: `/v1/...` at the provider's default engine,
    `/engines/<engine>/v1/...` otherwise, then `completions` or `chat/completions`."""
    profile = get_profile(scenario.provider, scenario.engine)
    api = "completions" if scenario.api == "completions" else "chat/completions"
    return f"{profile.base_path(scenario.provider)}/{api}"


def label_middle(scenario: Scenario) -> str:
    """The engine part of a label: the profile name, or `completions[-engine]`."""
    if scenario.api == "completions":
        return "completions" + (f"-{scenario.engine}" if scenario.engine else "")
    return get_profile(scenario.provider, scenario.engine).name


@cache
def _tokenizer(provider: str) -> Any:
    """The offline tokenizer whose chat template renders completions prompts (loaded once)."""
    from helpers.templates import load_tokenizer

    return load_tokenizer(TOKENIZERS[provider])


def render_prompt(scenario: Scenario, messages: list[dict[str, Any]]) -> str:
    """The `/completions` prompt: the chat template render with a generation prompt."""
    if scenario.decode_arguments:
        from helpers.templates import decode_tool_arguments

        messages = decode_tool_arguments(messages)
    return _tokenizer(scenario.provider).apply_chat_template(
        messages, tools=scenario.tools, tokenize=False, add_generation_prompt=True
    )


def _moonshot_rejects(body: dict[str, Any]) -> str | None:
    """What the Moonshot API documents as unsupported: `tool_choice="required"` and a
    temperature outside [0, 1]. (Its tool rules are the replay server's: `server_refusal`.)"""
    if body.get("tool_choice") == "required":
        return 'tool_choice="required" (documented as unsupported)'
    temperature = body.get("temperature")
    if isinstance(temperature, int | float) and not 0 <= temperature <= 1:
        return f"temperature={temperature} (its range is [0, 1])"
    return None


REJECTED_SETTINGS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "moonshot": _moonshot_rejects,
}
"""Engine profile -> a check naming a request setting its real service answers with an error.
Synthesis refuses such a scenario instead of recording an answer the service would not give."""


def rejected_setting(engine: str, body: dict[str, Any]) -> str | None:
    """The setting in `body` that the service behind `engine` rejects, or None."""
    check = REJECTED_SETTINGS.get(engine)
    return check(body) if check else None


def request_body(
    scenario: Scenario, messages: list[dict[str, Any]], turn: Turn | None = None
) -> dict[str, Any]:
    """The JSON body the notebook's client sends for the current history (and this turn)."""
    body: dict[str, Any] = {"model": replay_model(scenario.provider, scenario.engine)}
    if scenario.api == "completions":
        body["prompt"] = render_prompt(scenario, messages)
    else:
        body["messages"] = copy.deepcopy(messages)
        if scenario.tools is not None:
            body["tools"] = copy.deepcopy(scenario.tools)
    body.update(copy.deepcopy(scenario.request_extra))
    for name, value in (turn.request if turn else {}).items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = copy.deepcopy(value)
    if scenario.stream:
        body["stream"] = True
    return body


def tool_messages(turn: Turn, calls: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """One `role: "tool"` message per call, content as the lesson's tools produce it."""
    if len(turn.results) != len(calls):
        raise ScenarioError(f"{where}: {len(calls)} call(s) but {len(turn.results)} result(s)")
    messages = []
    for call, result in zip(calls, turn.results, strict=True):
        if result is RUN_TOOL:
            content = lesson_registry().call(call)["content"]
        else:
            content = tool_result_content(result)
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["function"]["name"],
                "content": content,
            }
        )
    return messages


def check_scenario(scenario: Scenario) -> None:
    """Reject declarations that cannot be played as a client would play them."""
    if not scenario.turns:
        raise ScenarioError(f"{scenario.name}: no turns")
    for number, turn in enumerate(scenario.turns, 1):
        where = f"{scenario.name} turn {number}"
        last = number == len(scenario.turns)
        if turn.refused:
            if turn.tool_calls or turn.content is not None or turn.results or not last:
                raise ScenarioError(
                    f"{where}: a refused turn is the last one and has no content, calls or results"
                )
            continue
        if not turn.tool_calls and turn.content is None:
            raise ScenarioError(f"{where}: neither content nor tool calls")
        if not turn.tool_calls and not last:
            raise ScenarioError(f"{where}: a turn without calls ends the loop, so it must be last")
        if turn.results and not turn.tool_calls:
            raise ScenarioError(f"{where}: results without tool calls")
        if turn.interleave and not scenario.stream:
            raise ScenarioError(f"{where}: interleave only changes a streamed reply")


def check_reply_allowed(scenario: Scenario, turn: Turn, body: dict[str, Any], where: str) -> None:
    """Refuse a declared reply that the request as sent (`request_extra` plus `Turn.request`)
    forbids, or that the engine profile cannot produce: synthesis must not record an answer
    no real server gives to that request."""
    if turn.refused:
        return
    names = [name for name, _ in turn.tool_calls]
    profile = None
    if scenario.api == "chat":
        profile = get_profile(scenario.provider, scenario.engine)
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and profile.named_choice == "ignored":
            choice = "auto"  # Kimi K3: a named function is accepted and ignored
        if choice == "none" and names:
            raise ScenarioError(
                f'{where}: tool_choice="none" forbids tool calls, but the turn makes {len(names)}'
            )
        if choice == "required" and not names:
            raise ScenarioError(f'{where}: tool_choice="required" needs a call; the turn has none')
        if isinstance(choice, dict):
            wanted = (choice.get("function") or {}).get("name")
            if not names or any(name != wanted for name in names):
                raise ScenarioError(
                    f"{where}: tool_choice names the tool {wanted!r}, so the reply calls it and "
                    f"only it; the turn calls {names or 'nothing'}"
                )
            if profile.named_choice == "one_call" and len(names) != 1:
                raise ScenarioError(
                    f"{where}: {profile.name} holds a named tool_choice to one call (structured "
                    f"output of one function's arguments); the turn makes {len(names)}"
                )
        parallel_capped = body.get("parallel_tool_calls") is False
        if parallel_capped and profile.honours_parallel_false and len(names) > 1:
            raise ScenarioError(
                f"{where}: parallel_tool_calls=false allows at most one call per reply; the turn "
                f"makes {len(names)}"
            )
    engine = profile.name if profile else "/completions"
    if turn.reasoning and (profile is None or not profile.reasoning_field):
        raise ScenarioError(
            f"{where}: the turn has reasoning, but {engine} has no reasoning field to report it "
            "in (it would be dropped silently)"
        )
    if turn.interleave and (profile is None or profile.whole_calls or len(names) < 2):
        raise ScenarioError(
            f"{where}: interleave needs two or more calls streamed in fragments; {engine} with "
            f"{len(names)} call(s) cannot interleave them"
        )


@dataclass
class Exchange:
    """One request/response pair plus what the client takes from the response."""

    path: str
    body: dict[str, Any]
    response: dict[str, Any]
    seen: ParseResult  # content and calls as the client reads them; errors if it had to parse
    reasoning: dict[str, str] = field(default_factory=dict)  # {field name: text} when reported


def completions_exchange(
    scenario: Scenario, turn: Turn, messages: list[dict[str, Any]]
) -> Exchange:
    """`/completions`: the prompt is the template render, the answer the model's raw text."""
    path = endpoint(scenario)
    body = request_body(scenario, messages, turn)
    seed = request_seed(path, body)
    text = render_output(scenario.provider, turn.content or "", model_calls(turn, messages))
    finish = turn.finish_reason or "stop"
    head = envelope(seed, "cmpl", 32, "text_completion", body["model"])
    use = usage(len(body["prompt"]), len(text))
    if scenario.stream:
        choices = [completion_choice(piece, None) for piece in text_pieces(text)]
        choices.append(completion_choice("", finish))
        sse = sse_events(choices, head, use, include_usage(body), seed)
        response: dict[str, Any] = {"status": 200, "sse": sse}
    else:
        payload = {**head, "choices": [completion_choice(text, finish)], "usage": use}
        response = {"status": 200, "body": payload}
    return Exchange(path, body, response, parse_output(scenario.provider, text))


def chat_exchange(scenario: Scenario, turn: Turn, messages: list[dict[str, Any]]) -> Exchange:
    """`/chat/completions`: the engine profile turns the model's output into the API reply."""
    profile = get_profile(scenario.provider, scenario.engine)
    path = endpoint(scenario)
    body = request_body(scenario, messages, turn)
    rejected = rejected_setting(profile.name, body)
    if rejected:
        raise ScenarioError(
            f"{scenario.name}: the {profile.name} engine rejects {rejected}; "
            "its real service would answer with an error, not a reply"
        )
    refused = refused_exchange(scenario, turn, path, body)
    if refused:
        return refused
    seed = request_seed(path, body)
    reply = engine_reply(profile, scenario.provider, turn, messages, seed, scenario.stream)
    prompt_chars = len(json.dumps(body["messages"])) + len(json.dumps(scenario.tools or []))
    use = usage(prompt_chars, reply_chars(reply))
    obj = "chat.completion.chunk" if scenario.stream else "chat.completion"
    head = envelope(seed, "chatcmpl", profile.response_id_hex, obj, body["model"])
    if profile.system_fingerprint:
        head["system_fingerprint"] = profile.system_fingerprint
    if scenario.stream:
        choices = chat_choices(reply, profile, turn.interleave, seed)
        sse = sse_events(choices, head, use, include_usage(body), seed)
        response: dict[str, Any] = {"status": 200, "sse": sse}
    else:
        message = chat_message(reply, profile)
        choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
        response = {"status": 200, "body": {**head, "choices": [choice], "usage": use}}
    if profile.parses_calls:
        seen = ParseResult(reply.content or "", reply.tool_calls)
    else:  # the calls are text inside `content`: the client has to parse them itself
        seen = parse_output(scenario.provider, reply.content or "")
    reasoning = {}
    if reply.reasoning and profile.reasoning_field:
        reasoning = {profile.reasoning_field: reply.reasoning}
    return Exchange(path, body, response, seen, reasoning)


def refused_exchange(
    scenario: Scenario, turn: Turn, path: str, body: dict[str, Any]
) -> Exchange | None:
    """The error the replay server's own checks (`helpers.replay.validation`) give this request
    at the scenario's engine, recorded for a turn the engine refuses, so the cassette and the
    server agree; None when they accept it. A refused turn the checks accept, or an accepted
    turn they refuse, stops synthesis."""
    engine = get_profile(scenario.provider, scenario.engine).name
    try:
        check_chat_request(body, engine=scenario.engine)
    except ApiError as refusal:
        if not turn.refused:
            raise ScenarioError(
                f"{scenario.name}: {engine} refuses this request with HTTP {refusal.status} "
                f"({refusal.message}); declare Turn(refused=True) to record the error, or change "
                "the setting"
            ) from None
        response = {"status": refusal.status, "headers": refusal.headers, "body": refusal.body()}
        return Exchange(path, body, response, ParseResult("", []))
    if turn.refused:
        raise ScenarioError(
            f"{scenario.name}: the turn is declared refused, but {engine} accepts this request "
            "(helpers/replay/validation.py has no rule refusing it)"
        )
    return None


def include_usage(body: dict[str, Any]) -> bool:
    """Whether the request asks for a final usage chunk (`stream_options.include_usage`)."""
    return bool((body.get("stream_options") or {}).get("include_usage"))


def allowed_turns(scenario: Scenario) -> list[Turn]:
    """The turns as the engine lets the model write them: a server with parallel calls off by
    default (llama.cpp) lets it write one call per reply unless the request allows more."""
    profile = get_profile(scenario.provider, scenario.engine)
    allowed = scenario.request_extra.get("parallel_tool_calls") is True
    if scenario.api != "chat" or profile.parallel_by_default or allowed:
        return list(scenario.turns)
    return [
        dataclasses.replace(turn, tool_calls=turn.tool_calls[:1], results=turn.results[:1])
        for turn in scenario.turns
    ]


def play(notebook: str, scenario: Scenario) -> list[dict[str, Any]]:
    """Run one scenario as the client would and return its recorded interactions."""
    check_scenario(scenario)
    exchange_for = completions_exchange if scenario.api == "completions" else chat_exchange
    messages = copy.deepcopy(scenario.messages)
    interactions = []
    for number, turn in enumerate(allowed_turns(scenario), 1):
        label = f"{scenario.name}/{label_middle(scenario)}/round-{number}"
        where = f"{notebook}: {label}"
        exchange = exchange_for(scenario, turn, messages)
        check_reply_allowed(scenario, turn, exchange.body, where)
        request = {"method": "POST", "path": exchange.path, "body": exchange.body}
        interactions.append({"label": label, "request": request, "response": exchange.response})
        if number == len(scenario.turns):
            break
        seen = exchange.seen
        if seen.errors:
            raise ScenarioError(f"{where}: the raw text does not parse cleanly: {seen.errors}")
        if not seen.tool_calls:
            raise ScenarioError(f"{where}: the client sees no calls here, so it would stop")
        # The assistant message with the calls goes first, then one tool message per call.
        # Reasoning goes back under the field the server used, as `run_tool_loop` sends it.
        messages.append(
            {
                "role": "assistant",
                "content": seen.content,
                **exchange.reasoning,
                "tool_calls": seen.tool_calls,
            }
        )
        messages.extend(tool_messages(turn, seen.tool_calls, where))
    return interactions


# --- cassettes ----------------------------------------------------------------------------------


def profile_notes(scenarios: list[Scenario]) -> list[dict[str, str]]:
    """`meta.profiles`: each engine behaviour the cassette uses, where it is served, in brief."""
    notes: dict[str, dict[str, str]] = {}
    for scenario in scenarios:
        name, path = label_middle(scenario), endpoint(scenario)
        summary = get_profile(scenario.provider, scenario.engine).summary
        if scenario.api == "completions":
            summary = COMPLETIONS_SUMMARY
        notes.setdefault(f"{name} {path}", {"name": name, "path": path, "summary": summary})
    return list(notes.values())


def build_cassette(notebook: str, module: str, scenarios: list[Scenario]) -> dict[str, Any]:
    """The cassette of one notebook: metadata plus every scenario's interactions in order."""
    interactions = [item for scenario in scenarios for item in play(notebook, scenario)]
    labels = [item["label"] for item in interactions]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ScenarioError(f"{notebook}: duplicate labels {duplicates}")
    meta = {
        "notebook": notebook,
        "source": SOURCE,
        "format": FORMAT_VERSION,
        "scenarios": f"helpers/replay/scenarios/{module}.py",
        "profiles": profile_notes(scenarios),
    }
    scripted = getattr(sys.modules.get(f"{Scenario.__module__}.{module}"), "SCRIPTED", None)
    if scripted:  # a scripted model behaviour (lesson 11's obedient model) is labelled as such
        meta["scripted"] = scripted
    # Captured exchanges (data/captures/) are appended as they are, never synthesized over.
    return captures.merge_into({"meta": meta, "interactions": interactions})


def synthesize_all() -> dict[str, dict[str, Any]]:
    """Every shipped cassette as `{file name: cassette}`, in lesson order."""
    files = {}
    for notebook, scenarios in all_scenarios().items():
        files[f"{notebook}.json"] = build_cassette(notebook, scenario_module(notebook), scenarios)
    return files


def unused_recordings(served: set[str], cassettes: list[Path]) -> list[str]:
    """The interactions of `cassettes` whose request the replay server never answered, by name,
    given the `served_id`s it logged (`SERVED_LOG_VARIABLE`) while the notebooks ran. A
    recording no notebook requests is dead weight that hides a scenario drifting from its
    lesson, so `scripts/nbbuild.py` fails on one."""
    unused = []
    for path in cassettes:
        for interaction in load_cassette(path).interactions:
            request = interaction.request
            key = request_key(canonical_request(request["path"], request["body"]))
            if served_id(key) not in served:
                unused.append(interaction.name)
    return unused


def stale_files(files: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Names of the cassettes in `out` that are missing or differ from `files`."""
    return [
        name
        for name, cassette in files.items()
        if not (out / name).is_file()
        or (out / name).read_text(encoding="utf-8") != dump_cassette(cassette)
    ]


def main(argv: list[str] | None = None) -> int:
    """CLI: write the cassettes (or, with --check, list stale ones and exit 1)."""
    parser = argparse.ArgumentParser(
        prog="python -m helpers.replay synthesize",
        description="Build data/recordings/*.json from helpers/replay/scenarios.",
    )
    parser.add_argument("--out", type=Path, default=RECORDINGS_DIR, help="cassette folder")
    parser.add_argument("--check", action="store_true", help="only check the files are current")
    args = parser.parse_args(argv)
    files = synthesize_all()
    stale = stale_files(files, args.out)
    if args.check:
        if stale:
            print(
                "Stale cassettes (regenerate with `python -m helpers.replay synthesize`):",
                *(f"  {args.out / name}" for name in stale),
                sep="\n",
                file=sys.stderr,
            )
            return 1
        print(f"{len(files)} synthesized cassettes are up to date in {args.out}")
        return 0
    for name in stale:
        save_cassette(args.out / name, files[name])
    print(f"{len(stale)} of {len(files)} cassettes written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
