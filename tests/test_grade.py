"""The grader: it holds the checks, so a submission gets marks only for answers its own checks pass.

The submissions are built the way students make them: the student edition with answers typed into
the starter cells. Most are cheats, each a real notebook: the ones a review found (a lying
`__eq__`, `importlib.reload` disabled and fake checks, a bare-named check redefined, the grade
log popped and forged, `_verdict.py` rewritten on disk, odd cell metadata) and our own (a `.pth`
file planted for the next kernels, the verdict channel patched, a fake `helpers` package on the
path, an import hook, a function returning a lying dict), and a batch that attacks the check from
inside its kernel (`IN_KERNEL`: frames read and patched, an audit hook, trace functions, a racing
thread, patched modules, the checks' own code, a printed verdict, a killed kernel, an IPython
transformer). All are graded together with `--jobs 2`. Each earns 0 or is flagged; the honest
submissions get full marks with no flag; the key as it is gets 0 and a flag.
"""

from __future__ import annotations

import ast
import copy
import csv
import json
import os
import site
import threading
import time
from pathlib import Path

import nbformat
import pytest

from helpers.edition import student_notebook
from helpers.exercises import _verdict, n01
from helpers.grade import (
    CHECKOUT,
    GRADER_TREES,
    KERNEL_STATE,
    SMALL_EDIT,
    STATE_MIME,
    GraderFiles,
    Result,
    _changed,
    _mentioned,
    _no_comments,
    all_exercises,
    answer_cells,
    changed_state,
    exercises_of,
    grade_folder,
    kernel_env,
    language_of,
    lesson_of,
    marks_path,
    patching,
    read_lessons,
    read_record,
    read_weights,
    reference,
    student_of,
    write_marks,
    write_table,
    write_weights_template,
)
from helpers.lessons import CHECK_CALL
from helpers.paths import NOTEBOOKS_DIR, REPO_ROOT

SCHEMA = {
    "type": "function",
    "function": {
        "name": "convert_temperature",
        "description": "Convert a temperature.",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The temperature"},
                "to_unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "The unit",
                },
            },
            "required": ["value", "to_unit"],
        },
    },
}
# A student's own answers to lesson 01 (not the reference solutions' text).
MY_SCHEMA = "my_schema = " + json.dumps(SCHEMA)
MY_CALL_TOOL = """def call_tool(tool_call, tool_map):
    fn = tool_map[tool_call["function"]["name"]]
    return fn(**json.loads(tool_call["function"]["arguments"]))"""
MY_CONVERT = '''def convert_temperature(value: float, to_unit: str) -> float:
    """Convert a temperature.

    Args:
        value: The temperature
        to_unit: The unit (choices: ["celsius", "fahrenheit"])
    """
    return value * 9 / 5 + 32 if to_unit == "fahrenheit" else (value - 32) * 5 / 9'''
WRONG_SCHEMA = 'my_schema = {"type": "function", "function": {"name": "convert_temperature"}}'
WRONG_CALL_TOOL = """def call_tool(tool_call, tool_map):
    return None"""
WRONG_CONVERT = """def convert_temperature(value, to_unit):
    return value"""

# --- the cheats ------------------------------------------------------------------------------
# An answer whose __eq__ says yes to everything (a dict, so it looks like a schema).
EQ_SCHEMA = """class Anything(dict):
    def __eq__(self, other):
        return True
    __hash__ = None
my_schema = Anything(type="function")"""
# A function whose result says yes to every comparison.
EQ_CALL_TOOL = """class Same(dict):
    def __eq__(self, other):
        return True
def call_tool(tool_call, tool_map):
    return Same()"""
# The grade log of the old grader: popped from the environment, then a forged "passed".
LOG_POP = """import json, os
def call_tool(tool_call, tool_map):
    path = os.environ.pop("LLM_GRADE_LOG", None) or "grade.jsonl"
    with open(path, "a") as log:
        log.write(json.dumps({"exercise": "01:check_call_tool", "passed": True, "hint": ""}) + "\\n")
    return None"""
# The check code on disk rewritten so that everything passes: the kernel's copy and the checkout.
REWRITE_VERDICT = """import pathlib
import helpers.exercises._verdict as v
EVIL = '''
def exercise(check):
    def self_check(*args, **kwargs):
        print("Correct!")
        return Verdict(True)
    return self_check
'''
for path in {{pathlib.Path(v.__file__), pathlib.Path({checkout!r})}}:
    path.chmod(0o644)
    path.write_text(path.read_text() + EVIL)
my_schema = {{}}"""
# Our own: a .pth file in site-packages runs in every Python that starts after it.
PLANT_PTH = """import pathlib, site
for folder in site.getsitepackages():
    pathlib.Path(folder, "zz_grader_cheat.pth").write_text("import os; os.environ['CHEAT'] = '1'\\n")
my_schema = {}"""
# Our own: the display channel patched to turn "false" into "true" (the old verdict channel).
PATCH_CHANNEL = """import IPython.display as display
real = display.publish_display_data
def forge(data, *args, **kwargs):
    for signed in data.values():
        if isinstance(signed, dict) and "body" in signed:
            signed["body"] = signed["body"].replace('"passed": false', '"passed": true')
    return real(data, *args, **kwargs)
display.publish_display_data = forge
def call_tool(tool_call, tool_map):
    return None"""
# Our own: a fake `helpers` package with a check that always passes, first on the path.
FAKE_PACKAGE = """import pathlib, sys
fake = pathlib.Path("fake/helpers/exercises")
fake.mkdir(parents=True)
(fake.parent / "__init__.py").write_text("")
(fake / "__init__.py").write_text("")
(fake / "n01.py").write_text(
    "class V:\\n    passed, hint = True, ''\\n"
    "def check_typed_function(fn):\\n    print('Correct!')\\n    return V()\\n"
)
sys.path.insert(0, str(fake.parent.parent.resolve()))
for name in [n for n in sys.modules if n.startswith("helpers")]:
    del sys.modules[name]
def convert_temperature(value, to_unit):
    return value"""
# Our own: an import hook that serves a fake check module for any helpers.exercises name.
IMPORT_HOOK = """import importlib.abc, importlib.util, sys
class Fake(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("helpers.exercises.n"):
            return importlib.util.spec_from_loader(name, self)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        class V:
            passed, hint = True, ""
        module.check_typed_function = lambda fn: V()
sys.meta_path.insert(0, Fake())
def convert_temperature(value, to_unit):
    return value"""
# Lesson 02: importlib.reload disabled, then fake checks wrapped with the lesson's decorator.
RELOAD_FAKES = """import importlib
from helpers.exercises import n02
importlib.reload = lambda module: module
@n02.exercise
def check_needs_tools(fn):
    pass
@n02.exercise
def check_answer_calls(fn):
    pass
@n02.exercise
def check_tool_content(fn):
    pass
n02.check_needs_tools, n02.check_answer_calls = check_needs_tools, check_answer_calls
n02.check_tool_content = check_tool_content
"""
# Lesson 03: the check cell calls check_history by its bare name; the answer cell redefines it.
BARE_CHECK = """def check_history(repair):
    print("Верно!")

def repair(messages, content, tool_calls):
    return list(messages)"""


# --- the cheats of the in-kernel routes (each graded beside honest notebooks, --jobs 2) -------
# The check's own variables, read from the frames above: `expected` is the reference's answer.
READ_FRAMES = """import sys
def call_tool(tool_call, tool_map):
    frame = sys._getframe(1)
    while frame is not None and "expected" not in frame.f_locals:
        frame = frame.f_back
    return frame.f_locals["expected"] if frame is not None else None"""
# The check's module globals, patched from a frame while it runs: a NotYet becomes a pass.
PATCH_FRAMES = """import sys
def call_tool(tool_call, tool_map):
    frame = sys._getframe(1)
    while frame is not None:
        names = frame.f_globals
        real = names.get("Verdict")
        if names.get("__name__") == "helpers.exercises._verdict" and isinstance(real, type):
            names["Verdict"] = lambda passed, hint="", real=real: real(True)
        frame = frame.f_back
    return None"""
# An audit hook (it cannot be removed): it learns the request's nonce from the compiled source
# and, when the request connects to send its verdict, sends a forged one first.
AUDIT_HOOK = """import re, socket, sys
seen = {}
def hook(event, args):
    if event == "compile" and isinstance(args[0], (str, bytes)):
        found = re.search(r"_grader_([0-9a-f]{16})", str(args[0]))
        if found:  # the first compiled text that names the request (not any first compile)
            seen.setdefault("nonce", found.group(1))
    if event == "socket.connect" and seen.get("nonce") and not seen.get("sent"):
        seen["sent"] = True
        forged = socket.socket(socket.AF_UNIX)
        forged.connect(args[1])
        forged.sendall((seen["nonce"] + "\\n1\\n\\n\\n").encode())
        forged.close()
sys.addaudithook(hook)
my_schema = {}"""
# A trace function: it rewrites the request's locals (passed, problems) and takes itself away.
TRACE_FLIP = """import sys
def tracer(frame, event, arg):
    if frame.f_code.co_name.startswith("_grader_send_"):
        frame.f_locals.update(passed=True, problems=())
        sys.settrace(None)
        return None
    return tracer
sys.settrace(tracer)
def call_tool(tool_call, tool_map):
    return None"""
# The same, wiping its local tracer off every frame before it goes (only the flag catches it).
TRACE_WIPED = """import sys
def tracer(frame, event, arg):
    if frame.f_code.co_name.startswith("_grader_send_"):
        frame.f_locals.update(passed=True, problems=())
        sys.settrace(None)
        while frame is not None:
            frame.f_trace = None
            frame = frame.f_back
        return None
    return tracer
sys.settrace(tracer)
def call_tool(tool_call, tool_map):
    return None"""
