"""Files the tools write (reports, the status cache, a class's results): whole or not at all."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a reader, or a crash halfway, never sees half a file.

    The temporary name carries the process id, so two processes writing the same file at once
    (two `kata status` in two terminals) do not write into each other's temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_json(path: Path, data, *, indent: int = 1) -> None:
    """`data` as JSON, written as `write_text` writes."""
    write_text(path, json.dumps(data, indent=indent))


def remove_tree(path: Path) -> None:
    """Remove `path` and everything under it, as `rm -rf` would: links are removed, never
    followed, and any depth is fine (a run's 1,100 nested folders overflow the recursion of
    shutil.rmtree). What cannot be removed stays; no error is raised."""
    stack, folders = [str(path)], []
    while stack:
        folder = stack.pop()
        folders.append(folder)
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        _quietly(os.unlink, entry.path)
        except OSError:
            if not os.path.isdir(folder) or os.path.islink(folder):
                _quietly(os.unlink, folder)
                folders.pop()
    for folder in reversed(folders):
        _quietly(os.rmdir, folder)


def files_under(folder: Path, *, max_depth: int) -> tuple[list[Path], bool]:
    """The regular files under `folder`, links not followed, at most `max_depth` folders deep;
    and whether there was more below that depth."""
    found, deeper, stack = [], False, [(str(folder), 0)]
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if depth + 1 > max_depth:
                            deeper = True
                        else:
                            stack.append((entry.path, depth + 1))
                    elif entry.is_file(follow_symlinks=False):
                        found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found), deeper


def read_regular(path: Path) -> bytes | None:
    """The bytes of `path` if it is a regular file; None for a link, a FIFO, a device, a folder
    or nothing. What `path` is, is looked at before it is opened: a FIFO or a device is never
    opened (which a writer on the other side would see), a link never followed."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read_opened(fd, None)
    finally:
        os.close(fd)


def read_beneath(root: Path, path: str, limit: int) -> bytes | None:
    """The first `limit` bytes of `path` (absolute) if it is a regular file beneath the folder
    `root`, reached from `root` one name at a time without following a link or going up; else
    None. Nothing but the file itself is opened for reading, and only once it is known to be a
    regular file: a path a student's code names (a FIFO, a device, a link out of its folder)
    cannot make the reader block, take a terminal, or read outside `root`."""
    try:
        names = Path(path).relative_to(root).parts
    except ValueError:
        return None
    if not names or any(name in ("..", ".") for name in names) or "\0" in path:
        return None
    try:
        fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        for name in names:
            inner = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = inner
        return _read_opened(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_opened(fd: int, limit: int | None) -> bytes | None:
    """The bytes of the file an O_PATH `fd` holds, if it is a regular file (and no larger than
    `limit`); it is opened for reading through /proc, the same file, not its name again."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
        return None
    try:
        readable = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(readable, "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)[:limit]


def _quietly(action, path: str) -> None:
    try:
        action(path)
    except OSError:
        pass
