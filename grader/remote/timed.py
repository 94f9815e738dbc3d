"""Timed calls: what a speed test measures of the code under test in the code process (S).

While a speed test's clock is timing (grader.remote.code_clock), a call of a stand-in function
(grader.remote.stand_in) is a timed call (`call`). Its inputs get fresh values (each storage's
own values in a random order: memoising cannot help) and go into memory S shares
(grader.remote.shared), written ahead (`run`). It is timed by the CPU time S's processes spend
(grader.remote.cputime), less the protocol's own cost, measured before the learner's code is
in S (`calibrate`). Its results are checked against the kit's answer (`_check`), and under
class grading its ops are compared with a plain call's (`_compare`).
"""

from __future__ import annotations

import random
import time

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils._python_dispatch import _disable_current_modes

from grader import running
from grader.remote import cputime
from grader.remote.call_context import defaults
from grader.remote.connection import Connection
from grader.remote.errors import Unremotable

COPIES = 32  # the most inputs one timed call runs on
BATCH_BYTES = 1 << 20  # ... while they hold at most this many bytes together
CHECKED = 4  # ... of whose results this many are checked against the kit's answer (`_check`)
# Under class grading a function's first timed call, and then this share of them, drawn here where
# the code cannot see the draw, is made once more untimed with its ops recorded and compared with
# a plain call's (`_compare`): code that runs something else in n timed calls escapes with a
# chance of (2/3)^n (12 calls: under 1%; the red team's, round 4, waited for the first).
RECORDED_SHARE = 1 / 3
_ENTROPY = random.SystemRandom()  # not the random module's state, which every run forked from one parent shares


