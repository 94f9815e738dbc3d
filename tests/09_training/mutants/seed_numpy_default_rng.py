"""Seeds NumPy with np.random.default_rng(seed), which leaves the global generator alone; breaks "Seed every random generator ... NumPy's global generator (np.random.*)"."""

EXPECT = r"default_rng\(seed\) builds a new generator"

import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.default_rng(seed)
    torch.manual_seed(seed)
