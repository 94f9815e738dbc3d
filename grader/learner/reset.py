"""``kata reset LESSON``: put a lesson's untouched stubs back, after backing up the learner's files.

Nothing a learner wrote is ever lost: every file of exercises/LESSON that differs from its
pristine stub is first copied to ``.kata/backups/<YYYYmmdd-HHMMSS[-n]>/<lesson>/<file>`` (a new
folder each time, never one that exists), and the command prints the ``cp`` that brings it
back. Files the learner added (no stub of that name) are left alone. ``kata reset --list``
shows the backups, newest first.

The pristine stubs come from ``.kata/pristine/<lesson>/`` (a student release writes it), else
from git: the files of ``exercises/<lesson>/`` tracked in ``HEAD`` when the kit is a git work
tree. Only the top-level files of a lesson folder count; ``__pycache__`` and dotfiles are ignored.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from grader.lessons import KitError, Lesson, get_lesson

STATE = ".kata"


def pristine_dir(root: Path, lesson: str) -> Path:
    """Where a student release keeps the lesson's untouched stubs (``kata release`` writes it)."""
    return root / STATE / "pristine" / lesson


def backups_dir(root: Path) -> Path:
    return root / STATE / "backups"


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("lesson", nargs="?", metavar="LESSON", help="lesson name or number, e.g. 03_broadcast or 03")
    parser.add_argument(
        "--list", action="store_true", help="list the backups made so far, newest first (of LESSON only, if named)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would be backed up and restored; change nothing"
    )
    parser.epilog += f"""
  kata {name} 03 --dry-run     what would be backed up and restored, changing nothing
Your files go to .kata/backups/<date-time>/<lesson>/ first; the command prints the `cp` that
brings them back. Files you added to the lesson folder are never touched."""


def run(args: argparse.Namespace, root: Path) -> int:
    if args.list:
        return list_backups(root, get_lesson(root, args.lesson).name if args.lesson else None)
    if not args.lesson:
        raise KitError(
            "name the lesson to reset, e.g. `kata reset 03_broadcast`; `kata reset --list` shows your backups"
        )
    return reset(get_lesson(root, args.lesson), dry_run=args.dry_run)


# --- the pristine stubs -------------------------------------------------------------------------


def pristine_stubs(lesson: Lesson) -> tuple[dict[str, bytes], str]:
    """The lesson's untouched stubs by file name, and where they came from (for messages)."""
    folder = pristine_dir(lesson.root, lesson.name)
    stubs = {path.name: path.read_bytes() for path in lesson_files(folder)}
    if stubs:
        return stubs, shown(folder, lesson.root)
    stubs = _git_stubs(lesson)
    if stubs:
        return stubs, f"git HEAD:exercises/{lesson.name}/"
    raise KitError(
        f"no pristine copy of lesson {lesson.name}: {shown(folder, lesson.root)} does not exist and git tracks "
        f"no exercises/{lesson.name}/ in HEAD here (or this is not a git clone), so nothing was changed. "
        f"Get one: unzip the student release again and copy its {STATE}/ folder into {lesson.root}, "
        f"or, in a git clone of the kit, run `git checkout HEAD -- exercises/{lesson.name}` "
        "(that discards your edits: copy them aside first)."
    )


def _git_stubs(lesson: Lesson) -> dict[str, bytes]:
    """The lesson's files tracked in git HEAD; empty when the kit is no git work tree."""
    folder = f"exercises/{lesson.name}/"
    listing = _git(lesson.root, "ls-tree", "-z", "HEAD", "--", folder)
    names = []
    for entry in filter(None, (listing or b"").decode("utf-8", "replace").split("\0")):
        info, _, path = entry.partition("\t")
        if info.split()[1] == "blob" and _is_lesson_file(Path(path).name):
            names.append(Path(path).name)
    # "HEAD:./path" is relative to ROOT, which need not be the top of the repository.
    stubs = {name: _git(lesson.root, "cat-file", "blob", f"HEAD:./{folder}{name}") for name in names}
    return {name: data for name, data in stubs.items() if data is not None}


def _git(root: Path, *args: str) -> bytes | None:
    """git's output, or None when git is missing or fails (not a work tree, no HEAD, ...)."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def lesson_files(folder: Path) -> list[Path]:
    """The top-level files of a lesson folder, sorted; no dotfiles, no __pycache__."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and _is_lesson_file(p.name))


def _is_lesson_file(name: str) -> bool:
    return not name.startswith(".") and not name.endswith(".pyc")


def is_pristine(lesson: Lesson, stubs: dict[str, bytes]) -> bool:
    """Whether every stub is in exercises/LESSON as it was handed out (files the learner added
    aside)."""
    return not any(_edited_or_missing(lesson, stubs))


