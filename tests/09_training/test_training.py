"""Lesson 09, the training loop: checks training.py against plain loops written here.

`lesson` is the module under test (the learner's, the reference, or a mutant). The data are
small and synthetic (a few dozen samples, 4 features, 3 classes), the models tiny MLPs, so
every test runs in well under a second. A GPU machine is simulated by monkeypatching
torch.cuda.is_available / device_count; the tests marked cuda use a real one.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import os
import random

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

import grader.testing.strategies  # noqa: F401 (loads the kit's deterministic hypothesis profile)
from grader.testing import assert_close, expect_raises

FEATURES, HIDDEN, CLASSES = 4, 16, 3
N_SAMPLES, BATCH = 40, 16  # batches of 16, 16 and 8: the last one is smaller
LOSS = nn.functional.cross_entropy


def make_data(n: int = N_SAMPLES, seed: int = 0, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=g, dtype=dtype)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()  # 3 classes a small MLP can learn
    return x, y


def make_model(seed: int = 0, dropout: float = 0.0, batchnorm: bool = False, dtype=torch.float32) -> nn.Sequential:
    """An MLP whose initialisation does not touch the global random state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layers = [nn.Linear(FEATURES, HIDDEN)]
        layers += [nn.BatchNorm1d(HIDDEN)] if batchnorm else []
        layers += [nn.ReLU(), nn.Dropout(dropout), nn.Linear(HIDDEN, CLASSES)]
        return nn.Sequential(*layers).to(dtype)


def make_loader(shuffle: bool = False, n: int = N_SAMPLES) -> DataLoader:
    return DataLoader(TensorDataset(*make_data(n)), batch_size=BATCH, shuffle=shuffle)


def seed_all(seed: int) -> None:
    """This file's own seeding, so checkpoint tests do not depend on the learner's seed_everything."""
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def reference_epoch(model, loader, optimizer, loss_fn=LOSS) -> float:
    """The plain loop train_epoch must match: train mode, zero_grad, forward, backward, step."""
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count


def modes(model: nn.Module) -> list[tuple[str, bool]]:
    return [(name or "<model>", m.training) for name, m in model.named_modules()]


def assert_same_parameters(actual: nn.Module, expected: nn.Module, what: str, exact: bool = False) -> None:
    __tracebackhide__ = True
    for (name, a), b in zip(actual.named_parameters(), expected.parameters()):
        if exact:
            assert torch.equal(a, b), f"{what}: parameter {name} is not bitwise equal (max diff {(a - b).abs().max():.3g})"
        else:
            assert_close(a, b, what=f"{what}: parameter {name}")


# --- pick_device ------------------------------------------------------------------------------


@pytest.fixture
def machine(monkeypatch):
    """machine(gpus, mps): make torch believe it runs on such a machine."""
    def simulate(gpus: int, mps: bool = False) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    return simulate


@pytest.mark.parametrize(("gpus", "mps", "expected"), [(0, False, "cpu"), (2, False, "cuda"), (0, True, "mps"), (1, True, "cuda")])
def test_pick_device_default(lesson, machine, gpus, mps, expected):
    machine(gpus, mps)
    got = lesson.pick_device()
    what = f"pick_device() on a machine with {gpus} GPU(s){' and MPS' if mps else ''}"
    assert isinstance(got, torch.device), f"{what} returned {got!r}: return a torch.device, not a string"
    assert got == torch.device(expected), f"{what} returned {got!r}, expected device(type={expected!r})"


@pytest.mark.parametrize("prefer", ["cpu", "cuda", "cuda:1", torch.device("cuda", 0)])
def test_pick_device_honours_what_is_asked(lesson, machine, prefer):
    machine(2)
    got = lesson.pick_device(prefer)
    what = f"pick_device({prefer!r}) on a machine with 2 GPUs"
    assert isinstance(got, torch.device), f"{what} returned {got!r}: return a torch.device, not a string"
    assert got == torch.device(prefer), f"{what} returned {got!r}: return the device asked for when it is there"


@pytest.mark.parametrize(("gpus", "mps", "prefer"), [(0, False, "cuda"), (1, False, "cuda:1"), (0, False, "mps"), (2, True, "cuda:5")])
def test_pick_device_refuses_a_missing_device(lesson, machine, gpus, mps, prefer):
    machine(gpus, mps)
    expect_raises(
        lambda: lesson.pick_device(prefer), RuntimeError,
        what=f"pick_device({prefer!r}) on a machine with {gpus} GPU(s){' and MPS' if mps else ''}",
        why="the device asked for is not there; falling back silently hides the mistake.",
        mention=(str(torch.device(prefer)), "cpu"),
    )


