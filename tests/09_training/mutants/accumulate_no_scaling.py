"""Backward on each chunk's mean loss unscaled: the gradients come out about micro_batches times too big."""

EXPECT = r"unscaled"

_reference = accumulate_gradients  # noqa: F821 (the reference's)


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    # Undo the reference's chunk size / N weight: each chunk's plain mean gets backpropagated.
    return _reference(model, lambda out, y: loss_fn(out, y) * (n / len(y)), inputs, targets, micro_batches)
