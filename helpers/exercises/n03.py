"""Self-checks for lesson 03 (streaming): assembling calls, repairing a history, reading usage."""

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
    call_student,
    case_of,
    exercise,
    generated_arguments,
    on_battery,
    returned,
    seeded,
    server_refusal,
    shorten,
    weather_call,
)
from helpers.exercises._verdict import chunk as _chunk
from helpers.streaming import ToolCallAccumulator


def _header(index: int, call_id: str, name: str) -> dict[str, Any]:
    """The first delta of a call: index, id, name, empty arguments."""
    piece = {"index": index, "id": call_id, "type": "function"}
    return {"tool_calls": [piece | {"function": {"name": name, "arguments": ""}}]}


def _args(index: int, text: str) -> dict[str, Any]:
    """A later delta of a call: index and an argument fragment."""
    return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}


def sample_streams() -> dict[str, list[Any]]:
    """Streams the checks use: one call; interleaved calls plus usage; a delta without function."""
    usage = {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110}
    return {
        "one call": [
            _chunk({"role": "assistant", "content": ""}),
            _chunk(_header(0, "get_weather:0", "get_weather")),
            _chunk(_args(0, '{"city": ')),
            _chunk(_args(0, '"Beijing"}')),
            _chunk({}, "tool_calls"),
        ],
        "interleaved calls with a usage chunk": [
            _chunk({"role": "assistant", "content": "Checking."}),
            _chunk(_header(0, "get_weather:0", "get_weather")),
            _chunk(_header(1, "get_weather:1", "get_weather")),
            _chunk(_args(1, '{"city": "Mos')),
            _chunk(_args(0, '{"city": "Shang')),
            _chunk(_args(0, 'hai"}')),
            _chunk(_args(1, 'cow"}')),
            _chunk({}, "tool_calls"),
            _chunk(None, usage=usage),
        ],
        "a delta without function": [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"tool_calls": [{"index": 0, "id": "functions.get_weather:0"}]}),
            _chunk({"tool_calls": [{"index": 0, "type": "function"}]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"name": "get_weather"}}]}),
            _chunk(_args(0, '{"city": "Moscow"}')),
            _chunk({}, "tool_calls"),
        ],
    }


def _pieces(text: str, rng: Any) -> list[str]:
    """`text` cut at one to three random places (how a server streams arguments)."""
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 3))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def generated_stream(rng: Any) -> tuple[list[Any], list[str]]:
    """One stream: text first or not, one to three calls whose fragments interleave (sometimes
    several pieces in one delta), a usage chunk at the end or not; and how a hint names it."""
    n = rng.randint(1, 3)
    calls = []
    for k in range(n):
        call_id = rng.choice([f"call_{rng.getrandbits(32):08x}", f"functions.x:{k}", f"t{k}"])
        arguments = json.dumps(generated_arguments(rng), ensure_ascii=rng.random() < 0.5)
        calls.append((k, call_id, rng.choice(NAMES), _pieces(arguments, rng)))
    chunks = [_chunk({"role": "assistant", "content": rng.choice(["", "Проверю. "])})]
    headers = {k: _header(k, i, name) for k, i, name, _ in calls}
    pending = {k: list(parts) for k, _, _, parts in calls}
    events = []
    while any(pending.values()):  # a call's header first, then its pieces; the calls mixed
        k = rng.choice([k for k, parts in pending.items() if parts])
        if k in headers:
            events.append((k, headers.pop(k)))
        events.append((k, _args(k, pending[k].pop(0))))
    i = 0
    while i < len(events):
        if i + 1 < len(events) and rng.random() < 0.25:  # two pieces in one delta
            both = events[i][1]["tool_calls"] + events[i + 1][1]["tool_calls"]
            chunks.append(_chunk({"tool_calls": both}))
            i += 2
        else:
            chunks.append(_chunk(events[i][1]))
            i += 1
    chunks.append(_chunk({}, "tool_calls"))
    if rng.random() < 0.5:
        total = rng.randint(50, 900)
        chunks.append(
            _chunk(
                None,
                usage={"prompt_tokens": total - 7, "completion_tokens": 7, "total_tokens": total},
            )
        )
    return chunks, [c[1] for c in calls]


