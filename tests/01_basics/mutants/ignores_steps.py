"""Always runs 1000 steps, whatever `steps` says (the number copied from the classic recipe)."""

EXPECT = r"the same coefficients for steps=\d+ as for steps=0"

_reference = fit_polynomial  # noqa: F821 (the reference's)


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    return _reference(x, y, degree, 1000, lr)
