"""The checkpoint holds the current GPU's random state only (torch.cuda.get_rng_state()), not every device's."""

EXPECT = r"get_rng_state_all"

import random

import numpy as np
import torch


def _rng_states():
    name, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    return {"torch": torch.get_rng_state(),
            "cuda": [torch.cuda.get_rng_state()] if torch.cuda.is_available() else [],
            "python": random.getstate(),
            "numpy": (name, keys.tolist(), pos, has_gauss, cached_gaussian)}
