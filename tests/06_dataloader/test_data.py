"""Lesson 06, data loading: checks data.py with real PNG files, real tar shards and a real
DataLoader running 0 to 4 worker processes.

`lesson` is the module under test (the learner's, the reference, or a mutant). The images are
tiny (6x10) and written once per module; each one's pixels are known and say which image it
is (its three channels differ and H != W), so a test can count that every image came out
exactly once, with exactly the pixels written, in RGB order. The shards the TarImageDataset
tests read are written by this file's own code, not by the learner's write_tar_shards, and
the learner's shards are read back by this file's own reader.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch.utils.data import DataLoader, get_worker_info

from grader.testing import assert_close, describe, expect_raises
from grader.testing.strategies import with_layout

# Up to 4 workers on a 2-core machine is the point of some tests: torch's advice against it is noise.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")

N, H, W = 13, 6, 10
# The files are created in this order, which is neither sorted nor reversed: a dataset that
# keeps the directory's own order (glob, os.listdir) does not come out sorted by accident.
CREATION_ORDER = [7, 2, 11, 0, 9, 4, 12, 1, 6, 10, 3, 8, 5]
SHARD_COUNTS = (1, 3, 4, 5)
# Fork, so that the workers inherit this process's state (the audit hook below) and the
# mutants' modules; it is the default on Linux.
FORK = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


def make_image(i: int) -> torch.Tensor:
    """Image i: (H, W, 3) uint8; its red value at (0, 0) is 16 * i, and no image equals
    another one with its channels reversed (16 * (j - i) is never 170 modulo 256)."""
    y, x, c = torch.arange(H).view(H, 1, 1), torch.arange(W).view(1, W, 1), torch.arange(3).view(1, 1, 3)
    return ((16 * i + 37 * y + 11 * x + 85 * c) % 256).to(torch.uint8)


IMAGES = [make_image(i) for i in range(N)]
_IDS = {image.numpy().tobytes(): i for i, image in enumerate(IMAGES)}


def write_png(path: Path, rgb: torch.Tensor) -> None:
    assert cv2.imwrite(str(path), np.ascontiguousarray(rgb.numpy()[..., ::-1])), f"test setup: cannot write {path}"


def identify(image, what: str) -> int:
    """Which of IMAGES `image` is; fails with what is wrong with it otherwise."""
    __tracebackhide__ = True
    if not isinstance(image, torch.Tensor):
        pytest.fail(f"{what} gave a {type(image).__name__}, not a torch.Tensor: convert the array cv2 "
                    "returns with torch.from_numpy (no copy).", pytrace=False)
    if tuple(image.shape) != (H, W, 3) or image.dtype != torch.uint8:
        pytest.fail(f"{what} gave an image of {describe(image)}; expected shape ({H}, {W}, 3), uint8: "
                    "height, width, then the 3 channels, with the pixel values as read (no scaling).",
                    pytrace=False)
    pixels = image.contiguous().numpy()
    if pixels.tobytes() in _IDS:
        return _IDS[pixels.tobytes()]
    if pixels[..., ::-1].tobytes() in _IDS:
        pytest.fail(f"{what} gave an image in BGR order: cv2 decodes to BGR; convert with "
                    "cv2.cvtColor(image, cv2.COLOR_BGR2RGB).", pytrace=False)
    pytest.fail(f"{what} gave an image whose pixels match no image written (a lossy encoding? "
                "channels or axes mixed up?)", pytrace=False)


def check_each_once(ids: list[int], what: str, expected=range(N)) -> None:
    __tracebackhide__ = True
    counts = Counter(ids)
    repeated = {i: n for i, n in sorted(counts.items()) if n > 1}
    missing = sorted(set(expected) - counts.keys())
    assert not repeated, (
        f"{what} gave images more than once (image: times) {repeated}. Every worker runs its own "
        "copy of __iter__: use torch.utils.data.get_worker_info() to give each worker only its shards.")
    assert not missing, (
        f"{what} never gave the images {missing}: a shard was read by no worker. With n workers, "
        "worker k can take paths[k::n]: together the workers cover every shard.")


def loader_ids(loader: DataLoader, what: str) -> list[int]:
    """The ids of the images `loader` gives, batched (B, H, W, 3) or not."""
    batched = loader.batch_size is not None
    ids = []
    for item in loader:
        images = item.unbind(0) if batched else [item]
        ids += [identify(image, what) for image in images]
    return ids


def loader(dataset, num_workers: int, batch_size: int | None = None) -> DataLoader:
    return _ClosingLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                          multiprocessing_context=FORK if num_workers else None)


class _ClosingLoader(DataLoader):
    """A DataLoader whose worker processes are stopped when the test ends (the fixture below).

    An iteration that raised (a worker's error, a stub's TODO) leaves its iterator in a
    reference cycle with the exception. When the garbage collector frees it later, during
    some other test, the queues that would tell its workers to stop are already closed, and
    torch waits 5 s per worker before killing them: 10 s stolen from an unrelated test."""

    _open: list = []

    def _get_iterator(self):
        iterator = super()._get_iterator()
        if self.num_workers:
            self._open.append(iterator)
        return iterator


@pytest.fixture(autouse=True)
def _stop_workers():
    yield
    while _ClosingLoader._open:
        _ClosingLoader._open.pop()._shutdown_workers()  # what the iterator's __del__ calls


def split(n: int, parts: int) -> list[range]:
    """0..n-1 cut into `parts` contiguous runs whose sizes differ by at most one."""
    bounds = np.linspace(0, n, parts + 1).round().astype(int)
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def read_shard(path) -> list[tuple[str, bytes]]:
    """(name, data) of each file member, read with random access: this file's own reader."""
    with tarfile.open(path) as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar.getmembers() if m.isfile()]