def stream_battery(seed: str) -> list[Case]:
    """Generated streams (seeded); a hint names a stream by its calls' ids."""
    rng = seeded(seed)
    out = []
    for _ in range(22):
        chunks, ids = generated_stream(rng)
        out.append(case_of(chunks, shown=f"<{len(chunks)} chunks: calls {', '.join(ids)}>"))
    return out


def finish_carries_pieces() -> Case:
    """A stream whose last argument pieces come in the chunk that carries finish_reason (vLLM
    sends what it has not streamed yet there): a loop that stops at finish_reason loses them."""
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk(_header(0, "call_5f1e", "get_weather")),
        _chunk(_args(0, '{"city": "Bei')),
        _chunk(_header(1, "call_5f1f", "get-weather")),
        _chunk(
            {
                "tool_calls": [
                    *_args(0, 'jing"}')["tool_calls"],
                    *_args(1, '{"city": "Осло"}')["tool_calls"],
                ]
            },
            "tool_calls",
        ),
    ]
    return case_of(
        chunks,
        shown="<5 chunks: calls call_5f1e, call_5f1f; finish_reason='tool_calls' + "
        "delta.tool_calls>",
    )


def filtered_streams() -> list[Case]:
    """Streams that open with a chunk of `choices: []` and no usage (Azure OpenAI sends its
    prompt-filter results so), with and without a usage chunk at the end."""
    out = []
    for name, chunks in sample_streams().items():
        opened = [_chunk(None), *chunks]
        out.append(case_of(opened, shown=f"<choices: [] + {name!r}, {len(opened)} chunks>"))
    return out


def first_chunk_streams() -> list[Case]:
    """Streams whose first chunk already carries a call's first piece, beside the role (OpenAI
    sends a call that opens the answer so)."""
    out = []
    for ids, cities in (
        (["call_9b1d0e7a"], ["Beijing"]),
        (["call_2c4e", "call_2c4f"], ["Осло", "Paris"]),
    ):
        chunks = [
            _chunk({"role": "assistant", "content": None, **_header(0, ids[0], "get_weather")}),
            _chunk(_args(0, json.dumps({"city": cities[0]}, ensure_ascii=False))),
        ]
        if len(ids) > 1:
            chunks += [
                _chunk(_header(1, ids[1], "get-weather")),
                _chunk(_args(1, json.dumps({"city": cities[1]}))),
            ]
        chunks.append(_chunk({}, "tool_calls"))
        head = "{'role': 'assistant', 'tool_calls': [...]}"
        out.append(
            case_of(chunks, shown=f"<{len(chunks)} chunks: calls {', '.join(ids)}; 1: {head}>")
        )
    return out


def whole_call_streams() -> list[Case]:
    """Streams that send each call whole in one delta, id, name and all the arguments (Ollama)."""
    out = []
    for ids in (["call_k3v9x1qe"], ["call_a1b2c3d4", "call_e5f6a7b8"]):
        chunks = [_chunk({"role": "assistant", "content": ""})]
        for k, call_id in enumerate(ids):
            arguments = json.dumps({"city": VALUES[k + 1], "days": k + 1}, ensure_ascii=False)
            piece = {"index": k, "id": call_id, "type": "function"}
            whole = piece | {"function": {"name": NAMES[k], "arguments": arguments}}
            chunks.append(_chunk({"tool_calls": [whole]}))
        chunks.append(_chunk({}, "tool_calls"))
        out.append(case_of(chunks, shown=f"<{len(chunks)} chunks: calls {', '.join(ids)}, whole>"))
    return out


def no_argument_streams() -> list[Case]:
    """A call of a tool without parameters whose arguments stream as "" (nothing follows its
    header), alone and before a call with arguments."""
    alone = [_chunk({"role": "assistant", "content": None}), _chunk(_header(0, "call_t1", "now"))]
    beside = [*alone, _chunk(_header(1, "call_t2", "get_weather")), _chunk(_args(1, '{"q": 1}'))]
    out = []
    for chunks, shown in ((alone, "call_t1 (now, no arguments)"), (beside, "call_t1, call_t2")):
        chunks = [*chunks, _chunk({}, "tool_calls")]
        out.append(case_of(chunks, shown=f"<{len(chunks)} chunks: calls {shown}>"))
    return out


