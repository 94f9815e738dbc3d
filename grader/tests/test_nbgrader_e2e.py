"""End to end with real nbgrader and real kernels: build a course from lesson 07, generate the
student version, grade six submissions, write feedback and export. About 2-3 minutes on 2 cores;
deselect with -m "not nbgrader"."""

from __future__ import annotations

import ast
import csv
import html
import os
import re
import subprocess
import sys

import pytest

from grader.cli import main
from grader.notebooks.course import environment
from grader.runs import run_pytest
from grader.tests.kits import ROOT

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

pytestmark = [pytest.mark.nbgrader, pytest.mark.timeout(900)]  # the whole course is built once, in a fixture

LESSON = "07_stable"
NOTEBOOK = f"{LESSON}.ipynb"
NAIVE = ROOT / f"tests/{LESSON}/mutants/seed_unstable_softmax.py"  # the seed's exp(x) / sum(exp(x))
# A looping submission is stopped per test after TEST_TIMEOUT s and as a whole after RUN_TIMEOUT s.
TEST_TIMEOUT, RUN_TIMEOUT = 5, 45


def _nbgrader(course, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _learner_files(tmp) -> dict[str, str]:
    """Each student's stable.py, as a learner working in .py files would hand it in."""
    reference = (ROOT / f"solutions/{LESSON}/stable.py").read_text(encoding="utf-8")
    signature = "def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:\n"
    noisy = reference.replace("import torch\n", "import sys\nimport warnings\n\nimport torch\n", 1).replace(
        signature,
        signature + '    warnings.warn("a warning from correct code")\n    print("noise", file=sys.stderr)\n',
        1,
    )
    loops = "".join(
        f"\n\ndef {name}(*args, **kwargs):\n    while True:\n        pass\n"
        for name in ("stable_softmax", "logsumexp", "softmax_cross_entropy")
    )
    return {
        "naive": reference + "\n\n" + NAIVE.read_text(encoding="utf-8").split("import torch\n", 1)[1],
        "noisy": noisy + "\nwarnings.warn('and one when the module runs')\n",
        "loops": reference + loops,
        "exits": reference.replace("import torch\n", "import os\n\nimport torch\n", 1)
        + "\n\ndef _setup():\n    os._exit(0)\n\n\n_setup()\n",
    }


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course after build, generate_assignment, submissions, autograde, feedback and export."""
    course = tmp_path_factory.mktemp("course")
    saved = {name: os.environ.get(name) for name in ("KATA_TEST_TIMEOUT", "KATA_RUN_TIMEOUT")}
    os.environ.update(KATA_TEST_TIMEOUT=str(TEST_TIMEOUT), KATA_RUN_TIMEOUT=str(RUN_TIMEOUT))
    try:
        assert main(["--root", str(ROOT), "nbgrader", "build", str(course), "--lessons", LESSON]) == 0
        generated = _nbgrader(course, "generate_assignment", LESSON)
        assert generated.returncode == 0, generated.stdout + generated.stderr
        release = nbformat.read(str(course / "release" / LESSON / NOTEBOOK), as_version=4)
        source = nbformat.read(str(course / "source" / LESSON / NOTEBOOK), as_version=4)

        # Two students work in the notebook: one fills in the reference, one hands it in untouched.
        answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if "nbgrader" in c.metadata}
        filled = nbformat.from_dict(release)
        for cell in filled.cells:
            if cell.metadata.get("nbgrader", {}).get("solution"):
                cell.source = "\n".join(
                    line for line in answers[cell.metadata["nbgrader"]["grade_id"]].split("\n") if "### " not in line
                )
        for student, nb in (("reference", filled), ("untouched", release)):
            (course / "submitted" / student / LESSON).mkdir(parents=True)
            nbformat.write(nb, str(course / "submitted" / student / LESSON / NOTEBOOK))
        # Four work in .py files.
        for student, text in _learner_files(course).items():
            folder = tmp_path_factory.mktemp(student) / "exercises" / LESSON
            folder.mkdir(parents=True)
            (folder / "stable.py").write_text(text, encoding="utf-8")
            assert main(["--root", str(ROOT), "nbgrader", "from-module", str(course), student, str(folder.parent)]) == 0

        status = main(["--root", str(ROOT), "nbgrader", "autograde", str(course), LESSON, "--jobs", "2"])
        feedback = _nbgrader(course, "generate_feedback", LESSON)
        exported = _nbgrader(course, "export")
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    return {"path": course, "status": status, "feedback": feedback, "exported": exported}


def _rows(path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {row.get("student") or row["student_id"]: row for row in csv.DictReader(handle)}


def _points_passing(args: list[str]) -> tuple[float, float]:
    """(points passed, points in all) of lesson 07's tests run the pytest way."""
    run = run_pytest(ROOT, [f"tests/{LESSON}", "-m", "not cuda", *args])
    assert run.collected and run.exitstatus is not None, run.output[-2000:]
    return sum(t.points for t in run.tests), sum(t.max_points for t in run.collected)


def test_scores_are_exact_and_agree_with_the_pytest_path(course):
    _, total = _points_passing(["--impl=solutions"])
    naive, _ = _points_passing([f"--mutant={NAIVE}"])
    assert 0 < naive < total
    rows = _rows(course["path"] / f"grades-{LESSON}.csv")
    scores = {student: (row["status"], row["score"], row["max_score"]) for student, row in rows.items()}
    assert scores == {
        "reference": ("graded", str(total), str(total)),
        "untouched": ("graded", "0.0", str(total)),
        "naive": ("graded", str(naive), str(total)),
        "noisy": ("graded", str(total), str(total)),  # warnings and stderr in correct code cost nothing
        "loops": ("graded", "0.0", str(total)),
        "exits": ("failed", "", str(total)),  # named, not a silent 0
    }
    assert "Kernel died" in rows["exits"]["problem"]
    assert course["status"] == 1  # one submission could not be graded


def test_a_looping_submission_is_stopped_at_its_time_limit(course):
    # Its loops end at the test's limit, each named with its cell: the course's grading ended (the
    # fixture returned) and gave it 0 (test_scores_are_exact_and_agree_with_the_pytest_path).
    nb = nbformat.read(str(course["path"] / "autograded/loops" / LESSON / NOTEBOOK), as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert f"did not finish in {TEST_TIMEOUT:.1f} s; it was running stable_softmax (cell [" in text


def test_grade_cells_print_reasons_and_never_write_stderr(course):
    for student in ("reference", "untouched", "naive", "noisy", "loops"):
        nb = nbformat.read(str(course["path"] / "autograded" / student / LESSON / NOTEBOOK), as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                kinds = [(o.output_type, o.get("name")) for o in cell.outputs]
                assert ("stream", "stderr") not in kinds and ("error", None) not in kinds, (student, kinds)
                assert kinds[-1] == ("execute_result", None)
    untouched = nbformat.read(str(course["path"] / "autograded/untouched" / LESSON / NOTEBOOK), as_version=4)
    text = "".join(o.get("text", "") for c in untouched.cells for o in c.get("outputs", []))
    assert re.search(r"TODO  test_\w+: stable_softmax \(cell \[\d+\], line \d+\) is not implemented yet", text)


def test_feedback_shows_no_hidden_test_code(course):
    assert course["feedback"].returncode == 0, course["feedback"].stderr[-2000:]
    page = (course["path"] / "feedback/naive" / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "FAIL  test_softmax_of_large_logits" in text  # the reason is there ...
    test_source = (ROOT / f"tests/{LESSON}/test_stable.py").read_text(encoding="utf-8")
    # The code, not the docstring nor the contract table (CONTRACT): they name the tests, as the feedback does.
    tree, lines = ast.parse(test_source), test_source.splitlines()
    prose = {
        n
        for node in tree.body
        if isinstance(node, ast.Expr) or _assigns(node, "CONTRACT")
        for n in range(node.lineno - 1, node.end_lineno)
    }
    body = [line for number, line in enumerate(lines) if number not in prose]
    shown = (ROOT / f"solutions/{LESSON}/stable.py").read_text(encoding="utf-8")  # the lesson text's examples
    code = [
        line.strip()
        for line in body
        if len(line.strip()) > 30 and not line.strip().startswith("#") and line.strip() not in shown
    ]
    assert code and not [line for line in code if line in text]  # ... the test's code is not


def _assigns(node: ast.stmt, name: str) -> bool:
    return isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]


def test_nbgrader_export_has_every_student(course):
    assert course["exported"].returncode == 0, course["exported"].stderr[-2000:]
    rows = _rows(course["path"] / "grades.csv")
    assert set(rows) == {"reference", "untouched", "naive", "noisy", "loops", "exits"}
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) > 0


def test_release_fetch_submit_collect_through_an_exchange(tmp_path):
    """nbgrader's own round trip works with the config `kata nbgrader build --exchange` writes."""
    course, exchange, home = tmp_path / "course", tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    build = ["--root", str(ROOT), "nbgrader", "build", str(course), "--lessons", LESSON, "--exchange", str(exchange)]
    assert main(build) == 0
    for step in (("generate_assignment", LESSON), ("release_assignment", LESSON)):
        done = _nbgrader(course, *step)
        assert done.returncode == 0, done.stdout + done.stderr
    student = ["--course", "kata", f"--Exchange.root={exchange}"]
    for step in (("fetch_assignment", LESSON, *student), ("submit", LESSON, *student)):
        done = _nbgrader(home, *step)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (home / LESSON / NOTEBOOK).is_file()
    done = _nbgrader(course, "collect", LESSON)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((course / "submitted").glob(f"*/{LESSON}/{NOTEBOOK}"))
