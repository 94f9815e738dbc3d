"""``kata gradescope``: the kit as a Gradescope autograder, graded as ``kata grade`` grades.

``kata gradescope build OUT.zip [--lessons ...]`` writes the zip Gradescope asks for: at its
top ``setup.sh`` and ``run_autograder``, beside the kit they run (the grader without its own
tests, the chosen lessons' stubs, answers and tests, the root files, and ``gradescope.json``,
the lessons and options chosen). Gradescope unzips it into /autograder/source.

- ``setup.sh`` installs torch's CPU wheel from PyTorch's index (PyPI's pulls gigabytes of CUDA
  packages), then the kit with ``constraints.txt``, as the README does.
- ``run_autograder`` runs ``kata gradescope run``: the ``.py`` files of /autograder/submission
  (anywhere in it, each laid over the lesson whose stub has its name) become one student of a
  class of one, graded by ``kata grade`` itself (the same OS boundary, checks apart, limits and
  verdicts), and the student's results file becomes /autograder/results/results.json in
  Gradescope's format: the score, a test per kit test (public tests visible at once, the rest
  after the grades are published), the lessons' summary as the output, and the grader's own
  log hidden from students (``stdout_visibility``).

Where the boundary cannot be made (a container that refuses user namespaces), the submission
is not run: results.json says why, with a score of 0, and the instructor decides.
The autograder's folders can be moved with --autograder (the tests use a folder of their own).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grader.files import write_json
from grader.lessons import JUNK, KitError, chosen_lessons

CONFIG = "gradescope.json"  # in the bundle: the lessons and options it grades with
ROOT_FILES = ("conftest.py", "pyproject.toml", "constraints.txt", "README.md")  # README: pyproject names it
STUDENT = "submission"  # the class of one's only student
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

SETUP = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${{PYTHON:-python3}}
# torch's CPU wheel first, from PyTorch's own index (PyPI's torch pulls gigabytes of CUDA
# packages); then the kit, with the versions it was tested with.
"$PYTHON" -m pip install "torch==$(sed -n 's/^torch==//p' constraints.txt)" --index-url {TORCH_CPU_INDEX}
"$PYTHON" -m pip install -c constraints.txt -e .
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: it grades /autograder/submission and writes
# /autograder/results/results.json.
set -euo pipefail
AUTOGRADER=${KATA_AUTOGRADER:-/autograder}
cd "$AUTOGRADER/source"
exec "${PYTHON:-python3}" -m grader --root . gradescope run --autograder "$AUTOGRADER"
"""


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="write the autograder zip to upload to Gradescope")
    build.add_argument("zip", type=Path, metavar="OUT.zip")
    build.add_argument("--lessons", nargs="+", metavar="LESSON", help="only these lessons (default: all)")
    build.add_argument("--no-speed", action="store_true", help="leave out the speed tests")
    run_parser = actions.add_parser("run", help="grade /autograder/submission (what run_autograder calls)")
    run_parser.add_argument(
        "--autograder",
        type=Path,
        default=Path("/autograder"),
        metavar="DIR",
        help="the autograder's folder: DIR/submission in, DIR/results/results.json out",
    )


def run(args: argparse.Namespace, root: Path) -> int:
    if args.action == "build":
        return build(root, args.zip, args.lessons, speed=not args.no_speed)
    return grade_submission(root, args.autograder)


# --- the bundle ---------------------------------------------------------------------------------


