"""Keeps the paths in the order the file system lists them: index i is a different file on another machine."""

from pathlib import Path

EXPECT = r"directory-order pitfall"  # what a learner who made this mistake must read


class ImageDirectoryDataset(ImageDirectoryDataset):  # noqa: F821 (the reference's)
    def __init__(self, root, pattern="*.png"):
        self.paths = list(Path(root).glob(pattern))
