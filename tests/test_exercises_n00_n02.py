"""Self-checks of lessons 00-02: the reference solutions pass, the committed starters and typical
mistakes get a "Not yet" with a hint in both languages, and a learner's crash never escapes."""

from __future__ import annotations

import json

import pytest
from exercise_answers import GOOD_ENV, renamed, schema_with, solution, untyped
from verdicts import CORRECT, assert_not_yet_in_both, verdict_of

from helpers.exercises import n00, n01, n02


def assert_correct(capsys, check, *args) -> None:
    assert verdict_of(capsys, check, *args).strip() == CORRECT


def assert_not_yet(capsys, check, *args, hint: str = "") -> str:
    out = verdict_of(capsys, check, *args)
    assert_not_yet_in_both(out)
    assert hint in out, out
    return out


# --- lesson 00 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env", [GOOD_ENV, GOOD_ENV | {"KIMI_BASE_URL": "https://api.moonshot.cn/v1/"}]
)
def test_live_env_accepts_the_platform(capsys, env):
    assert_correct(capsys, n00.check_live_env, env)


@pytest.mark.parametrize(
    ("change", "hint"),
    [
        ({"LLM_MODE": "replay"}, "LLM_MODE"),
        ({"KIMI_BASE_URL": ""}, "KIMI_BASE_URL"),
        ({"KIMI_BASE_URL": "https://api.moonshot.ai"}, "/v1"),
        ({"KIMI_MODEL": " "}, "KIMI_MODEL"),
        ({"KIMI_API_KEY": "sk-secret"}, "key"),
    ],
)
def test_live_env_mistakes(capsys, change, hint):
    out = assert_not_yet(capsys, n00.check_live_env, GOOD_ENV | change, hint=hint)
    assert "sk-secret" not in out


def test_live_env_starter_and_non_dict(capsys):
    starter = {"LLM_MODE": "replay", "KIMI_BASE_URL": "", "KIMI_MODEL": ""}
    assert_not_yet(capsys, n00.check_live_env, starter)
    assert_not_yet(capsys, n00.check_live_env, "LLM_MODE=live", hint="dict")


@pytest.mark.parametrize(
    "command",
    [
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes",
        "vllm serve Qwen/Qwen2.5-7B-Instruct --tool-call-parser=hermes --enable-auto-tool-choice "
        "--tensor-parallel-size 4",
        # vLLM's parser reads `_` as `-` in an option's name (FlexibleArgumentParser)
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable_auto_tool_choice --tool_call_parser hermes",
        # argparse keeps the last value of an option given twice
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser "
        "kimi_k2 --tool-call-parser hermes",
        "vllm serve Qwen/Qwen2.5-7B-Instruct -tp 2 -pp 2 --enable-auto-tool-choice "
        "--tool-call-parser hermes",
        "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct "
        "--enable-auto-tool-choice --tool-call-parser hermes",
    ],
)
def test_qwen_command_accepted(capsys, command):
    assert_correct(capsys, n00.check_qwen_command, command)


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        ("vllm serve Qwen/Qwen2.5-7B-Instruct", "--enable-auto-tool-choice"),
        ("vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice", "--tool-call-parser"),
        (
            "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser kimi_k2",
            "hermes",
        ),
        ("python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct", "vllm serve"),
        ("vllm serve 'unclosed", "parse"),
    ],
)
def test_qwen_command_mistakes(capsys, command, hint):
    assert_not_yet(capsys, n00.check_qwen_command, command, hint=hint)


def test_reading_a_reply(capsys):
    read_reply = solution("00", "read_reply")
    assert_correct(capsys, n00.check_reading, read_reply)
    starter = lambda reply: dict.fromkeys(("text", "finish_reason", "model", "total_tokens"))  # noqa: E731
    out = assert_not_yet(capsys, n00.check_reading, starter, hint="step 4")
    assert "'Ready.'" in out and "content" in out


