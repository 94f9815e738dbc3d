"""Trusts cv2.imdecode: a member that is not an image gives None and an error that names neither shard nor member."""

import tarfile

import cv2
import numpy as np
import torch

EXPECT = r"silent failure"  # what a learner who made this mistake must read


def _read_shard(path):
    tar = tarfile.open(path, mode="r|")
    for member in tar:
        if member.isfile():
            bgr = cv2.imdecode(np.frombuffer(tar.extractfile(member).read(), np.uint8), cv2.IMREAD_COLOR)
            yield torch.from_numpy(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