# --- seed_everything --------------------------------------------------------------------------


def draw_everything() -> dict:
    """One draw from each source a training script uses."""
    order = [batch.tolist() for batch in DataLoader(range(20), batch_size=5, shuffle=True)]
    return {
        "torch.rand": torch.rand(4).tolist(),
        "random.random": [random.random() for _ in range(3)],
        "np.random.rand": np.random.rand(3).tolist(),
        "DataLoader(shuffle=True) order": order,
        "nn.Dropout(0.5) mask": nn.Dropout(0.5)(torch.ones(16)).tolist(),
    }


@pytest.mark.public
@pytest.mark.points(2)
def test_seed_everything_repeats_every_generator(lesson):
    assert lesson.seed_everything(0) is None, "seed_everything(0) should return None"
    first = draw_everything()
    random.random(), np.random.rand(), torch.rand(1)  # move every generator on
    lesson.seed_everything(0)
    again = draw_everything()
    for source in first:
        assert first[source] == again[source], (
            f"after seed_everything(0) twice, {source} drew different numbers: "
            f"{first[source]} then {again[source]}. Seed torch, Python's random and NumPy's global "
            "generator (np.random.seed)."
        )


def test_different_seeds_differ(lesson):
    lesson.seed_everything(0)
    first = draw_everything()
    lesson.seed_everything(1)
    other = draw_everything()
    for source in ("torch.rand", "random.random", "np.random.rand"):
        assert first[source] != other[source], (
            f"seed_everything(0) and seed_everything(1) gave the same {source}: use the seed passed in"
        )


# --- train_epoch ------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_train_epoch_returns_a_float_that_decreases(lesson):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    loader = make_loader()
    losses = [lesson.train_epoch(model, loader, optimizer, LOSS, torch.device("cpu")) for _ in range(6)]
    assert all(type(loss) is float for loss in losses), (
        f"train_epoch returned {type(losses[0]).__name__}: return a Python float (loss.item()), "
        "not a tensor that keeps a graph alive"
    )
    assert losses[-1] < losses[0], f"train_epoch's loss did not go down over 6 epochs of Adam: {losses}"


@pytest.mark.points(2)
@pytest.mark.parametrize("start", ["train", "eval"])
def test_train_epoch_matches_a_plain_loop(lesson, start):
    ours, reference = make_model(dropout=0.3), make_model(dropout=0.3)
    getattr(ours, start)()
    opt_ours = torch.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    torch.manual_seed(3)  # the same dropout masks for both
    got = lesson.train_epoch(ours, make_loader(), opt_ours, LOSS, "cpu")
    torch.manual_seed(3)
    expected = reference_epoch(reference, make_loader(), opt_ref)
    what = f"train_epoch on a model in {start} mode, batches of 16, 16 and 8"
    assert all(m.training for m in ours.modules()), (
        f"{what}: the model is not in train mode afterwards: call model.train() first (dropout must be on)"
    )
    assert_same_parameters(ours, reference, f"{what} (compared with zero_grad, forward, backward, step in train mode)")
    assert got == pytest.approx(expected, rel=1e-6), (
        f"{what} returned {got}, expected the mean over samples {expected}: weigh each batch's "
        "mean loss by its size (the last batch is smaller), then divide by the number of samples"
    )


def test_train_epoch_clears_stale_gradients_first(lesson):
    ours, reference = make_model(), make_model()
    for p in ours.parameters():
        p.grad = torch.full_like(p, 100.0)  # left behind by someone else's backward
    opt_ours = torch.optim.SGD(ours.parameters(), lr=0.1)
    lesson.train_epoch(ours, make_loader(), opt_ours, LOSS, "cpu")
    reference_epoch(reference, make_loader(), torch.optim.SGD(reference.parameters(), lr=0.1))
    assert_same_parameters(
        ours, reference,
        "train_epoch on a model whose .grad already held values: clear the gradients before each "
        "step's backward (the first one too), not after the step",
    )


# --- evaluate ---------------------------------------------------------------------------------


