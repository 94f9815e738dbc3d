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

import pytest

CONNECTION = pytest.StashKey["object"]()
TIMEOUT_MARGIN = 0.5  # seconds S's limit on a call leaves before the test's own


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata")
    group.addoption("--kata-remote", action="store_true",
                    help="run the code under test in another process, the tests' checks in this one")
    group.addoption("--kata-remote-fd", type=int, metavar="FD", help=argparse.SUPPRESS)


def connection(config: pytest.Config):
    """The connection to S under --kata-remote (made at the first call), else None."""
    if not (config.getoption("kata_remote") or config.getoption("kata_remote_fd") is not None):
        return None
    if CONNECTION not in config.stash:
        from grader.remote.client import Connection
        from grader.testing import speed

        speed.REMOTE[0] = True  # the code under test is timed by its CPU time: so is its baseline

        fd = config.getoption("kata_remote_fd")
        config.stash[CONNECTION] = (Connection(socket.socket(fileno=fd)) if fd is not None
                                    else Connection.spawn(config.rootpath))
    return config.stash[CONNECTION]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    remote = item.config.stash.get(CONNECTION, None)
    if remote is not None:
        from grader.plugin.failures import TIMEOUT_S

        limit = item.stash.get(TIMEOUT_S, 0.0)
        remote.deadline = time.monotonic() + max(limit - TIMEOUT_MARGIN, 0.1) if limit else None
    return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    remote = config.stash.get(CONNECTION, None)
    if remote is not None:
        remote.close()
