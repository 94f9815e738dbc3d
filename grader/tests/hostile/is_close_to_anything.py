"""expect: points=0 state=in progress
in-process: points=2 state=in progress

add() is wrong; scale() returns its input unscaled, as a Tensor subclass whose
__torch_function__ answers "equal" and "close" to every isclose, eq, equal and allclose, so
torch.testing.assert_close passes it with torch itself untouched (no tamper check sees it). Only
plain tensors cross to the tests' process: the subclass is refused there, and its test fails."""

import torch


class _Close(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if getattr(func, "__name__", "") in ("isclose", "eq", "__eq__", "equal", "allclose"):
            return torch.ones_like(out.as_subclass(torch.Tensor), dtype=torch.bool) \
                if isinstance(out, torch.Tensor) else True
        return out


def add(a, b):
    return 0


def scale(x, k=2):
    return x.as_subclass(_Close)
