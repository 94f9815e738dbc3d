"""``kata grade``: a class of hostile submissions graded in one run, shards and merging, resuming,
the results channel's protocol, verdicts, the class's tables, and the real lessons' reference
answers (never flagged)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from grader.files import remove_tree
from grader.grading.classtables import summary_table
from grader.grading.grade import parse_shard, parse_size
from grader.grading.guard import Guard
from grader.grading.kitfiles import KitFiles
from grader.grading.pipe import PipeWriter
from grader.grading.protocol import Reader, collected_event, finish_event, overhead_event, result_event
from grader.grading.sandbox import Limits, read_cut, why_ended
from grader.grading.verdict import judge
from grader.progress import Progress
from grader.results import Failure, Kind, Outcome, RunResult, State, TestInfo, TestResult
from grader.tests.kits import ROOT, SOLUTION, write_lesson

HOSTILE = Path(__file__).parent / "hostile"
CORPUS = sorted(
    p.name.removesuffix(".py") for p in HOSTILE.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "lessons")
)  # lessons: the lessons' corpus
EXPECT = re.compile(
    r'expect: points=(?P<points>\d+) state=(?P<state>[a-z ]+?)(?: problem=(?P<problem>[^"\n]+?))?(?:"""|$)', re.M
)
IN_PROCESS = re.compile(
    EXPECT.pattern.replace("expect:", "^in-process:", 1), re.M
)  # with --in-process, where it differs

# 98_demo's and 99_other's tests in this class: 4 points, one compared with torch's assert_close.
CLASS_TESTS = """\
import pytest
import torch


@pytest.mark.public
def test_add(lesson):
    assert lesson.add(2, 3) == 5


def test_add_negative(lesson):
    assert lesson.add(-2, 3) == 1


@pytest.mark.points(2)
def test_scale(lesson):
    torch.testing.assert_close(lesson.scale(torch.tensor([1.0, 2.0])), torch.tensor([2.0, 4.0]))
"""

LIMITS = ["--timeout", "12", "--test-timeout", "3", "--memory", "1G", "--max-file", "8M"]
# The first test to ask for a graded class waits for its whole grading (about 30 s alone, twice
# that on a loaded machine): more than the kit's 60 s per test can allow.
pytestmark = pytest.mark.timeout(600)


