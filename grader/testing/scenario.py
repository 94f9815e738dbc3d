"""Scenarios: the part of a test that drives the code under test's objects, run beside that code.

A test that builds the learner's module, trains it or steps their optimizer cannot call it
from another process one function at a time: the objects live where the code does. So the
test is split. A scenario is a function of the test file, ``fn(lesson, *args, **kwargs)``,
that makes the objects, drives them and returns what it saw, as plain data (tensors, numbers,
strings, and lists, tuples and dicts of them); the test checks that against what it works out
itself, with its own torch::

    @beside
    def merged(lesson, a, b):
        merge = lesson.Merge(3, 4, 2)
        return merge(a, b), merge.state_dict()

    def test_merge(lesson):
        out, weights = merged(lesson, a, b)
        assert_close(out, tiled(weights, a, b), what=...)

In a learner's run (``pytest exercises/NN``) a scenario is a plain call. Under ``kata grade``,
with the checks in a process of their own (grader.remote), the code's process runs it, and only
its observations cross: the expectations and every check stay in the tests' process. The
code's process could lie about what it saw, as it could about any result; what it cannot do is
reach a check. Its arguments cross as data too (a scenario takes the name of an activation,
not the function).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Callable, TypeVar

from grader.testing.source import bindings

R = TypeVar("R")


def beside(fn: Callable[..., R]) -> Callable[..., R]:
    """Make `fn(lesson, ...)`, defined at the top level of a test file, a scenario: run in the
    process the code under test lives in, its result sent back as data."""
    if fn.__qualname__ != fn.__name__:
        raise TypeError(
            f"scenario {fn.__qualname__}: define it at the top level of the test file, where the "
            "code's process finds it by name"
        )

    @functools.wraps(fn)
    def scenario(lesson, *args, **kwargs):
        __tracebackhide__ = True
        elsewhere = getattr(type(lesson), "_kata_scenario", None)  # a stand-in for a module in another process
        if elsewhere is None:
            return fn(lesson, *args, **kwargs)
        return elsewhere(lesson, fn, args, kwargs)

    scenario._kata_scenario_of = fn  # what the code's process calls: the function, not this wrapper
    return scenario


def source_of(fn: Callable) -> str:
    """The source the code's process runs for the scenario `fn`: of its test file, only `fn` and
    the top-level definitions and imports it reaches by name, each at its own lines (the rest
    blank, so that a line number means what it does in the file). The code's process never sees
    the test file itself: its other tests, expectations and hints stay hidden."""
    return _source_of(fn.__code__.co_filename, fn.__name__)


@functools.lru_cache(maxsize=64)
def _source_of(file: str, name: str) -> str:
    text = Path(file).read_text(encoding="utf-8")
    tree = ast.parse(text, file)
    defining: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        for defined, _ in bindings(node):
            defining.setdefault(defined, []).append(node)
    kept = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__"]
    wanted, seen = [name], set()
    while wanted:
        for node in defining.get(wanted.pop(), []):
            if node not in kept:
                kept.append(node)
                wanted.extend({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen)
                seen.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    lines = text.splitlines(keepends=True)
    shown = ["\n"] * len(lines)
    for node in kept:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        shown[start - 1 : node.end_lineno] = lines[start - 1 : node.end_lineno]
    return "".join(shown)
