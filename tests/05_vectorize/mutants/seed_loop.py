"""The seed's loop over the batch: right values, but one select and one index per row, then a stack (and no rows at all breaks torch.stack)."""

import torch

EXPECT = r"Python loop over the rows"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)
