"""The kit's files a grading copy is made of, read once, and the copies made from them.

Every (student, lesson) run works in a grading copy of its own: the kit's conftest.py and
pyproject.toml, the lesson's tests (no mutants), the stubs with the student's files laid over
them; no ``solutions/``. The kit's files are read once, before any run: a student's code that
rewrites the kit's files on disk while it runs changes nothing for the students after it, and
`KitFiles.changed` tells, after a run, whether it rewrote its own copy.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader import source_digest
from grader.files import files_under, read_regular
from grader.lessons import Lesson

MAX_DEPTH = 32  # folders deep a grading copy is searched; the kit's own go 3 deep
# The folder the grading copies live in starts so: a run's messages name files there (report.html leaves it out).
SCRATCH_PREFIX = "kata-grade-"


@dataclass
class KitFiles:
    """The kit's files of the lessons being graded, as read once; grading copies are written from them."""

    root: Path
    files: dict[str, bytes]  # path in the copy -> bytes (no solutions, no mutants)
    stubs: dict[str, dict[str, bytes]]  # lesson -> {file name: the stub's bytes}
    digest: str  # of the files and the grader's code

    @classmethod
    def read(cls, root: Path, lessons: list[Lesson]) -> KitFiles:
        files, stubs = {}, {}
        for name in ("conftest.py", "pyproject.toml", "exercises/__init__.py"):
            files[name] = (root / name).read_bytes() if (root / name).is_file() else b""
        for lesson in lessons:
            stubs[lesson.name] = {
                p.name: p.read_bytes()
                for p in sorted(lesson.dir("exercises").glob("*"))
                if p.is_file() and "__pycache__" not in p.parts
            }
            stubs[lesson.name].setdefault("__init__.py", b"")
            for path in sorted(lesson.tests_dir.rglob("*")):
                rel = path.relative_to(root)
                if path.is_file() and "mutants" not in rel.parts and "__pycache__" not in rel.parts:
                    files[rel.as_posix()] = path.read_bytes()
        digest = hashlib.sha256(source_digest().encode())
        for name, data in sorted(files.items()):
            digest.update(name.encode() + b"\0" + data + b"\0")
        return cls(root, files, stubs, digest.hexdigest())

    def parse_tests(self) -> None:
        """Parse the test files once here, for every run forked after (grader.plugin.untouched),
        and have pytest's assertion rewriting of them done (grader.forking.rewrite_ahead)."""
        from grader import forking
        from grader.plugin import untouched

        tests = list(self.test_files().values())
        for data in tests:
            untouched.parsed(data.decode("utf-8"))
        forking.rewrite_ahead(
            [*tests, *(data for name, data in self.files.items() if Path(name).name == "conftest.py")]
        )

    def test_files(self, lesson: str | None = None) -> dict[str, bytes]:
        """The lessons' test files (tests/NN/test_X.py, by path in a copy), or one lesson's."""
        return {
            name: data
            for name, data in self.files.items()
            if (path := PurePosixPath(name)).parts[0] == "tests"
            and path.name.startswith("test_")
            and path.suffix == ".py"
            and (lesson is None or path.parent == PurePosixPath("tests", lesson))
        }

    def answers(self, lesson: str) -> dict[str, bytes]:
        """The kit's answer to `lesson`: its solutions/ files, as a student's would be laid over the stubs."""
        folder = self.root / "solutions" / lesson
        return {p.name: p.read_bytes() for p in sorted(folder.glob("*.py")) if p.is_file()}

    def overlay(self, lesson: str, work: dict[str, bytes]) -> dict[str, bytes]:
        """The student's files that differ from the stub (an untouched stub is no work)."""
        return {name: data for name, data in sorted(work.items()) if self.stubs[lesson].get(name) != data}

    def answer_overlay(self, lesson: str) -> dict[str, bytes]:
        """The kit's answer to `lesson` as a student's work laid over the stubs."""
        return self.overlay(lesson, self.answers(lesson))

    def write_copy(self, folder: Path, lesson: str, overlay: dict[str, bytes]) -> None:
        for rel, data in self._for(lesson).items():
            _write(folder / rel, data)
        for name, data in {**self.stubs[lesson], **overlay}.items():
            _write(folder / "exercises" / lesson / name, data)

    def changed(self, folder: Path, lesson: str) -> list[str]:
        """The kit's files in a grading copy that are not as written (the run rewrote its tests?)."""
        expected = self._for(lesson)
        files, deeper = files_under(folder, max_depth=MAX_DEPTH)
        found = {
            p.relative_to(folder).as_posix()
            for p in files
            if "__pycache__" not in p.parts and p.parts[len(folder.parts)] != "exercises"
        }
        problems = [rel for rel in sorted(expected) if read_regular(folder / rel) != expected[rel]]
        problems += sorted(rel for rel in found - set(expected) if rel.endswith(".py") or rel.endswith(".toml"))
        return problems + ([f"folders more than {MAX_DEPTH} deep"] if deeper else [])

    def _for(self, lesson: str) -> dict[str, bytes]:
        """The kit's files in a copy for `lesson`: the tests of no other lesson."""
        return {
            rel: data
            for rel, data in self.files.items()
            if not rel.startswith("tests/") or rel.startswith(f"tests/{lesson}/")
        }


def run_key(lesson: str, overlay: dict[str, bytes]) -> str:
    """What decides a lesson's run: students whose overlays are the same share one run."""
    digest = hashlib.sha256(lesson.encode() + b"\0")
    for name, data in sorted(overlay.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _write(path: Path, data: bytes) -> None:
    """Readable by anyone, whatever the umask: a run may be another user (grader.grading.isolation)."""
    for folder in reversed([path.parent, *path.parent.parents]):
        if not folder.exists():
            folder.mkdir()
            folder.chmod(0o755)
    path.write_bytes(data)
    path.chmod(0o644)
