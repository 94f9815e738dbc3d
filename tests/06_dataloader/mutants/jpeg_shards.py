"""Encodes the shard members as JPEG: smaller files, but lossy, so the pixels read back are not the pixels written."""

import io
import tarfile

import cv2

EXPECT = r"lossless"  # what a learner who made this mistake must read


def _write_tar(path, images, indices):
    with tarfile.open(path, "w") as tar:
        for index in indices:
            _, encoded = cv2.imencode(".jpg", cv2.cvtColor(images[index].numpy(), cv2.COLOR_RGB2BGR))
            member = tarfile.TarInfo(f"{index:08d}.jpg")
            member.size = encoded.size
            tar.addfile(member, io.BytesIO(encoded.tobytes()))
