"""End to end with real nbgrader, as an instructor works: build a course of lessons 07 and 02,
generate the student versions, hand in notebooks, grade them with `kata nbgrader autograde`
(kata grade's engine, no kernel), then read formgrader's database, write feedback and export.
The students: every mutant of both lessons, and a few whose notebooks do what learners and
cheats do. Marked `nbgrader` (-m "not nbgrader" leaves it out)."""

from __future__ import annotations

import ast
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.cli import main
from grader.notebooks.grade_cell import Module, score
from grader.results import Outcome, RunResult
from grader.tests.kits import ROOT
from grader.tests.test_classgrade import ATTACKS, HOSTILE, attack

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

pytestmark = [pytest.mark.nbgrader, pytest.mark.timeout(900)]  # the whole course is graded once, in a fixture

LESSONS = {"07_stable": "stable.py", "02_modules": "modules.py"}
SEED = ROOT / "tests/07_stable/mutants/seed_unstable_softmax.py"  # the seed's exp(x) / sum(exp(x))
# Compared exactly with the pytest path, so graded as pytest runs the tests: with their checks in
# the student's process (by default kata grade's checks in a process of their own also see an
# input written in place on every call, and hold what a flagged source passed: the attacks' course
# below is graded so), and without the speed tests, whose verdicts move with the machine's load.
OPTIONS = ["--in-process", "--no-speed", "--test-timeout", "5", "--jobs", "2"]
# Students whose code ends its process or never returns: kata grade keeps them apart from the tests,
# pytest's own process does not (what pytest makes of them is not what this test compares).
APART = {"loops", "exits"}
FORGERY = """\
import grader.notebooks.grade_cell as _grading


def grade(lesson, tests="all", *, points, cells=None):
    print("PASS  every test")
    return points


_grading.grade = grade  # what the grade cells import, replaced in the kernel
"""


def test_scores_are_the_pytest_paths_cell_by_cell_and_test_by_test(course):
    """Every student of both lessons, every mutant among them: each grade cell's score in
    formgrader's database is what the grade cell of the in-kernel path computes from `pytest
    --impl-file` on the same file, and kata grade's record passes the same tests."""
    for lesson, students in course["students"].items():
        for student in set(students) - APART:
            record = course["records"][lesson][student]
            run = course["pytest"][lesson][student]
            assert "held" not in record, (student, record["held"])
            kit = {t["name"].partition(": ")[2]: t["status"] for t in record["tests"] if t["status"] != "skip"}
            pytest_way = {
                t.nodeid.partition("::")[2]: "pass" if t.outcome is Outcome.PASSED else "fail" for t in run.tests
            }
            assert {n: s == "pass" for n, s in kit.items()} == {n: s == "pass" for n, s in pytest_way.items()}, student
            for grade_id, (selection, points) in course["cells"][lesson].items():
                expected, _ = score(run, selection, points, Module(""), lesson)
                assert course["gradebook"][lesson][student][grade_id] == expected, (student, grade_id)


def test_each_mutant_is_graded_as_the_code_it_is(course):
    """What kata grade graded for a mutant's notebook is the mutant's code: the kit's answer with
    the mutant's definitions over it, as `pytest --mutant` runs it (the same definitions, the
    same imports); and no mutant scores the reference's full marks."""
    for lesson, file in LESSONS.items():
        answer = (ROOT / "solutions" / lesson / file).read_text(encoding="utf-8")
        full = sum(course["gradebook"][lesson]["reference"].values())
        for mutant in sorted((ROOT / "tests" / lesson / "mutants").glob("*.py")):
            graded = course["path"] / "kata" / lesson / "class" / f"m-{mutant.stem}" / "exercises" / lesson / file
            assert definitions(graded.read_text()) == definitions(answer + "\n\n" + mutant.read_text()), mutant
            assert sum(course["gradebook"][lesson][f"m-{mutant.stem}"].values()) < full, mutant


def test_the_learners_notebooks_score_as_their_code_does(course):
    book, total = course["gradebook"]["07_stable"], sum(course["points"]["07_stable"])
    assert sum(book["reference"].values()) == total > 0
    assert sum(book["noisy"].values()) == total  # warnings and stderr in correct code cost nothing
    assert sum(book["untouched"].values()) == 0
    assert 0 < sum(book["m-seed_unstable_softmax"].values()) < total


