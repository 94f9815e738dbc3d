"""seed_everything ignores its argument and always seeds 0: every seed gives the same run."""

EXPECT = r"use the seed passed in"

import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
