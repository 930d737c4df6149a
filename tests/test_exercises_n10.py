"""Self-checks of lesson 10: the reference passes, realistic mistakes get a hint naming the input."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from exercise_answers import solution
from verdicts import CORRECT, NOT_YET, verdict_of

from helpers.exercises import n10
from helpers.mcp import model_tool_name as _reference_name
from helpers.mcp import tool_names as _reference_names


def assert_hint(capsys, check, wrong, words_en, words_ru):
    """`check` rejects `wrong`, and each edition's hint holds its words."""
    out = verdict_of(capsys, check, wrong)
    assert out.startswith(NOT_YET), out
    en, ru = out.split("\n", 1)
    for word in words_en:
        assert word in en, (word, en)
    for word in words_ru:
        assert word in ru, (word, ru)


def test_the_batteries_are_large_and_cover_the_edges():
    names = [name for case in n10.NAME_CASES + n10._generated_names() for name in case]
    assert len(n10.NAME_CASES) + len(n10._generated_names()) >= 20
    assert any("." in name for name in names)
    assert any(len(name) > 64 for name in names)
    assert any(re.search("[а-я]", name) for name in names)
    assert any(name[0].isdigit() for name in names)
    collisions = 0
    for case in n10.NAME_CASES:  # the cases whose MCP names collide (the reference refuses them)
        try:
            _reference_names(case)
        except ValueError:
            collisions += 1
    assert collisions >= 3
    assert len(n10.RESULT_CASES) >= 20
    assert sum(case[2].get("isError") is True for case in n10.RESULT_CASES) >= 5


@pytest.mark.parametrize(
    ("check", "name"),
    [
        (n10.check_map_tool_names, "map_tool_names"),
        (n10.check_result_content, "result_content"),
    ],
)
def test_the_lessons_reference_solutions_pass(capsys, check, name):
    assert verdict_of(capsys, check, solution("10_mcp_tools", name)).strip() == CORRECT


def _replace_only(names):
    return {name.replace(".", "_"): name for name in names}  # the committed starter


