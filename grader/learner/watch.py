"""``kata watch [LESSON]``: re-run a lesson's tests every time a file of it is saved.

The contract:

- The tests run as ``python -m pytest exercises/NN_topic -q -p no:cacheprovider`` in the kit
  root, in a child process whose output goes straight to the terminal (the plugin prints the
  TODO and "Next:" lines itself). After each run one line says what is being watched.
- Every ``--interval`` seconds, during a run too, the watcher takes a snapshot (path,
  mtime_ns, size) of every ``*.py`` under ``exercises/NN_topic/``. A change counts as a save
  once the snapshot has stayed the same for one more interval (editors save in several steps).
  A save runs the tests again; a save during a run stops it there and then, prints
  "(run stopped: a file was saved)" and starts the next run. A save that the run's end
  overtook is compared against the snapshot taken before the run, so it still triggers one
  more run.
- Nothing the learner writes stops the watcher: a file that does not parse is reported by the
  plugin (BROKEN) and the watcher waits for the next save.
- The tests run in a process group of their own (forked: a session of their own; fresh: a
  subprocess started in a new session, or a new process group on Windows). Every stop of a
  run, whatever asked for it, signals the whole group (SIGTERM, then SIGKILL after
  STOP_GRACE_S), waits for the tests' process, then kills what is left of the group: nothing
  is left running, DataLoader workers included.
- Ctrl-C (or SIGTERM, or the terminal closing) stops the running tests, prints "stopped
  watching" and exits 0, without a traceback. Only the watcher gets the terminal's Ctrl-C (the
  tests are in their own group), so the child never prints a traceback of its own for an
  interrupt that lands while it is still starting up.
- When every test passes, the run says so (grader.plugin.summary) and, on a terminal, the watcher
  offers the key that moves on to the next lesson. On a terminal, keys act at
  once, during a run too (no Enter): ``r`` runs the tests again, ``n`` moves on to the next
  lesson (a run they stop ends with "(run stopped: r pressed)", or "(run stopped: n pressed,
  on to NN_topic)"), ``q`` quits (stopping a run, then "stopped watching"), ``h`` shows the
  lesson's next hint level. An ``h`` pressed during a run, and an ``n`` on the last lesson,
  wait for the run's end: their text would land inside the run's output. Off a terminal, no
  keys are read; saves still stop a run.
- ``--once`` runs the tests once and exits with pytest's status, for scripts.
- Later runs start warm. After the first run (a fresh process), while the learner reads its
  result, the watcher imports what runs need once (torch, the torch modules it imports lazily
  for optimizers and gradcheck, pytest, hypothesis) and then forks every run from itself:
  the same command line and output, without paying for ``import torch`` again (the figures are
  in docs/PERFORMANCE.md). A run is checked for its end every END_POLL_S (its output reaches
  the terminal at once: the check only readies the watcher for the next save). The learner's
  modules are never imported in the watcher, so each run sees the files as saved. Where
  os.fork is missing (Windows), or the imports fail, every run is a fresh process.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader import forking, signals
from grader.lessons import KitError, Lesson, all_lessons, get_lesson
from grader.runs import pytest_args

CLEAR_SCREEN = "\033[2J\033[H"
STOP_GRACE_S = 5.0  # how long stopped tests get to exit before they are killed
STOP_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
END_POLL_S = 0.05  # how often a run is checked for its end (its output is the learner's at once)

Snapshot = frozenset  # of (path, mtime_ns, size), one per *.py file


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "lesson", metavar="LESSON", nargs="?",
        help="lesson name or number, e.g. 03_broadcast, 03 or broadcast "
        "(default: the one `kata next` picks: in progress, else the first not started)",
    )
    parser.add_argument(
        "--interval", type=_positive_seconds, default=0.5, metavar="SECONDS",
        help="how often to look for saved files (default: 0.5)",
    )
    parser.add_argument("--once", action="store_true", help="run the tests once and exit with pytest's status")
    parser.epilog = (parser.epilog or "examples:") + (
        "\n  kata watch 07 --interval 2  look for saves every 2 s (a slow network drive)"
        "\n  kata watch 07 --once        run once, exit 0 when every test passes (for scripts)"
    )


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, e.g. 0.5; got {text!r}")
    return seconds


def run(args: argparse.Namespace, root: Path) -> int:
    lesson = pick_lesson(root, args.lesson)
    folder = lesson.dir("exercises")
    if not folder.is_dir():
        raise KitError(
            f"lesson {lesson.name} has no folder exercises/{lesson.name}/ to watch; "
            f"`kata reset {lesson.name}` puts the untouched stubs back"
        )
    with _stop_on_termination():
        if args.once:
            return run_tests(root, lesson)
        return watch(root, lesson, args.interval)


def pick_lesson(root: Path, name: str | None) -> Lesson:
    """The lesson named, or the one `kata next` picks (in progress, else the first not started)."""
    if name is not None:
        return get_lesson(root, name)
    from grader.learner.next import choose

    lesson = choose(root)
    if lesson is not None:
        return lesson
    names = [lesson.name for lesson in all_lessons(root)]
    if not names:
        raise KitError(f"no lessons in {root / 'exercises'}: there is nothing to watch")
    raise KitError(f"every lesson passes its tests; name the lesson to watch, e.g. `kata watch {names[0]}`. "
                   f"The lessons are: {', '.join(names)}")


# --- the loop ---------------------------------------------------------------------------------


def watch(root: Path, lesson: Lesson, interval: float, keys: Keys | None = None) -> int:
    """Run the tests, then again after every save, until Ctrl-C or ``q``; returns 0."""
    keys = keys or Keys.of_terminal()
    warm: Warm | None = None
    hint_level = 0
    held: list[str] = []  # keys pressed during a run that wait for its end
    try:
        while True:
            folder = lesson.dir("exercises")
            before = snapshot(folder)
            after = next_lesson(root, lesson)
            child = start_tests(root, lesson, warm)
            try:
                event = follow(child, folder, before, interval, keys, ("r", "q", "n") if after else ("r", "q"), held)
            finally:
                _stop(child)
            stopped = event is not None  # by a save or a key, not ended by itself
            if not stopped:
                if child.returncode == 0 and keys.live:  # the run itself said that every test passes
                    offer = f"press n for {after.name}" if after else "that was the last lesson"
                    print(f"\nWell done: {offer}.", flush=True)
                print(f"\nwatching exercises/{lesson.name}/ for changes (Ctrl-C to stop)", flush=True)
                if keys.live:
                    print("keys: h next hint, n next lesson, r run again, q quit", flush=True)
                if warm is None:
                    warm = Warm.start()  # a save meanwhile is seen at the next poll
                while True:
                    event = held.pop(0) if held else wait_for_change(folder, before, interval, keys)
                    if event == "h":
                        hint_level = _show_hint(lesson, hint_level + 1)
                        continue
                    if event == "n" and after is None:
                        print("That was the last lesson; q quits.", flush=True)
                        continue
                    break
            if event == "q":
                _say_stopped()
                return 0
            why = f"(run stopped: {STOPPED_BY[event].format(after=after)})" if stopped else ""
            if event == "n":
                lesson, hint_level, held = after, 0, []
            if sys.stdout.isatty():
                print(CLEAR_SCREEN, end="", flush=True)
            elif why:
                why = f"\n{why}"  # the stopped run may have left a line half printed
            if why:
                print(why, flush=True)
    except KeyboardInterrupt:
        _say_stopped()
        return 0
    finally:
        keys.close()


# The line before the next run, by what stopped the last one.
STOPPED_BY = {"saved": "a file was saved", "r": "r pressed", "n": "n pressed, on to {after.name}"}


def follow(child: subprocess.Popen | Forked, folder: Path, seen: Snapshot, interval: float, keys: Keys,
           acting: tuple[str, ...], held: list[str]) -> str | None:
    """Watch the files and the keys while the tests run: None once they end by themselves, or
    the event that is to stop them, as soon as it happens: a save that has settled ("saved", as
    wait_for_change sees one) or a key of `acting`. Other keys the watcher acts on are added
    to `held`, for after the run (a hint printed now would land inside the tests' output)."""
    last, look_at = seen, time.monotonic() + interval
    while child.poll() is None:
        key = keys.read(min(END_POLL_S, max(look_at - time.monotonic(), 0.0)))
        if key in acting:
            return key
        if key in ("h", "n"):
            held.append(key)
        if time.monotonic() >= look_at:
            now = snapshot(folder)
            if now == last and now != seen:
                return "saved"
            last, look_at = now, time.monotonic() + interval
    return None


def next_lesson(root: Path, lesson: Lesson) -> Lesson | None:
    """The lesson after `lesson`, in the kit's order, or None after the last."""
    names = [other.name for other in all_lessons(root)]
    later = names[names.index(lesson.name) + 1:] if lesson.name in names else []
    return get_lesson(root, later[0]) if later else None


def _show_hint(lesson: Lesson, level: int) -> int:
    """Show hint `level` (the last one past the end); the level shown."""
    from grader.learner.hint import show_hint

    print()
    try:
        return show_hint(lesson, level, quiet=True)
    except KitError as exc:
        print(exc, flush=True)
        return level - 1


class Keys:
    """Single keys from the terminal, read without Enter while the watcher waits (cbreak mode,
    restored by ``close``); ``live`` is False where stdin is not a terminal: no keys then."""

    def __init__(self, fd: int | None) -> None:
        self.fd, self.saved = fd, None
        if fd is not None:
            import termios
            import tty

            self.saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)  # keys at once, no echo; Ctrl-C still interrupts

    @classmethod
    def of_terminal(cls) -> Keys:
        try:
            interactive = os.name == "posix" and sys.stdin is not None and sys.stdin.isatty()
        except ValueError:  # a closed stdin
            interactive = False
        return cls(sys.stdin.fileno() if interactive else None)

    @property
    def live(self) -> bool:
        return self.fd is not None

    def read(self, timeout: float) -> str | None:
        """A key pressed within `timeout` seconds, or None (after sleeping, where there are no keys)."""
        if self.fd is None:
            time.sleep(timeout)
            return None
        import select

        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(self.fd, 1)
        return data.decode(errors="replace").lower() if data else None

    def close(self) -> None:
        if self.saved is not None:
            import termios

            with contextlib.suppress(termios.error):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            self.saved = None


