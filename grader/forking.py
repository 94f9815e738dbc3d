"""Import, once, what a lesson's pytest run needs, in a process that then forks the runs.

Importing torch costs 1.4-4 s, more than most lessons' tests, and torch imports more on first
use (torch._dynamo for the first optimizer, sympy for gradcheck's first call): 1-2 s again.
A process that has done all of it once and forks each run (``kata grade``, ``grader verify``,
the later runs of ``kata watch``) pays none of it per run. Torch is switched to one thread
before any op, so no OpenMP pool exists in the parent to be broken by the fork.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from typing import Callable, Iterator, NoReturn

# pytest warns that it cannot assertion-rewrite plugins imported before it started: here they
# were, on purpose, by `preload`.
PRELOADED = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]


def preload(grading: bool) -> int:
    """Import what every run needs, once, in the parent. `grading`: also set the environment
    the runs are graded in (hypothesis's "grading" profile, one OpenMP thread); ``kata watch``
    keeps the learner's. Returns torch's thread count before the parent's switch to one."""
    if grading:
        os.environ["HYPOTHESIS_PROFILE"] = "grading"  # the same examples for every student, no shrinking
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # before any op: no OpenMP pool exists when the children fork
    import hypothesis  # noqa: F401
    import hypothesis.extra.numpy  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import _hypothesis_pytestplugin  # noqa: F401
    import pytest_timeout  # noqa: F401
    import torch._dynamo  # noqa: F401 - imported lazily (by optimizers), it re-wraps torch.manual_seed & co.
    import torch.fx.experimental.symbolic_shapes  # noqa: F401 - imported lazily (by gradcheck), with sympy
    import torch.nn.functional  # noqa: F401
    import torch.optim  # noqa: F401
    import torch.utils.data  # noqa: F401

    for name in ("cv2", "_pytest.pytester", "grader.plugin.hypothesis_profile", "grader.testing", "grader.testing.strategies",
                 "grader.testing.memory", "grader.testing.forbid", "grader.plugin"):
        try:
            __import__(name)
        except ImportError:
            pass  # a lesson that needs it will say so
    import gc

    gc.freeze()  # the preloaded objects stay shared with the children (no copy-on-write by gc)
    return threads


@contextlib.contextmanager
def signals_handled(handler: Callable, signames: tuple[str, ...]) -> Iterator[None]:
    """`handler` for the named signals (those this system has) inside the block; the previous after."""
    signums = [getattr(signal, name) for name in signames if hasattr(signal, name)]
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


def ending_at_once(say: Callable[[], None], status: int, signames: tuple[str, ...] = ("SIGINT",)):
    """While torch is imported: a stop signal (Ctrl-C by default) ends the process there and
    then, as the command would have stopped: `say()`, then exit `status`. A context manager.

    A KeyboardInterrupt raised inside torch's import lands in C++ code that calls back into
    Python: torch aborts ("terminate called after throwing an instance of
    'pybind11::error_already_set'", exit -6), or the process dies of the SIGINT after its last
    line (exit -2), one time in three. Use it only where nothing would need unwinding yet: no
    tests running, no temporary files."""

    def stop(signum, frame):
        with contextlib.suppress(Exception):
            say()
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)

    return signals_handled(stop, signames)


def end_child(body: Callable[[], int]) -> NoReturn:
    """In a forked child: run `body` (its set-up, then pytest) and end the process with the
    status it returns, whatever happens; 70 (EX_SOFTWARE) with the traceback printed if it
    raised. Never returns into the parent's code, nor runs the parent's exit handlers."""
    code = 70
    try:
        code = int(body())
    except BaseException:  # noqa: BLE001 - the child must end here, whatever happened
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