def test_a_cell_that_replaces_grade_gains_nothing(course):
    """The forger's notebook is the seed's softmax and a cell that replaces `grade` where the grade
    cells import it: the grade cells never run, so it scores as the seed's softmax does."""
    book = course["gradebook"]["07_stable"]
    assert book["forger"] == book["m-seed_unstable_softmax"]


def test_a_loop_costs_its_limit_once_a_function_and_names_its_cell(course):
    text = outputs(course, "loops")
    assert sum(course["gradebook"]["07_stable"]["loops"].values()) == 0
    for function in ("stable_softmax", "logsumexp", "softmax_cross_entropy"):
        stopped = (
            rf"TIME  \w+\n      did not finish in 5.0 s; it was running {function} \(the {function} cell, line \d+\)"
        )
        waited = r"\n      \(the same in \d+ more tests?: "
        assert re.search(stopped, text) and re.search(rf"ended at once: it reached {function}, .*{waited}", text), (
            function
        )


def test_code_that_ends_its_process_keeps_what_passed_before_and_says_so(course):
    text, book = outputs(course, "exits"), course["gradebook"]["07_stable"]
    assert 0 < sum(book["exits"].values()) < sum(book["reference"].values())
    assert "\nThe run ended (exit status 0) before its tests finished: the code under test called os._exit" in text


