"""The self-checks of lesson 09: a committed starter says "Not yet", a right answer "Correct!"."""

from __future__ import annotations

import json

from exercise_answers import solution
from verdicts import CORRECT
from verdicts import assert_not_yet_in_both as assert_not_yet
from verdicts import verdict_on as verdict_of

from helpers.exercises import n09
from helpers.formats import parse_kimi_xtml

# The reference solutions of the lesson, read from its hidden cells; `render_reference` is the
# lesson's `render_call` with its two choices (how to dump a value, how to name its type) open, so a
# test can build the plausible wrong answers from it.
typed_reference = solution("09", "typed_value")
xtml_type = solution("09", "xtml_type")


def render_reference(name, index, arguments, dumps=None, kind=xtml_type):
    dumps = dumps or (lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    parts = [f'<|open|>call tool="{name}" index="{index}"<|sep|>']
    for key, value in arguments.items():
        text = value if isinstance(value, str) else dumps(value)
        parts.append(
            f'<|open|>argument key="{key}" type="{kind(value)}"<|sep|>{text}<|close|>argument<|sep|>'
        )
    return "".join(parts) + "<|close|>call<|sep|>"


def test_typed_value_rejects_wrong_answers_with_a_hint(capsys) -> None:
    check = lambda fn: verdict_of(n09.check_typed_value, fn, capsys)  # noqa: E731
    starter = check(lambda text, kind: json.loads(text))  # the committed starter
    assert_not_yet(starter)
    assert "JSONDecodeError" in starter and "raw text" in starter and "сырой текст" in starter
    assert_not_yet(check(lambda text, kind: text))  # everything left as text
    guessing = check(lambda t, k: json.loads(t) if t[:1] in '0123456789tfn[{"' else t)
    assert_not_yet(guessing)  # decides by the text, so "42" of type string becomes 42
    assert "decide by the type" in guessing and "решайте по типу" in guessing
    as_float = check(lambda t, k: float(t) if k == "number" else typed_reference(t, k))
    assert_not_yet(as_float)  # 3 must stay an int, as json.loads reads it
    unquoted = check(lambda t, k: t.strip('"') if k == "string" else json.loads(t))
    assert_not_yet(unquoted)  # a string value is never unquoted
    assert check(typed_reference) == CORRECT + "\n"


def test_typed_value_oracle_is_the_parser() -> None:
    assert n09.expected_value("42", "string") == "42"
    assert n09.expected_value("3", "number") == 3
    assert n09.expected_value('{"max":5}', "object") == {"max": 5}


def test_render_call_rejects_wrong_answers_with_a_hint(capsys) -> None:
    check = lambda fn: verdict_of(n09.check_render_call, fn, capsys)  # noqa: E731
    starter = lambda name, index, arguments: (  # noqa: E731  (the committed starter)
        f'<|open|>call tool="{name}" index="{index}"<|sep|><|close|>call<|sep|>'
    )
    assert_not_yet(check(starter))
    bool_as_number = check(
        lambda n, i, a: render_reference(
            n, i, a, kind=lambda v: "number" if isinstance(v, int | float) else xtml_type(v)
        )
    )
    assert_not_yet(bool_as_number)
    assert "bool first" in bool_as_number and "bool первым" in bool_as_number
    quoted = check(lambda n, i, a: render_reference(n, i, {k: json.dumps(v) if isinstance(v, str) else v for k, v in a.items()}))  # fmt: skip
    assert_not_yet(quoted)
    assert "no quotes" in quoted and "без кавычек" in quoted
    spaced = check(
        lambda n, i, a: render_reference(n, i, a, dumps=lambda v: json.dumps(v, ensure_ascii=False))
    )
    assert_not_yet(spaced)
    assert "compact JSON" in spaced and "компактный JSON" in spaced
    from_zero = check(lambda n, i, a: render_reference(n, i - 1, a))
    assert_not_yet(from_zero)
    assert "character" in from_zero and "символа" in from_zero
    # the lesson's recipe before the fix: json.dumps escapes Cyrillic, the renderer does not
    ascii_dumps = lambda v: json.dumps(v, separators=(",", ":"))  # noqa: E731
    escaped = check(lambda n, i, a: render_reference(n, i, a, dumps=ascii_dumps))
    assert_not_yet(escaped)
    assert "\\u escapes" in escaped and "кириллицу" in escaped
    assert_not_yet(check(lambda n, i, a: None))
    assert check(render_reference) == CORRECT + "\n"


def test_the_expected_calls_parse_back_to_their_arguments() -> None:
    for name, index, arguments in n09.CALL_CASES:
        text = n09.expected_call(name, index, arguments)
        assert text.startswith(f'<|open|>call tool="{name}" index="{index}"<|sep|>')
        parsed = parse_kimi_xtml(text).tool_calls
        assert [c["function"]["name"] for c in parsed] == [name]
        assert json.loads(parsed[0]["function"]["arguments"]) == arguments


def test_lesson_reference_solutions_are_the_oracles_here() -> None:
    from scripts_support import lesson_code

    code = "\n".join(lesson_code("09_kimi_k3_xtml"))
    assert 'return text if kind == "string" else json.loads(text)' in code
    assert 'value, ensure_ascii=False, separators=(",", ":"))' in code


result_tags_reference = solution("09", "result_tags")


def test_result_tags_rejects_wrong_answers_with_a_hint(capsys) -> None:
    check = lambda fn: verdict_of(n09.check_result_tags, fn, capsys)  # noqa: E731

    def starter(messages):  # the committed starter
        tool_messages = [m for m in messages if m["role"] == "tool"]
        return {m["tool_call_id"]: (m.get("name"), n) for n, m in enumerate(tool_messages)}

    out = check(starter)
    assert_not_yet(out)
    assert "name from the call" in out and "из вызова" in out

    def by_result_order(messages):  # index = place among the results, not among the calls
        tags, calls, seen = {}, {}, 0
        for message in messages:
            if message["role"] == "assistant":
                calls, seen = {c["id"]: c["function"]["name"] for c in message["tool_calls"]}, 0
            elif message["role"] == "tool":
                seen += 1
                tags[message["tool_call_id"]] = (calls[message["tool_call_id"]], seen)
        return tags

    out = check(by_result_order)
    assert_not_yet(out)
    assert "results in the other order" in out and "not the result's place" in out

    def over_the_conversation(messages):  # index counted over every call, not per message
        tags, number = {}, 0
        names = {}
        for message in messages:
            for call in message.get("tool_calls") or []:
                number += 1
                names[call["id"]] = (call["function"]["name"], number)
            if message["role"] == "tool":
                tags[message["tool_call_id"]] = names[message["tool_call_id"]]
        return tags

    out = check(over_the_conversation)
    assert_not_yet(out)
    assert "two rounds" in out

    def from_zero(messages):
        return {
            k: (name, index - 1) for k, (name, index) in result_tags_reference(messages).items()
        }

    assert_not_yet(check(from_zero))
    assert_not_yet(check(lambda messages: []))
    assert check(result_tags_reference) == CORRECT + "\n"


def test_the_result_oracle_follows_the_render_not_the_message_order() -> None:
    cases = n09.result_cases()
    assert n09.expected_tags(cases["results in the other order"]) == n09.expected_tags(
        cases["two calls"]
    )
    assert n09.expected_tags(cases["two rounds"])["c"] == ("get_weather", 1)