# A thread that waits for the verdict socket and sends a forged verdict on it first.
THREAD_RACE = """import pathlib, re, socket, threading, time
def race():
    while True:  # as long as it takes: a loaded machine reaches the check late
        for path in pathlib.Path("..").glob("verdict"):
            forged = socket.socket(socket.AF_UNIX)
            forged.connect(str(path))  # raises if the file exists before the grader listens
            forged.sendall(b"0000000000000000\\n1\\n\\n\\n")
            return
        time.sleep(0.01)
threading.Thread(target=race, daemon=True).start()
my_schema = {}"""
# A module the check uses, patched before the check is imported: its copies see no change.
PATCH_MODULE = """import copy
copy.deepcopy = lambda value, memo=None: {}
my_schema = {}"""
# A module the kernel itself uses, patched: its messages can no longer be read.
BREAK_KERNEL = """import json
json.dumps = lambda value, *args, **kwargs: "{}"
my_schema = {}"""
# The reference itself, imported from the lesson's check module (it gives the right answers).
REFERENCE = """from helpers.exercises import n01
def call_tool(tool_call, tool_map):
    return n01._greet(**__import__("json").loads(tool_call["function"]["arguments"]))"""
# The reference read from the grader's own copy of the checks (it is on the kernel's path).
READ_COPY = """import sys, pathlib
def call_tool(tool_call, tool_map):
    for folder in sys.path:
        source = pathlib.Path(folder, "helpers", "exercises", "n01.py")
        if source.exists():
            names = {}
            exec(source.read_text(), names)
            return names["_call_battery"] and None
    return None"""
# A function that knows it is being checked: it looks at who calls it.
DETECTOR = """import traceback
def call_tool(tool_call, tool_map):
    checked = any("exercises" in frame.filename for frame in traceback.extract_stack())
    return {"got": {}} if checked else None"""
# A verdict printed (and a record published) by the answer cell itself.
PRINTED = """from IPython.display import publish_display_data
print("Correct!")
publish_display_data({"application/x.toolcall-grader-state+json": {"passed": True}})
my_schema = {}"""
# The kernel killed from inside the check (no verdict can come, so none may be assumed).
KILLER = """import os
def call_tool(tool_call, tool_map):
    os._exit(0)"""
# An IPython input transformer: it rewrites the grader's request before it runs.
TRANSFORMER = """def cheat(lines):
    return [line.replace("passed = getattr(verdict", "passed = True or getattr(verdict")
            for line in lines]
get_ipython().input_transformers_post.append(cheat)
def call_tool(tool_call, tool_map):
    return None"""

# Session 8's cheating review. A hook on the kernel's output stream, set from a string run by
# timeit: when the check prints its verdict, the Verdict object is made a pass (it got points).
ECHO_FLIP = '''import timeit
timeit.timeit("""
import gc, sys
class Echo:
    def flush(self):
        pass
    def write(self, text):
        for thing in gc.get_objects():
            if type(thing).__name__ == "Verdict" and getattr(thing, "passed", None) is False:
                thing.__init__(True, "")
sys.stdout.echo = Echo()
""", number=1)
my_schema = {"type": "function", "function": {"name": "convert_temperature"}}'''
# A process detached from the kernel (fork, setsid, fork): it would outlive the grader and
# could rewrite the marks sheet or the shared files while other students' kernels run.
DETACHER = """import os, sys
def call_tool(tool_call, tool_map):
    return None
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)  # cheat"])
    os._exit(0)"""
# A pattern planted in re's cache before the check module is imported (and compiles it).
RECACHE = """import re
def _put(cache, key, value):
    cache[key] = value
_put(re._cache, (str, r"^(?:kimi|moonshot)-[a-z0-9][a-z0-9.\\-]*$", 0), re.compile(".*"))
live_env = {"LLM_MODE": "live", "KIMI_BASE_URL": "https://api.moonshot.ai/v1",
            "KIMI_MODEL": "gpt-4o"}"""
# The interpreter's file loader patched in its class: the check's `_verdict.py` is imported
# with every "not yet" made a pass (the compiled copy refused, so the source is read).
LOADER = """import importlib._bootstrap_external as machinery
original = machinery.FileLoader.get_data
def get_data(self, path):
    if "_verdict" in path and path.endswith(".pyc"):
        raise OSError(path)
    data = original(self, path)
    if path.endswith("_verdict.py"):
        data = data.replace(b"Verdict(False, tr(english(failed.en), failed.ru))", b"Verdict(True)")
        UNDO()
    return data
UNDO = lambda: None
machinery.FileLoader.get_data = get_data
my_schema = {}"""
# The same, putting the loader back once it has served the check: nothing is left changed.
LOADER_UNDONE = LOADER.replace(
    "UNDO = lambda: None", "UNDO = lambda: setattr(machinery.FileLoader, 'get_data', original)"
)

IN_KERNEL = [  # (student, exercise, answer cell)
    ("framereader", "01-check_call_tool", READ_FRAMES),
    ("framepatcher", "01-check_call_tool", PATCH_FRAMES),
    ("auditor", "01-check_schema", AUDIT_HOOK),
    ("tracer", "01-check_call_tool", TRACE_FLIP),
    ("wiper", "01-check_call_tool", TRACE_WIPED),
    ("racer", "01-check_schema", THREAD_RACE),
    ("copypatcher", "01-check_schema", PATCH_MODULE),
    ("kernelbreaker", "01-check_schema", BREAK_KERNEL),
    ("referencer", "01-check_call_tool", REFERENCE),
    ("copyreader", "01-check_call_tool", READ_COPY),
    ("detector", "01-check_call_tool", DETECTOR),
    ("printer", "01-check_schema", PRINTED),
    ("killer", "01-check_call_tool", KILLER),
    ("transformer", "01-check_call_tool", TRANSFORMER),
    ("loader", "01-check_schema", LOADER),
    ("undoer", "01-check_schema", LOADER_UNDONE),
]


