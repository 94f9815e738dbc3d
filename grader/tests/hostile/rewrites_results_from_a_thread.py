"""expect: points=0 state=in progress
in-process: points=0 state=tampered problem=a trace or profile function was set

Both answers are wrong. A thread started at import turns each test's result into a pass
before the kit's writer sends it: a profile function the import leaves on the tests' thread
stops that thread as the writer is handed a result, and waits while the other thread changes
the result (a frozen dataclass) in place. By default the tests, their writer and their results
are in another process, out of reach of both. With --in-process the result is changed, but
the tamper check the writer makes next finds the profile function. (A thread alone can race
the writer for the result, without a profile function, and sometimes win: with --in-process,
a result is only as safe as the rest of the process.)"""

import queue
import sys
import threading

_handed, _done = queue.Queue(), queue.Queue()


def _rewrite():
    while True:
        result = _handed.get()
        if result.outcome.value != "passed":
            object.__setattr__(result, "outcome", type(result.outcome)("passed"))
            object.__setattr__(result, "message", "")
            object.__setattr__(result, "failure", None)
        _done.put(None)


def _profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "pytest_kata_result":
        result = frame.f_locals.get("result")
        if type(result).__name__ == "TestResult":
            _handed.put(result)
            _done.get()


threading.Thread(target=_rewrite, daemon=True).start()
sys.setprofile(_profile)


def add(a, b):
    return 0


def scale(x, k=2):
    return x
