"""``--kata-remote``: the code under test lives in another process, the tests' checks in this one.

The `lesson` fixture (grader.plugin.target) then hands the tests a stand-in for the module
(grader.remote.client), and every call crosses to S (grader.remote.server): an S of its own,
started at the first test, or, with ``--kata-remote-fd``, the sandboxed S that class grading
(grader.grading.sandbox) connected to this process. Each call in S gets the time its test has
left, so a loop there is stopped, with its line, before this process's own limit.
"""

from __future__ import annotations

import argparse
import socket
import time
from pathlib import Path
from types import ModuleType

import pytest

CONNECTION = pytest.StashKey["object"]()
TIMING = pytest.StashKey[bool]()  # whether the session runs a test that times calls (marked speed)
TIMEOUT_MARGIN = 0.5  # seconds S's limit on a call leaves before the test's own

# The tests that used something of the code under test that cannot cross (class grading runs
# them again in the code's own process, grader.grading.sandbox), and the test running now.
UNREMOTABLE: set[str] = set()
_RUNNING: list[str | None] = [None]
# time.monotonic() by which S must have answered the running test's calls: its time limit's end,
# less a margin, from the moment pytest-timeout started its timer (setup, call and teardown all
# count: the `stub` request and the `lesson` fixture's import too); None between tests.
_DEADLINE: list[float | None] = [None]
_PATCH: list[pytest.MonkeyPatch | None] = [None]  # the running test's `monkeypatch`, where it has one


# What a person should read, by test: where the source of the code under test disagrees with
# what its run showed (grader.testing.source). Class grading's channel carries them to the flags.
REVIEW: dict[str, dict[str, None]] = {}  # test -> its notes, each once, in order
# The tests whose checks took what S recorded of the code (its ops, a scenario's result): S runs
# the code, which can switch its recorders off, so class grading holds their points for a person
# where the source read found something (grader.grading.verdict).
RECORDED: set[str] = set()


# Whether the code's process closed its end while the tests still called it, and whether this
# process stopped it, a call having run past its limit (class grading then says how that process
# ended, grader.grading.sandbox).
CODE_GONE: list[bool] = [False]
CODE_OVERRAN: list[bool] = [False]

# The protocol's cost of a timed call the session's connection measured (grader.remote.client.
# Connection.calibrate), or was given (--kata-overhead): class grading measures it once, on the
# kit's answer, and hands it to the students' runs.
OVERHEAD: list[tuple[float, float] | None] = [None]


def note_unremotable() -> None:
    if _RUNNING[0] is not None:
        UNREMOTABLE.add(_RUNNING[0])


def patched_modules() -> list[str]:
    """The modules' attributes the running test has patched with its `monkeypatch`, e.g.
    ["torch.finfo"]: the code under test in another process does not see them."""
    patch = _PATCH[0]
    return [f"{obj.__name__}.{name}" for obj, name, _ in getattr(patch, "_setattr", ()) if isinstance(obj, ModuleType)]


def note_review(text: str) -> None:
    REVIEW.setdefault(_RUNNING[0] or "", {})[text] = None


def note_recorded() -> None:
    if _RUNNING[0] is not None:
        RECORDED.add(_RUNNING[0])


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata")
    group.addoption("--kata-remote", action="store_true",
                    help="run the code under test in another process, the tests' checks in this one")
    # Class grading's S, made behind the sandbox (grader.grading.sandbox): "SOCKET:MEMORY:PID",
    # the descriptors of its connection and of the memory shared with it, and the process it runs
    # under; ":processes" after them where S may make processes.
    group.addoption("--kata-remote-fd", metavar="FD:FD:PID", help=argparse.SUPPRESS)
    group.addoption("--kata-reference", metavar="KIT", help=argparse.SUPPRESS)  # whose answers timed results meet
    # Class grading: the protocol's cost of a timed call, "ONE:EACH" seconds of S's CPU, measured
    # on a code process that held the kit's answer (`Connection.calibrate`), not measured again.
    group.addoption("--kata-overhead", metavar="ONE:EACH", help=argparse.SUPPRESS)


def connection(config: pytest.Config):
    """The connection to S under --kata-remote (made at the first call), else None."""
    if not (config.getoption("kata_remote") or config.getoption("kata_remote_fd") is not None):
        return None
    if CONNECTION not in config.stash:
        from grader.remote.client import Connection
        from grader.testing import speed

        speed.REMOTE[0] = True  # the code under test is timed by its CPU time: so is its baseline

        given = config.getoption("kata_remote_fd")
        if given is not None:
            fd, memory, pid, *processes = given.split(":")
            remote = Connection(socket.socket(fileno=int(fd)), int(memory), int(pid))
            remote.processes = processes == ["processes"]
        else:
            remote = Connection.spawn(config.rootpath)
        kit = config.getoption("kata_reference")
        remote.kit = Path(kit) if kit else None
        remote.timing = config.stash.get(TIMING, True)  # the protocol's cost is measured only for these
        remote.deadline = _DEADLINE[0]
        if (overhead := config.getoption("kata_overhead")) is not None:
            one, each = (float(x) for x in overhead.split(":"))
            remote.overhead = (one, each)
        config.stash[CONNECTION] = remote
    return config.stash[CONNECTION]


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[TIMING] = any(item.get_closest_marker("speed") for item in session.items)
    if session.items and session.config.getoption("kata_remote") and session.config.getoption("kata_remote_fd") is None:
        from grader.remote.client import Gone

        try:
            connection(session.config).wait_ready()  # a spawned S's start, before any test's timer
        except Gone:
            pass  # it did not start: every test that calls it says so


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    _RUNNING[0] = item.nodeid
    try:
        return (yield)
    finally:
        _RUNNING[0] = None
        _set_deadline(item.config, None)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings) -> None:
    limit = settings.timeout
    _set_deadline(item.config, time.monotonic() + max(limit - TIMEOUT_MARGIN, 0.1) if limit else None)


def _set_deadline(config: pytest.Config, deadline: float | None) -> None:
    _DEADLINE[0] = deadline
    remote = config.stash.get(CONNECTION, None)
    if remote is not None:
        remote.deadline = deadline


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    remote = item.config.stash.get(CONNECTION, None)
    _PATCH[0] = getattr(item, "funcargs", {}).get("monkeypatch")
    try:
        result = yield
    finally:
        _PATCH[0] = None
    if remote is not None and item.nodeid in UNREMOTABLE:  # the test caught it, and would pass on an answer never checked
        from grader.remote.client import Unremotable

        raise Unremotable("this test used something of the code under test that cannot cross to another "
                          "process, and went on without it: it cannot run while the code is kept in another one")
    return result


def pytest_unconfigure(config: pytest.Config) -> None:
    remote = config.stash.get(CONNECTION, None)
    if remote is not None:
        CODE_GONE[0], CODE_OVERRAN[0] = remote.closed_by_s, remote.overran
        OVERHEAD[0] = remote.overhead
        remote.close()
