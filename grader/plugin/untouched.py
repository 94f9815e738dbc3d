"""Tests that can only end in a TODO, found before they run.

A test whose every use of the module under test (``lesson.name``) names an untouched stub (a
function whose whole body is ``raise NotImplementedError``, or a class whose __init__ is one)
ends in that stub's TODO whatever it does first. When it first builds an optimizer (torch
imports torch._dynamo for it), starts DataLoader workers or trains a model, the learner waits
for a result known in advance. The plugin calls the stub the test would reach first instead of
the test: the same NotImplementedError from the same line, the same TODO report, none of the
wait (docs/PERFORMANCE.md has the figures).

Conservative by construction: a test that hands ``lesson`` itself to a helper (which may use
anything), or uses anything else of the module (a constant, a function with a line of the
learner's in it), runs as ever.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from types import FunctionType, ModuleType

from grader.learners_code import is_untouched

FIXTURE = "lesson"  # the fixture that holds the module under test (grader.plugin.target.lesson)


def first_stub(
    module: ModuleType, test_file: Path, test_name: str, code_roots: tuple[Path, ...]
) -> FunctionType | type | None:
    """The untouched stub the test `test_name` in `test_file` uses first, if every name it
    uses from `module` (through the ``lesson`` fixture) is one; else None."""
    names = lesson_names(test_file, test_name)
    if not names:
        return None
    elsewhere = getattr(type(module), "_kata_first_stub", None)
    if elsewhere is not None:  # a module in another process (grader.remote): its stubs are found there
        return elsewhere(module, names)
    stubs = [vars(module).get(name) for name in names]
    if not all(is_untouched(f, code_roots) for f in stubs):
        return None
    return stubs[0]


@functools.cache
def lesson_names(test_file: Path, test_name: str) -> tuple[str, ...] | None:
    """The names the test reads off ``lesson``, in order of first use, those of the functions of
    the test file it hands ``lesson`` to (a scenario, grader.testing.scenario) included; None if
    it uses ``lesson`` any other way (hands it to anything else, assigns it) or cannot be found
    as a module-level function."""
    tree = _module_ast(test_file)
    # The last definition of each name, as the module's namespace (and pytest) has it.
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    node = functions.get(test_name)
    if node is None:
        return None
    found = _reads(node, FIXTURE, functions, frozenset(), {})
    return None if found is None else tuple(dict.fromkeys(name for _, name in sorted(found, key=lambda r: r[0])))


def _reads(
    node: ast.FunctionDef,
    param: str,
    functions: dict[str, ast.FunctionDef],
    visiting: frozenset[str],
    bound: dict[str, str],
) -> list[tuple[tuple[int, int], str]] | None:
    """(where the call that runs it ends, name) for each name `node`'s body reads off `param`,
    following `param` into the module's functions it is handed to (their reads placed where
    that call ends), `bound` naming the module's functions its parameters were given; None for
    any other use of `param`."""
    names, parents = _walked(node)
    uses = [n for n in names if n.id == param]
    found: list[tuple[tuple[int, int], str]] = []
    for use in uses:
        parent = parents.get(use)
        if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
            found.append((_called_at(parent, parents), parent.attr))
            continue
        call = parents.get(parent) if isinstance(parent, ast.keyword) else parent
        handed = _handed_to(use, call, functions, bound)
        if handed is None or handed[0].name in visiting:
            return None
        callee, name, given = handed
        inner = _reads(callee, name, functions, visiting | {callee.name}, given)
        if inner is None:
            return None
        at = (call.end_lineno, call.end_col_offset)
        found.extend((at, read) for _, read in sorted(inner, key=lambda r: r[0]))
    return found


@functools.cache
def _walked(node: ast.FunctionDef) -> tuple[list[ast.Name], dict[ast.AST, ast.AST]]:
    """The names `node`'s body uses, in source order, and each of its nodes' parent: one walk
    of each function, however many tests reach it."""
    names = [n for part in node.body for n in ast.walk(part) if isinstance(n, ast.Name)]
    return names, {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}


def _handed_to(
    use: ast.Name, call, functions: dict[str, ast.FunctionDef], bound: dict[str, str]
) -> tuple[ast.FunctionDef, str, dict[str, str]] | None:
    """(the module's function, its parameter that `use` is handed to as an argument of `call`,
    the module's functions its other parameters are given there), or None where `call` is not
    a plain call of one of `functions` (by name, or by a parameter `bound` to one)."""

    def function(arg) -> str | None:
        if isinstance(arg, ast.Name):
            name = bound.get(arg.id, arg.id)
            return name if name in functions else None
        return None

    target = function(call.func) if isinstance(call, ast.Call) else None
    if target is None:
        return None
    callee = functions[target]
    positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
    # Arguments up to `use` must fill named parameters (a `*args` after it does not matter).
    before = call.args[: call.args.index(use) + 1] if use in call.args else call.args
    if any(isinstance(a, ast.Starred) for a in before) or len(before) > len(positional):
        return None
    given = {positional[i]: function(a) for i, a in enumerate(before)}
    given.update({k.arg: function(k.value) for k in call.keywords if k.arg is not None})
    given = {name: value for name, value in given.items() if value is not None}
    if use in call.args:
        return callee, positional[call.args.index(use)], given
    keyword = next((k for k in call.keywords if k.value is use), None)
    if keyword is not None and keyword.arg in {*positional, *(a.arg for a in callee.args.kwonlyargs)}:
        return callee, keyword.arg, given
    return None


def _called_at(read: ast.Attribute, parents: dict[ast.AST, ast.AST]) -> tuple[int, int]:
    """Where the call that runs `read` ends: calls run in the order their source ends
    (``lesson.scale(lesson.add(1, 2))`` runs add first), whether `read` is the function
    called or an argument handed to a helper that calls it."""
    node = read
    while node in parents and not isinstance(node, ast.Call):
        node = parents[node]
    return (
        (node.end_lineno, node.end_col_offset) if isinstance(node, ast.Call) else (read.end_lineno, read.end_col_offset)
    )


def _module_ast(path: Path) -> ast.Module:
    return parsed(path.read_text(encoding="utf-8"))


@functools.cache
def parsed(text: str) -> ast.Module:
    """A test file's tree, by its text: class grading parses the kit's test files once, before
    it forks the runs, whose grading copies hold the same text at paths of their own."""
    return ast.parse(text)
