"""Lesson 06, data loading: checks data.py with real PNG files, real tar shards and a real
DataLoader running 0 to 4 worker processes.

Each image's pixels say which image it is, so a test counts that every image came out exactly
once, with exactly the pixels written, in RGB order. CONTRACT, at the end, maps the lesson's
promises to the tests.
"""

from __future__ import annotations

import contextlib
import functools
import io
import multiprocessing
import operator
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
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch.utils.data import DataLoader, get_worker_info
from torch.utils.data._utils import worker as _torch_worker

from grader.testing import ErrorPitfall, Pitfall, assert_close, counted, describe, expect_raises, fail, pitfall_of, pitfall_saying, reported, returned
from grader.testing.errors import raised
from grader.testing.scenario import beside
from grader.testing.strategies import with_layout

# Up to 4 workers on a 2-core machine is the point of some tests: torch's advice against it is noise.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")


N, H, W = 13, 6, 10
SHARD_COUNTS = (1, 3, 4, 5)


# --- ImageDirectoryDataset ---------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_directory_dataset_gives_every_image_in_sorted_order(lesson):
    listing = directory_listing(lesson, "images", str_root=True)
    count_paths(listing, "ImageDirectoryDataset(root)", N)
    expected = [f"img_{i:02d}.png" for i in range(N)]
    if listing["type"] is None:
        pytest.fail("ds.paths is missing; the docstring promises a list of pathlib.Path.", pytrace=False)
    if not (listing["type"] == "list" and all(is_path for _, is_path, _, _ in listing["paths"])):
        pytest.fail(f"ds.paths is a {listing['type']} of {sorted({kind for kind, _, _, _ in listing['paths']})}; "
                    "the docstring promises a list of pathlib.Path.", pytrace=False)
    names = [name for _, _, name, _ in listing["paths"]]
    if [(name, parent) for _, _, name, parent in listing["paths"]] != [(name, ".") for name in expected]:
        unsorted = [int(name[4:6]) for name in names if name.startswith("img_")] == directory_order(listing["listdir"])
        pytest.fail(f"ds.paths is {names}; expected the matching files in sorted order, "
                    f"{expected}. " + (DIRECTORY_ORDER if unsorted else ""), pytrace=False)
    ids = [identify(item(lesson, "images", i, f"ds[{i}]", str_root=True), f"ds[{i}]") for i in range(N)]
    if ids != list(range(N)):
        pytest.fail(f"ds[0], ds[1], ... gave the images {ids} (image k is the file img_k.png), expected "
                    f"{list(range(N))}: ds[i] must read paths[i], the i-th path in sorted order.", pytrace=False)


def test_pattern_selects_the_files(lesson):
    what = "ImageDirectoryDataset(root, pattern='img_1*.png')"
    count_paths(directory_listing(lesson, "images", pattern="img_1*.png"), what, 3)
    ids = [identify(item(lesson, "images", i, f"{what}[{i}]", pattern="img_1*.png"), f"{what}[{i}]") for i in range(3)]
    if ids != [10, 11, 12]:
        pytest.fail(f"{what} gave the images {ids}; expected those of img_10, img_11, img_12", pytrace=False)


def test_sorted_means_pythons_sorted(lesson):
    # The folder holds img_2.png, img_10.png and img_1.png (write_python_sorted).
    listing = directory_listing(lesson, "python_sorted")
    ids = [identify(item(lesson, "python_sorted", k, f"ds[{k}]"), f"ds[{k}]") for k in range(listing["len"])]
    if ids != [1, 10, 2]:
        order = [int(name[4:-4]) for name in listing["listdir"]]
        pytest.fail(f"ImageDirectoryDataset over img_1.png, img_2.png, img_10.png gave the images {ids}; expected "
                    "[1, 10, 2], the files in sorted() order (img_1, img_10, img_2), as on every other machine. "
                    + (DIRECTORY_ORDER if ids == order else ""), pytrace=False)


def test_index_past_the_end_raises_index_error(lesson):
    expect_raises(lambda: directory_item(lesson, "images", N), IndexError, what=f"ds[{N}] for a dataset of {N} images",
                  why="`for image in ds` stops only at an IndexError, and an index past the end is a bug.")


def test_grayscale_rgba_and_16_bit_files_give_three_uint8_channels(lesson):
    for i, (name, _, rgb, what) in enumerate(odd_kinds_of_png()):  # the files of write_odd_kinds, sorted
        image = item(lesson, "odd_kinds", i, f"ds[{i}] for {what} ({name})")
        check_three_uint8_channels(image, rgb, f"ds[{i}] for {what} ({name})")


@pytest.mark.points(2)
def test_unreadable_file_raises_an_error_naming_it(lesson):
    made_over_corrupt(lesson)  # a_good.png, b_corrupt.png, c_good.png, d_empty.png
    for index, image in [(0, 1), (2, 2)]:
        got = identify(item(lesson, "corrupt", index, f"ds[{index}]"), f"ds[{index}]")
        if got != image:
            pytest.fail(f"ds[{index}] gave image {got}; expected image {image}", pytrace=False)
    unreadable = "check for it and raise OSError naming the file."
    expect_raises(lambda: directory_item(lesson, "corrupt", 1), OSError, what="ds[1] for a corrupt file b_corrupt.png",
                  mention=("b_corrupt.png",), why=f"a corrupt file holds no image: {unreadable}",
                  advice=wrong_error(("b_corrupt.png",)))
    expect_raises(lambda: directory_item(lesson, "corrupt", 3), OSError, what="ds[3] for an empty file d_empty.png",
                  mention=("d_empty.png",), why=f"an empty file holds no image: {unreadable}",
                  advice=wrong_error(("d_empty.png",)))
    expect_raises(lambda: directory_item(lesson, "corrupt", 2, removed="c_good.png"), OSError,
                  what="ds[2] for a file deleted after the dataset was made",
                  mention=("c_good.png",), why=f"a missing file is as unreadable as a corrupt one: {unreadable}",
                  advice=wrong_error(("c_good.png",)))


def test_unreadable_file_error_survives_dataloader_workers(lesson):
    made_over_corrupt(lesson)  # making the dataset reads nothing: no error here
    expect_raises(lambda: loaded(lesson, ("images", "corrupt"), num_workers=2, batch_size=1), OSError,
                  mention=("b_corrupt.png",),
                  what="iterating DataLoader(ds, num_workers=2) over a folder holding b_corrupt.png",
                  why="the worker's error reaches the main process; it must still say which file failed.",
                  advice=wrong_error(("b_corrupt.png",)))


def test_files_are_read_when_asked_for_not_in_init(lesson):
    # The dataset is made over a.png (image 0) and b.png (1); then a.png becomes image 5 and
    # c.png comes (read_when_asked).
    count, _ = read_when_asked(lesson, 0)
    if count != 2:
        pytest.fail(f"len(ds) is {count} after a third file was added to root; the paths are found once, in "
                    "__init__ (self.paths), so that index i keeps meaning the same file.", pytrace=False)
    with reported("ds[0]", advice=cause):
        first = read_when_asked(lesson, 1)[1][-1]
    if identify(first, "ds[0]") != 5:
        pytest.fail("ds[0] gave a.png as it was when the dataset was created: read each file in __getitem__, "
                    "not in __init__ (a million images do not fit in memory, and every worker gets a copy).",
                    pytrace=False)
    # a.png changes again (image 7) before ds[0] is asked for a second time.
    with reported("ds[0], asked for again", advice=cause):
        again = read_when_asked(lesson, 2)[1][-1]
    if identify(again, "ds[0], asked for again") != 7:
        pytest.fail("ds[0], asked for a second time after a.png changed, gave the image it read the first time: "
                    "ds[i] reads paths[i] each time; a cache of decoded images grows to the whole dataset in "
                    "every worker.", pytrace=False)


@pytest.mark.points(2)
def test_directory_dataset_in_a_dataloader_with_two_workers(lesson):
    what = "DataLoader(ImageDirectoryDataset(root), batch_size=4, num_workers=2)"
    ids = loader_ids(lesson, what, ("images", "images"), num_workers=2, batch_size=4)
    # A map-style dataset keeps the sampler's order, whatever the number of workers.
    if ids != list(range(N)):
        in_subfolders = len(ids) > N and any(parent != "." for _, _, _, parent in directory_listing(lesson, "images")["paths"])
        pytest.fail(f"{what} gave the images {ids}; expected each once, in sorted order ({list(range(N))})."
                    + (f"\n{RGLOB}" if in_subfolders else ""), pytrace=False)


