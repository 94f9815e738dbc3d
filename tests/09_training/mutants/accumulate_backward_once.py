"""Adds up the chunks' weighted losses and calls backward once: every chunk's graph stays alive until the end."""

EXPECT = r"before the next chunk's forward"


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    if not 1 <= micro_batches <= n:
        raise ValueError(f"micro_batches must be in [1, {n}], got {micro_batches}")
    model.zero_grad(set_to_none=True)
    chunks = zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches))
    loss = sum(loss_fn(model(x), y) * (len(x) / n) for x, y in chunks)
    loss.backward()
    return loss.item()
