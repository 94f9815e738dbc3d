"""np.ascontiguousarray(a) first: fine for contiguous arrays, a silent copy of every non-contiguous view."""

EXPECT = r"\.contiguous\(\) pitfall"

import numpy as np
import torch


def from_numpy(a):
    return torch.from_numpy(np.ascontiguousarray(a))
