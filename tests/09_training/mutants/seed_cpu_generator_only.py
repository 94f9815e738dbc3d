"""seed_everything seeds torch through torch.default_generator: the CUDA generators stay unseeded."""

EXPECT = r"seed every CUDA device"

import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.default_generator.manual_seed(seed)
