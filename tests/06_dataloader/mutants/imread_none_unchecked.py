"""Trusts cv2.imread: a corrupt file gives None and a cv2.error from cvtColor that names no file."""

import cv2
import torch

EXPECT = r"silent failure"  # what a learner who made this mistake must read


class ImageDirectoryDataset(ImageDirectoryDataset):  # noqa: F821 (the reference's)
    def __getitem__(self, index):
        bgr = cv2.imread(str(self.paths[index]), cv2.IMREAD_COLOR)
        return torch.from_numpy(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