def _no_prefix(names):
    out = {}
    for name in names:
        model = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
        if len(model) > 64:
            model = model[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
        out[model] = name
    return out


def _cut_at_64(names):
    out = {}
    for name in names:
        model = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
        if not re.match(r"[a-zA-Z_]", model) or len(model) < 3:
            model = "t_" + model
        out[model[:64]] = name  # truncates without a hash: two long names collide silently
    return out


def _no_collision_check(names):
    out = {}
    for name in names:
        out[_reference_name(name)] = name
    return out


def _ascii_only_class(names):
    out = {}
    for name in names:  # \w keeps Cyrillic letters
        model = re.sub(r"[^\w-]", "_", name)
        if not re.match(r"[a-zA-Z_]", model) or len(model) < 3:
            model = "t_" + model
        if len(model) > 64:
            model = model[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
        if model in out and out[model] != name:
            raise ValueError(model)
        out[model] = name
    return out


def _backwards(names):
    return {name: _reference_name(name) for name in names}  # MCP name -> model name


def _duplicates_refused(names):
    out = {}
    for name in names:
        model = _reference_name(name)
        if model in out:  # refuses the same name listed twice, too
            raise ValueError(model)
        out[model] = name
    return out


def _hash_of_model_name(names):
    out = {}
    for name in names:
        model = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
        if not re.match(r"[a-zA-Z_]", model) or len(model) < 3:
            model = "t_" + model
        if len(model) > 64:
            model = model[:55] + "_" + hashlib.sha1(model.encode()).hexdigest()[:8]
        if model in out and out[model] != name:
            raise ValueError(model)
        out[model] = name
    return out


def _model_name_with(name, *, short=3, start=None, pattern=r"[^a-zA-Z0-9_-]"):
    """The model name as students wrote it: `short` the first length that needs no prefix,
    `start` the test of the first character (on the replaced name by default), `pattern` the
    characters replaced."""
    model = re.sub(pattern, "_", name)
    starts_well = start(model) if start else re.match(r"[a-zA-Z_]", model)
    if not starts_well or len(model) < short:
        model = "t_" + model
    if len(model) > 64:
        model = model[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return model


def _mapping(**how):
    def map_tool_names(names):
        out = {}
        for name in names:
            model = _model_name_with(name, **how)
            if model in out and out[model] != name:
                raise ValueError(model)
            out[model] = name
        return out

    return map_tool_names


def _crashes(names):
    return {name.split(".")[1]: name for name in names}  # IndexError on a name with no dot


def _cut_before_the_prefix(names):
    """Cuts a long name to 64 first and puts `t_` in front after: 66 characters."""
    out = {}
    for name in names:
        model = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
        if len(model) > 64:
            model = model[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
        if not re.match(r"[a-zA-Z_]", model) or len(model) < 3:
            model = "t_" + model
        if model in out and out[model] != name:
            raise ValueError(model)
        out[model] = name
    return out


def _raises(kind):
    """The right names, but a collision raises `kind` (round 4 of the wrong answers)."""

    def map_tool_names(names):
        out = {}
        for name in names:
            model = _reference_name(name)
            if model in out and out[model] != name:
                raise kind(f"{name!r} and {out[model]!r} both become {model!r}")
            out[model] = name
        return out

    return map_tool_names


WRONG_NAMES = [
    (
        _cut_before_the_prefix,
        ["SHA-1", "the `t_` in front counts"],
        ["SHA-1", "`t_` впереди тоже считается"],
    ),
    (
        _raises(KeyError),
        ["'weather.today' and 'weather_today'", "raised KeyError: raise ValueError"],
        ["'weather.today' и 'weather_today'", "подняла KeyError: поднимите ValueError"],
    ),
    (
        _raises(AssertionError),
        ["raised AssertionError: raise ValueError"],
        ["подняла AssertionError"],
    ),
    (_replace_only, ["['a']", "'t_a'"], ["['a']", "`t_`"]),
    (_no_prefix, ["['a']", "'t_a'"], ["['a']", "`t_`"]),
    (_cut_at_64, ["analytics.reports", "SHA-1"], ["analytics.reports", "SHA-1"]),
    (
        _no_collision_check,
        ["'weather.today'", "'weather_today'", "ValueError"],
        ["'weather.today'", "ValueError"],
    ),
    (
        _ascii_only_class,
        [ascii("погода.сегодня"), "[a-zA-Z0-9_-]"],
        ["погода.сегодня", "кириллица"],
    ),
    (
        _backwards,
        ["['weather.today', 'read_file']", "'weather_today'"],
        ["['weather.today', 'read_file']", "'weather_today'"],
    ),
    (
        _duplicates_refused,
        ["['search', 'search']", "listed twice"],
        ["['search', 'search']", "дважды"],
    ),
    (_hash_of_model_name, ["analytics.reports", "SHA-1"], ["analytics.reports", "SHA-1"]),
    (
        _crashes,
        ["['weather.today', 'read_file']", "IndexError"],
        ["['weather.today', 'read_file']", "IndexError"],
    ),
    (
        lambda names: [(_reference_name(n), n) for n in names],
        ["dict from str to str"],
        ["словарь"],
    ),
    (None, ["should be a function; got None"], ["нужна функция"]),
    # a fresh student's (checks, 2026-12-02): each was answered with another rule's hint before
    (_mapping(short=4), ["'run'", "got 't_run'", "has at least 3"], ["'run'", "не короче 3"]),
    (
        _mapping(start=lambda model: model[:1].isalpha()),
        ["'_id'", "got 't__id'", "starts with a letter or `_`"],
        ["'_id'", "начинается с буквы или `_`"],
    ),
    (
        _mapping(pattern=r"\W"),
        ["'-dash-first'", "`-` stay"],
        ["'-dash-first'", "`-` остаются"],
    ),
]


@pytest.mark.parametrize(("wrong", "words_en", "words_ru"), WRONG_NAMES)
def test_wrong_name_mappings_get_a_hint_naming_the_input(capsys, wrong, words_en, words_ru):
    assert_hint(capsys, n10.check_map_tool_names, wrong, words_en, words_ru)


def _first_text(result):
    return result["content"][0]["text"]  # the committed starter


def _error_not_json(result):
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("isError"):
        return "Error: " + text
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _truthy_structured(result):
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE})
    if result.get("structuredContent"):  # 0, false and {} fall through to the text
        return json.dumps(result["structuredContent"])
    return text


def _structured_first(result):
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE})
    return text


def _only_first_block(result):
    texts = [b["text"] for b in result["content"] if b["type"] == "text"]
    text = texts[0] if texts else ""
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _every_block(result):
    text = "\n".join(str(b.get("text", b.get("uri", b["type"]))) for b in result["content"])
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _empty_error(result):
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("isError"):
        return json.dumps({"error": text})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _empty_lines_for_images(result):
    text = "\n".join(b.get("text", "") for b in result["content"])
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _error_with_flag(result):
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("isError"):
        return json.dumps({"error": text or n10.NO_MESSAGE, "isError": True})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _fallback_only_for_no_blocks(result):
    """A hold-out answer: the fallback message only when `content` is empty."""
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    if result.get("isError"):
        return json.dumps({"error": text if result["content"] else n10.NO_MESSAGE})
    if result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"])
    return text


