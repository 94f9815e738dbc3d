"""expect: points=0 state=in progress
in-process: points=4 state=done

Every answer is worked out in a child process that the kernel reaps by itself (SIGCHLD
ignored), as a student would to hide a slow loop: such a child's CPU time adds to no process's,
and its ops are recorded only in its own copy of the recorder. In the student's own process
that is merely a slow right answer. By default the code's process can make threads but no
process (grader/grading/seccomp.py): the fork fails, and so does every call."""

import os
import pickle
import signal

signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def _in_a_child(work):
    read, write = os.pipe()
    if os.fork() == 0:
        os.write(write, pickle.dumps(work()))
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        return pickle.loads(answer.read())


def add(a, b):
    return _in_a_child(lambda: a + b)


def scale(x, k=2):
    return _in_a_child(lambda: x * k)
