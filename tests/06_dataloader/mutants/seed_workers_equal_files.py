"""The seed's second TarImageDataset: one file per worker, ValueError for any other num_workers (0 included)."""

import torch

EXPECT = r"only when num_workers equals the number of shards"  # what a learner who made this mistake must read


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        worker_info = torch.utils.data.get_worker_info()
        # For simplicity we assume num_workers is equal to number of tar files
        if worker_info is None or worker_info.num_workers != len(self.paths):
            raise ValueError("Number of workers doesn't match number of files.")
        yield from _read_shard(self.paths[worker_info.id])  # noqa: F821