def reference_evaluation(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    model = copy.deepcopy(model).eval()
    with torch.no_grad():
        logits = model(x)
    return LOSS(logits, y).item(), (logits.argmax(1) == y).double().mean().item()


@pytest.mark.points(2)
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_evaluate_matches_the_whole_data_set_in_eval_mode(lesson, dropout):
    model = make_model(dropout=dropout, batchnorm=True)
    model.train()
    with torch.no_grad():  # running stats far from their defaults, so train-mode BatchNorm differs
        model[1].running_mean.fill_(0.3)
        model[1].running_var.fill_(2.0)
    expected = reference_evaluation(model, *make_data())
    stats = (model[1].running_mean.clone(), model[1].running_var.clone())
    got = lesson.evaluate(model, make_loader(), LOSS, "cpu")
    what = f"evaluate on a model with Dropout({dropout}) and BatchNorm, batches of 16, 16 and 8"
    assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}: return (loss, accuracy)"
    assert all(type(v) is float for v in got), f"{what} returned {got!r}: return two Python floats"
    assert_close(model[1].running_mean, stats[0], what=f"BatchNorm's running_mean after {what} (eval mode must not update it)")
    assert got[0] == pytest.approx(expected[0], rel=1e-5), (
        f"{what}: loss {got[0]}, expected {expected[0]}. Switch the model to eval mode (no dropout, "
        "BatchNorm's running stats) and weigh each batch's loss by its size."
    )
    assert got[1] == pytest.approx(expected[1], abs=1e-9), (
        f"{what}: accuracy {got[1]}, expected {expected[1]} (correct argmax(dim=1) / number of samples)"
    )


def test_evaluate_runs_under_inference_mode(lesson):
    model = make_model()
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append((torch.is_inference_mode_enabled(), out.requires_grad)))
    lesson.evaluate(model, make_loader(), LOSS, "cpu")
    assert seen, "evaluate never called the model"
    assert all(inference for inference, _ in seen), (
        "evaluate ran the model outside torch.inference_mode(): wrap the loop in `with torch.inference_mode():` "
        "so no graph is recorded"
    )
    assert not any(grad for _, grad in seen), "evaluate's model outputs require grad: a graph was recorded"
    assert all(p.grad is None for p in model.parameters()), "evaluate left gradients in .grad"


def frozen_batchnorm(model: nn.Module) -> nn.Module:
    model.train()
    model[1].eval()  # fine-tuning with frozen BatchNorm statistics
    return model


def half_eval(model: nn.Module) -> nn.Module:
    model.eval()
    model[3].train()
    return model


MODE_CASES = {
    "train mode": lambda m: m.train(),
    "eval mode": lambda m: m.eval(),
    "train mode with a frozen BatchNorm in eval": frozen_batchnorm,
    "eval mode with its Dropout in train": half_eval,
}


@pytest.mark.points(2)
@pytest.mark.parametrize("case", list(MODE_CASES))
def test_evaluate_restores_every_submodules_mode(lesson, case):
    model = MODE_CASES[case](make_model(dropout=0.2, batchnorm=True))
    before = modes(model)
    lesson.evaluate(model, make_loader(), LOSS, "cpu")
    assert modes(model) == before, (
        f"evaluate on a model in {case}: the (submodule, training) flags were {before} before and "
        f"{modes(model)} after. Record every submodule's own flag before model.eval() and put each "
        "one back afterwards (model.train(was_training) overwrites the submodules' flags)."
    )


class LoaderFailed(Exception):
    pass


def test_evaluate_restores_modes_when_the_loader_fails(lesson):
    model = frozen_batchnorm(make_model(batchnorm=True))
    before = modes(model)
    x, y = make_data()

    def failing_loader():
        yield x[:BATCH], y[:BATCH]
        raise LoaderFailed("disk read failed (simulated)")

    with pytest.raises(LoaderFailed):
        lesson.evaluate(model, failing_loader(), LOSS, "cpu")
    assert modes(model) == before, (
        f"after the loader raised inside evaluate, the modes are {modes(model)}, not {before}: "
        "restore them in a `finally:` block"
    )


# --- checkpoints ------------------------------------------------------------------------------


class NoisyData(Dataset):
    """An augmentation drawing from Python's random and NumPy, as real pipelines do."""

    def __init__(self):
        self.x, self.y = make_data()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        noise = 0.05 * random.gauss(0.0, 1.0) + 0.05 * float(np.random.randn())
        return self.x[i] + noise, self.y[i]


