"""expect: points=0 state=stopped problem=SIGSEGV"""

import os
import signal


def add(a, b):
    os.kill(os.getpid(), signal.SIGSEGV)


def scale(x, k=2):
    return x * k
