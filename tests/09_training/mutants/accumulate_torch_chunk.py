"""Splits with torch.chunk instead of torch.tensor_split (weights stay right, chunk count/sizes differ); breaks "The chunks are torch.tensor_split(inputs, micro_batches) ... each gets one forward and one backward"."""

EXPECT = r"tensor_split"

import torch


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    if not 1 <= micro_batches <= n:
        raise ValueError(f"micro_batches must be between 1 and {n}, got {micro_batches}")
    model.zero_grad(set_to_none=True)
    total = 0.0
    for x, y in zip(torch.chunk(inputs, micro_batches), torch.chunk(targets, micro_batches)):
        loss = loss_fn(model(x), y) * (x.shape[0] / n)
        loss.backward()
        total += loss.item()
    return total
