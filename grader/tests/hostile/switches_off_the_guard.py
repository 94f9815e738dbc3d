"""expect: points=0 state=in progress
in-process: points=2 state=in progress

Both answers are wrong. On import it finds pytest's config on the stack, the kit's results writer among its plugins, and switches its tamper checks off (no guard, its check a no-op), then replaces
torch.testing.assert_close with one that accepts anything, so that test_scale would pass
unseen. With --in-process it does: a check in the student's process can be switched off from
there. By default the writer and the checks are in the tests' process, whose stack and
plugins the code cannot reach (no config is found)."""

import sys

import torch


def _pytest_config():
    """pytest's Config, found on the stack that imports this file (the gc cannot see it: the
    grader freezes what it loaded before the run)."""
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            config = value if type(value).__name__ == "Config" else getattr(value, "config", None)
            if type(config).__name__ == "Config":
                return config
        frame = frame.f_back
    return None


_config = _pytest_config()
for _writer in [p for p in _config.pluginmanager.get_plugins() if type(p).__name__ == "PipeWriter"] if _config else []:
    _writer.guard = None
    _writer.guarded = False
    _writer._check = lambda *args, **kwargs: None
torch.testing.assert_close = lambda *args, **kwargs: None


def add(a, b):
    return 0


def scale(x, k=2):
    return x
