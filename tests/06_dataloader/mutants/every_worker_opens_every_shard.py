"""Splits by member index (worker k keeps images k, k + n, ...): each image once, but every worker opens and reads every shard."""

import itertools

from torch.utils.data import get_worker_info

EXPECT = r"opened by more than one worker"  # what a learner who made this mistake must read


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        images = (image for path in self.paths for image in _read_shard(path))  # noqa: F821
        yield from itertools.islice(images, worker, None, workers)
