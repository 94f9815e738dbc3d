"""``kata release OUTDIR``: write a student bundle that a learner can unzip and start from.

The bundle holds:

- ``exercises/``: every lesson's stubs, as they are in the kit (a stub that no longer raises
  ``NotImplementedError`` is copied too, with a warning: it may be an answer);
- ``.kata/pristine/<lesson>/``: the same stubs again, which ``kata reset`` restores from;
- ``tests/<lesson>/``: hints.md and every helper file, with each ``test_*.py`` reduced to its
  public tests (see reduce_tests); no mutants/, and no solutions/ anywhere;
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
from grader import module_file
from grader.lessons import LESSON_RE, KitError
from grader.stubs import first_line, has_todo_raise
from grader.learner.reset import lesson_files, pristine_dir

ROOT_FILES = ("conftest.py", "pyproject.toml", "constraints.txt", ".gitignore")
REQUIRED_ROOT_FILES = ("conftest.py", "pyproject.toml")  # without them the plugin does not load
# Where what a learner runs starts (a package stands for all its modules): the `kata` command and
# its learner's commands, the plugin and test helpers of every test run, and what a notebook's
# grade cells call ("Check your work"). The bundle's grader/ is these and every module of the
# package they import (`learner_modules`), so class grading, verify, release, the notebook
# builders and the tooling's own tests stay out without being named.
LEARNER_ENTRY = ("grader.__main__", "grader.cli", "grader.plugin", "grader.testing", "grader.learner",
                 "grader.notebooks.grade_cell")
JUNK = ("__pycache__", ".pytest_cache", ".hypothesis", ".benchmarks")
# The kit README's learn-command block, without the lesson it starts.
SETUP = "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints.txt -e ."


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("outdir", metavar="OUTDIR", type=Path,
                        help="folder to write the bundle to; it must not exist or be empty, and lie outside the kit")
    parser.epilog += f"""
  kata {name} /tmp/kata-student && (cd /tmp && zip -r kata-student.zip kata-student)
The bundle has the stubs, the public tests (@pytest.mark.public) and the tooling: no solutions/,
no mutants, no hidden tests, no `kata verify`."""


def run(args: argparse.Namespace, root: Path) -> int:
    return release(root, args.outdir)


# --- reducing a test file to its public tests -----------------------------------------------------


@dataclass
class Reduced:
    """A test file's source with its hidden tests cut out, and the test functions kept and dropped."""

    text: str
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def reduce_tests(source: str, filename: str = "<test file>") -> Reduced:
    """Cut every top-level ``def test*`` and ``class Test*`` without a ``pytest.mark.public``
    decorator out of `source`, by line ranges, so that comments and formatting survive.

    A module-level ``pytestmark`` that includes ``pytest.mark.public`` keeps the whole file; a
    class marked public (decorator or class-level ``pytestmark``) is kept whole, and in an
    unmarked class only the public methods stay (the class goes when none does). Imports,
    helpers and fixtures are kept. The blank lines that followed a cut block go with it.
    """
    tree = ast.parse(source, filename=filename)
    if _pytestmark_is_public(tree.body):
        return Reduced(source, kept=_test_names(tree.body))
    cuts, kept, dropped = _plan(tree.body)
    return Reduced(_cut(source, cuts), kept, dropped)


def _plan(body: list[ast.stmt], prefix: str = "") -> tuple[list[tuple[int, int]], list[str], list[str]]:
    """(line ranges to cut, tests kept, tests dropped) for the statements of a module or class."""
    cuts, kept, dropped = [], [], []
    for node in body:
        if _is_test_function(node):
            (kept if _has_public_decorator(node) else dropped).append(prefix + node.name)
            if not _has_public_decorator(node):
                cuts.append(_span(node))
        elif _is_test_class(node):
            if _has_public_decorator(node) or _pytestmark_is_public(node.body):
                kept += _test_names(node.body, f"{prefix}{node.name}::")
                continue
            inner_cuts, inner_kept, inner_dropped = _plan(node.body, f"{prefix}{node.name}::")
            kept += inner_kept
            dropped += inner_dropped
            cuts += inner_cuts if inner_kept else [_span(node)]
    return cuts, kept, dropped


