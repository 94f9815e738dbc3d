"""Yields what cv2.imdecode gives: BGR, not RGB."""

import tarfile

import cv2
import numpy as np
import torch

EXPECT = r"BGR pitfall"  # what a learner who made this mistake must read


def _read_shard(path):
    with tarfile.open(path, mode="r|") as tar:
        for member in filter(tarfile.TarInfo.isfile, tar):
            bgr = cv2.imdecode(np.frombuffer(tar.extractfile(member).read(), np.uint8), cv2.IMREAD_COLOR)
            if bgr is None:
                raise OSError(f"cannot decode {member.name} in {path}")
            yield torch.from_numpy(bgr)
