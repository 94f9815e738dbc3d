"""Signal handling for the commands that run tests: handlers held for a block, and a stop that
ends the process at once while torch is being imported."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Callable, Iterator


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
