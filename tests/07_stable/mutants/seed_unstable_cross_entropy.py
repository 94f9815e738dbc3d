"""The first cross entropy one writes: log(softmax(x)) is -inf once a probability underflows."""

EXPECT = r"log\(softmax\(x\)\)"

import torch


def softmax_cross_entropy(labels, logits, dim=-1):
    return -(labels * torch.log(stable_softmax(logits, dim))).sum(dim=dim)  # noqa: F821 (the reference's)