def new_run(seed: int):
    model = make_model(seed=seed, dropout=0.3)
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def noisy_loader() -> DataLoader:
    return DataLoader(NoisyData(), batch_size=BATCH, shuffle=True)


def test_checkpoint_loads_with_weights_only(lesson, tmp_path):
    np.random.rand()  # a NumPy state with a cached position
    model, optimizer = new_run(seed=0)
    lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=1)
    reason = None
    try:
        torch.load(tmp_path / "ckpt.pt", weights_only=True)
    except Exception as exc:  # noqa: BLE001 (the message is the point)
        # torch's message is long; the line that names the offending type is the useful one.
        lines = [line.strip() for line in str(exc).splitlines() if "Unsupported global" in line]
        reason = lines[0].split(" was not an allowed")[0] if lines else str(exc)[:300]
    if reason:  # failed outside the except block: the learner needs no chained traceback
        pytest.fail(
            f"torch.load(path, weights_only=True) cannot read what save_checkpoint wrote ({reason}). "
            "Store only tensors, dicts, lists, tuples, strings and numbers: np.random.get_state() holds "
            "an np.ndarray, convert it with .tolist().", pytrace=False,
        )


@pytest.mark.points(3)
def test_resumed_training_is_bitwise_identical(lesson, tmp_path):
    seed_all(0)
    straight, optimizer = new_run(seed=0)
    expected = [reference_epoch(straight, noisy_loader(), optimizer) for _ in range(4)]

    seed_all(0)
    model, optimizer = new_run(seed=0)
    losses = [reference_epoch(model, noisy_loader(), optimizer) for _ in range(2)]
    lesson.save_checkpoint(tmp_path / "run.pt", model, optimizer, epoch=2)
    # A new process: other random states, a freshly initialised model and optimizer.
    seed_all(12345)
    model, optimizer = new_run(seed=1)
    epoch = lesson.load_checkpoint(tmp_path / "run.pt", model, optimizer)
    assert epoch == 2, f"save_checkpoint(..., epoch=2) then load_checkpoint returned {epoch!r}, expected 2"
    losses += [reference_epoch(model, noisy_loader(), optimizer) for _ in range(2)]

    what = ("4 epochs straight vs 2 epochs + save_checkpoint + load_checkpoint into a fresh model and "
            "Adam optimizer + 2 epochs (Dropout, shuffle=True, augmentation from random and NumPy)")
    assert losses == expected, (
        f"{what}: per-epoch losses {losses}, expected {expected}. Save and restore the optimizer's state "
        "and every random state (torch, CUDA, Python's random, NumPy)."
    )
    assert_same_parameters(model, straight, what, exact=True)


def test_load_restores_model_optimizer_and_epoch(lesson, tmp_path):
    model, optimizer = new_run(seed=0)
    reference_epoch(model, make_loader(), optimizer)
    lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=3)
    fresh, fresh_optimizer = new_run(seed=1)
    epoch = lesson.load_checkpoint(tmp_path / "ckpt.pt", fresh, fresh_optimizer)
    assert type(epoch) is int and epoch == 3, f"load_checkpoint returned {epoch!r} for a checkpoint saved with epoch=3"
    assert_same_parameters(fresh, model, "the model after load_checkpoint", exact=True)
    saved, loaded = optimizer.state_dict(), fresh_optimizer.state_dict()
    assert loaded["state"].keys() == saved["state"].keys(), (
        "the optimizer after load_checkpoint has no Adam state (moments, step counts): save "
        "optimizer.state_dict() and load it with optimizer.load_state_dict"
    )
    for index, state in saved["state"].items():
        for key, value in state.items():
            assert_close(loaded["state"][index][key], value, what=f"optimizer state {key!r} of parameter {index} after load_checkpoint")


def test_save_leaves_only_the_checkpoint(lesson, tmp_path):
    model, optimizer = new_run(seed=0)
    lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=1)
    lesson.save_checkpoint(str(tmp_path / "ckpt.pt"), model, optimizer, epoch=2)  # a str path, overwriting
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"], (
        f"after two save_checkpoint calls the folder holds {sorted(os.listdir(tmp_path))}: "
        "rename the temporary file onto the path (os.replace)"
    )
    assert lesson.load_checkpoint(tmp_path / "ckpt.pt", *new_run(seed=1)) == 2, "the second save did not replace the first"