def _say_stopped() -> None:
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        print("\nstopped watching", flush=True)


def snapshot(folder: Path) -> Snapshot:
    """(path, mtime_ns, size) of every *.py under `folder`; a file that vanishes meanwhile is left out."""
    entries = set()
    for path in folder.rglob("*.py"):
        try:
            stat = path.stat()
        except OSError:  # an editor's temporary file, deleted between listing and stat
            continue
        entries.add((str(path), stat.st_mtime_ns, stat.st_size))
    return Snapshot(entries)


def wait_for_change(folder: Path, seen: Snapshot, interval: float, keys: Keys | None = None) -> str:
    """Poll until the files differ from `seen` and then stay the same for one more interval
    ("saved"), or a key the watcher acts on is pressed ("h", "n", "r", "q")."""
    last = seen
    while True:
        key = keys.read(interval) if keys else time.sleep(interval)
        if key in ("h", "n", "r", "q"):
            return key
        now = snapshot(folder)
        if now == last and now != seen:
            return "saved"
        last = now


# --- the tests, in a child process ----------------------------------------------------------


def lesson_args(lesson: Lesson, tree: str = "exercises") -> list[str]:
    """pytest's arguments for a lesson's tests against `tree`, as the watcher runs them."""
    return pytest_args(f"{tree}/{lesson.name}")


