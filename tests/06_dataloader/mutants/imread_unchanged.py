"""Reads with cv2.IMREAD_UNCHANGED: a grayscale file comes back 2-D and an RGBA file with 4 channels."""

import cv2
import torch

EXPECT = r"IMREAD_UNCHANGED"  # what a learner who made this mistake must read


class ImageDirectoryDataset(ImageDirectoryDataset):  # noqa: F821 (the reference's)
    def __getitem__(self, index):
        image = cv2.imread(str(self.paths[index]), cv2.IMREAD_UNCHANGED)
        if image is None:
            raise OSError(f"cannot read {self.paths[index]}")
        return torch.from_numpy(image[..., ::-1].copy())  # BGR(A) -> reversed, still not 3 channels
