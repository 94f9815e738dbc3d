"""fit trains for a fixed 1000 steps, whatever `steps` says."""

_reference = fit  # noqa: F821 (the reference's function)


def fit(model, x, y, steps, lr):
    return _reference(model, x, y, steps=1000, lr=lr)
