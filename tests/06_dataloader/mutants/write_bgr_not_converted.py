"""Hands the RGB tensors to cv2.imwrite as they are: cv2 takes them for BGR, so the shards hold red and blue swapped."""

import os
import tarfile
import tempfile

import cv2

EXPECT = r"BGR pitfall"  # what a learner who made this mistake must read


def _write_tar(path, images, indices):
    with tarfile.open(path, "w") as tar, tempfile.TemporaryDirectory() as tmp:
        for index in indices:
            file = os.path.join(tmp, f"{index:08d}.png")
            cv2.imwrite(file, images[index].numpy())
            tar.add(file, arcname=os.path.basename(file))
