"""Accepts any micro_batches: 0 crashes inside tensor_split, more chunks than samples gives nan gradients."""

EXPECT = r"1 <= micro_batches"

import torch

_reference = accumulate_gradients  # noqa: F821 (the reference's)


def accumulate_gradients(model, loss_fn, inputs, targets, micro_batches):
    n = inputs.shape[0]
    if 1 <= micro_batches <= n:
        return _reference(model, loss_fn, inputs, targets, micro_batches)
    model.zero_grad(set_to_none=True)
    for x, y in zip(torch.tensor_split(inputs, micro_batches), torch.tensor_split(targets, micro_batches)):
        (loss_fn(model(x), y) * (len(x) / n)).backward()  # an empty chunk's mean is nan
    return float("nan")
