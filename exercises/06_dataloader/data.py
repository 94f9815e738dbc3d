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
every disk, network file system and object store does best. `tarfile.open(path, mode="r|")`
reads a tar as a stream, member after member, without seeking; only regular files
carry data: a tar may also hold directory entries and links, for which there are no bytes to
decode. (A TarFile also keeps every member's header in `tar.members` as it goes; for millions
of members the classic recipe empties that list after each one.)

The duplicates trap
-------------------
With `num_workers=N` the DataLoader gives each of N worker processes its own copy of the
dataset and calls `iter()` on every copy. An `__iter__` that simply reads all the shards runs
N times, and every image comes out N times. With `num_workers` 0 or 1 the bug is invisible,
which is why it survives until someone turns the workers up. Inside a worker,
`torch.utils.data.get_worker_info()` says which worker this is (`.id`) and how many there are
(`.num_workers`); in the main process it returns None. So each copy can work out its own
share of the shards from those two numbers alone: every shard belongs to exactly one worker,
each worker opens only its own, and the shares differ by at most one shard. With fewer shards
than workers, the extra workers get no shard and yield nothing (correct, but they idle: write
at least as many shards as you will run workers, ideally a multiple). With `num_workers=0`
the shards are read in order; with workers the DataLoader takes a batch from each worker in
turn, so the order interleaves, but nothing repeats and nothing is lost. The classic recipe
shows two first attempts that fail here: one lets every worker read everything (the trap
above), the other gives worker k the file paths[k] and so only works when `num_workers`
equals the number of files, refusing everything else, `num_workers=0` included.

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
  augmentations. Seed it per worker in a `worker_init_fn`, from
  `torch.utils.data.get_worker_info().seed`.

OpenCV's traps
--------------
- cv2 stores pixels as BGR; everything else (PyTorch, PIL, matplotlib, pretrained models)
  expects RGB: convert after decoding, and back before encoding. (Reversing the channel axis
  with `img[..., ::-1]` gives a view with a negative stride, which `torch.from_numpy`
  refuses: copy it first, or let cv2 convert.)
- `cv2.imread` and `cv2.imdecode` return None, silently, for a missing, unreadable or corrupt
  file; the error then surfaces later, far away, naming nothing. Check and raise, naming the
  file. (Zero bytes are the exception: `cv2.imdecode` raises a cv2.error for an empty buffer,
  so check for that before decoding.)
- What a decoder gives depends on its flag: `cv2.IMREAD_COLOR` always gives 3 channels of 8
  bits (a grayscale file is repeated into three, an alpha channel is dropped, 16-bit values
  are cut to 8); `IMREAD_UNCHANGED` gives what the file holds: 2-D, 4-channel or uint16
  arrays.
- Shards must be lossless: PNG keeps every pixel, JPEG changes them.

    >>> ds = ImageDirectoryDataset("photos")            # photos/*.png, 6x10 pixels each
    >>> ds[0].shape, ds[0].dtype                        # the first name in sorted order
    (torch.Size([6, 10, 3]), torch.uint8)
    >>> shards = write_tar_shards([ds[i] for i in range(len(ds))], "shards", num_shards=4)
    >>> loader = DataLoader(TarImageDataset(shards), batch_size=2, num_workers=2)
    >>> next(iter(loader)).shape
    torch.Size([2, 6, 10, 3])

What the tests expect
---------------------
- Every image is an HxWx3 torch.uint8 tensor in RGB order, with exactly the pixels written.
- `ImageDirectoryDataset`: index i is the i-th matching path in sorted order; only files
  matching `pattern`; nothing is read in `__init__` (a file is read when it is asked for);
  an unreadable file raises OSError naming it (through a DataLoader with workers, too); an
  index past the end raises IndexError; grayscale, RGBA and 16-bit files give 3 channels
  of uint8.
- `write_tar_shards`: `num_shards` PNG-encoded shards, contiguous and balanced (sizes differ
  by at most one), directory created if missing; ValueError for `num_shards` < 1.
- `TarImageDataset`: every image exactly once for 0 to 4 workers and 1, 3, 4 or 5 shards,
  with and without batching, epoch after epoch; in order with `num_workers=0`; each shard is
  opened by one worker only, whole and in the order given, the shards spread evenly (shares
  differ by at most one); non-file members are skipped; a member that does not decode (an
  empty one too) raises OSError naming the shard and the member.

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
from torch.utils.data import Dataset, IterableDataset, get_worker_info


class ImageDirectoryDataset(Dataset):
    """Map-style dataset over the image files in `root` whose names match `pattern`.

    `paths` (list[Path]) holds the matching files in sorted order, found once in `__init__`;
    no image is read there. `len(ds)` is the number of paths, and `ds[i]` reads `paths[i]`
    with OpenCV and returns it as an HxWx3 torch.uint8 tensor in RGB order (grayscale and
    RGBA files give 3 channels too). An unreadable or corrupt file raises OSError naming the
    file; an index past the end raises IndexError, as a list does.
    """

    def __init__(self, root: str | os.PathLike, pattern: str = "*.png") -> None:
        # TODO: self.paths: the files directly in `root` (not in its subfolders) whose names
        #       match `pattern`, as a list of Path in sorted order, the same on every machine.
        #       Read no image here.
        raise NotImplementedError

    def __len__(self) -> int:
        # TODO: how many images the dataset holds.
        raise NotImplementedError

    def __getitem__(self, index: int) -> torch.Tensor:
        # TODO: image `index`, read from its file now (no cache): an HxWx3 torch.uint8 tensor
        #       in RGB order with exactly the file's pixels, 3 channels whatever the file holds
        #       (grayscale, RGBA, 16-bit). OSError naming the file when it cannot be read
        #       (missing, empty, corrupt); IndexError past the end.
        raise NotImplementedError


def write_tar_shards(images: Sequence[torch.Tensor], directory: str | os.PathLike, num_shards: int) -> list[Path]:
    """Write `images` (HxWx3 uint8 RGB tensors) into `num_shards` tar files in `directory`.

    The directory is created if it is missing. Each image becomes one PNG member (lossless)
    that any PNG reader decodes to exactly the image's RGB pixels. The images are cut into
    contiguous runs, in order, whose sizes differ by at most one (the first shards take the
    extra ones), so reading the shards one after another gives the images back in their
    original order.
    With more shards than images the last shards are empty (valid) tar files. Returns the
    shard paths in order. Raises ValueError when `num_shards` < 1.
    """
    # TODO: refuse num_shards < 1 (ValueError) before touching the disk; create the directory
    #       (its parents too); write num_shards tar files whose members, read shard after
    #       shard, give back every image, in order, pixel for pixel (a lossless encoding, in
    #       the channel order the encoder expects); contiguous runs whose sizes differ by at
    #       most one, the first shards taking the extra ones. Return the paths, in order.
    raise NotImplementedError


class TarImageDataset(IterableDataset):
    """Streams the images of the tar shards `paths`, each exactly once per epoch.

    Yields HxWx3 torch.uint8 RGB tensors (PNG or other members decoded with cv2.imdecode;
    members that are not regular files are skipped). Outside a DataLoader worker (or with
    num_workers=0) it reads every shard in the order given. In a DataLoader worker it reads
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
        #       that does not decode (an empty one too) raises OSError naming shard and member.
        raise NotImplementedError