def make_kit(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(ROOT / name, root / name)
    for tree in ("exercises", "solutions"):
        (root / tree).mkdir()
        (root / tree / "__init__.py").write_text("")
    for lesson in ("98_demo", "99_other"):
        write_lesson(root, lesson, tests=CLASS_TESTS)
    return root


def grade_command(kit: Path, *args: str) -> list[str]:
    """`kata grade ARGS` on `kit`, as a command line."""
    return [sys.executable, "-m", "grader", "--root", str(kit), "grade", *args]


def grade(kit: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        grade_command(kit, *args),
        capture_output=True,
        text=True,
        timeout=600,
    )


def expectation(name: str, in_process: bool = False) -> dict:
    path = HOSTILE / f"{name}.py" if (HOSTILE / f"{name}.py").is_file() else HOSTILE / name / "demo.py"
    text = path.read_text(encoding="utf-8")
    match = EXPECT.search(text)
    assert match, f"{path} has no 'expect: points=P state=S' line"
    return ((in_process and IN_PROCESS.search(text)) or match).groupdict()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The hostile class, graded once: every corpus entry, a student linking to the solution, one
    without exercises/. Every student's 99_other is correct."""
    return grade_the_corpus(tmp_path_factory.mktemp("class"))


@pytest.fixture(scope="module")
def graded_in_process(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same class graded with --in-process: the checks in the student's process."""
    return grade_the_corpus(tmp_path_factory.mktemp("class"), "--in-process")


def grade_the_corpus(base: Path, *options: str) -> dict:
    kit = make_kit(base / "kit")
    class_dir, marker = base / "class", unique_sleep()
    server, heard = listening()
    for name in CORPUS:
        lesson = class_dir / name / "exercises" / "98_demo"
        if (HOSTILE / name).is_dir():
            shutil.copytree(HOSTILE / name, lesson)
        else:
            lesson.mkdir(parents=True)
            text = (
                (HOSTILE / f"{name}.py")
                .read_text(encoding="utf-8")
                .replace("@MARKER@", marker)
                .replace("@PORT@", str(server.getsockname()[1]))
            )
            (lesson / "demo.py").write_text(text, encoding="utf-8")
    linked = class_dir / "symlink_to_solution" / "exercises" / "98_demo"
    linked.mkdir(parents=True)
    (linked / "demo.py").symlink_to(kit / "solutions" / "98_demo" / "demo.py")
    (class_dir / "no_exercises").mkdir()
    fifo = class_dir / "fifo_submission" / "exercises" / "98_demo"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "demo.py")  # a tar hand-in can carry one: reading it would block forever
    for student in class_dir.iterdir():
        if (student / "exercises").is_dir():
            (student / "exercises" / "99_other").mkdir()
            (student / "exercises" / "99_other" / "demo.py").write_text(SOLUTION)
    out = base / "results"
    before = {"kit": on_disk(kit), "grader": on_disk(ROOT / "grader"), "class": on_disk(class_dir)}
    try:
        proc = grade(kit, str(class_dir), "--out", str(out), "--jobs", "2", *LIMITS, *options)
    finally:
        server.close()
    after = {"kit": on_disk(kit), "grader": on_disk(ROOT / "grader"), "class": on_disk(class_dir)}
    students = {p.stem: json.loads(p.read_text()) for p in (out / "students").glob("*.json")}
    return {
        "kit": kit,
        "class": class_dir,
        "out": out,
        "proc": proc,
        "students": students,
        "marker": marker,
        "heard": heard,
        "before": before,
        "after": after,
    }


def on_disk(root: Path) -> dict[str, str]:
    """Every entry under `root` (links not followed; the interpreter's bytecode caches aside):
    a file by its bytes' digest, a link by its target, a folder or anything else by its kind."""
    found = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts and not path.name.startswith("kata_"):
            continue
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_file():  # (not a FIFO: reading one would block)
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "folder" if path.is_dir() else "other"
    return found


def listening() -> tuple[socket.socket, list[bytes]]:
    """A server on this machine's loopback, and what it hears (a student calling home)."""
    server = socket.create_server(("127.0.0.1", 0))
    heard: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                heard.append(connection.recv(1024) or b"(connected)")

    threading.Thread(target=serve, daemon=True).start()
    return server, heard


@pytest.mark.parametrize("name", CORPUS)
def test_each_hostile_submission_gets_its_expected_score(graded: dict, name: str) -> None:
    assert_expected_score(graded, name, expectation(name))


@pytest.mark.parametrize("name", CORPUS)
def test_each_hostile_submission_gets_its_expected_score_with_the_checks_inside(
    graded_in_process: dict, name: str
) -> None:
    assert_expected_score(graded_in_process, name, expectation(name, in_process=True))


def assert_expected_score(graded: dict, name: str, expected: dict) -> None:
    record = graded["students"].get(name)
    assert record, f"no result for {name}:\n{graded['proc'].stderr}"
    lessons = {entry["lesson"]: entry for entry in record["lessons"]}
    demo = lessons["98_demo"]
    assert (demo["points"], demo["state"]) == (float(expected["points"]), expected["state"]), explain(record, demo)
    if expected["problem"]:
        assert expected["problem"] in (demo["problem"] or ""), demo
    # Whatever 98_demo did, the other lesson was graded as usual.
    assert (lessons["99_other"]["points"], lessons["99_other"]["state"]) == (4.0, "done"), lessons["99_other"]


def explain(record: dict, lesson: dict) -> str:
    """A lesson's record in full, and its tests' messages: what a failure here needs to be read
    (pytest would cut the record short)."""
    tests = [
        f"  {t['name']}: {t['status']}: {(t['message'] or '')[:300]}"
        for t in record["tests"]
        if t["lesson"] == lesson["lesson"]
    ]
    return "\n".join([json.dumps(lesson, indent=1), *tests])


def test_an_error_from_the_codes_process_shows_no_line_of_a_file_it_cannot_see(graded: dict) -> None:
    """names_files_it_cannot_see: the frames its errors' records name in the kit's answer and a
    classmate's file are left out by the tests' process, which alone can read them."""
    record = json.dumps(graded["students"]["names_files_it_cannot_see"])
    assert "BEGIN SOLUTION" not in record and "a + b" not in record, record


def test_the_codes_process_reads_no_hidden_test_and_no_message_carries_one(
    graded: dict, graded_in_process: dict
) -> None:
    """reads_the_hidden_tests puts whatever it read of tests/98_demo/ in its messages, flattened
    to one line: with the checks apart it read nothing (the control: with --in-process, where the
    tests must run in its process, the hidden test_add_negative does come back; a public test's
    code is in every record, by design, as lines of its own)."""
    assert "def test_add_negative(lesson): assert" not in json.dumps(graded["students"]["reads_the_hidden_tests"])
    assert "def test_add_negative(lesson): assert" in json.dumps(
        graded_in_process["students"]["reads_the_hidden_tests"]
    )


def test_a_link_to_the_solution_is_not_taken(graded: dict) -> None:
    record = graded["students"]["symlink_to_solution"]
    demo = next(entry for entry in record["lessons"] if entry["lesson"] == "98_demo")
    assert (demo["points"], demo["state"]) == (0.0, "not started")
    assert record["ignored"] == ["exercises/98_demo/demo.py (a symbolic link)"]


def test_a_fifo_handed_in_is_not_read(graded: dict) -> None:
    record = graded["students"]["fifo_submission"]
    assert record["ignored"] == ["exercises/98_demo/demo.py (not a regular file)"]


def test_no_run_writes_a_line_or_an_escape_into_the_summary(graded: dict) -> None:
    summary = (graded["out"] / "summary.txt").read_text()
    assert "\x1b" not in graded["proc"].stdout and "\x07" not in summary
    flagged = summary.split("flagged (look at these by hand", 1)[1].splitlines()[1:]
    for line in flagged:
        if line.startswith("  "):
            assert line.split(":")[0].strip() in graded["students"], line
    assert not any(line.startswith("  correct:") for line in flagged), summary


def test_a_student_without_exercises_is_named_and_the_rest_graded(graded: dict) -> None:
    proc = graded["proc"]
    assert proc.returncode == 1, proc.stderr
    assert "FAILED to grade no_exercises: no exercises/ folder" in proc.stderr
    assert graded["students"]["no_exercises"]["failed"].startswith("no exercises/ folder")
    assert len(graded["students"]) == len(CORPUS) + 3


def unique_sleep() -> str:
    """A `sleep` argument no other process on the machine has: it marks a student's process,
    which the host sees under a PID the run never knew."""
    return f"{600 + os.getpid() % 1000}.{time.time_ns() % 10**9:09d}"


def running(marker: str) -> list[int]:
    """The live processes on this machine whose command line holds `marker`, by PID as we see it."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (
                marker.encode() in (entry / "cmdline").read_bytes()
                and "zombie" not in (entry / "status").read_text().lower()
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("mode", ["graded", "graded_in_process"])
def test_no_process_outlives_its_run(mode: str, request: pytest.FixtureRequest) -> None:
    graded = request.getfixturevalue(mode)
    assert not running(graded["marker"]), "the stray process a student started is still running"


@pytest.mark.parametrize("mode", ["graded", "graded_in_process"])
def test_a_run_reaches_neither_the_network_nor_the_kit(mode: str, request: pytest.FixtureRequest) -> None:
    graded = request.getfixturevalue(mode)
    for what in ("kit", "grader", "class"):  # byte for byte, the grader's own bytecode caches aside
        assert graded["after"][what] == graded["before"][what], what
    assert graded["heard"] == [], "a student's run reached a server on the loopback"
    planted = list((ROOT / "grader").rglob("kata_planted*"))
    assert not planted, f"a student's run wrote into the kit: {planted}"
    assert (graded["out"] / "students" / "rewrites_the_results.json").is_file()
    assert "isolation: Linux namespaces (user, mount, PID, network, IPC, UTS)" in graded["proc"].stdout
    assert "isolation: Linux namespaces" in graded["proc"].stderr  # said before the grading starts


def test_the_class_tables(graded_in_process: dict) -> None:
    """(Graded --in-process, where the tamper checks flag what they catch.)"""
    graded = graded_in_process
    out = graded["out"]
    rows = {row["student"]: row for row in csv.DictReader((out / "class.csv").open())}
    assert set(rows) == set(graded["students"])
    assert (
        rows["correct"]["98_demo"] == "4" and rows["correct"]["total"] == "8" and rows["correct"]["max_points"] == "8"
    )
    assert "tampering detected" in rows["patches_pytest"]["flags"]
    assert rows["no_exercises"]["flags"].startswith("failed to grade")
    summary = (out / "summary.txt").read_text()
    assert summary in graded["proc"].stdout
    assert re.search(r"^correct\s+4\s+4\s+8$", summary, re.M), summary
    assert "patches_assert_close: 98_demo: tampering detected: torch.testing.assert_close was replaced" in summary
    assert "ignores_alarm: 98_demo: the run stopped after 12 s" in summary
    log = (out / "logs" / "floods_output" / "98_demo.txt").read_text()
    assert len(log) < 70_000 and "bytes of output cut" in log


def test_hidden_tests_keep_their_code_out_of_the_results(graded: dict) -> None:
    tests = {t["name"]: t for t in graded["students"]["correct"]["tests"]}
    assert "def test_add(lesson)" in tests["98_demo: test_add"]["test_code"]  # public
    assert tests["98_demo: test_scale"]["test_code"] == ""  # hidden


def test_a_file_that_does_not_compile_fails_each_test_as_its_tests_would_without_running_them(
    graded: dict, tmp_path: Path
) -> None:
    """The run reports every test at once (grader.grading.runner: no session, no code process),
    with what the tests themselves report on that file, as a learner's run shows."""
    from grader.runs import pytest_args, run_pytest

    kit = shutil.copytree(graded["kit"], tmp_path / "kit")
    shutil.copy(HOSTILE / "syntax_error.py", kit / "exercises" / "98_demo" / "demo.py")
    learner = run_pytest(kit, pytest_args("exercises/98_demo"))
    assert [t.outcome for t in learner.tests] == [Outcome.BROKEN] * 3
    record = graded["students"]["syntax_error"]
    graded_tests = [t for t in record["tests"] if t["lesson"] == "98_demo"]
    assert [t["message"] for t in graded_tests] == [t.message for t in learner.tests]
    assert {t["status"] for t in graded_tests} == {"error"}
    log = (graded["out"] / "logs" / "syntax_error" / "98_demo.txt").read_text()
    assert "demo.py:4: SyntaxError" in log and "No test ran" in log


def test_a_failed_assert_reads_as_in_a_learners_run(graded: dict, tmp_path: Path) -> None:
    """The tests' asserts are rewritten as pytest rewrites them (class grading does it once, for
    every run: grader.forking.rewrite_ahead): each failure shows the assert and what its values
    were, as a learner's run with the code apart does."""
    from grader.runs import pytest_args, run_pytest

    kit = shutil.copytree(graded["kit"], tmp_path / "kit")
    # (its attack needs pytest in the code's process: apart, it is a plain wrong answer)
    shutil.copy(HOSTILE / "wraps_the_report_hook.py", kit / "exercises" / "98_demo" / "demo.py")
    learner = run_pytest(kit, pytest_args("exercises/98_demo", "--kata-remote"))
    record = graded["students"]["wraps_the_report_hook"]
    graded_tests = {t["name"]: t for t in record["tests"] if t["lesson"] == "98_demo"}
    assert len(learner.tests) == len(graded_tests) == 3
    for test in learner.tests:
        message = graded_tests["98_demo: " + test.nodeid.rpartition("::")[2]]["message"]
        # (the assert and its values; the lines after name the module's file: each run's own copy)
        assert message.splitlines()[:2] == test.message.splitlines()[:2], (message, test.message)
    assert "AssertionError: assert 0 == 5" in graded_tests["98_demo: test_add"]["message"]
    assert "+  where 0 = " in graded_tests["98_demo: test_add"]["message"]


def test_a_second_run_grades_only_what_changed(graded: dict, tmp_path: Path) -> None:
    class_dir, out = tmp_path / "class", tmp_path / "results"
    for name in ("correct", "partial"):
        shutil.copytree(graded["class"] / name, class_dir / name)
    first = grade(graded["kit"], str(class_dir), "--out", str(out), "--jobs", "2", *LIMITS)
    assert first.returncode == 0, first.stderr
    stamp = json.loads((out / "students" / "correct.json").read_text())["graded_at"]
    (class_dir / "partial" / "exercises" / "98_demo" / "demo.py").write_text(SOLUTION)
    second = grade(graded["kit"], str(class_dir), "--out", str(out), "--jobs", "2", *LIMITS)
    assert second.returncode == 0, second.stderr
    assert "grading 1 student x 2 lessons, 2 at a time (1 unchanged since the last run, skipped)" in second.stderr
    assert json.loads((out / "students" / "correct.json").read_text())["graded_at"] == stamp
    assert json.loads((out / "students" / "partial.json").read_text())["points"] == 8


def test_shards_merge_into_one_class(graded: dict, tmp_path: Path) -> None:
    class_dir = tmp_path / "class"
    for name in ("correct", "partial", "syntax_error"):
        shutil.copytree(graded["class"] / name, class_dir / name)
    for i in (1, 2):
        proc = grade(graded["kit"], str(class_dir), "--out", str(tmp_path / f"r{i}"), "--shard", f"{i}/2", *LIMITS)
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.stem for p in (tmp_path / "r1" / "students").glob("*.json")) == ["correct", "syntax_error"]
    assert sorted(p.stem for p in (tmp_path / "r2" / "students").glob("*.json")) == ["partial"]
    merged = grade(graded["kit"], "--merge", str(tmp_path / "r1"), str(tmp_path / "r2"), "--out", str(tmp_path / "all"))
    assert merged.returncode == 0, merged.stderr
    rows = {row["student"]: row["total"] for row in csv.DictReader((tmp_path / "all" / "class.csv").open())}
    assert rows == {"correct": "8", "partial": "6", "syntax_error": "4"}


