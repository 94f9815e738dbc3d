"""Decodes (and caches) every image in __init__ to make __getitem__ fast: breaks "found once in `__init__`; no image is read there" (a file is read when it is asked for)."""

from pathlib import Path

import cv2
import torch
from torch.utils.data import Dataset

EXPECT = r"not in __init__"  # what a learner who made this mistake must read


class ImageDirectoryDataset(Dataset):
    def __init__(self, root, pattern: str = "*.png") -> None:
        self.paths = sorted(Path(root).glob(pattern))
        self._images = [cv2.imread(str(p), cv2.IMREAD_COLOR) for p in self.paths]

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        return _to_rgb_tensor(self._images[index], str(self.paths[index]))  # noqa: F821
