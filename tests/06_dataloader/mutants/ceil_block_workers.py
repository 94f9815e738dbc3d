"""Gives each worker a contiguous block of ceil(S / n) shards: 5 shards on 4 workers -> 2, 2, 1, 0, breaking "the workers' counts differ by at most one" (shards spread evenly)."""

import math

from torch.utils.data import IterableDataset, get_worker_info

EXPECT = r"differ by at most one"  # what a learner who made this mistake must read


class TarImageDataset(IterableDataset):
    def __init__(self, paths) -> None:
        super().__init__()
        self.paths = list(paths)

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            mine = self.paths
        else:
            per = math.ceil(len(self.paths) / info.num_workers)
            mine = self.paths[info.id * per:(info.id + 1) * per]
        for path in mine:
            yield from _read_shard(path)  # noqa: F821
