"""``kata gradescope``: the autograder zip, end to end in a simulated /autograder layout, against
correct, partial, broken, hostile and empty submissions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.tests.kits import ROOT, SOLUTION
from grader.tests.test_classgrade import HOSTILE, make_kit

# What a student hands in (file name -> text), and what Gradescope must show: (score, a word of
# the output). 98_demo's tests: test_add (1 point, public), test_add_negative (1), test_scale (2).
SUBMISSIONS = {
    "correct": ({"demo.py": SOLUTION}, 4.0, "98_demo: 4/4 points, done"),
    "partial": ({"work/demo.py": SOLUTION.replace("return a + b", "return a - b")}, 2.0, "in progress"),
    "broken": ({"demo.py": SOLUTION + "\n\ndef broken(:\n"}, 0.0, "SyntaxError"),
    "hostile": ({"demo.py": (HOSTILE / "copies_the_answers.py").read_text()}, 0.0, "98_demo: 0/4 points"),
    "empty": ({"notes.txt": "I ran out of time"}, 0.0, "Files taken:\n  (none)"),
}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zip built from a kit, unzipped where Gradescope puts it (AUTOGRADER/source)."""
    base = tmp_path_factory.mktemp("gradescope")
    kit = make_kit(base / "kit")
    for name in ("constraints.txt", "README.md"):  # (what setup.sh installs the kit with)
        shutil.copy(ROOT / name, kit / name)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "--root",
            str(kit),
            "gradescope",
            "build",
            str(base / "autograder.zip"),
            "--lessons",
            "98_demo",
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    with zipfile.ZipFile(base / "autograder.zip") as bundle:
        names = bundle.namelist()
        assert {"setup.sh", "run_autograder", "gradescope.json", "pyproject.toml", "constraints.txt"} <= set(names)
        assert "solutions/98_demo/demo.py" in names and "tests/98_demo/test_demo.py" in names
        assert not [n for n in names if "99_other" in n or n.startswith("grader/tests/") or "__pycache__" in n]
        assert bundle.getinfo("run_autograder").external_attr >> 16 & 0o111
        bundle.extractall(base / "autograder" / "source")
    return base / "autograder" / "source"


def test_setup_installs_torchs_cpu_wheel_then_the_kit_with_its_constraints(source: Path) -> None:
    setup = (source / "setup.sh").read_text()
    assert "--index-url https://download.pytorch.org/whl/cpu" in setup
    assert setup.index("whl/cpu") < setup.index("-c constraints.txt -e .")
    assert subprocess.run(["bash", "-n", str(source / "setup.sh")]).returncode == 0


@pytest.mark.parametrize("kind", SUBMISSIONS)
def test_run_autograder_grades_a_submission_as_kata_grade_does(source: Path, tmp_path: Path, kind: str) -> None:
    files, score, words = SUBMISSIONS[kind]
    autograder = tmp_path / "autograder"
    autograder.mkdir()
    (autograder / "source").symlink_to(source, target_is_directory=True)  # (one bundle for every submission)
    for name, text in files.items():
        (autograder / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (autograder / "submission" / name).write_text(text, encoding="utf-8")
    (autograder / "results").mkdir()
    proc = subprocess.run(
        ["bash", str(autograder / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        env={**os.environ, "KATA_AUTOGRADER": str(autograder), "PYTHON": sys.executable},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    assert results["score"] == score, results
    assert words in results["output"], results["output"]
    assert results["stdout_visibility"] == "hidden"
    tests = {t["name"]: t for t in results["tests"]}
    assert sorted(tests) == ["98_demo: test_add", "98_demo: test_add_negative", "98_demo: test_scale"]
    assert tests["98_demo: test_add"]["visibility"] == "visible"
    assert tests["98_demo: test_scale"]["visibility"] == "after_published"
    assert sum(t["max_score"] for t in tests.values()) == 4.0
    assert all(t["status"] in ("passed", "failed") and t["output"] for t in tests.values())


def test_a_held_test_shows_on_gradescope_as_held_with_no_score() -> None:
    """A pass held for a person (kata grade's verdict) scores nothing on Gradescope until the
    instructor adds it back, and says why."""
    from grader.grading.gradescope import gradescope_results
    from grader.learner.report import HELD

    record = {
        "points": 1.0,
        "max_points": 3.0,
        "lessons": [],
        "flags": ["98_demo: read the code: ..."],
        "tests": [
            {
                "name": "98_demo: test_add",
                "status": "pass",
                "points": 1.0,
                "max_points": 1.0,
                "public": True,
                "message": None,
            },
            {
                "name": "98_demo: test_scale",
                "status": "pass",
                "points": 0.0,
                "max_points": 2.0,
                "public": False,
                "message": HELD,
                "held": True,
            },
        ],
    }
    tests = gradescope_results(record, [])["tests"]
    assert [(t["score"], t["status"], t["output"]) for t in tests] == [(1.0, "passed", "passed"), (0.0, "passed", HELD)]
