"""``kata nbgrader``: an nbgrader course from the lessons, graded by the kit's hidden tests.

    kata nbgrader build COURSE [--lessons ...]     nbgrader_config.py + source/<lesson>/<lesson>.ipynb
    cd COURSE && nbgrader generate_assignment 07_stable       (nbgrader's own commands from here)
    kata nbgrader from-module COURSE STUDENT DIR  a learner's .py work as a submission notebook
    kata nbgrader autograde COURSE 07_stable      every submission through kata grade's engine, no kernel

`kata nbgrader autograde` (grader.notebooks.autograde) grades the notebooks' code as kata grade
grades .py work, then lets nbgrader's autograde record it. The course's nbgrader_config.py also
holds what makes plain ``nbgrader autograde``, which runs each notebook in a kernel, work
headless (cell timeouts, kernels over per-process IPC sockets, the kit in KATA_ROOT, this Python
first on PATH).
"""

from __future__ import annotations

import argparse
import ast
from datetime import datetime, timezone
from pathlib import Path

from grader.grading.grade import add_grading_options
from grader.lessons import LESSON_RE, KitError, all_lessons, get_lesson
from grader.notebooks.grade_cell import RUN_TIMEOUT

CELL_TIMEOUT = 420  # seconds per cell: more than grading one lesson may take (KATA_RUN_TIMEOUT)

CONFIG = '''\
"""nbgrader configuration of an Effective PyTorch Kata course (written by `kata nbgrader build`).

Edit freely: `kata nbgrader build` does not overwrite this file once it exists (--force does).
"""
import os
import sys
import tempfile

c = get_config()  # noqa: F821 (nbgrader defines it)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
# Where release_assignment / fetch_assignment / submit / collect meet (nbgrader's default: /srv/nbgrader/exchange).
{exchange}

# The kit whose hidden tests grade the notebooks: the grade cells' grader.notebooks.grade_cell reads KATA_ROOT
# (kernels inherit this process's environment), and the time one lesson's tests may take.
os.environ.setdefault("KATA_ROOT", {kit!r})
os.environ.setdefault("KATA_RUN_TIMEOUT", "{run_timeout}")
# nbgrader runs `alembic`, and the kernel spec runs `python`, from PATH: this Python's first.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

# Each cell may run this long (a grade cell runs a whole lesson's tests); then it is interrupted.
c.Execute.timeout = {cell_timeout}
c.Execute.interrupt_on_timeout = True
# Code that ignores the interrupt must not fail the whole submission.
c.Execute.raise_on_iopub_timeout = False
c.Execute.shutdown_kernel = "immediate"
# Kernels over IPC sockets named after this process: parallel `nbgrader autograde` processes
# cannot collide on TCP ports.
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(tempfile.gettempdir(), f"kata-kernel-{{os.getpid()}}")
'''


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="write an nbgrader course: config and one source notebook per lesson",
        description="Write nbgrader_config.py and source/<lesson>/<lesson>.ipynb for each lesson.",
    )
    build.add_argument("course", metavar="COURSE", type=Path, help="the course folder (created if missing)")
    build.add_argument("--lessons", nargs="+", metavar="LESSON", help="only these lessons (default: all)")
    build.add_argument("--course-id", default="kata", help="nbgrader's course id (default: kata)")
    build.add_argument("--exchange", type=Path, help="the exchange folder students fetch from and submit to")
    build.add_argument("--force", action="store_true", help="overwrite an existing nbgrader_config.py")
    grade = actions.add_parser(
        "autograde",
        help="grade every submission of an assignment with kata grade's engine, no kernel",
        description="Grade each student's submitted notebook of ASSIGNMENT as kata grade grades .py work "
        "(behind the OS boundary, the checks apart, runs forked from one preloaded process), then run "
        "nbgrader's autograde with the kit's results in the grade cells: the gradebook, formgrader, "
        "feedback and export as ever. Lists the scores, names the submissions that failed, writes a CSV.",
    )
    grade.add_argument("course", metavar="COURSE", type=Path)
    grade.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment (a lesson name, e.g. 07_stable)")
    grade.add_argument("--students", nargs="+", metavar="STUDENT", help="only these students")
    grade.add_argument("--csv", type=Path, help="where to write the scores (default: COURSE/grades-ASSIGNMENT.csv)")
    add_grading_options(grade)
    convert = actions.add_parser(
        "from-module",
        help="turn a learner's exercises/ files into submission notebooks",
        description="Write COURSE/submitted/STUDENT/<lesson>/<lesson>.ipynb from the "
        "learner's .py files, for every lesson that has a generated assignment.",
    )
    convert.add_argument("course", metavar="COURSE", type=Path)
    convert.add_argument("student", metavar="STUDENT", help="the student's id in the gradebook")
    convert.add_argument(
        "source", metavar="EXERCISES", type=Path, help="the learner's exercises/ folder (or one lesson folder in it)"
    )
    parser.epilog += f"""

An instructor's whole round, from the kit's folder:
  kata {name} build ../course                      then edit ../course/nbgrader_config.py if you like
  (cd ../course && nbgrader generate_assignment 07_stable)   the student version, in release/
  ... students work and submit; nbgrader collect ...
  kata {name} from-module ../course alice ~/alice/exercises   a learner who worked in .py files
  kata {name} autograde ../course 07_stable         kata grade's engine, then nbgrader's gradebook; a CSV
  (cd ../course && nbgrader generate_feedback 07_stable && nbgrader export)"""


