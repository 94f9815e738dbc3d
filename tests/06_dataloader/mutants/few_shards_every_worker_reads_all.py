"""With fewer shards than workers, lets every worker read all of them ("nothing to split"): duplicates."""

from torch.utils.data import get_worker_info

EXPECT = r"duplicates trap"  # what a learner who made this mistake must read


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        if info is None or len(self.paths) < info.num_workers:
            mine = self.paths
        else:
            mine = self.paths[info.id::info.num_workers]
        for path in mine:
            yield from _read_shard(path)  # noqa: F821
