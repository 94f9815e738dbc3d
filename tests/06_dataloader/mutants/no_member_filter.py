"""Decodes every tar member, directory entries too: tar.extractfile gives None for those and .read() fails."""

import tarfile

import cv2
import numpy as np

EXPECT = r"isfile"  # what a learner who made this mistake must read


def _read_shard(path):
    with tarfile.open(path, mode="r|") as tar:
        for member in tar:
            data = np.frombuffer(tar.extractfile(member).read(), dtype=np.uint8)
            yield _to_rgb_tensor(cv2.imdecode(data, cv2.IMREAD_COLOR), f"{path}: {member.name}")  # noqa: F821