def text_streams() -> list[Case]:
    """Streams with a text answer and no call, ending in a usage chunk (the usage chunk does not
    depend on calls). In the second the total is more than the two parts: made-up numbers, as
    the exercise reads the total the server sends, not a sum of its own."""
    out = []
    for total in (35, 130):
        usage = {"prompt_tokens": 20, "completion_tokens": 15, "total_tokens": total}
        chunks = [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"content": "Sunny."}),
            _chunk({}, "stop"),
            _chunk(None, usage=usage),
        ]
        out.append(case_of(chunks, shown=f"<4 chunks: the text 'Sunny.', usage total {total}>"))
    return out


def empty_stream() -> Case:
    """A stream with no chunks at all (a stream already read to its end gives [])."""
    return case_of([], shown="[]")


def _accumulated(chunks: list[Any]) -> list[dict[str, Any]]:
    accumulator = ToolCallAccumulator()
    for piece in chunks:
        accumulator.add(piece)
    return accumulator.tool_calls


def _total(chunks: list[Any]) -> int | None:
    return next((c.usage.total_tokens for c in chunks if c.usage), None)


# `list index out of range` in an assembler: which list, told by the line that raised it
CHOICES_EMPTY = (
    "a chunk of `choices: []` has no choices[0]: the usage chunk at the end of a stream is one, "
    "and some servers (Azure OpenAI) open the stream with one",
    "у фрагмента с `choices: []` нет choices[0]: таков фрагмент со статистикой в конце потока, "
    "а некоторые серверы (Azure OpenAI) таким фрагментом поток открывают",
)
INDEX_AHEAD = (
    "a call's first piece may come after a piece of a call with a higher index (index 1 "
    "before index 0), so your list may have no entry at piece.index yet",
    "первая часть вызова может прийти после части вызова с большим index (index 1 раньше, "
    "чем index 0), и тогда в вашем списке ещё нет элемента с номером piece.index",
)
ASSEMBLE_MISTAKES = (
    Explain(
        IndexError,
        r"list index out of range",
        f"{CHOICES_EMPTY[0]}: skip a chunk without choices before reading chunk.choices[0].",
        f"{CHOICES_EMPTY[1]}: пропускайте фрагмент без choices, прежде чем читать "
        "chunk.choices[0].",
        line=r"choices",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        f"{INDEX_AHEAD[0]}: make room up to piece.index before you read that entry.",
        f"{INDEX_AHEAD[1]}: прежде чем читать этот элемент, нарастите список до piece.index.",
        line=r".",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        f"either {CHOICES_EMPTY[0]}, or {INDEX_AHEAD[0]}.",
        f"либо {CHOICES_EMPTY[1]}, либо {INDEX_AHEAD[1]}.",
    ),
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute '(name|arguments)'",
        "a piece of tool_calls may come without function (only index and id): check "
        "piece.function before reading .{0}.",
        "часть tool_calls может прийти без function (только index и id): проверьте "
        "piece.function, прежде чем читать .{0}.",
    ),
    Explain(
        TypeError,
        r'can only concatenate str \(not "NoneType"\)',
        'a fragment\'s id, name or arguments may be None: add `or ""` before gluing.',
        'id, name или arguments во фрагменте могут быть None: перед склейкой добавьте `or ""`.',
    ),
)

NO_CHUNKS = (
    "a stream may have no chunks at all (one already read to its end gives []), and so no "
    "usage chunk: the answer is None",
    "в потоке может не быть ни одного фрагмента (уже прочитанный до конца поток даёт []), а "
    "значит, и фрагмента со статистикой: ответ — None",
)
USAGE_MISTAKES = (
    Explain(
        AttributeError,
        r"'NoneType' object has no attribute 'total_tokens'",
        "only the usage chunk has usage set; for every other chunk usage is None (the "
        "ordinary chunks, and chunks[-1] of a stream without a usage chunk): look for a chunk "
        "whose usage is set, else return None.",
        "usage заполнено только во фрагменте со статистикой; у всех остальных usage равно None "
        "(у обычных фрагментов и у chunks[-1] в потоке без статистики): найдите фрагмент с "
        "заполненным usage, а если его нет, верните None.",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        "the usage chunk has `choices: []`: read chunk.usage, not chunk.choices[0].",
        "у фрагмента со статистикой `choices: []`: читайте chunk.usage, а не chunk.choices[0].",
        line=r"choices",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        f"{NO_CHUNKS[0]}: then there is no chunks[-1] either.",
        f"{NO_CHUNKS[1]}: тогда нет и chunks[-1].",
        line=r".",
    ),
    Explain(
        IndexError,
        r"list index out of range",
        "either the usage chunk's `choices: []` has no choices[0] (read chunk.usage instead), or "
        f"{NO_CHUNKS[0]}.",
        "либо у фрагмента со статистикой `choices: []` и нет choices[0] (читайте chunk.usage), "
        f"либо {NO_CHUNKS[1]}.",
    ),
)