def run(args: argparse.Namespace, root: Path) -> int:
    if args.action == "build":
        options = {"course_id": args.course_id, "exchange": args.exchange, "force": args.force}
        return build(root, args.course, args.lessons, **options)
    if args.action == "autograde":
        _nbgrader_installed()
        from grader.notebooks.autograde import autograde

        return autograde(root, args)
    return from_module(root, args.course, args.student, args.source)


def _nbgrader_installed() -> None:
    try:
        import nbgrader  # noqa: F401 (only whether it is installed)
    except ImportError:
        raise KitError('nbgrader is not installed: pip install -c constraints.txt -e ".[instructor]"') from None


# --- build -------------------------------------------------------------------------------------------


def lesson_points(root: Path, names: list[str]):
    """Points of each lesson's public and hidden tests (CUDA tests left out), from pytest's collection."""
    from grader.notebooks.build import Points
    from grader.runs import run_pytest

    run = run_pytest(root, [*(f"tests/{name}" for name in names), "--collect-only", "-m", "not cuda"])
    if run.collect_errors or run.exitstatus not in (0, 5):
        problem = run.collect_errors[0].message if run.collect_errors else run.output[-2000:]
        raise KitError(f"the lessons' tests could not be collected:\n{problem}")
    points = {name: Points(0.0, 0.0) for name in names}
    for test in run.collected or []:
        lesson = points[test.nodeid.split("/")[1]]
        if test.public:
            lesson.public += test.max_points
        else:
            lesson.hidden += test.max_points
    return points


