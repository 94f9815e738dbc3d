"""Every lesson's committed transcript (tests/NN/transcript.md, kept current by `kata verify`),
read as one corpus: what a learner reads for the untouched stub and for every mutant, checked
for the defects a single message's test does not see. Fast: it reads files, runs nothing."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.authoring import transcripts
from grader.lessons import all_lessons

ROOT = Path(__file__).resolve().parents[2]
LESSONS = all_lessons(ROOT)

_RUN = re.compile(r"^## (?P<title>.+?)\n+````text\n(?P<text>.*?)\n````$", re.MULTILINE | re.DOTALL)
_HEADER = re.compile(r"^_{2,} (?P<test>.+?) _{2,}$", re.MULTILINE)  # pytest's line above each failure
_SECTION = re.compile(r"^=+ .+ =+$", re.MULTILINE)
# A file:line of the tests or the kit (a mutant stands for the learner's file: its path is theirs).
_KITS_FRAME = re.compile(r"(?<![\w/])(?:tests/\w+/(?!mutants/)[\w/]+|grader/[\w/]+)\.py:\d+")
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def runs(text: str) -> dict[str, str]:
    """A transcript's runs: {its heading: what the learner read}."""
    return {m["title"]: m["text"] for m in _RUN.finditer(text)}


def failures(text: str) -> dict[str, str]:
    """One run's failures: {test: its message}, from pytest's failure sections."""
    body = _SECTION.split(text)
    found: dict[str, str] = {}
    for section in body:
        parts = _HEADER.split(section)
        for test, message in zip(parts[1::2], parts[2::2]):
            found[test] = message.strip()
    return found


