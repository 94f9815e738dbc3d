"""What one call of the code under test costs with the code in another process (--kata-remote).

    python benchmarks/remote_call.py [--calls 2000] [--rounds 7]

Starts the code's process as a learner's --kata-remote run does (`Connection.spawn`), imports
lesson 07's answer there and here, and times `logsumexp(x)` for a 4x5 float32 x: rounds of
`--calls` calls in this process and over the connection, interleaved, on one thread. Prints the
least time per call of each and their ratio: the protocol's cost on the smallest call a test
makes (the message both ways, S's work around the call).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.learners_code import load_file  # noqa: E402 (after the kit's root is on sys.path)
from grader.remote.connection import Connection  # noqa: E402 (after the kit's root is on sys.path)
from grader.remote.loading import load  # noqa: E402 (after the kit's root is on sys.path)


def per_call(fn, x, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(x)
    return (time.perf_counter() - start) / calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    source = ROOT / "solutions" / "07_stable" / "stable.py"
    here = load_file("_bench_stable", source)
    connection = Connection.spawn(ROOT)
    connection.timing = False  # no speed test here: the protocol's cost is not calibrated
    try:
        there = load(connection, ROOT, "07_stable", "stable", "solutions", None, None, source)
        x = torch.randn(4, 5, generator=torch.Generator().manual_seed(0))
        torch.testing.assert_close(there.logsumexp(x), here.logsumexp(x))
        best = {"in-process": float("inf"), "remote": float("inf")}
        for _ in range(args.rounds):
            best["in-process"] = min(best["in-process"], per_call(here.logsumexp, x, args.calls))
            best["remote"] = min(best["remote"], per_call(there.logsumexp, x, args.calls))
    finally:
        connection.close()
    print(f"logsumexp(x), x 4x5 float32, least of {args.rounds} rounds of {args.calls} calls, one thread:")
    for mode, seconds in best.items():
        print(f"  {mode}: {seconds * 1e6:.1f} us per call")
    print(f"  remote / in-process: {best['remote'] / best['in-process']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
