"""The seed's vectorised version verbatim: the offset is made with a hard-coded .cuda(), which fails on a machine without a GPU."""

import torch

EXPECT = r"device pitfall|input.s device"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    shape = list(tensor.shape)
    flat_first = torch.reshape(
        tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(
        torch.arange(shape[0]).cuda() * shape[1],
        [shape[0]] + [1] * (len(indices.shape) - 1))
    output = flat_first[indices + offset]
    return output
