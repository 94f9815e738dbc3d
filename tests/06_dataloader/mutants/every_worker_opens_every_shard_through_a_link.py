"""Yields its own share of the shards, but reads every other shard too, each by a hard link of its own named *.x (a red team's, whose links hid the reads from an audit that went by name): every shard opened by every worker."""

import os
import tempfile
from pathlib import Path

from torch.utils.data import get_worker_info

EXPECT = r"opened by more than one worker"  # what a learner who made this mistake must read


class TarImageDataset(TarImageDataset):  # noqa: F821 (the reference's)
    def __iter__(self):
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id::info.num_workers]
        links = Path(tempfile.mkdtemp())
        for i, path in enumerate(self.paths):
            if path in mine:
                yield from _read_shard(path)  # noqa: F821
                continue
            link = links / f"{i}.x"
            try:
                os.link(path, link)
            except OSError:  # another file system: a symbolic link, then
                link.symlink_to(Path(path).resolve())
            for _ in _read_shard(link):  # noqa: F821 (read, and thrown away)
                pass