# --- write_tar_shards --------------------------------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("count", "num_shards"), [(N, 1), (N, 3), (N, 4), (N, 5), (10, 4), (N, 12), (3, 5), (0, 2)])
def test_write_tar_shards_balanced_contiguous_and_lossless(lesson, count, num_shards):
    what = f"write_tar_shards({counted(count, 'image')}, directory, num_shards={num_shards})"
    written = write_shards(lesson, IMAGES[:count], num_shards, what)
    members = members_of(written, num_shards, what)
    check_sizes([len(m) for m in members], count, num_shards, what)
    decoded = [decode_png(data, f"member {name} of {shard}")
               for (shard, _, _, _), held in zip(written[1], members) for name, data in held]
    ids = [identify(image, f"member {k} (in shard order) of {what}", writing=True) for k, image in enumerate(decoded)]
    if ids != list(range(count)):
        out_of_order(ids, count, num_shards, what)


def test_write_tar_shards_creates_the_directory(lesson):
    target = "new/shards"  # in a new folder: new/ is missing too
    returned, shards = write_shards(lesson, IMAGES[:4], 2, f"write_tar_shards(4 images, {target}, 2)", target)
    if shards is None or [parent for _, parent, _, _ in shards] != [target, target]:
        pytest.fail(f"write_tar_shards(..., {target}, 2) returned {returned}", pytrace=False)


@pytest.mark.parametrize(("count", "num_shards"), [(3, 0), (3, -1), (0, 0)])
def test_write_tar_shards_refuses_fewer_than_one_shard(lesson, count, num_shards):
    what = f"write_tar_shards({counted(count, 'image')}, a directory not yet made, num_shards={num_shards})"
    expect_raises(lambda: Shown(shards_refused(lesson, count, num_shards)), ValueError,
                  what=what, why="the images cannot go into fewer than one shard.")
    if shards_refused(lesson, count, num_shards, then_look=True):
        pytest.fail(f"{what} raised, but created the directory first: refuse num_shards < 1 before anything else.",
                    pytrace=False)


@given(st.lists(hnp.arrays(np.uint8, st.tuples(st.integers(1, 5), st.integers(1, 5), st.just(3))), max_size=9),
       st.integers(1, 6), st.sampled_from(["contiguous", "transposed", "strided"]))
@settings(report_multiple_bugs=False)
def test_write_tar_shards_round_trip(lesson, arrays, num_shards, layout):
    # Any sizes, any pixel values, non-contiguous views too: the shards give them back, in order.
    images = [with_layout(torch.from_numpy(a), layout) for a in arrays]
    what = f"write_tar_shards({counted(len(images), 'image')} of {layout} layout, directory, num_shards={num_shards})"
    members = members_of(write_shards(lesson, images, num_shards, what), num_shards, what)
    check_sizes([len(m) for m in members], len(images), num_shards, what)
    back = [decode_png(data, f"a member of {what}") for held in members for _, data in held]
    if len(back) != len(images):
        pytest.fail(f"{what} wrote {counted(len(back), 'image')}", pytrace=False)
    order = dealt(len(images), num_shards)
    if (not all(torch.equal(got, image.contiguous()) for got, image in zip(back, images))
            and all(torch.equal(got, images[i].contiguous()) for got, i in zip(back, order))):
        out_of_order(order, len(images), num_shards, what)
    for i, (got, image) in enumerate(zip(back, images)):
        image = image.contiguous()
        if not torch.equal(got, image) and torch.equal(got.flip(-1), image):
            pytest.fail(f"image {i} read back from {what} has its channels reversed. {BGR_WRITE}", pytrace=False)
        assert_close(got, image, what=f"image {i} read back from {what}", rtol=0, atol=0)


# --- TarImageDataset: members, order, and which worker reads what (no worker processes) ---------


def test_non_file_members_in_a_tar_are_skipped(lesson):
    what = ("TarImageDataset([a tar made with `tar -cf x.tar pngs/`: a directory entry, three PNG files, "
            "a symbolic and a hard link])")
    ids = loader_ids(lesson, what, ("tar", "with_dirs"), num_workers=0)  # write_with_dirs: images 4, 5, 6
    if ids != [4, 5, 6]:
        links = len(ids) > 3 and sorted(ids[:3] + ids[4:]) == [4, 4, 5, 6] or Counter(ids)[4] > 1
        pytest.fail(f"{what} gave the images {ids}; expected [4, 5, 6], one per regular file. "
                    + (f"The links gave image 4 again: {NOT_A_FILE}" if links else ""), pytrace=False)


def test_tar_members_of_any_name_and_kind_are_decoded(lesson):
    what = "list(TarImageDataset([mixed.tar]))"
    with reported(what, advice=cause):
        images = listed(lesson, ("tar", "mixed"))
    expected = mixed_members()
    members = [name for name, _, _, _ in expected]
    if len(images) != len(members):
        pytest.fail(f"{what} gave {counted(len(images), 'image')}; mixed.tar holds {len(members)} regular files that "
                    f"cv2.imdecode decodes: {members}. Decode every regular file, whatever its name.", pytrace=False)
    for image, (name, _, rgb, kind) in zip(images, expected):
        check_three_uint8_channels(image, rgb, f"{what}, member {name} ({kind})")


@pytest.mark.parametrize(("member", "data"), [pytest.param("bad.png", b"not an image" * 8, id="garbage"),
                                              pytest.param("notes.txt", b"a caption\n", id="text"),
                                              pytest.param("blank.png", b"", id="empty")])
def test_undecodable_member_raises_an_error_naming_it(lesson, member, data):
    kind = "empty" if not data else "not an image"

    def skipped(images) -> str | None:  # broken.tar holds 00.png (image 0), then the member
        if (isinstance(images, list) and len(images) == 1 and isinstance(images[0], torch.Tensor)
                and _IDS.get(images[0].contiguous().numpy().tobytes()) == 0):
            return f"gave 1 image, that of 00.png, and skipped {member}"
        return None
    expect_raises(lambda: listed(lesson, ("broken", member, data.hex())), OSError, mention=("broken.tar", member),
                  what=f"list(TarImageDataset([broken.tar])) where member {member} is {kind}", told=skipped,
                  advice=wrong_error(("broken.tar", member)), why="a regular file that does not decode is bad data, whatever its name: raise OSError naming "
                 "the shard and the member rather than skip it.")


def test_tar_dataset_reads_the_shards_in_the_order_given(lesson):
    order = [3, 0, 4, 1, 2]  # neither sorted nor reversed
    spec = ("shards", 5, order, True)  # str paths, as the signature allows
    what = f"list(TarImageDataset(part{{{','.join(map(str, order))}}}.tar, in that order))"
    expected = [i for s in order for i in shard_ids(5)[s]]
    for epoch in (1, 2):  # two epochs of one dataset
        told = what if epoch == 1 else f"{what}, epoch 2,"
        try:
            images = listed(lesson, spec, epoch)
        except Exception as exc:  # epoch 2's own failure is named; any error is reported
            if epoch == 1 or cause(exc):
                with reported(told, advice=cause):
                    raise
            failure = raised(told, exc, USED_UP)
        else:
            failure = None
        if failure is not None:
            fail(failure)  # outside `except`: no chained traceback
        ids = [identify(image, what) for image in images]
        if ids != expected:
            pytest.fail(f"{what}, epoch {epoch}, gave the images {ids}; expected {expected}: outside a worker, read "
                        "every shard in the order given, each from start to end. "
                        + (pitfall_of(ids, expected, [SORTED_SHARDS], order, match=operator.eq) or ""), pytrace=False)


