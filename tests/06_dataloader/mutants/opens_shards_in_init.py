"""Opens the shards once in __init__: the streams are used up after one epoch, and forked workers share their file offsets."""

import tarfile

import cv2
import numpy as np
from torch.utils.data import IterableDataset, get_worker_info

EXPECT = r"open shards in __iter__"  # what a learner who made this mistake must read


class TarImageDataset(IterableDataset):
    def __init__(self, paths):
        super().__init__()
        self.tars = [tarfile.open(path, mode="r|") for path in paths]

    def __iter__(self):
        info = get_worker_info()
        for tar in self.tars if info is None else self.tars[info.id::info.num_workers]:
            for member in tar:
                if member.isfile():
                    data = tar.extractfile(member).read()
                    yield _to_rgb_tensor(cv2.imdecode(np.frombuffer(data, np.uint8), 1), member.name)  # noqa: F821