def decode_png(data: bytes, what: str) -> torch.Tensor:
    __tracebackhide__ = True
    assert data.startswith(b"\x89PNG"), (
        f"{what} is not PNG-encoded (it starts with {data[:4]!r}); use cv2.imencode('.png', ...): "
        "PNG is lossless, JPEG changes the pixels.")
    bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert bgr is not None and bgr.ndim == 3 and bgr.shape[2] == 3, f"{what} does not decode to a 3-channel image"
    return torch.from_numpy(np.ascontiguousarray(bgr[..., ::-1]))


# --- files on disk, written once -------------------------------------------------------------


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("images")
    for i in CREATION_ORDER:
        write_png(root / f"img_{i:02d}.png", IMAGES[i])
    (root / "notes.txt").write_text("not an image: the default pattern *.png leaves it out")
    return root


@pytest.fixture(scope="module")
def shards(image_dir, tmp_path_factory) -> dict[int, list[Path]]:
    """For each shard count, tar files holding image_dir's PNG files: contiguous, in order."""
    out = {}
    for count in SHARD_COUNTS:
        folder = tmp_path_factory.mktemp(f"shards{count}")
        out[count] = []
        for s, ids in enumerate(split(N, count)):
            with tarfile.open(folder / f"part{s}.tar", "w") as tar:
                for i in ids:
                    tar.add(image_dir / f"img_{i:02d}.png", arcname=f"{i:02d}.png")
            out[count].append(folder / f"part{s}.tar")
    return out


# --- ImageDirectoryDataset ---------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_directory_dataset_gives_every_image_in_sorted_order(lesson, image_dir):
    ds = lesson.ImageDirectoryDataset(str(image_dir))
    assert len(ds) == N, f"len(ImageDirectoryDataset(root)) is {len(ds)}; root holds {N} .png files (and a .txt)"
    ids = [identify(ds[i], f"ds[{i}]") for i in range(N)]
    assert ids == list(range(N)), (
        f"ds[0], ds[1], ... gave the images {ids} (image k is the file img_k.png), expected {list(range(N))}: "
        "index i must be the i-th path in sorted order. glob and os.listdir list files in the "
        "directory's own order, which differs between machines: sort the paths.")