@pytest.mark.parametrize(("num_shards", "num_workers"), [(5, 2), (5, 3), (4, 4), (3, 4), (1, 2), (4, 3), (3, 1)])
def test_workers_share_the_shards(lesson, num_shards, num_workers):
    # The DataLoader's workers, simulated: get_worker_info() says which worker this is, as in a
    # real worker process, and __iter__ runs in this one, once per worker (worker_share).
    order = list(range(num_shards))[::-1]  # the paths given in reverse order of their names
    spec = ("shards", num_shards, order)
    names = [f"part{s}.tar" for s in order]
    shares = []
    for k in range(num_workers):
        what = f"worker {k} of {num_workers} iterating TarImageDataset({names})"
        with reported(what, advice=cause):
            items, opened = worker_share(lesson, spec, k, num_workers)
        ids = [identify(image, what) for image in items]
        read = shards_read(ids, names, k, num_workers, opened, what)
        if read != [name for name in names if name in read]:
            pytest.fail(f"{what} read {read}, not in the order given ({names}).", pytrace=False)
        others = sorted(set(opened) - set(read))
        if others:
            pytest.fail(f"{what} opened {others} but gave no image of them: each worker opens only its own "
                        f"shards (it read {read}).", pytrace=False)
        shares.append(read)
    what = f"{counted(num_workers, 'worker')} iterating TarImageDataset({names})"
    counts = Counter(name for share in shares for name in share)
    repeated = sorted(name for name, times in counts.items() if times > 1)
    if repeated:
        every_shard_each = Pitfall(lambda: [names] * num_workers, DUPLICATES.format(n=num_workers))
        pytest.fail(f"{what}: the shards {repeated} were read by more than one worker (the workers read {shares}); "
                    "every shard belongs to exactly one worker. "
                    + (pitfall_of(shares, None, [every_shard_each], match=operator.eq) or ""), pytrace=False)
    missing = [name for name in names if name not in counts]
    if missing:
        pytest.fail(f"{what}: no worker read {missing} (the workers read {shares}); together the shares must "
                    "cover every shard.", pytrace=False)
    sizes = [len(share) for share in shares]
    if max(sizes) - min(sizes) > 1:
        pytest.fail(f"{what}: the workers read {sizes} shards each ({shares}); the shares must differ by at most "
                    "one shard, or the busiest worker keeps the others waiting.", pytrace=False)


# --- TarImageDataset: every image exactly once -------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_tar_dataset_without_workers_gives_every_image_in_order(lesson):
    what = "DataLoader(TarImageDataset(paths of 3 shards), num_workers=0)"
    ids = loader_ids(lesson, what, ("shards", 3), num_workers=0)
    check_each_once(ids, what)
    if ids != list(range(N)):
        pytest.fail(f"{what} gave the images {ids}; read the shards in the order given, each from start to end",
                    pytrace=False)


@pytest.mark.public
@pytest.mark.points(2)
def test_tar_dataset_with_two_workers_gives_every_image_once(lesson):
    what = "DataLoader(TarImageDataset(4 shards), num_workers=2)"
    check_each_once(loader_ids(lesson, what, ("shards", 4), num_workers=2), what, num_workers=2)


