"""Checks that a call refuses bad input with the right exception and a useful message."""

from __future__ import annotations

import errno
import linecache
import os
import sys
import sysconfig
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest
import torch

from grader import pitfalls
from grader.quoting import quoted, repeats
from grader.testing.compare import counted, describe, fail


def expect_raises(
    call: Callable[[], object],
    exc_type: type[BaseException],
    *,
    what: str,
    why: str,
    mention: tuple[str, ...] = (),
    advice: Callable[[BaseException], str | None] | None = None,
    told: Callable[[object], str | None] | None = None,
) -> BaseException:
    """`call()` must raise `exc_type` whose message contains every string in `mention`.

    what: the call as the learner would write it, e.g. "fit(model, x, y, steps=0, lr=0.1)";
    why: why this input must be refused. Returns the exception. Another exception fails the
    test with both names; a bare NotImplementedError propagates unchanged (a stub's TODO), one
    with a message (a torch op's "not implemented for ...") is a wrong exception like any other.
    advice: the lesson's diagnosis of another exception (its pitfall), said on a line of its own
    instead of `why`; "" to say nothing more (a `why` about the input, beside an error that is
    about something else, would blame the wrong thing), None for `why`. told: what a call that
    raised nothing gave, in the lesson's words ("gave 1 image, and skipped ..."), or None for
    "returned ...".
    """
    __tracebackhide__ = True
    try:
        result = call()
    except NotImplementedError as exc:  # first: it is a RuntimeError
        if not exc.args:  # a stub's bare raise: its TODO must stay a TODO
            raise
        message = f"{what} raised {quoted(exc)}; expected {_a(exc_type.__name__)}: {why}"
    except exc_type as exc:
        missing = [m for m in mention if m not in str(exc)]
        if not missing:
            return exc
        message = f"{what} raised {quoted(exc)}; say what is wrong: name {' and '.join(missing)} in the message."
    except Exception as exc:  # noqa: BLE001 (the wrong exception is the learner's to see)
        said = advice(exc) if advice else None
        message = (
            f"{what} raised {quoted(exc)}; expected {_a(exc_type.__name__)}: {why}"
            if said is None
            else f"{what} raised {quoted(exc)}; expected {_a(exc_type.__name__)}." + (f"\n{said}" if said else "")
        )
    else:
        gave = (told(result) if told else None) or f"returned {returned(result)}"
        message = f"{what} {gave} without an error; expected {_a(exc_type.__name__)}: {why}"
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


@contextmanager
def explained(
    what: str, *, when: str, advice: str, exc_type: type[BaseException] | tuple[type[BaseException], ...] = RuntimeError
) -> Iterator[None]:
    """Inside the block, PyTorch's error (a RuntimeError, or `exc_type`: a warning turned into
    an error, a ValueError) whose message contains `when` fails the test with the lesson's
    `advice` for that pitfall (and the original message); any other error passes through
    unchanged (a stub's NotImplementedError too; `reported` tells the others with their call).

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
        raise AssertionError(f"{what} raised {quoted(exc)}: {advice}") from None


def raises_the_same(call: Callable[[], object], error: BaseException) -> bool:
    """Whether call() raises an error of the same type with the same message as `error` (a
    learner's error compared with the one a pitfall raises)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 (any error may be the pitfall's)
        return type(exc) is type(error) and str(exc) == str(error)
    return False


@contextmanager
def reported(what: str, advice: Callable[[BaseException], str] | None = None) -> Iterator[None]:
    """Inside the block, an error the code under test raises fails the test with `raised`'s
    message: the call and its input (`what`, e.g. "stable_softmax(x, dim=0) for x of shape (),
    float32"), the error, and the learner's own lines, never a frame of the tests, the grader or
    a library, and no chained-exception banner; then what `advice(error)` says of it (the
    lesson's own diagnosis, "" when the error is not its pitfall's), else the pitfall the error
    alone names (grader.pitfalls), if any.

    What the kit's plugin tells by its kind passes through unchanged: a stub's
    NotImplementedError (one the learner's line raises itself; torch's "not implemented for
    'Half'" is the learner's error like any other), the tests' own failures (AssertionError,
    pytest's outcomes), running out of memory, a file past the size limit, a name missing from
    the learner's module, a call for CUDA where there is none.
    """
    __tracebackhide__ = True
    try:
        yield
    except (AssertionError, MemoryError):
        raise
    except Exception as exc:  # the learner's error, told with its call
        if _kit_reports_by_kind(exc) or _a_stubs(exc):
            raise
        message = raised(what, exc, advice(exc) if advice else "")
    else:
        return
    fail(message)


