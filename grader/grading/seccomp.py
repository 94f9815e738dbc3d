"""What a student's process under ``kata grade`` may not do, by seccomp: leave its CPU, make processes.

Every process behind the boundary keeps the one CPU its run was given (grader.grading.sandbox):
sched_setaffinity fails with EPERM (`pinned`), so code that makes threads or processes to
hog the machine slows only its own run, never a classmate's running beside it.

The code process (grader.grading.codeprocess: the code under test, its checks in the tests'
process, the default) also makes no process (`no_processes`).

A timed call is timed by the CPU time of the code process's processes as the kernel counts it
(grader.remote.cputime). A child the kernel reaps by itself (its parent ignores SIGCHLD) adds
its time to nobody's, and one made and gone between two readings is never seen; its aten ops
are recorded in its own copy of the recorder. Threads are counted (a process's clock counts
all of them). So the code process may make threads and nothing else: fork, vfork, clone without
CLONE_THREAD (posix_spawn's included) fail with EPERM; clone3 fails with ENOSYS, as under
Docker's default profile, so that the C library falls back to clone, whose flags a filter can
read. A test whose code needs processes (a DataLoader's workers) then fails for the kit's
answer too, and so runs in the student's process (grader.grading.schedule.find_fallbacks).

The filter is classic BPF, set with prctl after PR_SET_NO_NEW_PRIVS; it cannot be removed, and
every thread made afterwards inherits it. x86-64 and AArch64 only: elsewhere `Unavailable`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

from grader.grading.isolation import Unavailable

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_CLONE_THREAD = 0x00010000
_X32_SYSCALL_BIT = 0x40000000

# (audit arch, process-making syscalls other than clone and clone3, clone, clone3, sched_setaffinity):
# the kernel's include/uapi/linux/audit.h and each architecture's syscall table.
_ARCHES = {
    "x86_64": (0xC000003E, (57, 58), 56, 435, 203),  # fork, vfork
    "aarch64": (0xC00000B7, (), 220, 435, 122),  # (no fork nor vfork: clone does both)
}

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (little-endian: arg 0's low word)


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def program(machine: str, processes: bool = False) -> bytes:
    """The filter for `machine` (platform.machine()), as struct sock_filter entries: no
    sched_setaffinity, and no process made unless `processes`."""
    if machine not in _ARCHES:
        raise Unavailable(f"no seccomp filter for {machine} (only {', '.join(_ARCHES)})")
    arch, others, clone, clone3, affinity = _ARCHES[machine]
    # (code, jump if true, jump if false, k): jumps name a label, resolved below.
    code: list[tuple] = [(_LD_W_ABS, None, None, _ARCH), (_JEQ, None, "deny", arch), (_LD_W_ABS, None, None, _NR)]
    if machine == "x86_64":
        code.append((_JGE, "deny", None, _X32_SYSCALL_BIT))  # the x32 ABI's numbers
    if processes:
        code.append((_JEQ, "deny", "allow", affinity))
    else:
        code += [(_JEQ, "deny", None, affinity), (_JEQ, "nosys", None, clone3)]
        code += [(_JEQ, "deny", None, nr) for nr in others]
        code += [(_JEQ, None, "allow", clone), (_LD_W_ABS, None, None, _ARG0), (_JSET, "allow", "deny", _CLONE_THREAD)]
    labels = {"allow": len(code), "deny": len(code) + 1, "nosys": len(code) + 2}
    code += [
        (_RET, None, None, _ALLOW),
        (_RET, None, None, _ERRNO | errno.EPERM),
        (_RET, None, None, _ERRNO | errno.ENOSYS),
    ]
    out = b""
    for at, (op, true, false, k) in enumerate(code):
        jt, jf = ((labels[j] - at - 1) if j else 0 for j in (true, false))
        out += struct.pack("=HBBI", op, jt, jf, k)
    return out


def pinned() -> None:
    """From now on this process, and every thread and process it makes, keeps its CPUs.
    Raises Unavailable where the filter cannot be set."""
    _install(program(platform.machine(), processes=True))


def no_processes() -> None:
    """From now on this process, and every thread it makes, can make no other process, nor
    leave its CPUs. Raises Unavailable where the filter cannot be set."""
    _install(program(platform.machine()))


def _install(code: bytes) -> None:
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Filter(len(code) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Unavailable(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise Unavailable(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
