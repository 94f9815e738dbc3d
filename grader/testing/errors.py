"""Checks that a call refuses bad input with the right exception and a useful message."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import pytest


def expect_raises(call: Callable[[], object], exc_type: type[BaseException], *, what: str, why: str,
                  mention: tuple[str, ...] = ()) -> BaseException:
    """`call()` must raise `exc_type` whose message contains every string in `mention`.

    what: the call as the learner would write it, e.g. "fit(model, x, y, steps=0, lr=0.1)";
    why: why this input must be refused. Returns the exception. Another exception fails the
    test with both names; a bare NotImplementedError propagates unchanged (a stub's TODO), one
    with a message (a torch op's "not implemented for ...") is a wrong exception like any other.
    """
    __tracebackhide__ = True
    try:
        result = call()
    except NotImplementedError as exc:  # first: it is a RuntimeError
        if not exc.args:  # a stub's bare raise: its TODO must stay a TODO
            raise
        message = f"{what} raised {type(exc).__name__}({str(exc)!r}); expected a {exc_type.__name__}: {why}"
    except exc_type as exc:
        missing = [m for m in mention if m not in str(exc)]
        if not missing:
            return exc
        message = (f"{what} raised {type(exc).__name__}({str(exc)!r}); say what is wrong: name "
                   f"{' and '.join(missing)} in the message.")
    except Exception as exc:  # noqa: BLE001 (the wrong exception is the learner's to see)
        message = f"{what} raised {type(exc).__name__}({str(exc)!r}); expected a {exc_type.__name__}: {why}"
    else:
        message = f"{what} returned {result!r} without an error; expected a {exc_type.__name__}: {why}"
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


@contextmanager
def explained(what: str, *, when: str, advice: str,
              exc_type: type[BaseException] | tuple[type[BaseException], ...] = RuntimeError) -> Iterator[None]:
    """Inside the block, PyTorch's error (a RuntimeError, or `exc_type`: a warning turned into
    an error, a ValueError) whose message contains `when` fails the test with the lesson's
    `advice` for that pitfall (and the original message); any other error passes through
    unchanged (a stub's NotImplementedError too).

    what: the learner's call, e.g. "Merge(...)(a, b)"; when: a piece of PyTorch's message that
    names the pitfall, e.g. "Boolean value of Tensor"; advice: what went wrong and the fix.
    """
    __tracebackhide__ = True
    try:
        yield
    except NotImplementedError:
        raise
    except exc_type as exc:
        if when not in str(exc):
            raise
        raise AssertionError(f"{what} raised '{exc}': {advice}") from None


def raises_the_same(call: Callable[[], object], error: BaseException) -> bool:
    """Whether call() raises an error of the same type with the same message as `error` (a
    learner's error compared with the one a pitfall raises)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001
        return type(exc) is type(error) and str(exc) == str(error)
    return False
