"""A function stopped by its time limit, replaced for the rest of the session by a stand-in
that ends at once.

The plugin (grader.plugin.loops) decides when; this is how, in whichever process holds the
learner's code: the tests' process, or the code process (grader.remote.server), which keeps the
frames of the call its alarm stopped. A stand-in raises `LoopReached` with the loop's number;
a call the code process stopped at its limit comes back to the tests as `CallTimedOut`.
"""

from __future__ import annotations

import functools
from types import FunctionType

import pytest


class LoopReached(BaseException):
    """A stand-in was called: the loop's number among the session's loops (grader.plugin.loops).
    A BaseException: hypothesis lets it through at once, and ``except Exception`` in the
    learner's code does not swallow it."""

    def __init__(self, key: int) -> None:
        super().__init__(key)
        self.key = key


class CallTimedOut(pytest.fail.Exception):
    """The code process stopped a call at the time its test had left (grader.remote.errors): the
    test is a TIMEOUT (grader.plugin.loops). pytest's own failure, as pytest-timeout's is in one
    process: the tests' helpers that tell a learner's error with its call (``except Exception``)
    let it through, so a loop is never told as an error of the learner's code, and a fixture
    that it stops fails each test that asks for it the same way."""


def stand_in(found: list[tuple[object, dict]], key: int) -> str | None:
    """Bind each name under which the module of the innermost function of `found` ((code, its
    module's namespace) for each of the learner's frames, outermost first), or a class it
    defines, holds that function to a stand-in raising LoopReached(`key`), the innermost that
    is held so; its qualified name, or None where no frame's function is held so."""
    for code, namespace in reversed(found):
        homes = _homes(code, namespace)
        for owner, name, original in homes:
            replacement = _stand_in_for(original, key)
            if isinstance(owner, dict):
                owner[name] = replacement
            else:
                setattr(owner, name, replacement)
        if homes:
            return _function(homes[0][2]).__qualname__
    return None


def _homes(code, namespace: dict) -> list[tuple[dict | type, str, object]]:
    """(where the name is held, the name, what it holds) for each name of the function running
    `code`: in the module, and in the classes it defines (static and class methods too)."""
    module = namespace.get("__name__")
    found = [(namespace, name, value) for name, value in list(namespace.items()) if _runs(value, code)]
    for value in list(namespace.values()):
        if isinstance(value, type) and vars(value).get("__module__") == module:
            found += [(value, name, member) for name, member in list(vars(value).items()) if _runs(member, code)]
    return found


def _function(value):
    """The function a class's member holds (a static or class method's), else `value`."""
    return value.__func__ if isinstance(value, (staticmethod, classmethod)) else value


def _runs(value, code) -> bool:
    """Whether calling `value` runs `code`: it is that code's function, or wraps it
    (functools.wraps' ``__wrapped__``, a decorator's)."""
    try:
        value = _function(value)
        for _ in range(10):  # a wrapper of a wrapper; never a cycle
            if not callable(value):
                return False
            if isinstance(value, FunctionType) and value.__code__ is code:
                return True
            value = getattr(value, "__wrapped__", None)
    except Exception:  # noqa: BLE001 (an object of the learner's whose attributes raise: not a wrapper)
        return False
    return False


def _stand_in_for(original, key: int):
    function = _function(original)

    @functools.wraps(function)
    def waiting(*args, **kwargs):
        raise LoopReached(key)

    if isinstance(original, staticmethod):
        return staticmethod(waiting)
    if isinstance(original, classmethod):
        return classmethod(waiting)
    return waiting