def _edited_or_missing(lesson: Lesson, stubs: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """The stubs the learner changed, and those no longer there, by file name."""
    current = {path.name: path for path in lesson_files(lesson.dir("exercises"))}
    edited = [name for name in sorted(stubs) if name in current and not _same(current[name].read_bytes(), stubs[name])]
    missing = [name for name in sorted(stubs) if name not in current]
    return edited, missing


def _same(a: bytes, b: bytes) -> bool:
    """Equal up to line endings (a Windows checkout's CRLF is no edit)."""
    return a.replace(b"\r\n", b"\n") == b.replace(b"\r\n", b"\n")


# --- reset --------------------------------------------------------------------------------------


def reset(lesson: Lesson, dry_run: bool = False) -> int:
    stubs, source = pristine_stubs(lesson)
    folder = lesson.dir("exercises")
    current = {path.name: path for path in lesson_files(folder)}
    edited, missing = _edited_or_missing(lesson, stubs)
    added = [name for name in sorted(current) if name not in stubs]
    root = lesson.root
    if not edited and not missing:
        print(
            f"{lesson.name} is already pristine: its {_files(len(stubs))} equal the stubs from {source}; nothing to do."
        )
        _say_left_alone(added)
        return 0
    would = "would " if dry_run else ""
    print(f"{'dry run: ' if dry_run else ''}reset {lesson.name} to the stubs from {source}:")
    backup = None
    if edited:
        backup = (backups_dir(root) / _stamp() if dry_run else new_backup_folder(root)) / lesson.name
        if not dry_run:
            backup.mkdir()
        for name in edited:
            if not dry_run:
                _back_up(current[name], backup / name)
            print(f"  {would}back up  {shown(folder / name, root)} -> {shown(backup / name, root)}")
    for name in edited + missing:
        if not dry_run:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(stubs[name])
        print(f"  {would}restore  {shown(folder / name, root)}{'  (it was missing)' if name in missing else ''}")
    _say_left_alone(added)
    if dry_run:
        print("Nothing was changed (dry run); run it again without --dry-run to do it.")
    elif backup is not None:
        print(
            f"Your version is in {shown(backup, root)}; to get it back:\n  {restore_command(root, backup, edited, folder)}"
        )
    return 0


def _say_left_alone(added: list[str]) -> None:
    if added:
        print(
            f"  left alone: {', '.join(added)} (you added {'them' if len(added) > 1 else 'it'}; there is no stub of that name)"
        )


def _back_up(source: Path, target: Path) -> None:
    """Copy the learner's file and check the copy byte for byte before anything overwrites it."""
    shutil.copy2(source, target)
    if target.read_bytes() != source.read_bytes():
        raise KitError(
            f"could not back up {source} to {target} (the copy differs); nothing was restored. Check the disk space and try again."
        )


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def new_backup_folder(root: Path) -> Path:
    """A fresh ``.kata/backups/<stamp>[-n]`` folder: never one that exists already."""
    stamp = _stamp()
    for n in range(1000):
        folder = backups_dir(root) / (f"{stamp}-{n}" if n else stamp)
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return folder
    raise KitError(f"{backups_dir(root)} has 1000 backups named {stamp}*; move some of them away and try again")


def restore_command(root: Path, backup: Path, names: list[str], folder: Path) -> str:
    """The `cp` that puts the backed-up files `names` back into the lesson's `folder`."""
    sources = " ".join(shlex.quote(shown(backup / name, root)) for name in names)
    return f"cp {sources} {shlex.quote(shown(folder, root))}/"


def shown(path: Path, root: Path) -> str:
    """A path as the learner can type it: relative when they stand in the kit's folder, else absolute."""
    path = path.resolve()
    try:
        if Path.cwd().resolve() == root.resolve():
            return path.relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        pass
    return str(path)


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


# --- reset --list -------------------------------------------------------------------------------


def _backup_key(folder: Path) -> tuple[str, int]:
    """Sort key: the stamp, then the -n suffix as a number (so -10 comes after -9)."""
    stamp, n = folder.name[:15], folder.name[16:]
    return stamp, int(n) if n.isdigit() else 0


def list_backups(root: Path, only: str | None = None) -> int:
    folders = sorted((p for p in backups_dir(root).glob("*") if p.is_dir()), key=_backup_key, reverse=True)
    found = [
        (f, lesson)
        for f in folders
        for lesson in sorted(p for p in f.iterdir() if p.is_dir())
        if only in (None, lesson.name)
    ]
    what = f"of {only} " if only else ""
    if not found:
        print(f"no backups {what}yet: `kata reset LESSON` makes one each time it replaces your files.")
        return 0
    print(
        f"{len(found)} backup{'s' if len(found) != 1 else ''} {what}in {shown(backups_dir(root), root)}, newest first:"
    )
    for folder, lesson in found:
        names = [p.name for p in lesson_files(lesson)]
        print(f"  {folder.name}  {lesson.name}  {', '.join(names)}")
        print(f"    {restore_command(root, lesson, names, root / 'exercises' / lesson.name)}")
    return 0