def test_grade_cells_print_reasons_and_never_write_stderr(course):
    for student in course["students"]["07_stable"]:
        nb = nbformat.read(str(course["path"] / "autograded" / student / "07_stable" / "07_stable.ipynb"), as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                kinds = [(o.output_type, o.get("name")) for o in cell.outputs]
                assert kinds == [("stream", "stdout"), ("execute_result", None)], (student, kinds)
    assert re.search(
        r"TODO  test_\w+: stable_softmax \(the stable_softmax cell, line \d+\) is not implemented yet\n"
        r"      \(the same in \d+ more tests: ",
        outputs(course, "untouched"),
    )


def test_the_command_lists_every_student_writes_a_csv_and_names_what_could_not_be_graded(course):
    """One notebook that is not one, or is a link (here to the answers), fails alone; the others
    are graded. The scores are after nbgrader's late penalty, as `nbgrader export` gives them."""
    assert course["status"] == {"07_stable": 1, "02_modules": 0}, course["out"]["07_stable"][-3000:]
    rows = {row["student"]: row for row in csv.DictReader((course["path"] / "grades-07_stable.csv").open())}
    assert set(rows) == {*course["students"]["07_stable"], "unreadable", "linked"}
    total = sum(course["points"]["07_stable"])
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == total
    assert float(rows["magic"]["score"]) == total  # its IPython command left out, not its cell
    assert (float(rows["late"]["score"]), float(rows["late"]["late_penalty"])) == (0.0, total)
    assert rows["exits"]["status"] == "graded" and "the run ended (exit status 0)" in rows["exits"]["problem"]
    for student in ("unreadable", "linked"):
        assert rows[student]["status"] == "failed" and rows[student]["score"] == "", rows[student]
        assert f"\nFAILED {student}: not graded: " in course["out"]["07_stable"]
    assert "is not a regular file (a symbolic link?)" in rows["linked"]["problem"]
    flagged = [student for student, row in rows.items() if "answer markers" in row["problem"]]
    assert flagged == ["copied"], flagged
    assert "its IPython commands (% and ! lines) are left out" in outputs(course, "magic")


def test_feedback_shows_no_hidden_test_code(course):
    assert course["feedback"].returncode == 0, course["feedback"].stderr[-2000:]
    page = (course["path"] / "feedback/m-seed_unstable_softmax/07_stable/07_stable.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "FAIL  test_softmax_of_large_logits" in text  # the reason is there ...
    test_source = (ROOT / "tests/07_stable/test_stable.py").read_text(encoding="utf-8")
    # The code, not the docstring nor the contract table (CONTRACT): they name the tests, as the feedback does.
    tree, lines = ast.parse(test_source), test_source.splitlines()
    prose = {
        n
        for node in tree.body
        if isinstance(node, ast.Expr) or _assigns(node, "CONTRACT")
        for n in range(node.lineno - 1, node.end_lineno)
    }
    body = [line for number, line in enumerate(lines) if number not in prose]
    shown = (ROOT / "solutions/07_stable/stable.py").read_text(encoding="utf-8")  # the lesson text's examples
    code = [
        line.strip()
        for line in body
        if len(line.strip()) > 30 and not line.strip().startswith("#") and line.strip() not in shown
    ]
    assert code and not [line for line in code if line in text]  # ... the test's code is not


def test_nbgrader_export_has_every_student(course):
    assert course["exported"].returncode == 0, course["exported"].stderr[-2000:]
    with open(course["path"] / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["assignment"] == "07_stable"]
    assert {row["student_id"] for row in rows} >= set(course["students"]["07_stable"])
    reference = next(row for row in rows if row["student_id"] == "reference")
    assert float(reference["score"]) == float(reference["max_score"]) > 0


def test_plain_nbgrader_autograde_runs_the_grade_cells_in_a_kernel(course, tmp_path):
    """The in-kernel path keeps working (its scores are grade_cell's, test_notebook.py): the seed's
    softmax scores some points, and there the forger's replaced `grade` wins (why INSTRUCTORS.md
    sends classes it does not trust to the kit's path)."""
    plain = shutil.copytree(course["path"], tmp_path / "course", ignore=shutil.ignore_patterns("autograded", "kata"))
    for student in ("m-seed_unstable_softmax", "forger"):
        done = nbgrader(plain, "autograde", "07_stable", f"--student={student}", "--force")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    book = gradebook(plain, "07_stable", ["m-seed_unstable_softmax", "forger"])
    assert 0 < sum(book["m-seed_unstable_softmax"].values()) < sum(course["points"]["07_stable"])
    assert sum(book["forger"].values()) == sum(course["points"]["07_stable"])


def test_the_instructors_guide_shows_what_the_command_and_a_grade_cell_print(course):
    """docs/INSTRUCTORS.md's samples are this course's: a grade cell of the seed's softmax, as the
    kit wrote it, and rows of the command's table."""
    guide = (ROOT / "docs/INSTRUCTORS.md").read_text(encoding="utf-8")
    cell = _between(guide, "grade-cell-output")
    assert cell + "\n" in outputs(course, "m-seed_unstable_softmax")
    rows = [" ".join(line.split()) for line in course["out"]["07_stable"].splitlines()]
    for line in _between(guide, "autograde-table").splitlines():
        assert " ".join(line.split()) in rows, line


def _between(text: str, marker: str) -> str:
    """The fenced block between <!-- marker --> and <!-- /marker -->."""
    block = text.split(f"<!-- {marker} -->\n```\n", 1)[1].split("\n```\n<!-- /" + marker, 1)[0]
    return block


def test_release_fetch_submit_collect_through_an_exchange(tmp_path):
    """nbgrader's own round trip works with the config `kata nbgrader build --exchange` writes."""
    course, exchange, home = tmp_path / "course", tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    build = [
        "--root",
        str(ROOT),
        "nbgrader",
        "build",
        str(course),
        "--lessons",
        "07_stable",
        "--exchange",
        str(exchange),
    ]
    assert main(build) == 0
    for step in (("generate_assignment", "07_stable"), ("release_assignment", "07_stable")):
        done = nbgrader(course, *step)
        assert done.returncode == 0, done.stdout + done.stderr
    student = ["--course", "kata", f"--Exchange.root={exchange}"]
    for step in (("fetch_assignment", "07_stable", *student), ("submit", "07_stable", *student)):
        done = nbgrader(home, *step)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (home / "07_stable" / "07_stable.ipynb").is_file()
    done = nbgrader(course, "collect", "07_stable")
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((course / "submitted").glob("*/07_stable/07_stable.ipynb"))


# --- the course ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course after build, generate_assignment, every submission, kata nbgrader autograde (both
    lessons), generate_feedback and export; with formgrader's scores, kata grade's records and
    pytest's runs of the same files."""
    path = tmp_path_factory.mktemp("course")
    assert main(["--root", str(ROOT), "nbgrader", "build", str(path), "--lessons", *LESSONS]) == 0
    students: dict[str, list[str]] = {}
    for lesson, file in LESSONS.items():
        done = nbgrader(path, "generate_assignment", lesson)
        assert done.returncode == 0, done.stdout + done.stderr
        answer = learners_answer(lesson, file)
        files = {
            f"m-{m.stem}": answer + "\n\n" + m.read_text() for m in (ROOT / "tests" / lesson / "mutants").glob("*.py")
        }
        if lesson == "07_stable":
            files.update(learners(answer))
        for student, text in files.items():
            folder = tmp_path_factory.mktemp(student) / "exercises" / lesson
            folder.mkdir(parents=True)
            (folder / file).write_text(text, encoding="utf-8")
            assert main(["--root", str(ROOT), "nbgrader", "from-module", str(path), student, str(folder)]) == 0
        hand_in(path, lesson, "reference", filled(path, lesson))
        students[lesson] = sorted([*files, "reference"])
    release = nbformat.read(str(path / "release/07_stable/07_stable.ipynb"), as_version=4)
    hand_in(path, "07_stable", "untouched", release)
    forger = nbformat.read(str(path / "submitted/m-seed_unstable_softmax/07_stable/07_stable.ipynb"), as_version=4)
    first_grade_cell = next(i for i, c in enumerate(forger.cells) if c.metadata.get("nbgrader", {}).get("grade"))
    forger.cells.insert(first_grade_cell, nbformat.v4.new_code_cell(FORGERY))
    hand_in(path, "07_stable", "forger", forger)
    students["07_stable"] = sorted([*students["07_stable"], "untouched", "forger"])

    magic = filled(path, "07_stable")  # a learner's IPython command in the setup cell
    setup = next(c for c in magic.cells if c.cell_type == "code" and "nbgrader" not in c.metadata)
    setup.source = "%load_ext autoreload\n" + setup.source
    hand_in(path, "07_stable", "magic", magic)
    hand_in(path, "07_stable", "late", filled(path, "07_stable"))  # after the due date, late work scoring 0
    (path / "submitted/late/07_stable/timestamp.txt").write_text("2099-01-01 00:00:00 UTC", encoding="utf-8")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path / 'gradebook.db'}") as book:
        book.update_or_create_assignment("07_stable", duedate="2098-01-01 00:00:00 UTC")
    with open(path / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    copied = nbformat.read(str(path / "source" / "07_stable" / "07_stable.ipynb"), as_version=4)
    hand_in(path, "07_stable", "copied", copied)  # the instructor's source notebook, answers and all
    students["07_stable"] = sorted([*students["07_stable"], "magic", "late", "copied"])
    unreadable = path / "submitted" / "unreadable" / "07_stable" / "07_stable.ipynb"
    unreadable.parent.mkdir(parents=True)
    unreadable.write_text("not a notebook", encoding="utf-8")
    linked = path / "submitted" / "linked" / "07_stable" / "07_stable.ipynb"  # the answers, by a link
    linked.parent.mkdir(parents=True)
    linked.symlink_to(path / "source" / "07_stable" / "07_stable.ipynb")
    config = (path / "nbgrader_config.py").read_bytes()
    out, status = {}, {}
    for lesson in LESSONS:
        done = subprocess.run(
            [sys.executable, "-m", "grader", "--root", str(ROOT), "nbgrader", "autograde", str(path), lesson, *OPTIONS],
            capture_output=True,
            text=True,
            timeout=600,
        )
        out[lesson], status[lesson] = done.stdout + done.stderr, done.returncode
    assert (path / "nbgrader_config.py").read_bytes() == config  # KitGrades is handed to nbgrader, not written
    named = [f"--student={s}" for s in ("reference", "m-seed_unstable_softmax", "untouched")]
    return {
        "path": path,
        "students": students,
        "status": status,
        "out": out,
        "feedback": nbgrader(path, "generate_feedback", "07_stable", *named[1:2]),
        "exported": nbgrader(path, "export"),
        "gradebook": {lesson: gradebook(path, lesson, names) for lesson, names in students.items()},
        "records": {
            lesson: {
                s: json.loads((path / "kata" / lesson / "results" / "students" / f"{s}.json").read_text())
                for s in names
            }
            for lesson, names in students.items()
        },
        "pytest": pytest_runs(path, students),
        "cells": {lesson: grade_cells(path, lesson) for lesson in LESSONS},
        "points": {lesson: [points for _, points in grade_cells(path, lesson).values()] for lesson in LESSONS},
    }


def learners_answer(lesson: str, file: str) -> str:
    """The kit's answer as a learner's file has it: without the answer markers (### BEGIN
    SOLUTION), which only the instructor's source notebook holds (the kit flags a notebook
    whose code has them)."""
    text = (ROOT / "solutions" / lesson / file).read_text(encoding="utf-8")
    return "\n".join(
        line for line in text.split("\n") if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
    )


def learners(answer: str) -> dict[str, str]:
    """The .py files of learners whose code does what learners' code does."""
    signature = "def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:\n"
    noisy = answer.replace("import torch\n", "import sys\nimport warnings\n\nimport torch\n", 1).replace(
        signature,
        signature + '    warnings.warn("a warning from correct code")\n    print("noise", file=sys.stderr)\n',
        1,
    )
    loops = "".join(
        f"\n\ndef {name}(*args, **kwargs):\n    while True:\n        pass\n"
        for name in ("stable_softmax", "logsumexp", "softmax_cross_entropy")
    )
    exits = "\n\nimport os\n\n\ndef softmax_cross_entropy(*args, **kwargs):\n    os._exit(0)\n"
    return {
        "m-seed_unstable_softmax": answer + "\n\n" + SEED.read_text(encoding="utf-8"),
        "noisy": noisy + "\nwarnings.warn('and one when the module runs')\n",
        "loops": answer + loops,
        "exits": answer + exits,
    }


def filled(course: Path, lesson: str):
    """The release notebook with each answer cell as the source notebook has it: a learner who
    worked in the notebook."""
    release = nbformat.read(str(course / "release" / lesson / f"{lesson}.ipynb"), as_version=4)
    source = nbformat.read(str(course / "source" / lesson / f"{lesson}.ipynb"), as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if "nbgrader" in c.metadata}
    for cell in release.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            text = answers[cell.metadata["nbgrader"]["grade_id"]]
            cell.source = "\n".join(line for line in text.split("\n") if "### " not in line)
    return release


def hand_in(course: Path, lesson: str, student: str, nb) -> None:
    folder = course / "submitted" / student / lesson
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(folder / f"{lesson}.ipynb"))


