"""Every worker opens every shard and keeps image j when j % num_workers == id: each image still comes once, but breaks "every shard is opened by exactly one worker" / "each worker opens only its own"."""

from torch.utils.data import IterableDataset, get_worker_info

EXPECT = r"opened by more than one worker"  # what a learner who made this mistake must read


class TarImageDataset(IterableDataset):
    def __init__(self, paths) -> None:
        super().__init__()
        self.paths = list(paths)

    def __iter__(self):
        info = get_worker_info()
        wid, n = (0, 1) if info is None else (info.id, info.num_workers)
        j = 0
        for path in self.paths:
            for image in _read_shard(path):  # noqa: F821
                if j % n == wid:
                    yield image
                j += 1
