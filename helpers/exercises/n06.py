"""Self-checks for lesson 06 (thinking models): keeping reasoning in the history, Kimi id hygiene,
and reading reasoning out of a stream under either field name."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from helpers.exercises._verdict import (
    CASE_RU,
    NAMES,
    VALUES,
    Case,
    Explain,
    NotYet,
    as_tuples,
    call_student,
    case_of,
    difference,
    exercise,
    mismatch,
    on_battery,
    returned,
    seeded,
    server_refusal,
    shorten,
    variant,
)
from helpers.exercises._verdict import chunk as _chunk
from helpers.exercises._verdict import weather_call as _call
from helpers.kimi_ids import normalize_kimi_ids
from helpers.streaming import REASONING_KEYS

# --- exercise 1: the assistant message for the history --------------------------------------------


def server_messages() -> dict[str, dict[str, Any]]:
    """Assistant messages as servers return them (`message.model_dump()`), by description."""
    return {
        "Moonshot, thinking on": {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Start with Beijing.",
            "refusal": None,
            "tool_calls": [_call("get_weather:0", "Beijing")],
        },
        "vLLM >= 0.17": {
            "role": "assistant",
            "content": None,
            "reasoning": "Start with Beijing.",
            "tool_calls": [_call("functions.get_weather:0", "Beijing")],
        },
        "no thinking": {
            "role": "assistant",
            "content": "",
            "refusal": None,
            "tool_calls": [_call("get_weather:0", "Beijing")],
        },
        "a final answer": {
            "role": "assistant",
            "content": "It's sunny in Beijing.",
            "reasoning_content": "Answer briefly.",
            "tool_calls": None,
        },
    }


def history_battery() -> list[Case]:
    """Assistant messages as servers return them (seeded): Moonshot's or vLLM's reasoning field
    or none, content None, "" or text, tool_calls None, [] or one to two calls, Cyrillic and
    emoji in the reasoning, a refusal field."""
    rng = seeded("n06 for_history")
    out = []
    for _ in range(22):
        message: dict[str, Any] = {"role": "assistant"}
        message["content"] = rng.choice([None, "", "Проверю погоду.", "Sunny ☀️\n"])
        key = rng.choice([*REASONING_KEYS, None])
        if key:
            message[key] = rng.choice(["Start with Beijing.", "Сначала Москва 🤔", "a < b\n"])
        if rng.random() < 0.5:
            message["refusal"] = None
        calls = [_call(f"get_weather:{k}", rng.choice(VALUES)) for k in range(rng.randint(0, 2))]
        message["tool_calls"] = calls or rng.choice([None, []])
        out.append(case_of(message))
    return out


def _comparable(message: Any) -> dict[str, Any]:
    """The fields the check compares: role, content, calls (empty = none), reasoning by name."""
    if not isinstance(message, dict):
        return {"not a dict": repr(message)}
    calls = message.get("tool_calls")
    out = {
        "role": message.get("role"),
        "content": message.get("content") or "",
        "tool_calls": calls if calls or calls == [] else None,
    }
    for key in REASONING_KEYS:
        if message.get(key):
            out[key] = message[key]
    return out


def _same_message(expected: dict[str, Any], got: dict[str, Any]) -> bool:
    """The comparable dicts agree, no calls being None, a missing field or `[]` alike, except an
    empty list where the server sent none: that is a list the API refuses (`_invented_empty`)."""
    if _invented_empty(expected, got):
        return False
    return {**expected, "tool_calls": expected.get("tool_calls") or []} == {
        **got,
        "tool_calls": got.get("tool_calls") or [],
    }


def _invented_empty(server: dict[str, Any], got: Any) -> bool:
    """`tool_calls: []` in the answer for a message whose server sent no list of calls."""
    return isinstance(got, dict) and got.get("tool_calls") == [] and server.get("tool_calls") != []


def _why_not_the_same(name: str, expected: dict[str, Any], got: dict[str, Any]) -> NotYet:
    """The hint for a message that keeps the reasoning but differs otherwise: a second reasoning
    field, the calls changed (named by where), or the whole pair."""
    case_en, case_ru = variant(name)
    extra = [k for k in REASONING_KEYS if k in got and k not in expected]
    if extra:
        used = [k for k in REASONING_KEYS if k in expected] or ["none"]
        return NotYet(
            f"{case_en} the message carries {extra[0]!r}, a field this server did not send (it "
            f"used {used[0]!r}): keep the reasoning under the server's one name only.",
            f"{case_ru} в сообщении есть {extra[0]!r}, а сервер такого поля не присылал (у него "
            f"{used[0]!r}): оставьте рассуждение только под тем именем, которое дал сервер.",
        )
    calls, theirs = expected.get("tool_calls"), got.get("tool_calls")
    where = difference(calls, theirs) if calls and theirs else None
    if where:
        path, want, have = where
        return NotYet(
            f"{case_en} at tool_calls{path} expected {shorten(want)}, got {shorten(have)}: the "
            "calls go back exactly as the server sent them (id, type, function).",
            f"{case_ru} в tool_calls{path} ожидалось {shorten(want)}, получено {shorten(have)}: "
            "вызовы возвращаются ровно такими, какими их прислал сервер (id, type, function).",
        )
    return mismatch(variant(name), expected, got)


@exercise
def check_history_message(for_history: Callable[[dict], Any]) -> None:
    """Exercise 1: the message to append keeps content, calls and the reasoning under its name."""
    from helpers.replay.validation import ApiError, check_chat_request

    for name, message in server_messages().items():
        given = copy.deepcopy(message)
        got = call_student(for_history, given, case=(f"'{name}'", CASE_RU[name]))
        got = _comparable(
            returned(got, "for_history(...)", ("a message dict", "словарь сообщения"))
        )
        expected = _comparable(message)
        if _invented_empty(expected, got):
            raise NotYet(
                f"for '{name}' the server sent no calls (tool_calls None) and your message has "
                "`tool_calls: []`: OpenAI's API refuses an empty tool_calls array with a 400 "
                '("empty array"), so a message without calls goes back without a list of calls.',
                f"для варианта «{CASE_RU[name]}» сервер не прислал вызовов (tool_calls равно "
                "None), а в вашем сообщении `tool_calls: []`: API OpenAI отвечает на пустой "
                "массив tool_calls ошибкой 400 («empty array»), поэтому сообщение без вызовов "
                "возвращается без списка вызовов.",
            )
        if _same_message(expected, got):
            continue
        missing = [k for k in REASONING_KEYS if k in expected and k not in got]
        if missing:
            raise NotYet(
                f"for '{name}' the reasoning is lost: keep {missing[0]!r} as the server "
                "named it (Moonshot would answer 400 on the next round).",
                f"для варианта «{CASE_RU[name]}» рассуждение потерялось: сохраните "
                f"{missing[0]!r} под тем же именем, что у сервера (Moonshot ответит 400 "
                "в следующем раунде).",
            )
        raise _why_not_the_same(name, expected, got)
    on_battery(
        lambda message: _comparable(
            returned(
                for_history(message), "for_history(...)", ("a message dict", "словарь сообщения")
            )
        ),
        _comparable,
        history_battery(),
        name="for_history",
        wanted=("a message dict", "словарь сообщения"),
        same=_same_message,
        idea=(
            "The message goes back with its content, its calls and its reasoning under the "
            "field name the server used; no calls stay no calls (an API refuses an empty list).",
            "Сообщение возвращается со своим content, своими вызовами и рассуждением под тем "
            "именем поля, которое дал сервер; нет вызовов — нет и списка (пустой список API "
            "не примет).",
        ),
    )
    moonshot = call_student(for_history, server_messages()["Moonshot, thinking on"])
    moonshot = returned(moonshot, "for_history(...)", ("a message dict", "словарь сообщения"))
    result = {"role": "tool", "tool_call_id": "get_weather:0", "content": "{}"}
    body = {
        "model": "kimi-k2.6",
        "messages": [{"role": "user", "content": "Weather?"}, moonshot, result],
    }
    try:
        check_chat_request(body)
    except ApiError as error:
        raise server_refusal(error.message) from None


# --- exercise 2: Kimi id hygiene ------------------------------------------------------------------


def _tool(call_id: str, city: str) -> dict[str, Any]:
    content = json.dumps({"city": city, "weather": "Sunny"})
    return {"role": "tool", "tool_call_id": call_id, "name": "get_weather", "content": content}


def id_histories() -> dict[str, list[dict[str, Any]]]:
    """Histories with foreign or Moonshot-style ids, by description."""
    return {
        "OpenAI-style ids": [
            {"role": "user", "content": "Beijing, then Moscow?"},
            {"role": "assistant", "content": "", "tool_calls": [_call("call_a1b2c3", "Beijing")]},
            _tool("call_a1b2c3", "Beijing"),
            {"role": "assistant", "content": "", "tool_calls": [_call("call_d4e5f6", "Moscow")]},
            _tool("call_d4e5f6", "Moscow"),
        ],
        "two calls in one message": [
            {"role": "user", "content": "Beijing and Shanghai?"},
            {
                "role": "assistant",
                "content": "Checking both.",
                "tool_calls": [
                    _call("get_weather:0", "Beijing"),
                    _call("get_weather:1", "Shanghai"),
                ],
            },
            _tool("get_weather:1", "Shanghai"),
            _tool("get_weather:0", "Beijing"),
            {"role": "assistant", "content": "Both sunny."},
        ],
    }


def id_battery() -> list[Case]:
    """Histories (seeded): a system message first or not, one to three rounds whose ids repeat
    (get_weather:0 every round) or are OpenAI's call_..., several tools (names with digits,
    dashes and dots), parallel results in another order, a final answer."""
    rng = seeded("n06 normalize_ids")
    out = []
    for n in range(22):
        history: list[dict[str, Any]] = []
        if n % 2:
            history.append({"role": "system", "content": "Answer briefly."})
        history.append({"role": "user", "content": rng.choice(VALUES) or "Weather?"})
        for _ in range(rng.randint(1, 3)):
            calls = []
            for k in range(rng.randint(1, 3)):
                call_id = rng.choice([f"{{}}:{k}", f"call_{rng.getrandbits(32):08x}"])
                name = rng.choice(NAMES[:4])
                call = _call(call_id.format(name), rng.choice(VALUES))
                call["function"]["name"] = name
                calls.append(call)
            history.append({"role": "assistant", "content": "", "tool_calls": calls})
            results = [_tool(c["id"], "X") | {"name": c["function"]["name"]} for c in calls]
            if rng.random() < 0.5:
                results.reverse()
            history += results
        history.append({"role": "assistant", "content": "Готово ✅"})
        out.append(_id_case(history))
    return [*_kimi_ids_already(), *out]


def _id_case(history: list[dict[str, Any]]) -> Case:
    """A battery case shown as its call ids, a message's calls joined by '+'."""
    ids = ", ".join(
        "+".join(c["id"] for c in m["tool_calls"]) for m in history if m.get("tool_calls")
    )
    return case_of(history, shown=f"<{ids}>")