def raised(what: str, exc: BaseException, advice: str = "") -> str:
    """ "`what` raised TypeError('...')", then the learner's lines that raised it (file:line, the
    function, its source line), outermost first, and `advice` (the lesson's word on this error),
    else the pitfall the error names, if any (grader.pitfalls)."""
    frames = _learners_frames(exc)
    lines = [f"{what} raised {quoted(exc)}" + (":" if frames else ".")]
    for path, line, function in frames:
        lines.append(f"{_shown_path(path)}:{line}: in {function}")
        source = linecache.getline(path, line).strip()
        if source:
            lines.append(f"    {source}")
    told = advice or pitfalls.named(exc)
    return "\n".join([*lines, told] if told else lines)


def returned(value: object) -> str:
    """What a call returned, as a message names it: a tensor by its shape and dtype ("a tensor of
    shape (4, 1), float32"; a 0-d one by its value, "tensor(3.)"), a NumPy array as "a NumPy
    array of shape (6, 10, 3), uint8", a list by its length where its repr runs past 80
    characters ("a list of 13 items"), anything else by its repr, cut past 80 characters."""
    if isinstance(value, torch.Tensor):
        if value.dim() or value.device.type == "meta":
            return f"a tensor of {describe(value)}"
        return repr(value.detach())
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        return f"a NumPy array of shape {tuple(value.shape)}, {value.dtype}"
    text = repr(value)
    if isinstance(value, list) and len(text) > 80:
        return f"a list of {counted(len(value), 'item')}"
    return text if len(text) <= 80 else text[:77] + "..."


def _a(word: str) -> str:
    """`word` after its article: "an IndexError", "a ValueError"."""
    return f"{'an' if word[:1] in 'AEIOUaeiou' else 'a'} {word}"


# Where no learner's code lives: Python's own library, the installed packages, the grader.
_NOT_THE_LEARNERS = tuple(
    sorted(
        {
            os.path.realpath(sysconfig.get_paths()[key]) + os.sep
            for key in ("stdlib", "platstdlib", "purelib", "platlib")
        }
        | {os.path.realpath(Path(__file__).parents[1]) + os.sep}
    )
)


def learners_line(exc: BaseException) -> str:
    """ "\n(from basics.py:142: loss.backward())": the last line of the code under test that `exc`
    came through, for a message that quotes the error in one line; "" when none is."""
    frames = _learners_frames(exc)
    if not frames:
        return ""
    path, line, _ = frames[-1]
    return f"\n(from {os.path.basename(path)}:{line}: {linecache.getline(path, line).strip()})"


def _learners_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    """(file, line, function) of each traceback entry in the code under test: not the
    standard library's, an installed package's, the grader's, or a test file's (test_*.py,
    conftest.py)."""
    found = []
    for frame, line in traceback.walk_tb(exc.__traceback__):
        path = frame.f_code.co_filename
        name = os.path.basename(path)
        if path.startswith("<frozen") or name.startswith("test_") or name == "conftest.py":
            continue
        if os.path.realpath(path).startswith(_NOT_THE_LEARNERS):
            continue
        if not repeats(found[-1][:2] if found else None, path, line, frame.f_code.co_name):
            found.append((path, line, frame.f_code.co_name))
    return found


def _a_stubs(exc: BaseException) -> bool:
    """A NotImplementedError the learner's line raised itself (a stub's TODO, as the kit's
    plugin tells one), not one raised inside a library."""
    if not isinstance(exc, NotImplementedError):
        return False
    last = None
    for last in traceback.walk_tb(exc.__traceback__):
        pass
    if last is None:
        return True
    frame, line = last
    return linecache.getline(frame.f_code.co_filename, line).strip().startswith("raise NotImplementedError")


def _shown_path(path: str) -> str:
    """`path` relative to the working folder (the kit's root in a run) where it lies under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _kit_reports_by_kind(exc: BaseException) -> bool:
    """An error the kit's plugin tells by its kind, not by its call: a name missing from the
    learner's module (AttributeError on a module), CUDA asked for where it cannot start (raised
    in torch.cuda's lazy initialisation), out of GPU memory, a file past the size limit."""
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return True
    if isinstance(exc, AttributeError) and type(getattr(exc, "obj", None)) is type(sys):
        return True
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if isinstance(exc, getattr(torch, "OutOfMemoryError", ())):
        return True
    innermost = None
    for innermost, _ in traceback.walk_tb(exc.__traceback__):
        pass
    lazy_init = getattr(getattr(torch, "cuda", None), "_lazy_init", None)
    return innermost is not None and lazy_init is not None and innermost.f_code is lazy_init.__code__
