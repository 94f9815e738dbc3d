"""Worker k reads only paths[k]: with more shards than workers the rest are never read."""

from torch.utils.data import get_worker_info


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        for path in self.paths if info is None else self.paths[info.id:info.id + 1]:
            yield from _read_shard(path)  # noqa: F821