def _kimi_ids_already() -> list[Case]:
    """Histories that already hold Moonshot-style ids with another counter: a history trimmed to
    its last rounds (its first call kept `functions.get_weather:3`), and `:0` reused by every
    round. Such an id is renamed like any other."""
    trimmed = [
        {"role": "user", "content": "And Moscow?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("functions.get_weather:3", "Beijing")],
        },
        _tool("functions.get_weather:3", "Beijing"),
        {"role": "assistant", "content": "", "tool_calls": [_call("call_8f14e45fceea", "Moscow")]},
        _tool("call_8f14e45fceea", "Moscow"),
    ]
    reused = [{"role": "user", "content": "Beijing, then Moscow?"}]
    for city in ("Beijing", "Moscow"):
        reused += [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [_call("functions.get_weather:0", city)],
            },
            _tool("functions.get_weather:0", city),
        ]
    return [_id_case(trimmed), _id_case(reused)]


def orphan_result() -> list[Case]:
    """A history whose start was cut: the first result's call is gone, its id stays."""
    orphan = [
        _tool("call_8f14e45fceea", "Beijing"),
        {"role": "user", "content": "And Moscow?"},
        {"role": "assistant", "content": "", "tool_calls": [_call("call_aaaa", "Moscow")]},
        _tool("call_aaaa", "Moscow"),
    ]
    return [case_of(orphan, shown="<tool_call_id=call_8f14e45fceea, call_aaaa>")]


