"""torch.tensor(a) copies the array: writes no longer reach the other side."""

EXPECT = r"is a copy"

import torch


def from_numpy(a):
    return torch.tensor(a)
