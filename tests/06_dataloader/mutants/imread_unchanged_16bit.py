"""Reads with cv2.IMREAD_UNCHANGED "to keep the exact pixels": a 16-bit PNG comes back as a torch.uint16 tensor, breaking "ds[i] ... returns it as an HxWx3 torch.uint8 tensor" (IMREAD_COLOR always gives 8-bit, 3 channels)."""

from pathlib import Path

import cv2
import torch
from torch.utils.data import Dataset

EXPECT = r"IMREAD_UNCHANGED"  # what a learner who made this mistake must read


class ImageDirectoryDataset(Dataset):
    def __init__(self, root, pattern: str = "*.png") -> None:
        self.paths = sorted(Path(root).glob(pattern))

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        path = self.paths[index]
        return _to_rgb_tensor(cv2.imread(str(path), cv2.IMREAD_UNCHANGED), str(path))  # noqa: F821
