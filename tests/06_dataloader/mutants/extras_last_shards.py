"""Gives the leftover images to the LAST shards instead of the first: breaks "the first shards take the extra ones" (10 images, 4 shards -> 2,2,3,3 instead of 3,3,2,2)."""

from pathlib import Path

EXPECT = r"first shards take the extra"  # what a learner who made this mistake must read


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    per_shard, extra = divmod(len(images), num_shards)
    paths, start = [], 0
    for shard in range(num_shards):
        stop = start + per_shard + (shard >= num_shards - extra)
        path = directory / f"shard-{shard:05d}.tar"
        _write_tar(path, images, range(start, stop))  # noqa: F821
        paths.append(path)
        start = stop
    return paths
