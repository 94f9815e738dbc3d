"""An OS boundary around every grading run: Linux namespaces, set up with the syscalls, no root.

A run forked by grader.grading.sandbox calls `enter` before anything else. It leaves the
grader's namespaces for new user, mount, PID, network, IPC and UTS ones, in three processes:

    the forked child   (in the grader's PID namespace: the process the grader waits on)
     └ init, pid 1     (builds the run's filesystem, then only reaps; when it ends, the kernel
        │               kills every process of the namespace: nothing of a run outlives it)
        └ the run, pid 2 (no capabilities, no new privileges, a process limit: the tests run here)

The run sees a filesystem of its own (`View`): the system's and Python's folders and the kit's
`grader` package read-only, its grading copy read-only, and an empty private /tmp, HOME and
/dev/shm, each a size-limited tmpfs; a /proc that shows only its own processes; a /dev with
null, zero, full, random and urandom. It does not see the kit's solutions/ or tests/, the class,
the results, other runs or anything else of the machine's, and it has no network (a network
namespace of its own, its loopback down). With no capabilities it cannot mount or unmount; the
grader's processes are not in its PID namespace, so it can neither see nor signal them.

The run's exit status is the forked child's, signal included, so the grader reads how it ended
as before (docs/INSTRUCTORS.md has the threat model and what the test suite shows of it).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NAMESPACES = dict(
    user=CLONE_NEWUSER, mount=CLONE_NEWNS, pid=CLONE_NEWPID, network=CLONE_NEWNET, ipc=CLONE_NEWIPC, uts=CLONE_NEWUTS
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
MOUNT_ATTR_RDONLY, AT_RECURSIVE, AT_FDCWD = 1, 0x8000, -100
SYSCALLS = {"x86_64": {"pivot_root": 155, "mount_setattr": 442}, "aarch64": {"pivot_root": 41, "mount_setattr": 442}}
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# The system's folders a run reads (where they exist); top-level links (/bin -> usr/bin) are
# made again as links. Python's own folders are added from sys.prefix & co. (`View.for_grading`).
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
READ_ONLY_PROC = ("sys", "sysrq-trigger", "irq", "bus", "fs")  # as container runtimes mount them
NOBODY = 65534  # the id a run gets when the grader is root
DESCRIPTION = "Linux namespaces (user, mount, PID, network, IPC, UTS)"


class Unavailable(Exception):
    """A namespace or mount the boundary needs could not be made here; the message says which."""


@dataclass(frozen=True)
class View:
    """What one run sees of the filesystem."""

    readable: tuple[Path, ...]  # shown read-only, each at its own path
    hidden: tuple[Path, ...]  # inside those or the copy, covered by an empty folder (the kit's solutions/, the class)
    copy: Path  # the grading copy: read-only, at its own path, the run's working directory
    home: Path  # an empty private tmpfs at this path (HOME; TMPDIR is its tmp/)
    mount_root: Path  # where the new root is built: an empty folder, which no run sees
    disk: int = 512 << 20  # bytes each private tmpfs (/tmp, home, /dev/shm) may hold
    processes: int = 256  # processes and threads the run may have at once

    @classmethod
    def for_grading(
        cls, *, kit: Path, copy: Path, home: Path, hidden: tuple[Path, ...], disk: int, processes: int
    ) -> View:
        """The view of a `kata grade` run: the system, Python's prefixes and the kit's grader
        package read-only, the copy and its home; the kit's solutions/ and tests/ and `hidden`
        (the class, the results) covered wherever they fall inside what is shown."""
        prefixes = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
        # sys.path's folders inside a prefix (site-packages) are shown with it; one outside all of
        # them (the folder kata grade was started in, PYTHONPATH) may hold anything and is not.
        readable = [Path(p) for p in SYSTEM] + sorted(prefixes) + [kit / "grader"]
        secret = (kit / "solutions", kit / "tests", *hidden)
        return cls(
            readable=tuple(readable),
            hidden=tuple(secret),
            copy=copy,
            home=home,
            mount_root=home / ".root",
            disk=disk,
            processes=processes,
        )


def enter(view: View) -> None:
    """Put the calling process's run behind the boundary. Call it in a freshly forked,
    single-threaded child before it runs any untrusted code. Returns in the run (pid 2 of a new
    PID namespace, with no capabilities, its working directory the copy); the calling process
    itself never returns: it waits for the run and ends with its exit status, or its signal.
    Raises Unavailable, before anything has changed, if the namespaces cannot be made."""
    uid, gid = os.geteuid(), os.getegid()
    run_uid, run_gid = (NOBODY, NOBODY) if uid == 0 else (uid, gid)
    # A grader running as root maps two ids: its own, for init to build the root with, and
    # "nobody" for the run, here and on the host, as the kernel checks some files (/proc/sys,
    # cgroups) by that id alone. Only a process outside the new namespace may write that.
    mapper = _MapWriter() if uid == 0 else None
    result = _libc().unshare(sum(NAMESPACES.values()))
    if mapper is not None:
        mapper.write(f"0 0 1\n{NOBODY} {NOBODY} 1" if result == 0 else None)
    _check(result, "unshare the user, mount, PID, network, IPC and UTS namespaces")
    if mapper is None:  # one id, the grader's own (an unprivileged one): files keep their owner
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    status_read, status_write = os.pipe()
    init = os.fork()
    if init:  # the forked child, outside the new PID namespace: mirror how the run ended
        os.close(status_write)
        _end_as(init, status_read)  # returns only by raising
    os.close(status_read)
    # init, pid 1: no signal from inside the namespace may stop it before the run has ended
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals() - {signal.SIGCHLD})
    try:
        _build_root(view, run_uid, run_gid)
    except BaseException as error:  # noqa: BLE001 - the forked child raises it as Unavailable
        os.write(status_write, b"E" + f"{error}".encode())
        os._exit(71)
    run = os.fork()
    if run:
        _reap_until(run, status_write)
    os.close(status_write)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.chdir(view.copy)
    _drop_privileges(view.processes, run_uid, run_gid)


def probe(view: View) -> str | None:
    """None if `enter` works on this machine with `view`, else why not, in words: a child tries
    it, and its run exits at once."""
    if not sys.platform.startswith("linux") or platform.machine() not in SYSCALLS:
        return f"namespaces are Linux's (x86_64 or aarch64), and this is {sys.platform} on {platform.machine()}"
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        code = 0
        try:
            enter(view)
            if os.getpid() != 2:
                os.write(write_fd, f"the run is pid {os.getpid()}, not 2 of a namespace of its own".encode())
        except BaseException as error:  # noqa: BLE001 - anything at all: the reason, in words
            os.write(write_fd, f"{error}".encode() or repr(error).encode())
            code = 1
        os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        said = f.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or said:
        return said or f"the trial run ended with status {os.waitstatus_to_exitcode(status)}"
    return None


# --- the three processes --------------------------------------------------------------------


def _end_as(init: int, status_read: int) -> None:
    """The forked child: wait for init, then end as the run ended (its exit code, or killed by its
    signal). Returns only by raising Unavailable, when init could not build the run's root."""
    with os.fdopen(status_read, "rb") as f:
        data = f.read()
    os.waitpid(init, 0)
    if data[:1] == b"E":
        raise Unavailable(data[1:].decode("utf-8", "replace"))
    if data[:1] != b"S" or len(data) != 5:  # init was killed (the grader stopped the run)
        os._exit(71)
    status = struct.unpack("i", data[1:])[0]
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # (these two cannot be handled: no handler to undo)
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def _reap_until(run: int, status_write: int) -> None:
    """init: reap every process of the namespace until the run ends, hand its status on, end
    (and so end the namespace's every process). Never returns."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(70)
        if pid == run:
            os.write(status_write, b"S" + struct.pack("i", status))
            os._exit(0)


def _build_root(view: View, run_uid: int, run_gid: int) -> None:
    """init: a new root of tmpfs with `view`'s folders in it, pivoted to; the old one detached."""
    libc = _libc()
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None, "make the mounts private")  # nothing goes back out
    root = str(view.mount_root)
    os.makedirs(root, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m", "mount the new root")
    size = f"size={view.disk}"
    # /tmp first: what is shown may live under it (a kit or a virtual environment in /tmp).
    _tmpfs(root + "/tmp", f"mode=1777,{size}")
    shown: list[str] = []
    for path in sorted({os.path.normpath(p) for p in view.readable}, key=lambda p: (p.count("/"), p)):
        if not os.path.lexists(path) or any(_inside(path, s) for s in shown):
            continue
        target = root + path
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(path) and os.path.dirname(path) == "/":
            os.symlink(os.readlink(path), target)  # /bin -> usr/bin, as on the machine
            continue
        real = os.path.realpath(path)
        if os.path.isdir(real):
            os.makedirs(target, exist_ok=True)
        else:
            open(target, "a").close()
        _mount(real, target, None, MS_BIND | MS_REC, None, f"show {path}")
        _read_only(target)
        shown.append(path)
    _hide(root, view.hidden)
    _tmpfs(root + "/dev", "mode=0755,size=64k")
    for name in DEVICES:
        open(f"{root}/dev/{name}", "a").close()
        _mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND, None, f"show /dev/{name}")
    _tmpfs(root + "/dev/shm", f"mode=1777,{size}")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None, "mount /proc")
    # No user namespace inside this one: one would give the run back every capability there.
    _write(root + "/proc/sys/user/max_user_namespaces", "0")
    for name in READ_ONLY_PROC:  # the machine's settings, whoever the run is
        if os.path.exists(f"{root}/proc/{name}"):
            _mount(f"{root}/proc/{name}", f"{root}/proc/{name}", None, MS_BIND | MS_REC, None, f"bind /proc/{name}")
            _read_only(f"{root}/proc/{name}")
    home = root + os.path.normpath(str(view.home))
    _tmpfs(home, f"mode=0700,uid={run_uid},gid={run_gid},{size}")
    os.makedirs(home + "/tmp", mode=0o700)
    os.chown(home + "/tmp", run_uid, run_gid)
    copy = root + os.path.normpath(str(view.copy))
    os.makedirs(copy, exist_ok=True)
    _mount(str(view.copy), copy, None, MS_BIND | MS_REC, None, "show the grading copy")
    _read_only(copy)
    _hide(root, [p for p in view.hidden if _inside(os.path.normpath(str(p)), os.path.normpath(str(view.copy)))])
    old = root + "/.old-root"
    os.mkdir(old)
    _check(libc.syscall(SYSCALLS[platform.machine()]["pivot_root"], root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(libc.umount2(b"/.old-root", MNT_DETACH), "detach the old root")
    os.rmdir("/.old-root")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None, "make / read-only")


def _drop_privileges(processes: int, run_uid: int, run_gid: int) -> None:
    """The run: its own id (nobody, under a root grader), no capabilities (it cannot mount,
    unmount or undo any of it), none to be gained (no setuid), and at most `processes`
    processes and threads."""
    import resource

    libc = _libc()
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if os.geteuid() != run_uid:
        os.setgroups([])
        os.setresgid(run_gid, run_gid, run_gid)
        os.setresuid(run_uid, run_uid, run_uid)
    header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
    _check(libc.capset(header, bytes(24)), "drop the capabilities")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs")
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


class _MapWriter:
    """A process left outside the namespaces, forked before them, that writes the new user
    namespace's id maps for the process that forked it (which may not map ids other than its own)."""

    def __init__(self) -> None:
        self.go_read, self.go_write = os.pipe()
        self.done_read, self.done_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.go_write)
            os.close(self.done_read)
            target = os.getppid()
            mapping = os.read(self.go_read, 4096).decode()
            said = b"ok"
            try:
                if mapping:
                    for name in ("uid_map", "gid_map"):
                        with open(f"/proc/{target}/{name}", "w") as f:
                            f.write(mapping)
            except OSError as error:
                said = f"write /proc/PID/{name}: {error.strerror}".encode()
            os.write(self.done_write, said)
            os._exit(0)
        os.close(self.go_read)
        os.close(self.done_write)

    def write(self, mapping: str | None) -> None:
        """Have the maps written (None: nothing to map, the helper just ends); wait for it."""
        os.write(self.go_write, (mapping or "").encode())
        os.close(self.go_write)
        said = os.read(self.done_read, 4096)
        os.close(self.done_read)
        os.waitpid(self.pid, 0)
        if mapping and said != b"ok":
            raise Unavailable(said.decode("utf-8", "replace"))


