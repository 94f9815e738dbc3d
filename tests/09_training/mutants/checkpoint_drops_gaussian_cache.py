"""The NumPy state is saved as (name, keys, pos) only: its cached Gaussian is lost, the first randn after resuming differs."""

EXPECT = r"cached Gaussian"

import random

import numpy as np
import torch


def _rng_states():
    name, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    return {"torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "python": random.getstate(), "numpy": (name, keys.tolist(), pos)}


def _set_rng_states(states):
    torch.set_rng_state(states["torch"].cpu())
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in states["cuda"]])
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    name, keys, pos = states["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos))