def test_failed_save_keeps_the_old_checkpoint(lesson, tmp_path, monkeypatch):
    model, optimizer = new_run(seed=0)
    lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=1)

    def interrupted_save(obj, f, *args, **kwargs):
        handle = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f  # noqa: SIM115
        handle.write(b"half a checkpoint")
        if handle is not f:
            handle.close()
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(torch, "save", interrupted_save)
    with pytest.raises(OSError, match="simulated"):
        lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=2)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"], (
        f"after a save that failed midway the folder holds {sorted(os.listdir(tmp_path))}: "
        "remove the temporary file when saving fails"
    )
    broken = None
    try:
        epoch = lesson.load_checkpoint(tmp_path / "ckpt.pt", *new_run(seed=1))
    except NotImplementedError:
        raise  # a TODO, not a broken file
    except Exception as exc:  # noqa: BLE001
        broken = f"{type(exc).__name__}: {str(exc)[:120]}"
    if broken:
        pytest.fail(
            f"a save that failed midway destroyed the previous checkpoint (loading it raised {broken}): "
            "write to a temporary file in the same folder, then os.replace it onto the path", pytrace=False,
        )
    assert epoch == 1, f"after a failed save the checkpoint says epoch {epoch}, expected the old 1"


class CodeInPickle:
    """Unpickling this runs code: what a malicious checkpoint does."""

    def __reduce__(self):
        return exec, ("import builtins; builtins._kata_09_pwned = True",)


@pytest.mark.points(2)
def test_load_refuses_a_checkpoint_that_runs_code(lesson, tmp_path):
    torch.save({"model": CodeInPickle()}, tmp_path / "evil.pt")
    model, optimizer = new_run(seed=0)
    refused = False
    try:
        lesson.load_checkpoint(tmp_path / "evil.pt", model, optimizer)
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 (any refusal will do)
        refused = True
    finally:
        ran = getattr(builtins, "_kata_09_pwned", False)
        if ran:
            del builtins._kata_09_pwned
    assert not ran, (
        "load_checkpoint ran code hidden in the checkpoint file (unpickling can call any function): "
        "load it with torch.load(path, map_location=..., weights_only=True)"
    )
    assert refused, "load_checkpoint accepted a checkpoint that is not a model at all"


def test_load_passes_map_location_and_weights_only(lesson, tmp_path, monkeypatch):
    model, optimizer = new_run(seed=0)
    lesson.save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, epoch=1)
    real_load, calls = torch.load, []

    def recording_load(*args, **kwargs):
        calls.append(inspect.signature(real_load).bind(*args, **kwargs).arguments)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", recording_load)
    location = {"cuda:0": "cpu"}  # what a checkpoint written on a GPU needs on a CPU machine
    lesson.load_checkpoint(tmp_path / "ckpt.pt", *new_run(seed=1), map_location=location)
    assert len(calls) == 1, f"load_checkpoint called torch.load {len(calls)} times, expected once"
    assert calls[0].get("map_location") is location, (
        f"load_checkpoint(..., map_location={location}) called torch.load with map_location="
        f"{calls[0].get('map_location')!r}: pass it through"
    )
    assert calls[0].get("weights_only") is True, (
        "load_checkpoint called torch.load without weights_only=True: say it explicitly, so that "
        "loading never unpickles arbitrary objects"
    )


# --- accumulate_gradients ---------------------------------------------------------------------


def full_batch_gradients(model, x, y):
    reference = copy.deepcopy(model)
    loss = LOSS(reference(x), y)
    loss.backward()
    return loss.item(), [p.grad for p in reference.parameters()]


