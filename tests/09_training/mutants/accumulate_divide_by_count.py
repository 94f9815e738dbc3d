"""Scales each chunk's loss by 1 / micro_batches: right only when every chunk has the same size."""

EXPECT = r"divided by the number of chunks"

_reference = accumulate_gradients  # noqa: F821 (the reference's)


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    # Swap the reference's chunk size / N weight for 1 / micro_batches.
    return _reference(model, lambda out, y: loss_fn(out, y) * (n / len(y)) / micro_batches, inputs, targets, micro_batches)
