"""Calls the built-in it was asked to write: correct values, but the lesson's point is lost."""

EXPECT = r"write yourself"

import torch


def stable_softmax(logits, dim=-1):
    return logits.softmax(dim)


def logsumexp(x, dim=-1):
    return torch.special.logsumexp(x, dim)
