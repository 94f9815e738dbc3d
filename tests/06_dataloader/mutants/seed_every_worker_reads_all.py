"""The seed's first TarImageDataset: every worker's copy reads every shard from the start, so 2 workers give each image twice."""

import tarfile

import cv2
import numpy as np
from torch.utils.data import IterableDataset

EXPECT = r"duplicates trap"  # what a learner who made this mistake must read


def tar_image_iterator(path):
    tar = tarfile.open(path, "r")
    for tar_info in tar:
        file = tar.extractfile(tar_info)
        content = np.frombuffer(file.read(), np.uint8)
        yield _to_rgb_tensor(cv2.imdecode(content, 1), tar_info.name)  # noqa: F821 (decoded right)
        file.close()
        tar.members = []
    tar.close()


class TarImageDataset(IterableDataset):
    def __init__(self, paths):
        super().__init__()
        self.paths = paths

    def __iter__(self):
        for path in self.paths:
            yield from tar_image_iterator(path)
