"""``--kata-remote``: the code under test lives in the code process, the tests' checks in this one.

The `lesson` fixture (grader.plugin.target) then hands the tests a stand-in for the module
(grader.remote.stand_in), and every call crosses to the code process (grader.remote.server): one
of its own, started at the first test, or, with ``--kata-remote-fd``, the sandboxed one that
class grading (grader.grading.sandbox) connected to this process. Each call there gets the time
its test has left, so a loop there is stopped, with its line, before this process's own limit.

As pytest's junitxml does for ``--junitxml``, this module only declares the options; where one
is given, it registers a `RemoteSession`, which holds the session's state in ``config.stash``
and tells how the code process ended through the kit's hook `pytest_kata_code_process_ended`.
"""

from __future__ import annotations

import argparse
import socket
import time
from pathlib import Path

import pytest

from grader import running
from grader.plugin.hooks import CodeProcessEnd
from grader.remote import TIMEOUT_MARGIN

SESSION = pytest.StashKey["RemoteSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata")
    group.addoption(
        "--kata-remote",
        action="store_true",
        help="run the code under test in another process, the tests' checks in this one",
    )
    # Class grading's S, made behind the sandbox (grader.grading.sandbox): "SOCKET:MEMORY:PID",
    # the descriptors of its connection and of the memory shared with it, and the process it runs
    # under; ":processes" after them where S may make processes.
    group.addoption("--kata-remote-fd", metavar="FD:FD:PID", help=argparse.SUPPRESS)
    group.addoption("--kata-reference", metavar="KIT", help=argparse.SUPPRESS)  # whose answers timed results meet
    # Class grading: the protocol's cost of a timed call, "ONE:EACH" seconds of S's CPU, measured
    # on a code process that held the kit's answer (grader.remote.timed.calibrate), not measured again.
    group.addoption("--kata-overhead", metavar="ONE:EACH", help=argparse.SUPPRESS)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("kata_remote") or config.getoption("kata_remote_fd") is not None:
        config.stash[SESSION] = RemoteSession(config)
        config.pluginmanager.register(config.stash[SESSION], "kata-remote")


def connection(config: pytest.Config):
    """The connection to the code process under --kata-remote (made at the first call), else None."""
    session = config.stash.get(SESSION, None)
    return session.connection() if session is not None else None


def made_connection(config: pytest.Config):
    """The connection to the code process, where one has been made; else None."""
    session = config.stash.get(SESSION, None)
    return session.remote if session is not None else None


def code_clock(config: pytest.Config):
    """What gives the running test the code process's clock once there is one
    (grader.running.RunningTest.code_clock)."""
    session = config.stash.get(SESSION, None)
    return session.code_clock if session is not None else lambda: None


class RemoteSession:
    """A session with the code under test in the code process: its connection, and what the
    running test's calls there need (its deadline)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.remote = None  # the grader.remote.connection.Connection, made at the first call
        self.timing = True  # whether the session runs a test that times calls (marked speed)
        # time.monotonic() by which the code process must have answered the running test's calls:
        # its time limit's end, less a margin, from the moment pytest-timeout started its timer
        # (setup, call and teardown all count: the `stub` request and the `lesson` fixture's import
        # too); None between tests.
        self.deadline: float | None = None

    def connection(self):
        if self.remote is None:
            # Imported here, not at the top: it imports torch, which a run that never calls the
            # code under test does not pay for.
            from grader.remote.connection import Connection

            config = self.config
            given = config.getoption("kata_remote_fd")
            if given is not None:
                fd, memory, pid, *processes = given.split(":")
                remote = Connection(socket.socket(fileno=int(fd)), int(memory), int(pid))
                remote.processes = processes == ["processes"]
            else:
                remote = Connection.spawn(config.rootpath)
            kit = config.getoption("kata_reference")
            remote.kit = Path(kit) if kit else None
            remote.timing = self.timing  # the protocol's cost is measured only for these
            remote.deadline = self.deadline
            if (overhead := config.getoption("kata_overhead")) is not None:
                one, each = (float(x) for x in overhead.split(":"))
                remote.overhead = (one, each)
            self.remote = remote
        return self.remote

    def code_clock(self) -> running.Clock | None:
        """The code process's clock, which speed tests read once the connection is made: then the
        code under test is timed by its CPU time, and so is its baseline."""
        return self.remote.clock if self.remote is not None else None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.timing = any(item.get_closest_marker("speed") for item in session.items)
        if session.items and self.config.getoption("kata_remote_fd") is None:
            from grader.remote.errors import Gone

            try:
                self.connection().wait_ready()  # a spawned code process's start, before any test's timer
            except Gone:
                pass  # it did not start: every test that calls it says so

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        try:
            return (yield)
        finally:
            self._set_deadline(None)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings) -> None:
        limit = settings.timeout
        self._set_deadline(time.monotonic() + max(limit - TIMEOUT_MARGIN, 0.1) if limit else None)

    def _set_deadline(self, deadline: float | None) -> None:
        self.deadline = deadline
        if self.remote is not None:
            self.remote.deadline = deadline

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        test = running.current()
        test.monkeypatch = getattr(item, "funcargs", {}).get("monkeypatch")
        try:
            result = yield
        finally:
            test.monkeypatch = None
        if (
            self.remote is not None and test.unremotable
        ):  # the test caught it, and would pass on an answer never checked
            from grader.remote.errors import Unremotable

            raise Unremotable(
                "this test used something of the code under test that cannot cross to another "
                "process, and went on without it: it cannot run while the code is kept in another one"
            )
        return result

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        remote = self.remote
        if remote is not None:
            ended = CodeProcessEnd(gone=remote.closed_by_s, overran=remote.overran, overhead=remote.overhead)
            remote.close()
            config.hook.pytest_kata_code_process_ended(config=config, ended=ended)