@exercise
def check_assemble(assemble_tool_calls: Callable[[list[Any]], Any]) -> None:
    """Exercise 1: the learner's assembler must match `ToolCallAccumulator` on every stream."""
    for name, chunks in sample_streams().items():
        name_ru = CASE_RU[name]
        got = call_student(
            assemble_tool_calls,
            list(chunks),
            explain=ASSEMBLE_MISTAKES,
            case=(f"the stream '{name}'", name_ru),
        )
        accumulator = ToolCallAccumulator()  # the right answer: the course's accumulator
        for chunk in chunks:
            accumulator.add(chunk)
        expected = accumulator.tool_calls
        got = returned(got, "assemble_tool_calls(...)", ("a list of dicts", "список словарей"))
        if got == expected:
            continue
        if not got:
            raise NotYet(
                f"no tool calls for the stream '{name}': glue each fragment onto "
                "tool_calls[piece.index].",
                f"нет вызовов для потока «{name_ru}»: приклейте каждую часть к "
                "tool_calls[piece.index].",
            )
        raise NotYet(
            f"for the stream '{name}' expected {shorten(expected)}, got {shorten(got)}.",
            f"для потока «{name_ru}» ожидалось {shorten(expected)}, получено {shorten(got)}.",
        )
    on_battery(
        assemble_tool_calls,
        _accumulated,
        [*stream_battery("n03 assemble"), finish_carries_pieces()],
        name="assemble_tool_calls",
        wanted=("a list of dicts", "список словарей"),
        explain=ASSEMBLE_MISTAKES,
        idea=(
            "Every piece of every delta belongs to the call its index names, and the pieces of "
            "one call may come between pieces of another.",
            "Каждый кусок каждой дельты относится к вызову с его index, а куски одного вызова "
            "могут идти вперемешку с кусками другого.",
        ),
        more=(
            (
                first_chunk_streams(),
                (
                    "The first chunk may carry a call's first piece beside the role (OpenAI sends "
                    "a call that opens the answer so): any chunk's delta may hold tool_calls.",
                    "Первый фрагмент может вместе с ролью нести и первую часть вызова (так OpenAI "
                    "присылает вызов, с которого начинается ответ): tool_calls бывают в дельте "
                    "любого фрагмента.",
                ),
            ),
            (
                whole_call_streams(),
                (
                    "One piece may carry a whole call, its id, name and all its arguments at once "
                    "(Ollama sends each call so): take every field the piece has.",
                    "Одна часть может нести весь вызов сразу: id, имя и все аргументы (так Ollama "
                    "присылает каждый вызов); берите каждое поле, которое в ней есть.",
                ),
            ),
            (
                no_argument_streams(),
                (
                    'A call of a tool without parameters may stream no arguments at all (""): '
                    "it is still a call, with arguments as they came.",
                    'Вызов инструмента без параметров может вовсе не прислать аргументов (""): '
                    "это всё равно вызов, с аргументами в том виде, в каком они пришли.",
                ),
            ),
            (
                [*filtered_streams(), empty_stream()],
                (
                    "A chunk of `choices: []` may come first too, without usage (Azure OpenAI "
                    "sends its prompt-filter results so), and a stream may have no chunks at all.",
                    "Фрагмент с `choices: []` может прийти и первым, без статистики (так Azure "
                    "OpenAI присылает результаты фильтра запроса), а в потоке может не быть ни "
                    "одного фрагмента.",
                ),
            ),
        ),
    )


QUESTION = "What's the weather like in Beijing today? Let's check using the tool."
CALLS = [weather_call("get_weather:0", "Beijing")]
RESULT = {
    "role": "tool",
    "tool_call_id": "get_weather:0",
    "name": "get_weather",
    "content": '{"city": "Beijing", "weather": "Sunny"}',
}


