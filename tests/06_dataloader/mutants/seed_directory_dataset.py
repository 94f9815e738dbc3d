"""The seed's ImageDirectoryDataset (typos fixed): unsorted glob, a random file whatever the index, BGR numpy arrays."""

VARIES = "it picks a file at random from a glob whose order is the file system's"

import glob
import os
import random

import cv2
from torch.utils.data import Dataset


class ImageDirectoryDataset(Dataset):
    def __init__(self, root, pattern="*.png"):
        self.paths = list(glob.glob(os.path.join(root, pattern)))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        path = random.choice(self.paths)
        return cv2.imread(path, 1)
