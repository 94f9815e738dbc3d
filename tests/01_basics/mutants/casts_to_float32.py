"""Converts x and y with .float() first: float64 samples get float32 coefficients."""

EXPECT = r"Keep x.s dtype"

_reference = fit_polynomial  # noqa: F821 (the reference's)


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    return _reference(x.float(), y.float(), degree, steps, lr)
