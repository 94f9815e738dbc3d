"""Ignores micro_batches and runs the whole batch at once: right gradients, but the memory the split should save is spent."""

EXPECT = r"tensor_split"


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    if not 1 <= micro_batches <= inputs.shape[0]:
        raise ValueError(f"micro_batches must be in [1, {inputs.shape[0]}], got {micro_batches}")
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    return loss.item()
