"""How big helpers/ is: code lines and docstring/comment lines counted apart.

    python bench/helpers_size.py               # the working tree
    python bench/helpers_size.py --rev da5e8a9 # a commit, read with `git show`
    python bench/helpers_size.py --rev HEAD --only-at da5e8a9   # only the modules da5e8a9 had

A line is "code" when it holds a token other than a comment or a docstring; "docs" when it holds
only a docstring or a comment; blank lines are counted apart. `wc -l` is the sum of all three.
"""

import argparse
import ast
import io
import pathlib
import subprocess
import sys
import tokenize

ROOT = pathlib.Path(__file__).resolve().parent.parent


def docstring_lines(source):
    """The line numbers that belong to docstrings (module, class, function)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def measure(source):
    """(code, docs, blank) line counts of one module's text."""
    docs = docstring_lines(source)
    code, comment = set(), set()
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in skip:
            continue
        rows = range(token.start[0], token.end[0] + 1)
        if token.type == tokenize.COMMENT:
            comment.update(rows)
        elif not (token.type == tokenize.STRING and token.start[0] in docs):
            code.update(rows)
    total = len(source.splitlines())
    doc_only = (docs | comment) - code
    return len(code), len(doc_only), total - len(code) - len(doc_only)


def git(*args):
    """The output of one git command in the repository."""
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def files(rev):
    """The helpers/ modules at a commit (None: the working tree), as {path: text}."""
    if rev is None:
        paths = sorted(ROOT.glob("helpers/**/*.py"))
        return {str(p.relative_to(ROOT)): p.read_text() for p in paths}
    names = git("ls-tree", "-r", "--name-only", rev, "helpers").split()
    return {name: git("show", f"{rev}:{name}") for name in names if name.endswith(".py")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="a commit (default: the working tree)")
    parser.add_argument("--only-at", help="count only the modules this commit had")
    parser.add_argument("--each", action="store_true", help="a line per module")
    args = parser.parse_args(argv)
    modules = files(args.rev)
    if args.only_at:
        modules = {k: v for k, v in modules.items() if k in files(args.only_at)}
    totals = [0, 0, 0]
    for name, text in modules.items():
        counts = measure(text)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        if args.each:
            print(f"{counts[0]:6} {counts[1]:6} {counts[2]:6}  {name}")
    code, docs, blank = totals
    print(
        f"{len(modules)} modules: {code + docs + blank} lines = "
        f"{code} code + {docs} docstring/comment + {blank} blank"
    )


if __name__ == "__main__":
    sys.exit(main())
