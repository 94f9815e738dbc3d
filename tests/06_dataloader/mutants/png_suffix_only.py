"""Selects tar members by name.endswith(".png") instead of isfile(): a member that does not decode (e.g. notes.txt) is skipped silently and valid non-.png members are dropped; breaks "A member that cannot be decoded raises OSError naming the shard and the member" / "PNG or other members decoded with cv2.imdecode"."""

import tarfile

import cv2
import numpy as np
from torch.utils.data import IterableDataset, get_worker_info


def _read_png_members(path):
    with tarfile.open(path, mode="r|") as tar:
        for member in tar:
            if member.name.lower().endswith(".png"):  # only the images, skip everything else
                data = np.frombuffer(tar.extractfile(member).read(), dtype=np.uint8)
                yield _to_rgb_tensor(cv2.imdecode(data, cv2.IMREAD_COLOR), f"{path} (member {member.name})")  # noqa: F821


class TarImageDataset(IterableDataset):
    def __init__(self, paths) -> None:
        super().__init__()
        self.paths = list(paths)

    def __iter__(self):
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id::info.num_workers]
        for path in mine:
            yield from _read_png_members(path)
