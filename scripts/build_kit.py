"""Build the student kit: what students get, as a folder and a zip, without the answer key.

    python scripts/build_kit.py                    # build/kit/toolcall-series-student/ and .zip
    python scripts/build_kit.py --out /tmp/kit

The kit holds the student edition of every lesson in both languages (`nbbuild --student`: no
reference solutions), the `helpers` package the notebooks import, `data/` (replay cassettes,
offline tokenizers, chat templates), a requirements file without the test tools, a minimal
pyproject.toml (for `pip install -e .`) and a short README in English and Russian with the
pre-class checklist. It leaves out the answer key (`notebooks/en`, `notebooks/ru`), the lesson
sources (`notebooks/src`), the tests, the scripts, the teacher's docs and the benchmarks.
`tests/test_kit.py` checks the contents and runs a lesson from a built kit.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]  # this checkout first (a shared venv)

import nbbuild  # noqa: E402  (scripts/ is not a package)
import registry  # noqa: E402
import wheelhouse  # noqa: E402

from helpers.edition import STUDENT_KERNEL  # noqa: E402
from helpers.lessons import lesson_names  # noqa: E402

KIT_NAME = "toolcall-series-student"
DEFAULT_OUT = ROOT / "build" / "kit"
# Packages a student needs; the test tools of requirements.txt (pytest, nbval, ...) stay out.
TEST_TOOLS = ("nbval", "pytest", "pytest-xdist", "pytest-timeout", "hypothesis")
SKIPPED_NAMES = ("__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis")
KERNEL = STUDENT_KERNEL

# The install commands of both READMEs; only the first lesson's language differs.
INSTALL = """\
```bash
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt
.venv/bin/python -m ipykernel install --sys-prefix --name {kernel}
.venv/bin/jupyter lab notebooks/{lang}/00_start.ipynb
```"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "toolcall-series-student"
version = "0.1.0"
description = "Tool calling with Kimi-K2 and Qwen: the student kit (no reference solutions)."
requires-python = ">=3.10"
dependencies = []

[tool.setuptools.packages.find]
include = ["helpers*"]
"""

README = """\
# Tool calling with Kimi-K2 and Qwen: student kit

Русская версия: [README.ru.md](README.ru.md).

The notebooks are in `notebooks/en/` (English) and `notebooks/ru/` (Russian); the code is the
same in both. They run offline: a small server inside the notebook replays recorded answers, so
you need no key, GPU or network once the packages are installed. Your teacher has the reference
solutions.

## The lessons

{lessons}

## Install (once, at home, before the class)

You need Python 3.10 or newer (`python3 --version`; on a Mac the built-in 3.9 is too old). In a
terminal, inside this folder:

{install}

On Windows use `py -3.11 -m venv .venv` and `.venv\\Scripts\\` instead of `.venv/bin/`, one
command per line. The install takes a few minutes and about 600 MB. On a JupyterHub, run the
third line with `--user` instead of `--sys-prefix`.

## Checklist before the class

1. Install as above.
2. Open `notebooks/en/00_start.ipynb` (or `notebooks/ru/00_start.ipynb`) and run the first code
   cell, the setup cell (Shift+Enter).
3. Its output starts with **replay** mode. Copy that line, or the error if you got one, and bring
   it to the class (or send it to your teacher beforehand).

## Handing in your work

Before you hand in a notebook: **Kernel → Restart Kernel and Run All Cells**, wait until the
last cell has run, save (Ctrl+S). Hand in the `.ipynb` file named as your teacher says (for
example `ivanova_02_sync_loop.ipynb`), where your teacher says. Write each answer in its answer
cell or in cells you add right below it: the marking runs the lesson's own cells, then only the
answer cell and the cells below it up to the self-check, so a helper written elsewhere is not
seen. Do not delete or change the self-check cells (the ones that print "Correct!" or "Not yet"):
they are locked, and a changed one is flagged when your notebook is marked.
"""

README_RU = """\
# Вызов инструментов с Kimi-K2 и Qwen: комплект для студента

English version: [README.md](README.md).

Блокноты лежат в `notebooks/ru/` (по-русски) и `notebooks/en/` (по-английски); код в них
одинаковый. Они работают без сети: маленький сервер внутри блокнота воспроизводит записанные
ответы, поэтому после установки пакетов не нужны ни ключ, ни видеокарта, ни интернет. Эталонные
решения есть у преподавателя.

