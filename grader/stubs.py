"""Reading a lesson's Python source: what a stub is, and where a statement starts.

A stub function's body is ``raise NotImplementedError`` (its TODO comments beside it); the
learner replaces that statement with their code. The plugin (which tests can only end in a
TODO), ``grader verify`` (every stub has one), the notebook builder (where the answer goes) and
``kata release`` (a stub that lost it may be an answer) all ask here.
"""

from __future__ import annotations

import ast
import re


def is_todo_raise(node: ast.AST) -> bool:
    """``raise NotImplementedError`` or ``raise NotImplementedError(...)``."""
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def has_todo_raise(node: ast.AST) -> bool:
    """Whether a TODO ``raise`` is anywhere inside `node` (a def, a class, a module)."""
    return any(is_todo_raise(n) for n in ast.walk(node))


def is_untouched_def(node: ast.AST) -> bool:
    """A def whose whole body, a docstring aside, is one TODO ``raise`` (with constant arguments,
    if any); an ``__init__`` may start with ``super().__init__()``. Calling it raises, whatever
    it is given."""
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if node.name == "__init__" and body and _is_super_init(body[0]):
        body = body[1:]  # an nn.Module's stub __init__ starts with it
    if len(body) != 1 or not is_todo_raise(body[0]) or body[0].cause is not None:
        return False
    exc = body[0].exc
    return not isinstance(exc, ast.Call) or (not exc.keywords and all(isinstance(a, ast.Constant) for a in exc.args))


def _is_super_init(statement: ast.stmt) -> bool:
    """``super().__init__()``, nothing passed."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__init__"
        and isinstance(call.func.value, ast.Call)
        and not call.func.value.args
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    )


LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what ends a line for Python (str.splitlines ends one at \x0c, \x1e too)


def python_lines(source: str) -> list[str]:
    """`source`'s lines as Python counts them, so that line N is the line ast calls N."""
    return LINE_BREAK.split(source)


def statement_lines(node: ast.stmt, lines: list[str]) -> list[tuple[int, str]]:
    """(line number, text) of a statement, its decorators first, without what shares its first
    or last line (`import os; os.system(...)`: the import alone)."""
    first, last = first_line(node), node.end_lineno
    found = []
    for number in range(first, last + 1):
        text = lines[number - 1].encode()  # ast's column offsets count UTF-8 bytes
        start = node.col_offset if number == node.lineno == first else 0
        end = node.end_col_offset if number == last else len(text)
        found.append((number, text[start:end].decode(errors="replace")))
    return found


def first_line(node: ast.stmt) -> int:
    """A statement's first line: its first decorator's, for a decorated def or class (what a
    cell, a test's source or a cut of a test file starts with)."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
