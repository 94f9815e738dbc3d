"""Reads every image in __init__: the whole dataset in memory (once per worker), and stale if a file changes."""

EXPECT = r"not in __init__"  # what a learner who made this mistake must read

_lazy = ImageDirectoryDataset  # noqa: F821 (the reference's)


class ImageDirectoryDataset(_lazy):
    def __init__(self, root, pattern="*.png"):
        super().__init__(root, pattern)
        self.images = [_lazy.__getitem__(self, i) for i in range(len(self.paths))]

    def __getitem__(self, index):
        return self.images[index]