def history_battery() -> list[Case]:
    """Broken histories (seeded): a system message first or not, earlier turns without tools or
    with a complete round of tools, one to three parallel results, ids that are not
    <name>:<index>, Cyrillic."""
    rng = seeded("n03 repair")
    out = []
    for n in range(22):
        head: list[dict[str, Any]] = []
        if n % 2 == 0:
            head.append({"role": "system", "content": "You are a weather assistant."})
        for _ in range(rng.randint(0, 2)):
            head += [
                {"role": "user", "content": rng.choice(VALUES) or "Hi"},
                {"role": "assistant", "content": "Привет! Чем помочь?"},
            ]
        if n % 3 == 1:  # an earlier round that is complete: its result is not the one to repair
            earlier = weather_call(f"call_{rng.getrandbits(32):08x}", "Осло")
            head += [
                {"role": "user", "content": "And in Oslo?"},
                {"role": "assistant", "content": None, "tool_calls": [earlier]},
                {
                    "role": "tool",
                    "tool_call_id": earlier["id"],
                    "name": "get_weather",
                    "content": '{"ok": true}',
                },
                {"role": "assistant", "content": "Snow in Oslo."},
            ]
        head.append({"role": "user", "content": QUESTION})
        calls = [
            weather_call(rng.choice([f"call_{rng.getrandbits(32):08x}", f"get_weather:{k}"]), city)
            for k, city in enumerate(rng.sample(VALUES, rng.randint(1, 3)))
        ]
        results = [
            {
                "role": "tool",
                "tool_call_id": c["id"],
                "name": "get_weather",
                "content": '{"ok": true}',
            }
            for c in calls
        ]
        content = rng.choice(["", None, "Checking."])
        roles = "+".join(m["role"] for m in head + results)
        out.append(case_of(head + results, content, calls, shown=f"<{roles}>, {content!r}, calls"))
    return out


def _result(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": call["id"],
        "name": "get_weather",
        "content": '{"ok": true}',
    }


def placed_battery() -> list[Case]:
    """Broken histories (seeded) where the results to repair are not simply the messages after
    the last question: in another order than the calls (a loop that runs the tools at once adds
    each result as it finishes), after an earlier round of the same turn, or before a later
    round that is complete."""
    rng = seeded("n03 repair placed")
    out = []
    for n in range(9):
        shape = n % 3
        calls = [
            weather_call(f"call_{rng.getrandbits(32):08x}", city)
            for city in rng.sample(VALUES, rng.randint(2 if shape == 0 else 1, 3))
        ]
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        if shape == 1:  # the model called a tool, read its result, then called again
            earlier = weather_call(f"call_{rng.getrandbits(32):08x}", "Осло")
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [earlier]},
                _result(earlier),
            ]
        results = [_result(c) for c in calls]
        if shape == 0:
            results = results[1:] + results[:1] if n % 2 else results[::-1]
        messages += results
        if shape == 2:  # the round after the broken one kept its assistant message
            later = weather_call(f"call_{rng.getrandbits(32):08x}", "Paris")
            messages += [
                {"role": "assistant", "content": "", "tool_calls": [later]},
                _result(later),
                {"role": "assistant", "content": "Солнечно везде."},
            ]
        content = rng.choice(["", None, "Checking."])
        roles = "+".join(m["role"] for m in messages)
        out.append(case_of(messages, content, calls, shown=f"<{roles}>, {content!r}, calls"))
    return out


def _repaired(messages: list[dict[str, Any]], content: Any, tool_calls: Any) -> list[Any]:
    """The assistant message right before the first result that answers one of its calls."""
    assistant = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    ids = {call["id"] for call in tool_calls}
    first = next(i for i, m in enumerate(messages) if m.get("tool_call_id") in ids)
    return [*messages[:first], assistant, *messages[first:]]


def broken_history() -> list[dict[str, Any]]:
    """What the guide's streaming loop sends in round 2: a tool result with no call before it."""
    return [{"role": "user", "content": QUESTION}, copy.deepcopy(RESULT)]