def _table(path: Path) -> dict[str, dict[str, str]]:
    """A CSV as {first column's value... the notebook (or the student): row}."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    key = "notebook" if rows and "notebook" in rows[0] else "student"
    return {row[key]: row for row in rows}


def _edition(lesson: str = "01_tools_schema", lang: str = "en") -> nbformat.NotebookNode:
    key = nbformat.read(NOTEBOOKS_DIR / lang / f"{lesson}.ipynb", as_version=4)
    return student_notebook(key, lesson, lang)


def _answer(nb, exercise: str, source: str) -> None:
    """Type `source` into the starter cell of `exercise` (`01-check_schema`)."""
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == f"{exercise}-answer":
            cell.source = source
            return
    raise AssertionError(f"no answer cell for {exercise}")


def _starter(nb, exercise: str) -> str:
    return next(
        c.source
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == f"{exercise}-answer"
    )


def _check_cell(nb, exercise: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == exercise)


def _write(folder: Path, name: str, nb) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _with(answers: dict[str, str], lesson: str = "01_tools_schema", lang: str = "en"):
    nb = _edition(lesson, lang)
    for exercise, source in answers.items():
        _answer(nb, exercise, source)
    return nb


def _with_a_copy(exercise: str, source: str, lesson: str = "01_tools_schema"):
    """The student edition with the starter of `exercise` left as it is and a copy of its answer
    cell (Jupyter's copy: the same metadata) holding `source` right below it, above the check."""
    nb = _edition(lesson)
    at = next(
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == f"{exercise}-answer"
    )
    duplicate = copy.deepcopy(nb.cells[at])
    duplicate.source, duplicate.id = source, "a-copy"
    nb.cells.insert(at + 1, duplicate)
    return nb


def _verdicts(row, lesson: str = "01") -> list[str]:
    return [row[e] for e in exercises_of(lesson)]


# --- without a kernel ------------------------------------------------------------------------


def test_a_verdict_is_recorded_in_the_kernel_and_written_nowhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LLM_GRADE_LOG", str(tmp_path / "log.jsonl"))  # the old grader's log
    monkeypatch.chdir(tmp_path)
    recorded = len(_verdict.RECORDED)
    assert not n01.check_schema({}).passed
    assert n01.check_schema(SCHEMA).passed
    assert [(e["exercise"], e["passed"]) for e in _verdict.RECORDED[recorded:]] == [
        ("01:check_schema", False),
        ("01:check_schema", True),
    ]
    assert capsys.readouterr().out.splitlines()[1] == "Correct!"
    assert list(tmp_path.iterdir()) == []


def test_exercises_lesson_and_language_are_found_from_the_code():
    assert exercises_of("01") == [
        "01:check_schema",
        "01:check_call_tool",
        "01:check_typed_function",
    ]
    assert exercises_of("99") == []
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from helpers.exercises.n03 import check_usage")]
    assert lesson_of(Path("ivanov.ipynb"), nb) == "03"
    assert lesson_of(Path("02_sync_loop (1).ipynb"), None) == "02"
    assert lesson_of(Path("homework.ipynb"), None) == ""
    assert language_of(_edition(lang="ru")) == "ru" and language_of(_edition()) == "en"


@pytest.mark.parametrize(
    "path, student",
    [
        ("ivanova/01_tools_schema.ipynb", "ivanova"),
        ("ivanova/homework/any.ipynb", "ivanova"),
        ("ivanova_01_tools_schema.ipynb", "ivanova"),
        ("01_tools_schema-petrov (1).ipynb", "petrov"),
        ("Sidorov 01.ipynb", "sidorov"),  # one student however the name is capitalised
        ("Ivanova/01_tools_schema.ipynb", "ivanova"),
        ("01_tools_schema.ipynb", "01_tools_schema"),
        # a folder per lesson is not a student: the name comes from below it
        ("02/ivanova_02_sync_loop.ipynb", "ivanova"),
        ("02_sync_loop/petrov.ipynb", "petrov"),
        ("lesson_03/Orlova/03_streaming.ipynb", "orlova"),
        ("урок 01/смирнов_01_tools_schema.ipynb", "смирнов"),
        # a numbered student folder is the student's, not a lesson's
        ("01_ivanova/01_tools_schema.ipynb", "01_ivanova"),
        ("lesson_02/07_petrov/02_sync_loop.ipynb", "07_petrov"),
        # the lesson's name first, the student's after: one student over every lesson
        ("01_tools_schema_ivanova.ipynb", "ivanova"),
        ("02_sync_loop_ivanova.ipynb", "ivanova"),
        ("03_streaming-Ivanova.ipynb", "ivanova"),
        ("02-sync-loop Ivanova.ipynb", "ivanova"),
        ("01_tools_schema_ivanova (1).ipynb", "ivanova"),
        ("12_measuring смирнов.ipynb", "смирнов"),
        ("ivanova_lesson_01.ipynb", "ivanova"),
        # a copy's mark on a folder or a file is not the name
        ("ivanova (1)/01_tools_schema.ipynb", "ivanova"),
        ("ivanova copy/01_tools_schema.ipynb", "ivanova"),
        ("Ivanova - Copy/01_tools_schema.ipynb", "ivanova"),
        ("ivanova - Copy (2)/01_tools_schema.ipynb", "ivanova"),
        ("ivanova copy 2/01_tools_schema.ipynb", "ivanova"),
        ("ivanova-copy/01_tools_schema.ipynb", "ivanova"),
        ("Смирнов копия/01_tools_schema.ipynb", "смирнов"),
        ("Смирнов — копия/01_tools_schema.ipynb", "смирнов"),
        ("ivanova_01_tools_schema copy.ipynb", "ivanova"),
        ("ivanova_01_tools_schema - Copy.ipynb", "ivanova"),
        ("ivanova_01_tools_schema-copy.ipynb", "ivanova"),
        ("смирнов_01_tools_schema копия.ipynb", "смирнов"),
        ("Copy of ivanova_01_tools_schema.ipynb", "ivanova"),
        ("lesson_01 (1)/petrov.ipynb", "petrov"),
        ("02_sync_loop - Copy/petrov_02_sync_loop.ipynb", "petrov"),
        # no student's name at all: each file is its own row, named by its path as it is
        ("lesson_01/01_tools_schema.ipynb", "lesson_01/01_tools_schema"),
        ("lesson_01/01_tools_schema (1).ipynb", "lesson_01/01_tools_schema (1)"),
        ("01_tools_schema (1).ipynb", "01_tools_schema (1)"),
        ("01_tools_schema copy.ipynb", "01_tools_schema copy"),
    ],
)
def test_student_of_a_folder_or_a_file_name(path, student):
    assert student_of(Path(path)) == student


def test_answer_cells_take_a_copy_of_the_answer_cell_and_stop_at_another_id():
    ref = reference("01", "en")
    nb = _with_a_copy("01-check_schema", MY_SCHEMA)
    code = [c for c in nb.cells if c.cell_type == "code"]
    schema = answer_cells(nb, ref, ref.exercises["01:check_schema"])
    # the starter left as it was, then its corrected copy: both run, in order
    assert [code[i].source for i in schema] == [_starter(nb, "01-check_schema"), MY_SCHEMA]
    assert code[schema[-1] + 1].source == _check_cell(nb, "01-check_schema").source
    # the next exercise's cells are its own
    call_tool = answer_cells(nb, ref, ref.exercises["01:check_call_tool"])
    assert [code[i].source for i in call_tool] == [_starter(nb, "01-check_call_tool")]


def test_the_reference_holds_the_keys_setup_starter_and_check_arguments():
    ref = reference("00", "en")
    reading = ref.exercises["00:check_reading"]
    assert reading.arguments == "read_reply"
    assert not any("check_" in c.source and "import" not in c.source for c in reading.setup)
    history = reference("03", "ru").exercises["03:check_history"]
    # The earlier starter (it holds the lesson's import) is setup; its check cell is not.
    assert any("import broken_history" in c.source for c in history.setup)
    assert history.arguments == "repair" and history.solutions


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_no_exercise_s_setup_runs_a_self_check(lang):
    """An earlier exercise's key solution is setup for a later one, without its check call: the
    check would run its battery again, and in lesson 12 it raised NameError (the import of
    `n12` is in the check cell, which the setup leaves out)."""
    for lesson in sorted({name.split(":")[0] for name in all_exercises()}):
        for exercise in reference(lesson, lang).exercises.values():
            for cell in exercise.setup:
                tree = ast.parse(cell.source)
                calls = [
                    ast.unparse(node.func)
                    for node in ast.walk(tree)
                    if isinstance(node, ast.Call)
                    and CHECK_CALL.search(ast.unparse(node.func) + "(")
                ]
                assert calls == [], (exercise.name, lang, calls)
    f1 = reference("12", lang).exercises["12:check_schema_accuracy"].setup
    assert any("def precision_recall_f1" in c.source and "tp = sum" in c.source for c in f1)


def test_a_small_fix_of_a_starter_is_not_a_pasted_solution():
    ref = reference("01", "en").exercises["01:check_call_tool"]
    fixed = ref.starter.replace("function(arguments)", "function(**arguments)")
    assert fixed in ref.solutions and _changed(ref.starter, fixed) <= SMALL_EDIT
    schema = reference("01", "en").exercises["01:check_schema"]
    assert _changed(schema.starter, schema.solutions[0]) > SMALL_EDIT


@pytest.mark.parametrize(
    "source, flag",
    [
        ("import importlib\nimportlib.reload = lambda m: m", "assigns importlib.reload"),
        ("from helpers.exercises import n02\nn02.check_x = print", "assigns n02.check_x"),
        ("import helpers.exercises.n01 as m\nm._schema = None", "assigns m._schema"),
        ("import builtins\nbuiltins.print = len", "imports builtins"),
        ("__builtins__.len = print", "uses __builtins__"),
        ("import sys\nsys.modules['helpers.exercises.n01'] = None", "uses sys.modules"),
        ("class A:\n    def __eq__(self, other):\n        return True", "defines __eq__"),
        ("class A:\n    def __hash__(self):\n        return 0", "defines __hash__"),
        ("exec('x = 1')", "calls exec()"),
        # names built at run time (a cheating review, 2026-12-03): read as the text they build
        ("frame = getattr(error, 'tb_' + 'frame')", "builds the name tb_frame at run time"),
        (
            "name = '__glo' + 'bals__'\nspace = getattr(f, name)",
            "builds the name __globals__ at run time",
        ),
        ("run = getattr(print, f\"__{'self'}__\")", "builds the name __self__ at run time"),
        ("run = 'cexe'[::-1]", "builds the name exec at run time"),
        (
            "key = open('notebooks/en/01_tools_schema.ipy' + 'nb')",
            "names a notebook or lesson file",
        ),
        ("hidden = 'emarfteg_.sys\\nsys tropmi'[::-1]", "in a string: uses sys._getframe"),
        ("word = ''.join([chr(111), chr(115)])", "builds the name os at run time"),
        (
            "class S:\n    @property\n    def __class__(self):\n        return S",
            "defines __class__",
        ),
        # routes to frames by an imported name, a keyword or a listing (a second review)
        ("import sys\ntb = sys.exc_info()[2]", "uses .exc_info"),
        (
            "from traceback import walk_stack\nframes = list(walk_stack(None))",
            "imports walk_stack from traceback (a route to frames)",
        ),
        (
            "from logging import currentframe",
            "imports currentframe from logging (a route to frames)",
        ),
        (
            "summary = extract(frames, capture_locals=True)",
            "passes capture_locals= (a route to frames)",
        ),
        ("names = [n for n in dir(error) if n.endswith('frame')]", "calls dir()"),
        (
            "from copy import _deepcopy_dispatch",
            "imports copy._deepcopy_dispatch (a module's private name)",
        ),
        ("eval('1')", "calls eval()"),
        ("open('helpers/exercises/_verdict.py', 'w')", "opens a file for writing"),
        # Planted round 6: "x" (create) dropped from the write modes went unseen.
        ("open('notes.txt', 'x')", "opens a file for writing"),
        ("open('notes.bin', 'xb')", "opens a file for writing"),
        ("open('notes.txt', mode='x')", "opens a file for writing"),
        ("open('notes.txt', 'r+')", "opens a file for writing"),
        # A path's open takes the mode first; only `mode=` was read there.
        ("from pathlib import Path\nPath('n.txt').open('w')", "writes files (.open)"),
        ("from pathlib import Path\nPath('n.txt').open('x')", "writes files (.open)"),
        ("import gzip\ngzip.open('n.gz', 'wt')", "writes files (.open)"),
        ("from pathlib import Path\nPath('x').write_text('y')", "writes files (.write_text)"),
        ("def check_history(fn):\n    pass", "defines check_history"),
        ("check_usage = print", "defines check_usage"),
        ("setattr(object, 'x', 1)", "calls setattr()"),
        ("import threading", "imports threading"),
        ("import os\nos.environ.pop('LLM_GRADE_LOG')", "names the self-check machinery"),
        ("import sys as s\ns.settrace(print)", "uses sys.settrace"),
        ("from sys import _getframe", "imports _getframe from sys"),
        ("import sys\nsys.addaudithook(print)", "uses sys.addaudithook"),
        ("x = f.f_back.f_locals", "uses .f_back"),
        ("getattr(f, 'f_globals')", "calls getattr() for f_globals"),
        (
            "import sys\ns = sys\ngetattr(s, 'set' + 'trace')",
            "calls getattr() on a module with a computed name",
        ),
        ("().__class__.__base__.__subclasses__()", "uses .__subclasses__"),
        ("get_ipython().ast_transformers.append(t)", "uses get_ipython"),
        ("%load_ext cheat\nx = 1", "uses IPython magics or shell commands (%, !)"),
        (
            "from helpers.exercises.n04 import extract_battery",
            "imports helpers.exercises.n04.extract_battery (the checks' own code)",
        ),
        ("n01._greet('x')", "uses n01._greet (the checks' own code)"),
        ("class A:\n    def __del__(self):\n        pass", "defines __del__"),
        ("import inspect", "imports inspect"),
        ("import socket", "imports socket"),
        # Reached another way (session 8's cheating review: none of these was flagged)
        ("import timeit\ntimeit.timeit('import gc\\ngc.get_objects()')", "in a string: imports gc"),
        (
            "import dataclasses\ndataclasses.inspect.Parameter.x = 1",
            "uses dataclasses.inspect (a module)",
        ),
        ("import glob\nglob.os.replace('a', 'b')", "uses glob.os (a module)"),
        ("import os\nif os.fork() == 0:\n    pass", "uses .fork (a process of its own)"),
        ("import re\nre._cache.clear()", "uses re._cache (a module's private name)"),
        ("from helpers.exercises import n12 as lesson", "imports helpers.exercises.n12 as lesson"),
        ("import sys\nroot = sys.prefix", "uses sys.prefix"),
        # Any module by a name in a string, and a string hidden from the scan (a second review)
        ("import pkgutil\nrun = pkgutil.resolve_name('builtins:exec')", "imports pkgutil"),
        ("import base64\ncode = base64.b64decode('aW1wb3J0IGdj')", "imports base64"),
        (
            "key = open('notebooks/en/01_tools_schema.ipynb').read()",
            "names a notebook or lesson file",
        ),
    ],
)
def test_patching_in_an_answer_cell_is_named(source, flag):
    assert flag in patching(source), patching(source)


@pytest.mark.parametrize(
    "source",
    [
        MY_SCHEMA,
        MY_CALL_TOOL,
        MY_CONVERT,
        "with open('notes.txt') as f:\n    text = f.read()",
        "with open('wax.txt', 'rb') as f:\n    data = f.read()",  # the name is not the mode
        "from pathlib import Path\ntext = Path('notes.txt').open('r').read()",
        "from pathlib import Path\nwith Path('w').open() as f:\n    f.read()",
        "def reasoning(delta, key):\n    return getattr(delta, key, None)",  # lesson 06
        "text = text.replace('<think>', '')",
        'prompt = "Call get_weather; then answer.\\nimport nothing"',  # prose in a string
    ],
)
def test_honest_answers_are_not_flagged(source):
    assert patching(source) == []


def test_a_record_is_read_only_for_this_request_and_changes_of_the_runtime_are_named():
    def sent(nonce, passed, hint="", error="", problems="", state=None):
        lines = [nonce, passed] + [x.encode().hex() for x in (hint, error, problems)]
        lines += [f"{k.encode().hex()} {v}" for k, v in (state or {}).items()]
        return "\n".join(lines).encode()

    record = read_record(sent("abc", "1", "ок", state={"json.loads": 7}), "abc")
    assert record == {
        "passed": True,
        "hint": "ок",
        "error": "",
        "problems": [],
        "state": {"json.loads": 7},
    }
    assert read_record(sent("abc", "0", problems="a\nb"), "abc")["problems"] == ["a", "b"]
    assert read_record(sent("old", "1"), "abc") is None  # another request's record
    assert read_record(sent("abc", "yes"), "abc") is None
    assert read_record(b"\xff\xfe", "abc") is None
    assert read_record(sent("abc", "1") + b"\nzz 1", "abc") is None
    before = {"json.loads": 1, "threads": 2, "builtins.input": 3, "re.compile": 4}
    after = {"json.loads": 9, "threads": 2, "builtins.input": 8, "copy.copy": 5}
    # Changed and removed bindings count; added ones (a lazy import) and known churn do not.
    assert changed_state(before, after) == ["json.loads", "re.compile"]


PROBE = """class Box:
    def open(self):
        return 1
def lid(a=1, *, b=2):
    return a + b
box = Box()
box.lid = 1
"""


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("probe.Box.open = lambda self: 2", ["grader_probe.Box.open", "grader_probe.Box.open()"]),
        ("probe.lid.__code__ = (lambda a=1, *, b=2: 0).__code__", ["grader_probe.lid()"]),
        ("probe.lid.__defaults__ = (5,)", ["grader_probe.lid()"]),
        ("probe.lid.__kwdefaults__ = {'b': 0}", ["grader_probe.lid()"]),
        # A name added to a class of the module: an inherited method shadowed by a patch
        # (round 7: `ChatCompletionChunk.model_validate = ...` emptied every test stream).
        ("probe.Box.lid = probe.lid", ["grader_probe.Box.{}"]),
        ("probe.Box.__slotnames__ = []", []),  # copy adds it by itself
        # A method replaced on an object of the module's own class (`json._default_decoder`).
        ("probe.box.open = lambda: 2", ["grader_probe.box@"]),
        ("probe.box.lid = 3", ["grader_probe.box@lid"]),
        ("import sys; sys.modules['grader_probe.sub'] = sys", ["sys.modules[grader_probe.sub]"]),
    ],
)
def test_the_kernel_state_sees_a_module_s_class_or_function_changed_in_place(change, expected):
    """The kernel's state function, run here over a module of its own: a method patched in its
    class, a function's code or defaults swapped while the binding stays the same object."""
    import sys
    import types

    probe = types.ModuleType("grader_probe")
    exec(PROBE, probe.__dict__)
    names: dict = {}
    exec(KERNEL_STATE, names)
    sys.modules["grader_probe"] = probe
    sys.modules["grader_probe.sub"] = probe
    try:
        before = names["_grader_state"](lambda name: name == "grader_probe")[0]
        assert "grader_probe.Box.open()" in before and "grader_probe.lid()" in before
        exec(change, {"probe": probe})
        after = names["_grader_state"](lambda name: name == "grader_probe")[0]
    finally:
        del sys.modules["grader_probe"], sys.modules["grader_probe.sub"]
    found = changed_state(before, after)
    assert [c for c in found if "grader_probe" in c] == expected