def _numbers_alike(message: str) -> str:
    return re.sub(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", "<number>", message)


@pytest.fixture(scope="module", params=LESSONS, ids=lambda lesson: lesson.name)
def transcript(request) -> tuple[str, dict[str, str]]:
    lesson = request.param
    file = transcripts.path(lesson)
    assert file.is_file(), f"{file} is missing: python -m grader verify {lesson.name} --write-transcripts"
    text = file.read_text(encoding="utf-8")
    found = runs(text)
    assert len(found) == 1 + len(lesson.mutants()), f"{file}: a run per mutant and one for the stub"
    return lesson.name, found


def test_no_failure_is_told_twice_in_one_run(transcript):
    name, found = transcript
    twice = []
    for title, text in found.items():
        seen: dict[str, str] = {}
        for test, message in failures(text).items():
            if message.startswith("The same failure as "):
                continue
            first = seen.setdefault(_numbers_alike(message), test)
            if first != test:
                twice.append(f"{title}: {test} tells {first}'s failure again:\n{message}")
    assert not twice, f"{name}:\n" + "\n\n".join(twice)


def test_no_frame_of_the_tests_or_the_kit(transcript):
    name, found = transcript
    leaks = [f"{title}: {m.group()}" for title, text in found.items() for m in _KITS_FRAME.finditer(text)]
    assert not leaks, f"{name}:\n" + "\n".join(leaks)


def test_no_chained_exception_banner(transcript):
    name, found = transcript
    banners = [title for title, text in found.items() if any(banner in text for banner in _CHAINED)]
    assert not banners, f"{name}: chained errors in " + ", ".join(banners)


def test_the_checks_see_what_they_look_for():
    text = (
        "## mutants/x.py: wrong\n\n````text\n==== FAILURES ====\n____ test_a[1] ____\nscale(1) gave 3\n"
        "____ test_a[2] ____\nscale(2) gave 6\n____ test_b ____\ntests/01_basics/test_basics.py:12: in check\n"
        "During handling of the above exception, another exception occurred:\n"
        "tests/01_basics/mutants/x.py:3: in scale\n````\n"
    )
    ((title, run),) = runs(text).items()
    told = failures(run)
    assert title == "mutants/x.py: wrong" and list(told) == ["test_a[1]", "test_a[2]", "test_b"]
    assert _numbers_alike(told["test_a[1]"]) == _numbers_alike(told["test_a[2]"])
    assert [m.group() for m in _KITS_FRAME.finditer(run)] == ["tests/01_basics/test_basics.py:12"]
    assert _CHAINED[0] in run


def test_a_runs_messages_are_kept_and_what_differs_between_runs_is_not(tmp_path):
    output = "\n".join(
        [
            "..F.T                                                   [100%]",
            "=================================== FAILURES ===================================",
            "____ test_speed ____",
            f"{tmp_path}/exercises/01_basics/basics.py:3: in f",
            "tests/01_basics/mutants/no_clone.py:7: in f",
            "solutions/01_basics/basics.py:9: in g",
            "fit_polynomial(x, y, 2) for 100 samples of 5x^2 + 3",
            "f was 3.52x slower than the baseline (12.5 ms against 3.6 ms) on <object at 0x7f3a2b1c9e80>",
            "in /tmp/kata-verify-abc/001/home, DataLoader worker (pid 4242) exited",
            "KeyError: 140318443690128",
            "fit returned 0.6277624368667603 after 7 steps of a 1e-05 tolerance, for (1099511627776, 1)",
            "the folder holds ['ckpt.pt', 'tmpo52kcc9q.tmp'] and ds[13] returned array([[ 74, 245],",
            "       [ 85,   0]], dtype=uint8)",
            "f raised RuntimeError('The following operation failed in the TorchScript interpreter.\\nTraceback of "
            f'TorchScript:\\n  File "{tmp_path}/exercises/01_basics/basics.py", line 1, in f\').',
            "____ test_too_slow ____",
            "f is too slow: it took 81.9 times as long as g; it must take at most 5 times as long as g",
            "=============================== warnings summary ===============================",
            "  a warning about /usr/lib/python3/x.py:9",
            "===================================== TODO =====================================",
            "TODO: g (exercises/01_basics/basics.py:9) is not implemented yet  (1 test waits on it)",
            "=========================== short test summary info ============================",
            "FAILED tests/01_basics/test_basics.py::test_speed",
            "1 failed, 2 passed, 1 todo in 4.18s",
        ]
    )
    (tmp_path / "solutions/01_basics").mkdir(parents=True)
    (tmp_path / "solutions/01_basics/basics.py").touch()
    assert transcripts.messages(output, tmp_path).splitlines() == [
        "=================================== FAILURES ===================================",
        "____ test_speed ____",
        "exercises/01_basics/basics.py:3: in f",
        "exercises/01_basics/basics.py:7: in f",
        "exercises/01_basics/basics.py:9: in g",
        "fit_polynomial(x, y, 2) for 100 samples of 5x^2 + 3",
        "f was <ratio>x slower than the baseline (<time> against <time>) on <object at <address>>",
        "in <tmp>, DataLoader worker (pid <pid>) exited",
        "KeyError: <id>",
        "fit returned 0.<digits> after 7 steps of a 1e-05 tolerance, for (1099511627776, 1)",
        "the folder holds ['ckpt.pt', 'tmp<random>.tmp'] and ds[13] returned array(<values>)",
        "f raised RuntimeError('The following operation failed in the TorchScript interpreter. <traceback>').",
        # (a speed test's failure, which moves with the load, is left out)
        "===================================== TODO =====================================",
        "TODO: g (exercises/01_basics/basics.py:9) is not implemented yet  (1 test waits on it)",
    ]


def test_a_mutant_whose_messages_vary_is_named_with_why_and_not_recorded(tmp_path):
    steady, varying = tmp_path / "steady.py", tmp_path / "varying.py"
    steady.write_text('"""Returns one."""\n')
    varying.write_text('"""Picks a file at random."""\n\nVARIES = "it picks a file at random"\n')
    lesson = SimpleNamespace(name="06_dataloader", root=tmp_path)
    failing = "==== FAILURES ====\n____ test_a ____\nds[0] gave the wrong image\n"
    text = transcripts.transcript(lesson, "", [(steady, failing), (varying, failing)])
    found = runs(text)
    assert found["mutants/steady.py: Returns one."] == failing.strip()
    assert found["mutants/varying.py: Picks a file at random."] == (
        "(not recorded: what it prints varies from run to run: it picks a file at random)"
    )
