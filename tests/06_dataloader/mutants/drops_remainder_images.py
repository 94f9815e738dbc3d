"""Writes only len // num_shards images per shard and forgets the remainder: 13 images in 5 shards lose 3."""

_reference = write_tar_shards  # noqa: F821 (the reference's)


def write_tar_shards(images, directory, num_shards):
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    return _reference(images[: len(images) // num_shards * num_shards], directory, num_shards)