def test_pattern_selects_the_files(lesson, image_dir):
    ds = lesson.ImageDirectoryDataset(image_dir, pattern="img_1*.png")
    what = "ImageDirectoryDataset(root, pattern='img_1*.png')"
    assert len(ds) == 3, f"{what} has {len(ds)} items; root holds 3 files matching the pattern"
    ids = [identify(ds[i], f"{what}[{i}]") for i in range(3)]
    assert ids == [10, 11, 12], f"{what} gave the images {ids}; expected those of img_10, img_11, img_12"


def test_index_past_the_end_raises_index_error(lesson, image_dir):
    ds = lesson.ImageDirectoryDataset(image_dir)
    expect_raises(lambda: ds[N], IndexError, what=f"ds[{N}] for a dataset of {N} images",
                  why="`for image in ds` stops only at an IndexError, and an index past the end is a bug.")


def test_grayscale_and_rgba_files_give_three_channels(lesson, tmp_path):
    gray = IMAGES[4][..., 1]  # (H, W)
    assert cv2.imwrite(str(tmp_path / "a_gray.png"), gray.numpy())
    bgra = np.concatenate([IMAGES[3].numpy()[..., ::-1], np.full((H, W, 1), 128, np.uint8)], axis=2)
    assert cv2.imwrite(str(tmp_path / "b_rgba.png"), bgra)
    ds = lesson.ImageDirectoryDataset(tmp_path)
    assert_close(ds[0], gray.unsqueeze(-1).expand(H, W, 3),
                 what="ds[0] for a grayscale PNG (read it with cv2.IMREAD_COLOR: the gray repeated in 3 channels)")
    assert_close(ds[1], IMAGES[3], what="ds[1] for an RGBA PNG (read it with cv2.IMREAD_COLOR: RGB, alpha dropped)")


@pytest.fixture
def corrupt_dir(tmp_path) -> Path:
    write_png(tmp_path / "a_good.png", IMAGES[1])
    (tmp_path / "b_corrupt.png").write_bytes(b"this is not a PNG file" * 4)
    write_png(tmp_path / "c_good.png", IMAGES[2])
    return tmp_path


@pytest.mark.points(2)
def test_unreadable_file_raises_an_error_naming_it(lesson, corrupt_dir):
    ds = lesson.ImageDirectoryDataset(corrupt_dir)  # nothing is read yet: no error here
    assert identify(ds[0], "ds[0]") == 1 and identify(ds[2], "ds[2]") == 2
    expect_raises(lambda: ds[1], OSError, what="ds[1] for a corrupt file b_corrupt.png", mention=("b_corrupt.png",),
                  why="cv2.imread returns None for a file it cannot read; check and raise, naming the file.")
    (corrupt_dir / "c_good.png").unlink()  # gone after the dataset listed it
    expect_raises(lambda: ds[2], OSError, what="ds[2] for a file deleted after the dataset was made",
                  mention=("c_good.png",), why="a missing file is as unreadable as a corrupt one.")


def test_unreadable_file_error_survives_dataloader_workers(lesson, corrupt_dir):
    ds = lesson.ImageDirectoryDataset(corrupt_dir)
    expect_raises(lambda: list(loader(ds, num_workers=2, batch_size=1)), OSError, mention=("b_corrupt.png",),
                  what="iterating DataLoader(ds, num_workers=2) over a folder holding b_corrupt.png",
                  why="the worker's error reaches the main process; it must still say which file failed.")


def test_files_are_read_when_asked_for_not_in_init(lesson, tmp_path):
    write_png(tmp_path / "a.png", IMAGES[0])
    write_png(tmp_path / "b.png", IMAGES[1])
    ds = lesson.ImageDirectoryDataset(tmp_path)
    write_png(tmp_path / "a.png", IMAGES[5])  # the file changes after the dataset was made
    assert identify(ds[0], "ds[0]") == 5, (
        "ds[0] gave a.png as it was when the dataset was created: read each file in __getitem__, "
        "not in __init__ (a million images do not fit in memory, and every worker gets a copy).")


