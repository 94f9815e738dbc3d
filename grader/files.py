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
    or nothing (opened without following a link or blocking, so a FIFO cannot hang the reader)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None


def _quietly(action, path: str) -> None:
    try:
        action(path)
    except OSError:
        pass
