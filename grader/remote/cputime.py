"""The CPU time a process and every process under it spend, as the kernel counts it, read from
outside them.

A timed call of the code under test is timed from the tests' process by the CPU-time clocks of
S's processes (clock_gettime on a process's CPU clock, which Linux lets any process read): what
the code spends, whatever its own clocks say, and unlike a wall-clock window, without the cost
of the messages that carry the call. A process's clock counts all its threads. A child counts
while it lives, and the time of children that ended and were waited for counts from their
parent's record of it (/proc/PID/stat, in clock ticks). A process seen at the start of a timed
call and gone at its end took time that can no longer be read: `spent` refuses the call.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_TICK_NS = 10**9 // os.sysconf("SC_CLK_TCK")


class Ended(AssertionError):
    """A process of the code under test ended during a timed call."""


def _clock(pid: int) -> int:
    """The id of `pid`'s CPU clock: MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) in Linux's
    include/linux/posix-timers.h."""
    return (~pid << 3) | 2


def processes(root: int) -> list[int]:
    """`root` and every process under it, each before its children."""
    found, i = [root], 0
    while i < len(found):
        pid = found[i]
        i += 1
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def sample(root: int) -> dict[int, int]:
    """Nanoseconds of CPU each process under `root` has spent so far, its waited-for children's
    included (processes that end while this reads are left out)."""
    spent = {}
    for pid in processes(root):
        try:
            own = time.clock_gettime_ns(_clock(pid))
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children = int(fields[13]) + int(fields[14])  # cutime, cstime (stat's 16th and 17th fields)
        spent[pid] = own + children * _TICK_NS
    return spent


def spent(before: dict[int, int], after: dict[int, int]) -> float:
    """Seconds of CPU the processes spent between the two samples."""
    gone = set(before) - set(after)
    if gone:
        raise Ended(
            f"{len(gone)} process(es) of the code under test ended during a timed call, so the time "
            "they spent cannot be counted: timed code must not start or stop processes"
        )
    return sum(after[pid] - before.get(pid, 0) for pid in after) / 1e9


def threads(pids: list[int]) -> frozenset[tuple[int, int]]:
    """The (process, thread) ids of the `pids`' threads alive now."""
    found = set()
    for pid in pids:
        try:
            found.update((pid, int(tid)) for tid in os.listdir(f"/proc/{pid}/task"))
        except (OSError, ValueError):
            continue
    return frozenset(found)


def beside(pids: list[int], known: frozenset[tuple[int, int]]) -> int:
    """Nanoseconds of CPU the `pids` have spent so far in threads other than the `known` ones:
    each process's CPU clock, which counts every thread, ended ones too, less each known
    thread's own (/proc/PID/task/TID/schedstat). With `known` the threads alive before a call,
    what the call adds to it ran in threads it started. Read once the known threads wait (S may
    still be at work after it answered, freeing what the call made, and a running thread's
    schedstat lags its clock, by up to a scheduler tick: a CI run under load read 3.9 ms so)."""
    for attempt in range(1100):  # yield first; on a loaded machine, sleep so that they get a CPU to stop on
        if not any(_running(pid, tid) for pid, tid in known):
            break
        os.sched_yield() if attempt < 1000 else time.sleep(0.0005)
    return sum(_process_clock(pid) for pid in pids) - sum(_schedstat(pid, tid) for pid, tid in known)


def _running(pid: int, tid: int) -> bool:
    """Whether thread `tid` of `pid` is on a CPU or waiting for one (state R in /proc)."""
    try:
        fd = os.open(f"/proc/{pid}/task/{tid}/stat", os.O_RDONLY)
    except OSError:
        return False
    try:
        return os.read(fd, 512).rsplit(b")", 1)[1].split()[0] == b"R"
    except (OSError, IndexError):
        return False
    finally:
        os.close(fd)


def _process_clock(pid: int) -> int:
    try:
        return time.clock_gettime_ns(_clock(pid))
    except OSError:
        return 0


def _schedstat(pid: int, tid: int) -> int:
    """The nanoseconds of CPU thread `tid` of `pid` has spent, or 0 where it is gone."""
    try:
        fd = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY)
    except OSError:
        return 0
    try:
        return int(os.read(fd, 128).split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    finally:
        os.close(fd)