def test_the_grader_copy_is_read_only_and_changes_are_found_and_undone(tmp_path):
    root = tmp_path / "checkout"
    (root / "helpers" / "exercises").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "helpers" / "exercises" / "_verdict.py").write_text("GOOD = 1\n")
    files = GraderFiles(root)
    copied = tmp_path / "copy"
    files.make_copy(copied)
    target = copied / "helpers" / "exercises" / "_verdict.py"
    assert not os.access(target, os.W_OK) or os.geteuid() == 0  # root can write anyway...
    assert not files.copy_changed(copied)
    target.chmod(0o644)
    target.write_text("GOOD = 0\n")
    assert files.copy_changed(copied)  # ...so the copy is hashed after every kernel
    (root / "helpers" / "exercises" / "_verdict.py").write_text("GOOD = 0\n")
    (root / "helpers" / "sitecustomize.py").write_text("x = 1\n")
    assert files.restore_checkout() == ["helpers/exercises/_verdict.py", "helpers/sitecustomize.py"]
    assert (root / "helpers" / "exercises" / "_verdict.py").read_text() == "GOOD = 1\n"
    assert not (root / "helpers" / "sitecustomize.py").exists()
    assert files.restore_checkout() == []
    # Nothing is lost: what was put back is kept (it may be the teacher's own edit).
    kept = sorted(p.relative_to(files.undone).as_posix() for p in files.undone.rglob("*.py"))
    assert kept == ["1/helpers/exercises/_verdict.py", "2/helpers/sitecustomize.py"]
    assert (files.undone / kept[0]).read_text() == "GOOD = 0\n"


def test_a_submission_another_kernel_overwrites_is_put_back_and_graded_as_handed_in(tmp_path):
    """An answer can find the submissions folder (the grader's command line is in /proc) and
    overwrite a classmate's notebook: the grader reads every notebook before any kernel runs,
    grades from those bytes, and after each kernel puts back what changed (and keeps it)."""
    root = tmp_path / "checkout"
    for tree in ("helpers", "data"):
        (root / tree).mkdir(parents=True)
    folder, executed = tmp_path / "subs", tmp_path / "subs" / "run"
    (folder / "ivanova").mkdir(parents=True)
    (folder / "petrov").mkdir()
    victim = folder / "petrov" / "01_tools_schema.ipynb"
    victim.write_text('{"cells": []}')
    (folder / "ivanova" / "01_tools_schema.ipynb").write_text('{"cells": [1]}')
    files = GraderFiles(root, submissions=folder, skip=executed)
    victim.write_text("{}")
    (folder / "ivanova" / "planted.ipynb").write_text("{}")
    executed.mkdir()
    (executed / "ivanova.ipynb").write_text("the grader's own output")  # not a submission
    assert files.handed_in_bytes(victim) == b'{"cells": []}'
    assert files.restore_checkout() == [
        "submissions/ivanova/planted.ipynb",
        "submissions/petrov/01_tools_schema.ipynb",
    ]
    assert victim.read_text() == '{"cells": []}'
    assert not (folder / "ivanova" / "planted.ipynb").exists()
    assert (executed / "ivanova.ipynb").exists()
    kept = sorted(p.relative_to(files.undone).as_posix() for p in files.undone.rglob("*.ipynb"))
    assert kept == [
        "1/submissions/ivanova/planted.ipynb",
        "2/submissions/petrov/01_tools_schema.ipynb",
    ]


def test_a_kernel_s_home_is_its_own_folder(tmp_path):
    """HOME, IPython's and Jupyter's folders of a graded kernel are a fresh folder: an IPython
    start-up file an answer writes there does not run in the next kernel."""
    env = kernel_env(tmp_path / "copy", "en", tmp_path / "home")
    assert env["HOME"] == str(tmp_path / "home")
    assert env["IPYTHONDIR"] == str(tmp_path / "home" / ".ipython")
    assert env["JUPYTER_CONFIG_DIR"] == str(tmp_path / "home" / ".jupyter")


def test_the_test_run_grades_against_a_private_copy_of_the_checkout():
    """The suite's grader watches and puts back a copy made when the tests started, never the
    developer's checkout: an edit made while the tests run is neither undone nor a cheat."""
    import helpers.grade as grade

    assert grade.CHECKOUT != REPO_ROOT
    for tree in grade.GRADER_TREES:
        assert (grade.CHECKOUT / tree).is_dir()
    assert GraderFiles().root == grade.CHECKOUT


def test_the_kernel_gets_an_allow_list_of_variables_and_the_grader_copy_first(
    tmp_path, monkeypatch
):
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "GITHUB_TOKEN": "ghp_x",
        "KIMI_API_KEY": "sk-k",
        "HTTPS_PROXY": "http://proxy:3128",
        "all_proxy": "socks://proxy:1080",
        "LLM_REPLAY_DIR": "/elsewhere",
        "LLM_GRADE_LOG": "/tmp/log",
        "SOME_TOOL_SETTING": "1",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO_ROOT), "/opt/lib"]))
    env = kernel_env(tmp_path / "copy", "ru")
    assert not set(secrets) & set(env)
    assert env["PATH"] == os.environ["PATH"] and env["LC_ALL"] == "C.UTF-8"
    assert env["LLM_MODE"] == "replay" and env["HF_HUB_OFFLINE"] == "1"
    assert env["LLM_LANG"] == "ru"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "copy"), "/opt/lib"]


def test_weights_are_read_checked_and_templated(tmp_path):
    template = tmp_path / "weights.csv"
    write_weights_template(template)
    rows = list(csv.reader(template.open(encoding="utf-8")))
    assert rows[0] == ["exercise", "weight"] and ["01:check_schema", "1"] in rows
    template.write_text("exercise,weight\n01:check_schema,2\n01:check_call_tool,0.5\n")
    assert read_weights(template) == {"01:check_schema": 2.0, "01:check_call_tool": 0.5}
    template.write_text("01:check_nothing,2\n")
    with pytest.raises(ValueError, match="no such exercise"):
        read_weights(template)
    template.write_text("01:check_schema,two\n")
    with pytest.raises(ValueError, match="'two'"):
        read_weights(template)


