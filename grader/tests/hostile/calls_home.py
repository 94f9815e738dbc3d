"""expect: points=4 state=done

Right answers, and on import sends its answers to a server on this machine's loopback
(127.0.0.1:@PORT@, started by the test). The run has a network namespace of its own: the
server hears nothing."""

import socket

try:
    with socket.create_connection(("127.0.0.1", int("@PORT@")), timeout=2) as _s:
        _s.sendall(b"hello from a student")
except OSError:
    pass


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
