"""torch.tensor(a) copies the array: writes no longer reach the other side."""

import torch


def from_numpy(a):
    return torch.tensor(a)