## Уроки

{lessons}

## Установка (один раз, дома, до занятия)

Нужен Python 3.10 или новее (`python3 --version`; встроенный в macOS Python 3.9 слишком старый).
В терминале, в этой папке:

{install}

В Windows пишите `py -3.11 -m venv .venv` и `.venv\\Scripts\\` вместо `.venv/bin/`, по одной
команде в строке. Установка занимает несколько минут и около 600 МБ. На JupyterHub в третьей
строке вместо `--sys-prefix` напишите `--user`.

## Перед занятием

1. Установите всё, как написано выше.
2. Откройте `notebooks/ru/00_start.ipynb` и выполните первую ячейку с кодом, ячейку настройки
   (Shift+Enter).
3. Её вывод начинается с «режим **replay**». Скопируйте эту строку или ошибку, если она была, и
   принесите на занятие (или заранее пришлите преподавателю).

## Как сдавать работу

Перед сдачей блокнота: **Kernel → Restart Kernel and Run All Cells** (перезапустить ядро и
выполнить все ячейки), дождитесь последней ячейки и сохраните (Ctrl+S). Сдайте файл `.ipynb` с
именем, которое назовёт преподаватель (например, `ivanova_02_sync_loop.ipynb`), туда, куда он
скажет. Каждый ответ пишите в его ячейке для ответа или в ячейках, добавленных сразу под ней:
при проверке выполняются ячейки самого урока, а из ваших — только ячейка ответа и ячейки под ней
до самопроверки, так что функцию, написанную в другом месте, проверка не увидит. Не удаляйте и не
меняйте ячейки самопроверки (те, что печатают «Верно!» или «Пока нет»): они заблокированы, а
изменённая ячейка будет отмечена при проверке.
"""


def kit_requirements(path: Path = ROOT / "requirements.txt") -> str:
    """requirements.txt's packages (as the wheelhouse reads them) without the test tools, then
    `-e .` (the helpers package)."""
    kept = [
        line
        for line in wheelhouse.requirements_without_project(path)
        if re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower() not in TEST_TOOLS
    ]
    header = "# The student kit's packages (the project's requirements.txt without test tools)."
    return "\n".join([header, *kept, "-e ."]) + "\n"


INDEX_WORDS = {"en": "min", "ru": "мин"}


def lesson_index(lang: str, names: list[str]) -> str:
    """The kit README's list of lessons, from the registry: the notebook, its minutes (reading and
    exercises) and what it teaches."""
    return "\n".join(
        f"- [{lesson.label(lang)}](notebooks/{lang}/{lesson.name}.ipynb), {lesson.minutes} "
        f"{INDEX_WORDS[lang]}: {lesson.summary[lang]}"
        for lesson in registry.lessons()
        if lesson.name in names
    )


def _copy_tree(src: Path, dest: Path) -> None:
    """Copy a folder without caches."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*SKIPPED_NAMES, "*.pyc"))


def build_kit(out: Path = DEFAULT_OUT, names: list[str] | None = None) -> tuple[Path, Path]:
    """Write `out/<KIT_NAME>/` and `out/<KIT_NAME>.zip`; return both paths (replaced if there)."""
    names = names or list(lesson_names(nbbuild.SRC))
    folder, archive = out / KIT_NAME, out / f"{KIT_NAME}.zip"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    nbbuild.build_student(names, folder / "notebooks")
    _copy_tree(ROOT / "helpers", folder / "helpers")
    _copy_tree(ROOT / "data", folder / "data")
    (folder / "requirements.txt").write_text(kit_requirements(), encoding="utf-8")
    (folder / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    for readme, text, lang in (("README.md", README, "en"), ("README.ru.md", README_RU, "ru")):
        install = INSTALL.format(kernel=KERNEL, lang=lang)
        index = lesson_index(lang, names)
        (folder / readme).write_text(text.format(install=install, lessons=index), encoding="utf-8")
    archive.unlink(missing_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zipped.write(path, path.relative_to(out).as_posix())
    return folder, archive


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default build/kit")
    args = parser.parse_args(argv)
    folder, archive = build_kit(args.out.resolve())
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    print(f"kit: {folder} ({files} files); {archive} ({archive.stat().st_size / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()