def grade_cells(course: Path, lesson: str) -> dict[str, tuple[str, float]]:
    """Each grade cell of the source notebook: grade_id -> (its tests, its points)."""
    source = nbformat.read(str(course / "source" / lesson / f"{lesson}.ipynb"), as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: (
            re.search(r'grade\("\w+", "(\w+)"', c.source)[1],
            float(c.metadata["nbgrader"]["points"]),
        )
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def gradebook(course: Path, lesson: str, students: list[str]) -> dict[str, dict[str, float]]:
    """formgrader's database: each student's score of each grade cell."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        return {
            student: {
                grade.name: grade.score for grade in book.find_submission_notebook(lesson, lesson, student).grades
            }
            for student in students
        }


# The lesson's tests on one file, `pytest tests/LESSON --impl-file=FILE`, forked as kata verify forks.
PYTEST_RUNS = """
import json, sys
from pathlib import Path
from grader.authoring.verify import Run, execute
from grader.lessons import get_lesson

class FileRun(Run):
    def args(self):
        return [f"tests/{self.lesson.name}", "-m", "not speed and not cuda", f"--impl-file={self.mutant}"]

root, wanted = Path(sys.argv[1]), json.loads(sys.argv[2])
runs = [FileRun(get_lesson(root, lesson), kind="file", mutant=Path(path)) for lesson, path in wanted]
found = {}
execute(runs, jobs=2, on_done=lambda run: found.__setitem__(str(run.mutant), run.result.to_json()))
print(json.dumps(found))
"""


def pytest_runs(course: Path, students: dict[str, list[str]]) -> dict[str, dict[str, RunResult]]:
    """pytest's run of each file kata grade graded, by lesson and student."""
    files = {
        (lesson, student): course / "kata" / lesson / "class" / student / "exercises" / lesson / LESSONS[lesson]
        for lesson, names in students.items()
        for student in names
        if student not in APART
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PYTEST_RUNS,
            str(ROOT),
            json.dumps([[lesson, str(p)] for (lesson, _), p in files.items()]),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    runs: dict[str, dict[str, RunResult]] = {lesson: {} for lesson in students}
    for (lesson, student), file in files.items():
        if student not in APART:
            runs[lesson][student] = RunResult.from_json(found[str(file)])
    return runs


def definitions(text: str) -> dict[str, str]:
    """A module's final definitions: each name's last def, class or assignment, and its imports."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = ast.dump(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found[ast.dump(node)] = "import"
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for target in node.targets:
                found[target.id] = ast.dump(node.value)
    return found


def outputs(course: dict, student: str) -> str:
    nb = nbformat.read(str(course["path"] / "autograded" / student / "07_stable" / "07_stable.ipynb"), as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """nbgrader's own command, with this Python's bin first on PATH (nbgrader runs alembic from there)."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True, timeout=600
    )


def _assigns(node: ast.stmt, name: str) -> bool:
    return isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]


