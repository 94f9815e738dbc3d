"""expect: points=2 state=in progress

add() raises, and, where its errors cross to the tests' process as records (the default), the
record's frames name files the code cannot read but that process can: the kit's answer and a
classmate's file, line by line, and /dev/zero. The tests' process keeps only frames in the
student's own files: no line of those files reaches the results, and reading /dev/zero does not
take its memory. scale() is right."""

import sys
from pathlib import Path


def _frames_elsewhere():
    wire = sys.modules.get("grader.remote.wire")
    if wire is None:  # the checks are in this process: nothing to aim at
        return
    kit = Path(sys.modules["grader"].__file__).parents[1]
    named = [str(kit / "solutions" / "98_demo" / "demo.py")]
    try:  # the class folder, from the grader's command line
        words = Path("/proc/1/cmdline").read_bytes().split(b"\0")
        named += [str(Path(w.decode()) / "correct" / "exercises" / "98_demo" / "demo.py") for w in words if b"class" in w]
    except OSError:
        pass
    made = wire.error_record

    def error_record(exc, roots):
        record = made(exc, roots)
        record["frames"] = [("/dev/zero", 1, "add")] + [(f, n, "add") for f in named for n in range(1, 13)]
        return record

    wire.error_record = error_record


_frames_elsewhere()


def add(a, b):
    raise ValueError("no")


def scale(x, k=2):
    return x * k