def _is_test_function(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _is_test_class(node: ast.stmt) -> bool:
    return isinstance(node, ast.ClassDef) and node.name.startswith("Test")


def _test_names(body: list[ast.stmt], prefix: str = "") -> list[str]:
    names = []
    for node in body:
        if _is_test_function(node):
            names.append(prefix + node.name)
        elif _is_test_class(node):
            names += _test_names(node.body, f"{prefix}{node.name}::")
    return names


def _is_public_mark(expr: ast.expr) -> bool:
    """``pytest.mark.public`` or ``mark.public`` (``from pytest import mark``), called or not."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    return ast.unparse(expr) in ("pytest.mark.public", "mark.public")


def _has_public_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    return any(_is_public_mark(d) for d in node.decorator_list)


def _pytestmark_is_public(body: list[ast.stmt]) -> bool:
    """A ``pytestmark = <mark>`` or ``= [<mark>, ...]`` among `body`'s statements that includes public."""
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
                marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                if any(_is_public_mark(m) for m in marks):
                    return True
    return False


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> tuple[int, int]:
    """First and last line (1-based) of a definition, decorators included."""
    return first_line(node), node.end_lineno


def _cut(source: str, cuts: list[tuple[int, int]]) -> str:
    """`source` without the line ranges `cuts` (1-based, inclusive), so that it still reads well:
    a cut block takes with it the comment lines right above it, the comments that trail its body
    and the blank lines that follow it; a section's comment header goes too once nothing is left
    under it."""
    lines = source.splitlines(keepends=True)
    drop = set()
    for start, end in cuts:
        indent = _indent(lines[start - 1])
        while start > 1 and _is_comment(lines[start - 2]) and _indent(lines[start - 2]) == indent:
            start -= 1
        while end < len(lines) and (_is_blank(lines[end]) or (_is_comment(lines[end]) and _indent(lines[end]) > indent)):
            end += 1
        drop.update(range(start - 1, end))
    drop |= _orphaned_headers(lines, drop)
    kept = [line for n, line in enumerate(lines) if n not in drop]
    return "".join(kept).rstrip() + "\n" if "".join(kept).strip() else ""


def _orphaned_headers(lines: list[str], drop: set[int]) -> set[int]:
    """Comment blocks (with the blank lines after them) that headed code now cut, and that the
    cuts leave followed by nothing but another comment header, a dedent or the end of the file."""
    orphans = set()
    for first, line in enumerate(lines):
        if first in drop or not _is_comment(line) or (first and _is_comment(lines[first - 1])):
            continue
        indent, last = _indent(line), first
        while last + 1 < len(lines) and _is_comment(lines[last + 1]) and last + 1 not in drop:
            last += 1
        after = [n for n in range(last + 1, len(lines)) if not _is_blank(lines[n])]
        if not after or after[0] not in drop:
            continue  # what it heads is still there
        kept_after = [n for n in after if n not in drop]
        nxt = kept_after[0] if kept_after else len(lines)
        if nxt == len(lines) or _indent(lines[nxt]) < indent or (_is_comment(lines[nxt]) and _indent(lines[nxt]) == indent):
            orphans.update(range(first, nxt))
    return orphans


def _is_blank(line: str) -> bool:
    return not line.strip()


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# --- the bundle -------------------------------------------------------------------------------


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
            if (path.is_file() and not path.name.endswith(".pyc") and not set(parts) & set(JUNK)
                    and (only is None or path in only)):
                self.write(Path(rel, *parts), path.read_bytes())


def release(root: Path, outdir: Path) -> int:
    out = _check_outdir(root, outdir)
    missing = [name for name in REQUIRED_ROOT_FILES if not (root / name).is_file()]
    if missing:
        raise KitError(f"{root} has no {' or '.join(missing)}, which the bundle needs for its tests to run; restore it from git and try again")
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
        raise KitError(f"{outdir} is inside the kit ({root}); write the bundle outside it, e.g. `kata release ../kata-student`")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise KitError(f"{outdir} already exists and is not an empty folder; pick another OUTDIR or delete that one first")
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
            _warn(f"exercises/{name}/{stub.name} has no `raise NotImplementedError`: is it an answer? "
                  "It is in the bundle; check it, put the stub back (git checkout) and release again if it is.")
    for path in lesson_files(root / "tests" / name):  # top level only: no mutants/
        data = path.read_bytes()
        if path.name.startswith("test") and path.suffix == ".py":
            try:
                reduced = reduce_tests(data.decode("utf-8"), str(path))
            except SyntaxError as exc:
                raise KitError(f"{path} does not parse (line {exc.lineno}: {exc.msg}), so its hidden tests cannot be "
                               "cut out; fix it and release again") from None
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


def learner_modules(package: Path) -> set[Path]:
    """The files of `package` (a grader/ folder) that LEARNER_ENTRY names, and every module of
    the package they import, read from their import statements (with the packages' __init__)."""
    def module(dotted: str) -> Path | None:
        path = module_file(dotted, package)
        return path if path.is_file() else None  # a name imported from a module, not a module

    def entry(dotted: str) -> list[Path]:
        folder = package.joinpath(*dotted.split(".")[1:])
        return sorted(folder.rglob("*.py")) if folder.is_dir() else [m for m in [module(dotted)] if m]

    pending = [path for name in LEARNER_ENTRY for path in entry(name)]
    found: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        folder = path.parent
        while folder != package.parent:  # the packages it is in
            pending.append(folder / "__init__.py")
            folder = folder.parent
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if node in optional:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            pending += [m for name in names if name.split(".")[0] == "grader" and (m := module(name))]
    return {path for path in found if path.is_file()}


def _optional_imports(tree: ast.Module) -> set[ast.AST]:
    """The import statements in the body of a ``try`` that catches ImportError: the code has
    its way on without them (``kata status`` forks its runs through class grading's runner,
    and runs each lesson fresh where that is missing), so a release leaves them out."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h.type) for h in node.handlers):
            found |= {n for part in node.body for n in ast.walk(part) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return found


def _catches_import_error(caught: ast.expr | None) -> bool:
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


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
    print(f"release: {len(lessons)} lessons, {kept} public tests kept, {dropped} hidden tests dropped, "
          f"{len(bundle.written)} files written to {bundle.out}")
    print(f"Next: try it (cd {bundle.out} && {SETUP} && pytest exercises/{lessons[0].name}), "
          "then zip the folder and hand it out.")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
