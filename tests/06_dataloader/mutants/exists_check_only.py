"""Checks path.exists() instead of cv2's None: a corrupt/non-image file raises cv2.error (not OSError), breaking "An unreadable or corrupt file raises OSError naming the file"."""

from pathlib import Path

import cv2
import torch
from torch.utils.data import Dataset

EXPECT = r"silent failure"  # what a learner who made this mistake must read


class ImageDirectoryDataset(Dataset):
    def __init__(self, root, pattern: str = "*.png") -> None:
        self.paths = sorted(Path(root).glob(pattern))

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        path = self.paths[index]
        if not path.exists():
            raise FileNotFoundError(f"no such image: {path}")
        bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
        return torch.from_numpy(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