def test_the_marks_sheet_has_a_row_per_student_and_counts_missing_lessons(tmp_path):
    def result(student, notebook, lesson, passed, review=()):
        names = exercises_of(lesson)
        values = {e: ("passed" if i < passed else "not yet") for i, e in enumerate(names)}
        return Result(notebook, student, lesson, values=values, review=list(review))

    results = [
        result("ivanova", "ivanova/01.ipynb", "01", 3),
        result("ivanova", "ivanova/02.ipynb", "02", 1),
        result("ivanova", "ivanova/02 (1).ipynb", "02", 2),  # a second try: the best counts
        result("petrov", "petrov/01.ipynb", "01", 2, ["cell 40: defines __eq__"]),
    ]
    out = tmp_path / "marks.csv"
    write_marks(results, out, {"01:check_schema": 2})
    rows = _table(out)
    assert list(rows["ivanova"]) == [
        "student",
        "lesson 01",
        "lesson 02",
        "total",
        "max",
        "mark_%",
        "needs_review",
    ]
    assert [rows["ivanova"][k] for k in ("lesson 01", "lesson 02", "total", "max", "mark_%")] == [
        "4",
        "2",
        "6",
        "7",
        "85.7",
    ]
    assert rows["ivanova"]["needs_review"] == ""
    petrov = rows["petrov"]
    assert (petrov["lesson 01"], petrov["lesson 02"], petrov["total"]) == ("3", "", "3")
    assert petrov["mark_%"] == "42.9"  # lesson 02 not handed in still counts in the maximum
    assert petrov["needs_review"] == "petrov/01.ipynb: cell 40: defines __eq__"
    assert marks_path(Path("out/grades.csv")) == Path("out/grades_marks.csv")


def test_the_counted_lessons_fix_the_maximum_whatever_anyone_hands_in(tmp_path):
    """Without --lessons one student's optional lesson 06 raised everyone's maximum."""
    results = [
        Result(
            "ivanova/01.ipynb", "ivanova", "01", values=dict.fromkeys(exercises_of("01"), "passed")
        ),
        Result(
            "petrov/01.ipynb", "petrov", "01", values=dict.fromkeys(exercises_of("01"), "passed")
        ),
        Result(
            "petrov/06.ipynb", "petrov", "06", values=dict.fromkeys(exercises_of("06"), "passed")
        ),
    ]
    out = tmp_path / "marks.csv"
    write_marks(results, out, {}, read_lessons("01"))
    rows = _table(out)
    assert list(rows["ivanova"])[1:3] == ["lesson 01", "total"]
    for student in ("ivanova", "petrov"):
        assert (rows[student]["total"], rows[student]["max"]) == ("3", "3"), rows[student]
    assert rows["petrov"]["needs_review"] == "petrov/06.ipynb: lesson 06 not counted"
    write_marks(results, out, {})  # the default: every lesson handed in
    assert (_table(out)["ivanova"]["max"], _table(out)["ivanova"]["mark_%"]) == ("6", "50.0")
    assert read_lessons("00, 03,05-06") == ["00", "03", "05", "06"]
    for wrong in ("1-3", "00-99", "ab", ""):
        with pytest.raises(ValueError, match="--lessons"):
            read_lessons(wrong)


# --- a class graded in kernels ---------------------------------------------------------------

VERDICT_FILE = CHECKOUT / "helpers" / "exercises" / "_verdict.py"  # the suite's private copy
PTH = [Path(p) / "zz_grader_cheat.pth" for p in site.getsitepackages()]

# The class fixture below grades 30-odd notebooks in kernels (about a minute on a quiet machine);
# beside two busy cores it took more than pytest-timeout's 300 s, so this file's ceiling is 900 s.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class of submissions, graded once with two notebooks at once; the checkout's check
    code is compared before and after (and put back by this fixture if the grader did not)."""
    folder = tmp_path_factory.mktemp("submissions")
    en, ru = _edition(), _edition(lang="ru")
    call_tool_starter = _starter(en, "01-check_call_tool")
    honest = {
        "01-check_schema": MY_SCHEMA,
        "01-check_call_tool": MY_CALL_TOOL,
        "01-check_typed_function": MY_CONVERT,
    }
    _write(folder, "ivanova/01_tools_schema.ipynb", _with(honest))
    _write(folder, "petrov_01_tools_schema.ipynb", ru)  # untouched
    fix = call_tool_starter.replace("function(arguments)", "function(**arguments)")
    _write(folder, "fixer/01_tools_schema.ipynb", _with({"01-check_call_tool": fix}))
    key = nbformat.read(NOTEBOOKS_DIR / "ru" / "01_tools_schema.ipynb", as_version=4)
    _write(folder, "kuznetsova/01_tools_schema.ipynb", key)  # the teacher's key, handed in
    _write(
        folder,
        "liar/01_tools_schema.ipynb",
        _with({"01-check_schema": EQ_SCHEMA, "01-check_call_tool": EQ_CALL_TOOL}),
    )
    _write(folder, "popper/01_tools_schema.ipynb", _with({"01-check_call_tool": LOG_POP}))
    rewrite = REWRITE_VERDICT.format(checkout=str(VERDICT_FILE))
    _write(folder, "rewriter/01_tools_schema.ipynb", _with({"01-check_schema": rewrite}))
    # The .pth planter runs beside the others (--jobs 2): whichever kernel finds the shared file
    # changed, every kernel running then is run again alone, and the planter plants it again.
    _write(folder, "planter/01_tools_schema.ipynb", _with({"01-check_schema": PLANT_PTH}))
    _write(folder, "sidorova/01_tools_schema.ipynb", _with(honest, lang="ru"))
    # The key's function word for word in a student edition (written so, or pasted)
    same = reference("01", "en").exercises["01:check_typed_function"].solutions[0]
    _write(folder, "orlova/01_tools_schema.ipynb", _with({"01-check_typed_function": same}))
    for student, exercise, source in IN_KERNEL:
        _write(folder, f"{student}/01_tools_schema.ipynb", _with({exercise: source}))
    _write(folder, "channel/01_tools_schema.ipynb", _with({"01-check_call_tool": PATCH_CHANNEL}))
    _write(folder, "echoflip/01_tools_schema.ipynb", _with({"01-check_schema": ECHO_FLIP}))
    _write(folder, "detacher/01_tools_schema.ipynb", _with({"01-check_call_tool": DETACHER}))
    _write(folder, "recache/00_start.ipynb", _with({"00-check_live_env": RECACHE}, "00_start"))
    _write(folder, "faker/01_tools_schema.ipynb", _with({"01-check_typed_function": FAKE_PACKAGE}))
    _write(folder, "hooker/01_tools_schema.ipynb", _with({"01-check_typed_function": IMPORT_HOOK}))
    odd = _with(honest)
    for cell in odd.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "01-check_schema-answer":
            cell.metadata["nbgrader"] = "x"
    odd.cells[0].metadata["jupyter"] = []
    odd.cells[3].metadata["nbgrader"] = []
    _write(folder, "odd/01_tools_schema.ipynb", odd)
    # the answer cell copied in Jupyter (the same metadata) and corrected below the starter
    _write(folder, "duplicator/01_tools_schema.ipynb", _with_a_copy("01-check_schema", MY_SCHEMA))
    reload_nb = _edition("02_sync_loop")
    for name in ("check_needs_tools", "check_answer_calls", "check_tool_content"):
        _answer(reload_nb, f"02-{name}", RELOAD_FAKES + _starter(reload_nb, f"02-{name}"))
    _write(folder, "reloader/02_sync_loop.ipynb", reload_nb)
    bare = _with({"03-check_history": BARE_CHECK}, "03_streaming", "ru")
    _write(folder, "bare/03_streaming.ipynb", bare)
    (folder / "broken").mkdir()
    (folder / "broken" / "01_tools_schema.ipynb").write_text('{"cells": [', encoding="utf-8")

    before = VERDICT_FILE.read_bytes()
    weights = tmp_path_factory.mktemp("w") / "weights.csv"
    weights.write_text("01:check_schema,2\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    try:
        grade_folder(folder, out, timeout=600, jobs=2, weights=read_weights(weights))
        after = VERDICT_FILE.read_bytes()
        planted = [p for p in PTH if p.exists()]
    finally:
        VERDICT_FILE.write_bytes(before)  # a safety net only: the assertions use `after`
        for path in PTH:
            path.unlink(missing_ok=True)
    return _table(out), _table(marks_path(out)), before == after, planted


def test_columns_student_flags_marks_and_three_per_exercise(graded):
    rows, _, _, _ = graded
    columns = list(rows["ivanova/01_tools_schema.ipynb"])
    assert columns[:11] == [
        "student",
        "notebook",
        "lesson",
        "run",
        "check_cells",
        "answer_key",
        "needs_review",
        "score",
        "max_score",
        "student_total",
        "student_max",
    ]
    # Lessons in order (the class handed in 00 to 03), three columns per exercise.
    first = exercises_of("00")[0]
    assert columns[11:14] == [first, f"{first} attempted", f"{first} hint"]
    assert columns.index("01:check_schema") == 11 + 3 * len(exercises_of("00"))
    assert len(columns) == 11 + 3 * sum(len(exercises_of(n)) for n in ("00", "01", "02", "03"))


def test_the_honest_submission_gets_full_marks_and_no_flag(graded):
    rows, marks, _, _ = graded
    row = rows["ivanova/01_tools_schema.ipynb"]
    assert _verdicts(row) == ["passed"] * 3, row
    assert (row["run"], row["check_cells"], row["answer_key"], row["needs_review"]) == (
        "ok",
        "ok",
        "no",
        "",
    )
    assert (row["score"], row["max_score"]) == ("4", "4")  # check_schema weighs 2
    assert marks["ivanova"]["needs_review"] == "" and marks["ivanova"]["lesson 01"] == "4"


def test_an_untouched_notebook_scores_0_with_hints_in_its_language(graded):
    row = graded[0]["petrov_01_tools_schema.ipynb"]
    assert _verdicts(row) == ["not yet"] * 3
    assert [row[f"{e} attempted"] for e in exercises_of("01")] == ["no"] * 3
    assert row["score"] == "0" and row["needs_review"] == ""
    assert any("а" <= ch <= "я" for ch in row["01:check_schema hint"]), row["01:check_schema hint"]


def test_a_two_character_fix_is_not_called_the_key(graded):
    row = graded[0]["fixer/01_tools_schema.ipynb"]
    assert row["01:check_call_tool"] == "passed" and row["answer_key"] == "no"
    assert row["needs_review"] == "" and row["score"] == "1"


def test_the_keys_text_in_a_student_edition_is_graded_and_flagged_not_zeroed(graded):
    """Equal text is no proof: lesson 00's three values or a short loop are the key's when written
    the obvious way. Only the key's own notebook (its collapsed solutions) scores 0."""
    row = graded[0]["orlova/01_tools_schema.ipynb"]
    assert row["01:check_typed_function"] == "passed" and row["score"] == "1"
    assert row["answer_key"] == "yes: 1 of 3 reference solutions", row["answer_key"]
    assert (
        "01:check_typed_function: the same text as the key's reference solution"
        in (row["needs_review"])
    )
    assert "pasted" not in row["needs_review"]