@pytest.mark.points(2)
def test_directory_dataset_in_a_dataloader_with_two_workers(lesson, image_dir):
    ds = lesson.ImageDirectoryDataset(image_dir)
    what = "DataLoader(ImageDirectoryDataset(root), batch_size=4, num_workers=2)"
    ids = loader_ids(loader(ds, num_workers=2, batch_size=4), what)
    # A map-style dataset keeps the sampler's order, whatever the number of workers.
    assert ids == list(range(N)), f"{what} gave the images {ids}; expected each once, in sorted order"


# --- write_tar_shards --------------------------------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("count", "num_shards"), [(N, 1), (N, 3), (N, 4), (N, 5), (3, 5)])
def test_write_tar_shards_balanced_contiguous_and_lossless(lesson, tmp_path, count, num_shards):
    what = f"write_tar_shards({count} images, directory, num_shards={num_shards})"
    paths = lesson.write_tar_shards(IMAGES[:count], tmp_path, num_shards)
    assert isinstance(paths, list) and all(isinstance(p, Path) for p in paths), (
        f"{what} returned {paths!r}; expected a list of pathlib.Path")
    assert len(paths) == num_shards, f"{what} returned {len(paths)} paths"
    assert all(p.is_file() and tarfile.is_tarfile(p) for p in paths), f"{what} returned {paths}: not all are tar files"
    members = [read_shard(p) for p in paths]
    sizes = [len(m) for m in members]
    assert sum(sizes) == count, f"{what} wrote {sum(sizes)} images in all (shard sizes {sizes})"
    assert max(sizes) - min(sizes) <= 1, (
        f"{what} wrote shards of sizes {sizes}: balance them (sizes differ by at most one), or "
        "the worker with the biggest shard keeps the others waiting.")
    decoded = [decode_png(data, f"member {name} of {p.name}") for p, shard in zip(paths, members) for name, data in shard]
    for i, image in enumerate(decoded):
        assert_close(image, IMAGES[i], what=f"image {i} read back from the shards of {what} (in shard order)",
                     rtol=0, atol=0)


def test_write_tar_shards_creates_the_directory(lesson, tmp_path):
    target = tmp_path / "new" / "shards"
    paths = lesson.write_tar_shards(IMAGES[:4], target, 2)
    assert [p.parent for p in paths] == [target, target], f"write_tar_shards(..., {target}, 2) returned {paths}"


@pytest.mark.parametrize("num_shards", [0, -1])
def test_write_tar_shards_refuses_fewer_than_one_shard(lesson, tmp_path, num_shards):
    expect_raises(lambda: lesson.write_tar_shards(IMAGES[:3], tmp_path, num_shards), ValueError,
                  what=f"write_tar_shards(images, directory, num_shards={num_shards})",
                  why="the images cannot go into fewer than one shard.")


_rgb_images = hnp.arrays(np.uint8, st.tuples(st.integers(1, 5), st.integers(1, 5), st.just(3)))


@given(st.lists(_rgb_images, max_size=9), st.integers(1, 6), st.sampled_from(["contiguous", "transposed", "strided"]))
def test_write_tar_shards_round_trip(lesson, arrays, num_shards, layout):
    # Any sizes, any pixel values, non-contiguous views too: the shards give them back, in order.
    images = [with_layout(torch.from_numpy(a), layout) for a in arrays]
    what = f"write_tar_shards({len(images)} images of {layout} layout, directory, num_shards={num_shards})"
    with tempfile.TemporaryDirectory() as folder:
        paths = lesson.write_tar_shards(images, folder, num_shards)
        sizes = [len(read_shard(p)) for p in paths]
        assert len(paths) == num_shards and max(sizes) - min(sizes) <= 1, f"{what} wrote shards of sizes {sizes}"
        back = [decode_png(data, f"a member of {what}") for p in paths for _, data in read_shard(p)]
    assert len(back) == len(images), f"{what} wrote {len(back)} images"
    for i, (got, image) in enumerate(zip(back, images)):
        assert_close(got, image.contiguous(), what=f"image {i} read back from {what}", rtol=0, atol=0)


