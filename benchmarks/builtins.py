"""The reference answers against the PyTorch built-ins they reimplement, at one thread.

    python benchmarks/builtins.py [--repeats 50]

Each pair runs on the same input, interleaved (built-in, reference, built-in, ...) after
warm-up calls, at one thread: the method of every speed test in the kit (grader/testing/
speed.py; why each step: docs/MEASUREMENTS.md, "How a speed test measures"). Prints the
time of each (its minimum) and how many times slower the reference is. Only batch_gather
has a target (within 1.5x of torch.gather): a fast implementation is the point of lesson 05.
The others teach something else (numerical stability, the bits of bfloat16), and their
lessons' speed tests only ask them to stay vectorised (stable_softmax at most 5x
torch.softmax).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.testing.speed import minimum_times  # noqa: E402 (after the kit's root is on sys.path)

TARGETS = {"batch_gather": 1.5}


def solution(lesson: str, module: str):
    return importlib.import_module(f"solutions.{lesson}.{module}")


def pairs():
    """(name, input shape, the built-in, the reference), each a no-argument call."""
    g = torch.Generator().manual_seed(0)
    stable = solution("07_stable", "stable")
    gather = solution("05_vectorize", "gather")
    internals = solution("10_internals", "internals")

    x = torch.randn(512, 1024, generator=g)  # the size of lesson 07's speed test
    yield "stable_softmax", "(512, 1024)", lambda: torch.softmax(x, -1), lambda: stable.stable_softmax(x)
    yield "logsumexp", "(512, 1024)", lambda: torch.logsumexp(x, -1), lambda: stable.logsumexp(x)

    tensor = torch.randn(512, 1000, 16, generator=g)  # the size of lesson 05's speed test
    indices = torch.randint(-1000, 1000, (512,), generator=g)

    def with_gather():
        # torch.gather wants an index of the output's shape without negative values: making
        # one is part of doing batch_gather's job with it (the reference also checks the range).
        return torch.gather(tensor, 1, (indices % 1000).view(512, 1, 1).expand(512, 1, 16)).squeeze(1)

    yield "batch_gather", "(512, 1000, 16), indices (512,)", with_gather, lambda: gather.batch_gather(tensor, indices)

    bits = torch.randn(1_000_000, generator=g) * 1e3
    yield (
        "round_to_bfloat16",
        "(1000000,)",
        lambda: bits.to(torch.bfloat16).float(),
        lambda: internals.round_to_bfloat16(bits),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=50, help="timed calls of each (default 50)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, minimum of {args.repeats} interleaved calls each\n")
    print(f"{'reference':18} {'input':32} {'built-in':>10} {'reference':>10} {'slower':>8}  target")
    missed = []
    for name, shape, builtin, reference in pairs():
        t_builtin, t_reference = minimum_times(builtin, reference, repeats=args.repeats, warmup=3)
        ratio = t_reference / t_builtin
        target = TARGETS.get(name)
        verdict = "" if target is None else f"<= {target:g}x" + ("  MISSED" if ratio > target else "")
        if target is not None and ratio > target:
            missed.append(name)
        print(f"{name:18} {shape:32} {t_builtin * 1e3:7.3f} ms {t_reference * 1e3:7.3f} ms {ratio:7.2f}x  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