ID_MISTAKES = (
    Explain(
        KeyError,
        r"'((?:call_|functions\.)[^']*)'",
        "no call in this history has the id {0!r} (the history's start, with the call, was "
        "cut away): a tool_call_id that answers no call stays as it is.",
        "ни у одного вызова в этой истории нет id {0!r} (начало истории вместе с вызовом "
        "обрезано): tool_call_id, который не отвечает ни на один вызов, остаётся как есть.",
    ),
)


def _call_ids(history: list[Any]) -> list[Any]:
    """The ids of the calls in a history, in order (messages that are not dicts are skipped)."""
    calls = [c for m in history if isinstance(m, dict) for c in m.get("tool_calls") or []]
    return [c.get("id") for c in calls]


def _first_changed_message(name: str, expected: list[Any], got: list[Any]) -> NotYet:
    """The hint for a history whose call ids are right but that differs elsewhere: the first
    message that differs, and where in it."""
    case_en, case_ru = f"for '{name}'", f"для варианта «{CASE_RU[name]}»"
    rule = (
        "only the call ids and the tool_call_ids that answer them change, every other message "
        "and key stays as it was.",
        "меняются только id вызовов и tool_call_id, которые на них отвечают, все остальные "
        "сообщения и ключи остаются как были.",
    )
    if len(got) != len(expected):
        return NotYet(
            f"{case_en} the history has {len(expected)} messages, normalize_ids returned "
            f"{len(got)}: {rule[0]}",
            f"{case_ru} в истории {len(expected)} сообщений, normalize_ids вернула {len(got)}: "
            f"{rule[1]}",
        )
    index = next(i for i, (w, h) in enumerate(zip(expected, got, strict=True)) if w != h)
    want, have = expected[index], got[index]
    role = want.get("role", "?")
    if isinstance(have, dict) and want.keys() != have.keys():
        lost, added = sorted(set(want) - set(have)), sorted(set(have) - set(want))
        en = [f"lost the keys {lost}"] * bool(lost) + [f"got keys it did not have {added}"] * bool(
            added
        )
        ru = [f"потеряло ключи {lost}"] * bool(lost) + [f"получило лишние ключи {added}"] * bool(
            added
        )
        return NotYet(
            f"{case_en} history[{index}] (role {role!r}) {' and '.join(en)}: {rule[0]}",
            f"{case_ru} сообщение history[{index}] (role {role!r}) {' и '.join(ru)}: {rule[1]}",
        )
    path, want, have = difference(want, have) or ("", want, have)
    if path.endswith("tool_call_id"):
        return NotYet(
            f"{case_en} history[{index}]'s tool_call_id must get the new id of its call: "
            f"expected {shorten(want)}, got {shorten(have)}.",
            f"{case_ru} у сообщения history[{index}] tool_call_id должен получить новый id своего "
            f"вызова: ожидалось {shorten(want)}, получено {shorten(have)}.",
        )
    return NotYet(
        f"{case_en} history[{index}] (role {role!r}) differs at {path or 'the top'}: expected "
        f"{shorten(want)}, got {shorten(have)}; {rule[0]}",
        f"{case_ru} сообщение history[{index}] (role {role!r}) отличается в {path or 'целом'}: "
        f"ожидалось {shorten(want)}, получено {shorten(have)}; {rule[1]}",
    )


