"""``kata watch``: a watcher started as a learner starts it, fed saves and a Ctrl-C.

The demo lessons' tests are swapped for two quick ones (the demo's speed test imports torch,
seconds per run); every read of the watcher's output has a deadline.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from grader.cli import main
from grader.tests.kits import SOLUTION

WATCHING = "watching exercises/98_demo/ for changes (Ctrl-C to stop)"

BROKEN = SOLUTION.replace("def add(a, b):", "def add(a, b)")

needs_signals = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT, which Windows lacks")


class Watcher:
    """``python -m grader watch 98_demo --interval 0.1`` in the kit, its output read by a thread."""

    def __init__(self, kit: pytest.Pytester, stdin=None) -> None:
        self.kit = kit
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader", "watch", "98_demo", "--interval", "0.1"],
            cwd=kit.path, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    @property
    def output(self) -> str:
        return "".join(self.seen)

    def _next_line(self, deadline: float) -> str | None:
        """The next line; "" when none came by `deadline`, None once the watcher has exited."""
        try:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            return ""
        if line is not None:
            self.seen.append(line)
        return line

    def expect(self, *fragments: str, timeout: float = 60.0) -> None:  # a cap: a busy CI machine is slow
        """Read until each fragment has appeared on a line, in this order."""
        __tracebackhide__ = True
        deadline = time.monotonic() + timeout
        for fragment in fragments:
            while True:
                line = self._next_line(deadline)
                if line == "":
                    pytest.fail(f"no line with {fragment!r} within {timeout} s; output:\n{self.output}")
                if line is None:
                    pytest.fail(f"the watcher exited before printing {fragment!r}; output:\n{self.output}")
                if fragment in line:
                    break

    def lines_within(self, seconds: float) -> list[str]:
        """The lines printed in the next `seconds`."""
        deadline, got = time.monotonic() + seconds, []
        while line := self._next_line(deadline):
            got.append(line)
        if line is None:
            pytest.fail(f"the watcher exited by itself; output:\n{self.output}")
        return got

    def save(self, text: str) -> None:
        (self.kit.path / "exercises/98_demo/demo.py").write_text(text, encoding="utf-8")

    def interrupt(self, signum: int = signal.SIGINT) -> int:
        """Ctrl-C (or another signal): to the watcher; its exit status, once all its output is read."""
        self.proc.send_signal(signum)
        status = self.proc.wait(timeout=15)
        self.reader.join(timeout=5)
        while (line := self.lines.get_nowait()) is not None:
            self.seen.append(line)
        return status

    def close(self) -> None:
        if self.proc.poll() is None:  # a failed test: stop it the way a closing terminal would
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def start_watcher(quick_kit: pytest.Pytester):
    watchers: list[Watcher] = []

    def start(stdin=None) -> Watcher:
        watchers.append(Watcher(quick_kit, stdin))
        return watchers[-1]

    yield start
    for watcher in watchers:
        watcher.close()


def assert_stopped_cleanly(watcher: Watcher, signum: int = signal.SIGINT) -> None:
    __tracebackhide__ = True
    assert watcher.interrupt(signum) == 0, watcher.output
    assert watcher.output.rstrip().endswith("stopped watching"), watcher.output
    assert "Traceback" not in watcher.output, watcher.output


@needs_signals
def test_runs_again_after_a_save_and_stops_on_ctrl_c(start_watcher):
    watcher = start_watcher()
    watcher.expect("TODO: add (exercises/98_demo/demo.py:7)", "Next: open exercises/98_demo/demo.py:7", WATCHING)
    watcher.save(SOLUTION)
    watcher.expect("3 passed", WATCHING)
    assert_stopped_cleanly(watcher)


@needs_signals
def test_a_syntax_error_keeps_it_watching(start_watcher):
    watcher = start_watcher()
    watcher.expect(WATCHING)
    watcher.save(BROKEN)
    watcher.expect("exercises/98_demo/demo.py:4: SyntaxError", WATCHING)
    assert watcher.proc.poll() is None
    watcher.save(SOLUTION)
    watcher.expect("3 passed", WATCHING)
    assert_stopped_cleanly(watcher)


@needs_signals
def test_a_save_during_a_run_gives_exactly_one_more_run(start_watcher, quick_kit):
    # The first run itself saves a new file of the lesson, as a learner saving mid-run would.
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        "from pathlib import Path\n\n\ndef test_saves_once():\n"
        "    extra = Path('exercises/98_demo/extra.py')\n"
        "    if not extra.exists():\n        extra.write_text('X = 1\\n')\n",
        encoding="utf-8",
    )
    watcher = start_watcher()
    watcher.expect("1 passed", WATCHING, "1 passed", WATCHING)
    later = watcher.lines_within(1.0)  # ten intervals: a third run would have started
    assert not any("passed" in line for line in later), watcher.output
    assert_stopped_cleanly(watcher)


@needs_signals
def test_later_runs_are_forked_from_the_warm_watcher(start_watcher, quick_kit):
    # Each run's test module writes its parent and the command line its interpreter started
    # with: the first run is a fresh `python -m pytest`, every later one the watcher itself,
    # forked (so it does not import torch again), and still a child the watcher waits for.
    seen = quick_kit.path / "seen.txt"
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        "import json, os, sys\n\n"
        f"open({str(seen)!r}, 'a').write(json.dumps([os.getppid(), sys.orig_argv[1:]]) + '\\n')\n\n\n"
        "def test_add(lesson):\n    assert lesson.add(2, 3) == 5\n",
        encoding="utf-8",
    )
    watcher = start_watcher()
    watcher.expect("TODO: add (exercises/98_demo/demo.py:7)", WATCHING)
    watcher.save(BROKEN)
    watcher.expect("exercises/98_demo/demo.py:4: SyntaxError", WATCHING)
    watcher.save(SOLUTION)  # each run sees the file as saved: nothing of the learner's is kept
    watcher.expect("1 passed", WATCHING)
    runs = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [parent for parent, _ in runs] == [watcher.proc.pid] * 3, watcher.output
    assert runs[0][1][:2] == ["-m", "pytest"], runs
    assert [argv for _, argv in runs[1:]] == [watcher.proc.args[1:]] * 2, runs
    assert "Warning" not in watcher.output, watcher.output
    assert_stopped_cleanly(watcher)


@needs_signals
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_ctrl_c_while_it_warms_up_stops_cleanly(start_watcher, signame):
    # An interrupt raised inside torch's import used to abort it ("terminate called after
    # throwing an instance of 'pybind11::error_already_set'", exit -6) or kill it (exit -2),
    # one time in three.
    for pause in (0.3, 0.8):
        watcher = start_watcher()
        watcher.expect(WATCHING)  # the first run is over: it imports torch now, for 2-5 s
        time.sleep(pause)
        assert_stopped_cleanly(watcher, getattr(signal, signame))


@needs_signals
@pytest.mark.parametrize("run", ["first", "warm"])
def test_ctrl_c_during_a_run_stops_the_tests_too(start_watcher, quick_kit, run):
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        "import os\nimport time\nfrom pathlib import Path\n\n\ndef test_slow():\n"
        "    if Path('slow').exists():\n"
        "        Path('pytest.pid').write_text(str(os.getpid()))\n        time.sleep(30)\n",
        encoding="utf-8",
    )
    pid_file = quick_kit.path / "pytest.pid"
    if run == "first":
        (quick_kit.path / "slow").touch()
    watcher = start_watcher()
    if run == "warm":
        watcher.expect("1 passed", WATCHING)
        (quick_kit.path / "slow").touch()
        watcher.save(SOLUTION)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, f"the tests never started; output:\n{watcher.output}"
        time.sleep(0.05)
    started = time.monotonic()
    assert_stopped_cleanly(watcher)
    assert time.monotonic() - started < 5, "the watcher waited for the slow test instead of stopping it"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # the pytest child is gone, not left running


def test_once_exits_with_pytests_status(quick_kit):
    result = quick_kit.run(sys.executable, "-m", "grader", "watch", "98_demo", "--once")
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["TODO: add (exercises/98_demo/demo.py:7)*"])
    assert "watching" not in result.stdout.str()
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION, encoding="utf-8")
    result = quick_kit.run(sys.executable, "-m", "grader", "watch", "98", "--once")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["3 passed*"])


def test_an_unknown_lesson_names_the_lessons(kit, monkeypatch, capsys):
    monkeypatch.chdir(kit.path)
    assert main(["watch", "nope"]) == 2
    assert "no lesson 'nope'; the lessons are: 98_demo, 99_other" in capsys.readouterr().err


def test_without_a_lesson_when_every_lesson_passes_it_asks_for_one(quick_kit, monkeypatch, capsys):
    monkeypatch.chdir(quick_kit.path)
    for name in ("98_demo", "99_other"):
        (quick_kit.path / f"exercises/{name}/demo.py").write_text(SOLUTION, encoding="utf-8")
    assert main(["watch", "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: every lesson passes") and "`kata watch 98_demo`" in err, err
    assert "The lessons are: 98_demo, 99_other" in err


def test_without_a_lesson_it_watches_the_first_unfinished(quick_kit, monkeypatch, capfd):
    monkeypatch.chdir(quick_kit.path)
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION, encoding="utf-8")
    assert main(["watch", "--once"]) == 1
    assert "TODO: add (exercises/99_other/demo.py:7)" in capfd.readouterr().out


@pytest.mark.parametrize("interval", ["0", "-1", "soon"])
def test_interval_must_be_positive(kit, monkeypatch, capsys, interval):
    monkeypatch.chdir(kit.path)
    with pytest.raises(SystemExit) as exit_info:
        main(["watch", "98_demo", "--interval", interval])
    assert exit_info.value.code == 2
    assert "expected a number of seconds above 0" in capsys.readouterr().err