def test_reading_every_reply_of_the_battery_is_valid_and_varied():
    """The battery's replies differ in every field the exercise reads (so no typed-in value
    passes), and the SDK accepts each of them."""
    specs = n00.reply_battery()
    assert len(specs) >= 20 and specs[0] == n00.STEP_4
    read = [n00._read_reply(n00.reply_of(spec)) for spec in specs]
    for key in ("text", "finish_reason", "model", "total_tokens"):
        assert len({repr(r[key]) for r in read}) >= 3, key
    assert any(r["text"] is None for r in read)
    assert n00.reply_battery() == specs  # seeded: the same on every run


def test_reading_a_value_typed_in_fails_on_a_named_reply(capsys):
    step_4 = n00._read_reply(n00.reply_of(n00.STEP_4))
    out = assert_not_yet(capsys, n00.check_reading, lambda reply: dict(step_4), hint="<reply id=")
    assert n00.STEP_4["id"] not in out  # the reply it failed on, not step 4's


# --- lesson 01 ------------------------------------------------------------------------------------

SCHEMA = solution("01", "my_schema")


def test_schema_reference_passes(capsys):
    assert_correct(capsys, n01.check_schema, SCHEMA)


@pytest.mark.parametrize(
    ("path", "value", "hint"),
    [
        ("type", "tool", '"type": "function"'),
        ("function.name", "convert", "convert_temperature"),
        ("function.description", "", "description"),
        ("function.parameters.type", "array", "object"),
        ("function.parameters.properties.value", None, "'value'"),
        ("function.parameters.properties.value.type", "string", "number"),
        ("function.parameters.properties.to_unit.description", None, "'to_unit'"),
        ("function.parameters.properties.to_unit.enum", None, "enum"),
        ("function.parameters.properties.extra", {"type": "string", "description": "x"}, "extra"),
        ("function.parameters.required", ["value"], "required"),
    ],
)
def test_schema_mistakes(capsys, path, value, hint):
    assert_not_yet(capsys, n01.check_schema, schema_with(path, value), hint=hint)