@exercise
def check_normalize(normalize_ids: Callable[[list], Any]) -> None:
    """Exercise 2: ids become `functions.NAME:K`, results follow, the input stays unchanged."""
    for name, history in id_histories().items():
        before = copy.deepcopy(history)
        got = call_student(normalize_ids, history)
        if history != before:
            raise NotYet(
                "return a new list; the history you were given must stay unchanged.",
                "верните новый список; переданная история должна остаться прежней.",
            )
        expected = normalize_kimi_ids(before)
        got = returned(got, "normalize_ids(...)", ("a list of messages", "список сообщений"))
        if got == expected:
            continue
        want, have = _call_ids(expected), _call_ids(got) if isinstance(got, list) else got
        if have != want:
            raise NotYet(
                f"for '{name}' the call ids should be {want}, got {have}.",
                f"для варианта «{CASE_RU[name]}» id вызовов должны быть {want}, получено {have}.",
            )
        raise _first_changed_message(name, expected, got)

    on_battery(
        normalize_ids,
        normalize_kimi_ids,
        id_battery(),
        name="normalize_ids",
        wanted=("a list of messages", "список сообщений"),
        idea=(
            "One counter runs over the whole conversation, for all tools together, and renames "
            "every call, one that already looks like functions.NAME:K too; each result follows "
            "the call it answers in the latest round.",
            "Один счётчик идёт через весь разговор, общий для всех инструментов, и переименовывает "
            "каждый вызов, даже уже похожий на functions.ИМЯ:K; каждый результат следует за "
            "вызовом, на который отвечает, в последнем раунде.",
        ),
    )
    on_battery(
        normalize_ids,
        normalize_kimi_ids,
        orphan_result(),
        name="normalize_ids",
        wanted=("a list of messages", "список сообщений"),
        explain=ID_MISTAKES,
        idea=(
            "A tool_call_id that answers no call of the history (its call was cut away with "
            "the history's start) stays as it is.",
            "tool_call_id, который не отвечает ни на один вызов истории (вызов обрезан вместе с "
            "началом истории), остаётся как есть.",
        ),
    )


