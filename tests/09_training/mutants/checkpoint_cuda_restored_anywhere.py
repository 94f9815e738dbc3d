"""load_checkpoint restores the saved CUDA random states even on a machine without CUDA."""

import random

import numpy as np
import torch


def _set_rng_states(states):
    torch.set_rng_state(states["torch"].cpu())
    torch.cuda.set_rng_state_all([s.cpu() for s in states["cuda"]])
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    name, keys, pos, has_gauss, cached_gaussian = states["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached_gaussian))