def test_every_reference_answer_of_the_real_lessons_is_graded_in_full(lessons_graded: dict) -> None:
    """The tamper checks must never flag a correct student: the kit's answers of every lesson, one
    student of the lessons' corpus class. Only a speed test may fail (the machine may be loaded),
    and no source read flags the timed calls: they run the ops a plain call of the same shape
    runs. (The grading first runs the answers to find the fallbacks, and stops on a kit error.)"""
    record = lessons_graded["reference"]
    unfinished = [entry for entry in record["lessons"] if entry["state"] != "done"]
    failed = [(t["name"], (t["message"] or "")[:400]) for t in record["tests"] if t["status"] not in ("pass", "skip")]
    slow = [t for t in record["tests"] if t["status"] == "fail" and t["speed"]]
    assert not unfinished and len(record["lessons"]) == 10 and len(failed) == len(slow), (unfinished, failed)
    assert record["points"] == record["max_points"] - sum(t["max_points"] for t in slow), record["points"]
    assert record["flags"] == [], record["flags"]  # nothing for a person to read: no source read, no thread
    assert "held" not in record


def test_every_reference_answer_is_graded_in_full_with_the_checks_inside(lessons_graded_in_process: dict) -> None:
    """The same with --in-process --no-speed: every test passes, nothing is flagged, and no test
    of the kit's answers needs the student's process to run (none is checked inside)."""
    record = lessons_graded_in_process["reference"]
    failed = [(t["name"], (t["message"] or "")[:400]) for t in record["tests"] if t["status"] not in ("pass", "skip")]
    assert all(e["state"] == "done" for e in record["lessons"]) and len(record["lessons"]) == 10, record["lessons"]
    assert record["points"] == record["max_points"] > 0 and not failed, failed
    assert record["flags"] == [] and "checked_inside" not in record and "held" not in record, record["flags"]


# --- the lessons' corpus: attacks on the real lessons' checks -----------------------------------

# Each file of hostile/lessons/LESSON/ is added to the end of the kit's answer of LESSON: one
# student of a class graded in one run per mode (hostile/README.md).
ATTACKS = sorted(f"{p.parent.name}/{p.stem}" for p in (HOSTILE / "lessons").glob("*/*.py"))


def attack(name: str) -> dict:
    """What an attack's docstring expects: "test" (one it passes with what it hid), "flags"
    (words each in some flag), by default "expect" and with --in-process "in_process" (points,
    held)."""
    text = (HOSTILE / "lessons" / f"{name}.py").read_text(encoding="utf-8")
    expect = {mode: re.search(rf"^{mode}: points=(\d+) held=(\d+)$", text, re.M) for mode in ("expect", "in-process")}
    assert all(expect.values()), f"{name} has no 'expect: points=P held=H' and 'in-process: ...' lines"
    test = re.search(r"^test: (\S+)$", text, re.M)
    return {
        "test": test and test[1],
        "flags": re.findall(r"^flag: (.+)$", text, re.M),
        "fails": re.findall(r"^fails: (\S+)$", text, re.M),
        **{mode.replace("-", "_"): (int(m[1]), int(m[2])) for mode, m in expect.items()},
    }


