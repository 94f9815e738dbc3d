"""Returns cv2's pixels as they come: BGR, not RGB (red and blue swapped for every model downstream)."""

import cv2
import torch

EXPECT = r"BGR pitfall"  # what a learner who made this mistake must read


class ImageDirectoryDataset(ImageDirectoryDataset):  # noqa: F821 (the reference's)
    def __getitem__(self, index):
        image = cv2.imread(str(self.paths[index]), cv2.IMREAD_COLOR)
        if image is None:
            raise OSError(f"cannot read {self.paths[index]}")
        return torch.from_numpy(image)
