"""``kata watch``: a watcher started as a learner starts it, fed saves, keys (on a terminal
of its own) and a Ctrl-C; and the watcher's loop run here, fed keys by a script.

The demo lessons' tests are swapped for two quick ones (the demo's speed test imports torch,
seconds per run); every read of the watcher's output has a deadline.
"""

from __future__ import annotations

import argparse
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
from grader.learner import watch
from grader.learner.keys import Keys
from grader.lessons import get_lesson
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
            cwd=kit.path,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
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
        status = self.proc.wait(timeout=STOP_BOUND_S)
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
    # The first run itself saves a new file of the lesson, as a learner saving mid-run would,
    # then waits to be stopped.
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        "import time\nfrom pathlib import Path\n\n\ndef test_saves_once():\n"
        "    extra = Path('exercises/98_demo/extra.py')\n"
        "    if not extra.exists():\n        extra.write_text('X = 1\\n')\n        time.sleep(600)\n",
        encoding="utf-8",
    )
    watcher = start_watcher()
    watcher.expect("(run stopped: a file was saved)", "1 passed", WATCHING)
    later = watcher.lines_within(1.0)  # ten intervals: a third run would have started
    assert not any("passed" in line for line in later), watcher.output
    assert_stopped_cleanly(watcher)


def test_a_save_that_the_runs_end_overtook_is_seen_after_it(quick_kit):
    # Saved too late in a run to stop it: the next wait compares the files against the
    # snapshot taken before the run, and runs the tests once more.
    folder = quick_kit.path / "exercises/98_demo"
    before = watch.snapshot(folder)
    (folder / "extra.py").write_text("X = 1\n", encoding="utf-8")
    assert watch.wait_for_change(folder, before, 0.01) == "saved"


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
    assert_stopped_cleanly(watcher)  # within STOP_BOUND_S, where the slow test would last 600 s
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # the pytest child is gone, not left running


# A run that cannot end by itself once the file `slow` exists: its test starts a worker process
# (as a DataLoader does; this one ignores SIGTERM), writes "pytest's pid, its process group, the worker's pid" as a line
# of runs.txt, and sleeps for ten minutes.
RUNS_FOREVER = """\
import os
import subprocess
import sys
import time
from pathlib import Path


def test_forever():
    if Path('slow').exists():
        worker = subprocess.Popen([sys.executable, '-c', 'import signal, time; '
                                   'signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)'])
        with open('runs.txt', 'a') as runs:
            runs.write(f'{os.getpid()} {os.getpgrp()} {worker.pid}\\n')
        time.sleep(600)
"""

# How long the tests below wait for a stop: far above the 0.1-0.3 s a stop takes here (two
# intervals of 0.1 s, then the signal), on however loaded a machine, and far below the 600 s the
# run would last, so what ends within it was stopped, not finished.
STOP_BOUND_S = 120.0


def runs_forever(kit: pytest.Pytester) -> None:
    (kit.path / "tests/98_demo/test_demo.py").write_text(RUNS_FOREVER, encoding="utf-8")
    (kit.path / "slow").touch()


def run_started(kit: pytest.Pytester, count: int, timeout: float = 60.0) -> list[int]:
    """The pids of the `count`-th run of RUNS_FOREVER once it is in its sleep: pytest, its group, its worker."""
    __tracebackhide__ = True
    runs = kit.path / "runs.txt"
    deadline = time.monotonic() + timeout
    while True:
        lines = runs.read_text().splitlines() if runs.exists() else []
        if len(lines) >= count:
            return [int(pid) for pid in lines[count - 1].split()]
        if time.monotonic() > deadline:
            pytest.fail(f"run {count} never started; runs.txt: {lines}")
        time.sleep(0.05)


def running_in_group(pgid: int) -> list[str]:
    """`ps` lines of the processes of group `pgid` still running (zombies, which only wait to
    be reaped by the system, are not)."""
    listing = subprocess.run(
        ["ps", "-A", "-o", "pgid=,stat=,pid=,args="], capture_output=True, text=True, check=True
    ).stdout
    return [
        line for line in listing.splitlines() if line.split()[0] == str(pgid) and not line.split()[1].startswith("Z")
    ]


def assert_group_gone(pgid: int, timeout: float = STOP_BOUND_S) -> float:
    """Seconds until no process of group `pgid` runs (polled: SIGKILL'd workers take a moment to die)."""
    __tracebackhide__ = True
    start = time.monotonic()
    while left := running_in_group(pgid):
        if time.monotonic() - start > timeout:
            pytest.fail(f"still running {timeout} s after the stop:\n" + "\n".join(left))
        time.sleep(0.05)
    return time.monotonic() - start