def test_the_answer_key_as_it_is_scores_0_with_a_flag(graded):
    row, marks = graded[0]["kuznetsova/01_tools_schema.ipynb"], graded[1]["kuznetsova"]
    assert row["score"] == "0" and _verdicts(row) == ["not yet"] * 3
    assert row["answer_key"] == "yes: 3 of 3 reference solutions, 3 collapsed solution cell(s)"
    assert "answer key" in marks["needs_review"] and marks["total"] == "0"


def test_a_lying_eq_gets_nothing_and_is_flagged(graded):
    row = graded[0]["liar/01_tools_schema.ipynb"]
    assert row["01:check_schema"] == "not yet" and row["01:check_call_tool"] == "not yet"
    assert row["score"] == "0" and "defines __eq__" in row["needs_review"]


def test_a_popped_and_forged_grade_log_gets_nothing(graded):
    row = graded[0]["popper/01_tools_schema.ipynb"]
    assert row["01:check_call_tool"] == "not yet" and row["score"] == "0"
    assert "names the self-check machinery" in row["needs_review"]


def test_rewriting_the_check_code_on_disk_is_refused_undone_and_reaches_nobody(graded):
    rows, _, unchanged, _ = graded
    row = rows["rewriter/01_tools_schema.ipynb"]
    assert row["01:check_schema"] == "error" and row["score"] == "0"
    assert row["01:check_schema hint"] == "verdict refused: the grader's files were changed"
    assert "changed the grader's files (the grader's copy" in row["needs_review"]
    assert unchanged  # the checkout's _verdict.py was put back before the run ended
    # Everyone else's untouched, wrong starters still fail (they ran beside and after it).
    assert _verdicts(rows["petrov_01_tools_schema.ipynb"]) == ["not yet"] * 3
    assert rows["faker/01_tools_schema.ipynb"]["01:check_schema"] == "not yet"


def test_a_planted_pth_file_is_removed_and_flagged(graded):
    rows, _, _, planted = graded
    row = rows["planter/01_tools_schema.ipynb"]
    assert planted == [] and row["01:check_schema"] == "error"
    assert "zz_grader_cheat.pth" in row["needs_review"], row["needs_review"]


def test_a_patched_verdict_channel_gives_no_verdict(graded):
    row = graded[0]["channel/01_tools_schema.ipynb"]
    assert row["01:check_call_tool"] == "error" and row["score"] == "0"
    assert "assigns display.publish_display_data" in row["needs_review"]


def test_a_fake_helpers_package_or_import_hook_is_not_the_grader_s_check(graded):
    rows = graded[0]
    faker = rows["faker/01_tools_schema.ipynb"]
    assert faker["01:check_typed_function"] == "not yet" and faker["score"] == "0"
    assert "uses sys.modules" in faker["needs_review"]
    hooker = rows["hooker/01_tools_schema.ipynb"]
    assert hooker["01:check_typed_function"] != "passed", hooker["01:check_typed_function hint"]
    assert "uses sys.meta_path" in hooker["needs_review"]


def test_a_verdict_changed_after_the_check_printed_it_is_refused(graded):
    row = graded[0]["echoflip/01_tools_schema.ipynb"]
    seen = (row["01:check_schema"], row["01:check_schema hint"], row["needs_review"])
    assert row["01:check_schema"] == "error" and row["score"] == "0", seen
    assert "the verdict sent is a pass, the verdict the check printed is not" in seen[1], seen
    assert "in a string: imports gc" in row["needs_review"], seen


def test_a_process_that_outlives_its_kernel_is_stopped_and_its_verdict_refused(graded):
    row = graded[0]["detacher/01_tools_schema.ipynb"]
    seen = (row["01:check_call_tool"], row["01:check_call_tool hint"], row["needs_review"])
    assert row["01:check_call_tool"] == "error" and row["score"] == "0", seen
    assert "process(es) of the answer outlived the kernel" in seen[1], seen
    assert "uses .setsid (a process of its own)" in row["needs_review"], seen
    sleepers = [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p).endswith("# cheat")]
    assert not sleepers  # stopped, not left to run after the grader


def test_a_pattern_planted_in_re_s_cache_does_not_reach_the_check(graded):
    row = graded[0]["recache/00_start.ipynb"]
    assert row["00:check_live_env"] == "not yet", (row["00:check_live_env hint"], row["run"])
    assert "re._cache" in row["needs_review"]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def test_in_kernel_cheats_get_no_verdict_or_are_flagged(graded):
    rows = graded[0]
    for student, _, _ in IN_KERNEL:
        row = rows[f"{student}/01_tools_schema.ipynb"]
        assert row["needs_review"], student  # each is flagged, whatever its verdict
        assert row["run"].startswith("ok"), (student, row["run"])  # and still one graded row
    # What the kernel's state, the one-connection rule or a dead kernel stops: no verdict.
    refused = {
        "framepatcher": "the check's code changed while it ran: helpers.exercises._verdict",
        "auditor": "2 verdicts were sent instead of one",
        "copypatcher": "changed: copy.deepcopy",
        "transformer": "changed: ipython input_transformers_post",
        "tracer": "the check's frames were traced (sys.settrace)",
        "killer": "no verdict: kernel died",
        "kernelbreaker": "no verdict: the kernel stopped answering",
        "loader": "changed: _frozen_importlib_external.FileLoader.get_data",
        "undoer": "changed: _frozen_importlib_external.FileLoader.get_data",
    }
    for student, why in refused.items():
        row = rows[f"{student}/01_tools_schema.ipynb"]
        name = next(e.replace("-", ":", 1) for s, e, _ in IN_KERNEL if s == student)
        seen = (student, row[name], row[f"{name} hint"], row["run"], row["needs_review"])
        assert row[name] == "error", seen
        assert why in row[f"{name} hint"], seen
        assert row["score"] == "0", student
    racer = rows["racer/01_tools_schema.ipynb"]
    seen = (racer["01:check_schema"], racer["01:check_schema hint"], racer["needs_review"])
    assert racer["01:check_schema"] == "error" and racer["score"] == "0", seen
    assert "verdict refused: the kernel's runtime was changed" in racer["01:check_schema hint"]
    for student in ("printer", "referencer", "copyreader", "detector"):
        assert rows[f"{student}/01_tools_schema.ipynb"]["score"] == "0", student
    assert (
        "uses n01._greet (the checks' own code)"
        in rows["referencer/01_tools_schema.ipynb"]["needs_review"]
    )
    assert "calls exec()" in rows["copyreader/01_tools_schema.ipynb"]["needs_review"]
    assert "uses .extract_stack" in rows["detector/01_tools_schema.ipynb"]["needs_review"]
    # What only the flags catch: the check's variables read from its frames, and a trace
    # function that rewrites the request's locals and takes itself (and its marks) away.
    # These two get `passed` (the limit the teacher's guide names), so the flag must be there.
    reader, wiper = rows["framereader/01_tools_schema.ipynb"], rows["wiper/01_tools_schema.ipynb"]
    assert reader["01:check_call_tool"] == "passed"
    assert (
        "uses sys._getframe" in reader["needs_review"]
        and "uses .f_locals" in reader["needs_review"]
    )
    assert "uses sys.settrace" in wiper["needs_review"] and "uses .f_trace" in wiper["needs_review"]


def test_honest_notebooks_beside_the_cheats_get_full_marks_and_no_flag(graded):
    rows, marks = graded[0], graded[1]
    row = rows["sidorova/01_tools_schema.ipynb"]
    assert _verdicts(row) == ["passed"] * 3 and row["needs_review"] == "", row
    assert marks["sidorova"]["needs_review"] == ""


def test_odd_cell_metadata_is_one_graded_row(graded):
    row = graded[0]["odd/01_tools_schema.ipynb"]
    assert row["run"] == "ok" and _verdicts(row) == ["passed"] * 3


def test_a_corrected_copy_of_the_answer_cell_is_graded(graded):
    row = graded[0]["duplicator/01_tools_schema.ipynb"]
    assert (row["01:check_schema"], row["01:check_schema attempted"]) == ("passed", "yes"), row
    assert row["needs_review"] == "" and row["run"] == "ok"


def test_fake_checks_behind_a_disabled_reload_get_nothing(graded):
    row = graded[0]["reloader/02_sync_loop.ipynb"]
    assert _verdicts(row, "02") == ["error"] * 3 and row["score"] == "0"
    assert "assigns importlib.reload" in row["needs_review"]
    assert "changed the kernel's runtime (changed: importlib.reload" in row["needs_review"]


def test_a_redefined_bare_named_check_gets_nothing(graded):
    row = graded[0]["bare/03_streaming.ipynb"]
    assert row["03:check_history"] == "not yet" and row["score"] == "0"
    assert "defines check_history" in row["needs_review"]


def test_an_invalid_notebook_gets_a_row_that_says_so(graded):
    row = graded[0]["broken/01_tools_schema.ipynb"]
    assert row["run"].startswith("invalid notebook")
    assert _verdicts(row) == ["missing"] * 3 and row["student"] == "broken"
    assert "invalid notebook" in graded[1]["broken"]["needs_review"]