def test_schema_starter(capsys):
    starter = {
        "type": "function",
        "function": {
            "name": "convert_temperature",
            "description": "",
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    }
    assert_not_yet(capsys, n01.check_schema, starter, hint="description")


def guide_call_tool(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    return function(json.loads(tool_call["function"]["arguments"]))


def fixed_call_tool(tool_call, tool_map):
    function = tool_map[tool_call["function"]["name"]]
    return function(**json.loads(tool_call["function"]["arguments"]))


def test_call_tool(capsys):
    assert_correct(capsys, n01.check_call_tool, fixed_call_tool)
    assert_not_yet(capsys, n01.check_call_tool, guide_call_tool, hint="keyword argument")


def test_call_tool_crashes_are_reported(capsys):
    def positional_only(tool_call, tool_map):
        return tool_map["greet"](*json.loads(tool_call["function"]["arguments"]).values(), "x", "y")

    def broken(tool_call, tool_map):
        raise KeyError("function")

    assert_not_yet(capsys, n01.check_call_tool, positional_only, hint="TypeError")
    assert_not_yet(capsys, n01.check_call_tool, broken, hint="KeyError")


typed = solution("01", "convert_temperature")


def no_choices(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to
    """
    return typed(value, to_unit)


def no_args_section(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit."""
    return typed(value, to_unit)


def wrong_math(value: float, to_unit: str) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert
        to_unit: The unit to convert to (choices: ["celsius", "fahrenheit"])
    """
    return value


def test_typed_function(capsys):
    for fn in (typed, untyped, no_args_section, no_choices, wrong_math):
        renamed(fn)
    assert_correct(capsys, n01.check_typed_function, typed)
    out = assert_not_yet(capsys, n01.check_typed_function, untyped, hint="type hint")
    assert "value, to_unit" in out and "аннотацию типа" in out  # both languages name the arguments
    assert_not_yet(capsys, n01.check_typed_function, no_args_section, hint="Args:")
    assert_not_yet(capsys, n01.check_typed_function, no_choices, hint="enum")
    assert_not_yet(capsys, n01.check_typed_function, wrong_math, hint="212")


# --- lesson 02 ------------------------------------------------------------------------------------


def test_needs_tools(capsys):
    assert_correct(capsys, n02.check_needs_tools, lambda m, f: bool(m.get("tool_calls")))
    assert_not_yet(capsys, n02.check_needs_tools, lambda m, f: f == "tool_calls", hint="'stop'")
    assert_not_yet(capsys, n02.check_needs_tools, lambda m, f: "tool_calls" in m, hint="empty")
    assert_not_yet(capsys, n02.check_needs_tools, lambda m, f: m.tool_calls, hint="AttributeError")


def _answer(tool_call, tool_map):
    arguments = json.loads(tool_call["function"]["arguments"])
    result = tool_map[tool_call["function"]["name"]](**arguments)
    return {
        "role": "tool",
        "tool_call_id": tool_call["id"],
        "name": tool_call["function"]["name"],
        "content": json.dumps(result),
    }


def test_answer_calls(capsys):
    assert_correct(
        capsys, n02.check_answer_calls, lambda m, tm: [_answer(c, tm) for c in m["tool_calls"]]
    )
    assert_not_yet(
        capsys,
        n02.check_answer_calls,
        lambda m, tm: [_answer(m["tool_calls"][0], tm)],
        hint="two tool messages",
    )
    assert_not_yet(
        capsys,
        n02.check_answer_calls,
        lambda m, tm: [_answer(c, tm) for c in reversed(m["tool_calls"])],
        hint="order",
    )
    assert_not_yet(
        capsys,
        n02.check_answer_calls,
        lambda m, tm: [
            _answer(c, tm) | {"content": str(tm["get_weather"]("Beijing"))} for c in m["tool_calls"]
        ],
        hint="JSON",
    )
    assert_not_yet(capsys, n02.check_answer_calls, lambda m, tm: None, hint="list")


def safe_content(function, arguments_text):
    try:
        return json.dumps(function(**json.loads(arguments_text)))
    except Exception as error:
        return json.dumps({"error": str(error) or type(error).__name__})


def test_tool_content(capsys):
    assert_correct(capsys, n02.check_tool_content, safe_content)
    assert_not_yet(
        capsys,
        n02.check_tool_content,
        lambda f, t: json.dumps(f(**json.loads(t))),
        hint="JSONDecodeError",
    )

    def only_json_errors(function, arguments_text):
        try:
            arguments = json.loads(arguments_text)
        except ValueError as error:
            return json.dumps({"error": str(error)})
        return json.dumps(function(**arguments))

    assert_not_yet(capsys, n02.check_tool_content, only_json_errors, hint="TimeoutError")

    def plain_text_errors(function, arguments_text):
        try:
            return json.dumps(function(**json.loads(arguments_text)))
        except Exception as error:
            return f"error: {error}"

    assert_not_yet(capsys, n02.check_tool_content, plain_text_errors, hint='{"error"')
    assert_not_yet(
        capsys,
        n02.check_tool_content,
        lambda f, t: safe_content(f, t).replace('"error"', '"problem"'),
        hint='"error"',
    )


# --- issue 11: checks that accepted wrong answers or said nothing useful ---------------------------


@pytest.mark.parametrize("model", ["kimi-k2.6", "kimi-k2.7-code", "kimi-k3"])
def test_live_env_accepts_platform_model_ids(capsys, model):
    assert_correct(capsys, n00.check_live_env, GOOD_ENV | {"KIMI_MODEL": model})


@pytest.mark.parametrize(
    "model", ["kimi-k2-0905-preview", "kimi-k2-thinking", "kimi-latest", "kimi-k2.5"]
)
def test_live_env_refuses_ids_reported_retired(capsys, model):
    out = assert_not_yet(capsys, n00.check_live_env, GOOD_ENV | {"KIMI_MODEL": model}, hint=model)
    assert "retired" in out and "kimi-k2.6" in out


@pytest.mark.parametrize("model", ["moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2.5"])
def test_live_env_rejects_a_hugging_face_repo_id(capsys, model):
    out = assert_not_yet(
        capsys, n00.check_live_env, GOOD_ENV | {"KIMI_MODEL": model}, hint="Hugging Face"
    )
    assert "kimi-k2.6" in out


def test_live_env_hint_names_current_platform_ids(capsys):
    out = assert_not_yet(capsys, n00.check_live_env, GOOD_ENV | {"KIMI_MODEL": ""})
    assert "kimi-k2.6" in out and "0905" not in out


def test_qwen_command_hint_says_what_the_auto_flag_is_for(capsys):
    out = assert_not_yet(
        capsys,
        n00.check_qwen_command,
        "vllm serve Qwen/Qwen2.5-7B-Instruct",
        hint='tool_choice="auto"',
    )
    assert "only with" not in out and "только с" not in out


def test_reading_completion_tokens_gets_a_precise_hint(capsys):
    read_reply = solution("00", "read_reply")

    def counting(part):
        return lambda reply: read_reply(reply) | {"total_tokens": getattr(reply.usage, part)}

    out = assert_not_yet(
        capsys, n00.check_reading, counting("completion_tokens"), hint="completion_tokens"
    )
    assert "total_tokens" in out
    assert_not_yet(capsys, n00.check_reading, counting("prompt_tokens"), hint="prompt_tokens")


def test_call_tool_rejects_unpacking_values_by_position(capsys):
    def by_position(tool_call, tool_map):
        arguments = json.loads(tool_call["function"]["arguments"])
        return tool_map[tool_call["function"]["name"]](*arguments.values())

    assert_not_yet(capsys, n01.check_call_tool, by_position, hint="parameters")


def test_schema_hint_is_in_one_language(capsys):
    out = assert_not_yet(capsys, n01.check_schema, None, hint='"type": "function"')
    assert "the schema" not in out.split("\n", 1)[1]


def test_needs_tools_on_a_dict_says_how_to_read_it(capsys):
    out = assert_not_yet(
        capsys, n02.check_needs_tools, lambda m, f: bool(m.tool_calls), hint='message["tool_calls"]'
    )
    assert "`AttributeError: 'dict' object has no attribute 'tool_calls'`" in out


# --- right answers the hold-out set saw rejected (holdout, 2026-12-02) ------------------------------


def test_a_command_with_a_variable_set_in_front_is_accepted(capsys):
    command = (
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice "
        "--tool-call-parser hermes"
    )
    assert_correct(capsys, n00.check_qwen_command, command)


def test_vllms_docker_image_is_accepted_and_another_image_is_not(capsys):
    flags = "--enable-auto-tool-choice --tool-call-parser hermes"
    docker = "docker run --gpus all -p 8000:8000"
    image = f"{docker} vllm/vllm-openai:v0.11.0 --model Qwen/Qwen2.5-7B-Instruct {flags}"
    assert_correct(capsys, n00.check_qwen_command, image)
    other = f"{docker} ubuntu vllm serve Qwen/Qwen2.5-7B-Instruct {flags}"
    assert_not_yet(capsys, n00.check_qwen_command, other, hint="docker")


def test_the_mode_is_read_as_connect_reads_it(capsys):
    assert_correct(capsys, n00.check_live_env, GOOD_ENV | {"LLM_MODE": " Live"})


def test_a_stop_rule_that_refuses_calls_cut_off_by_max_tokens_is_accepted(capsys):
    """Lesson 02's run_tool_loop does not run a call cut off by max_tokens: a needs_tools that
    says False there is right too (and the plain rule stays right)."""
    refusing = lambda m, f: bool(m.get("tool_calls")) and f != "length"  # noqa: E731
    assert_correct(capsys, n02.check_needs_tools, refusing)
