"""accumulate_gradients clears with zero_grad(set_to_none=False): a parameter the loss does not use keeps a grad of zeros, which weight decay steps."""

EXPECT = r"set_to_none"

import torch


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    if not 1 <= micro_batches <= n:
        raise ValueError(f"micro_batches must be between 1 and {n}, got {micro_batches}")
    model.zero_grad(set_to_none=False)
    total = 0.0
    for x, y in zip(torch.tensor_split(inputs, micro_batches), torch.tensor_split(targets, micro_batches)):
        loss = loss_fn(model(x), y) * (x.shape[0] / n)
        loss.backward()
        total += loss.item()
    return total
