"""helpers.display: the printed views are exact, compact, and accept SDK objects and dicts alike."""

import pytest
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessage

from helpers.display import (
    compare_table,
    format_chunk,
    format_chunks,
    format_delta,
    format_raw,
    format_table,
    show_chunks,
    show_messages,
    show_raw,
    show_tool_calls,
    split_markers,
)
from helpers.formats import render_kimi_tool_calls
from helpers.i18n import shorten

BASE = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
WEATHER_CALL = {
    "id": "functions.get_weather:0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}


def chunk(delta=None, finish=None, **extra) -> dict:
    return BASE | {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]} | extra


def sdk(body: dict) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(body)


# --------------------------------------------------------------------------- messages


def test_show_messages_prints_one_block_per_message_with_sdk_assistant(capsys):
    assistant = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]}
    )
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather?\nIn Beijing, please."},
        assistant,  # what the guide's loop appends
        {
            "role": "tool",
            "tool_call_id": "functions.get_weather:0",
            "name": "get_weather",
            "content": '{"temp_c": 21}',
        },
        {"role": "assistant", "content": "It is 21 °C."},
    ]
    show_messages(messages)
    assert capsys.readouterr().out == (
        "[0] system\n"
        "    You are terse.\n"
        "[1] user\n"
        "    Weather?\n"
        "    In Beijing, please.\n"
        "[2] assistant\n"
        "    (content: None)\n"
        '    -> get_weather({"city": "Beijing"}) [functions.get_weather:0]\n'
        "[3] tool  tool_call_id=functions.get_weather:0  name=get_weather\n"
        '    {"temp_c": 21}\n'
        "[4] assistant\n"
        "    It is 21 °C.\n"
    )


def test_show_messages_shortens_long_content_and_arguments(capsys):
    long_args = '{"text": "' + "a" * 300 + '"}'
    show_messages(
        [
            {"role": "user", "content": "x" * 250},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "echo", "arguments": long_args},
                    }
                ],
            },
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "    " + "x" * 200 + "…[+50 chars]"
    assert out[3] == "    (content: '')"
    assert out[4].startswith('    -> echo({"text": "aaa') and out[4].endswith("…[+112 chars]) [c1]")


def test_show_messages_handles_parts_dict_arguments_and_empty_history(capsys):
    show_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look: "},
                    {"type": "image_url", "image_url": {"url": "x"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"a": "б"}}}],
            },
        ]
    )
    show_messages([])
    out = capsys.readouterr().out
    assert "    Look: [image_url]\n" in out
    assert '    -> f({"a": "б"}) [c1]\n' in out
    assert out.endswith("(no messages)\n")


def test_shorten_keeps_short_text_and_counts_the_rest():
    assert shorten("abc", 3) == "abc"
    assert shorten("abcdef", 4) == "abcd…[+2 chars]"


# --------------------------------------------------------------------------- tool calls and tables


def test_show_tool_calls_aligns_columns_for_sdk_objects(capsys):
    message = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "tool_calls": [
                WEATHER_CALL,
                {
                    "id": "functions.get_time:1",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        }
    )
    show_tool_calls(message.tool_calls)
    assert capsys.readouterr().out == (
        "#  id                       name         arguments\n"
        "-  -----------------------  -----------  -------------------\n"
        '0  functions.get_weather:0  get_weather  {"city": "Beijing"}\n'
        "1  functions.get_time:1     get_time     {}\n"
    )


def test_show_tool_calls_shows_arguments_as_the_loop_sends_them(capsys):
    # None is no arguments (""), an object (Ollama) is its JSON, a value JSON cannot hold is its
    # repr: the same text helpers.loop puts in the history, and no exception from a display call.
    calls = [
        {"id": "a", "function": {"name": "f", "arguments": None}},
        {"id": "b", "function": {"name": "g", "arguments": {"city": "北京"}}},
        {"id": "c", "function": {"name": "h", "arguments": {"when": {1}}}},
    ]
    show_tool_calls(calls)
    assert capsys.readouterr().out == (
        "#  id  name  arguments\n"
        "-  --  ----  ----------------\n"
        "0  a   f\n"
        '1  b   g     {"city": "北京"}\n'
        '2  c   h     {"when": "{1}"}\n'
    )


