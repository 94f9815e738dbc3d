"""``kata exercises``: write each lesson's stubs (exercises/NN) from its one source (solutions/NN).

A lesson is authored once, in solutions/NN: the reference answer, with the part a learner
writes between nbgrader's markers and the TODO text (what to build, its constraints) beside it:

    def row_sum(x):
        \"\"\"The contract.\"\"\"
        # TODO: what to build and its constraints (the how lives in the hints)
        ### BEGIN SOLUTION
        return ...
        ### END SOLUTION

The stub is that file with each region inside a def replaced by ``raise NotImplementedError``
(at the region's indent), and each region elsewhere (a module's or a class's private helpers)
left out. The nbgrader notebooks keep the regions as they are: nbgrader clears them. Both
trees are committed; ``kata verify`` fails when a stub is not what its source makes.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from grader.lessons import KitError, Lesson, chosen_lessons

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = "raise NotImplementedError"


def regions(source: str, where: str = "<source>") -> list[tuple[int, int]]:
    """The (BEGIN, END) line numbers (1-based) of each answer region, checked to pair up."""
    found, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        marker = line.strip()
        if marker == BEGIN:
            if start is not None:
                raise KitError(
                    f"{where}:{number}: {BEGIN} inside the region opened at line {start}; close that one first"
                )
            start = number
        elif marker == END:
            if start is None:
                raise KitError(f"{where}:{number}: {END} without a {BEGIN} before it")
            if number == start + 1:
                raise KitError(f"{where}:{start}: an empty answer region")
            found.append((start, number))
            start = None
        elif BEGIN in line or END in line:
            raise KitError(f"{where}:{number}: a marker must stand alone on its line: {line.strip()!r}")
    if start is not None:
        raise KitError(f"{where}:{start}: {BEGIN} is never closed with {END}")
    return found


def _in_function(tree: ast.Module, line: int) -> bool:
    """Whether `line` lies in a def's body (rather than at a module's or a class's level)."""
    innermost = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.lineno < line <= node.end_lineno:
                if innermost is None or node.lineno > innermost.lineno:
                    innermost = node
    return isinstance(innermost, (ast.FunctionDef, ast.AsyncFunctionDef))


def stub_of(source: str, where: str = "<source>") -> str:
    """The learner's stub made from a lesson source: regions in defs become the TODO raise,
    other regions go."""
    spans = regions(source, where)
    if not spans:
        return source
    try:
        tree = ast.parse(source, where)
    except SyntaxError as exc:
        raise KitError(f"{where}:{exc.lineno}: SyntaxError: {exc.msg}") from None
    lines = source.splitlines(keepends=True)
    for begin, end in reversed(spans):
        if _in_function(tree, begin):
            indent = re.match(r"[ \t]*", lines[begin - 1]).group()
            lines[begin - 1 : end] = [f"{indent}{STUB}\n"]
        else:  # helpers: out, with the blank lines that set them apart
            while end < len(lines) and not lines[end].strip():
                end += 1
            lines[begin - 1 : end] = []
    return "".join(lines)


def expected_stubs(lesson: Lesson) -> dict[str, str]:
    """Every file of exercises/NN as the sources in solutions/NN make it, by file name."""
    out = {}
    for path in sorted(lesson.dir("solutions").glob("*.py")):
        out[path.name] = stub_of(path.read_text(encoding="utf-8"), str(path.relative_to(lesson.root)))
    return out


def stale(lesson: Lesson, made: dict[str, str] | None = None) -> list[str]:
    """What in exercises/NN is not what solutions/NN makes (`made`, if already made), in words
    (empty when in step)."""
    made = expected_stubs(lesson) if made is None else made
    folder = lesson.dir("exercises")
    have = {p.name for p in folder.glob("*.py")} if folder.is_dir() else set()
    out = []
    for name in sorted(made.keys() | have):
        rel = f"exercises/{lesson.name}/{name}"
        if name not in made:
            out.append(f"{rel} has no source in solutions/{lesson.name}/")
        elif name not in have or (folder / name).read_text(encoding="utf-8") != made[name]:
            out.append(f"{rel} is not what solutions/{lesson.name}/{name} makes")
    return out


def write(lesson: Lesson) -> list[Path]:
    """Write exercises/NN from solutions/NN; the files that changed."""
    folder = lesson.dir("exercises")
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in expected_stubs(lesson).items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Write exercises/NN (the stubs) from solutions/NN (each lesson's one source, its "
        "answers between ### BEGIN SOLUTION and ### END SOLUTION)."
    )
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a stub is stale")


def run(args: argparse.Namespace, root: Path) -> int:
    lessons = chosen_lessons(root, args.lessons)
    if args.check:
        problems = [p for lesson in lessons for p in stale(lesson)]
        for problem in problems:
            print(f"{problem}: run `python -m grader exercises`")
        return 1 if problems else 0
    for lesson in lessons:
        for path in write(lesson):
            print(f"wrote {path.relative_to(root)}")
    return 0
