"""Checks cv2.imdecode's None but not the member's length: an empty member makes cv2.imdecode raise a cv2.error (no shard, no member named) instead of the promised OSError."""

import tarfile

import cv2
import numpy as np

EXPECT = r"zero bytes"  # what a learner who made this mistake must read


def _read_shard(path):
    with tarfile.open(path, mode="r|") as tar:
        for member in tar:
            if member.isfile():
                data = np.frombuffer(tar.extractfile(member).read(), dtype=np.uint8)
                yield _to_rgb_tensor(cv2.imdecode(data, cv2.IMREAD_COLOR), f"{path} (member {member.name})")  # noqa: F821
