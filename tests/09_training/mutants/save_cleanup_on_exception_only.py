"""save_checkpoint removes its temporary file on `except Exception`: a Ctrl-C (KeyboardInterrupt) mid-save leaves it behind."""

EXPECT = r"BaseException"

import contextlib
import os
import tempfile

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
        os.replace(tmp, path)
    except Exception:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
