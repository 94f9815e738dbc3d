"""expect: points=4 state=done

Right answers only if its attacks on the machine fail: it opens a kernel setting under /proc/sys
for writing (with a value the kernel refuses, so nothing changes even where the write is let
through) and makes a user namespace of its own, which would give it every capability there.
Behind the boundary the run is an unprivileged id (nobody, under a root grader), /proc/sys is
read-only, and it may make no user namespace."""

import ctypes
import errno

_escaped = []
try:
    with open("/proc/sys/kernel/pid_max", "w") as _f:
        _f.write("1")  # out of range: EINVAL, not a change, if the kernel lets the write through
except OSError as _error:
    if _error.errno == errno.EINVAL:
        _escaped.append("/proc/sys is writable")
if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0:  # CLONE_NEWUSER
    _escaped.append("a user namespace of its own")


def add(a, b):
    return a + b if not _escaped else None


def scale(x, k=2):
    return x * k if not _escaped else None
