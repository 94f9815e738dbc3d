"""What kata grade takes from each student: one folder per student, the .py files of each lesson.

Only plain .py files of the lessons being graded are taken, each at most MAX_FILE bytes. The
grader never takes a symbolic link (a link to the kit's solutions/ would be read, by the
grader, as the student's work), nor a file that would run inside pytest instead of under test
(REFUSED, test_*.py); each file left out is named in the student's results, with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader.files import read_regular
from grader.lessons import Lesson

MAX_FILE = 1 << 20  # bytes: a larger file in a student's lesson folder is ignored
# Files a student may not bring: they would run inside pytest, not under test.
REFUSED = {"conftest.py", "__init__.py"}


@dataclass
class Student:
    name: str
    folder: Path
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # lesson -> {file name: bytes}
    ignored: list[str] = field(default_factory=list)  # files not taken, with why
    problem: str | None = None  # why the student cannot be graded at all
    fingerprint: str | None = None  # of everything that decides the grade (schedule.Grading.fingerprint)


def find_students(class_dir: Path) -> list[Student]:
    """One Student per folder of CLASS_DIR (hidden folders skipped), sorted by name."""
    return [
        Student(p.name, p)
        for p in sorted(class_dir.iterdir(), key=lambda p: p.name)
        if p.is_dir() and not p.name.startswith((".", "_"))
    ]


def read_work(student: Student, lessons: list[Lesson]) -> None:
    """Take the student's .py files for `lessons`. Symbolic links are refused: a link to the kit's
    solutions/ would otherwise be read, by the grader, as the student's work."""
    exercises = student.folder / "exercises"
    if student.folder.is_symlink() or exercises.is_symlink():
        student.problem = "the folder or its exercises/ is a symbolic link (refused)"
        return
    if not exercises.is_dir():
        student.problem = f"no exercises/ folder (expected {student.folder}/exercises/NN_topic/*.py)"
        return
    for lesson in lessons:
        folder = exercises / lesson.name
        if folder.is_symlink():
            student.ignored.append(f"exercises/{lesson.name} (a symbolic link)")
            continue
        if not folder.is_dir():
            continue
        taken = {}
        for path in sorted(folder.iterdir()):
            rel = f"exercises/{lesson.name}/{path.name}"
            if path.suffix != ".py" or path.is_dir() and not path.is_symlink():
                continue
            if path.is_symlink():
                student.ignored.append(f"{rel} (a symbolic link)")
            elif path.name == "__init__.py" and not (read_regular(path) or b"x").strip():
                continue  # the kit's own, empty: nothing to say
            elif path.name in REFUSED or path.name.startswith("test_"):
                student.ignored.append(f"{rel} (the grader does not take this file from students)")
            elif not path.is_file():
                student.ignored.append(f"{rel} (not a regular file)")  # a FIFO would hang the read
            elif path.stat().st_size > MAX_FILE:
                student.ignored.append(f"{rel} (larger than {MAX_FILE >> 20} MiB)")
            elif (data := read_regular(path)) is None:
                student.ignored.append(f"{rel} (not a regular file)")
            else:
                taken[path.name] = data
        student.files[lesson.name] = taken
