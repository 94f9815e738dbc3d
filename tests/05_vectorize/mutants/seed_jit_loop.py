"""The seed's loop under @torch.jit.script: TorchScript still runs it row by row, about as slow as plain Python."""

import torch

EXPECT = r"@torch\.jit\.script does not remove the loop"  # what a learner who made this mistake must read


@torch.jit.script
def batch_gather(tensor, indices):
    picked = []
    for row in range(tensor.size(0)):
        picked += [tensor[row][indices[row]]]
    return torch.stack(picked)
