"""Gives worker k the shards [k * c, (k + 1) * c) with c = len(paths) // num_workers: the leftover shards are never read."""

from torch.utils.data import get_worker_info


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        if info is None:
            chunk = self.paths
        else:
            size = len(self.paths) // info.num_workers
            chunk = self.paths[info.id * size:(info.id + 1) * size]
        for path in chunk:
            yield from _read_shard(path)  # noqa: F821