def build(root: Path, out: Path, lessons: list[str] | None, speed: bool = True) -> int:
    chosen = [lesson.name for lesson in chosen_lessons(root, lessons)]
    if missing := [name for name in ROOT_FILES if not (root / name).is_file()]:
        raise KitError(f"the kit at {root} has no {', '.join(missing)}: setup.sh installs the kit from them")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", SETUP.encode(), executable=True)
        _add(bundle, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        _add(bundle, CONFIG, json.dumps({"lessons": chosen, "speed": speed}, indent=1).encode())
        for name in ROOT_FILES:
            _add(bundle, name, (root / name).read_bytes())
        for tree in ("exercises", "solutions"):
            if (root / tree / "__init__.py").is_file():
                _add(bundle, f"{tree}/__init__.py", (root / tree / "__init__.py").read_bytes())
        folders = [root / "grader"] + [
            root / tree / name for tree in ("exercises", "solutions", "tests") for name in chosen
        ]
        for folder in folders:
            for path in sorted(folder.rglob("*")):
                rel = path.relative_to(root)
                if (
                    path.is_file()
                    and not path.is_symlink()
                    and not set(rel.parts) & set(JUNK)
                    and rel.parts[:2] != ("grader", "tests")
                ):
                    _add(bundle, rel.as_posix(), path.read_bytes())
    print(
        f"wrote {out}: {len(chosen)} lesson{'s' if len(chosen) != 1 else ''} ({', '.join(chosen)}); upload it as "
        "the autograder of a Gradescope programming assignment (Ubuntu base image)"
    )
    return 0


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # the same bytes for the same kit
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


# --- grading a submission -----------------------------------------------------------------------


def grade_submission(root: Path, autograder: Path) -> int:
    """Grade autograder/submission with kata grade; write autograder/results/results.json."""
    config = json.loads((root / CONFIG).read_text(encoding="utf-8")) if (root / CONFIG).is_file() else {}
    lessons = chosen_lessons(root, config.get("lessons"))
    results = autograder / "results" / "results.json"
    with tempfile.TemporaryDirectory(prefix="kata-gradescope-") as scratch:
        work = Path(scratch) / "class" / STUDENT / "exercises"
        taken = lay_out(
            autograder / "submission",
            work,
            {
                stub.name: lesson.name
                for lesson in lessons
                for stub in (root / "exercises" / lesson.name).glob("*.py")
                if stub.name != "__init__.py"
            },
        )
        out = Path(scratch) / "results"
        command = [
            sys.executable,
            "-m",
            "grader",
            "--root",
            str(root),
            "grade",
            str(work.parent.parent),
            "--out",
            str(out),
            "--lessons",
            *(lesson.name for lesson in lessons),
            *([] if config.get("speed", True) else ["--no-speed"]),
        ]
        proc = subprocess.run(command, capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        record_path = out / "students" / f"{STUDENT}.json"
        if not record_path.is_file():
            why = (proc.stderr.strip().splitlines() or ["kata grade wrote no result"])[-1]
            write_json(
                results,
                {
                    "score": 0.0,
                    "output": f"This submission could not be graded: {why}",
                    "stdout_visibility": "hidden",
                    "tests": [],
                },
                indent=1,
            )
            return 1
        write_json(results, gradescope_results(json.loads(record_path.read_text(encoding="utf-8")), taken), indent=1)
    return 0


def lay_out(submission: Path, work: Path, lesson_of: dict[str, str]) -> list[str]:
    """Copy each .py file of `submission` (links not followed, any depth) to the lesson whose
    stub has its name: what was taken, as "FILE -> LESSON" lines, and what was not."""
    notes = []
    for path in sorted(submission.rglob("*.py")) if submission.is_dir() else []:
        if path.is_symlink() or not path.is_file():
            notes.append(f"{path.relative_to(submission)}: not a regular file, not taken")
            continue
        lesson = lesson_of.get(path.name)
        if lesson is None:
            notes.append(f"{path.relative_to(submission)}: no lesson has a file of that name, not taken")
            continue
        target = work / lesson / path.name
        if target.exists():
            notes.append(f"{path.relative_to(submission)}: a second {path.name}, not taken")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target, follow_symlinks=False)
        notes.append(f"{path.relative_to(submission)} -> {lesson}")
    work.mkdir(parents=True, exist_ok=True)  # (nothing handed in: every lesson is its stub)
    return notes


def gradescope_results(record: dict, taken: list[str]) -> dict:
    """A student's results file (kata grade's) as Gradescope's results.json."""
    tests = [
        {
            "name": test["name"],
            "score": test["points"],
            "max_score": test["max_points"],
            "status": "passed" if test["status"] == "pass" else "failed",
            "output": "passed"
            if test["status"] == "pass" and not test.get("held")
            else test.get("message") or test["status"],
            "visibility": "visible" if test.get("public") else "after_published",
        }
        for test in record.get("tests", [])
    ]
    lines = [
        f"{e['lesson']}: {e['points']:g}/{e['max_points']:g} points, {e['state']}"
        + (f" ({e['problem']})" if e.get("problem") else "")
        for e in record.get("lessons", [])
    ]
    if record.get("flags"):
        lines += ["", "Flagged for your instructor to read:"] + [f"  {flag}" for flag in record["flags"]]
    lines += ["", "Files taken:"] + [f"  {line}" for line in taken or ["(none)"]]
    return {
        "score": record.get("points", 0.0),
        "output": "\n".join(lines),
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"max_points": record.get("max_points"), "kit": record.get("kit")},
    }
