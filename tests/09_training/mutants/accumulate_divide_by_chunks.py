"""Scales each chunk's loss by 1/micro_batches instead of n_k/N; breaks "the same .grad as one full batch (uneven chunks too)" ("Dividing by the number of chunks instead is right only when all chunks have the same size")."""

EXPECT = r"divided by the number of chunks"

import torch


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    if not 1 <= micro_batches <= n:
        raise ValueError(f"micro_batches must be between 1 and {n}, got {micro_batches}")
    model.zero_grad(set_to_none=True)
    total = 0.0
    for x, y in zip(torch.tensor_split(inputs, micro_batches), torch.tensor_split(targets, micro_batches)):
        loss = loss_fn(model(x), y) / micro_batches
        loss.backward()
        total += loss.item()
    return total