# --- TarImageDataset: every image exactly once -------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_tar_dataset_without_workers_gives_every_image_in_order(lesson, shards):
    what = "DataLoader(TarImageDataset(3 shards), num_workers=0)"
    ids = loader_ids(loader(lesson.TarImageDataset(shards[3]), num_workers=0), what)
    check_each_once(ids, what)
    assert ids == list(range(N)), f"{what} gave the images {ids}; read the shards in the order given, each from start to end"


@pytest.mark.public
@pytest.mark.points(2)
def test_tar_dataset_with_two_workers_gives_every_image_once(lesson, shards):
    what = "DataLoader(TarImageDataset(4 shards), num_workers=2)"
    check_each_once(loader_ids(loader(lesson.TarImageDataset(shards[4]), num_workers=2), what), what)


@pytest.mark.parametrize("num_workers", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("num_shards", SHARD_COUNTS)
def test_every_image_once_for_any_workers_and_shards(lesson, shards, num_shards, num_workers):
    what = f"DataLoader(TarImageDataset({num_shards} shards), num_workers={num_workers})"
    check_each_once(loader_ids(loader(lesson.TarImageDataset(shards[num_shards]), num_workers), what), what)


@pytest.mark.parametrize(("num_shards", "num_workers", "batch_size"),
                         [(1, 0, 2), (3, 2, 3), (5, 2, 2), (4, 3, 3), (5, 4, 2), (1, 3, 2)])
def test_every_image_once_in_batches(lesson, shards, num_shards, num_workers, batch_size):
    what = f"DataLoader(TarImageDataset({num_shards} shards), num_workers={num_workers}, batch_size={batch_size})"
    check_each_once(loader_ids(loader(lesson.TarImageDataset(shards[num_shards]), num_workers, batch_size), what), what)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_every_epoch_gives_every_image(lesson, shards, num_workers):
    data = loader(lesson.TarImageDataset(shards[3]), num_workers, batch_size=2)
    for epoch in (1, 2):
        what = f"epoch {epoch} of one DataLoader(TarImageDataset(3 shards), num_workers={num_workers}, batch_size=2)"
        check_each_once(loader_ids(data, what), what)


def test_directory_entries_in_a_tar_are_skipped(lesson, image_dir, tmp_path):
    folder = tmp_path / "pngs"
    folder.mkdir()
    for i in (4, 5, 6):
        shutil.copy(image_dir / f"img_{i:02d}.png", folder)
    with tarfile.open(tmp_path / "with_dirs.tar", "w") as tar:
        tar.add(folder, arcname="pngs")  # a directory entry "pngs", then its three files
    what = "TarImageDataset([a tar made with `tar -cf x.tar pngs/`, holding a directory entry])"
    ids = loader_ids(loader(lesson.TarImageDataset([tmp_path / "with_dirs.tar"]), 0), what)
    assert ids == [4, 5, 6], f"{what} gave the images {ids}; skip members that are not files (member.isfile())"


def test_undecodable_member_raises_an_error_naming_it(lesson, image_dir, tmp_path):
    (tmp_path / "bad.png").write_bytes(b"not an image" * 8)
    shard = tmp_path / "broken.tar"
    with tarfile.open(shard, "w") as tar:
        tar.add(image_dir / "img_00.png", arcname="00.png")
        tar.add(tmp_path / "bad.png", arcname="bad.png")
    expect_raises(lambda: list(lesson.TarImageDataset([shard])), OSError, mention=("broken.tar", "bad.png"),
                  what="list(TarImageDataset([broken.tar])) where member bad.png is not an image",
                  why="cv2.imdecode returns None for bytes it cannot decode; raise, naming shard and member.")


# --- TarImageDataset: each worker opens only its own shards -------------------------------------

# An audit hook sees every open() and os.open() of this process and of the workers it forks
# (tarfile opens files with one or the other, whatever way the learner calls it). While a
# test records, it appends "who<TAB>path" for each .tar opened to a file; os.write on an
# O_APPEND descriptor is itself no "open" event and is safe from many processes at once.
_record = {"fd": -1}
_hook_installed = False


def _audit_tar_opens(event: str, args: tuple) -> None:
    if event != "open" or _record["fd"] < 0 or isinstance(args[0], int):
        return
    try:
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.endswith(".tar"):
            info = get_worker_info()
            who = "the main process" if info is None else f"worker {info.id}"
            os.write(_record["fd"], f"{who}\t{path}\n".encode())
    except Exception:  # noqa: BLE001 (a hook must never break the open it watches)
        pass


@contextlib.contextmanager
def recording_tar_opens(log: Path):
    """Collects (who, path) for each .tar opened inside the block, workers included."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit_tar_opens)  # for the rest of the session; idle while fd < 0
        _hook_installed = True
    opened: list[tuple[str, str]] = []
    _record["fd"] = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC)
    try:
        yield opened
    finally:
        os.close(_record["fd"])
        _record["fd"] = -1
        opened += [tuple(line.split("\t")) for line in log.read_text().splitlines()]


@pytest.mark.points(2)
@pytest.mark.parametrize(("num_shards", "num_workers"), [(4, 2), (5, 2), (3, 3), (5, 4)])
def test_each_worker_opens_only_its_own_shards(lesson, shards, tmp_path, num_shards, num_workers):
    what = f"DataLoader(TarImageDataset({num_shards} shards), num_workers={num_workers})"
    with recording_tar_opens(tmp_path / "opens.log") as opened:
        ids = loader_ids(loader(lesson.TarImageDataset(shards[num_shards]), num_workers), what)
    check_each_once(ids, what)
    openers = defaultdict(set)
    for who, path in opened:
        openers[Path(path).name].add(who)
    shared = {name: sorted(who) for name, who in sorted(openers.items()) if len(who) > 1}
    assert not shared, (
        f"with {what} these shards were opened by more than one process: {shared}. Each worker "
        "should open only the shards it owns (e.g. paths[worker_id::num_workers]); reading other "
        "workers' shards to skip their images wastes the I/O that sharding saves.")
    in_main = sorted(name for name, who in openers.items() if "the main process" in who)
    assert not in_main, f"with {what} the main process opened {in_main}: open shards in __iter__, inside the workers"
    per_worker = Counter(who for names in openers.values() for who in names)
    counts = [per_worker.get(f"worker {k}", 0) for k in range(num_workers)]
    assert max(counts) - min(counts) <= 1, (
        f"with {what} the workers opened {counts} shards each: deal the shards out evenly "
        "(their counts differ by at most one) so that no worker idles while another reads.")


# --- both together: the lesson's example ----------------------------------------------------


def test_written_shards_stream_through_tar_image_dataset(lesson, tmp_path):
    paths = lesson.write_tar_shards(IMAGES, tmp_path, 4)
    what = "DataLoader(TarImageDataset(write_tar_shards(images, directory, 4)), num_workers=2)"
    check_each_once(loader_ids(loader(lesson.TarImageDataset(paths), num_workers=2), what), what)


# --- on a GPU machine -------------------------------------------------------------------------


@pytest.mark.cuda
def test_pinned_batches_copy_to_the_gpu(lesson, shards):
    data = DataLoader(lesson.TarImageDataset(shards[3]), batch_size=4, pin_memory=True)
    for batch in data:
        assert batch.is_pinned(), "DataLoader(..., pin_memory=True) gave a batch that is not in pinned memory"
        on_gpu = batch.to("cuda", non_blocking=True)
        assert_close(on_gpu.cpu(), batch, what="a pinned batch copied to the GPU and back")
