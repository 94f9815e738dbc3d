"""Deals the images out round robin (image i to shard i % n): balanced, but reading the shards in order scrambles the images."""

from pathlib import Path

EXPECT = r"dealt out like cards"  # what a learner who made this mistake must read


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    Path(directory).mkdir(parents=True, exist_ok=True)
    paths = [Path(directory) / f"{s}.tar" for s in range(num_shards)]
    for s, path in enumerate(paths):
        _write_tar(path, images, range(s, len(images), num_shards))  # noqa: F821
    return paths
