"""expect: points=0 state=stopped problem=os._exit

add() ends the process with status 0 before any test has reported: nothing passed."""

import os


def add(a, b):
    os._exit(0)


def scale(x, k=2):
    return x * k
