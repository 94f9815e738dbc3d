"""Uses Path.rglob(pattern): PNGs in subfolders of root are picked up too, breaking "the image files in `root` whose names match `pattern`" (only files matching pattern)."""

from pathlib import Path

import cv2
import torch
from torch.utils.data import Dataset

EXPECT = r"rglob"  # what a learner who made this mistake must read


class ImageDirectoryDataset(Dataset):
    def __init__(self, root, pattern: str = "*.png") -> None:
        self.paths = sorted(Path(root).rglob(pattern))

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        path = self.paths[index]
        return _to_rgb_tensor(cv2.imread(str(path), cv2.IMREAD_COLOR), str(path))  # noqa: F821
