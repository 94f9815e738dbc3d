"""torch.save straight onto the path: a save interrupted midway leaves a truncated checkpoint and loses the old one."""

EXPECT = r"atomic"

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    torch.save(checkpoint, path)