@pytest.mark.parametrize("num_workers", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("num_shards", SHARD_COUNTS)
def test_every_image_once_for_any_workers_and_shards(lesson, num_shards, num_workers):
    what = f"DataLoader(TarImageDataset(paths of {counted(num_shards, 'shard')}), num_workers={num_workers})"
    check_each_once(loader_ids(lesson, what, ("shards", num_shards), num_workers), what, num_workers=num_workers)


@pytest.mark.parametrize(("num_shards", "num_workers", "batch_size"),
                         [(1, 0, 2), (3, 2, 3), (5, 2, 2), (4, 3, 3), (5, 4, 2), (1, 3, 2)])
def test_every_image_once_in_batches(lesson, num_shards, num_workers, batch_size):
    what = f"DataLoader(TarImageDataset(paths of {counted(num_shards, 'shard')}), num_workers={num_workers}, batch_size={batch_size})"
    check_each_once(loader_ids(lesson, what, ("shards", num_shards), num_workers, batch_size), what,
                    num_workers=num_workers)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_every_epoch_gives_every_image(lesson, num_workers):
    for epoch in (1, 2):  # two epochs of one DataLoader
        what = f"epoch {epoch} of one DataLoader(TarImageDataset(paths of 3 shards), num_workers={num_workers}, batch_size=2)"
        check_each_once(loader_ids(lesson, what, ("shards", 3), num_workers, batch_size=2, epochs=epoch), what,
                        num_workers=num_workers)


# --- TarImageDataset: each worker opens only its own shards -------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("num_shards", "num_workers"), [(4, 2), (5, 2), (3, 3), (5, 4)])
def test_each_worker_opens_only_its_own_shards(lesson, num_shards, num_workers):
    what = f"DataLoader(TarImageDataset(paths of {counted(num_shards, 'shard')}), num_workers={num_workers})"
    opened = []
    ids = loader_ids(lesson, what, ("shards", num_shards), num_workers, opened=opened)
    check_each_once(ids, what, num_workers=num_workers)
    openers = defaultdict(set)
    for who, name in opened:
        openers[name].add(who)
    in_main = sorted(name for name, who in openers.items() if "the main process" in who)
    if in_main:
        pytest.fail(f"with {what} the main process opened {in_main}, before any worker existed (in __init__?): "
                    "open shards in __iter__, inside the workers, so that each opens only its own, afresh "
                    "every epoch.", pytrace=False)
    shared = {name: sorted(who) for name, who in sorted(openers.items()) if len(who) > 1}
    if shared:
        pytest.fail(f"with {what} these shards were opened by more than one worker: {shared}, although every "
                    "image came once: the workers read other workers' shards and skipped their images, which "
                    "wastes the I/O that sharding saves. Each worker opens only the shards of its own share.",
                    pytrace=False)
    per_worker = Counter(who for names in openers.values() for who in names)
    counts = [per_worker.get(f"worker {k}", 0) for k in range(num_workers)]
    if max(counts) - min(counts) > 1:
        pytest.fail(f"with {what} the workers opened {counts} shards each: the shares must differ by at most one "
                    "shard, so that no worker idles while another reads.", pytrace=False)


# --- both together: the lesson's example ----------------------------------------------------


def test_written_shards_stream_through_tar_image_dataset(lesson):
    what = "DataLoader(TarImageDataset(write_tar_shards(images, directory, 4)), num_workers=2)"
    write_shards(lesson, IMAGES, 4, "write_tar_shards(images, directory, 4)")  # its own errors, named as such
    check_each_once(loader_ids(lesson, what, ("written", 4), num_workers=2), what, num_workers=2)


# --- on a GPU machine -------------------------------------------------------------------------


@pytest.mark.cuda
def test_pinned_batches_copy_to_the_gpu(lesson):
    for is_pinned, batch, back in pinned_batches(lesson):
        if not is_pinned:
            pytest.fail("DataLoader(..., pin_memory=True) gave a batch that is not in pinned memory", pytrace=False)
        assert_close(back, batch, what="a pinned batch copied to the GPU and back")


# === what the tests use ===========================================================================
#
# `lesson` is the module under test (the learner's, the reference, or a mutant). The images are
# tiny (6x10) and written once per process; each one's pixels are known and say which image it
# is (its three channels differ and H != W). The shards the TarImageDataset tests read are
# written by this file's own code, not by the learner's write_tar_shards, and the learner's
# shards are read back by this file's own reader. Which worker reads which shard is checked
# twice: through real worker processes (slow, a few cases) and by calling __iter__ under a
# simulated torch.utils.data.get_worker_info() (fast, many cases).
#
# The learner's datasets and writer are driven by scenarios (grader.testing.scenario): functions
# that make their inputs from names and numbers where the code runs, and return what came out as
# data (under `kata grade`, in the code's process, which sees no file of this one). The checks
# are all made here. Every scenario is called inside grader.testing's `reported` or `expect_raises`,
# with this lesson's advice (cause(): an error only one of its pitfalls raises), or through
# loader_ids() or the checks after it, which recognise the pitfalls the lesson names by their signature (the error
# that exactly that mistake raises, or a result only that mistake gives: reversed channels, a
# 2-D grayscale image, every image n times with n workers...) and then name the pitfall and its
# fix; any other failure keeps its plain, quantified message.


# The files are created in this order, which is neither sorted nor reversed: a dataset that
# keeps the directory's own order (glob, os.listdir) does not come out sorted by accident.
CREATION_ORDER = [7, 2, 11, 0, 9, 4, 12, 1, 6, 10, 3, 8, 5]


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


# --- the pitfalls the lesson names: their fixes, and how to recognise them ----------------------


BGR_READ = ("This is the BGR pitfall: cv2 decodes to BGR, and PyTorch, PIL and every pretrained model expect "
            "RGB: convert what cv2 gives with cv2.cvtColor(image, cv2.COLOR_BGR2RGB).")
BGR_WRITE = ("This is the BGR pitfall: cv2's encoders (cv2.imencode, cv2.imwrite) take their array as BGR, so RGB "
             "pixels handed over as they are come back with red and blue swapped: convert with cv2.COLOR_RGB2BGR "
             "before encoding.")
NONE_FROM_CV2 = ("This is cv2's silent failure: cv2.imread and cv2.imdecode return None for data they cannot decode "
                 "(no exception), and the error surfaces later, in cvtColor or torch.from_numpy, naming no file. "
                 "Check for None right after decoding and raise OSError naming the file (and the member, in a tar).")
ZERO_BYTES = ("cv2.imdecode raises a cv2.error for zero bytes instead of returning None: check for an empty "
              "member before decoding, and raise OSError naming the shard and the member.")
NEGATIVE_STRIDE = ("This is the negative-stride pitfall: img[..., ::-1] is a view with a negative stride, which "
                   "torch.from_numpy refuses: convert with cv2.cvtColor (a new array), or .copy() the view first.")
CHANNELS = ("cv2.cvtColor got an array whose channels do not fit a BGR -> RGB conversion: it needs 3 channels, which "
            "cv2.IMREAD_COLOR always gives; IMREAD_UNCHANGED keeps a grayscale file 2-D and an alpha channel.")
NOT_A_FILE = ("tar.extractfile gives None for a directory entry, and a link carries no bytes of its own: skip every "
              "member for which member.isfile() is false.")
LINK = ("A link (symbolic or hard) is no regular file, whatever its name ends with: it carries no bytes of its own, "
        "and tar.extractfile cannot give them from a stream. Skip every member for which member.isfile() is false: "
        "a member's name does not say what kind of member it is.")
DUPLICATES = ("This is the duplicates trap: the DataLoader runs a copy of the dataset in each worker (num_workers={n}), "
              "and every copy's __iter__ read every shard, so every image came once from each worker. Ask "
              "torch.utils.data.get_worker_info() which worker this is, and read only that worker's share.")
ONE_SHARD_PER_WORKER = ("It gives every image once only when num_workers equals the number of shards (worker k "
                        "reads shard k): this is the classic recipe's second attempt. Any number of workers must "
                        "work, 0 included (get_worker_info() is None there: read every shard).")
DIRECTORY_ORDER = ("This is the directory-order pitfall: glob and os.listdir list files in the directory's own order "
                   "(creation, hash...), which differs between machines: sort the paths.")
RGLOB = ("Path.rglob also searches the subfolders (more/img_10.png is not in root): match with Path(root).glob, "
         "which looks in root only.")


# What only the error of each pitfall says (a DataLoader worker's error carries its traceback in
# its message: anywhere in it).
ERRORS = [
    ErrorPitfall(r"(?s)negative.*stride|stride.*negative", NEGATIVE_STRIDE),
    ErrorPitfall(r"!buf\.empty\(\)", ZERO_BYTES),
    ErrorPitfall(r"!_src\.empty\(\)|got NoneType|'NoneType' object is not subscriptable", NONE_FROM_CV2),
    ErrorPitfall(r"VScn::contains\(scn\)|Invalid number of channels", CHANNELS),
    ErrorPitfall(r"cannot extract \(sym\)link", LINK),
    ErrorPitfall(r"'NoneType' object has no attribute 'read'|cannot extract|StreamError", NOT_A_FILE),
]


def cause(exc: BaseException) -> str:
    """The advice for an error one of the lesson's pitfalls raises (also re-raised from a DataLoader
    worker), else "": `reported`'s advice."""
    return pitfall_saying(exc, ERRORS) or ""


# What code that falls into a pitfall of the results gives, from the right result.
READ_AS_BGR = Pitfall(lambda rgb: rgb.flip(-1), BGR_READ)
DEALT = "They were dealt out like cards (image i into shard i % num_shards): cut contiguous runs instead."
DEALT_IDS = Pitfall(lambda count, num_shards: dealt(count, num_shards), DEALT)
SORTED_SHARDS = Pitfall(lambda order: [i for s in sorted(order) for i in shard_ids(len(order))[s]],
                        "These are the shards in sorted order: keep the paths in the order given.")


def wrong_error(mention: tuple[str, ...]):
    """expect_raises's advice for an error other than the one expected: the pitfall that raised
    it; else `why` where the error is about the bad input (names something in `mention`); else
    nothing more (beside an error about something else, `why` would blame the wrong thing)."""
    return lambda exc: cause(exc) or (None if any(m in str(exc) for m in mention) else "")


def identify(image, what: str, writing: bool = False) -> int:
    """Which of IMAGES `image` is; fails with what is wrong with it otherwise."""
    __tracebackhide__ = True
    if image is None:
        pytest.fail(f"{what} gave None, not an image. {NONE_FROM_CV2}", pytrace=False)
    if not isinstance(image, torch.Tensor):
        pytest.fail(f"{what} gave {returned(image)}, not a torch.Tensor: convert the array cv2 "
                    "returns with torch.from_numpy (no copy).", pytrace=False)
    if tuple(image.shape) != (H, W, 3) or image.dtype != torch.uint8:
        pytest.fail(f"{what} gave an image of {describe(image)}; expected shape ({H}, {W}, 3), uint8: "
                    "height, width, then the 3 channels, with the pixel values as read (no scaling).",
                    pytrace=False)
    pixels = image.contiguous().numpy()
    if pixels.tobytes() in _IDS:
        return _IDS[pixels.tobytes()]
    if pixels[..., ::-1].tobytes() in _IDS:
        pytest.fail(f"{what} gave image {_IDS[pixels[..., ::-1].tobytes()]} with its channels reversed. "
                    + (BGR_WRITE if writing else BGR_READ), pytrace=False)
    pytest.fail(f"{what} gave an image whose pixels match no image written.", pytrace=False)


def check_each_once(ids: list[int], what: str, expected=range(N), num_workers: int = 0) -> None:
    __tracebackhide__ = True
    counts = Counter(ids)
    repeated = {i: n for i, n in sorted(counts.items()) if n > 1}
    missing = sorted(set(expected) - counts.keys())
    if repeated:
        every_image_each = Pitfall(lambda: Counter(list(expected) * num_workers), DUPLICATES.format(n=num_workers))
        pytest.fail(f"{what} gave images more than once (image: times) {repeated}; each must come exactly once. "
                    + (pitfall_of(counts, Counter(expected), [every_image_each], match=operator.eq) or ""), pytrace=False)
    if missing:
        pytest.fail(f"{what} never gave the images {missing} ({len(missing)} of {len(expected)}): the shards "
                    "holding them were read by no process.", pytrace=False)


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
    if not data.startswith(b"\x89PNG"):
        jpeg = data.startswith(b"\xff\xd8")
        pytest.fail(f"{what} is not PNG-encoded (it starts with {data[:4]!r}"
                    + (", a JPEG" if jpeg else "") + "): shards must be lossless. PNG keeps every pixel; "
                    "JPEG changes them.", pytrace=False)
    bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if bgr is None or bgr.ndim != 3 or bgr.shape[2] != 3:
        pytest.fail(f"{what} does not decode to a 3-channel image", pytrace=False)
    return torch.from_numpy(np.ascontiguousarray(bgr[..., ::-1]))


def png_bytes(rgb: torch.Tensor) -> bytes:
    ok, encoded = cv2.imencode(".png", np.ascontiguousarray(rgb.numpy()[..., ::-1]))
    assert ok, "test setup: cannot encode a PNG"
    return encoded.tobytes()


def write_tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    """A tar holding regular-file members (name, data), in order."""
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def odd_kinds_of_png() -> list[tuple[str, bytes, torch.Tensor, str]]:
    """(name, PNG bytes, the RGB uint8 image cv2.IMREAD_COLOR gives, what it is) for PNGs that
    are not 8-bit 3-channel: grayscale, RGBA, 16-bit RGB and 16-bit grayscale."""
    gray = IMAGES[4][..., 1]  # (H, W)
    bgra = np.concatenate([IMAGES[3].numpy()[..., ::-1], np.full((H, W, 1), 128, np.uint8)], axis=2)
    # 16 bits: high byte the pixel, low byte noise; IMREAD_COLOR keeps the high byte.
    low = (np.arange(H * W * 3).reshape(H, W, 3) * 7 % 256).astype(np.uint16)
    rgb16 = IMAGES[6].numpy().astype(np.uint16) * 256 + low
    gray16 = IMAGES[8][..., 2].numpy().astype(np.uint16) * 256 + low[..., 0]
    kinds = [("a_gray.png", gray.numpy(), gray.unsqueeze(-1).expand(H, W, 3), "a grayscale PNG"),
             ("b_rgba.png", bgra, IMAGES[3], "an RGBA PNG"),
             ("c_rgb16.png", np.ascontiguousarray(rgb16[..., ::-1]), IMAGES[6], "a 16-bit RGB PNG"),
             ("d_gray16.png", gray16, IMAGES[8][..., 2:].expand(H, W, 3), "a 16-bit grayscale PNG")]
    out = []
    for name, array, rgb, what in kinds:
        ok, encoded = cv2.imencode(".png", array)
        assert ok, f"test setup: cannot encode {what}"
        out.append((name, encoded.tobytes(), rgb.contiguous(), what))
    return out


def mixed_members() -> list[tuple[str, bytes, torch.Tensor, str]]:
    """(name, data, the RGB image it decodes to, what it is) of mixed.tar's members, in order:
    image files of any name and kind."""
    ok, bmp = cv2.imencode(".bmp", np.ascontiguousarray(IMAGES[3].numpy()[..., ::-1]))
    assert ok, "test setup: cannot encode a BMP"
    plain = [("00000001", png_bytes(IMAGES[1]), IMAGES[1], "a PNG with no suffix"),
             ("img.data", png_bytes(IMAGES[2]), IMAGES[2], "a PNG with the suffix .data"),
             ("x.bmp", bmp.tobytes(), IMAGES[3], "a BMP")]
    return plain + [(f"odd/{name}", data, rgb, what) for name, data, rgb, what in odd_kinds_of_png()]


# --- the inputs, written where the code runs ----------------------------------------------------


# Under `kata grade` the learner's objects live in another process (grader.testing.scenario),
# which sees neither this process's files nor pytest's tmp_path: the scenarios below make their
# inputs there, with these writers, from names. Each writer fills an empty folder.


def write_image_dir(root: Path) -> None:
    """The N images as img_XX.png, created in CREATION_ORDER; a .txt; a subfolder with one more PNG."""
    for i in CREATION_ORDER:
        write_png(root / f"img_{i:02d}.png", IMAGES[i])
    (root / "notes.txt").write_text("not an image: the default pattern *.png leaves it out")
    (root / "more").mkdir()  # a subfolder: its files are not "the image files in root"
    write_png(root / "more" / "img_10.png", IMAGES[0])


def write_shard_set(num_shards: int, root: Path) -> None:
    """part0.tar ... : the PNG files of "images", contiguous, in order (this file's own writer)."""
    images = folder("images")
    for s, ids in enumerate(split(N, num_shards)):
        with tarfile.open(root / f"part{s}.tar", "w") as tar:
            for i in ids:
                tar.add(images / f"img_{i:02d}.png", arcname=f"{i:02d}.png")


def write_python_sorted(root: Path) -> None:
    # Python's sorted() compares names character by character: "img_10" comes before "img_2".
    for name, i in [("img_2.png", 2), ("img_10.png", 10), ("img_1.png", 1)]:
        write_png(root / name, IMAGES[i])


def write_odd_kinds(root: Path) -> None:
    for name, data, _, _ in odd_kinds_of_png():
        (root / name).write_bytes(data)


def write_corrupt(root: Path) -> None:
    write_png(root / "a_good.png", IMAGES[1])
    (root / "b_corrupt.png").write_bytes(b"this is not a PNG file" * 4)
    write_png(root / "c_good.png", IMAGES[2])
    (root / "d_empty.png").write_bytes(b"")


def write_two(root: Path) -> None:
    write_png(root / "a.png", IMAGES[0])
    write_png(root / "b.png", IMAGES[1])


def write_with_dirs(root: Path) -> None:
    """with_dirs.tar, made as `tar -cf with_dirs.tar pngs/` makes it, plus two links."""
    pngs = root / "pngs"
    pngs.mkdir()
    for i in (4, 5, 6):
        shutil.copy(folder("images") / f"img_{i:02d}.png", pngs)
    with tarfile.open(root / "with_dirs.tar", "w") as tar:
        tar.add(pngs, arcname="pngs")  # a directory entry "pngs", then its three files
        for kind, name in [(tarfile.SYMTYPE, "pngs/link.png"), (tarfile.LNKTYPE, "pngs/hardlink.png")]:
            link = tarfile.TarInfo(name)
            link.type, link.linkname = kind, "pngs/img_04.png"
            tar.addfile(link)  # links carry no data of their own


def write_mixed(root: Path) -> None:
    write_tar(root / "mixed.tar", [(name, data) for name, data, _, _ in mixed_members()])


FOLDERS = {"images": write_image_dir, "python_sorted": write_python_sorted, "odd_kinds": write_odd_kinds,
           "corrupt": write_corrupt, "two": write_two, "with_dirs": write_with_dirs, "mixed": write_mixed,
           **{f"shards{n}": functools.partial(write_shard_set, n) for n in SHARD_COUNTS}}
TARS = {"with_dirs": "with_dirs.tar", "mixed": "mixed.tar"}  # the folders holding one tar: its name
_WRITTEN: dict[str, Path] = {}
_SCRATCH: list[tempfile.TemporaryDirectory] = []  # removed when the process ends


def folder(name: str) -> Path:
    """FOLDERS[name]'s folder, written once per process; tests only read it."""
    if name not in _WRITTEN:
        if not _SCRATCH:
            _SCRATCH.append(tempfile.TemporaryDirectory(prefix="kata06-"))
        root = Path(_SCRATCH[0].name) / name
        root.mkdir()
        FOLDERS[name](root)
        for tar in root.rglob("*.tar"):  # known by the file, whatever name opens it (`_audit_tar_opens`)
            stat = tar.stat()
            _tars[stat.st_dev, stat.st_ino] = str(tar)
        _WRITTEN[name] = root
    return _WRITTEN[name]


@contextlib.contextmanager
def fresh(name: str):
    """A new copy of FOLDERS[name]'s folder, for a test that changes it; removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        root = Path(base) / name
        root.mkdir()
        FOLDERS[name](root)
        yield root


def shard_paths(num_shards: int) -> list[Path]:
    """The shards part0.tar ... of `num_shards` shards, in order."""
    root = folder(f"shards{num_shards}")
    return [root / f"part{s}.tar" for s in range(num_shards)]


def shard_ids(num_shards: int) -> list[list[int]]:
    """The images in each of shard_paths(num_shards), in order."""
    return [list(ids) for ids in split(N, num_shards)]


# --- the learner's objects, driven where the code runs (grader.testing.scenario) ---------------


# A scenario builds the learner's datasets over the inputs above, iterates them and returns what
# came out, as data; the tests check it in their own process. Scenarios check nothing, and an
# error of the learner's code leaves them as it is, for the test's `reported` or `expect_raises`.
# Where a test looks at a later step of one object's life (a second epoch, an image asked for
# again), the scenario replays the steps before it and returns that step's result, so that an
# error is reported with the step it happened at.


@contextlib.contextmanager
def directory_dataset(lesson, name: str, pattern: str | None = None, str_root: bool = False):
    root = folder(name)
    root = str(root) if str_root else root
    yield lesson.ImageDirectoryDataset(root) if pattern is None else lesson.ImageDirectoryDataset(root, pattern=pattern)


@contextlib.contextmanager
def shards_dataset(lesson, num_shards: int, order: list[int] | None = None, str_paths: bool = False):
    paths = [shard_paths(num_shards)[s] for s in (order or range(num_shards))]
    yield lesson.TarImageDataset([str(p) for p in paths] if str_paths else paths)


@contextlib.contextmanager
def tar_dataset(lesson, name: str):
    yield lesson.TarImageDataset([folder(name) / TARS[name]])


@contextlib.contextmanager
def broken_dataset(lesson, member: str, data: str):
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        shard = write_tar(Path(base) / "broken.tar", [("00.png", png_bytes(IMAGES[0])), (member, bytes.fromhex(data))])
        yield lesson.TarImageDataset([shard])


@contextlib.contextmanager
def written_dataset(lesson, num_shards: int):
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        yield lesson.TarImageDataset(lesson.write_tar_shards(IMAGES, base, num_shards))


# A dataset crosses to a scenario as its spec, (kind, *arguments):
# ("images", name, pattern=None, str_root=False): ImageDirectoryDataset over FOLDERS[name];
# ("shards", n, order=None, str_paths=False): TarImageDataset over the n shards, in `order`;
# ("tar", name): TarImageDataset over the one tar in FOLDERS[name];
# ("broken", member, data): over broken.tar, image 0 then `member` (its bytes in hex);
# ("written", n): over what write_tar_shards(IMAGES, a new folder, n) returns.
DATASETS = {"images": directory_dataset, "shards": shards_dataset, "tar": tar_dataset, "broken": broken_dataset,
            "written": written_dataset}


def dataset(lesson, spec: tuple):
    """The learner's dataset `spec` names, its inputs made here: a context manager."""
    kind, *args = spec
    return DATASETS[kind](lesson, *args)


def shard_count(spec: tuple) -> int:
    """How many tar files `spec`'s TarImageDataset is given (0: an ImageDirectoryDataset)."""
    kind = spec[0]
    return spec[1] if kind in ("shards", "written") else 0 if kind == "images" else 1


@beside
def directory_listing(lesson, name: str, pattern: str | None = None, str_root: bool = False) -> dict:
    """ImageDirectoryDataset over FOLDERS[name]: its len; the type of its `paths` (None without
    one) and, for each path, its type's name, whether it is a Path, its name and its folder
    relative to root; and the names os.listdir gives for root, in the directory's own order."""
    with dataset(lesson, ("images", name, pattern, str_root)) as ds:
        count = len(ds)
        paths = getattr(ds, "paths", None)
    root = folder(name).resolve()
    return {"len": count, "type": None if paths is None else type(paths).__name__,
            "paths": [(type(p).__name__, isinstance(p, Path), Path(p).name, os.path.relpath(Path(p).resolve().parent, root))
                      for p in (paths if paths is not None else [])],
            "listdir": os.listdir(root)}


@beside
def directory_item(lesson, name: str, index: int, pattern: str | None = None, str_root: bool = False,
                   removed: str | None = None):
    """ds[index] of ImageDirectoryDataset over FOLDERS[name]; with `removed`, over a new copy of
    it from which that file is deleted after the dataset was made."""
    if removed is None:
        with dataset(lesson, ("images", name, pattern, str_root)) as ds:
            return ds[index]
    with fresh(name) as root:
        ds = lesson.ImageDirectoryDataset(root)
        (root / removed).unlink()
        return ds[index]


@beside
def read_when_asked(lesson, asks: int):
    """ImageDirectoryDataset over a.png (image 0) and b.png (1); then a.png rewritten as image 5
    and c.png (image 2) added: its len, and ds[0] asked `asks` times, a.png rewritten as image 7
    before each time after the first."""
    with fresh("two") as root:
        ds = lesson.ImageDirectoryDataset(root)
        write_png(root / "a.png", IMAGES[5])  # the file changes after the dataset was made
        write_png(root / "c.png", IMAGES[2])  # and a file comes after it was made
        count, images = len(ds), []
        for k in range(asks):
            if k:
                write_png(root / "a.png", IMAGES[7])  # and changes again
            images.append(ds[0])
        return count, images


@beside
def shards_written(lesson, images: list, num_shards: int, target: str = ".") -> tuple[str, list | None]:
    """write_tar_shards(images, `target` in a new folder, num_shards): the repr of what it
    returned and, where that is a list of Paths, for each its name, its folder relative to the
    new folder, whether it is a tar file, and the (name, data in hex) of its file members."""
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        paths = lesson.write_tar_shards(images, Path(base) / target, num_shards)
        if not (isinstance(paths, list) and all(isinstance(p, Path) for p in paths)):
            return repr(paths), None
        shards = []
        for p in paths:
            is_tar = p.is_file() and tarfile.is_tarfile(p)
            members = [(name, data.hex()) for name, data in read_shard(p)] if is_tar else None
            shards.append((p.name, os.path.relpath(p.parent, base), is_tar, members))
        return repr(paths), shards


@beside
def shards_refused(lesson, count: int, num_shards: int, then_look: bool = False):
    """write_tar_shards(IMAGES[:count], a folder not yet made, num_shards): the repr of what it
    returned; with `then_look`, its error (which the test has seen already) left aside, whether
    the folder exists after the call."""
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        target = Path(base) / "shards"
        try:
            returned = repr(lesson.write_tar_shards(IMAGES[:count], target, num_shards))
        except Exception:  # looked at, by the test, in the call without then_look
            if not then_look:
                raise
        return target.exists() if then_look else returned


def drained(data: DataLoader, epochs: int) -> list:
    """The items of `data`'s epoch `epochs` (the epochs before it run first). Its worker processes
    are stopped whatever happens: an iteration that raised leaves its iterator in a reference
    cycle with the exception, and when the garbage collector frees it later, during some other
    test, the queues that would tell its workers to stop are closed, and torch waits 5 s per
    worker before killing them."""
    iterators = []
    try:
        for _ in range(epochs):
            iterators.append(iter(data))
            items = list(iterators[-1])
        return items
    finally:
        for iterator in iterators:
            if hasattr(iterator, "_shutdown_workers"):
                iterator._shutdown_workers()  # what the iterator's __del__ calls


@beside
def loaded(lesson, spec: tuple, num_workers: int, batch_size: int | None = None, epochs: int = 1,
           record: bool = False) -> tuple[list, list | None]:
    """What DataLoader(dataset(spec), batch_size, num_workers) gives in its epoch `epochs`; with
    `record`, (who, file name) for each .tar opened meanwhile, by this process or its workers."""
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(recording_tar_opens()) if record else None
        ds = stack.enter_context(dataset(lesson, spec))
        data = DataLoader(ds, batch_size=batch_size, num_workers=num_workers,
                          multiprocessing_context=FORK if num_workers else None)
        items = drained(data, epochs)
    return items, None if opened is None else [(who, Path(path).name) for who, path in opened]


@beside
def listed(lesson, spec: tuple, epochs: int = 1) -> list:
    """list(ds) for the dataset `spec` names, in its epoch `epochs` (the epochs before it run first)."""
    with dataset(lesson, spec) as ds:
        for _ in range(epochs):
            items = list(ds)
        return items


@beside
def worker_share(lesson, spec: tuple, worker: int, num_workers: int) -> tuple[list, list[str]]:
    """What dataset(spec) gives when iterated as DataLoader worker `worker` of `num_workers`
    (simulated: get_worker_info() says so, as in a worker process), and the names of the .tar
    files it opened meanwhile."""
    with dataset(lesson, spec) as ds, recording_tar_opens() as opened, simulated_worker(worker, num_workers, ds):
        items = list(ds)
    return items, [Path(path).name for _, path in opened]


@beside
def pinned_batches(lesson) -> list[tuple[bool, torch.Tensor, torch.Tensor]]:
    """For each batch of DataLoader(TarImageDataset(paths of 3 shards), batch_size=4, pin_memory=True):
    whether it is pinned, the batch, and the batch copied to the GPU (non_blocking) and back."""
    with dataset(lesson, ("shards", 3)) as ds:
        return [(batch.is_pinned(), batch, batch.to("cuda", non_blocking=True).cpu())
                for batch in DataLoader(ds, batch_size=4, pin_memory=True)]


# --- checks of what the scenarios saw -----------------------------------------------------------


def one_shard_per_worker_only(lesson, spec: tuple, count: int) -> bool:
    """Whether `spec`'s dataset of `count` shards gives every image once when simulated as
    `count` workers, one shard each."""
    ids = []
    try:
        for k in range(count):
            items, _ = worker_share(lesson, spec, k, count)
            ids += [_IDS.get(image.contiguous().numpy().tobytes()) for image in items]
    except Exception:  # noqa: BLE001 (then it is not that pitfall)
        return False
    return bool(ids) and None not in ids and len(ids) == len(set(ids))


USED_UP = ("Epoch 1 gave its images: what epoch 2 reads was used up by epoch 1, as a shard opened once in "
           "__init__ is read to its end. Open the shards in __iter__, afresh every epoch.")


def first_epoch_works(lesson, spec: tuple, num_workers: int, batch_size: int | None) -> bool:
    """Whether epoch 1 of DataLoader(dataset(spec), batch_size, num_workers) runs without an error."""
    try:
        loaded(lesson, spec, num_workers, batch_size, 1, False)
    except Exception:  # noqa: BLE001 (then the failure is not epoch 2's own)
        return False
    return True


def loader_ids(lesson, what: str, spec: tuple, num_workers: int, batch_size: int | None = None, epochs: int = 1,
               opened: list | None = None) -> list[int]:
    """The ids of the images DataLoader(dataset(spec), batch_size, num_workers) gives in its epoch
    `epochs`, batched (B, H, W, 3) or not; `opened`, where given, gets the (who, shard name) of
    each .tar opened."""
    __tracebackhide__ = True
    try:
        items, opens = loaded(lesson, spec, num_workers, batch_size, epochs, opened is not None)
    except Exception as exc:  # what a rerun shows names two pitfalls; any error is reported
        count, message = shard_count(spec), None
        if cause(exc) or isinstance(exc, TimeoutError):
            pass  # a pitfall the error names itself; or the call's time ran out, which a rerun cannot explain
        elif epochs > 1 and first_epoch_works(lesson, spec, num_workers, batch_size):
            message = raised(what, exc, USED_UP)
        elif count and num_workers != count and one_shard_per_worker_only(lesson, spec, count):
            message = raised(what, exc, ONE_SHARD_PER_WORKER)  # a refusal of some worker counts
        if message is None:
            with reported(what, advice=cause):
                raise
        items = None
    if items is None:
        fail(message)  # outside `except`: no chained traceback
    if opened is not None:
        opened += opens
    ids = []
    for entry in items:
        images = entry.unbind(0) if batch_size is not None else [entry]
        ids += [identify(image, what) for image in images]
    return ids


# --- ImageDirectoryDataset ---------------------------------------------------------------------


def count_paths(listing: dict, what: str, expected: int) -> None:
    """len(ds) must be `expected`; a count that only Path.rglob gives is named."""
    __tracebackhide__ = True
    count = listing["len"]
    if count == expected:
        return
    in_subfolders = [name for _, _, name, parent in listing["paths"] if parent != "."]
    pytest.fail(f"{what} has {counted(count, 'item')}; root holds {counted(expected, 'file')} matching the pattern "
                "(and a .txt, and a subfolder more/ with one more .png, which is not in root)."
                + (f"\n{RGLOB}" if in_subfolders else ""), pytrace=False)


def item(lesson, name: str, index: int, what: str, **options):
    """ImageDirectoryDataset over FOLDERS[name], item `index` (directory_item); an error no pitfall
    names is told with `what` and the learner's lines."""
    __tracebackhide__ = True
    with reported(what, advice=cause):
        return directory_item(lesson, name, index, **options)


def directory_order(listed: list[str]) -> list[int]:
    """The image numbers of the img_*.png files in `listed`, the order the directory lists them."""
    return [int(name[4:6]) for name in listed if name.startswith("img_") and name.endswith(".png")]


def check_three_uint8_channels(image, expected: torch.Tensor, what: str) -> None:
    """`image` must be `expected`: 3 channels of 8 bits whatever the file held. A shape or dtype
    that only a decoder keeping the file's own layout gives names the decoder's flag."""
    __tracebackhide__ = True
    if not isinstance(image, torch.Tensor) or image.dtype != torch.uint8 or tuple(image.shape) != (H, W, 3):
        got = returned(image)
        kept = None
        if isinstance(image, torch.Tensor):
            if tuple(image.shape) == (H, W):
                kept = "the grayscale file's single channel (a 2-D array)"
            elif tuple(image.shape) == (H, W, 4):
                kept = "the alpha channel (4 channels)"
            elif tuple(image.shape[:2]) == (H, W) and image.dtype == torch.uint16:
                kept = "the 16-bit values (uint16)"
        flag = (f" The image kept {kept}: that is what cv2.IMREAD_UNCHANGED (or IMREAD_ANYDEPTH, IMREAD_GRAYSCALE) "
                "gives; cv2.IMREAD_COLOR repeats gray into 3 channels, drops alpha and cuts 16 bits to 8."
                if kept else "")
        pytest.fail(f"{what} gave {got}; expected a ({H}, {W}, 3) uint8 tensor whatever the file holds.{flag}",
                    pytrace=False)
    told = pitfall_of(image, expected, [READ_AS_BGR], expected, match=torch.equal)
    if told:
        pytest.fail(f"{what} gave the image with its channels reversed. {told}", pytrace=False)
    assert_close(image, expected, rtol=0, atol=0,
                 what=f"{what} (gray repeated in 3 channels, alpha dropped, 16 bits cut to 8)")


CORRUPT = ["a_good.png", "b_corrupt.png", "c_good.png", "d_empty.png"]  # write_corrupt's files, sorted
READ_IN_INIT = ("The dataset reads the images in __init__, so one bad file breaks the whole dataset: find only "
                "the paths in __init__, and read each file in "
                "__getitem__, when it is asked for, not in __init__ (then ds[1] raises for b_corrupt.png, and ds[0] "
                "still works).")


def made_over_corrupt(lesson) -> dict:
    """directory_listing of ImageDirectoryDataset over write_corrupt's folder, which reads no image
    and so raises nothing; its paths, where it has them, in sorted order."""
    __tracebackhide__ = True
    what = f"ImageDirectoryDataset(root) for a folder holding {', '.join(CORRUPT[:-1])} and {CORRUPT[-1]}"
    with reported(what, advice=cause):
        try:
            listing = directory_listing(lesson, "corrupt")
        except NotImplementedError:
            raise
        except Exception as exc:  # an error of reading an image is named; any other is reported
            if not any(name in str(exc) for name in CORRUPT[1::2]) and cause(exc) is not NONE_FROM_CV2:
                raise
            listing, message = None, raised(what, exc, READ_IN_INIT)
    if listing is None:
        fail(message)  # outside `except`: no chained traceback
    names = [name for _, _, name, _ in listing["paths"]]
    if sorted(names) == CORRUPT and names != CORRUPT:
        pytest.fail(f"ds.paths is {names}; expected the files in sorted order, {CORRUPT}: ds[i] reads the i-th path "
                    "in sorted order. " + (DIRECTORY_ORDER if names == listing["listdir"] else ""), pytrace=False)
    return listing


# --- write_tar_shards --------------------------------------------------------------------------


def promised_sizes(count: int, num_shards: int) -> list[int]:
    """The shard sizes write_tar_shards promises: balanced, the first shards take the extra ones."""
    per_shard, extra = divmod(count, num_shards)
    return [per_shard + (k < extra) for k in range(num_shards)]


def check_sizes(sizes: list[int], count: int, num_shards: int, what: str) -> None:
    __tracebackhide__ = True
    expected = promised_sizes(count, num_shards)
    if sizes == expected:
        return
    if sum(sizes) != count:
        pytest.fail(f"{what} wrote {counted(sum(sizes), 'image')} in all (shard sizes {sizes}); expected {count}, "
                    f"in shards of sizes {expected}", pytrace=False)
    if max(sizes) - min(sizes) > 1:
        pytest.fail(f"{what} wrote shards of sizes {sizes}: balance them (sizes differ by at most one, "
                    f"here {expected}), or the worker with the biggest shard keeps the others waiting.",
                    pytrace=False)
    pytest.fail(f"{what} wrote shards of sizes {sizes}; expected {expected}: the first shards take the "
                "extra ones (divmod(len(images), num_shards) gives the base size and how many get one "
                "more), and with more shards than images the last shards are the empty ones.", pytrace=False)


def write_shards(lesson, images, num_shards: int, what: str, target: str = ".") -> tuple[str, list | None]:
    """What shards_written saw of write_tar_shards(images, `target` in a new folder, num_shards);
    a missing parent directory is named."""
    __tracebackhide__ = True
    try:
        return shards_written(lesson, images, num_shards, target)
    except Exception as exc:  # a missing parent is named; any error is reported
        if not (isinstance(exc, FileNotFoundError) and len(Path(target).parts) > 1):  # (else its parent exists)
            with reported(what, advice=cause):
                raise
        message = raised(what, exc, f"{target} is missing, and so is its parent. Create the directory with every "
                                    "missing parent (Path.mkdir(parents=True, exist_ok=True)).")
    fail(message)  # outside `except`: no chained traceback


def members_of(written: tuple[str, list | None], num_shards: int, what: str) -> list[list[tuple[str, bytes]]]:
    """The (name, data) of each shard's file members, as shards_written saw them; it must have
    returned a list of `num_shards` paths to tar files."""
    __tracebackhide__ = True
    returned, shards = written
    if shards is None:
        pytest.fail(f"{what} returned {returned}; expected a list of pathlib.Path", pytrace=False)
    if len(shards) != num_shards:
        pytest.fail(f"{what} returned {counted(len(shards), 'path')}", pytrace=False)
    not_tar = [name for name, _, is_tar, _ in shards if not is_tar]
    if not_tar:
        pytest.fail(f"{what} returned {[name for name, _, _, _ in shards]}: {not_tar} are not tar files", pytrace=False)
    return [[(name, bytes.fromhex(data)) for name, data in members] for _, _, _, members in shards]


def dealt(count: int, num_shards: int) -> list[int]:
    """The images in shard order where image i went into shard i % num_shards."""
    return [i for s in range(num_shards) for i in range(s, count, num_shards)]


def out_of_order(ids: list[int], count: int, num_shards: int, what: str) -> None:
    """Fails: the shards read one after another gave the images `ids` (their numbers in the list written)."""
    __tracebackhide__ = True
    pytest.fail(f"{what}: reading the shards one after another gives the images {ids}; expected them in their "
                f"original order, {list(range(count))}. "
                + (pitfall_of(ids, list(range(count)), [DEALT_IDS], count, num_shards, match=operator.eq) or ""),
                pytrace=False)


class Shown(str):
    """The repr of a value a scenario returned, shown as the value itself would be."""

    def __repr__(self) -> str:
        return str(self)


# --- TarImageDataset: members, order, and which worker reads what (no worker processes) ---------


@contextlib.contextmanager
def simulated_worker(worker_id: int, num_workers: int, ds):
    """Inside the block, torch.utils.data.get_worker_info() says: worker `worker_id` of `num_workers`."""
    saved = _torch_worker._worker_info
    _torch_worker._worker_info = _torch_worker.WorkerInfo(id=worker_id, num_workers=num_workers,
                                                          seed=1000 + worker_id, dataset=ds)
    try:
        yield
    finally:
        _torch_worker._worker_info = saved


def shards_read(ids: list[int], names: list[str], worker: int, num_workers: int, opened: list[str],
                what: str) -> list[str]:
    """The shards whose images `ids` are, in the order read; fails unless each was read whole, once.
    `names`: the shards the dataset was given, in order; `opened`: those the worker opened. A
    worker that kept every num_workers-th image of all the shards is told so."""
    __tracebackhide__ = True
    held = {name: shard_ids(len(names))[int(name[4:-4])] for name in names}
    owner = {i: name for name, members in held.items() for i in members}
    read = []
    for i in ids:
        if not read or read[-1] != owner[i]:
            read.append(owner[i])
    whole = [i for name in read for i in held[name]]
    if ids != whole or len(set(read)) != len(read):
        every = [i for name in names for i in held[name]]
        all_opened = set(opened) >= set(names)
        every_nth_image = Pitfall(
            lambda: every[worker::num_workers],
            f"those at positions {worker}, {worker + num_workers}, {worker + 2 * num_workers}, ... of all the shards "
            f"read one after another ({every})" + (f", and it opened all {len(names)} shards" if all_opened else "")
            + f". A worker reads only its own shards, each whole, from start to end ({names[0]} gives "
            f"{held[names[0]]}): split the list of shards between the workers, not the images.",
            shows=lambda: num_workers > 1)
        told = pitfall_of(ids, None, [every_nth_image], match=operator.eq)
        if told:
            pytest.fail(f"{what} gave the images {ids}: {told}", pytrace=False)
        pytest.fail(f"{what} gave the images {ids}; a worker reads each of its shards whole, from start to end, "
                    f"one after another: the shards these images come from, {read}, read so, give {whole}.",
                    pytrace=False)
    return read


# --- TarImageDataset: every image exactly once -------------------------------------------------


# The tests with worker processes drive the DataLoader beside the code too. Under `kata grade`
# that process may make no process (grader.grading.seccomp): those tests then fail for the kit's
# answer as well, and so run in the student's process instead.


# --- TarImageDataset: each worker opens only its own shards -------------------------------------


# An audit hook sees every open() and os.open() of this process and of the workers it forks
# (tarfile opens files with one or the other, whatever way the learner calls it). While a
# scenario records, it appends "who<TAB>path" for each .tar opened to a file; os.write on an
# O_APPEND descriptor is itself no "open" event and is safe from many processes at once. A tar
# is known by the file opened, not by the name it was opened by: a link to a shard, symbolic or
# hard, under any name, is that shard (`_tars`: the test's own, by device and inode).
_record = {"fd": -1}
_tars: dict[tuple[int, int], str] = {}
_hook_installed = False


def _audit_tar_opens(event: str, args: tuple) -> None:
    if event != "open" or _record["fd"] < 0 or isinstance(args[0], int):
        return
    try:
        path = os.path.realpath(os.fsdecode(args[0]))
        stat = os.stat(path)
        path = _tars.get((stat.st_dev, stat.st_ino), path)
        if path.endswith(".tar"):
            info = get_worker_info()
            who = "the main process" if info is None else f"worker {info.id}"
            os.write(_record["fd"], f"{who}\t{path}\n".encode())
    except Exception:  # noqa: BLE001 (a hook must never break the open it watches)
        pass


@contextlib.contextmanager
def recording_tar_opens():
    """Collects (who, path) for each .tar opened inside the block, workers included."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit_tar_opens)  # for the rest of the session; idle while fd < 0
        _hook_installed = True
    opened: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="kata06-") as base:
        log = Path(base) / "opens.log"
        _record["fd"] = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC)
        try:
            yield opened
        finally:
            os.close(_record["fd"])
            _record["fd"] = -1
            opened += [tuple(line.split("\t")) for line in log.read_text().splitlines()]


CONTRACT = """Contract (promise of the lesson text, docstrings and hints -> tests; "named": the failure names the pitfall):
- HxWx3 uint8, RGB, exactly the pixels written, whatever kind of image file -> identify() in every
  test reading images (BGR named), test_grayscale_rgba_and_16_bit_files_give_three_uint8_channels
- ImageDirectoryDataset: index i is the i-th path in (Python's) sorted order; the directory's
  own order differs between machines (named)
    -> test_directory_dataset_gives_every_image_in_sorted_order, test_sorted_means_pythons_sorted
- `paths` is a list[Path], sorted, found once in __init__
    -> test_directory_dataset_gives_every_image_in_sorted_order, test_files_are_read_when_asked_for_not_in_init
- only the files in root (not its subfolders, rglob named) matching `pattern` (default *.png); root str or Path
    -> test_pattern_selects_the_files, test_directory_dataset_gives_every_image_in_sorted_order
- nothing read in __init__, a file read when asked for -> test_files_are_read_when_asked_for_not_in_init
- corrupt, empty or missing file -> OSError naming it; cv2.imread's silent None (named)
    -> test_unreadable_file_raises_an_error_naming_it
- ... through a DataLoader with workers too -> test_unreadable_file_error_survives_dataloader_workers
- index past the end -> IndexError -> test_index_past_the_end_raises_index_error
- grayscale, RGBA, 16-bit files -> 3 channels of uint8 (IMREAD_COLOR; what IMREAD_UNCHANGED keeps, named)
    -> test_grayscale_rgba_and_16_bit_files_give_three_uint8_channels
- img[..., ::-1] has a negative stride that torch.from_numpy refuses (named) -> cause() in every test reading images
- a map-style dataset keeps the sampler's order with workers -> test_directory_dataset_in_a_dataloader_with_two_workers
- write_tar_shards: a list of num_shards Paths, in order; PNG members (lossless, JPEG named), RGB
  pixels back (BGR named) -> test_write_tar_shards_balanced_contiguous_and_lossless, test_write_tar_shards_round_trip
- contiguous runs in order, sizes differ by <= 1, the first shards take the extra ones
    -> test_write_tar_shards_balanced_contiguous_and_lossless, test_write_tar_shards_round_trip
- more shards than images (or no images): the last shards are empty valid tars
    -> test_write_tar_shards_balanced_contiguous_and_lossless
- any image size, non-contiguous image tensors -> test_write_tar_shards_round_trip
- directory created if missing, parents too (named) -> test_write_tar_shards_creates_the_directory
- ValueError for num_shards < 1, before anything else (no directory made)
    -> test_write_tar_shards_refuses_fewer_than_one_shard
- TarImageDataset: every image once for 0-4 workers and 1, 3, 4, 5 shards; the duplicates
  trap and one-shard-per-worker (named)
    -> test_every_image_once_for_any_workers_and_shards, test_tar_dataset_with_two_workers_gives_every_image_once
- ... with and without batching -> test_every_image_once_in_batches; epoch after epoch -> test_every_epoch_gives_every_image
- main process / num_workers=0: every shard in the order given, each from start to end
    -> test_tar_dataset_without_workers_gives_every_image_in_order, test_tar_dataset_reads_the_shards_in_the_order_given
- in a worker: its own share (any split: contiguous or strided), each shard whole and in the
  order given; every shard read by exactly one worker; shares differ by <= 1 shard; a worker
  without a shard yields nothing; opening only its own shards -> test_workers_share_the_shards
- each shard opened by one worker only, none in the main process, shards spread evenly;
  shards opened in __iter__, not __init__ -> test_each_worker_opens_only_its_own_shards
- members that are not regular files (directories, links) skipped (named) -> test_non_file_members_in_a_tar_are_skipped
- regular members of any name and image format (PNG, BMP; gray/RGBA/16-bit) -> RGB uint8
    -> test_tar_members_of_any_name_and_kind_are_decoded
- a member that does not decode (garbage, text, empty: cv2.imdecode's error for zero bytes, named)
  -> OSError naming shard and member -> test_undecodable_member_raises_an_error_naming_it
- the lesson's example: written shards stream through TarImageDataset -> test_written_shards_stream_through_tar_image_dataset
- pin_memory: pinned batches copy to the GPU -> test_pinned_batches_copy_to_the_gpu (CUDA only)
- the rest of the text (tar streaming, tar.members growing, num_workers tuning, collate,
  prefetch, persistent workers, per-worker seeding) is background for the learner's own loaders: no function of
  this lesson takes it.
"""
