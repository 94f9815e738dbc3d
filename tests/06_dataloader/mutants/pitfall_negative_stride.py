"""Turns BGR into RGB with img[..., ::-1], a view with a negative stride, and hands it to torch.from_numpy, which refuses it (a ValueError for every image)."""

import cv2
import torch

EXPECT = r"negative-stride pitfall"  # what a learner who made this mistake must read


class ImageDirectoryDataset(ImageDirectoryDataset):  # noqa: F821 (the reference's)
    def __getitem__(self, index):
        path = self.paths[index]
        bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if bgr is None:
            raise OSError(f"could not read an image from {path}")
        return torch.from_numpy(bgr[..., ::-1])  # BGR -> RGB as a view: negative stride
