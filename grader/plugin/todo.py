"""An untouched stub is a TODO: one line with its file:line, no traceback, and no wait.

When the code under test raises the NotImplementedError of one of its stubs (in a test, in a
fixture, in a hypothesis example, or in a DataLoader worker), the phase ends in a `Todo`
instead: a ``pytest.fail`` without a traceback, so pytest renders nothing that nobody reads. A
test that can only end in a TODO (grader.plugin.untouched) is not run at all: the stub it would
reach first is called instead, before the test builds optimizers or models.
"""

from __future__ import annotations

import linecache
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.learners_code import is_learners, raise_from
from grader.plugin import untouched
from grader.plugin.target import code_of, innermost, leaving_hypothesis, shown, target, where


class Todo(pytest.fail.Exception):
    """A stub of the code under test was reached: `message` says which, `where` its file:line."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message, pytrace=False)
        self.where = where


class StubReached(BaseException):
    """A stub's NotImplementedError, carried out of a hypothesis test at its first example.

    A BaseException, so hypothesis lets it through at once instead of shrinking an input that
    cannot matter; the phase turns it into a Todo (its ``__cause__`` is the stub's error)."""


def _todo_of(item: pytest.Item, exc: BaseException) -> Todo | None:
    if isinstance(exc, StubReached):
        exc = exc.__cause__
    if not isinstance(exc, NotImplementedError):
        return None
    site = stub_site(exc, item)
    return Todo(site[1], site[0]) if site else None  # None: torch's own (an nn.Module without forward)


def _phase(item: pytest.Item, instead=None):
    """The body of each phase's wrapper: a stub's NotImplementedError leaves it as a Todo.
    `instead`: a call made in place of the phase (the phase itself then never runs)."""
    try:
        if instead is not None:
            instead()
        return (yield)
    except (NotImplementedError, StubReached) as exc:
        todo = _todo_of(item, exc)
        if todo is None:
            raise
        raise todo from None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item):
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item):
    code = code_of(item)
    module = getattr(item, "funcargs", {}).get(untouched.FIXTURE)
    if module is not None:
        stub = untouched.first_stub(module, Path(item.path), getattr(item, "originalname", item.name), code)
        if stub is not None:  # the test can only end in this stub's TODO: skip its setup work
            return (yield from _phase(item, instead=lambda: raise_from(stub)))
    with leaving_hypothesis(
        item, lambda exc: isinstance(exc, NotImplementedError) and stub_site(exc, item) is not None, StubReached
    ):
        return (yield from _phase(item))


def stub_site(exc: NotImplementedError, item: pytest.Item) -> tuple[str, str] | None:
    """(file:line, TODO message) when a stub of the code under test raised `exc` (the innermost
    frame is the learner's, or, from a DataLoader worker, the last frame of its traceback)."""
    code, tb = code_of(item), innermost(exc)
    if tb is not None and is_learners(tb.tb_frame.f_code.co_filename, code):
        if not _raised_here(tb):  # a torch op's own ("not implemented for 'ComplexFloat'"), on the learner's line
            return None
        return where(tb, item.config), f"TODO: {shown(tb, item.config)} is not implemented yet"
    frame = _worker_frame(exc, code)
    if frame is not None:
        path, line, name = frame
        at = f"{target(item.config).rel(path)}:{line}"
        return at, f"TODO: {name} ({at}) is not implemented yet (it ran in a DataLoader worker process)"
    return None


def _raised_here(tb) -> bool:
    """Whether the learner's line raised the NotImplementedError itself (`raise
    NotImplementedError...`, a stub's), rather than calling something that raised it."""
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    return line.strip().startswith("raise NotImplementedError")


# Python's own traceback lines. A DataLoader worker's exception reaches the test process only as
# text: torch re-raises it there with the worker's formatted traceback as its message, so this
# is the one place the kit reads an exception's text. It reads Python's format, not torch's words.
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)\n(?P<source>[^\n]*)')


@dataclass
class WorkerTraceback:
    frames: list[tuple[str, str, str, str]]  # (path, line, function, source line), the learner's
    error: str  # the last line: "TypeError: ..."


def worker_traceback(exc: BaseException, code: tuple[Path, ...]) -> WorkerTraceback | None:
    """The learner's frames of a DataLoader worker's traceback carried in `exc`, when torch's
    DataLoader re-raised it and its last frame is the learner's."""
    if not reraised_by_dataloader(exc):
        return None
    text = str(exc)
    found = [(path, line, name, source.strip()) for path, line, name, source in _FRAME.findall(text)]
    if not found or not is_learners(found[-1][0], code):
        return None
    error = text.rstrip().splitlines()[-1]
    return WorkerTraceback([f for f in found if is_learners(f[0], code)], error)


def _worker_frame(exc: NotImplementedError, code: tuple[Path, ...]) -> tuple[str, str, str] | None:
    """(path, line, function) of the last frame of a worker's traceback carried in `exc`, if it
    is the learner's and `exc` was re-raised by torch's DataLoader."""
    found = worker_traceback(exc, code)
    return found.frames[-1][:3] if found else None


def reraised_by_dataloader(exc: BaseException) -> bool:
    """Whether torch's ExceptionWrapper.reraise raised `exc` (its innermost frame)."""
    wrapper = getattr(sys.modules.get("torch._utils"), "ExceptionWrapper", None)
    tb = innermost(exc)
    return wrapper is not None and tb is not None and tb.tb_frame.f_code is wrapper.reraise.__code__