def test_show_tool_calls_without_calls(capsys):
    show_tool_calls([])
    show_tool_calls(None)
    assert capsys.readouterr().out == "(no tool calls)\n(no tool calls)\n"


def test_compare_table_aligns_multiline_and_wide_cells(capsys):
    compare_table(
        [("call", "<|tool_call_begin|>", "<tool_call>\n{json}\n</tool_call>"), ("城市", "x", "y")],
        ["what", "Kimi-K2", "Qwen"],
    )
    assert capsys.readouterr().out == (
        "what  Kimi-K2              Qwen\n"
        "----  -------------------  ------------\n"
        "call  <|tool_call_begin|>  <tool_call>\n"
        "                           {json}\n"
        "                           </tool_call>\n"
        "城市  x                    y\n"
    )


def test_format_table_rejects_a_row_of_the_wrong_length():
    with pytest.raises(ValueError, match="row has 2 cells but there are 3 headers"):
        format_table([("a", "b")], ["x", "y", "z"])


# --------------------------------------------------------------------------- chunks


def test_format_chunk_shows_only_non_null_fields():
    assert (
        format_chunk(chunk({"role": "assistant", "content": ""})) == "role=assistant | content=''"
    )
    assert (
        format_chunk(chunk({"content": "Hi ", "role": None, "tool_calls": None})) == "content='Hi '"
    )
    assert format_chunk(chunk({}, "tool_calls")) == "finish_reason=tool_calls"
    assert format_chunk(chunk({})) == "(empty delta)"


def test_format_chunk_tool_call_pieces_header_and_interleaved_fragments():
    header = chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    )
    assert format_chunk(header) == (
        "tool_calls[0] id='functions.get_weather:0' name='get_weather' args=''"
    )
    both = chunk(
        {
            "tool_calls": [
                {"index": 1, "function": {"arguments": '{"tz'}},
                {"index": 0, "function": {"arguments": "}"}},
            ]
        }
    )
    assert format_chunk(both) == "tool_calls[1] args='{\"tz' | tool_calls[0] args='}'"


def test_format_chunk_usage_chunks_and_other_choices():
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    assert format_chunk(BASE | {"choices": [], "usage": usage}) == (
        "usage prompt_tokens=5 completion_tokens=7 total_tokens=12"
    )
    assert format_chunk(BASE | {"choices": []}) == "(no choices)"
    moonshot = BASE | {
        "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop", "usage": {"total_tokens": 3}}
        ]
    }
    assert format_chunk(moonshot) == "finish_reason=stop | usage total_tokens=3"
    second = BASE | {"choices": [{"index": 1, "delta": {"content": "b"}, "finish_reason": None}]}
    assert format_chunk(second) == "choice[1] content='b'"


def test_format_chunk_same_line_for_sdk_object_and_dict():
    bodies = [
        chunk({"role": "assistant", "content": ""}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
        BASE
        | {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}},
    ]
    for body in bodies:
        assert format_chunk(sdk(body)) == format_chunk(body)
    assert (
        format_chunk(sdk(bodies[3])) == "usage prompt_tokens=1 completion_tokens=2 total_tokens=3"
    )


def test_format_chunk_accepts_a_bare_delta_and_extra_delta_fields():
    assert format_chunk({"content": "x"}) == "content='x'"
    assert format_delta({"tool_calls": [{"index": 2, "function": {"arguments": "1"}}]}) == (
        "tool_calls[2] args='1'"
    )
    assert format_chunk(chunk({"reasoning_content": "hmm"})) == "reasoning_content='hmm'"