# --- syscalls --------------------------------------------------------------------------------


_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        _LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _LIBC.unshare.argtypes = [ctypes.c_int]
        _LIBC.capset.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        _LIBC.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        _LIBC.syscall.restype = ctypes.c_long
    return _LIBC


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise Unavailable(f"{what}: {errno.errorcode.get(number, number)} ({os.strerror(number)})")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None, what: str) -> None:
    def encode(s: str | None) -> bytes | None:
        return None if s is None else s.encode()

    _check(_libc().mount(encode(source), target.encode(), encode(kind), flags, encode(data)), what)


def _hide(root: str, hidden) -> None:
    """An empty read-only folder over each of `hidden` that falls inside what is shown so far."""
    for path in hidden:
        target = root + os.path.normpath(str(path))
        if os.path.isdir(target):
            _mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0555", f"hide {path}")


def _tmpfs(target: str, options: str) -> None:
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options, f"mount a tmpfs at {target}")


def _read_only(target: str) -> None:
    """Make the mount at `target`, and every mount under it, read-only."""
    attr = struct.pack("QQQQ", MOUNT_ATTR_RDONLY, 0, 0, 0)
    number = SYSCALLS[platform.machine()]["mount_setattr"]
    result = _libc().syscall(number, AT_FDCWD, target.encode(), AT_RECURSIVE, attr, len(attr))
    if result != 0 and ctypes.get_errno() == errno.ENOSYS:  # before Linux 5.12: the top mount only
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        stat = os.statvfs(target)
        for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC)):
            flags |= ms if stat.f_flag & st else 0
        _mount(None, target, None, flags, None, f"make {target} read-only")
        return
    _check(result, f"make {target} read-only")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as error:
        raise Unavailable(f"write {path}: {error.strerror}") from None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
