"""Restores torch's random state only: augmentation drawing from Python's random and NumPy differs after resuming."""

EXPECT = r"Python's random module"

import torch


def _set_rng_states(states):
    torch.set_rng_state(states["torch"].cpu())