# --- exercise 3: reasoning from a stream ----------------------------------------------------------


def reasoning_streams() -> dict[str, tuple[list[Any], tuple[str | None, str]]]:
    """Streams and the (field name, reasoning) each should give."""
    usage = {"prompt_tokens": 9, "completion_tokens": 9, "total_tokens": 18}
    role = {"role": "assistant", "content": ""}
    return {
        "Moonshot": (
            [
                _chunk(role),
                _chunk({"reasoning_content": "Start "}),
                _chunk({"reasoning_content": "with Beijing."}),
                _chunk({"content": "Hi"}),
            ],
            ("reasoning_content", "Start with Beijing."),
        ),
        "vLLM with a usage chunk": (
            [
                _chunk(role),
                _chunk({"reasoning": "Beijing"}),
                _chunk({"reasoning": " first."}),
                _chunk(None, usage=usage),
            ],
            ("reasoning", "Beijing first."),
        ),
        "no thinking": ([_chunk(role), _chunk({"content": "Hi"})], (None, "")),
        "reasoning in the first chunk": (
            [
                _chunk({**role, "reasoning_content": "Rome "}),
                _chunk({"reasoning_content": "is warm."}),
                _chunk({"content": "Hi"}),
            ],
            ("reasoning_content", "Rome is warm."),
        ),
    }