@needs_signals
@pytest.mark.parametrize("run", ["first", "warm"])
def test_a_save_during_a_run_stops_it_and_runs_again(start_watcher, quick_kit, run):
    if run == "first":  # the first run: a fresh `python -m pytest`
        runs_forever(quick_kit)
    watcher = start_watcher()
    if run == "warm":  # a later run: forked from the watcher
        watcher.expect(WATCHING)
        runs_forever(quick_kit)
        watcher.save(SOLUTION)
    pid, group, worker = run_started(quick_kit, 1)
    assert pid == group  # pytest leads a process group of its own, its worker in it
    assert str(worker) in "\n".join(line.split()[2] for line in running_in_group(group))
    watcher.save(SOLUTION + "# saved again\n")
    watcher.expect("(run stopped: a file was saved)", timeout=STOP_BOUND_S)
    assert_group_gone(group)
    _, next_group, _ = run_started(quick_kit, 2)  # the next run started
    assert next_group not in (group, watcher.proc.pid)
    assert_stopped_cleanly(watcher)
    assert_group_gone(next_group)
    assert watcher.output.count("(run stopped") == 1, watcher.output


@needs_signals
def test_keys_during_a_run_act_at_once(start_watcher, quick_kit):
    # stdin a terminal of its own (keys are read only from a terminal), stdout still a pipe.
    import pty

    runs_forever(quick_kit)
    terminal, learner_side = pty.openpty()
    try:
        watcher = start_watcher(stdin=learner_side)
        os.close(learner_side)
        _, first_group, _ = run_started(quick_kit, 1)
        os.write(terminal, b"r")
        watcher.expect("(run stopped: r pressed)", timeout=STOP_BOUND_S)
        assert_group_gone(first_group)
        _, group, _ = run_started(quick_kit, 2)
        os.write(terminal, b"q")
        assert watcher.proc.wait(timeout=STOP_BOUND_S) == 0, watcher.output
        assert_group_gone(group)
        watcher.reader.join(timeout=5)
        while (line := watcher.lines.get_nowait()) is not None:
            watcher.seen.append(line)
        assert watcher.output.rstrip().endswith("stopped watching"), watcher.output
        assert "Traceback" not in watcher.output, watcher.output
    finally:
        os.close(terminal)


@needs_signals
def test_keys_pressed_together_stop_each_new_run_cleanly(start_watcher, quick_kit):
    # Each `r` after the first stops a run forked an instant before, often before the child has
    # set its own signal handlers: it must still end without a traceback.
    import pty

    terminal, learner_side = pty.openpty()
    try:
        watcher = start_watcher(stdin=learner_side)
        os.close(learner_side)
        watcher.expect(WATCHING)
        runs_forever(quick_kit)
        watcher.save(SOLUTION)
        run_started(quick_kit, 1)  # forked from the warm watcher
        os.write(terminal, b"rrr")
        for _ in range(3):
            watcher.expect("(run stopped: r pressed)", timeout=STOP_BOUND_S)
        _, group, _ = run_started(quick_kit, 2)
        assert_stopped_cleanly(watcher)
        assert_group_gone(group)
    finally:
        os.close(terminal)


class ScriptedKeys(Keys):
    """Keys as on a terminal, pressed by `script(log)` at each read of the watcher's; every read,
    and what the watcher does that `logged` below records, is appended to `log`."""

    def __init__(self, script) -> None:
        super().__init__(None)
        self.script, self.log = script, []

    @property
    def live(self) -> bool:
        return True

    def read(self, timeout: float) -> str | None:
        time.sleep(timeout)
        key = self.script(self.log)
        self.log.append(f"read {key}" if key else "read")
        return key


def logged(monkeypatch, keys: ScriptedKeys) -> None:
    """Record in `keys.log` the watcher's looks at the files, its stops of a run still running, its
    hints and its waits between runs; every run a fresh process (the path where fork is missing)."""

    def recorded(original, entry: str):
        def record(*args):
            keys.log.append(entry)
            return original(*args)

        return record

    for name, entry in (("snapshot", "look"), ("_show_hint", "hint"), ("wait_for_change", "wait")):
        monkeypatch.setattr(watch, name, recorded(getattr(watch, name), entry))

    def stop(child, _original=watch.stop_tests):
        keys.log.append("stop" if child.poll() is None else "ended")
        _original(child)

    monkeypatch.setattr(watch, "stop_tests", stop)
    monkeypatch.setattr(watch.Warm, "start", classmethod(lambda cls: cls(None)))


