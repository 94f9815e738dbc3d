"""``grader verify``'s static checks: a lesson's stubs are what its one source makes.

exercises/NN is what ``kata exercises`` makes from solutions/NN (grader.authoring.exercises);
every public function has an answer region and a ``# TODO:`` beside it, so its stub raises
NotImplementedError (grader.stubs) and says what to build; the reference raises it nowhere;
the hints have enough levels and never quote the reference.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

from grader.authoring.exercises import BEGIN, END, expected_stubs, regions, stale
from grader.lessons import KitError, Lesson
from grader.stubs import has_todo_raise

MIN_HINT_LEVELS = 3

Problem = Callable[[str], None]  # says one problem


def _functions(tree: ast.Module):
    """Public top-level functions and the public classes' methods, by qualified name."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            out[node.name] = node
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def check_trees(lesson: Lesson, problem: Problem) -> None:
    for tree in ("exercises", "solutions", "tests"):
        if not lesson.dir(tree).is_dir():
            problem(
                f"{tree}/{lesson.name}/ is missing: every lesson has a folder in exercises/, solutions/ and tests/."
            )
    if not lesson.dir("solutions").is_dir():
        return
    if not lesson.modules("solutions"):
        problem(f"solutions/{lesson.name}/ holds no module.")
    try:
        made = expected_stubs(lesson)
    except KitError as exc:
        problem(str(exc))
        return
    for text in stale(lesson, made):
        problem(f"{text}: run `python -m grader exercises {lesson.name}` (the stubs are made from the source).")
    for stem in lesson.modules("solutions"):
        _check_module(lesson, problem, stem, made[f"{stem}.py"])
    _check_hints(lesson, problem)


def _check_module(lesson: Lesson, problem: Problem, stem: str, stub_source: str) -> None:
    ref_path = lesson.dir("solutions") / f"{stem}.py"
    source = ref_path.read_text(encoding="utf-8")
    rel = f"{lesson.name}/{stem}.py"
    try:
        ref_tree = ast.parse(source, str(ref_path))
        stub_tree = ast.parse(stub_source, f"exercises/{rel}")
    except SyntaxError as exc:
        problem(f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}; fix it first.")
        return
    if not regions(source):
        return  # a module with nothing to write (an __init__.py)
    stub_fns, ref_fns = _functions(stub_tree), _functions(ref_tree)
    stub_lines = stub_source.splitlines()
    for name in sorted(ref_fns.keys() - stub_fns.keys()):
        problem(f"solutions/{rel}: public name {name} is inside an answer region, so the stub lacks it.")
    for name in sorted(stub_fns.keys() & ref_fns.keys()):
        stub, ref = stub_fns[name], ref_fns[name]
        if isinstance(stub, ast.ClassDef):
            methods = [n for n in stub.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if not any(has_todo_raise(m) for m in methods):
                problem(
                    f"solutions/{rel}: class {name} has no method left for the learner "
                    "(no answer region in any of them)."
                )
            continue
        if has_todo_raise(ref):
            problem(f"solutions/{rel}:{ref.lineno}: {name} still raises NotImplementedError.")
        if not has_todo_raise(stub):
            if "." not in name:
                problem(
                    f"solutions/{rel}:{ref.lineno}: {name} has no answer region "
                    f"({BEGIN} ... {END}), so its stub is the answer."
                )
            continue
        body = stub_lines[stub.lineno - 1 : stub.end_lineno]
        if not any("# TODO:" in line for line in body):
            problem(
                f"solutions/{rel}:{ref.lineno}: {name} has no `# TODO:` comment beside its answer region "
                "saying what to build."
            )


def _check_hints(lesson: Lesson, problem: Problem) -> None:
    hints = lesson.hints()
    rel = lesson.hints_file.relative_to(lesson.root)
    if len(hints) < MIN_HINT_LEVELS or not all(hints):
        problem(
            f"{rel}: needs at least {MIN_HINT_LEVELS} non-empty '## Level N' sections (found {sum(map(bool, hints))})."
        )
        return
    text = "\n".join(hints)
    for path in sorted(lesson.dir("solutions").glob("*.py")):
        for line in _code_lines(path):
            if line in text:
                problem(
                    f"{rel}: a hint quotes the reference solution ({path.name}: `{line}`); "
                    "hints point the way, they never give the code."
                )


def _code_lines(path: Path) -> set[str]:
    """The solution's non-trivial statements (no docstrings, comments or short lines)."""
    source = path.read_text(encoding="utf-8")
    strings = set()  # line numbers of docstrings and other bare string statements
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            strings.update(range(node.lineno, node.end_lineno + 1))
    lines = set()
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0].strip()
        if len(code) >= 30 and number not in strings:
            lines.add(code)
    return lines
