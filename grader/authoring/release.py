"""``kata release OUTDIR``: write a student bundle that a learner can unzip and start from.

The bundle holds:

- ``exercises/``: every lesson's stubs, as they are in the kit (a stub that no longer raises
  ``NotImplementedError`` is copied too, with a warning: it may be an answer);
- ``.kata/pristine/<lesson>/``: the same stubs again, which ``kata reset`` restores from;
- ``tests/<lesson>/``: hints.md and every helper file, with each ``test_*.py`` reduced to its
  public tests (grader.authoring.public_tests); no mutants/, and no solutions/ anywhere;
- the tooling: the grader package without grader/tests/ and the instructor-only commands
  (verify, release, nbgrader: the CLI leaves out commands whose module is absent; the grade
  cells' grader/notebooks/grade_cell.py stays, so a notebook's "Check your work" runs), and conftest.py,
  pyproject.toml, constraints.txt and .gitignore from the kit root;
- a short README.md for students.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

import grader
from grader.authoring.public_tests import reduce_tests
from grader.authoring.shipped import learner_modules
from grader.lessons import JUNK, LESSON_RE, KitError
from grader.stubs import has_todo_raise
from grader.learner.reset import lesson_files, pristine_dir

ROOT_FILES = ("conftest.py", "pyproject.toml", "constraints.txt", ".gitignore")
REQUIRED_ROOT_FILES = ("conftest.py", "pyproject.toml")  # without them the plugin does not load
# The kit README's learn-command block, without the lesson it starts.
SETUP = "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints.txt -e ."


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "outdir",
        metavar="OUTDIR",
        type=Path,
        help="folder to write the bundle to; it must not exist or be empty, and lie outside the kit",
    )
    parser.epilog += f"""
  kata {name} /tmp/kata-student && (cd /tmp && zip -r kata-student.zip kata-student)