def grade_the_lessons_corpus(base: Path, *options: str) -> dict[str, dict]:
    """Every attack, a student who hands in its lesson only, and "reference", who hands in the
    kit's answers of every lesson, graded in one run: the records by attack (and "reference")."""
    shutil.copytree(
        ROOT / "solutions", base / "class" / "reference" / "exercises", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ATTACKS:
        lesson, _, stem = name.partition("/")
        folder = base / "class" / stem / "exercises" / lesson
        shutil.copytree(ROOT / "solutions" / lesson, folder, ignore=shutil.ignore_patterns("__pycache__"))
        (answer,) = (f for f in folder.glob("*.py") if f.name != "__init__.py")
        text = (HOSTILE / "lessons" / f"{name}.py").read_text(encoding="utf-8")
        after = re.search(r"^after: (\S+)$", text, re.M)  # a mutant it is written after, as a learner's own mistake
        answer.write_text(
            "\n\n".join(
                [answer.read_text(encoding="utf-8"), *([(ROOT / after[1]).read_text()] if after else []), text]
            ),
            encoding="utf-8",
        )
    kit = _digest(ROOT / tree for tree in ("solutions", "tests", "exercises"))
    proc = grade(ROOT, str(base / "class"), "--out", str(base / "results"), "--jobs", "2", *options)
    assert proc.returncode == 0, proc.stderr
    assert _digest(ROOT / tree for tree in ("solutions", "tests", "exercises")) == kit, "an attack changed the kit"
    assert "read the code" in (base / "results" / "summary.txt").read_text() or options
    return {
        name: json.loads((base / "results" / "students" / f"{name.partition('/')[2] or name}.json").read_text())
        for name in [*ATTACKS, "reference"]
    }


def _digest(folders) -> str:
    """A hash of every file under `folders` but caches, as they are on disk now."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def lessons_graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    return grade_the_lessons_corpus(tmp_path_factory.mktemp("lessons"))


@pytest.fixture(scope="module")
def lessons_graded_in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    # No speed test: in the code's process it times what that code says (what --in-process cannot
    # promise), and on a loaded machine the kit's own answer may miss a threshold.
    return grade_the_lessons_corpus(tmp_path_factory.mktemp("lessons"), "--in-process", "--no-speed")


@pytest.mark.parametrize("name", ATTACKS)
def test_each_attack_on_a_lesson_gets_its_expected_score(lessons_graded: dict, name: str) -> None:
    """What the run hid, its source or the tests' process shows: the lesson is flagged for a
    person to read, and what passed on the word of the code's process is held, not counted."""
    expected, record = attack(name), lessons_graded[name]
    (lesson,) = (e for e in record["lessons"] if e["lesson"] == name.partition("/")[0])
    assert (lesson["points"], lesson.get("held", 0)) == expected["expect"], (lesson, record["flags"])
    flags = [f for f in record["flags"] if "read the code" in f]
    for words in expected["flags"]:
        assert any(words in f for f in flags), (words, record["flags"])
    for name in expected["fails"]:  # a control: what it did not hide, its test sees
        assert [t["status"] for t in record["tests"] if name in t["name"]] == ["fail"], name
    if expected["test"]:  # its run did not show what it hid, and the test passed: held for a person
        passed = [t for t in record["tests"] if expected["test"] in t["name"]]
        assert [(t["status"], t.get("held")) for t in passed] == [("pass", True)], passed


@pytest.mark.parametrize("name", ATTACKS)
def test_each_attack_on_a_lesson_gets_its_expected_score_with_the_checks_inside(
    lessons_graded_in_process: dict, name: str
) -> None:
    """With --in-process the checks share the code's process, and nothing is read or held: these
    scores are what that option cannot promise (docs/INSTRUCTORS.md)."""
    record = lessons_graded_in_process[name]
    (lesson,) = (e for e in record["lessons"] if e["lesson"] == name.partition("/")[0])
    assert (lesson["points"], lesson.get("held", 0)) == attack(name)["in_process"], (lesson, record["flags"])


def test_a_lie_to_the_checks_gains_nothing_over_its_control(lessons_graded: dict) -> None:
    """08's forgotten autocast scores no more with autocast's state patched where the probes read it."""
    points = {
        name: lessons_graded[name]["points"] for name in ("08_amp/forgets_autocast", "08_amp/forgets_autocast_and_lies")
    }
    assert points["08_amp/forgets_autocast_and_lies"] <= points["08_amp/forgets_autocast"], points


# --- the parts --------------------------------------------------------------------------------


def channel(*lines: dict | bytes) -> RunResult:
    """What the parent's reader makes of these lines (events, or raw bytes as written)."""
    reader = Reader()
    for line in lines:
        reader.take(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
    return reader.result()


COLLECTED = {
    "collected": {
        "tests": [
            {"nodeid": "t::a", "max_points": 1.0, "public": True},
            {"nodeid": "t::b", "max_points": 2.0, "public": False},
        ],
        "errors": [],
    }
}


def test_a_result_counts_once_for_a_collected_test_with_the_collected_points() -> None:
    result = channel(
        COLLECTED,
        {"test": {"nodeid": "t::b", "outcome": "passed", "max_points": 99, "public": True}},
        {"finish": {"exitstatus": 0}},
    )
    assert result.tests == [TestResult("t::b", Outcome.PASSED, max_points=2.0, public=False)]
    assert result.collected == [TestInfo("t::a", 1.0, True), TestInfo("t::b", 2.0, False)]
    assert result.tampering == [] and result.exitstatus == 0 and why_ended(result, Limits()) is None


def test_the_events_the_writer_sends_are_what_the_reader_reads() -> None:
    tests = [TestInfo("t::a", 1.0, True), TestInfo("t::b", 2.0)]
    failed = TestResult(
        "t::b",
        Outcome.FAILED,
        2.0,
        message="E  assert 1 == 2",
        failure=Failure(Kind.MEMORY, "MemoryError", "E  MemoryError", "exercises/x.py:3"),
        seconds=0.5,
    )
    result = channel(collected_event(tests, []), result_event(failed), overhead_event(1.5e-4, 8e-6), finish_event(1))
    assert (result.collected, result.tests, result.exitstatus, result.tampering) == (tests, [failed], 1, [])
    assert result.overhead == (1.5e-4, 8e-6)


@pytest.mark.parametrize(
    "lines, problem",
    [
        ([COLLECTED, {"test": {"nodeid": "t::zz", "outcome": "passed"}}], "never collected"),
        (
            [
                COLLECTED,
                {"test": {"nodeid": "t::a", "outcome": "passed"}},
                {"test": {"nodeid": "t::a", "outcome": "failed"}},
            ],
            "twice",
        ),
        ([COLLECTED, {"test": {"nodeid": "t::a", "outcome": "excellent"}}], "unknown outcome"),
        ([COLLECTED, COLLECTED], "announced its tests twice"),
        (
            [COLLECTED, {"finish": {"exitstatus": 0}}, {"test": {"nodeid": "t::a", "outcome": "passed"}}],
            "after the run",
        ),
        ([COLLECTED, {"hello": 1}], "unknown event"),
        ([COLLECTED, {"overhead": {"one": -1.0, "each": 0.0}}], "unreadable 'overhead'"),
        ([COLLECTED, {"overhead": {"one": "NaN", "each": 0.0}}], "unreadable 'overhead'"),
        ([COLLECTED, {"overhead": {"one": 5.0, "each": 0.0}}], "unreadable 'overhead'"),
        ([COLLECTED, {"tamper": ["torch.allclose was replaced"]}], "torch.allclose was replaced"),
        ([COLLECTED, b'{"finish": {"exitstatus": 0}'], "in the middle of a line"),
        ([COLLECTED, b"x" * (33 << 20)], "flooded"),
    ],
)
def test_anything_off_protocol_is_tampering(lines: list, problem: str) -> None:
    result = channel(*lines)
    assert any(problem in p for p in result.tampering), result.tampering


def test_review_notes_cross_once_each_on_one_line_and_never_past_the_limit() -> None:
    notes = ["read\x1b[2J this", "read\x1b[2J this", *(f"note {i}" for i in range(40))]
    result = channel(COLLECTED, {"review": notes}, {"review": "one more"})
    assert result.review[0] == "read [2J this" and len(result.review) == 20 and result.tampering == []
    # what many tests found is one note that counts them, and leaves room for the rest
    shared = [f"test_{i}: the source of f names torch.softmax" for i in range(30)]
    result = channel(
        COLLECTED, {"review": [*shared, "test_0: the source of f names torch.softmax", "test_9: f ran other ops"]}
    )
    assert result.review == [
        "test_0 (and 29 more tests): the source of f names torch.softmax",
        "test_9: f ran other ops",
    ]


def test_an_unreadable_line_is_tampering() -> None:
    result = channel(COLLECTED, b"{not json\n")
    assert result.tampering == ["an unreadable line appeared on the results channel"]


@pytest.mark.parametrize(
    "returncode, stopped, finished, cpu, words",
    [
        (-9, True, False, 1.0, "stopped after 180 s"),
        (-24, False, False, 180.0, "CPU time"),  # SIGXCPU
        (-25, False, False, 1.0, "wrote more than 256 MiB"),  # SIGXFSZ
        (-11, False, False, 1.0, "killed by SIGSEGV"),
        (-9, False, False, 1.0, "killed by SIGKILL (out of memory?)"),
        (0, False, False, 1.0, "os._exit"),
        (1, False, True, 1.0, None),
    ],
)
def test_why_a_run_ended_early(returncode, stopped, finished, cpu, words) -> None:
    result = channel(COLLECTED, *([{"finish": {"exitstatus": 1}}] if finished else []))
    result.returncode, result.stopped, result.cpu_seconds = returncode, stopped, cpu
    said = why_ended(result, Limits())
    assert (said is None) if words is None else (words in said), said


@pytest.mark.parametrize(
    "code, words",
    [
        ({"returncode": -11}, "killed by SIGSEGV"),
        ({"returncode": 0}, "os._exit"),
        ({"returncode": 3}, "exit status 3"),
        ({"returncode": -25}, "wrote more than"),
        ({"returncode": -9, "overran": True}, "ran past its time limit"),
        ({"returncode": -9, "overran": 1}, "killed by SIGKILL"),  # (only true is true)
    ],
)
def test_under_remote_a_run_ends_as_its_codes_process_did(code, words) -> None:
    """The tests' process finished; the code's had ended while they ran, or was stopped by the
    tests' process (grader.grading.sandbox)."""
    result = channel(COLLECTED, {"code_ended": code}, {"finish": {"exitstatus": 1}})
    result.returncode = 0
    assert words in why_ended(result, Limits())


def test_the_guard_watches_the_kits_own_modules_and_the_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    import grader.plugin
    import grader.testing.compare

    guard = Guard(PipeWriter)
    assert {
        "grader.plugin",
        "grader.testing.compare",
        "grader.grading.pipe",
        "grader.grading.guard",
        "grader.results",
    } <= set(guard.modules)
    assert "grader.grading.pipe.PipeWriter" in guard.holders and guard.check() == []
    name = next(
        n
        for n, v in vars(grader.testing.compare).items()
        if callable(v) and not isinstance(v, type) and getattr(v, "__module__", None) == "grader.testing.compare"
    )
    monkeypatch.setattr(grader.testing.compare, name, lambda *a, **k: None)
    monkeypatch.setattr(PipeWriter, "pytest_kata_result", lambda *a, **k: None)
    assert guard.check() == [
        f"grader.testing.compare.{name} was replaced",
        "grader.grading.pipe.PipeWriter.pytest_kata_result was replaced",
    ]


def test_the_guard_sees_a_functions_code_swapped_and_watches_the_test_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function whose code is replaced in place is the same object: its code is watched too,
    in the test files' modules as in the kit's (rewrites_tests_in_memory)."""
    import importlib.util

    tests = tmp_path / "test_mine.py"
    tests.write_text("def test_x(lesson):\n    assert lesson.f() == 1\n")
    spec = importlib.util.spec_from_file_location("test_mine", tests)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "test_mine", module)
    guard = Guard(PipeWriter, frozenset({tests}))
    assert "test_mine" in guard.modules and guard.check() == []
    monkeypatch.setattr(module.test_x, "__code__", (lambda lesson: None).__code__)
    assert guard.check() == ["test_mine.test_x's code was replaced"]


# --- verdicts: a lesson's result from its run -----------------------------------------------------

TESTS = [TestInfo("t::a", 1.0, True), TestInfo("t::b", 2.0), TestInfo("t::cuda", 1.0)]


def verdict(tests: list[TestResult], *, ended: str | None = None, tampering=(), rewritten=(), collected=TESTS):
    run = RunResult(
        collected=collected, tests=tests, exitstatus=None if ended else 1, ended=ended, tampering=list(tampering)
    )
    return judge(
        "98_demo",
        run,
        Limits(memory=1 << 30, file_size=8 << 20),
        expected=TESTS,
        skipped={"t::cuda"},
        rewritten=list(rewritten),
    )


PASSED_A = TestResult("t::a", Outcome.PASSED, 1.0, True)


def test_a_test_that_never_reported_did_not_pass_and_says_why() -> None:
    result = verdict([PASSED_A], ended="stopped after 12 s, the time limit for a lesson")
    assert [(t.nodeid, t.outcome, t.message) for t in result.run.tests] == [
        ("t::a", Outcome.PASSED, ""),
        ("t::b", Outcome.ERROR, "no result: the run stopped after 12 s, the time limit for a lesson"),
        ("t::cuda", Outcome.SKIPPED, "skipped on this machine"),
    ]
    summary = result.summary
    assert (summary.state, summary.points, summary.max_points) == (State.STOPPED, 1.0, 3.0)
    assert summary.problem == "the run stopped after 12 s, the time limit for a lesson"


def test_a_run_that_never_finished_collecting_is_graded_on_the_stubs_tests() -> None:
    result = verdict([], ended="crashed: killed by SIGSEGV", collected=None)
    assert [t.nodeid for t in result.run.tests] == ["t::a", "t::b", "t::cuda"]
    assert result.summary.state is State.STOPPED and result.summary.points == 0


def test_a_run_is_graded_on_the_lessons_tests_and_points_not_on_what_it_announced() -> None:
    forged = [*TESTS, TestInfo("t::extra", 1.0)]  # a 42nd test where the lesson has 41
    result = verdict(
        [TestResult("t::a", Outcome.PASSED, 100.0, True), TestResult("t::extra", Outcome.PASSED)],
        collected=[TestInfo("t::a", 100.0, True), *forged[1:]],
    )
    assert [t.nodeid for t in result.run.tests] == ["t::a", "t::b", "t::cuda"]
    assert result.summary.max_points == 3.0 and result.summary.points == 0
    assert result.summary.state is State.TAMPERED
    assert "reported 1 test(s) the lesson does not have: t::extra" in result.summary.problem
    honest = verdict([TestResult("t::a", Outcome.PASSED, 100.0, True)])
    assert (honest.summary.points, honest.summary.max_points) == (1.0, 3.0)


def test_a_pass_on_the_codes_own_record_is_held_for_a_person_where_its_source_is_flagged() -> None:
    """A check that took what the code's process recorded (ops, a scenario's result) rests on that
    code's word: where the source read found something, its points wait for a person."""
    recorded = TestResult("t::b", Outcome.PASSED, 2.0, recorded=True)
    run = RunResult(collected=TESTS, tests=[PASSED_A, recorded], exitstatus=0, review=["test_b: the source reaches"])
    result = judge("98_demo", run, Limits(), expected=TESTS, skipped={"t::cuda"}, rewritten=[])
    assert [(t.nodeid, t.held, t.points) for t in result.run.tests[:2]] == [("t::a", False, 1.0), ("t::b", True, 0.0)]
    summary = result.summary
    assert (summary.state, summary.passed, summary.points, summary.held) == (State.DONE, 2, 1.0, 2.0)
    clean = verdict([PASSED_A, recorded])  # the same record, and a source read that found nothing: it counts
    assert (clean.run.tests[1].held, clean.summary.points, clean.summary.held) == (False, 3.0, 0.0)
    # a run cannot hold (or free) a test itself: the verdict decides
    forged = channel(COLLECTED, {"test": {"nodeid": "t::a", "outcome": "passed", "held": True, "recorded": True}})
    assert (forged.tests[0].held, forged.tests[0].recorded) == (False, True)


def test_tampering_scores_nothing_and_flags_the_lesson() -> None:
    result = verdict([PASSED_A], tampering=["torch.allclose was replaced"], rewritten=["conftest.py"])
    assert [t.outcome for t in result.run.tests] == [Outcome.ERROR, Outcome.ERROR, Outcome.SKIPPED]
    # the test this machine skips counts on neither side: the maximum is every student's
    assert (result.summary.state, result.summary.points, result.summary.max_points) == (State.TAMPERED, 0, 3.0)
    assert result.summary.problem == (
        "tampering detected: torch.allclose was replaced; changed the grading copy's own files: conftest.py"
    )


@pytest.mark.parametrize(
    "kind, problem",
    [
        (Kind.MEMORY, "ran out of memory (limit 1024 MiB)"),
        (Kind.FILE_SIZE, "wrote more than 8 MiB to one file (printed too much?); the write failed"),
        (None, None),
    ],
)
def test_memory_and_file_size_problems_come_from_the_failures_kind(kind, problem) -> None:
    failed = TestResult(
        "t::b", Outcome.FAILED, 2.0, message="E   something", failure=Failure(kind, "OSError", "E   something")
    )
    result = verdict([PASSED_A, failed])
    assert (result.summary.state, result.summary.problem) == (State.IN_PROGRESS, problem)


def test_running_out_of_memory_is_told_with_the_reason_a_run_stopped() -> None:
    failed = TestResult("t::b", Outcome.FAILED, 2.0, failure=Failure(Kind.MEMORY, "MemoryError", "E   MemoryError"))
    result = verdict([PASSED_A, failed], ended="crashed: killed by SIGKILL (out of memory?)")
    assert result.summary.problem == (
        "the run crashed: killed by SIGKILL (out of memory?); it ran out of memory (limit 1024 MiB)"
    )


# --- the class's tables and progress ----------------------------------------------------------------


def test_the_summary_table_lines_up() -> None:
    records = [
        {"student": "ada", "points": 8.0, "flags": []},
        {"student": "bartholomew", "points": 2.5, "flags": ["98_demo: tampering detected: x"]},
        {"student": "cy", "points": 0.0, "failed": "no exercises/ folder"},
    ]
    points = {"ada": {"98_demo": 4.0, "99_other": 4.0}, "bartholomew": {"98_demo": 0.0, "99_other": 2.5}, "cy": {}}
    text = summary_table(records, ["98_demo", "99_other"], points, {"98_demo": 4.0, "99_other": 4.0})
    assert text == (
        "student        98    99   total\n"
        "(max)           4     4       8\n"
        "ada             4     4       8\n"
        "bartholomew     0   2.5     2.5 !\n"
        "cy              0     0       0 !\n"
        "mean          1.3   2.2     3.5\n"
        "\n3 students, 1 flagged (!), 1 could not be graded\n"
        "isolation: not recorded\n"
        "checks: in the student's process\n"
        "\nflagged (look at these by hand: students/<name>.json, logs/<name>/):\n"
        "  bartholomew: 98_demo: tampering detected: x\n"
        "\ncould not be graded:\n  cy: no exercises/ folder\n"
    )
    records[1]["held"] = {"points": 2.0, "tests": ["98_demo/test_demo.py::test_scale"]}
    text = summary_table(records, ["98_demo", "99_other"], points, {"98_demo": 4.0, "99_other": 4.0})
    assert (
        "held for a person: 2 points of 1 student(s), passed on what their code's process recorded, in a "
        "lesson whose source is flagged; not in the totals (students/<name>.json: held)\n"
    ) in text


def test_progress_off_a_terminal_is_a_line_per_item() -> None:
    stream = io.StringIO()
    progress = Progress(2, "students", verb=("grade", "graded"), work=4, stream=stream)
    progress.advance(2)
    progress.step("ada", "8/8 points")
    progress.skip(2)
    progress.failed("bob", "no exercises/ folder")
    progress.close()
    assert re.fullmatch(
        r"\[1/2\] ada: 8/8 points \(\d+ s, ETA 0m00s\)\n"
        r"FAILED to grade bob: no exercises/ folder\n"
        r"graded 2 of 2 students in \d+ s\n",
        stream.getvalue(),
    ), stream.getvalue()


def test_long_output_keeps_its_head_and_tail(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("A" * 1000 + "B" * 5000 + "C" * 1000)
    text = read_cut(path, 2000)
    assert text.startswith("A" * 1000) and text.endswith("C" * 1000) and "[... 5000 bytes of output cut ...]" in text
    assert read_cut(tmp_path / "missing", 10) == ""


def test_sizes_and_shards_parse() -> None:
    assert (parse_size("4G"), parse_size("512m"), parse_size("64K"), parse_size("100")) == (
        4 << 30,
        512 << 20,
        64 << 10,
        100,
    )
    assert parse_shard("3/8") == (3, 8)
    for bad in ("0/2", "3/2", "a/b", "1"):
        with pytest.raises(Exception, match="I/N|between"):
            parse_shard(bad)


def test_a_grading_copy_that_was_rewritten_is_noticed(tmp_path: Path) -> None:
    kit = make_kit(tmp_path / "kit")
    from grader.lessons import all_lessons

    snapshot = KitFiles.read(kit, all_lessons(kit))
    copy = tmp_path / "copy"
    snapshot.write_copy(copy, "98_demo", {"demo.py": b"x = 1\n"})
    assert not (copy / "tests" / "99_other").exists() and not (copy / "solutions").exists()
    assert not (copy / "tests" / "98_demo" / "mutants").exists()
    assert (copy / "exercises" / "98_demo" / "demo.py").read_bytes() == b"x = 1\n"
    assert snapshot.changed(copy, "98_demo") == []
    (copy / "tests" / "98_demo" / "test_demo.py").write_text("")
    (copy / "tests" / "98_demo" / "conftest.py").write_text("")
    (copy / "exercises" / "98_demo" / "extra.py").write_text("")  # the student's own folder: fine
    assert snapshot.changed(copy, "98_demo") == ["tests/98_demo/test_demo.py", "tests/98_demo/conftest.py"]
    os.remove(copy / "conftest.py")
    assert "conftest.py" in snapshot.changed(copy, "98_demo")


def test_an_interrupted_run_keeps_the_students_done_and_leaves_no_process(graded: dict, tmp_path: Path) -> None:
    class_dir, out, marker = tmp_path / "class", tmp_path / "results", unique_sleep()
    shutil.copytree(graded["class"] / "correct", class_dir / "a_correct")
    looping = class_dir / "b_looping" / "exercises" / "98_demo"
    looping.mkdir(parents=True)
    (looping / "demo.py").write_text(
        "import signal, subprocess\n"
        f"subprocess.Popen(['sleep', {marker!r}])\n"
        "def add(a, b):\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n"
        "def scale(x, k=2):\n    return x * k\n"
    )
    # --in-process: there the student's code may start the process that marks its run (the
    # code's process apart makes none).
    command = grade_command(
        graded["kit"], str(class_dir), "--out", str(out), "--jobs", "1", "--timeout", "120", "--in-process"
    )
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not running(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running(marker), "the looping student never started"
        looping = int(Path(f"/proc/{running(marker)[0]}/status").read_text().split("PPid:")[1].split()[0])
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert (out / "students" / "a_correct.json").is_file() and not (out / "students" / "b_looping.json").exists()
    assert "a_correct" in (out / "class.csv").read_text()
    assert not running(marker), "a process of the run in progress outlived the grader"
    assert not Path(f"/proc/{looping}").exists(), "the run in progress outlived the grader"


def test_ctrl_c_while_torch_is_imported_ends_the_run_cleanly(graded: dict, tmp_path: Path) -> None:
    # An interrupt raised inside torch's import used to abort the grader ("terminate called
    # after throwing an instance of 'pybind11::error_already_set'", exit -6) one time in three.
    class_dir = tmp_path / "class"
    shutil.copytree(graded["class"] / "correct", class_dir / "a_correct")
    for pause in (0.3, 0.8):
        scratch = tmp_path / f"tmp{pause}"
        scratch.mkdir()
        proc = subprocess.Popen(
            grade_command(graded["kit"], str(class_dir), "--out", str(tmp_path / "results"), "--jobs", "1"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(scratch)},
        )
        try:
            assert proc.stderr.readline().startswith("grading 1 student"), "the grader did not start"
            time.sleep(pause)  # importing torch, pytest and hypothesis: 2-5 s
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert proc.returncode == 130, stderr
        assert "terminate called" not in stderr and "Traceback" not in stderr, stderr
        assert list(scratch.iterdir()) == [], "a Ctrl-C before grading began left files behind"


def test_a_kit_whose_stubs_pass_tests_is_refused(tmp_path: Path) -> None:
    kit = make_kit(tmp_path / "kit")
    (kit / "exercises" / "98_demo" / "demo.py").write_text(SOLUTION)  # an instructor's own answers, left there
    (tmp_path / "class" / "ada" / "exercises").mkdir(parents=True)
    proc = grade(kit, str(tmp_path / "class"), "--out", str(tmp_path / "results"))
    assert proc.returncode == 2
    assert "the kit's exercises/98_demo passes 3 test(s)" in proc.stderr and "kata reset 98_demo" in proc.stderr


# --- the OS boundary -------------------------------------------------------------------------------


def test_without_namespaces_kata_grade_refuses_and_names_the_way_out(tmp_path: Path, monkeypatch) -> None:
    from grader.grading import isolation
    from grader.grading.schedule import Grading
    from grader.lessons import KitError, chosen_lessons

    kit = make_kit(tmp_path / "kit")
    grading = Grading(kit, chosen_lessons(kit, ["98_demo"]), tmp_path / "results", Limits(), speed=False, jobs=1)
    grading.scratch = tmp_path / "scratch"
    monkeypatch.setattr(isolation, "probe", lambda view: "unshare the user namespace: EPERM (Operation not permitted)")
    with pytest.raises(KitError, match=r"cannot be made here: unshare the user namespace: EPERM.*kata grade --trusted"):
        grading.check_isolation()
    assert grading.view(tmp_path / "run") is not None  # every run behind the boundary


def test_trusted_grades_without_the_boundary_and_says_so(graded: dict, tmp_path: Path) -> None:
    class_dir = tmp_path / "class"
    shutil.copytree(graded["class"] / "correct", class_dir / "correct")
    proc = grade(graded["kit"], str(class_dir), "--out", str(tmp_path / "results"), "--trusted", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    assert "isolation: none (--trusted)" in proc.stdout and re.search(r"^correct\s+4\s+4\s+8$", proc.stdout, re.M)
    record = json.loads((tmp_path / "results" / "students" / "correct.json").read_text())
    assert record["options"]["isolation"].startswith("none (--trusted)")


def test_the_probe_finds_the_boundary_here(tmp_path: Path) -> None:
    """On the kit's machines unprivileged namespaces work (docs/INSTRUCTORS.md); the trial run
    must get pid 2 under an init of its own, and the view must build."""
    from grader.grading import isolation

    (tmp_path / "run" / "kit").mkdir(parents=True)
    view = isolation.View.for_grading(
        kit=ROOT, copy=tmp_path / "run" / "kit", home=tmp_path / "run", hidden=(tmp_path,), disk=16 << 20, processes=32
    )
    assert isolation.probe(view) is None


def in_a_child(body) -> list:
    """What `body(seen)` appended to `seen`, run in a forked child of this process (its
    repr, where it raised): a seccomp filter set there stays there."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        seen = []
        try:
            os.close(read)
            body(seen)
        except BaseException as exc:  # noqa: BLE001 (the child reports whatever ended it)
            seen.append(repr(exc))
        finally:
            os.write(write, json.dumps(seen).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        seen = json.loads(pipe.read() or "[]")
    os.waitpid(pid, 0)
    return seen


def test_the_codes_process_under_remote_makes_threads_but_no_process() -> None:
    """grader/grading/seccomp.py, in a child of this process: fork, posix_spawn and subprocess
    fail with EPERM; a thread and torch's own threads run."""
    from grader.grading import seccomp

    def body(seen: list) -> None:
        seccomp.no_processes()
        for name, make in (
            ("fork", os.fork),
            ("spawn", lambda: os.posix_spawn("/bin/true", ["true"], {})),
            ("subprocess", lambda: subprocess.run(["true"])),
        ):
            try:
                make()
                seen.append(f"{name} made a process")
            except PermissionError:
                seen.append(f"{name} refused")
        done = []
        thread = threading.Thread(target=lambda: done.append(True))
        thread.start()
        thread.join()
        torch.set_num_threads(2)
        x = torch.ones(300, 300)
        seen += [f"thread {done}", f"torch {float((x @ x)[0, 0])}"]

    assert in_a_child(body) == ["fork refused", "spawn refused", "subprocess refused", "thread [True]", "torch 300.0"]


@pytest.mark.parametrize("confine", ["pinned", "no_processes"])
def test_a_process_behind_the_boundary_keeps_its_cpu(confine: str) -> None:
    """grader/grading/seccomp.py, in a child of this process given one CPU: sched_setaffinity
    fails with EPERM, for it and for its threads (and, `pinned`, its children, which it may make)."""
    from grader.grading import seccomp

    def leaves(where: list) -> None:
        try:
            os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
            where.append("left")
        except PermissionError:
            where.append("kept")

    def body(seen: list) -> None:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        getattr(seccomp, confine)()
        here, in_thread = [], []
        leaves(here)
        thread = threading.Thread(target=leaves, args=(in_thread,))
        thread.start()
        thread.join()
        seen += [f"here: {here[0]}", f"in a thread: {in_thread[0]}"]
        if confine == "pinned":
            child = os.fork()
            if child == 0:
                child_saw = []
                leaves(child_saw)
                os._exit(0 if child_saw == ["kept"] else 1)
            seen.append(f"child: {'kept' if os.waitpid(child, 0)[1] == 0 else 'left'}")

    assert in_a_child(body) == ["here: kept", "in a thread: kept", *(["child: kept"] if confine == "pinned" else [])]


def test_the_grader_walks_and_removes_any_tree_without_following_links(tmp_path: Path) -> None:
    from grader.files import files_under, remove_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the run's")
    run = tmp_path / "run"
    deep = run
    run.mkdir()
    for _ in range(1100):  # deeper than shutil.rmtree's and pathlib.rglob's recursion goes
        deep = deep / "d"
        deep.mkdir()
    (deep / "bottom.txt").write_text("")
    (run / "link").symlink_to(outside)
    (run / "top.txt").write_text("")
    files, deeper = files_under(run, max_depth=32)
    assert files == [run / "top.txt"] and deeper
    remove_tree(run)
    assert not run.exists() and (outside / "keep.txt").read_text() == "not the run's"


def test_what_is_shown_may_live_under_tmp(tmp_path: Path) -> None:
    """A kit or a virtual environment under /tmp (a CI checkout) stays visible: the run's own
    /tmp is mounted before them, not over them."""
    from grader.grading import isolation

    shown = Path(tempfile.mkdtemp(prefix="kata-shown-", dir="/tmp"))
    try:
        shown.chmod(0o755)  # readable by the run's id (nobody, under a root grader), as a checkout is
        (shown / "marker.txt").write_text("seen")
        (shown / "marker.txt").chmod(0o644)
        (tmp_path / "run" / "kit").mkdir(parents=True)
        view = isolation.View.for_grading(
            kit=ROOT, copy=tmp_path / "run" / "kit", home=tmp_path / "run", hidden=(), disk=16 << 20, processes=32
        )
        view = dataclasses.replace(view, readable=(*view.readable, shown))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                isolation.enter(view)
                code = 0 if (shown / "marker.txt").read_text() == "seen" else 2
            except BaseException:  # noqa: BLE001 - the status says it
                code = 3
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        remove_tree(shown)


# Students who attack checks made in their own process: (source, points by default). The
# first scores 4 of 4 with --in-process; the second is caught there too, by the tamper check.
FORGERS = {
    "equals_anything": (
        "class _Yes:\n    def __eq__(self, other):\n        return True\n\n\n"
        "def add(a, b):\n    return _Yes()\n\n\ndef scale(x, k=2):\n    return x * k\n",
        2,
    ),
    "rewrites_the_tests": (
        "import gc\n\nfor _f in gc.get_objects():\n"
        "    if str(getattr(_f, '__module__', '')).startswith('test_') and hasattr(_f, '__code__'):\n"
        "        _f.__code__ = (lambda *a, **k: None).__code__.replace(co_argcount=_f.__code__.co_argcount,"
        " co_varnames=_f.__code__.co_varnames[:_f.__code__.co_argcount] or ('lesson',))\n\n\n"
        "def add(a, b):\n    return 0\n\n\ndef scale(x, k=2):\n    return x\n",
        0,
    ),
}


def test_the_checks_stay_out_of_the_students_process(graded: dict, tmp_path: Path) -> None:
    """kata grade, by default: the tests run outside the boundary, the code behind it answers their
    calls; a correct student keeps every point, and what forges checks in-process gets only
    what it answers right."""
    class_dir = tmp_path / "class"
    shutil.copytree(graded["class"] / "correct", class_dir / "correct")
    for name, (source, _) in FORGERS.items():
        (class_dir / name / "exercises" / "98_demo").mkdir(parents=True)
        (class_dir / name / "exercises" / "98_demo" / "demo.py").write_text(source, encoding="utf-8")
    proc = grade(graded["kit"], str(class_dir), "--out", str(tmp_path / "results"), "--lessons", "98_demo", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    assert "checks: in a process of their own" in proc.stdout, proc.stdout
    assert re.search(r"^correct\s+4\s+4$", proc.stdout, re.M), proc.stdout
    for name, (_, points) in FORGERS.items():  # (flagged "!" where its source reaches for the tests)
        assert re.search(rf"^{name}\s+{points}\s+{points}( !)?$", proc.stdout, re.M), proc.stdout


def test_the_tests_that_drive_objects_run_in_the_students_process_and_say_so(tmp_path: Path) -> None:
    """A test that cannot run with the code in another process (it drives an object of the
    module) runs again behind the boundary, in the student's process; its points count and
    the summary says how many were checked there."""
    kit = make_kit(tmp_path / "kit")
    driving = "\n\ndef test_scaler(lesson):\n    assert lesson.Scaler(3).apply(2) == 6\n"
    (kit / "tests/98_demo/test_demo.py").write_text(CLASS_TESTS + driving, encoding="utf-8")
    scaler = "\n\nclass Scaler:\n    def __init__(self, k):\n        self.k = k\n\n    def apply(self, x):\n        return x * self.k\n"
    answer = kit / "solutions/98_demo/demo.py"
    answer.write_text(answer.read_text() + scaler, encoding="utf-8")
    lesson = tmp_path / "class" / "correct" / "exercises" / "98_demo"
    lesson.mkdir(parents=True)
    (lesson / "demo.py").write_text(answer.read_text(), encoding="utf-8")
    proc = grade(kit, str(tmp_path / "class"), "--out", str(tmp_path / "results"), "--lessons", "98_demo", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^correct\s+5\s+5$", proc.stdout, re.M), proc.stdout
    assert "in the students' processes (tests that cannot run otherwise): 1 of 1 points" in proc.stdout, proc.stdout
    record = json.loads((tmp_path / "results" / "students" / "correct.json").read_text())
    assert record["checked_inside"] == {"points": 1.0, "max_points": 1.0}


IN_A_CHILD = """


def in_a_child(x):
    import os

    read, write = os.pipe()
    if os.fork() == 0:
        os.write(write, str(x * 2).encode())
        os._exit(0)
    os.close(write)
    os.wait()
    return int(os.read(read, 16))
"""


# A student whose children each try to hold 300 MiB at once (the red team's held 991 MiB in 4
# forked children under --memory 512M): right only where none of them could.
HOARDS_IN_CHILDREN = """


def in_a_child(x):
    import os

    held, children = os.pipe(), []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(300 << 20)
                os.write(held[1], b"1")
            except MemoryError:
                os.write(held[1], b"0")
            os.read(os.open("/dev/null", os.O_RDONLY), 1)
            os._exit(0)
        children.append(pid)
    got = os.read(held[0], 4)
    while len(got) < 4:
        got += os.read(held[0], 4 - len(got))
    for pid in children:
        os.waitpid(pid, 0)
    return x * 2 + got.count(b"1")
"""


def test_the_tests_whose_code_makes_processes_keep_their_checks_apart(tmp_path: Path) -> None:
    """A test whose code needs a process of its own (a DataLoader's workers) cannot run against
    the code's usual process, which may make none; it runs in a session of its own, its checks
    still apart, against a code process that may. Nothing is checked in the student's process,
    so an answer that equals anything gets nothing there."""
    kit = make_kit(tmp_path / "kit")
    (kit / "tests/98_demo/test_demo.py").write_text(
        CLASS_TESTS + "\n\ndef test_in_a_child(lesson):\n    assert lesson.in_a_child(3) == 6\n", encoding="utf-8"
    )
    answer = kit / "solutions/98_demo/demo.py"
    answer.write_text(answer.read_text() + IN_A_CHILD, encoding="utf-8")
    students = {
        "correct": answer.read_text(),
        "evader": answer.read_text() + "\n\nclass _Yes:\n    def __eq__(self, other):\n        return True\n\n\n"
        "def in_a_child(x):\n    return _Yes()\n",
        "hoarder": answer.read_text() + HOARDS_IN_CHILDREN,
    }
    for name, source in students.items():
        lesson = tmp_path / "class" / name / "exercises" / "98_demo"
        lesson.mkdir(parents=True)
        (lesson / "demo.py").write_text(source, encoding="utf-8")
    proc = grade(kit, str(tmp_path / "class"), "--out", str(tmp_path / "results"), "--lessons", "98_demo", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^correct\s+5\s+5$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^evader\s+4\s+4$", proc.stdout, re.M), proc.stdout
    # Its 4 children share the run's 1 GiB: none could hold 300 MiB (all 4 could, each its own 1 GiB, before).
    assert re.search(r"^hoarder\s+5\s+5( !)?$", proc.stdout, re.M), (
        proc.stdout
    )  # (os.open: flagged, as the answer opens nothing)
    summary = (tmp_path / "results" / "summary.txt").read_text()  # (with a cgroup too, each process has its part)
    assert (
        "memory: the limit is each process's" in summary
        or "where the code may make processes at most 32, each with 1/32 of it" in summary
    ), summary
    for name in students:
        record = json.loads((tmp_path / "results" / "students" / f"{name}.json").read_text())
        assert "checked_inside" not in record, record


# A student whose add holds 800 MiB in its tmpfs folders and a memfd, none of it address space:
# under --memory 512M, it holds what it can and says how much.
HOARDS_IN_TMPFS = """


def add(a, b):
    import os

    held = 0
    for where in ("/tmp", "/dev/shm"):
        try:
            for i in range(100):  # files of 4 MiB (a file may reach 8)
                with open(os.path.join(where, f"hoard{i}"), "wb") as f:
                    f.write(b"x" * (4 << 20))
                held += 4
        except OSError:
            pass
    return a + b + held
"""


def test_a_runs_code_processes_share_its_memory_where_a_cgroup_can_be_made(tmp_path: Path) -> None:
    """Where the machine lets the grader make a cgroup, a run's code processes are bounded
    together, tmpfs pages included: 800 MiB written to /tmp and /dev/shm under --memory 512M
    (the limit and the 256 MiB the run shares with the tests' process) ends the code's process,
    and the lesson says why. summary.txt says which bound was used, here or not."""
    from grader.grading.cgroup import find

    kit = make_kit(tmp_path / "kit")
    lesson = tmp_path / "class" / "hoarder" / "exercises" / "98_demo"
    lesson.mkdir(parents=True)
    (lesson / "demo.py").write_text(SOLUTION + HOARDS_IN_TMPFS, encoding="utf-8")
    limits = [*LIMITS[:4], "--memory", "512M", *LIMITS[6:]]
    proc = grade(kit, str(tmp_path / "class"), "--out", str(tmp_path / "results"), "--lessons", "98_demo", *limits)
    assert proc.returncode == 0, proc.stderr
    summary = (tmp_path / "results" / "summary.txt").read_text()
    record = json.loads((tmp_path / "results" / "students" / "hoarder.json").read_text())
    if find() is None:
        assert "no cgroup: tmpfs and memfd pages do not count" in summary
        pytest.skip("this machine lets the grader make no cgroup: the memory limit is each process's")
    assert "memory: each run's code processes together, by a cgroup v" in summary
    assert any("out of memory: its processes together reached the run's limit" in f for f in record["flags"]), record[
        "flags"
    ]


def test_a_cgroup_is_used_only_where_the_machine_lets_the_grader_make_one(tmp_path: Path) -> None:
    """Read from a stand-in for /sys/fs/cgroup: v2 where the grader's group hands memory and
    pids on to its children; v1 where both hierarchies are mounted and writable; else none. A
    run's group gets the memory and process limits its kind names."""
    from grader.grading import cgroup

    v2 = tmp_path / "v2"
    (v2 / "user.slice" / "kata").mkdir(parents=True)
    (v2 / "cgroup.controllers").write_text("cpu memory pids\n")
    (v2 / "user.slice" / "kata" / "cgroup.subtree_control").write_text("memory pids\n")
    assert cgroup.find(v2, "0::/user.slice/kata\n") == cgroup.Groups(2, (v2 / "user.slice" / "kata",))
    (v2 / "user.slice" / "kata" / "cgroup.subtree_control").write_text("memory\n")  # pids not handed on
    assert cgroup.find(v2, "0::/user.slice/kata\n") is None
    v1 = tmp_path / "v1"
    for controller in ("memory", "pids"):
        (v1 / controller / "grader").mkdir(parents=True)
    groups = cgroup.find(v1, "4:memory:/grader\n8:pids:/\n0::/\n")
    assert groups == cgroup.Groups(1, (v1 / "memory" / "grader", v1 / "pids"))
    assert cgroup.find(tmp_path / "none", "0::/\n") is None
    for folder, file in (
        (v1 / "memory" / "grader" / "run", "memory.limit_in_bytes"),
        (v1 / "pids" / "run", "pids.max"),
    ):
        folder.mkdir()
        (folder / file).write_text("max")  # (the kernel makes these files with the folder)
    assert groups.make("run", 768 << 20, 256) == (v1 / "memory" / "grader" / "run", v1 / "pids" / "run")
    assert (v1 / "memory" / "grader" / "run" / "memory.limit_in_bytes").read_text() == str(768 << 20)
    assert (v1 / "pids" / "run" / "pids.max").read_text() == "256"


# The corpus's speed corner: students faking speed, each a correct add and scale and one of
# test_remote's answers to its speed test on `columns`: (that answer, its score with the checks
# apart, with --in-process).
FAKES_SPEED = {
    "loops": ("a loop", 4, 4),
    "keeps_answers_per_address": ("a loop, its answer kept per address", 4, 5),
    "stops_the_clocks": ("a loop, the clocks stopped while it runs", 4, 5),
    "swaps_the_speed_modules_time": ("a loop, the speed module's clock swapped", 4, 5),
}


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["default", "in-process"])
def test_speed_cannot_be_faked_with_the_checks_apart(tmp_path: Path, mode: list[str]) -> None:
    """The corpus's speed corner, graded in one run: a loop kept per input's address, clocks
    stopped while the loop runs, the speed module's clock swapped. With the checks apart the
    code's CPU time is read by the kernel on fresh inputs: each scores as the plain loop does.
    With --in-process all three pass the speed test (what this option cannot promise)."""
    from grader.tests.test_remote import SPEED_ANSWERS, SPEED_TESTS

    kit = make_kit(tmp_path / "kit")
    (kit / "tests/98_demo/test_demo.py").write_text(CLASS_TESTS + "\n\n" + SPEED_TESTS, encoding="utf-8")
    answer = kit / "solutions/98_demo/demo.py"
    answer.write_text(answer.read_text() + "\n\n" + SPEED_ANSWERS["one reduction"][0], encoding="utf-8")
    students = {"correct": answer.read_text()} | {
        name: SOLUTION + "\n\n" + SPEED_ANSWERS[fake][0] for name, (fake, _, _) in FAKES_SPEED.items()
    }
    for name, source in students.items():
        lesson = tmp_path / "class" / name / "exercises" / "98_demo"
        lesson.mkdir(parents=True)
        (lesson / "demo.py").write_text(source, encoding="utf-8")
    proc = grade(
        kit,
        str(tmp_path / "class"),
        "--out",
        str(tmp_path / "results"),
        "--lessons",
        "98_demo",
        "--jobs",
        "2",
        *LIMITS,
        *mode,
    )
    assert proc.returncode == 0, proc.stderr
    expected = {"correct": 5} | {name: scores[1 + bool(mode)] for name, scores in FAKES_SPEED.items()}
    for name, points in expected.items():
        assert re.search(rf"^{name}\s+{points}\s+{points}( !)?$", proc.stdout, re.M), (name, proc.stdout)


def test_a_lessons_run_is_its_list_of_sessions(tmp_path: Path) -> None:
    """A student's run of a lesson: the code in a code process, then the tests the kit's answer
    showed need processes, then those that cannot cross, each in a session of its kind (none
    where it has no test); --in-process, one session in the student's process. A test the
    first session held back goes to the first later session that names it, else to the one
    for tests that cannot cross."""
    from grader.grading.job import CODE_MAKING_PROCESSES, CODE_PROCESS, STUDENTS_PROCESS, Found, Session
    from grader.grading.schedule import Grading
    from grader.grading.sessions import _named, _runs_again
    from grader.lessons import chosen_lessons

    kit = make_kit(tmp_path / "kit")
    lessons = chosen_lessons(kit, ["98_demo"])
    grading = Grading(kit, lessons, tmp_path / "results", Limits(), speed=False, jobs=1, trusted=True)
    assert grading.sessions("98_demo") == (Session(CODE_PROCESS),)
    grading.processes["98_demo"], grading.fallbacks["98_demo"] = frozenset({"t::a"}), frozenset({"t::b"})
    assert grading.sessions("98_demo") == (
        Session(CODE_PROCESS),
        Session(CODE_MAKING_PROCESSES, frozenset({"t::a"})),
        Session(STUDENTS_PROCESS, frozenset({"t::b"})),
    )
    in_process = Grading(kit, lessons, tmp_path / "results", Limits(), speed=False, jobs=1, trusted=True, remote=False)
    assert in_process.sessions("98_demo") == (Session(STUDENTS_PROCESS),)
    later = [Session(CODE_MAKING_PROCESSES, frozenset({"t::a"})), Session(STUDENTS_PROCESS, Found.CANNOT_CROSS)]
    assert _named(later) == frozenset({"t::a"})
    assert [_runs_again(later, TestResult(name, Outcome.SKIPPED)) for name in ("t::a", "t::c")] == [0, 1]


def test_only_the_tests_the_kits_own_answer_cannot_run_apart_fall_back(tmp_path: Path) -> None:
    """A student whose function is an object (so its tests cannot call it remotely) does not get
    those tests checked in its own process, where an answer that equals anything would pass:
    only the tests the kit's answer cannot run remotely fall back."""
    kit = make_kit(tmp_path / "kit")
    lesson = tmp_path / "class" / "evader" / "exercises" / "98_demo"
    lesson.mkdir(parents=True)
    (lesson / "demo.py").write_text(
        "class _Yes:\n    def __eq__(self, other):\n        return True\n\n\n"
        "class _Add:\n    def __call__(self, a, b):\n        return _Yes()\n\n\nadd = _Add()\n\n\n"
        "def scale(x, k=2):\n    return x * k\n",
        encoding="utf-8",
    )
    proc = grade(kit, str(tmp_path / "class"), "--out", str(tmp_path / "results"), "--lessons", "98_demo", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^evader\s+2\s+2$", proc.stdout, re.M), proc.stdout  # test_scale's 2 points only
    record = json.loads((tmp_path / "results" / "students" / "evader.json").read_text())
    assert "checked_inside" not in record
