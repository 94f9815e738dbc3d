"""A run's code processes bounded together, by a cgroup: their memory (tmpfs and memfd pages
included, which an address-space limit does not see) and their number.

Where the machine lets the grader make cgroups, each run gets one, made before the run is forked
and removed after it ended; each process that goes behind the boundary enters it before it
leaves the machine's namespaces (a process in a user namespace of its own can no longer move
itself). Two kinds are found (`find`):

- cgroup v2, where the grader's own group is writable and already hands the memory and pids
  controllers to its children (its cgroup.subtree_control lists them: a delegated group);
- cgroup v1, where the memory and pids hierarchies are mounted and the grader's groups in them
  are writable (root, on a machine that mounts them).

Elsewhere there is none, and the limits stay each process's (grader.grading.sandbox).
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")


@dataclass(frozen=True)
class Groups:
    """Where the runs' groups are made: the grader's own group, one folder per controller (v1)
    or one for both (v2)."""

    version: int
    parents: tuple[Path, ...]

    def describe(self) -> str:
        files = "memory.max, pids.max" if self.version == 2 else "memory.limit_in_bytes, pids.max"
        return f"a cgroup v{self.version} of its own ({files}): tmpfs and memfd pages count"

    def make(self, name: str, memory: int, processes: int) -> tuple[Path, ...]:
        """A run's group, `name`, limited to `memory` bytes and `processes` processes and threads:
        its folders (one per parent)."""
        made = []
        for parent in self.parents:
            folder = parent / name
            folder.mkdir(exist_ok=True)
            made.append(folder)
        # (no swap on top: v1's memsw, where swap is counted, must come after the limit it bounds)
        limits = (
            {"memory.max": memory, "memory.swap.max": 0, "pids.max": processes}
            if self.version == 2
            else {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory, "pids.max": processes}
        )
        for file, value in limits.items():
            folder = next((f for f in made if (f / file).exists()), None)
            if folder is not None:
                (folder / file).write_text(str(value))
        return tuple(made)


def find(root: Path = ROOT, own: str | None = None) -> Groups | None:
    """The groups runs can be made in, or None where this machine lets the grader make none.
    `own`: this process's /proc/self/cgroup (read by default)."""
    if own is None:
        try:
            own = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    paths = {}  # controller ("" for v2) -> this process's group's path
    for line in own.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path.lstrip("/")
    if (root / "cgroup.controllers").exists() and "" in paths:
        parent = root / paths[""]
        try:
            delegated = set((parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            return None
        groups = Groups(2, (parent,)) if delegated >= set(CONTROLLERS) else None
    elif all(c in paths and (root / c).is_dir() for c in CONTROLLERS):
        groups = Groups(1, tuple(root / c / paths[c] for c in CONTROLLERS))
    else:
        return None
    if groups is None or not all(os.access(p, os.W_OK) for p in groups.parents):
        return None
    try:  # the proof: a group made and removed
        remove(groups.make(f"kata-probe-{os.getpid()}", 1 << 30, 64))
    except OSError:
        return None
    for parent in groups.parents:  # what a grader killed before it could remove its groups left
        for folder in parent.glob("kata-*-*"):
            owner = folder.name.split("-")[1]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                remove((folder,), wait=0)
    return groups


def enter(folders: tuple[Path, ...]) -> None:
    """Move this process into the run's group (its children follow it)."""
    for folder in folders:
        (folder / "cgroup.procs").write_text(str(os.getpid()))


def ran_out(folders: tuple[Path, ...]) -> bool:
    """Whether the kernel killed a process of the group for its memory."""
    for folder in folders:
        for file in ("memory.events", "memory.oom_control"):
            try:
                lines = (folder / file).read_text().splitlines()
            except OSError:
                continue
            if any(line.split()[:1] == ["oom_kill"] and int(line.split()[1]) > 0 for line in lines):
                return True
    return False


def remove(folders: tuple[Path, ...], wait: float = 2.0) -> None:
    """Remove a run's group once its processes have gone (they go with the run's PID namespace:
    a moment after it ended)."""
    deadline = time.monotonic() + wait
    for folder in folders:
        while True:
            try:
                folder.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as error:
                if error.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