def call(function, args, kwargs):
    """A call of `function` (a grader.remote.stand_in.RemoteFunction) timed by
    speed.minimum_times, by the CPU time S's processes spend on it (grader.remote.cputime),
    nothing of this process's counted. Its tensors go into memory S shares (`shared`) with
    fresh values (each storage's own values in a random order: memoising cannot help),
    written only after the clocks are read: S cannot have begun before. All S does until its
    answer counts, its reading of the message and its writing of the result included."""
    __tracebackhide__ = True
    connection = function.module._kata_connection
    clock = connection.clock
    start = clock.read  # this process's time from the clock's reading before this call is counted out
    if connection.processes:
        raise Unremotable(
            f"{function.__name__} was timed in a process of the code's that may make processes, whose "
            "CPU time the kernel may count for nobody"
        )
    if connection.overhead is None:  # not measured, and it cannot be now: the learner's code is in S
        raise RuntimeError(
            "a call was timed in a test not marked speed (@pytest.mark.speed): the protocol's "
            "cost is measured before the code under test is loaded, where such tests run"
        )
    size = sum(
        t.untyped_storage().nbytes()
        for t in tree_flatten((args, kwargs))[0]
        if isinstance(t, torch.Tensor) and t.device.type == "cpu"
    )
    # Calls too short to time one at a time run `copies` times in a row, on as many fresh inputs.
    copies = max(1, min(COPIES, BATCH_BYTES // max(size, 1)))
    if connection.watching:  # a speed test's pass rests on the comparison, made on any of its calls
        running.note_recorded()
        if function.__name__ not in connection.compared or _ENTROPY.random() < RECORDED_SHARE:
            connection.compared.add(function.__name__)
            _compare(function, args, kwargs, copies)
    timed = run(connection, function.module._kata_key, function.__name__, args, kwargs, copies)
    if timed is None:  # larger than the shared memory: the arguments travel in the message
        before = cputime.sample(connection.root)
        value = function.call(args, kwargs, [])["value"]
        timed, copies = ([value], [(args, kwargs)], cputime.spent(before, cputime.sample(connection.root)), []), 1
    values, inputs, spent, _ = timed
    _check(function, values, inputs)
    value = values[-1]
    del timed, values, inputs  # freed here, in the time counted out, not on return
    # Less the protocol's own cost (`calibrate`): what a clean S spends around a call.
    clock.code += max(spent - cost(connection, copies), 0.0) / copies
    clock.excluded += time.thread_time() - start
    return value


def _compare(function, args, kwargs, copies: int) -> None:
    """A timed call looks like any other to the code (fresh inputs of their own size), but
    code that tells one apart could run there what its tests forbid, fast. So a timed call
    (`RECORDED_SHARE`), untimed here, records the ops it ran, and so does a plain call on
    fresh inputs of the same shape: other ops, for a person to read (a speed test's pass
    rests on this record, which S made)."""
    timed = run(
        function.module._kata_connection,
        function.module._kata_key,
        function.__name__,
        args,
        kwargs,
        copies,
        record=True,
    )
    if timed is None:  # larger than the shared memory: it travels as a plain call does
        return
    fresh = _fresh((args, kwargs))
    plain = function.call(
        fresh[0], fresh[1], [leaf for leaf in tree_flatten(fresh)[0] if isinstance(leaf, torch.Tensor)], record=1
    )
    when_timed, when_called = _op_names(timed[3]), _op_names(plain.get("ops"))
    if when_timed != when_called:
        only = sorted(when_timed - when_called)[:5], sorted(when_called - when_timed)[:5]
        running.note_review(
            f"{function.__name__} ran other ops when timed than when called on inputs of the same shape "
            f"(only when timed: {', '.join(only[0]) or 'none'}; only when called: {', '.join(only[1]) or 'none'})"
        )


def _check(function, values: list, inputs: list) -> None:
    """Timed results are the kit's answer's on their inputs (loosely: summing in another
    order is not wrong). A timed call is otherwise unchecked, and a result kept from an
    earlier call, or one made up, would make any code fast.

    CHECKED of a call's results are checked, drawn from the system's entropy once they are
    here, where S cannot see which. Results made up for a share f of the inputs save at most
    that share of S's time (a speed-up of 1/(1 - f)), and go unseen through the ~12 timed
    calls of a speed test with a chance of (1 - f)^(12 * CHECKED) at most: under 1e-5 for
    f = 1/4, a speed-up of 1.33x. Checking each of up to COPIES results cost more than the
    calls themselves (lesson 03: 0.45 s of its speed test's 1.1 s)."""
    __tracebackhide__ = True
    reference = getattr(function.module._kata_reference, function.__name__, None)
    if reference is None:
        return
    picked = sorted(_ENTROPY.sample(range(len(values)), min(CHECKED, len(values))))
    for value, (args, kwargs) in ((values[i], inputs[i]) for i in picked):
        with _disable_current_modes():
            expected = reference(*args, **kwargs)
        try:
            torch.testing.assert_close(value, expected, rtol=1e-3, atol=1e-3, equal_nan=True, check_dtype=False)
        except (AssertionError, TypeError, ValueError) as exc:
            raise AssertionError(
                f"{function.__name__} gave a wrong answer in a speed test, on inputs of fresh values (an answer "
                f"kept from an earlier call cannot be used):\n{exc}"
            ) from None


def run(
    connection: Connection, module: int | None, name: str | None, args, kwargs, copies: int, record: bool = False
) -> tuple[list, list, float, list] | None:
    """A timed call in S of `module.name` on `copies` fresh copies of the arguments: (its
    results, the inputs they are for, the seconds of CPU S's processes spent from the moment
    the inputs' values were written to its answer, and with `record` the names of the aten ops
    it ran), or None when they do not fit in the shared memory.

    The inputs of the call after it (the same arguments, as a timed loop makes) are written
    as soon as it ends, so that writing them has left the caches of S's processor before it
    is called, as a loop in one process runs on warm ones. S may see them early: all it
    spends from then on counts, whatever it spends it on (any request between ends that).
    """
    ahead = connection.ahead
    if ahead is None or not ahead.matches(module, name, args, kwargs, copies):
        ahead = _write_ahead(connection, module, name, args, kwargs, copies)
        if ahead is None:
            return None
    reply = connection.request({"op": "go", "record": 1} if record else {}, None if record else connection.go_frame)
    after = cputime.sample(connection.root)
    with _disable_current_modes():
        if "stacked" in reply:
            stacked = connection.shared.take(reply["stacked"])
            values = list(stacked.unbind(0)) if type(stacked) is torch.Tensor and stacked.dim() else None
        else:
            values = connection.shared.take(reply.get("values"))
    if type(values) is not list or len(values) != copies:
        raise ValueError("a timed call's answer is not one result per input")
    spent = cputime.spent(ahead.before, after)
    inputs = ahead.inputs
    connection.ahead = _write_ahead(connection, module, name, args, kwargs, copies)
    ops = reply.get("ops") if record else None
    return values, inputs, spent, ops if isinstance(ops, list) else []


def _write_ahead(connection: Connection, module, name, args, kwargs, copies) -> _Ahead | None:
    with _disable_current_modes():
        fresh = [_fresh((args, kwargs)) for _ in range(copies)]
        placed = connection.shared.place(fresh)
    if placed is None:
        return None
    inputs, write = placed
    connection.request(
        {
            "op": "prepare",
            "module": module,
            "name": name,
            "inputs": inputs,
            "timeout": connection.left(),
            "defaults": defaults(),
        }
    )
    before = cputime.sample(connection.root)
    with _disable_current_modes():
        write()
    return _Ahead(module, name, args, kwargs, copies, before, fresh)


class _Ahead:
    """A timed call's inputs written ahead, and S's clocks read before they were."""

    def __init__(self, module, name, args, kwargs, copies: int, before: dict[int, int], inputs: list) -> None:
        self.call = (module, name, copies)
        self.inputs = inputs  # [(args, kwargs)] with the values written
        self.leaves, self.spec = tree_flatten((args, kwargs))  # held: no id is reused meanwhile
        self.versions = [leaf._version if isinstance(leaf, torch.Tensor) else None for leaf in self.leaves]
        self.before = before

    def matches(self, module, name, args, kwargs, copies: int) -> bool:
        """Whether a call is on the same arguments, none of them changed since."""
        leaves, spec = tree_flatten((args, kwargs))
        if (module, name, copies) != self.call or spec != self.spec or len(leaves) != len(self.leaves):
            return False
        for new, old, version in zip(leaves, self.leaves, self.versions):
            if isinstance(old, torch.Tensor):
                if new is not old or new._version != version:
                    return False
            elif type(new) is not type(old) or new != old:
                return False
        return True


def calibrate(connection: Connection, rounds: int = 30) -> None:
    """Measure the protocol's cost of a timed call, in CPU time of S: the least over `rounds`
    calls of a function that returns its input, on one input and on COPIES (each result
    crosses back), taken before any of the learner's code is in S, so that code cannot have
    made it larger. A timed call counts what it spends beyond this, and at most this much of
    S's time goes uncounted."""
    x = torch.zeros(1)
    one, most = (min(run(connection, None, None, (x,), {}, copies)[2] for _ in range(rounds)) for copies in (1, COPIES))
    connection.overhead = (one, max(most - one, 0.0) / (COPIES - 1))
    connection.ahead = None


def cost(connection: Connection, copies: int) -> float:
    """The protocol's cost of a timed call on `copies` inputs (`calibrate`)."""
    one, each = connection.overhead
    return one + each * (copies - 1)


def _op_names(ops) -> set[str]:
    """The names in what S sent as a call's ops (anything)."""
    return {op for op in ops if isinstance(op, str)} if isinstance(ops, list) else set()


def _fresh(tree):
    """`tree` with each tensor's storage filled with its own values in a random order: the same
    shape, dtype, layout and multiset of values, as new data."""
    leaves, spec = tree_flatten(tree)
    fresh = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.device.type != "meta" and leaf.numel() > 1:
            storage = torch.empty(0, dtype=leaf.dtype, device="cpu").set_(leaf.detach().untyped_storage())
            shuffled = _shuffled(storage)
            leaf = (
                torch.empty(0, dtype=leaf.dtype, device="cpu")
                .set_(shuffled.untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
                .requires_grad_(leaf.requires_grad)
            )
        fresh.append(leaf)
    return tree_unflatten(fresh, spec)


SHUFFLE_BLOCK = 4096  # elements: larger storages are shuffled by blocks, at the speed of a copy


def _shuffled(values: torch.Tensor) -> torch.Tensor:
    """The 1-d `values` in a random order. A large one's blocks of SHUFFLE_BLOCK are put in a
    random order and the whole is then turned by a random offset, which moves the blocks'
    edges: a random permutation of every element reads memory at random, and cost 0.55 s for
    the 8M elements of a timed call of lesson 05, where this costs two copies (13 ms; the
    gather, then the turn as one `cat` of slices: a `cat` and a `roll` took 35 ms)."""
    n = values.numel()
    if n <= 16 * SHUFFLE_BLOCK:
        return values[torch.randperm(n)]
    blocks = n // SHUFFLE_BLOCK
    head = values[: blocks * SHUFFLE_BLOCK].view(blocks, SHUFFLE_BLOCK)[torch.randperm(blocks)].view(-1)
    whole = (head, values[blocks * SHUFFLE_BLOCK :])  # head then the rest, turned by `turn`: one copy, not two
    turn = int(torch.randint(1, n, ()))
    return torch.cat([*_slice(whole, n - turn, n), *_slice(whole, 0, n - turn)])


def _slice(parts: tuple[torch.Tensor, ...], start: int, stop: int) -> list[torch.Tensor]:
    """The elements start:stop of the 1-d `parts` laid end to end, as views of them."""
    views, at = [], 0
    for part in parts:
        low, high = max(start - at, 0), min(stop - at, part.numel())
        if low < high:
            views.append(part[low:high])
        at += part.numel()
    return views
