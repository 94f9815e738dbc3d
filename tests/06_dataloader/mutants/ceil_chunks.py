"""Cuts ceil(len / num_shards)-sized chunks: 5 images in 4 shards are 2, 2, 1, 0, an empty shard while others hold two."""

import math
from pathlib import Path


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    Path(directory).mkdir(parents=True, exist_ok=True)
    size = math.ceil(len(images) / num_shards)
    paths = [Path(directory) / f"{s}.tar" for s in range(num_shards)]
    for s, path in enumerate(paths):
        _write_tar(path, images, range(s * size, min((s + 1) * size, len(images))))  # noqa: F821
    return paths
