"""Stores np.random.get_state() as it is: its np.ndarray makes torch.load(weights_only=True) refuse the file."""

EXPECT = r"tolist"

import random

import numpy as np
import torch


def _rng_states():
    return {"torch": torch.get_rng_state(), "cuda": [], "python": random.getstate(), "numpy": np.random.get_state()}


def _set_rng_states(states):
    torch.set_rng_state(states["torch"].cpu())
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
