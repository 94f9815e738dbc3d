"""A test file cut to its public tests, for a student release: its hidden tests left out by
line ranges, so that comments and formatting survive (``kata release`` ships what this keeps)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from grader.stubs import first_line


@dataclass
class Reduced:
    """A test file's source with its hidden tests cut out, and the test functions kept and dropped."""

    text: str
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def reduce_tests(source: str, filename: str = "<test file>") -> Reduced:
    """Cut every top-level ``def test*`` and ``class Test*`` without a ``pytest.mark.public``
    decorator out of `source`, by line ranges, so that comments and formatting survive.

    A module-level ``pytestmark`` that includes ``pytest.mark.public`` keeps the whole file; a
    class marked public (decorator or class-level ``pytestmark``) is kept whole, and in an
    unmarked class only the public methods stay (the class goes when none does). Imports,
    helpers and fixtures are kept. The blank lines that followed a cut block go with it.
    """
    tree = ast.parse(source, filename=filename)
    if _pytestmark_is_public(tree.body):
        return Reduced(source, kept=_test_names(tree.body))
    cuts, kept, dropped = _plan(tree.body)
    return Reduced(_cut(source, cuts), kept, dropped)


def _plan(body: list[ast.stmt], prefix: str = "") -> tuple[list[tuple[int, int]], list[str], list[str]]:
    """(line ranges to cut, tests kept, tests dropped) for the statements of a module or class."""
    cuts, kept, dropped = [], [], []
    for node in body:
        if _is_test_function(node):
            (kept if _has_public_decorator(node) else dropped).append(prefix + node.name)
            if not _has_public_decorator(node):
                cuts.append(_span(node))
        elif _is_test_class(node):
            if _has_public_decorator(node) or _pytestmark_is_public(node.body):
                kept += _test_names(node.body, f"{prefix}{node.name}::")
                continue
            inner_cuts, inner_kept, inner_dropped = _plan(node.body, f"{prefix}{node.name}::")
            kept += inner_kept
            dropped += inner_dropped
            cuts += inner_cuts if inner_kept else [_span(node)]
    return cuts, kept, dropped


def _is_test_function(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _is_test_class(node: ast.stmt) -> bool:
    return isinstance(node, ast.ClassDef) and node.name.startswith("Test")


def _test_names(body: list[ast.stmt], prefix: str = "") -> list[str]:
    names = []
    for node in body:
        if _is_test_function(node):
            names.append(prefix + node.name)
        elif _is_test_class(node):
            names += _test_names(node.body, f"{prefix}{node.name}::")
    return names


def _is_public_mark(expr: ast.expr) -> bool:
    """``pytest.mark.public`` or ``mark.public`` (``from pytest import mark``), called or not."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    return ast.unparse(expr) in ("pytest.mark.public", "mark.public")


def _has_public_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    return any(_is_public_mark(d) for d in node.decorator_list)


def _pytestmark_is_public(body: list[ast.stmt]) -> bool:
    """A ``pytestmark = <mark>`` or ``= [<mark>, ...]`` among `body`'s statements that includes public."""
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
                marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                if any(_is_public_mark(m) for m in marks):
                    return True
    return False


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> tuple[int, int]:
    """First and last line (1-based) of a definition, decorators included."""
    return first_line(node), node.end_lineno


def _cut(source: str, cuts: list[tuple[int, int]]) -> str:
    """`source` without the line ranges `cuts` (1-based, inclusive), so that it still reads well:
    a cut block takes with it the comment lines right above it, the comments that trail its body
    and the blank lines that follow it; a section's comment header goes too once nothing is left
    under it."""
    lines = source.splitlines(keepends=True)
    drop = set()
    for start, end in cuts:
        indent = _indent(lines[start - 1])
        while start > 1 and _is_comment(lines[start - 2]) and _indent(lines[start - 2]) == indent:
            start -= 1
        while end < len(lines) and (
            _is_blank(lines[end]) or (_is_comment(lines[end]) and _indent(lines[end]) > indent)
        ):
            end += 1
        drop.update(range(start - 1, end))
    drop |= _orphaned_headers(lines, drop)
    kept = [line for n, line in enumerate(lines) if n not in drop]
    return "".join(kept).rstrip() + "\n" if "".join(kept).strip() else ""


def _orphaned_headers(lines: list[str], drop: set[int]) -> set[int]:
    """Comment blocks (with the blank lines after them) that headed code now cut, and that the
    cuts leave followed by nothing but another comment header, a dedent or the end of the file."""
    orphans = set()
    for first, line in enumerate(lines):
        if first in drop or not _is_comment(line) or (first and _is_comment(lines[first - 1])):
            continue
        indent, last = _indent(line), first
        while last + 1 < len(lines) and _is_comment(lines[last + 1]) and last + 1 not in drop:
            last += 1
        after = [n for n in range(last + 1, len(lines)) if not _is_blank(lines[n])]
        if not after or after[0] not in drop:
            continue  # what it heads is still there
        kept_after = [n for n in after if n not in drop]
        nxt = kept_after[0] if kept_after else len(lines)
        if (
            nxt == len(lines)
            or _indent(lines[nxt]) < indent
            or (_is_comment(lines[nxt]) and _indent(lines[nxt]) == indent)
        ):
            orphans.update(range(first, nxt))
    return orphans


def _is_blank(line: str) -> bool:
    return not line.strip()


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
