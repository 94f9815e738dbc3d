"""Lesson 06: data loading. A dataset over image files, tar shards, and a streaming dataset
that gives every image exactly once, however many DataLoader workers read it.

Two kinds of dataset
--------------------
torch.utils.data knows two kinds. A *map-style* `Dataset` has `__len__` and `__getitem__(i)`:
the DataLoader's sampler chooses the indices (in order, shuffled, split across machines) and
hands each worker process its own indices, so every item is read once without any effort on
your part. An `IterableDataset` has only `__iter__`: a stream, for data that is read from
front to back, and then *you* decide who reads what.

Why shards
----------
One file per image means one open, one lookup and one small read per item, in random order.
On a local SSD that is fine. On network storage every request pays a round trip, and a
training run that asks for a million small files spends its time waiting. Pack the images
into a few large archives instead (a tar file is just the files one after another, each
behind a 512-byte header) and read each archive sequentially: long sequential reads are what
every disk, network file system and object store does best. Python's tarfile can read an
archive as a stream, front to back, without seeking. Not every member of a tar is an image:
a tar made from a folder also holds the folder's directory entry, and a tar may hold links;
such members have no bytes of their own. (A TarFile also keeps every member's header in
`tar.members` as it goes: for millions of members, a slow leak of its own.)

The duplicates trap
-------------------
With `num_workers=N` the DataLoader gives each of N worker processes its own copy of the
dataset and calls `iter()` on every copy. An `__iter__` that simply reads all the shards runs
N times, and every image comes out N times. With `num_workers` 0 or 1 the bug is invisible,
which is why it survives until someone turns the workers up. Nothing outside the copy splits
the work for it (unlike a map-style dataset, whose sampler hands out indices): each copy has
to find out for itself which part of the stream is its own. With fewer shards than workers
some workers have nothing to read (correct, but they idle: write at least as many shards as
you will run workers, ideally a multiple). With `num_workers=0` the shards are read in order;
with workers the DataLoader takes a batch from each worker in turn, so the order interleaves,
but nothing repeats and nothing is lost. The classic recipe shows two first attempts that
fail here: one lets every worker read everything (the trap above), the other gives worker k
the file paths[k] and so only works when `num_workers` equals the number of files, refusing
everything else, `num_workers=0` included.

DataLoader options worth knowing
--------------------------------
- `num_workers`: processes that load while the model computes. Tune it, do not assume it:
  with tiny images on a machine with few cores, 2 workers can be *slower* than 0 (starting the
  processes and passing tensors between them costs more than decoding). Workers pay off when
  reading, decoding and augmenting an item takes real time.
- `batch_size` and `collate_fn`: the default collate stacks a batch of HxWx3 images into
  (B, H, W, 3), so they must have one size; for mixed sizes write a collate_fn (pad, or keep
  a list). `batch_size=None` turns batching off. The default, 1, adds a leading dim of 1.
- `pin_memory=True`: batches land in page-locked host memory, which makes host-to-GPU copies
  (`.to("cuda", non_blocking=True)`) faster. It does nothing for CPU-only training.
- `persistent_workers=True`: keep the workers alive between epochs instead of starting them
  again each time; `prefetch_factor`: batches each worker prepares ahead (default 2).
- Randomness: each worker seeds torch, `random` and NumPy's global generator from
  `base_seed + worker_id` (a new base_seed every epoch; PyTorch >= 1.9 does this for you).
  A generator you made yourself (`np.random.default_rng(0)` or a `torch.Generator` kept on
  the dataset) is copied into every worker as it is, so all workers draw the same "random"
  augmentations. Seed it per worker in a `worker_init_fn`, from the seed torch gave that
  worker.

OpenCV's traps
--------------
- cv2 works in BGR, both ways: its decoders give BGR and its encoders read BGR, while
  PyTorch, PIL, matplotlib and pretrained models work in RGB. A swapped image still looks
  like a photo, so nothing crashes; the colours, and the model, are quietly wrong. The
  one-liner that reverses the channel axis, `img[..., ::-1]`, is a view with a negative
  stride, which `torch.from_numpy` refuses.
- `cv2.imread` and `cv2.imdecode` report a missing, unreadable or corrupt file by returning
  None, silently; the error then surfaces later, far away, naming nothing. And not every bad
  input gets that treatment: an empty buffer makes `cv2.imdecode` raise a cv2.error instead.
- The flag a decoder gets decides what comes back: some flags keep what the file holds (a
  2-D array for grayscale, a 4th channel for alpha, uint16 for 16-bit files), others convert.
  A folder of "RGB images" scraped from anywhere holds all of these.
- Shards must be lossless: JPEG changes the pixels it stores.

    >>> ds = ImageDirectoryDataset("photos")            # photos/*.png, 6x10 pixels each
    >>> ds[0].shape, ds[0].dtype                        # the first name in sorted order
    (torch.Size([6, 10, 3]), torch.uint8)
    >>> shards = write_tar_shards([ds[i] for i in range(len(ds))], "shards", num_shards=4)
    >>> loader = DataLoader(TarImageDataset(shards), batch_size=2, num_workers=2)
    >>> next(iter(loader)).shape
    torch.Size([2, 6, 10, 3])

What the tests expect
---------------------
- Every image is an HxWx3 torch.uint8 tensor in RGB order with exactly the pixels stored,
  whatever kind of image file it came from.
- `ImageDirectoryDataset`: `paths` is a list of Path, the files directly in `root` matching
  `pattern`, in Python's `sorted()` order; index i reads `paths[i]` when it is asked for
  (nothing is read in `__init__`); a file that cannot be read, for whatever reason, raises
  OSError naming it (through a DataLoader with workers, too); an index past the end raises
  IndexError.
- `write_tar_shards`: a list of `num_shards` Paths to tar files whose members are PNG-encoded;
  read one after another they give the images back in order, pixel for pixel; shard sizes
  differ by at most one, the first shards taking the extra ones; the directory is created if
  missing; ValueError for `num_shards` < 1, before anything is written.
- `TarImageDataset`: every image exactly once, whatever the number of workers (0 to 4) and
  shards (1 to 5), with and without batching, epoch after epoch; with `num_workers=0` in the
  order given. In a worker, each shard is opened by that worker only and read whole, its
  shards in the order given, the shares differing by at most one shard (which shards go to
  which worker is yours to choose); shards are opened while iterating, never in `__init__`.
  Members that are not regular files are skipped; a regular member that does not decode, of
  any name, raises OSError naming the shard and the member.

Check your work with:  pytest exercises/06_dataloader
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset


class ImageDirectoryDataset(Dataset):
    """Map-style dataset over the image files in `root` whose names match `pattern`.

    `paths` (list[Path]) holds the matching files directly in `root`, in Python's sorted()
    order, found once in `__init__`; no image is read there. `len(ds)` is the number of paths,
    and `ds[i]` reads `paths[i]` when asked and returns it as an HxWx3 torch.uint8 tensor in
    RGB order, whatever kind of image file it is. A file that cannot be read raises OSError
    naming the file; an index past the end raises IndexError, as a list does.
    """

    def __init__(self, root: str | os.PathLike, pattern: str = "*.png") -> None:
        # TODO: self.paths: the files directly in `root` whose names match `pattern`, as a
        #       list of Path in an order that is the same on every machine. Read no image here.
        raise NotImplementedError

    def __len__(self) -> int:
        # TODO: how many images the dataset holds.
        raise NotImplementedError

    def __getitem__(self, index: int) -> torch.Tensor:
        # TODO: image `index`, read from its file now (no cache): an HxWx3 torch.uint8 tensor
        #       in RGB order with exactly the file's pixels, whatever the file holds. OSError
        #       naming the file when it cannot be read; IndexError past the end.
        raise NotImplementedError


def write_tar_shards(images: Sequence[torch.Tensor], directory: str | os.PathLike, num_shards: int) -> list[Path]:
    """Write `images` (HxWx3 uint8 RGB tensors) into `num_shards` tar files in `directory`.

    The directory is created if it is missing. Each image becomes one PNG member that any
    PNG reader decodes to exactly the image's RGB pixels. The images are cut into
    contiguous runs, in order, whose sizes differ by at most one (the first shards take the
    extra ones), so reading the shards one after another gives the images back in their
    original order.
    With more shards than images the last shards are empty (valid) tar files. Returns the
    shard paths in order. Raises ValueError when `num_shards` < 1.
    """
    # TODO: refuse num_shards < 1 (ValueError) before touching the disk; create the directory;
    #       write num_shards tar files of PNG members which, read shard after shard, give back
    #       every image, in order, pixel for pixel; contiguous runs whose sizes differ by at
    #       most one, the first shards taking the extra ones. Return the paths, in order.
    raise NotImplementedError


class TarImageDataset(IterableDataset):
    """Streams the images of the tar shards `paths`, each exactly once per epoch.

    Yields HxWx3 torch.uint8 RGB tensors, one per regular-file member, whatever its name and
    image format; members that are not regular files are skipped. Outside a DataLoader
    worker (or with num_workers=0) it reads every shard in the order given. In a DataLoader worker it reads
    only its own share of the shards, each whole and in the order given: every shard is
    opened by exactly one worker, the shares differ by at most one shard, and a worker
    without a shard (more workers than shards) yields nothing. A member that cannot be
    decoded raises OSError naming the shard and the member.
    """

    def __init__(self, paths: Sequence[str | os.PathLike]) -> None:
        super().__init__()
        # TODO: keep the shard paths as a list, in the order given. Open nothing here.
        raise NotImplementedError

    def __iter__(self) -> Iterator[torch.Tensor]:
        # TODO: yield the images of this process's share of the shards as HxWx3 uint8 RGB
        #       tensors. Outside a worker: every shard, in the order given. In a worker: its
        #       own share, so that across all workers every image comes exactly once, no shard
        #       is opened by two workers, and the shares differ by at most one shard. Read each
        #       shard front to back, whole; skip members that are not regular files; a member
        #       that does not decode raises OSError naming shard and member.
        raise NotImplementedError
