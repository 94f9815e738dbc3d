"""Never clears .grad first: whatever an earlier backward left there is added to the result."""

EXPECT = r"never discarded"

_reference = accumulate_gradients  # noqa: F821 (the reference's)


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    model.zero_grad = lambda set_to_none=True: None  # the reference's clearing now does nothing
    try:
        return _reference(model, loss_fn, inputs, targets, micro_batches)
    finally:
        del model.zero_grad
