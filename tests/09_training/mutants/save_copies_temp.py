"""save_checkpoint writes a temporary file, then copies it onto the path: the copy rewrites the old file in place, not atomically."""

EXPECT = r"atomic"

import contextlib
import os
import shutil
import tempfile

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
        shutil.copyfile(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
