"""Sorts the shard paths in __init__ "for determinism": with num_workers=0 shards given out of name order are read in sorted order, breaking "reads every shard in the order given"."""

from torch.utils.data import IterableDataset, get_worker_info

EXPECT = r"sorted order: keep the paths in the order given"  # what a learner who made this mistake must read


class TarImageDataset(IterableDataset):
    def __init__(self, paths) -> None:
        super().__init__()
        self.paths = sorted(paths, key=str)

    def __iter__(self):
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id::info.num_workers]
        for path in mine:
            yield from _read_shard(path)  # noqa: F821