def pytest_command(lesson: Lesson) -> list[str]:
    return [sys.executable, "-m", "pytest", *lesson_args(lesson)]


def start_tests(root: Path, lesson: Lesson, warm: Warm | None = None) -> subprocess.Popen | Forked:
    """Start the lesson's tests, output to our terminal, in a process group of their own:
    forked from `warm` once it is ready, else a fresh process."""
    sys.stdout.flush()  # our lines first, then the child's
    sys.stderr.flush()
    if warm is not None and warm.ready:
        return warm.fork(root, lesson_args(lesson))
    if os.name == "posix":
        return subprocess.Popen(pytest_command(lesson), cwd=root, start_new_session=True)
    return subprocess.Popen(pytest_command(lesson), cwd=root, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)


def run_tests(root: Path, lesson: Lesson, warm: Warm | None = None) -> int:
    """Run the lesson's tests to their end; pytest's exit status. Never leaves them running."""
    child = start_tests(root, lesson, warm)
    try:
        return child.wait()
    finally:
        _stop(child)


class Warm:
    """This process, once it has imported what runs need: each run is a child forked from it."""

    def __init__(self, threads: int | None) -> None:
        self.threads = threads  # torch's, as a fresh process has it (the warm-up set one); None: not warm

    @property
    def ready(self) -> bool:
        return self.threads is not None

    @classmethod
    def start(cls) -> Warm:
        if not hasattr(os, "fork"):
            return cls(None)
        # A stop now ends the watcher at once: the tests are not running, and an interrupt
        # raised inside torch's import would abort it.
        with signals.ending_at_once(_say_stopped, 0, ("SIGINT", "SIGTERM", "SIGHUP")):
            try:
                return cls(forking.preload(grading=False))
            except Exception:  # noqa: BLE001 - only a speed-up: fresh processes will show what is wrong
                return cls(None)

    def fork(self, root: Path, args: list[str]) -> Forked:
        # A stop sent to the child before it has set its own handlers (a second `r` read at
        # once) waits until it has: the watcher's would raise KeyboardInterrupt in it.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        pid = os.fork()
        if pid:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            return Forked(pid)
        forking.end_child(lambda: self._run(root, args, mask))

    def _run(self, root: Path, args: list[str], mask) -> int:
        """In the child: `python -m pytest ARGS` from the kit's root, in a session of its own."""
        os.setsid()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)  # the watcher's turn them into Ctrl-C
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.chdir(root)
        import pytest
        import torch

        torch.set_num_threads(self.threads)
        return pytest.main([*args, *forking.PRELOADED])


