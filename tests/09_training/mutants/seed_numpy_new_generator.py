"""seed_everything builds np.random.default_rng(seed), which leaves NumPy's global generator unseeded."""

EXPECT = r"default_rng\(seed\) builds a new generator"

import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.default_rng(seed)
    torch.manual_seed(seed)