def build(
    root: Path,
    course: Path,
    lessons: list[str] | None,
    *,
    course_id: str = "kata",
    exchange: Path | None = None,
    force: bool = False,
) -> int:
    _nbgrader_installed()
    import nbformat

    from grader.notebooks.build import lesson_notebook

    chosen = (
        [get_lesson(root, name) for name in lessons]
        if lessons
        else [lesson for lesson in all_lessons(root) if lesson.dir("solutions").is_dir()]
    )
    course = course.resolve()
    if course == root or root in course.parents:
        raise KitError(f"{course} is inside the kit; build the course beside it, e.g. `kata nbgrader build ../course`")
    points = lesson_points(root, [lesson.name for lesson in chosen])
    notebooks = {lesson.name: lesson_notebook(lesson, points[lesson.name]) for lesson in chosen}  # all checked first
    course.mkdir(parents=True, exist_ok=True)
    config = course / "nbgrader_config.py"
    if force or not config.exists():
        line = (
            f"c.Exchange.root = {str(exchange.resolve())!r}"
            if exchange
            else '# c.Exchange.root = "/srv/nbgrader/exchange"'
        )
        config.write_text(
            CONFIG.format(
                course_id=course_id,
                exchange=line,
                kit=str(root),
                run_timeout=f"{RUN_TIMEOUT:g}",
                cell_timeout=CELL_TIMEOUT,
            ),
            encoding="utf-8",
        )
        print(f"wrote {config}")
    else:
        print(f"kept {config} (it exists; --force writes a new one)")
    for name, nb in notebooks.items():
        path = course / "source" / name / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(path))
        p = points[name]
        print(f"wrote {path.relative_to(course)}  ({p.public:g} public + {p.hidden:g} hidden points)")
    first = next(iter(notebooks))
    print(
        f"\nNext: cd {course} && nbgrader generate_assignment {first}   (the student version goes to release/{first}/)"
    )
    return 0


# --- from-module ---------------------------------------------------------------------------------------


def submission_from_module(release_nb, module_text: str, where: str = "<module>"):
    """The release notebook with the learner's module in it: each of its defs in that def's cell
    (the cell's grade_id is the name), everything else (imports, helpers, constants) in the setup
    cell. A def the module lacks keeps its cell from the release (a TODO)."""
    import copy

    from grader.stubs import first_line, python_lines

    try:
        tree = ast.parse(module_text)
    except SyntaxError:
        tree = None  # graded as it is: the whole file in the setup cell, where its error shows
    nb = copy.deepcopy(release_nb)
    solution_cells = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    setup = next((c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata), None)
    if setup is None:
        raise KitError(f"{where}: the release notebook has no setup cell (a code cell without nbgrader metadata)")
    if tree is None:
        setup.source = module_text
        return nb
    lines = python_lines(module_text)
    rest = []
    for node in tree.body:
        text = "\n".join(lines[first_line(node) - 1 : node.end_lineno])
        if node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring: the notebook has the lesson text
        if getattr(node, "name", None) in solution_cells:
            solution_cells[node.name].source = text
        else:
            rest.append(text)
    setup.source = "\n\n".join(rest)
    return nb


def from_module(root: Path, course: Path, student: str, source: Path) -> int:
    _nbgrader_installed()
    import nbformat

    course, source = course.resolve(), source.resolve()
    if not source.is_dir():
        raise KitError(f"{source} is not a folder: give the learner's exercises/ folder (or one lesson folder in it)")
    folders = (
        [source] if LESSON_RE.match(source.name) else sorted(p for p in source.iterdir() if LESSON_RE.match(p.name))
    )
    written = 0
    for folder in folders:
        release = course / "release" / folder.name / f"{folder.name}.ipynb"
        files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
        if not release.is_file() or not files:
            if files:
                print(
                    f"skipped {folder.name}: no {release.relative_to(course)} (nbgrader generate_assignment {folder.name} first)"
                )
            continue
        nb = nbformat.read(str(release), as_version=4)
        for file in files:
            nb = submission_from_module(nb, file.read_text(encoding="utf-8"), str(file))
        out = course / "submitted" / student / folder.name / release.name
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(out))
        # Handed in now: a file's own time is the learner's to set (touch -d 2020-01-01).
        (out.parent / "timestamp.txt").write_text(datetime.now(timezone.utc).isoformat(sep=" "), encoding="utf-8")
        print(f"wrote {out.relative_to(course)} from {', '.join(str(f) for f in files)}")
        written += 1
    if not written:
        raise KitError(f"no lesson of {source} has a generated assignment in {course / 'release'}")
    return 0
