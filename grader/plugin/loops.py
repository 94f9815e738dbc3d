"""A loop that never ends costs its time limit once a session, not once for every test that
reaches it.

When a test is stopped by its time limit while the learner's code ran (pytest-timeout's alarm
in this process; under ``--kata-remote``, the alarm of the process the code lives in), the
function it was running is replaced, for the rest of the session, by a stand-in that ends at
once (`LoopReached`): every later test that reaches it ends then, a TIMEOUT whose message
names the looping line and the test that hit the limit there (grader.plugin.failures), with the
same file:line, so the results read it as a timeout. The terminal tells the loop once, with how
many tests waited on it (grader.plugin.summary).

Which function: the innermost of the learner's frames whose function its module, or a class
defined there, holds by name (a closure or a lambda cannot be found so: the frame that made it
is taken instead). That name is bound to the stand-in; the function object itself is left as it
is. Rebinding reaches every call that looks the name up, which is how the tests reach the module
(``lesson.name``) and how the module's own functions reach each other, and it needs no surgery
on bytecode (a function's ``__code__`` can only take code with its own free variables). A
reference taken earlier (``f = lesson.f`` at a test file's top level, ``from .helper import f``
in another module of the learner's) still reaches the loop; it is then stopped by the limit
again. The stand-in wraps the original (``__wrapped__``): its signature and source read as the
learner wrote them.

The stand-in itself is grader.stand_ins'. Under ``--kata-remote`` the function lives in the code
process, which keeps the frames of the call its alarm stopped, and is asked to put the stand-in
there (grader.remote.server); a stand-in's call comes back as a `LoopReached` with the loop's
number (grader.remote.errors).

A @given test's examples let the limit's failure and a stand-in's `LoopReached` through at once:
hypothesis would otherwise run the looping example again, with no limit left, to shrink it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from grader.learners_code import is_learners
from grader.plugin.remote import made_connection
from grader.plugin.target import code_of, frames, leaving_hypothesis, shown, where
from grader.results import Kind
from grader.stand_ins import CallTimedOut, LoopReached, stand_in

LOOPS = pytest.StashKey[list["Loop"]]()  # the session's loops, by number: the first test's, in order
TIMEOUT_S = pytest.StashKey[float]()  # per item: the time limit pytest-timeout set for it


@dataclass(frozen=True)
class Loop:
    """A function stopped by the time limit, replaced for the rest of the session."""

    nodeid: str  # the test that hit the limit
    test: str  # its name, as a learner reads it
    seconds: float  # the limit
    function: str  # the learner's function the limit stopped
    running: str  # "function (path.py:LINE)": its line then
    where: str  # that line's file:line
    exception: str  # the type of the first test's failure


class _Stopped(BaseException):
    """A @given test's example stopped by its limit, carried out of hypothesis (its ``__cause__``)."""


def loops(config: pytest.Config) -> list[Loop]:
    return config.stash.setdefault(LOOPS, [])


def waiting(item: pytest.Item, reached: LoopReached) -> tuple[Loop, str] | None:
    """(the loop, the TIMEOUT message) for a test that reached a stand-in; None for a number
    this session never gave a loop (only the code's process could send one)."""
    found = loops(item.config)
    if not 0 <= reached.key < len(found):
        return None
    loop = found[reached.key]
    return loop, (
        f"TIMEOUT: {item.name} ended at once: it reached {loop.function}, which did not finish in "
        f"{loop.seconds} s in {loop.test}; it was running {loop.running}."
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item):
    try:
        with leaving_hypothesis(item, timed_out, _Stopped):
            return (yield)
    except _Stopped as exc:
        cause = exc.__cause__
        if cause is None or not timed_out(cause):  # not this module's: let it fail as it is
            raise
        raise cause from None


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings) -> None:
    item.stash[TIMEOUT_S] = settings.timeout  # then pytest-timeout sets its timer as ever


def timed_out(exc: BaseException) -> bool:
    """The time limit stopped the test: pytest-timeout's alarm failed it (its handler's frame is
    in the traceback), or the code's process stopped a call at what the test had left
    (grader.remote.errors raises `CallTimedOut`)."""
    if isinstance(exc, CallTimedOut):
        return True
    handler = getattr(sys.modules.get("pytest_timeout"), "timeout_sigalrm", None)
    if handler is None or not isinstance(exc, pytest.fail.Exception):
        return False
    return any(tb.tb_frame.f_code is handler.__code__ for tb in frames(exc))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """After grader.plugin.failures has made the phase's Failure (this module registers after
    it, so its wrapper is the outer one): a TIMEOUT in the learner's code stops that function."""
    report = yield
    failure = getattr(report, "kata_failure", None)
    if call.excinfo is None or failure is None or failure.kind is not Kind.TIMEOUT:
        return report
    exc = call.excinfo.value
    if isinstance(exc, LoopReached):
        report.kata_loop = waiting(item, exc)[0].nodeid  # a TIMEOUT: its loop was found
        return report
    report.kata_loop = item.nodeid
    code, config = code_of(item), item.config
    learners = [tb for tb in frames(exc) if is_learners(tb.tb_frame.f_code.co_filename, code)]
    if not learners:  # the test's own loop, or a library's: nothing of the learner's to stop
        return report
    found = loops(config)
    running = learners[-1].tb_frame.f_code
    loop = Loop(
        item.nodeid,
        item.name,
        item.stash.get(TIMEOUT_S, 0.0),
        getattr(running, "co_qualname", running.co_name),
        shown(learners[-1], config),
        where(learners[-1], config),
        failure.exception,
    )
    remote = made_connection(config)
    if remote is not None:  # the code process kept the stopped call's frames; it puts the stand-in there
        remote.stand_in(len(found))
        found.append(loop)
    elif stand_in([(tb.tb_frame.f_code, tb.tb_frame.f_globals) for tb in learners], len(found)) is not None:
        found.append(loop)
    return report
