"""save_checkpoint makes its temporary file in the system's temp folder: os.replace across file systems fails."""

EXPECT = r"own folder"

import contextlib
import os
import tempfile

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    fd, tmp = tempfile.mkstemp(suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
        os.replace(tmp, os.fspath(path))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