@exercise
def check_history(repair: Callable[..., Any]) -> None:
    """Exercise 2: the repaired history must pass the server's checks, in the right order."""
    from helpers.replay.validation import ApiError, check_messages

    broken = broken_history()
    before = copy.deepcopy(broken)
    repaired = call_student(repair, broken, "", copy.deepcopy(CALLS))
    if broken != before:
        raise NotYet(
            "return a new list; the messages you were given must stay unchanged.",
            "верните новый список; переданные сообщения менять не нужно.",
        )
    repaired = returned(repaired, "repair(...)", ("a list of messages", "список сообщений"))
    try:
        check_messages(repaired)
    except ApiError as error:
        raise server_refusal(error.message) from None
    roles = [m.get("role") for m in repaired]
    if roles != ["user", "assistant", "tool"]:
        raise NotYet(
            f"expected the roles user, assistant, tool; got {roles}.",
            f"ожидались роли user, assistant, tool; получено {roles}.",
        )
    if repaired[1].get("tool_calls") != CALLS:
        raise NotYet(
            "the assistant message must carry the tool_calls it made.",
            "сообщение ассистента должно содержать свои tool_calls.",
        )
    on_battery(
        repair,
        _repaired,
        history_battery(),
        name="repair",
        wanted=("a list of messages", "список сообщений"),
        idea=(
            "The assistant message goes right before the results that answer its calls, "
            "wherever they stand in the history.",
            "Сообщение ассистента встаёт прямо перед результатами, которые отвечают на его "
            "вызовы, где бы они ни стояли в истории.",
        ),
        more=(
            (
                placed_battery(),
                (
                    "The results may come in another order than the calls (a loop that runs the "
                    "tools at once adds each result as it finishes), and other rounds may stand "
                    "before or after them: the assistant message goes right before the first "
                    "result that answers one of its calls.",
                    "Результаты могут идти не в том порядке, что вызовы (цикл, который запускает "
                    "инструменты одновременно, добавляет каждый результат, как только он готов), "
                    "а до и после них могут стоять другие раунды: сообщение ассистента встаёт "
                    "прямо перед первым результатом, который отвечает на один из его вызовов.",
                ),
            ),
        ),
    )


@exercise
def check_usage(total_tokens: Callable[[list[Any]], Any]) -> None:
    """Exercise 3: total tokens from the usage chunk, None without one, no IndexError."""
    streams = sample_streams()
    got = call_student(
        total_tokens,
        list(streams["interleaved calls with a usage chunk"]),
        explain=USAGE_MISTAKES,
        case=("the stream with a usage chunk", "поток со статистикой"),
    )
    got = returned(got, "total_tokens(...)", ("an int or None", "int или None"))
    if got != 110:
        raise NotYet(
            f"the stream ends with a usage chunk of total_tokens=110; you returned {got!r}.",
            f"поток заканчивается фрагментом с total_tokens=110; вы вернули {got!r}.",
        )
    got = call_student(
        total_tokens,
        list(streams["one call"]),
        explain=USAGE_MISTAKES,
        case=("a stream without a usage chunk", "поток без статистики"),
    )
    got = returned(got, "total_tokens(...)", ("an int or None", "int или None"))
    if got is not None:
        raise NotYet(
            f"a stream without a usage chunk should give None; you returned {got!r}.",
            f"для потока без статистики нужно вернуть None; вы вернули {got!r}.",
        )
    on_battery(
        total_tokens,
        _total,
        [*stream_battery("n03 usage"), *filtered_streams()],
        name="total_tokens",
        wanted=("an int or None", "int или None"),
        explain=USAGE_MISTAKES,
        idea=(
            "Only the usage chunk (if the stream has one) holds the count; any other chunk "
            "has usage None.",
            "Счёт лежит только во фрагменте со статистикой (если он есть в потоке); у "
            "остальных фрагментов usage равно None.",
        ),
        more=(
            (
                text_streams(),
                (
                    "A text answer has its usage chunk too, and the count is the total_tokens "
                    "the server wrote there (not a sum of your own).",
                    "У текстового ответа тоже есть фрагмент со статистикой, и счёт — это "
                    "total_tokens, который записал туда сервер (а не ваша сумма).",
                ),
            ),
            ([empty_stream()], tuple(f"{text[0].upper()}{text[1:]}." for text in NO_CHUNKS)),
        ),
    )