# --- the lessons' hostile corpus, handed in as notebooks ---------------------------------------------


@pytest.mark.parametrize("name", ATTACKS)
def test_each_attack_on_a_lesson_scores_as_in_kata_grade(attacks_course, name):
    """Each attack of hostile/lessons/, its lesson's module whole in the notebook's first answer
    cell (the others emptied), graded by `kata nbgrader autograde` with kata grade's default
    options: the lesson's points and held points its docstring expects of `kata grade`, the same
    flags, and formgrader's score is those points."""
    lesson, _, student = name.partition("/")
    expected, record = attack(name), attacks_course["records"][name]
    (entry,) = (e for e in record["lessons"] if e["lesson"] == lesson)
    assert (entry["points"], entry.get("held", 0)) == expected["expect"], (entry, record["flags"])
    for words in expected["flags"]:
        assert any(words in f for f in record["flags"] if "read the code" in f), (words, record["flags"])
    assert sum(attacks_course["gradebook"][name].values()) == entry["points"]


@pytest.fixture(scope="module")
def attacks_course(tmp_path_factory):
    path = tmp_path_factory.mktemp("attacks")
    lessons = sorted({name.partition("/")[0] for name in ATTACKS})
    assert main(["--root", str(ROOT), "nbgrader", "build", str(path), "--lessons", *lessons]) == 0
    for lesson in lessons:
        done = nbgrader(path, "generate_assignment", lesson)
        assert done.returncode == 0, done.stdout + done.stderr
    for name in ATTACKS:
        lesson, _, student = name.partition("/")
        (file,) = (f for f in (ROOT / "solutions" / lesson).glob("*.py") if f.name != "__init__.py")
        text = (HOSTILE / "lessons" / f"{name}.py").read_text(encoding="utf-8")
        after = re.search(r"^after: (\S+)$", text, re.M)  # a mutant it is written after
        module = "\n\n".join(
            [learners_answer(lesson, file.name), *([(ROOT / after[1]).read_text()] if after else []), text]
        )
        nb = nbformat.read(str(path / "release" / lesson / f"{lesson}.ipynb"), as_version=4)
        answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        for cell in answers:
            cell.source = ""
        answers[0].source = module
        hand_in(path, lesson, student, nb)
    for lesson in lessons:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "--root",
                str(ROOT),
                "nbgrader",
                "autograde",
                str(path),
                lesson,
                "--jobs",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    records, book = {}, {}
    for name in ATTACKS:
        lesson, _, student = name.partition("/")
        records[name] = json.loads((path / "kata" / lesson / "results" / "students" / f"{student}.json").read_text())
        book[name] = gradebook(path, lesson, [student])[student]
    return {"records": records, "gradebook": book}