def test_show_chunk_and_show_chunks_number_lines_and_respect_limit(capsys):
    chunks = [chunk({"role": "assistant"})] + [chunk({"content": str(i)}) for i in range(11)]
    print(format_chunk(chunks[1]))
    show_chunks(iter(chunks), limit=3)
    show_chunks(chunks[:2])
    show_chunks([])
    assert capsys.readouterr().out == (
        "content='0'\n"
        "0  role=assistant\n"
        "1  content='0'\n"
        "2  content='1'\n"
        "... 9 more chunks\n"
        "0  role=assistant\n"
        "1  content='0'\n"
        "(no chunks)\n"
    )
    assert format_chunks(chunks).splitlines()[-1] == "11  content='10'"


# --------------------------------------------------------------------------- raw text


def test_show_raw_puts_every_kimi_marker_on_its_own_line(capsys):
    show_raw(render_kimi_tool_calls([WEATHER_CALL], "Let me check.\n"))
    assert capsys.readouterr().out == (
        "text    'Let me check.\\n'\n"
        "marker  <|tool_calls_section_begin|>\n"
        "marker  <|tool_call_begin|>\n"
        "text    'functions.get_weather:0'\n"
        "marker  <|tool_call_argument_begin|>\n"
        'text    \'{"city": "Beijing"}\'\n'
        "marker  <|tool_call_end|>\n"
        "marker  <|tool_calls_section_end|>\n"
    )


def test_format_raw_marks_hermes_tags_and_chat_tokens_and_loses_nothing():
    text = '<|im_start|>assistant\n<tool_call>\n{"name": "f"}\n</tool_call><|im_end|>'
    assert format_raw(text).splitlines() == [
        "marker  <|im_start|>",
        "text    'assistant\\n'",
        "marker  <tool_call>",
        'text    \'\\n{"name": "f"}\\n\'',
        "marker  </tool_call>",
        "marker  <|im_end|>",
    ]
    assert "".join(piece for _, piece in split_markers(text)) == text
    assert format_raw("") == "(empty text)"
    assert format_raw("a < b | c") == "text    'a < b | c'"


# --------------------------------------------------------------------------- the notebook's language


@pytest.fixture
def russian():
    from helpers.i18n import reset_language, set_language

    set_language("ru")
    yield
    reset_language()


def test_labels_in_russian_protocol_words_verbatim(russian, capsys):
    chunks = [chunk({"role": "assistant"})] + [chunk({"content": str(i)}) for i in range(6)]
    assert format_chunks(chunks, limit=2).splitlines()[-1] == "... и ещё 5 фрагментов"
    assert format_chunks(chunks, limit=5).splitlines()[-1] == "... и ещё 2 фрагмента"
    assert format_chunks(chunks, limit=6).splitlines()[-1] == "... и ещё 1 фрагмент"
    assert format_chunks([]) == "(фрагментов нет)"
    assert format_chunk(chunk({})) == "(пустая дельта)"
    assert format_chunk(BASE | {"choices": []}) == "(choices пуст)"
    assert shorten("abcdef", 4) == "abcd…[+2 симв.]"
    assert format_raw("") == "(пустой текст)"
    assert format_raw("a<|im_end|>") == "текст   'a'\nмаркер  <|im_end|>"
    show_tool_calls([])
    show_messages([])
    show_tool_calls([WEATHER_CALL])
    out = capsys.readouterr().out
    assert out.startswith("(вызовов нет)\n(сообщений нет)\n#  id")
    assert "name         arguments" in out  # the protocol's field names stay as they are


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_show_messages_shows_reasoning_under_either_name(capsys, field):
    """Moonshot, SGLang and llama.cpp say `reasoning_content`; vLLM >= 0.17 and Ollama `reasoning`."""
    show_messages([{"role": "assistant", "content": "Hi.", field: "greet back"}])
    assert f"{field}: 'greet back'" in capsys.readouterr().out