def _returns_dict(result):
    if result.get("isError"):
        return {"error": _first_text(result)}
    return result.get("structuredContent") or _first_text(result)


def _plain_text(join):
    """The reference for errors and structuredContent; the plain text joined by `join`."""

    def result_content(result):
        if result.get("isError") is True or result.get("structuredContent") is not None:
            return solution("10_mcp_tools", "result_content")(result)
        return join([b["text"] for b in result.get("content", []) if b.get("type") == "text"])

    return result_content


WRONG_RESULTS = [
    (
        _plain_text(lambda texts: "\n".join(t.strip() for t in texts)),
        ["'a text with spaces at its edges'", "no strip, the spaces"],
        ["«текст с пробелами по краям»", "ровно как есть"],
    ),
    (
        _plain_text(lambda texts: "\n".join(t for t in texts if t)),
        ["'an empty text block between two others'", "an empty text block still adds its line"],
        ["«пустой текстовый блок между двумя другими»", "тоже добавляет свою строку"],
    ),
    (
        _plain_text(lambda texts: "\n".join(texts).strip()),
        ["'a text with spaces at its edges'", "no strip"],
        ["«текст с пробелами по краям»", "без strip"],
    ),
    (
        _first_text,
        ["'an unknown city (isError)'", "isError wins"],
        ["«неизвестный город (isError)»", "isError"],
    ),
    (
        _error_not_json,
        ["'an unknown city (isError)'", "json.dumps"],
        ["«неизвестный город (isError)»", "json.dumps"],
    ),
    (
        _truthy_structured,
        ["'structuredContent that is 0'", "even when it is 0"],
        ["«structuredContent равен 0»", "даже если это 0"],
    ),
    (
        _structured_first,
        ["'an error that also has structuredContent'", "isError wins"],
        ["«ошибка, у которой есть и structuredContent»", "isError"],
    ),
    (
        _only_first_block,
        ["'an empty text block between two others'", "not of one block"],
        ["«пустой текстовый блок между двумя другими»", "а не одного блока"],
    ),
    (
        _every_block,
        ["'an error next to an image'", "other blocks add nothing"],
        ["«ошибка рядом с картинкой»", "прочие блоки ничего не добавляют"],
    ),
    (
        _empty_error,
        ["'an error with no text'", n10.NO_MESSAGE],
        ["«ошибка без текста»", n10.NO_MESSAGE],
    ),
    (
        _returns_dict,
        ["'the weather for Moscow'", "return a str"],
        ["«погода в Москве»", "верните str"],
    ),
    (None, ["should be a function; got None"], ["нужна функция"]),
    (
        _empty_lines_for_images,
        ["'an error next to an image'", "not even an empty line"],
        ["«ошибка рядом с картинкой»", "даже пустой строки"],
    ),
    (
        _error_with_flag,
        ["'an unknown city (isError)'", 'the one key "error"'],
        ["«неизвестный город (isError)»", 'с одним ключом "error"'],
    ),
    (
        _fallback_only_for_no_blocks,
        ["'an error whose only block is an image'", 'no "text" block, or only empty ones'],
        ["«ошибка, в которой только картинка»", 'нет блоков "text" или они пустые'],
    ),
]


@pytest.mark.parametrize(("wrong", "words_en", "words_ru"), WRONG_RESULTS)
def test_wrong_result_contents_get_a_hint_naming_the_input(capsys, wrong, words_en, words_ru):
    assert_hint(capsys, n10.check_result_content, wrong, words_en, words_ru)


class _Sneaky(dict):
    """An answer that claims to equal anything."""

    def __eq__(self, other):
        return True

    __hash__ = None


def test_an_object_that_equals_everything_is_not_trusted(capsys):
    out = verdict_of(capsys, n10.check_map_tool_names, lambda names: _Sneaky())
    assert out.startswith(NOT_YET), out


def test_a_learner_who_mutates_the_input_does_not_change_the_battery(capsys):
    def clears(result):
        result["content"].clear()
        return ""

    assert verdict_of(capsys, n10.check_result_content, clears).startswith(NOT_YET)
    assert (
        verdict_of(
            capsys, n10.check_result_content, solution("10_mcp_tools", "result_content")
        ).strip()
        == CORRECT
    )
