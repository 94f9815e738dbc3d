"""Where things live: the kit's three trees share one key, the lesson folder name.

exercises/07_stable/stable.py     the learner's stub
solutions/07_stable/stable.py     the same file with the answer
tests/07_stable/test_stable.py    tests; test_<stem>.py checks <stem>.py
tests/07_stable/mutants/*.py      known-wrong versions the tests must reject
tests/07_stable/hints.md          progressive hints, "## Level N" sections
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

IMPLS = ("exercises", "solutions")
LESSON_RE = re.compile(r"^\d\d_[a-z0-9_]+$")
# What runs leave in the kit's folders (Python's, pytest's, hypothesis's, the benchmarks' caches):
# no copy of the kit takes them (a student release, a Gradescope autograder).
JUNK = ("__pycache__", ".pytest_cache", ".hypothesis", ".benchmarks")


class KitError(Exception):
    """A problem with how the kit is laid out or called; the message says how to fix it."""


def find_root(start: Path | None = None) -> Path:
    """The kit root: the nearest folder at or above `start` holding exercises/ and tests/."""
    here = (start or Path.cwd()).resolve()
    # Outside any kit (an nbgrader course folder, say): the kit this package was installed from.
    installed = [] if start else [Path(__file__).resolve().parents[1]]
    for folder in (here, *here.parents, *installed):
        if (folder / "exercises").is_dir() and (folder / "tests").is_dir():
            return folder
    raise KitError(
        f"no kit found at or above {here}: expected a folder with exercises/ and tests/. "
        "Run the command from inside your copy of the kit."
    )


@dataclass(frozen=True)
class Lesson:
    root: Path
    name: str  # "07_stable"

    def dir(self, tree: str) -> Path:
        """This lesson's folder in one of the trees: exercises, solutions or tests."""
        return self.root / tree / self.name

    @property
    def tests_dir(self) -> Path:
        return self.dir("tests")

    def modules(self, tree: str = "solutions") -> list[str]:
        """Stems of the lesson's modules in `tree` (no __init__, no private files)."""
        folder = self.dir(tree)
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))

    def mutants(self) -> list[Path]:
        return sorted(p for p in (self.tests_dir / "mutants").glob("*.py") if not p.name.startswith("_"))

    @property
    def hints_file(self) -> Path:
        return self.tests_dir / "hints.md"

    def hints(self) -> list[str]:
        """The hint levels, in order: the text under each "## Level N" heading."""
        if not self.hints_file.is_file():
            return []
        text = self.hints_file.read_text(encoding="utf-8")
        parts = re.split(r"^## Level \d+[^\n]*\n", text, flags=re.MULTILINE)
        return [part.strip() for part in parts[1:]]


def all_lessons(root: Path) -> list[Lesson]:
    """Every lesson that has a folder in any of the three trees, in order."""
    names = {
        p.name for tree in (*IMPLS, "tests") for p in (root / tree).glob("*") if p.is_dir() and LESSON_RE.match(p.name)
    }
    return [Lesson(root, name) for name in sorted(names)]


def get_lesson(root: Path, name: str) -> Lesson:
    """A lesson by full name ("07_stable"), number ("07", "7") or topic ("stable")."""
    lessons = all_lessons(root)
    for lesson in lessons:
        number, topic = lesson.name.split("_", 1)
        if name in (lesson.name, number, topic) or (name.isdigit() and int(name) == int(number)):
            return lesson
    known = ", ".join(lesson.name for lesson in lessons) or "none"
    raise KitError(f"no lesson {name!r}; the lessons are: {known}")


def chosen_lessons(root: Path, names: list[str] | None) -> list[Lesson]:
    """The lessons named (as get_lesson reads a name), in the order given; every lesson if none
    is (an empty list or None). An unknown name raises KitError, naming the lessons there are."""
    return [get_lesson(root, name) for name in names or ()] or all_lessons(root)


def mutant_constant(mutant: Path, name: str) -> str | None:
    """A mutant's module-level ``NAME = "..."`` (its TARGET, EXPECT or VARIES), read, not imported."""
    for node in ast.parse(mutant.read_text(encoding="utf-8"), filename=str(mutant)).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Constant)
        ):
            return str(node.value.value)
    return None


def mutant_target(mutant: Path, lesson: Lesson) -> str:
    """The module stem a mutant replaces names in: its TARGET = "stem", or the lesson's only module."""
    target = mutant_constant(mutant, "TARGET")
    if target is not None:
        return target
    stems = lesson.modules("solutions")
    if len(stems) != 1:
        raise KitError(
            f"{mutant}: lesson {lesson.name} has modules {stems}; "
            'say which one this mutant replaces with TARGET = "<stem>"'
        )
    return stems[0]
