"""The running test, as the tests' helpers reach it: one ContextVar, set by the plugin.

A lesson's tests call `assert_speed(...)` and `forbid(...)` with no pytest config, so the
helpers (grader.testing) reach the running test through `TEST`, which the plugin sets for each
test's setup, call and teardown and resets after (grader.plugin.record). Outside a test, and in
a run without the plugin, it is None: the helpers then time by the wall clock and keep nothing.

With the code under test in a process of its own (``--kata-remote``), the tests' process hands
that process's work to what the test has open here (`RunningTest.ops_recorders`), times it by
the code process's CPU (`Clock`), and notes what a person should read (`RunningTest.review`).

A ContextVar does not follow into a thread a test starts: code that runs in another thread
takes the `RunningTest` itself, looked up once in the test's thread.

No torch here: the plugin reads what a test left without importing it.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, ContextManager, Protocol


class Clock(Protocol):
    """The clock a speed test reads when the code under test runs in a process of its own
    (grader.remote.code_clock): this thread's CPU time plus the code process's CPU time of the
    calls made while `timing()` is open."""

    def now(self) -> float:
        """Seconds, as this clock counts them."""

    def timing(self) -> ContextManager[None]:
        """A block in which each call of the code under test is timed."""


@dataclass(frozen=True)
class TestNotes:
    """What a test left for a person and for class grading when it ran with the code under
    test in a process of its own (empty otherwise)."""

    __test__ = False  # not a test class, for pytest

    review: tuple[str, ...] = ()  # where the code's source disagrees with what its run showed
    recorded: bool = False  # its checks took what the code process recorded (its ops, a scenario's result)
    unremotable: bool = False  # it used something of the code under test that cannot cross


class RunningTest:
    """One test's context: what its helpers leave for the plugin, and what they read of it."""

    __test__ = False  # not a test class, for pytest

    def __init__(self, nodeid: str, code_clock: Callable[[], Clock | None] = lambda: None) -> None:
        self.nodeid = nodeid
        # The clock of the code's process, once there is one (None: the code runs in this
        # process, timed by the wall clock, grader.testing.speed).
        self.code_clock = code_clock
        self.measurements: list[dict] = []  # speed ratios, in the order measured
        self.review: dict[str, None] = {}  # notes for a person, each once, in order
        self.recorded = False
        self.unremotable = False
        # grader.testing.forbid's recorders open now, innermost last: what the code process ran
        # is handed to them, as if it had run here.
        self.ops_recorders: list = []
        self.function_recorders: list = []
        self.monkeypatch = None  # the test's `monkeypatch` while its call runs, where it has one

    def patched_modules(self) -> list[str]:
        """The modules' attributes the test has patched with its `monkeypatch`, e.g.
        ["torch.finfo"]: the code under test in another process does not see them."""
        return [
            f"{obj.__name__}.{name}"
            for obj, name, _ in getattr(self.monkeypatch, "_setattr", ())
            if isinstance(obj, ModuleType)
        ]

    def notes(self) -> TestNotes:
        return TestNotes(tuple(self.review), self.recorded, self.unremotable)


# The one piece of module state this layer allows: a pointer to the running test, as torch
# keeps its mode stack. Each context (thread, task) sees its own value; the plugin resets it by
# token after each test.
TEST: contextvars.ContextVar[RunningTest | None] = contextvars.ContextVar("kata_running_test", default=None)


def current() -> RunningTest | None:
    """The running test, or None (no plugin, or between tests)."""
    return TEST.get()


def note_review(text: str, test: RunningTest | None = None) -> None:
    """A note for a person to read, on `test` (default: the running one); each once."""
    test = test or TEST.get()
    if test is not None:
        test.review[text] = None


def note_recorded(test: RunningTest | None = None) -> None:
    """The test's checks took what the code process recorded."""
    test = test or TEST.get()
    if test is not None:
        test.recorded = True


def note_unremotable(test: RunningTest | None = None) -> None:
    """The test used something of the code under test that cannot cross to another process."""
    test = test or TEST.get()
    if test is not None:
        test.unremotable = True