@pytest.fixture(scope="module")
def endless(tmp_path_factory, monkeypatch_module):
    """An endless loop in one answer cell, and an answer cell that prints the secrets it sees."""
    for name in ("ANTHROPIC_API_KEY", "GITHUB_TOKEN", "KIMI_API_KEY"):
        monkeypatch_module.setenv(name, "do-not-leak")
    folder = tmp_path_factory.mktemp("endless")
    spy = (
        "import os\n"
        "print(sorted(k for k, v in os.environ.items() if v == 'do-not-leak'), "
        "os.environ['LLM_MODE'])\n" + WRONG_SCHEMA
    )
    nb = _with({"01-check_call_tool": "while True:\n    pass", "01-check_schema": spy})
    _write(folder, "01_tools_schema.ipynb", nb)
    out, executed = folder / "grades.csv", tmp_path_factory.mktemp("executed")
    grade_folder(folder, out, timeout=600, cell_timeout=30, executed=executed)
    return _table(out)["01_tools_schema.ipynb"], nbformat.read(
        executed / "01_tools_schema.ipynb", as_version=4
    )


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_an_endless_loop_is_interrupted_and_the_other_exercises_are_graded(endless):
    row, nb = endless
    assert "01:check_call_tool: interrupted after 30 s" in row["run"], row["run"]
    assert row["01:check_call_tool"] in ("error", "not yet")
    assert row["01:check_schema"] == "not yet" and row["01:check_typed_function"] == "not yet"
    loop = next(c for c in nb.cells if c.source.startswith("while True"))
    assert any("[grader] interrupted after" in o.get("text", "") for o in loop.outputs)


@pytest.mark.notebooks
def test_a_slow_cell_of_the_key_is_not_the_student_s_interrupted_cell():
    """`--cell-timeout` bounds the student's cells and the check. The key's own setup gets the
    notebook's time: on a busy machine a slow import must not read "interrupted" in the student's
    row (the endless-loop test above failed that way in loaded runs). Here the key's first cell
    sleeps past a 30 s cell timeout and the honest answer still passes (the check itself must
    finish within those 30 s: 2 s, then 10 s, cut it in loaded runs)."""
    import dataclasses
    import time

    from helpers.grade import GraderFiles, run_exercise

    exercise = reference("01", "en").exercises["01:check_schema"]
    first = nbformat.v4.new_code_cell(exercise.setup[0].source + "\nimport time\ntime.sleep(31)")
    slow = dataclasses.replace(exercise, setup=(first, *exercise.setup[1:]))
    answer = [nbformat.v4.new_code_cell(MY_SCHEMA)]
    outcome = run_exercise(answer, slow, "en", GraderFiles(), 30, time.monotonic() + 600)
    assert (outcome.value, outcome.note) == ("passed", ""), (outcome.value, outcome.note)


@pytest.mark.notebooks
def test_a_graded_kernel_leaves_no_thread_or_file_handle_behind():
    """nbclient leaves a kernel's channels open when it did not start the kernel itself: each
    graded exercise left a heartbeat thread and its sockets behind (870 file handles and 200
    threads in one run of this file), so a class graded at once runs out of file handles, and
    the threads slowed every later kernel of a busy machine."""
    import threading
    import time

    from helpers.grade import GraderFiles, run_exercise

    exercise = reference("01", "en").exercises["01:check_schema"]
    files, answer = GraderFiles(), [nbformat.v4.new_code_cell(MY_SCHEMA)]

    def grade() -> str:
        return run_exercise(answer, exercise, "en", files, 60, time.monotonic() + 600).value

    def held() -> tuple[int, int]:
        return threading.active_count(), len(os.listdir("/proc/self/fd"))

    assert grade() == "passed"  # the first kernel starts what stays: the event loop, imports
    threads, handles = held()
    assert [grade() for _ in range(3)] == ["passed"] * 3
    now = held()
    assert now[0] <= threads, (now, threads)
    assert now[1] < handles + 3, (now, handles)  # the leak was 13 per kernel


def test_the_executed_copy_shows_the_grader_s_outputs_and_no_secrets(endless):
    _, nb = endless
    spy = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("import os"))
    # a busy kernel may send one print as several stream messages: read them together
    printed = "".join(o["text"] for o in spy.outputs if o.get("name") == "stdout")
    assert printed == "[] replay\n", spy.outputs
    check = _check_cell(nb, "01-check_schema")
    assert "".join(o.get("text", "") for o in check.outputs).startswith("Not yet:")
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert outputs and not any(STATE_MIME in o.get("data", {}) for o in outputs)


@pytest.mark.notebooks
@pytest.mark.timeout(600)
def test_honest_answers_to_the_newest_lessons_get_full_marks(tmp_path):
    """Lessons 10-12 through the grader: each answer cell of the student edition holds the key's
    solution under a comment of the student's own. A check that trusts a class by identity fails
    here: the grader imports the checks from its own copy of the helpers, so the learner's
    `ToolRegistry` (lesson 11) is another class object than the check's."""
    from helpers.edition import is_solution
    from helpers.lessons import CHECK_CALL

    for name in ("10_mcp_tools", "11_untrusted_results", "12_measuring"):
        key = nbformat.read(NOTEBOOKS_DIR / "en" / f"{name}.ipynb", as_version=4)
        solutions = {}
        for index, cell in enumerate(key.cells):
            if not is_solution(cell):
                continue
            later = [c for c in key.cells[index + 1 :] if c.cell_type == "code"][:1]
            called = CHECK_CALL.findall(cell.source) or CHECK_CALL.findall(later[0].source)
            body = [line for line in cell.source.splitlines() if not CHECK_CALL.search(line)]
            solutions[called[0]] = "# my answer\n" + "\n".join(body)
        student = student_notebook(key, name, "en")
        for cell in student.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith("-answer"):
                cell.source = solutions[grade_id.split("-", 1)[1].removesuffix("-answer")]
        (tmp_path / "sub" / "alice").mkdir(parents=True, exist_ok=True)
        nbformat.write(student, tmp_path / "sub" / "alice" / f"{name}.ipynb")
    results = grade_folder(tmp_path / "sub", tmp_path / "grades.csv", jobs=2)
    assert len(results) == 3
    for result in results:
        assert result.run == "ok", result.notebook
        assert set(result.values.values()) == {"passed"}, (result.notebook, result.values)
        assert not result.review, (result.notebook, result.review)


def test_comments_are_cut_by_the_tokenizer_not_by_a_quote_guess():
    """Two editions differ in comments only, a quote in one (`don't`) included; a `#` inside a
    string is code. Unfinished code still loses its comments."""
    en = 'x = 1  # don\'t\nname = "#tag"  # a comment\n# only a comment\n\nz = 2'
    ru = 'x = 1  # не надо\nname = "#tag"  # комментарий\nz = 2'
    assert _no_comments(en) == _no_comments(ru) == 'x = 1\nname = "#tag"\nz = 2'
    assert _no_comments("f(1,  # don't\n") == "f(1,"


