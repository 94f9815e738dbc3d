"""expect: points=0 state=in progress
in-process: points=0 state=tampered problem=torch.testing.assert_close

scale() is wrong. It replaces torch.testing.assert_close as it returns, and puts it back when
the test lets go of its result. The tamper check after the test runs first."""

import weakref

import torch


def add(a, b):
    return 0


def scale(x, k=2):
    real = torch.testing.assert_close
    torch.testing.assert_close = lambda *args, **kwargs: None
    out = x.clone()

    def restore():
        torch.testing.assert_close = real

    weakref.finalize(out, restore)
    return out
