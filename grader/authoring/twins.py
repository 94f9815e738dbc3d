"""``grader verify``'s static checks: the stub and the reference of a lesson are twins.

Both trees have the same files, public names, signatures and docstrings; every stub function
has a ``# TODO:`` and raises NotImplementedError (grader.stubs), the reference raises it
nowhere; the hints have enough levels and never quote the reference.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path
from typing import Callable

from grader.lessons import Lesson
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


def _import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _signatures(module, names) -> dict[str, str]:
    out = {}
    for name in names:
        obj = module
        for part in name.split("."):
            obj = getattr(obj, part, None)
        try:
            out[name] = str(inspect.signature(obj))
        except (TypeError, ValueError):
            out[name] = "?"
    return out


def check_trees(lesson: Lesson, problem: Problem) -> None:
    for tree in ("exercises", "solutions", "tests"):
        if not lesson.dir(tree).is_dir():
            problem(f"{tree}/{lesson.name}/ is missing: every lesson has a folder in exercises/, solutions/ and tests/.")
    stubs, refs = set(lesson.modules("exercises")), set(lesson.modules("solutions"))
    for stem in sorted(stubs ^ refs):
        have = "exercises" if stem in stubs else "solutions"
        problem(f"{have}/{lesson.name}/{stem}.py has no twin in the other tree: add it, or remove this one.")
    if not refs and lesson.dir("solutions").is_dir():
        problem(f"solutions/{lesson.name}/ holds no module.")
    for stem in sorted(stubs & refs):
        _check_module(lesson, problem, stem)
    _check_hints(lesson, problem)


def _check_module(lesson: Lesson, problem: Problem, stem: str) -> None:
    stub_path, ref_path = lesson.dir("exercises") / f"{stem}.py", lesson.dir("solutions") / f"{stem}.py"
    stub_source = stub_path.read_text(encoding="utf-8")
    try:
        stub_tree = ast.parse(stub_source, str(stub_path))
        ref_tree = ast.parse(ref_path.read_text(encoding="utf-8"), str(ref_path))
    except SyntaxError as exc:
        problem(f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}; fix it first.")
        return
    rel = f"{lesson.name}/{stem}.py"
    stub_fns, ref_fns = _functions(stub_tree), _functions(ref_tree)
    for name in sorted(stub_fns.keys() ^ ref_fns.keys()):
        where = "exercises" if name in stub_fns else "solutions"
        problem(f"{rel}: public name {name} is only in {where}/; stub and solution must define the same names.")
    if ast.get_docstring(stub_tree) != ast.get_docstring(ref_tree):
        problem(f"{rel}: the module docstrings differ; the solution is the stub plus the answer.")
    stub_lines = stub_source.splitlines()
    for name in sorted(stub_fns.keys() & ref_fns.keys()):
        stub, ref = stub_fns[name], ref_fns[name]
        if ast.get_docstring(stub) != ast.get_docstring(ref):
            problem(f"{rel}: the docstrings of {name} differ between exercises/ and solutions/.")
        if isinstance(stub, ast.ClassDef):
            methods = [n for n in stub.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if not any(has_todo_raise(m) for m in methods):
                problem(f"exercises/{rel}: class {name} has no method left for the learner "
                               "(none raises NotImplementedError).")
            continue
        if has_todo_raise(ref):
            problem(f"solutions/{rel}:{ref.lineno}: {name} still raises NotImplementedError.")
        is_method = "." in name
        if not has_todo_raise(stub):
            if not is_method:
                problem(f"exercises/{rel}:{stub.lineno}: {name} is not a stub: it must end in "
                               "`raise NotImplementedError`.")
            continue
        body = stub_lines[stub.lineno - 1:stub.end_lineno]
        if not any("# TODO:" in line for line in body):
            problem(f"exercises/{rel}:{stub.lineno}: {name} has no `# TODO:` comment saying what to write.")
    _check_signatures(lesson, problem, stem, sorted(stub_fns.keys() & ref_fns.keys()))


def _check_signatures(lesson: Lesson, problem: Problem, stem: str, names: list[str]) -> None:
    try:
        stub = _import_file(lesson.dir("exercises") / f"{stem}.py", f"_kata_verify_stub_{lesson.name}_{stem}")
        ref = _import_file(lesson.dir("solutions") / f"{stem}.py", f"_kata_verify_ref_{lesson.name}_{stem}")
    except Exception as exc:  # reported here; the pytest runs report it too, with file:line
        problem(f"{lesson.name}/{stem}.py: cannot import ({type(exc).__name__}: {exc}).")
        return
    stub_sigs, ref_sigs = _signatures(stub, names), _signatures(ref, names)
    for name in names:
        if stub_sigs[name] != ref_sigs[name]:
            problem(f"{lesson.name}/{stem}.py: {name}{stub_sigs[name]} in exercises/ but "
                           f"{name}{ref_sigs[name]} in solutions/; the signatures must match.")


def _check_hints(lesson: Lesson, problem: Problem) -> None:
    hints = lesson.hints()
    rel = lesson.hints_file.relative_to(lesson.root)
    if len(hints) < MIN_HINT_LEVELS or not all(hints):
        problem(f"{rel}: needs at least {MIN_HINT_LEVELS} non-empty '## Level N' sections "
                       f"(found {sum(map(bool, hints))}).")
        return
    text = "\n".join(hints)
    for path in sorted(lesson.dir("solutions").glob("*.py")):
        for line in _code_lines(path):
            if line in text:
                problem(f"{rel}: a hint quotes the reference solution ({path.name}: `{line}`); "
                               "hints point the way, they never give the code.")


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