The bundle has the stubs, the public tests (@pytest.mark.public) and the tooling: no solutions/,
no mutants, no hidden tests, no `kata verify`."""


def run(args: argparse.Namespace, root: Path) -> int:
    return release(root, args.outdir)


@dataclass
class Bundle:
    """The folder being written, and what went into it."""

    root: Path  # the kit
    out: Path
    written: list[Path] = field(default_factory=list)

    def write(self, rel: str | Path, data: bytes) -> None:
        target = self.out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.written.append(target)

    def copy_tree(self, source: Path, rel: str | Path, only: set[Path] | None = None) -> None:
        """Copy the folder `source` to `rel`, without caches; only the files in `only`, if given."""
        for path in sorted(source.rglob("*")):
            parts = path.relative_to(source).parts
            if (
                path.is_file()
                and not path.name.endswith(".pyc")
                and not set(parts) & set(JUNK)
                and (only is None or path in only)
            ):
                self.write(Path(rel, *parts), path.read_bytes())


def release(root: Path, outdir: Path) -> int:
    out = _check_outdir(root, outdir)
    missing = [name for name in REQUIRED_ROOT_FILES if not (root / name).is_file()]
    if missing:
        raise KitError(
            f"{root} has no {' or '.join(missing)}, which the bundle needs for its tests to run; restore it from git and try again"
        )
    lessons = sorted(p.name for p in (root / "exercises").iterdir() if p.is_dir() and LESSON_RE.match(p.name))
    if not lessons:
        raise KitError(f"{root / 'exercises'} has no lesson folders (NN_topic): nothing to release")
    releases = [_release_lesson(root, name) for name in lessons]
    bundle = Bundle(root, out)
    bundle.copy_tree(root / "exercises", "exercises")
    for lesson in releases:
        for rel, data in lesson.files.items():
            bundle.write(rel, data)
    _copy_tooling(bundle)
    bundle.write("README.md", student_readme(lessons).encode("utf-8"))
    _print_summary(bundle, releases)
    return 0


def _check_outdir(root: Path, outdir: Path) -> Path:
    out = outdir.expanduser().resolve()
    if out.is_relative_to(root.resolve()):
        raise KitError(
            f"{outdir} is inside the kit ({root}); write the bundle outside it, e.g. `kata release ../kata-student`"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise KitError(
            f"{outdir} already exists and is not an empty folder; pick another OUTDIR or delete that one first"
        )
    return out


@dataclass
class LessonRelease:
    """What one lesson puts in the bundle: files (path in the bundle -> bytes) and test counts."""

    name: str
    files: dict[Path, bytes] = field(default_factory=dict)
    kept: int = 0
    dropped: int = 0


def _release_lesson(root: Path, name: str) -> LessonRelease:
    """A lesson's pristine stubs and reduced tests, worked out before anything is written (so
    that a test file that does not parse leaves OUTDIR untouched)."""
    lesson = LessonRelease(name)
    for stub in lesson_files(root / "exercises" / name):
        lesson.files[pristine_dir(Path(), name) / stub.name] = stub.read_bytes()
        if stub.suffix == ".py" and not stub.name.startswith("_") and not _is_stub(stub):
            _warn(
                f"exercises/{name}/{stub.name} has no `raise NotImplementedError`: is it an answer? "
                "It is in the bundle; check it, put the stub back (git checkout) and release again if it is."
            )
    for path in lesson_files(root / "tests" / name):  # top level only: no mutants/
        data = path.read_bytes()
        if path.name.startswith("test") and path.suffix == ".py":
            try:
                reduced = reduce_tests(data.decode("utf-8"), str(path))
            except SyntaxError as exc:
                raise KitError(
                    f"{path} does not parse (line {exc.lineno}: {exc.msg}), so its hidden tests cannot be "
                    "cut out; fix it and release again"
                ) from None
            data = reduced.text.encode("utf-8")
            lesson.kept += len(reduced.kept)
            lesson.dropped += len(reduced.dropped)
        lesson.files[Path("tests", name, path.name)] = data
    if not lesson.kept:
        _warn(f"tests/{name} has no @pytest.mark.public test: learners get nothing to run for {name}")
    return lesson


def _is_stub(path: Path) -> bool:
    """Whether the file still has a TODO ``raise`` (one that does not parse is no answer either)."""
    try:
        return has_todo_raise(ast.parse(path.read_text(encoding="utf-8")))
    except SyntaxError:
        return True


def _copy_tooling(bundle: Bundle) -> None:
    package = bundle.root / "grader"
    if not package.is_dir():  # a kit that uses the installed grader package
        package = Path(grader.__file__).parent
    bundle.copy_tree(package, "grader", only=learner_modules(package))
    for name in ROOT_FILES:
        if (bundle.root / name).is_file():
            data = (bundle.root / name).read_bytes()
            if name == ".gitignore":  # a student who commits the bundle keeps the pristine stubs
                data = data.replace(b".kata/\n", b".kata/cache/\n.kata/backups/\n")
            bundle.write(name, data)
        else:
            _warn(f"the kit has no {name}; the bundle goes without it")


def student_readme(lessons: list[str]) -> str:
    first = lessons[0]
    commands = [
        ("kata next", "the lesson in progress (else the first not started) and its command"),
        (f"pytest exercises/{first}", "a lesson's tests, run against your file"),
        (f"kata hint {first}", f"a hint, one level at a time (`kata hint {first} 2`: the next)"),
        ("kata status", "one line per lesson: tests passed, your next TODO"),
        ("kata watch", "re-run the tests every time you save"),
        (f"kata reset {first}", "start a lesson over (your file is backed up first)"),
    ]
    width = max(len(command) for command, _ in commands)
    work = "\n".join(f"{command:<{width}}  # {what}" for command, what in commands)
    listing = "\n".join(f"- `{name}`" for name in lessons)
    return f"""\
# Effective PyTorch Kata

Learn PyTorch's best practices by writing the code yourself. Each lesson is a Python file in
`exercises/` with a short lesson text and functions to fill in; its tests tell you precisely
what is still wrong.

## Set up

You need Python 3.11 or newer with pip. From this folder:

```sh
{SETUP}
```

On Windows, activate with `.venv\\Scripts\\activate` instead.

## Work

```sh
{work}
```

These are the public tests; your work may be graded with more, so check edge cases yourself.

## Lessons

{listing}
"""


def _print_summary(bundle: Bundle, lessons: list[LessonRelease]) -> None:
    width = max(len(lesson.name) for lesson in lessons)
    print(f"{'lesson':<{width}}  public tests kept  hidden tests dropped")
    for lesson in lessons:
        print(f"{lesson.name:<{width}}  {lesson.kept:>17}  {lesson.dropped:>20}")
    kept, dropped = sum(lesson.kept for lesson in lessons), sum(lesson.dropped for lesson in lessons)
    print(
        f"release: {len(lessons)} lessons, {kept} public tests kept, {dropped} hidden tests dropped, "
        f"{len(bundle.written)} files written to {bundle.out}"
    )
    print(
        f"Next: try it (cd {bundle.out} && {SETUP} && pytest exercises/{lessons[0].name}), "
        "then zip the folder and hand it out."
    )


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
