"""The checkpoint holds torch's CPU random state but not CUDA's: dropout on the GPU draws other masks after resuming."""

EXPECT = r"get_rng_state_all"

import random

import numpy as np
import torch


def _rng_states():
    name, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    return {"torch": torch.get_rng_state(), "cuda": [], "python": random.getstate(),
            "numpy": (name, keys.tolist(), pos, has_gauss, cached_gaussian)}