class Forked:
    """A forked run, with what _stop needs of subprocess.Popen: pid, poll, wait."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None and self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        deadline = time.monotonic() + (timeout or 0)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pytest (pid {self.pid})", timeout)
            time.sleep(0.05)
        return self.returncode


def _stop(child: subprocess.Popen | Forked) -> None:
    """Stop the child's process group if it is still running (Ctrl-C, a save, a key) and reap
    it; then kill what is left of its group (a worker process that outlived it)."""
    if child.poll() is not None:
        return
    _signal_group(child, signal.SIGTERM)
    try:
        child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        _signal_group(child, getattr(signal, "SIGKILL", signal.SIGTERM))
        child.wait()
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):  # (none left: the usual case)
            os.killpg(child.pid, signal.SIGKILL)


def _signal_group(child: subprocess.Popen | Forked, signum: int) -> None:
    if os.name != "posix":
        child.terminate()
        return
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:  # it exited meanwhile, or (forked an instant ago) has no group of its own yet
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signum)


def _stop_on_termination():
    """SIGTERM and SIGHUP (the terminal closed) stop the watcher as Ctrl-C does, so that the
    tests it runs, which are in a process group of their own, are stopped too."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    return signals.signals_handled(interrupt, ("SIGTERM", "SIGHUP"))