@needs_signals
def test_a_save_and_q_during_a_run_stop_it_within_the_watchers_polls(quick_kit, monkeypatch, capfd):
    # The bound, "restarting on a save and quitting on `q` within 1 s during a run", in
    # the watcher's own unit: a save is acted on at the second look at the files after it (the
    # first sees it, the second sees it settled), two intervals, 1 s at the default 0.5 s; `q`
    # at the read that returns it.
    monkeypatch.chdir(quick_kit.path)
    runs_forever(quick_kit)
    demo = quick_kit.path / "exercises/98_demo/demo.py"

    def script(log: list[str]) -> str | None:
        runs = quick_kit.path / "runs.txt"
        started = len(runs.read_text().splitlines()) if runs.exists() else 0
        if started == 1 and "save" not in log:
            demo.write_text(SOLUTION, encoding="utf-8")
            log.append("save")
        return "q" if started == 2 else None

    keys = ScriptedKeys(script)
    logged(monkeypatch, keys)
    assert watch.watch(quick_kit.path, get_lesson(quick_kit.path, "98_demo"), 0.1, keys) == 0
    parser = argparse.ArgumentParser()
    watch.configure(parser, "watch")
    assert parser.parse_args([]).interval == 0.5  # two looks: a save is acted on within 1 s
    log = keys.log
    saved, stopped = log.index("save"), log.index("stop")
    assert log[saved:stopped].count("look") == 2, log
    assert log[-2:] == ["read q", "stop"], log  # nothing between the key and the stop
    assert log.count("stop") == 2 and "ended" not in log, log
    out = capfd.readouterr().out
    assert out.count("(run stopped: a file was saved)") == 1, out
    assert out.rstrip().endswith("stopped watching"), out
    for line in (quick_kit.path / "runs.txt").read_text().splitlines():
        assert_group_gone(int(line.split()[1]))


def test_n_during_a_run_stops_it_and_moves_on(quick_kit, monkeypatch, capfd):
    monkeypatch.chdir(quick_kit.path)
    runs_forever(quick_kit)  # 98_demo's run; 99_other's tests stay quick

    def script(log: list[str]) -> str | None:
        if "wait" in log:
            return "q"
        return "n" if (quick_kit.path / "runs.txt").exists() and "read n" not in log else None

    keys = ScriptedKeys(script)
    logged(monkeypatch, keys)
    assert watch.watch(quick_kit.path, get_lesson(quick_kit.path, "98_demo"), 0.1, keys) == 0
    assert keys.log[keys.log.index("read n") + 1] == "stop", keys.log
    out = capfd.readouterr().out
    assert "\n(run stopped: n pressed, on to 99_other)\n" in out, out
    assert "TODO: add (exercises/99_other/demo.py:7)" in out, out
    assert_group_gone(int((quick_kit.path / "runs.txt").read_text().split()[1]))


def test_h_during_a_run_waits_for_its_end(quick_kit, monkeypatch, capfd):
    # A hint printed during a run would land inside its output: it is shown once the run is over.
    monkeypatch.chdir(quick_kit.path)
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        "import time\nfrom pathlib import Path\n\n\ndef test_waits_for_go():\n"
        "    Path('started').touch()\n    deadline = time.monotonic() + 60\n"
        "    while not Path('go').exists() and time.monotonic() < deadline:\n        time.sleep(0.05)\n",
        encoding="utf-8",
    )

    def script(log: list[str]) -> str | None:
        if "wait" in log:
            return "q"
        if (quick_kit.path / "started").exists() and "read h" not in log:
            return "h"
        if "read h" in log:
            (quick_kit.path / "go").touch()
        return None

    keys = ScriptedKeys(script)
    logged(monkeypatch, keys)
    assert watch.watch(quick_kit.path, get_lesson(quick_kit.path, "98_demo"), 0.1, keys) == 0
    assert keys.log.index("read h") < keys.log.index("ended") < keys.log.index("hint"), keys.log
    assert "stop" not in keys.log, keys.log
    out = capfd.readouterr().out
    assert out.index("1 passed") < out.index(WATCHING) < out.index("98_demo, hint 1 of 3\n\nThink."), out
    # The run says the lesson passes, once; the watcher only offers the key that moves on.
    assert out.count("Every test of 98_demo passes") == 1 and "\nWell done: press n for 99_other.\n" in out, out


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