def reasoning_battery() -> list[Case]:
    """Streams (seeded) with Moonshot's or vLLM's field, reasoning in two to six pieces with
    empty deltas, content and a tool call in between or after, Cyrillic, a usage chunk."""
    rng = seeded("n06 reasoning_of")
    out = []
    for n in range(22):
        key = "reasoning_content" if n % 2 else "reasoning"
        chunks = [_chunk({"role": "assistant", "content": ""})]
        words = rng.sample(
            ["Beijing ", "first, ", "then ", "Москва ", "☀️ ", "\n", "a<b "], rng.randint(2, 6)
        )
        if n % 7 == 6:
            words = []
        for k, word in enumerate(words):
            chunks.append(_chunk({key: word}))
            if rng.random() < 0.3:
                chunks.append(_chunk({"content": ""}))
            if k == 0 and rng.random() < 0.3:  # a tool call between two pieces of reasoning
                chunks.append(
                    _chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "t0",
                                    "type": "function",
                                    "function": {"name": "f", "arguments": "{}"},
                                }
                            ]
                        }
                    )
                )
        chunks.append(_chunk({"content": rng.choice(["Hi", "Привет", ""])}, "stop"))
        if rng.random() < 0.5:
            chunks.append(
                _chunk(None, usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
            )
        out.append(case_of(chunks, shown=f"<{len(chunks)} chunks, {key}: {''.join(words)!r}>"))
    return out


def _empty_fields_first() -> list[Case]:
    """Streams whose first delta carries a reasoning field that holds nothing (`""` or null):
    an empty field is no thinking, and the name is the first field that brings text."""
    role = {"role": "assistant", "content": ""}
    empty = [_chunk(role | {"reasoning_content": ""}), _chunk({"content": "Sunny."}, "stop")]
    late = [
        _chunk(role | {"reasoning": None}),
        _chunk({"reasoning_content": "Beijing "}),
        _chunk({"reasoning_content": "first."}),
        _chunk({"content": "Sunny."}, "stop"),
    ]
    return [
        case_of(empty, shown='<2 chunks: reasoning_content="", content="Sunny.">'),
        case_of(
            late,
            shown='<4 chunks: reasoning=None, reasoning_content="Beijing "+"first.", '
            'content="Sunny.">',
        ),
    ]


def _reasoning(chunks: list[Any]) -> tuple[str | None, str]:
    name, text = None, ""
    for piece in chunks:
        if not piece.choices:
            continue
        for key in REASONING_KEYS:
            value = getattr(piece.choices[0].delta, key, None)
            if value:
                name, text = name or key, text + value
    return name, text


REASONING_MISTAKES = (
    Explain(
        IndexError,
        r"list index out of range",
        "the usage chunk at the end of a stream has `choices: []` (you met it in lesson 03): skip "
        "a chunk without choices before reading chunk.choices[0].",
        "у фрагмента со статистикой в конце потока `choices: []` (вы уже видели его в уроке 03): "
        "пропускайте фрагмент без choices, прежде чем читать chunk.choices[0].",
    ),
    Explain(
        AttributeError,
        r"object has no attribute '(reasoning_content|reasoning)'",
        'a delta has only the fields the server sent: read .{0} with getattr(delta, "{0}", None).',
        "у дельты есть только те поля, что прислал сервер: читайте .{0} через "
        'getattr(delta, "{0}", None).',
    ),
)


@exercise
def check_reasoning_of(reasoning_of: Callable[[list], Any]) -> None:
    """Exercise 3: (field name, whole reasoning) from a stream, under either name."""
    for name, (chunks, expected) in reasoning_streams().items():
        got = call_student(
            reasoning_of,
            list(chunks),
            explain=REASONING_MISTAKES,
            case=(f"the stream '{name}'", CASE_RU[name]),
        )
        got = as_tuples(
            returned(got, "reasoning_of(...)", ("a pair (name, text)", "пара (имя, текст)"))
        )
        if got != expected:
            raise mismatch(
                (f"for the stream '{name}'", f"для потока «{CASE_RU[name]}»"), expected, got
            )
    on_battery(
        reasoning_of,
        _reasoning,
        _empty_fields_first(),
        name="reasoning_of",
        wanted=("a pair (name, text)", "пара (имя, текст)"),
        explain=REASONING_MISTAKES,
        idea=(
            'A field that holds nothing ("" or null) is no thinking: the name is that of the '
            "first field that brings text.",
            'Поле, в котором ничего нет ("" или null), — это не рассуждение: имя берётся у '
            "первого поля, в котором пришёл текст.",
        ),
        more=[
            (
                reasoning_battery(),
                (
                    "The reasoning is every piece of the field, glued in order to the stream's "
                    "end, whatever comes between the pieces.",
                    "Рассуждение — это все куски этого поля, склеенные по порядку до конца "
                    "потока, что бы ни стояло между ними.",
                ),
            )
        ],
    )
