"""expect: points=0 state=broken problem=wrote to the tests' channel
in-process: points=0 state=tampered problem=twice

Both functions are wrong; passes for every test are written to every open file descriptor,
in the hope that one of them is where the results go."""

import json
import os

for _name in ("test_add", "test_add_negative", "test_scale"):
    _line = json.dumps({"test": {"nodeid": f"tests/98_demo/test_demo.py::{_name}", "outcome": "passed",
                                 "message": "", "points": 100, "public": True, "speed": []}}) + "\n"
    for _fd in range(3, 256):
        try:
            os.write(_fd, _line.encode())
        except OSError:
            pass


def add(a, b):
    return 0


def scale(x, k=2):
    return x