def chunks_of(n: int, micro_batches: int) -> list[int]:
    return [len(c) for c in torch.tensor_split(torch.arange(n), micro_batches)]


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))))
@example((10, 1))
@example((10, 2))
@example((10, 3))
@example((10, 4))
@example((10, 10))
@settings(max_examples=25)  # each example builds a model: keep the lesson's run short
@pytest.mark.points(3)
def test_accumulated_gradients_equal_one_big_batch(lesson, case):
    n, micro_batches = case
    model = make_model(dtype=torch.float64)
    x, y = make_data(n, seed=n, dtype=torch.float64)
    expected_loss, expected = full_batch_gradients(model, x, y)
    got = lesson.accumulate_gradients(model, LOSS, x, y, micro_batches)
    what = f"accumulate_gradients(model, loss_fn, inputs, targets, micro_batches={micro_batches}) for N={n} (chunks {chunks_of(n, micro_batches)})"
    for (name, p), grad in zip(model.named_parameters(), expected):
        assert p.grad is not None, f"{what} left {name}.grad empty"
        assert_close(
            p.grad, grad,
            what=f"{what}: {name}.grad vs one full batch (scale each chunk's mean loss by chunk size / N)",
        )
    assert type(got) is float and got == pytest.approx(expected_loss, rel=1e-9), (
        f"{what} returned {got!r}, expected the full-batch loss {expected_loss} as a Python float"
    )


def test_accumulate_discards_old_gradients(lesson):
    model = make_model(dtype=torch.float64)
    x, y = make_data(12, dtype=torch.float64)
    _, expected = full_batch_gradients(model, x, y)
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    lesson.accumulate_gradients(model, LOSS, x, y, 3)
    for (name, p), grad in zip(model.named_parameters(), expected):
        assert_close(p.grad, grad, what=f"{name}.grad after accumulate_gradients on a model whose .grad held ones (clear them first)")


@pytest.mark.parametrize("micro_batches", [2, 3, 7])
def test_accumulate_runs_one_forward_and_backward_per_chunk(lesson, micro_batches):
    model = make_model(dtype=torch.float64)
    x, y = make_data(7, dtype=torch.float64)
    before, params = x.clone(), [p.detach().clone() for p in model.parameters()]
    calls = []  # (batch size, whether an earlier backward already filled .grad)
    model.register_forward_pre_hook(lambda m, args: calls.append((len(args[0]), model[0].weight.grad is not None)))
    lesson.accumulate_gradients(model, LOSS, x, y, micro_batches)
    what = f"accumulate_gradients(..., micro_batches={micro_batches}) for N=7"
    sizes = chunks_of(7, micro_batches)
    assert [size for size, _ in calls] == sizes, (
        f"{what} ran the model on batches of {[size for size, _ in calls]}, expected {sizes} "
        "(torch.tensor_split(inputs, micro_batches)): the point is never to hold the whole batch's graph"
    )
    assert [filled for _, filled in calls] == [False] + [True] * (len(sizes) - 1), (
        f"{what}: call backward on each chunk's loss before the next chunk's forward, so each graph is freed"
    )
    assert_close(x, before, what=f"inputs after {what} (must not change)")
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), params)), f"{what} changed the parameters: no optimizer step here"


@pytest.mark.parametrize("micro_batches", [0, -1, 8])
def test_accumulate_refuses_impossible_splits(lesson, micro_batches):
    model = make_model(dtype=torch.float64)
    x, y = make_data(7, dtype=torch.float64)
    expect_raises(
        lambda: lesson.accumulate_gradients(model, LOSS, x, y, micro_batches), ValueError,
        what=f"accumulate_gradients(..., micro_batches={micro_batches}) for N=7",
        why="it needs 1 <= micro_batches <= N (an empty chunk's mean loss is nan).",
    )


# --- a real GPU -------------------------------------------------------------------------------


@pytest.mark.cuda
def test_training_on_the_gpu_with_cpu_batches(lesson, tmp_path):
    device = lesson.pick_device()
    assert device.type == "cuda", f"pick_device() returned {device} on a machine with a GPU"
    model = make_model(dropout=0.2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss = lesson.train_epoch(model, make_loader(), optimizer, LOSS, device)  # batches live on the CPU
    assert type(loss) is float
    loss, accuracy = lesson.evaluate(model, make_loader(), LOSS, device)
    assert type(loss) is float and type(accuracy) is float
    lesson.save_checkpoint(tmp_path / "gpu.pt", model, optimizer, epoch=1)
    cpu_model, cpu_optimizer = new_run(seed=1)
    assert lesson.load_checkpoint(tmp_path / "gpu.pt", cpu_model, cpu_optimizer, map_location="cpu") == 1
    assert all(p.device.type == "cpu" for p in cpu_model.parameters())
    assert_same_parameters(cpu_model, model.cpu(), "a GPU checkpoint loaded onto a CPU model", exact=True)