def test_two_grading_threads_read_answers_at_once_without_a_system_error():
    """`--jobs 2` reads two notebooks' cells in two threads. CPython 3.11 builds syntax trees
    with one shared recursion counter: while one thread's tree is built, a finalizer run by the
    collector lets the other thread in, and a parse fails with "SystemError: AST constructor
    recursion depth mismatch" (python/cpython#106905; a notebook was left "not graded" by it).
    Finalizers and a low collection threshold make that interleaving frequent here."""
    import gc

    source = (REPO_ROOT / "helpers" / "loop.py").read_text(encoding="utf-8")
    errors: list[str] = []

    class Finalized:
        def __del__(self):
            sum(range(2000))

    def read_answers() -> None:
        for _ in range(60):
            for _ in range(50):
                cycle = Finalized()
                cycle.self = cycle  # freed by the collector, which runs __del__
            try:
                patching(source)
            except SystemError as exc:
                errors.append(str(exc))
                return

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    try:
        threads = [threading.Thread(target=read_answers) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.set_threshold(*threshold)
    assert not errors, errors


def test_an_ipython_start_up_file_an_answer_writes_dies_with_its_kernel():
    """An answer that writes an IPython start-up file (it would run in every later kernel, and
    in the teacher's own Jupyter) writes it into the kernel's own home, not the teacher's."""
    from helpers.grade import GraderFiles, run_exercise

    startup = Path.home() / ".ipython" / "profile_default" / "startup" / "00-grader-probe.py"
    assert not startup.exists()
    plant = (
        "import pathlib\n"
        "folder = pathlib.Path.home() / '.ipython' / 'profile_default' / 'startup'\n"
        "folder.mkdir(parents=True, exist_ok=True)\n"
        "(folder / '00-grader-probe.py').write_text('PLANTED = 1')\n"
    )
    exercise = reference("01", "en").exercises["01:check_schema"]
    answer = [nbformat.v4.new_code_cell(plant + MY_SCHEMA)]
    try:
        outcome = run_exercise(answer, exercise, "en", GraderFiles(), 60, time.monotonic() + 600)
        assert not startup.exists(), "the answer's start-up file reached the teacher's home"
        assert outcome.value == "passed", (outcome.value, outcome.hint)
    finally:
        startup.unlink(missing_ok=True)


# Answers that change the check's own code without replacing a binding that was there (found by
# a cheating review, 2026-12-03: each passed with no flag before the request compared the names
# a module or class gained, and the code of its functions).
ADDS_A_GLOBAL = '''
def convert_temperature(value: float, to_unit: str) -> float:
    """Convert a temperature.

    Args:
        value: The temperature.
        to_unit: The unit to convert to. (choices: ["celsius", "fahrenheit"])
    """
    from helpers.exercises import n01

    def put(module, fake):
        module.abs = fake  # a global that shadows the builtin inside the check
    put(n01, lambda difference: 0)
    return 0.0
'''
ADDS_TO_A_CLASS = """
def call_tool(tool_call, tool_map):
    namespace = getattr(tool_map["greet"], "__glo" + "bals__")
    verdict = getattr(namespace["exercise"], "__glo" + "bals__")["Verd" + "ict"]
    setattr(verdict, "pass" + "ed", property(lambda self: True, lambda self, value: None))
    return None
"""
SWAPS_CODE = """
def call_tool(tool_call, tool_map):
    namespace = getattr(tool_map["greet"], "__glo" + "bals__")
    identity = lambda value, call, wanted: value
    object.__setattr__(namespace["returned"], "__co" + "de__", identity.__code__)
    return type("Same", (), {"__ne__": lambda a, b: False, "__eq__": lambda a, b: True})()
"""


@pytest.mark.parametrize(
    ("exercise_name", "answer", "change"),
    [
        ("01:check_typed_function", ADDS_A_GLOBAL, "helpers.exercises.n01.abs (added)"),
        ("01:check_call_tool", ADDS_TO_A_CLASS, "helpers.exercises._verdict.Verdict.passed"),
        ("01:check_call_tool", SWAPS_CODE, "helpers.exercises._verdict.returned"),
    ],
    ids=["a global added", "a class attribute added", "a function's code swapped"],
)
def test_an_answer_that_changes_the_check_s_code_in_place_gets_no_verdict(
    exercise_name, answer, change
):
    from helpers.grade import GraderFiles, run_exercise

    exercise = reference("01", "en").exercises[exercise_name]
    cells = [nbformat.v4.new_code_cell(answer)]
    outcome = run_exercise(cells, exercise, "en", GraderFiles(), 60, time.monotonic() + 600)
    assert outcome.value == "error", (outcome.value, outcome.hint)
    assert change in "; ".join(outcome.runtime), outcome.runtime


def test_a_second_grader_waits_for_the_first(capsys):
    """Two graders of one Python environment would watch the same start-up files and credit
    each other's students with a planted `.pth`: the second waits, and says so."""
    from helpers.grade import _one_grader_at_a_time

    entered = threading.Event()

    def second() -> None:
        with _one_grader_at_a_time():
            entered.set()

    with _one_grader_at_a_time():
        waiting = threading.Thread(target=second)
        waiting.start()
        assert not entered.wait(1.0), "a second grader ran beside the first"
    waiting.join(300)  # another test process's grading may take the lock in between
    assert entered.is_set()
    assert "another grader is running" in capsys.readouterr().err


COPIES_AS_ITSELF = """
import copy

copy._deepcopy_dispatch[dict] = lambda value, memo: value  # "a copy" that is the same dict


def call_tool(tool_call, tool_map):
    function = tool_call["function"]
    arguments = json.loads(function.pop("arguments"))  # changes the call it was given
    function["arguments"] = "used"
    return tool_map[function["name"]](**arguments)
"""


def test_a_dispatch_table_of_copy_changed_in_place_refuses_the_verdict():
    """An entry added to copy's deepcopy table (dict copied as itself) hid an answer that changes
    its input from the check's before/after comparison: the table's contents are in the state."""
    from helpers.grade import GraderFiles, run_exercise

    exercise = reference("01", "en").exercises["01:check_call_tool"]
    cells = [nbformat.v4.new_code_cell(COPIES_AS_ITSELF)]
    outcome = run_exercise(cells, exercise, "en", GraderFiles(), 60, time.monotonic() + 600)
    assert outcome.value == "error", (outcome.value, outcome.hint)
    assert "copy._deepcopy_dispatch[...]" in "; ".join(outcome.runtime), outcome.runtime


# --- cheating review, round 7 (2026-12-04): each row was a hole, each test fails without its fix


@pytest.mark.parametrize(
    ("source", "flag"),
    [
        # An imported class under another name, patched: every test stream came out empty.
        (
            "from openai.types.chat import ChatCompletionChunk\nC = [ChatCompletionChunk][0]\n"
            "C.model_validate = lambda data, **kw: None",
            "assigns C.model_validate",
        ),
        ("put = [setattr][0]\nput(Chunk, 'model_validate', None)", "names setattr"),
        ("run, space = [exec][0], [vars][0]", "names exec"),
        ("import sys\n[sys][0].modules['openai.types.chat'] = None", "assigns modules"),
        ("open(path, **{'mode': 'a'})", "opens a file for writing"),
        ("link.replace(out)", "writes files (.replace)"),
        ("link.symlink_to(teacher_file)", "writes files (.symlink_to)"),
        ("import pwd\nhome = pwd.getpwuid(0).pw_dir", "imports pwd"),
    ],
)
def test_round_7_cheats_are_named(source, flag):
    assert any(f.startswith(flag) for f in patching(source)), patching(source)


def test_a_module_the_lesson_imported_counts_as_imported_by_the_answer():
    """Lesson 02's cells import json; an answer that patches `json._default_decoder` (a lenient
    decoder made a wrong answer pass) did not import it itself, so nothing was named."""
    source = "decode = json._default_decoder.decode\njson._default_decoder.decode = decode"
    assert patching(source) == []
    found = patching(source, known=reference("02").imported)
    assert "assigns json._default_decoder.decode" in found, found
    assert patching("text = 'a'.replace('a', 'b')", known=frozenset({"json"})) == []


def test_an_import_hook_inserted_in_place_changes_the_kernel_s_state():
    """The contents of sys.meta_path were digested under the key that the binding of
    `sys.meta_path` (the same list) then overwrote: a finder inserted in place went unseen and
    loaded a check module whose every "not yet" passed. One appended, as `six` does when an
    honest check imports it, changes nothing."""
    import sys

    names: dict = {}
    exec(KERNEL_STATE, names)
    before = names["_grader_state"](lambda name: name == "sys")[0]

    class Finder:
        def find_spec(self, *args):
            return None

    sys.meta_path.insert(0, Finder())
    try:
        after = names["_grader_state"](lambda name: name == "sys")[0]
    finally:
        sys.meta_path.pop(0)
    assert "sys.meta_path[0]" in changed_state(before, after)
    sys.meta_path.append(Finder())  # appended (six's importer): asked after the file finder
    try:
        assert changed_state(before, names["_grader_state"](lambda name: name == "sys")[0]) == []
    finally:
        sys.meta_path.pop()


def test_the_key_the_weights_and_the_executed_copies_are_put_back(tmp_path):
    """A kernel found the checkout and rewrote the answer key (its new cell ran as trusted setup
    in every later grading), raised its weight in weights.csv, and rewrote classmates' executed
    copies. All three are put back after the kernel, and a link planted in place of a watched
    file is taken away, not followed."""
    root = tmp_path / "checkout"
    for tree in GRADER_TREES:
        (root / tree).mkdir(parents=True)
    key = root / "notebooks" / "en" / "01_tools_schema.ipynb"
    key.parent.mkdir()
    key.write_text("the key")
    weights = tmp_path / "weights.csv"
    weights.write_text("01:check_call_tool,1\n")
    files = GraderFiles(root, watch=(weights,))
    copy_ = tmp_path / "run" / "petrov" / "01_tools_schema.ipynb"
    files.wrote(copy_, b"Not yet")
    assert copy_.read_bytes() == b"Not yet"
    key.write_text("the key and a cell of mine")
    weights.write_text("01:check_call_tool,50\n")
    copy_.write_text("Correct!")
    changed = files.restore_checkout()
    assert "notebooks/en/01_tools_schema.ipynb" in changed
    assert {str(weights), str(copy_)} <= set(changed)
    assert (key.read_text(), weights.read_text()) == ("the key", "01:check_call_tool,1\n")
    assert copy_.read_bytes() == b"Not yet"
    victim = tmp_path / "victim.txt"
    victim.write_text("the teacher's file")
    weights.unlink()
    weights.symlink_to(victim)
    assert str(weights) in files.restore_checkout()
    assert not weights.is_symlink() and weights.read_text() == "01:check_call_tool,1\n"
    assert victim.read_text() == "the teacher's file"


def test_the_sheets_replace_a_planted_link_instead_of_following_it(tmp_path):
    """An answer put a symbolic link where the marks sheet goes; the grader then wrote the
    sheet through it, over a teacher's file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("the teacher's file")
    out = tmp_path / "grades.csv"
    marks = marks_path(out)
    out.symlink_to(victim)
    marks.symlink_to(victim)
    write_table([], out)
    write_marks([], marks)
    assert victim.read_text() == "the teacher's file"
    assert not out.is_symlink() and not marks.is_symlink()
    assert out.read_text(encoding="utf-8").startswith("student,notebook")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    assert out.stat().st_mode & 0o777 == marks.stat().st_mode & 0o777 == 0o644


def test_each_lesson_s_own_helpers_that_its_checks_compare_with_are_known():
    """Calling the lesson's helper that the check compares with is not doing the exercise
    (round 7: `return parse_kimi(text).tool_calls` passed lesson 04's extract, unflagged)."""
    assert "ToolCallAccumulator" in reference("03").borrowed
    assert "parse_kimi" in reference("04").borrowed
    assert {"parse_qwen_xml", "convert_parameter"} <= reference("07").borrowed
    assert "normalize_kimi_ids" in reference("06").borrowed
    # Imported under another name, or reached as an attribute, it is still named.
    for answer in ("from helpers.formats import parse_kimi as p", "helpers.formats.parse_kimi(t)"):
        assert "parse_kimi" in _mentioned(ast.parse(answer))
    for lesson in ("01", "03", "04", "05", "06", "07", "09", "10", "11"):
        ref = reference(lesson)
        assert ref.borrowed, lesson
        for solution in ref.solutions:  # no reference solution names one
            nodes = list(ast.walk(ast.parse(solution)))
            names = {n.id for n in nodes if isinstance(n, ast.Name)}
            names |= {n.attr for n in nodes if isinstance(n, ast.Attribute)}
            assert not ref.borrowed & names, (lesson, ref.borrowed & names)


def test_an_answer_that_calls_the_lesson_s_own_parser_is_flagged(tmp_path):
    key = nbformat.read(NOTEBOOKS_DIR / "en" / "04_manual_parsing.ipynb", as_version=4)
    student = student_notebook(key, "04_manual_parsing", "en")
    for cell in student.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "04-check_extract-answer":
            cell.source = "def extract_tool_calls(text):\n    return parse_kimi(text).tool_calls"
    (tmp_path / "sub" / "bob").mkdir(parents=True)
    nbformat.write(student, tmp_path / "sub" / "bob" / "04_manual_parsing.ipynb")
    [result] = grade_folder(tmp_path / "sub", tmp_path / "grades.csv")
    assert [r for r in result.review if "calls parse_kimi" in r], result.review
