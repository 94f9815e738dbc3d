"""Avoids duplicates by letting worker 0 read every shard while the others idle: right images, no parallel reading."""

from torch.utils.data import get_worker_info

EXPECT = r"differ by at most one"  # what a learner who made this mistake must read


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        if info is None or info.id == 0:
            for path in self.paths:
                yield from _read_shard(path)  # noqa: F821
