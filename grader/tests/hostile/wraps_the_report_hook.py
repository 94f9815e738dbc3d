"""expect: points=0 state=in progress

Both answers are wrong. Every report is turned into a pass on its way to the plugins that
record it, by wrapping pytest's pytest_runtest_logreport hook caller; the kit records results
through hooks of its own."""

import gc

for _config in [o for o in gc.get_objects() if type(o).__name__ == "Config" and hasattr(o, "hook")]:
    _real = _config.hook.pytest_runtest_logreport

    class _Passing:
        def __call__(self, *, report):
            report.outcome, report.longrepr = "passed", None
            return _real(report=report)

        def __getattr__(self, name):
            return getattr(_real, name)

    _config.hook.pytest_runtest_logreport = _Passing()


def add(a, b):
    return 0


def scale(x, k=2):
    return x
