"""docs/MUTATION.md's table of scores: a lesson's row, dated, with the fingerprint of the files
that decide it, so that a test can tell a row measured on other files."""

from __future__ import annotations

import ast
import datetime
import hashlib
import re
from pathlib import Path

from grader.authoring.mutants import LessonScore
from grader.lessons import KitError, Lesson

DOCS = Path("docs/MUTATION.md")
# The modules that make the mutants and judge them: a row measured with others is stale.
MUTATION_MODULES = ("mutants.py", "mutate.py")


def fingerprint(lesson: Lesson) -> str:
    """A hash of the files that decide a lesson's row: its answer (solutions/NN), its tests
    (tests/NN but its hand-written mutants and hints), the grader.testing modules they import
    (directly or through one another) and MUTATION_MODULES, which make and judge the mutants."""
    import grader.testing

    testing = Path(grader.testing.__file__).parent
    files = {
        f"{lesson.name}/{p.relative_to(lesson.root).as_posix()}": p
        for tree in ("solutions", "tests")
        for p in lesson.dir(tree).rglob("*")
        if p.is_file() and _decides(p.relative_to(lesson.dir(tree)))
    }
    files |= {f"grader/testing/{p.name}": p for p in _testing_modules(lesson, testing)}
    files |= {f"grader/authoring/{name}": Path(__file__).with_name(name) for name in MUTATION_MODULES}
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:12]


def _decides(relative: Path) -> bool:
    """Whether a file of a lesson's folder can change what its mutants do (hints, the
    hand-written mutants and the transcript of what they print cannot; neither can Python's
    caches)."""
    return (
        relative.parts[0] not in ("mutants", "__pycache__", "hints.md", "transcript.md") and relative.suffix != ".pyc"
    )


def _testing_modules(lesson: Lesson, testing: Path) -> list[Path]:
    """The grader.testing modules the lesson's tests import, and those they import in turn."""
    seen: set[Path] = set()
    todo = [p for p in lesson.tests_dir.glob("*.py")]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader.testing"):
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.startswith("grader.testing")]
            for name in names:
                parts = name.split(".")[2:]
                path = testing / (f"{parts[0]}.py" if parts else "__init__.py")
                if path.is_file() and path not in seen:
                    seen.add(path)
                    todo.append(path)
    return sorted(seen)


TABLE = re.compile(r"^```\n(lesson +mutants[^\n]*\n(?:[^`\n][^\n]*\n)*)```$", re.MULTILINE)
HEADER = ("lesson", "mutants", "killed", "equivalent", "survived", "untested", "score", "measured", "fingerprint")


def documented(root: Path) -> dict[str, list[str]]:
    """The rows of docs/MUTATION.md's table, by lesson: its cells as written."""
    match = TABLE.search((root / DOCS).read_text(encoding="utf-8"))
    if match is None:
        raise KitError(
            f"{root / DOCS} has no table of scores (a fenced block whose first line starts with 'lesson  mutants')"
        )
    return {cells[0]: cells for cells in (line.split() for line in match.group(1).splitlines()[1:]) if cells}


def write_docs(root: Path, scores: list[LessonScore], today: str | None = None) -> None:
    """Put the measured lessons' rows in docs/MUTATION.md's table, each with today's date and its
    fingerprint; the other rows stay as they were."""
    path = root / DOCS
    rows = documented(root)
    today = today or datetime.date.today().isoformat()
    for s in scores:
        rows[s.lesson.name] = [*cells(s), today, fingerprint(s.lesson)]
    table = [list(HEADER), *(rows[name] for name in sorted(rows))]
    widths = [max(len(row[i]) for row in table if i < len(row)) for i in range(len(HEADER))]
    text = "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n" for row in table)
    old = path.read_text(encoding="utf-8")
    match = TABLE.search(old)
    path.write_text(old[: match.start(1)] + text + old[match.end(1) :], encoding="utf-8")


def cells(s: LessonScore) -> list[str]:
    return [
        s.lesson.name,
        str(len(s.mutants)),
        str(s.count("killed")),
        str(s.count("equivalent")),
        str(s.count("survived")),
        str(s.count("untested")),
        f"{100 * s.score:.1f}%",
    ]
