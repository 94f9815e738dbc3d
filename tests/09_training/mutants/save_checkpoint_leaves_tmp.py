"""Atomic save via mkstemp + os.replace, but the temporary file is not removed when torch.save fails; breaks "if saving fails, `path` keeps its old content and no temporary file is left behind"."""

EXPECT = r"remove the temporary file"

import os
import tempfile

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "rng": _rng_states(),
    }
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        torch.save(checkpoint, f)
    os.replace(tmp, path)
