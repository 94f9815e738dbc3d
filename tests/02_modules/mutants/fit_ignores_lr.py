"""fit hard-codes the classic recipe's lr=0.01 and ignores the `lr` it is given."""

_reference = fit  # noqa: F821 (the reference's function)


def fit(model, x, y, steps, lr):
    return _reference(model, x, y, steps, lr=0.01)
