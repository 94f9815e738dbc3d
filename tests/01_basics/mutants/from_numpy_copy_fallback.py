"""Falls back to a copy when torch.from_numpy refuses: breaks "Arrays with negative strides (a[::-1]) cannot be shared: ValueError" (returns a copy instead)."""

import numpy as np
import torch


def from_numpy(a):
    try:
        return torch.from_numpy(a)
    except ValueError:
        return torch.from_numpy(a.copy())  # negative strides: make them positive
