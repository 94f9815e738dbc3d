"""Converts with a.astype(np.float32) first: a copy, and float64 or integer arrays change dtype."""

EXPECT = r"dtype conversion"

import numpy as np
import torch


def from_numpy(a):
    return torch.from_numpy(a.astype(np.float32))
