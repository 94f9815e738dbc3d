"""The test process: one torch thread and a frozen heap while the tests run.

The lessons' tensors are small; on them torch's thread pool only costs time (some CPU kernels,
softmax among them, start it for any size), and with the other cores busy (a class graded in
parallel, CI) each such call waits for a thread to be scheduled. One thread is also how
``kata grade`` runs every student. The learner's thread count is back after the run.

Every object that exists once the tests are collected (torch, hypothesis, pytest) is moved out
of the garbage collector's sight with gc.freeze, here and at configure time, as ``kata grade``'s
preloaded parent does: otherwise each full collection walks all of them, and hypothesis and
pytest call gc.collect several times a run. Objects the tests make are collected as ever. The
freeze is not undone: the process is about to end, and unfreezing would make pytest's last
gc.collect walk everything again. docs/PERFORMANCE.md has the measurements.
"""

from __future__ import annotations

import gc
import sys

import pytest


def pytest_configure(config: pytest.Config) -> None:
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    gc.freeze()
    torch = sys.modules.get("torch")  # the lessons' test modules have imported it by now
    if torch is None:
        return (yield)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return (yield)
    finally:
        torch.set_num_threads(threads)
