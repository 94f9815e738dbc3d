"""seed_everything seeds torch only: Python's random and NumPy draw different numbers each run."""

EXPECT = r"Python's random has a generator of its own"

import torch


def seed_everything(seed):
    torch.manual_seed(seed)
