"""Stores list(np.random.get_state()): a list, but its keys are still an np.ndarray, so torch.load(weights_only=True)
refuses the file, and every test that loads what save_checkpoint wrote must say that (not torch's advice to drop
weights_only, not a save that destroyed the old file, not a load_state_dict that is not strict)."""

EXPECT = r"^load_checkpoint cannot read back what save_checkpoint wrote: .* refuses numpy\S*\. .*\(\.tolist\(\)\)"

import random

import numpy as np
import torch


def _rng_states():
    return {"torch": torch.get_rng_state(), "cuda": [], "python": random.getstate(),
            "numpy": list(np.random.get_state())}


def _set_rng_states(states):
    torch.set_rng_state(states["torch"].cpu())
    random.setstate(states["python"])
    np.random.set_state(tuple(states["numpy"]))
