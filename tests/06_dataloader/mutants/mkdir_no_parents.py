"""Creates the directory with mkdir(exist_ok=True) but without parents=True: a missing nested directory raises FileNotFoundError, breaking "The directory is created if it is missing"."""

from pathlib import Path

EXPECT = r"parents"  # what a learner who made this mistake must read


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    directory = Path(directory)
    directory.mkdir(exist_ok=True)
    per_shard, extra = divmod(len(images), num_shards)
    paths, start = [], 0
    for shard in range(num_shards):
        stop = start + per_shard + (shard < extra)
        path = directory / f"shard-{shard:05d}.tar"
        _write_tar(path, images, range(start, stop))  # noqa: F821
        paths.append(path)
        start = stop
    return paths
