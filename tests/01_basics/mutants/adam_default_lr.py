"""Builds torch.optim.Adam([w]) without lr: PyTorch's default 1e-3 instead of the caller's `lr`, far too slow to fit."""

EXPECT = r"default lr"

_reference = fit_polynomial  # noqa: F821 (the reference's)


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    return _reference(x, y, degree, steps, lr=1e-3)
