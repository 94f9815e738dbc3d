"""seed_everything seeds torch only: Python's random and NumPy draw different numbers each run."""

import torch


def seed_everything(seed):
    torch.manual_seed(seed)
