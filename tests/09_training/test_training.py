"""Lesson 09, the training loop: checks training.py against plain loops written here.

The data are small and synthetic, the models tiny MLPs; a GPU machine is simulated by patching
torch.cuda inside the scenario that calls the learner's code. CONTRACT, at the end, maps the
lesson's promises to the tests.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import functools
import gc
import inspect
import io
import os
import random
import shutil
import tempfile
import weakref
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

import grader.testing.strategies  # noqa: F401 (loads the kit's deterministic hypothesis profile)
from grader.testing import (apart, assert_close, assert_defaults, attribute, below, counted, dtype_name, expect_raises,
                            numbers, reported, returned)
from grader.testing.scenario import beside


def on_machine(gpus: int, mps: bool) -> str:
    return f"a machine with {counted(gpus, 'GPU') if gpus else 'no GPU'}{' and MPS' if mps else ''}"


def device_case(gpus: int, mps: bool, prefer):
    """A parameter set of the pick_device tests, with an id that says it: "'cuda:1' on 2 GPUs",
    "cuda:0 as torch.device on no GPU", "'mps' on no GPU and MPS"."""
    asked = f"{prefer} as torch.device" if isinstance(prefer, torch.device) else repr(prefer)
    return pytest.param(gpus, mps, prefer, id=f"{asked} on {on_machine(gpus, mps).removeprefix('a machine with ')}")


# --- pick_device ------------------------------------------------------------------------------


@pytest.mark.parametrize(("gpus", "mps", "expected"), [(0, False, "cpu"), (2, False, "cuda"), (0, True, "mps"), (1, True, "cuda")])
def test_pick_device_default(lesson, gpus, mps, expected):
    got = picked(lesson, gpus, mps)
    what = f"pick_device() on a machine with {counted(gpus, 'GPU')}{' and MPS' if mps else ''}"
    if not isinstance(got, torch.device):
        pytest.fail(f"{what} returned {got!r}: return a torch.device, not a string", pytrace=False)
    if got != torch.device(expected):
        pytest.fail(f"{what} returned {got!r}, expected device(type={expected!r})", pytrace=False)


@pytest.mark.parametrize(("gpus", "mps", "prefer"), [device_case(*case) for case in [
    (2, False, "cpu"), (0, False, "cpu"), (0, False, torch.device("cpu")), (2, False, "cuda"), (2, False, "cuda:1"),
    (1, False, "cuda:0"), (2, False, torch.device("cuda", 0)), (0, True, "mps"),
    (0, True, torch.device("mps", 0)),  # what an MPS tensor's .device says
]])
def test_pick_device_honours_what_is_asked(lesson, gpus, mps, prefer):
    what = f"pick_device({prefer!r}) on {on_machine(gpus, mps)}"
    with reported(f"{what}, which has that device (expected {torch.device(prefer)!r} back"
                  + (": mps:0 is the device an MPS tensor's .device names, the same as 'mps')"
                     if torch.device(prefer) == torch.device("mps", 0) else ")")):
        got = picked(lesson, gpus, mps, prefer)
    if not isinstance(got, torch.device):
        pytest.fail(f"{what} returned {got!r}: return a torch.device, not a string", pytrace=False)
    if got != torch.device(prefer):
        pytest.fail(f"{what} returned {got!r}: return torch.device(prefer) unchanged when it is there", pytrace=False)


@pytest.mark.parametrize(("gpus", "mps", "prefer"), [device_case(*case) for case in [
    (0, False, "cuda"), (1, False, "cuda:1"), (0, False, "mps"), (2, True, "cuda:5"), (0, True, "cuda"),
    (0, False, torch.device("cuda", 0)), (0, False, "meta"), (1, True, "meta"),
]])
def test_pick_device_refuses_a_missing_device(lesson, gpus, mps, prefer):
    available = ["cpu", *(f"cuda:{i}" for i in range(gpus)), *(["mps"] if mps else [])]
    try:
        got = picked(lesson, gpus, mps, prefer)
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 (expect_raises below judges the error)
        got = None
    if isinstance(got, (str, torch.device)) and torch.device(got) != torch.device(prefer):
        why = (f"this is a silent fallback to {str(got)!r}: the script would run on it for hours before anyone "
               "noticed. Raise instead, naming the device asked for and the devices there are.")
    else:
        why = (f"this machine has no device {str(torch.device(prefer))!r}: only cpu, cuda:i for i < "
               "device_count() (when CUDA is available) and mps (when MPS is) exist, and no other type ever does.")
    expect_raises(
        lambda: picked(lesson, gpus, mps, prefer), RuntimeError,
        what=f"pick_device({prefer!r}) on {on_machine(gpus, mps)}", why=why,
        mention=(str(torch.device(prefer)), *available),
    )


# --- seed_everything --------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_seed_everything_repeats_every_generator(lesson):
    (returned, first), (_, again) = seeded_draws(lesson, [0, 0])
    if returned is not None:
        pytest.fail(f"seed_everything(0) returned {returned!r}; it should return None", pytrace=False)
    for source in first:
        if first[source] != again[source]:
            pytest.fail(f"after seed_everything(0) twice, {source} drew different numbers: {first[source]} then "
                        f"{again[source]}. {UNSEEDED[source]}.", pytrace=False)


def test_different_seeds_differ(lesson):
    (_, first), (_, other) = seeded_draws(lesson, [0, 1])
    for source in ("torch.rand", "random.random", "np.random.rand"):
        if first[source] == other[source]:
            pytest.fail((
                f"seed_everything(0) and seed_everything(1) gave the same {source}: use the seed passed in"
            ), pytrace=False)


def test_seed_everything_seeds_every_cuda_device(lesson):
    seeded = cuda_seeds(lesson, 7)
    if 7 not in seeded:
        pytest.fail((
            f"seed_everything(7) on a machine with 2 GPUs seeded the CUDA generators with {seeded or 'nothing'}: "
            "seed every CUDA device too (torch.manual_seed(7) calls torch.cuda.manual_seed_all(7) for you)"
        ), pytrace=False)


# --- train_epoch ------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_train_epoch_returns_a_float_that_decreases(lesson):
    losses = epoch_losses(lesson, 6)
    if not all(type(loss) is float for loss in losses):
        pytest.fail((
            f"train_epoch returned {type_name(losses[0])}, expected a Python float. {AS_FLOAT}"
        ), pytrace=False)
    if losses[-1] >= losses[0]:
        pytest.fail(f"train_epoch's loss did not go down over 6 epochs of Adam: {losses}", pytrace=False)


@pytest.mark.points(2)
@pytest.mark.parametrize("start", below("START_CASES"))
def test_train_epoch_matches_a_plain_loop(lesson, start):
    got, flags, ours = trained_from(lesson, start)
    losses = []
    expected, reference = plain_loop(start, losses=losses)
    what = f"train_epoch on a model in {start}, batches of 16, 16 and 8"
    if not all(training for _, training in flags):
        pytest.fail(f"{what}: the (submodule, training) flags afterwards are {flags}: the model trained with "
                    "some submodule in eval mode (a model that evaluate left in eval mode trains without dropout). "
                    "Call model.train() first, which sets every submodule.", pytrace=False)
    if not same_parameters(ours, reference):
        _, never = plain_loop(start, clear="never")
        if same_parameters(ours, never):
            pytest.fail(f"{what}: the parameters are those of a loop that never clears the gradients: backward() "
                        "adds to .grad, so every step applied the sum of all the gradients so far. Clear them "
                        "(to None) before each backward.", pytrace=False)
    assert_same_parameters(ours, reference, f"{what} (compared with zero_grad, forward, backward, step in train mode)")
    if type(got) is not float or got != pytest.approx(expected, rel=1e-6):
        tensor = f" {AS_FLOAT}" if isinstance(got, torch.Tensor) else ""
        mine, theirs = shown_pair(got, expected)
        pytest.fail(f"{what} returned {mine}, expected the mean over samples {theirs} as a Python float."
                    + (tensor or mean_pitfall(got, losses, expected)), pytrace=False)


def test_train_epoch_weighs_batches_by_their_samples(lesson):
    """Regression targets of shape (batch, 3), batches of 8, 8 and 5, from a one-pass generator."""
    got, ours = trained_on_a_generator(lesson)
    reference, losses = make_model(), []
    expected = reference_epoch(reference, regression_batches(), sgd(reference), nn.functional.mse_loss, losses=losses)
    what = ("train_epoch(model, batches, SGD(model.parameters(), lr=0.1), F.mse_loss, 'cpu') for batches = a generator "
            "of 3 batches (8, 8 and 5 samples, targets of shape (batch, 3)), which can be iterated once")
    if (same_parameters(ours, parameters(make_model())) and not same_parameters(ours, parameters(reference))
            and same_parameters(trained_on_a_generator(lesson, one_pass=False)[1], parameters(reference))):
        pytest.fail(f"{what} took no step: the parameters are those it was given, where the same batches in a list "
                    "train as expected. A generator yields its batches once: an earlier pass over the loader (to "
                    "count the samples, say) leaves nothing to train on. Go over the loader once, counting the "
                    "samples as you train.", pytrace=False)
    assert_same_parameters(ours, parameters(reference),
                           f"{what}, compared with zero_grad, forward, backward, step per batch")
    if got != pytest.approx(expected, rel=1e-6):
        why = mean_pitfall(got, losses, expected)
        if why.startswith(" That is the mean of the batch means"):  # what a size of targets.shape[-1] (3) gives too
            why += (" (Or a batch's size was read as targets.shape[-1], 3 for every batch here, not targets.shape[0]: "
                    "the two give the same numbers on these batches.)")
        mine, theirs = shown_pair(got, expected)
        pytest.fail(f"{what} returned {mine}, expected the mean over samples {theirs}.{why}", pytrace=False)


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu")])
def test_train_epoch_moves_every_batch_to_the_device(lesson, device):
    got, seen, moved_to = run_elsewhere(lesson, "train_epoch", device)
    what = f"train_epoch(model, loader, optimizer, loss_fn, device={device!r}) with batches on another device"
    assert_moved(what, seen, moved_to, device)
    reference, losses = MOVED_RUNS["train_epoch"](), []
    expected = reference_epoch(reference, two_batches(), sgd(reference), losses=losses)
    if got != pytest.approx(expected, rel=1e-6):
        mine, theirs = shown_pair(got, expected)
        pytest.fail(f"{what} returned {mine}, expected {theirs} (the mean loss over the samples)."
                    + mean_pitfall(got, losses, expected), pytrace=False)


def test_train_epoch_sets_gradients_to_none(lesson):
    grad, spare = spare_after_training(lesson)
    what = ("train_epoch with SGD(weight_decay=0.1) on a model with a parameter its forward never uses "
            "(and a stale .grad on every parameter)")
    if grad is not None:
        pytest.fail(
            f"{what}: that parameter's .grad is {grad.tolist()} afterwards, not None. Clear the "
            "gradients with optimizer.zero_grad(set_to_none=True) (the default): a grad of zeros is "
            "stepped (weight decay, Adam's moments), a grad of None is skipped.", pytrace=False,
        )
    if not torch.equal(spare, torch.ones(CLASSES)):
        moved = f"{what}: it moved to {numbers(spare)} from {numbers(torch.ones(CLASSES))}"
        once = torch.full((CLASSES,), 1 - 0.1 * (100 + 0.1 * 1))  # one SGD step on the stale grad, with weight decay
        if torch.allclose(spare, once):
            pytest.fail(f"{moved}, one SGD step on the stale .grad of 100 it held on entry. Clear the gradients before "
                        "each backward, the first one too (optimizer.zero_grad(), set_to_none=True by default): then "
                        "a parameter the forward never uses keeps grad None, and a grad of None is not stepped.",
                        pytrace=False)
        pytest.fail(f"{moved}: a parameter the forward never uses gets no gradient, and with its .grad cleared to "
                    "None (optimizer.zero_grad()) the optimizer leaves it where it is.", pytrace=False)


def test_train_epoch_frees_each_steps_graph(lesson):
    got, kept = graphs_kept(lesson)
    if type(got) is not float:
        pytest.fail(f"train_epoch returned {type_name(got)}, expected a Python float", pytrace=False)
    if kept:
        step, alive = kept[-1]
        pytest.fail(
            f"train_epoch over 5 batches: at step {step} the graphs of steps {alive} were still alive. "
            "Record each step's loss as a number with loss.item(); keeping loss tensors (in a list, or "
            "summed into a tensor) keeps every step's graph.", pytrace=False,
        )


def test_train_epoch_clears_stale_gradients_first(lesson):
    ours = trained_stale(lesson)
    reference = make_model()
    reference_epoch(reference, make_loader(), sgd(reference))
    reference = parameters(reference)
    what = "train_epoch on a model whose .grad already held 100 everywhere"
    if not same_parameters(ours, reference):
        for clear, why in (("after", "clears the gradients after each step only: the 100s it found entered the "
                                     "first step. Clear them before each backward, the first one too"),
                           ("never", "never clears the gradients: backward() adds to .grad, so the 100s and every "
                                     "earlier gradient entered every step. Clear them before each backward")):
            pitfall = stale(make_model())
            reference_epoch(pitfall, make_loader(), sgd(pitfall), clear=clear)
            if same_parameters(ours, parameters(pitfall)):
                pytest.fail(f"{what}: the parameters are those of a loop that {why}.", pytrace=False)
    assert_same_parameters(ours, reference, f"{what} (compared with zero_grad, forward, backward, step)")


# --- evaluate ---------------------------------------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("dropout", "dtype"), [(0.0, torch.float32), (0.5, torch.float32), (0.5, torch.bfloat16)])
def test_evaluate_matches_the_whole_data_set_in_eval_mode(lesson, dropout, dtype):
    got, running_mean = evaluated(lesson, dropout, dtype)
    model, loader = evaluation_run(dropout, dtype)
    losses = []
    expected = reference_evaluation(model, loader, losses)
    what = f"evaluate on a {dtype} model with Dropout({dropout}) and BatchNorm, batches of 12, 12, 12 and 4"
    if not (isinstance(got, tuple) and len(got) == 2 and all(type(v) is float for v in got)):
        pytest.fail(f"{what} returned {got!r}: return (loss, accuracy), two Python floats", pytrace=False)
    assert_close(running_mean, model[1].running_mean,
                 what=f"BatchNorm's running_mean after {what}: it changed, so BatchNorm ran in training mode, "
                      "which updates it. Switch the model to eval mode (model.eval()) for the evaluation")
    if got[0] != pytest.approx(expected[0], rel=1e-6):
        pytest.fail(f"{what}: loss {got[0]}, expected the mean over samples in eval mode, {expected[0]}."
                    + mean_pitfall(got[0], losses, expected[0]), pytrace=False)
    if got[1] != pytest.approx(expected[1], abs=1e-9):
        pytest.fail(f"{what}: accuracy {got[1]}, expected {expected[1]} (correct argmax(dim=1) / number of samples)",
                    pytrace=False)


def test_evaluate_runs_under_inference_mode(lesson):
    seen, grad_on_after, grads = inference_seen(lesson)
    if not seen:
        pytest.fail("evaluate never called the model", pytrace=False)
    if not all(inference for inference, _, _ in seen):
        if not any(grad for _, grad, _ in seen):
            pytest.fail("evaluate ran the model under torch.no_grad() (autograd off, inference mode off): no graph, "
                        "but evaluation is what inference mode is for, and this function promises it: it also "
                        "skips autograd's version counters. Use `with torch.inference_mode():`.", pytrace=False)
        pytest.fail("evaluate ran the model with autograd on: every batch recorded a graph that nobody will use. "
                    "Wrap the loop in `with torch.inference_mode():`.", pytrace=False)
    if any(requires for _, _, requires in seen):
        pytest.fail("evaluate's model outputs require grad: a graph was recorded", pytrace=False)
    if not all(grad is None for grad in grads.values()):
        pytest.fail("evaluate left gradients in .grad", pytrace=False)
    if not grad_on_after:
        pytest.fail("after evaluate returned, autograd is still off (a global switch such as "
                    "torch.set_grad_enabled(False)): use `with torch.inference_mode():`, which ends with the block",
                    pytrace=False)


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu")])
def test_evaluate_moves_every_batch_to_the_device(lesson, device):
    got, seen, moved_to = run_elsewhere(lesson, "evaluate", device)
    what = f"evaluate(model, loader, loss_fn, device={device!r}) with batches on another device"
    assert_moved(what, seen, moved_to, device)
    losses = []
    expected = reference_evaluation(MOVED_RUNS["evaluate"](), two_batches(), losses=losses)
    if got != pytest.approx(expected, rel=1e-6):
        pitfall = mean_pitfall(got[0], losses, expected[0]) if isinstance(got, (list, tuple)) and got else ""
        if any(seen["training"]):  # dropout on: the pitfall, whatever the mean
            pitfall = (f"\nThe model ran in training mode on {sum(seen['training'])} of {len(seen['training'])} batches "
                       "(dropout on). Switch it to eval mode (model.eval()) for the evaluation.")
        mine, theirs = shown_pair(got, expected)
        pytest.fail(f"{what} returned {mine}, expected {theirs} (the mean loss over the samples, the "
                    "accuracy)." + pitfall, pytrace=False)


@pytest.mark.points(2)
@pytest.mark.parametrize("case", below("MODE_CASES"))
def test_evaluate_restores_every_submodules_mode(lesson, case):
    model = MODE_CASES[case]()
    before, after = modes(model), modes_after_evaluate(lesson, case)
    if after != before:
        pytest.fail(f"evaluate on a model in {case}: the (submodule, training) flags were {before} before and "
                    f"{after} after." + (modes_pitfall(model, after) or " Put back every submodule's own flag."),
                    pytrace=False)


def test_evaluate_restores_modes_when_the_loader_fails(lesson):
    raised, after = modes_after_a_failed_evaluate(lesson)
    if raised is None:
        pytest.fail("evaluate returned although its loader raised LoaderFailed: let the loader's error out",
                    pytrace=False)
    model = frozen_batchnorm(make_model(batchnorm=True))
    before = modes(model)
    if after == before:
        return
    if not any(flag for _, flag in after):  # all still in eval mode: nothing was put back
        pytest.fail(f"after the loader raised inside evaluate, the modes are {after}, not {before}: code after the "
                    "loop never ran. Restore them in a `finally:` block, which runs however the block ends.",
                    pytrace=False)
    pytest.fail(f"after the loader raised inside evaluate, the modes are {after}, not {before}."
                + (modes_pitfall(model, after) or " Put back every submodule's own flag."), pytrace=False)


# --- checkpoints ------------------------------------------------------------------------------


def test_checkpoint_loads_with_weights_only(lesson):
    written = checkpoint_bytes(lesson)
    reason = None
    try:
        torch.load(io.BytesIO(written.numpy().tobytes()), weights_only=True)
    except Exception as exc:  # noqa: BLE001 (the message is the point)
        reason = refused_type(exc) or f"{type(exc).__name__}: {str(exc)[:300]}"
    if reason:  # failed outside the except block: the learner needs no chained traceback
        pytest.fail(f"torch.load(path, weights_only=True) cannot read what save_checkpoint wrote (it refuses {reason}). "
                    f"{store_plain_data(reason)}", pytrace=False)


@pytest.mark.points(3)
def test_resumed_training_is_bitwise_identical(lesson):
    straight, optimizer, expected = first_epochs()
    saved = random_states()  # what the resumed run's checkpoint holds
    expected += [reference_epoch(straight, noisy_loader(), optimizer) for _ in range(2)]
    epoch, restored, losses, resumed = resumed_run(lesson)
    if epoch != 2:
        pytest.fail(epoch_off(epoch, saved_first=2), pytrace=False)
    assert_states_restored(restored, saved, "save_checkpoint then load_checkpoint in a new process (other random states)")
    what = ("4 epochs straight vs 2 epochs + save_checkpoint + load_checkpoint into a fresh model and "
            "Adam optimizer + 2 epochs (Dropout, shuffle=True, augmentation from random and NumPy)")
    if losses != expected:
        epoch = next(k for k, (a, b) in enumerate(zip(losses, expected)) if a != b) if len(losses) == len(expected) else None
        told = (f"per-epoch losses {numbers(losses)}, expected {numbers(expected)}" if numbers(losses) != numbers(expected)
                or epoch is None else "epoch {}'s loss {}, expected {}".format(epoch + 1, *apart(losses[epoch], expected[epoch])))
        pytest.fail(f"{what}: {told}. The random states came back as "
                    "saved, so look at what else the next steps depend on: the model's state and the optimizer's "
                    "(Adam's moments and step counts).", pytrace=False)
    assert_same_parameters(resumed, parameters(straight), what, exact=True)


def test_load_restores_model_optimizer_and_epoch(lesson):
    epoch, state, optimizer_state = restored_run(lesson)
    model, optimizer = trained_run()
    if not (type(epoch) is int and epoch == 3):
        pytest.fail(epoch_off(epoch, saved_first=3), pytrace=False)
    for name, value in model.state_dict().items():
        if not torch.equal(state[name], value):
            pytest.fail((
                f"the model's {name} after load_checkpoint is not the saved one: save model.state_dict(), which "
                "holds the buffers (BatchNorm's running statistics) as well as the parameters"
            ), pytrace=False)
    saved = optimizer.state_dict()
    if optimizer_state.keys() != saved["state"].keys():
        pytest.fail((
            "the optimizer after load_checkpoint has no Adam state (moments, step counts): save "
            "optimizer.state_dict() and load it with optimizer.load_state_dict"
        ), pytrace=False)
    for index, state in saved["state"].items():
        for key, value in state.items():
            assert_close(optimizer_state[index][key], value, what=f"optimizer state {key!r} of parameter {index} after load_checkpoint")


def test_save_leaves_only_the_checkpoint(lesson):
    left, first, epoch = saved_twice(lesson)
    if left != ["ckpt.pt"]:
        pytest.fail((
            f"after two save_checkpoint calls the folder holds {left}: "
            "rename the temporary file onto the path (os.replace)"
        ), pytrace=False)
    if epoch != 2:
        pytest.fail(epoch_off(first) or
                    f"the second save (epoch=2) did not replace the first: loading gives epoch {epoch!r}",
                    pytrace=False)


def test_save_writes_a_temporary_file_then_renames(lesson):
    path, old_inode, inode, renamed = renamed_onto(lesson)
    what = "save_checkpoint onto an existing checkpoint"
    if inode == old_inode:
        pytest.fail((
            f"{what} rewrote the old file in place (the same inode): a crash midway would leave it truncated. "
            "Write a temporary file in the same folder and os.replace it onto the path (an atomic rename)."
        ), pytrace=False)
    foreign = [src for src in renamed if os.path.dirname(src) != os.path.dirname(path)]
    if foreign:
        pytest.fail((
            f"{what} renamed {foreign} onto {path}: make the temporary file in the checkpoint's own folder "
            "(tempfile.mkstemp(dir=...)); os.replace is atomic only within one file system, and fails across two"
        ), pytrace=False)


@pytest.mark.parametrize("failure", below("FAILURES"))
def test_failed_save_keeps_the_old_checkpoint(lesson, failure):
    raised, left, first, epoch, broken = interrupted_save(lesson, failure)
    if raised is None or "simulated" not in raised:
        pytest.fail(f"save_checkpoint did not let out the {failure} that stopped torch.save midway: re-raise it",
                    pytrace=False)
    if left != ["ckpt.pt"]:
        why = ("remove the temporary file when the save fails, and re-raise" if failure == "OSError" else
               "remove the temporary file whatever stops the save: a KeyboardInterrupt (Ctrl-C) is no Exception, "
               "so only `except BaseException:` (re-raising) or `finally` runs for it too")
        pytest.fail(f"after a save that failed midway ({failure}) the folder holds {left}: {why}",
                    pytrace=False)
    if broken:
        pytest.fail(
            f"a save that failed midway destroyed the previous checkpoint (loading it raised {broken}): "
            "write to a temporary file in the same folder, then os.replace it onto the path", pytrace=False,
        )
    if epoch != 1:
        # the same epoch as before the failed save: the old checkpoint is intact, its loading is off
        pytest.fail(epoch_off(first) if epoch == first and epoch_off(first) else
                    f"after a failed save the checkpoint says epoch {epoch}, expected the old 1", pytrace=False)


@pytest.mark.points(2)
def test_load_maps_to_the_cpu_when_map_location_is_left_out(lesson):
    assert_defaults(lambda **map_location: load_location(lesson, **map_location),
                    what="load_checkpoint(path, model, optimizer)", map_location="cpu")


def test_load_refuses_a_checkpoint_that_runs_code(lesson):
    refused, ran = evil_loaded(lesson)
    if ran:
        pytest.fail((
            "load_checkpoint ran code hidden in the checkpoint file (unpickling can call any function): "
            "load it with torch.load(path, map_location=..., weights_only=True)"
        ), pytrace=False)
    if refused is None:
        pytest.fail("load_checkpoint accepted a checkpoint that is not a model at all", pytrace=False)


@pytest.mark.parametrize("location", below("LOCATIONS"))
def test_load_passes_map_location_and_weights_only(lesson, location):
    calls = load_calls(lesson, location)
    if len(calls) != 1:
        pytest.fail(f"load_checkpoint called torch.load {counted(len(calls), 'time')}, expected once", pytrace=False)
    passed_through, passed, weights_only = calls[0]
    if not passed_through:
        pytest.fail((
            f"load_checkpoint(..., map_location={LOCATIONS_SAID.get(location, repr(LOCATIONS[location]))}) called "
            f"torch.load with map_location={passed}: pass it through unchanged (None too)"
        ), pytrace=False)
    if weights_only is not True:
        pytest.fail((
            "load_checkpoint called torch.load without weights_only=True: say it explicitly, so that "
            "loading never unpickles arbitrary objects"
        ), pytrace=False)


@pytest.mark.parametrize(("saved_spare", "loaded_spare"), [(True, False), (False, True)], ids=["unexpected key", "missing key"])
def test_load_refuses_a_model_that_does_not_match(lesson, saved_spare, loaded_spare):
    expect_raises(
        lambda: mismatched_load(lesson, saved_spare, loaded_spare), RuntimeError,
        what=(f"load_checkpoint of a model {'with' if saved_spare else 'without'} a parameter 'spare' into one "
              f"{'with' if loaded_spare else 'without'} it"),
        why="load_state_dict is strict (the default, strict=True): a checkpoint that does not fit the model "
            "must not half-load and leave the rest at its random initialisation.",
        mention=("spare",),
    )


def test_checkpoint_keeps_every_cuda_random_state(lesson):
    with reported(f"{SAVED_ON_GPUS}load_checkpoint(path, model, optimizer) in a new process on the same machine"):
        states, _ = cuda_states_restored(lesson, 2)
    expected = FakeCudaRandom(2, fill=10).get_rng_state_all()  # the machine it was saved on
    for i, (got, want) in enumerate(zip(states, expected)):
        if not torch.equal(got, want):
            pytest.fail((
                f"save_checkpoint then load_checkpoint on a machine with 2 GPUs: cuda:{i}'s random state is "
                f"{got.tolist()}, not the saved {want.tolist()}. Save torch.cuda.get_rng_state_all() when CUDA "
                "is available (every device's) and restore it with torch.cuda.set_rng_state_all."
            ), pytrace=False)
    with reported(f"{SAVED_ON_GPUS}load_checkpoint(path, model, optimizer) on a machine without CUDA (a machine "
                  "without CUDA has no CUDA random state to restore: expected the load to restore none)"):
        _, sets = cuda_states_restored(lesson, 0)
    if sets != 0:
        pytest.fail((
            "load_checkpoint of a checkpoint written on a GPU machine, on a machine without CUDA, set CUDA "
            "random states: restore them only where torch.cuda.is_available()"
        ), pytrace=False)


# --- accumulate_gradients ---------------------------------------------------------------------


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
    got, grads = accumulated(lesson, n, micro_batches, seed=n)
    model = make_model(dtype=torch.float64)
    x, y = make_data(n, seed=n, dtype=torch.float64)
    expected_loss, expected = full_batch_gradients(model, x, y)
    what = f"accumulate_gradients(model, loss_fn, inputs, targets, micro_batches={micro_batches}) for N={n} (chunks {chunks_of(n, micro_batches)})"
    for name, grad in grads.items():
        if grad is None:
            pytest.fail(f"{what} left {attribute(name)}.grad empty", pytrace=False)
    if not all_close(list(grads.values()), expected):
        why = accumulation_pitfall(list(grads.values()), model, x, y, micro_batches, expected)
        if why:
            pytest.fail(f"{what}: the .grad differs from one full batch's.{why}", pytrace=False)
    for (name, grad), want in zip(grads.items(), expected):
        assert_close(grad, want, what=f"{what}: {attribute(name)}.grad vs one full batch")
    if not (type(got) is float and got == pytest.approx(expected_loss, rel=1e-9)):
        pytest.fail((
            "{} returned {}, expected the full-batch loss {} as a Python float".format(what, *shown_pair(got, expected_loss))
        ), pytrace=False)


def test_accumulate_discards_old_gradients(lesson):
    after = accumulated_over_stale(lesson)
    body = SpareHead(dtype=torch.float64).body
    _, expected = full_batch_gradients(body, *make_data(12, dtype=torch.float64))
    what = "accumulate_gradients(model, loss_fn, inputs, targets, 3) on a model whose .grad held ones"
    names = [name for name, _ in body.named_parameters()]
    grads = [after[f"body.{name}"] for name in names]
    if not all_close(grads, expected) and all_close(grads, [g + 1 for g in expected]):
        pytest.fail(f"{what}: every .grad is the full batch's plus those ones: backward() adds to .grad, and the old "
                    "gradients were never discarded. Clear them (to None) first.", pytrace=False)
    for name, grad, want in zip(names, grads, expected):
        assert_close(grad, want, what=f"{attribute('body.' + name)}.grad after {what}")
    if after["spare"] is not None:
        pytest.fail(
            "accumulate_gradients on a model whose .grad held ones: a parameter the loss does not use has "
            f".grad {after['spare'].tolist()} afterwards, not None. Discard the old gradients with "
            "model.zero_grad(set_to_none=True): a grad of zeros would be stepped by weight decay or Adam.",
            pytrace=False,
        )


@pytest.mark.parametrize("micro_batches", [2, 3, 7])
def test_accumulate_runs_one_forward_and_backward_per_chunk(lesson, micro_batches):
    calls, x, params = accumulation_watched(lesson, micro_batches)
    what = f"accumulate_gradients(..., micro_batches={micro_batches}) for N=7"
    sizes = chunks_of(7, micro_batches)
    if [size for size, _ in calls] != sizes:
        pytest.fail((
            f"{what} ran the model on batches of {[size for size, _ in calls]}, expected {sizes} "
            "(torch.tensor_split(inputs, micro_batches)): the point is never to hold the whole batch's graph"
        ), pytrace=False)
    if [filled for _, filled in calls] != [False] + [True] * (len(sizes) - 1):
        pytest.fail((
            f"{what}: call backward on each chunk's loss before the next chunk's forward, so each graph is freed"
        ), pytrace=False)
    assert_close(x, make_data(7, dtype=torch.float64)[0], what=f"inputs after {what} (must not change)")
    before = parameters(make_model(dtype=torch.float64))
    if not all(torch.equal(p, q) for p, q in zip(params.values(), before.values())):
        pytest.fail(f"{what} changed the parameters: no optimizer step here", pytrace=False)


@pytest.mark.parametrize("micro_batches", [0, -1, 8])
def test_accumulate_refuses_impossible_splits(lesson, micro_batches):
    expect_raises(
        lambda: accumulated(lesson, 7, micro_batches, seed=0)[0], ValueError,
        what=f"accumulate_gradients(..., micro_batches={micro_batches}) for N=7",
        why="it needs 1 <= micro_batches <= N (an empty chunk's mean loss is nan).",
    )


# --- a real GPU -------------------------------------------------------------------------------


@pytest.mark.cuda
def test_training_on_the_gpu_with_cpu_batches(lesson):
    device, loss, result, cpu_epoch, gpu_epoch, trained, on_cpu, back_on_gpu = gpu_round_trip(lesson)
    if not (isinstance(device, torch.device) and device.type == "cuda"):
        pytest.fail(f"pick_device() returned {device} on a machine with a GPU", pytrace=False)
    if type(loss) is not float:
        pytest.fail(f"train_epoch on the GPU returned {loss!r}, not a Python float", pytrace=False)
    if not (isinstance(result, tuple) and all(type(v) is float for v in result)):
        pytest.fail(f"evaluate on the GPU returned {result!r}, not two Python floats", pytrace=False)
    if cpu_epoch != 1:
        pytest.fail(f"load_checkpoint of a GPU checkpoint saved with epoch=1 returned {cpu_epoch!r}", pytrace=False)
    assert_same_parameters(on_cpu, trained, "a GPU checkpoint loaded onto a CPU model", exact=True)
    if gpu_epoch != 2:
        pytest.fail(f"load_checkpoint(..., map_location={device}) of a checkpoint saved with epoch=2 returned "
                    f"{gpu_epoch!r}", pytrace=False)
    assert_same_parameters(back_on_gpu, on_cpu, "a CPU checkpoint loaded with map_location=cuda", exact=True)


# === what the tests use ===========================================================================
#
# `lesson` is the module under test (the learner's, the reference, or a mutant). The data are
# small and synthetic (a few dozen samples, 4 features, 3 classes), the models tiny MLPs, so
# every test runs in well under a second. A GPU machine is simulated by patching
# torch.cuda.is_available / device_count (and CUDA's random-state functions) with unittest.mock,
# inside the scenario that calls the learner's code; the tests marked cuda use a real one. A batch
# "on another device" is an `Elsewhere` tensor: it says it lives on `meta`, and only
# `.to(device)` turns it into an ordinary tensor.
#
# The learner's functions train, evaluate and save objects that live beside their code, so the
# tests drive them in scenarios (grader.testing.scenario): functions marked @beside that build
# the model, data and optimizer from the shared helpers below (make_model, make_data, ...),
# patch torch where a test simulates a machine, call the learner's function and return what
# they saw as data (losses, parameters, gradients, modes, calls, files). Under `kata grade`
# they run in the code's process; the tests build the same objects here, run the plain loops
# and make every check on this side.


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


def sgd(model: nn.Module, **options) -> torch.optim.SGD:
    """SGD with lr=0.1 on the model's parameters: the optimizer most train_epoch tests use, on both sides."""
    return torch.optim.SGD(model.parameters(), lr=0.1, **options)


def two_batches() -> list:
    """make_data() as batches of 16 and 24."""
    x, y = make_data()
    return [(x[:16], y[:16]), (x[16:], y[16:])]


def seed_all(seed: int) -> None:
    """This file's own seeding, so checkpoint tests do not depend on the learner's seed_everything."""
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def reference_epoch(model, loader, optimizer, loss_fn=LOSS, clear: str = "before", losses: list | None = None) -> float:
    """The plain loop train_epoch must match: train mode, zero_grad, forward, backward, step.

    clear: "before" each backward (right), or the pitfalls: "after" each step only, "never".
    losses: if given, collects each batch's (detached loss tensor, batch size).
    """
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        if clear == "before":
            optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if clear == "after":
            optimizer.zero_grad()
        if losses is not None:
            losses.append((loss.detach(), len(y)))
        total += loss.item() * len(y)
        count += len(y)
    return total / count


AS_FLOAT = ("Return loss_sum / n as a Python float: loss_sum adds loss.item() * batch size per batch, n the batch "
            "sizes, so no tensor (its dtype, its device, its graph) is kept.")


def mean_pitfall(got, losses: list, expected: float) -> str:
    """Why the mean loss `got` is wrong when it is what a pitfall the lesson names gives, else "".
    losses: each batch's (detached mean loss, size), as reference_epoch collects them."""
    if type(got) is not float or len(losses) < 2:
        return ""
    sizes = [size for _, size in losses]
    batch_means = sum(loss.item() for loss, _ in losses) / len(losses)
    if got == pytest.approx(batch_means, rel=1e-6) and batch_means != pytest.approx(expected, rel=1e-6):
        weighs = (f"the last batch ({sizes[-1]} samples) weighs as much as a full one ({sizes[0]})" if sizes[-1] < sizes[0]
                  else f"batches of {' and '.join(map(str, sizes))} samples weigh alike")
        return (f" That is the mean of the batch means: {weighs}. Weigh each batch by its size: the sum of "
                "loss.item() * batch size over the number of samples.")
    tensor_sum = 0.0
    for loss, size in losses:
        tensor_sum = tensor_sum + loss * size
    tensor_mean = (tensor_sum / sum(sizes)).item()
    if got == tensor_mean and tensor_mean != pytest.approx(expected, rel=1e-6):
        return (f" That is the losses summed as a {dtype_name(losses[0][0].dtype)} tensor, which "
                "rounds at every addition in the model's low precision: add loss.item() * batch size as Python "
                "floats.")
    return ""


def modes(model: nn.Module) -> list[tuple[str, bool]]:
    return [(name or "<model>", m.training) for name, m in model.named_modules()]


def parameters(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's parameters by name, detached copies: what a scenario reports of a model."""
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def gradients(model: nn.Module) -> dict[str, torch.Tensor | None]:
    """Each parameter's .grad by name (None where it has none)."""
    return {name: None if p.grad is None else p.grad.clone() for name, p in model.named_parameters()}


def same_parameters(actual: dict, expected: dict) -> bool:
    """Whether every parameter is close to the other model's (as assert_same_parameters judges)."""
    try:
        for a, b in zip(actual.values(), expected.values()):
            torch.testing.assert_close(a, b)
    except AssertionError:
        return False
    return True


def assert_same_parameters(actual: dict, expected: dict, what: str, exact: bool = False) -> None:
    """actual, expected: parameters by name, as parameters() gives them."""
    __tracebackhide__ = True
    for (name, a), b in zip(actual.items(), expected.values()):
        if exact:
            if not torch.equal(a, b):
                pytest.fail(f"{what}: {attribute(name)} is not bitwise equal (max diff {(a - b).abs().max():.3g})",
                            pytrace=False)
        else:
            assert_close(a, b, what=f"{what}: {attribute(name)}")


def shown_pair(got, expected) -> tuple[str, str]:
    """What the learner's function returned and what was expected, as a message sets them side by
    side: floats (alone, or in tuples and lists of the same length) with the digits that tell them
    apart (grader.testing.apart), anything else as `returned` names it."""
    if type(got) is float and type(expected) is float:
        return apart(got, expected) if got != expected else (numbers([got])[1:-1],) * 2
    if type(got) is type(expected) and type(got) in (tuple, list) and len(got) == len(expected):
        pairs = [shown_pair(a, b) for a, b in zip(got, expected)]
        ends = "()" if type(got) is tuple else "[]"
        return tuple(f"{ends[0]}{', '.join(pair[k] for pair in pairs)}{ends[1]}" for k in (0, 1))
    if type(expected) is float and isinstance(got, torch.Tensor) and got.dim() == 0:
        return returned(got), returned(torch.tensor(expected)).removeprefix("tensor(").removesuffix(")")  # as torch prints it
    if type(expected) is float:
        return returned(got), numbers([expected])[1:-1]
    return returned(got), returned(expected)


def as_data(value):
    """What the learner's function returned, as a scenario reports it: itself where it is made of
    what crosses to the tests' process (numbers, strings, tensors, devices, tuples and lists of
    them), else {"type": its type's name, "repr": its repr}, so both runs see the same thing."""
    if type(value) in (tuple, list):
        return type(value)(as_data(v) for v in value)
    if type(value) in (type(None), bool, int, float, str, torch.device) or isinstance(value, torch.Tensor):
        return value
    return {"type": type(value).__name__, "repr": repr(value)}


def type_name(value) -> str:
    """The name of the type of what the learner's function returned (as_data's stand-in too)."""
    return value["type"] if isinstance(value, dict) and set(value) == {"type", "repr"} else type(value).__name__


@contextlib.contextmanager
def scratch_folder():
    """A new empty folder, removed afterwards. A scenario makes its own: under `kata grade` it
    runs in the code's process, which sees a temporary folder of its own, not the test's tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="kata09-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def file_bytes(path: Path) -> torch.Tensor:
    """A file's bytes as a uint8 tensor, which crosses to the tests' process."""
    data = path.read_bytes()
    return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


# --- pick_device ------------------------------------------------------------------------------


@contextlib.contextmanager
def simulated_machine(gpus: int, mps: bool = False):
    """Inside the block, torch believes it runs on a machine with `gpus` GPUs (and MPS if `mps`)."""
    with mock.patch.object(torch.cuda, "is_available", lambda: gpus > 0), \
            mock.patch.object(torch.cuda, "device_count", lambda: gpus), \
            mock.patch.object(torch.backends.mps, "is_available", lambda: mps):
        yield


@beside
def picked(lesson, gpus: int, mps: bool, *prefer):
    """pick_device(*prefer) on a simulated machine: what it returned (its error is raised as itself)."""
    with simulated_machine(gpus, mps):
        return as_data(lesson.pick_device(*prefer))


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


@beside
def seeded_draws(lesson, seeds: list[int]) -> list:
    """For each seed in turn: what seed_everything(seed) returned, and one draw from every
    generator right after it (draw_everything); every generator is moved on before the next seed."""
    runs = []
    for seed in seeds:
        returned = as_data(lesson.seed_everything(seed))
        runs.append((returned, draw_everything()))
        random.random(), np.random.rand(), torch.rand(1)  # move every generator on
    return runs


UNSEEDED = {  # the generator behind each draw, and what leaving it unseeded means
    "torch.rand": "torch's generator was not seeded (torch.manual_seed(seed))",
    "DataLoader(shuffle=True) order": "torch's generator, which a shuffling DataLoader draws from, was not seeded "
                                      "(torch.manual_seed(seed))",
    "nn.Dropout(0.5) mask": "torch's generator, which Dropout draws from, was not seeded (torch.manual_seed(seed))",
    "random.random": "Python's random has a generator of its own, which was not seeded (random.seed(seed))",
    "np.random.rand": "NumPy's global generator (the one np.random.* functions share) was not seeded. "
                      "np.random.default_rng(seed) builds a new generator and leaves the global one alone; "
                      "np.random.seed(seed) seeds it",
}


@beside
def cuda_seeds(lesson, seed: int) -> list[int]:
    """The seeds torch.cuda.manual_seed_all was given during seed_everything(seed) on a simulated
    machine with 2 GPUs."""
    seeded = []
    with simulated_machine(2), mock.patch.object(torch.cuda, "manual_seed_all", lambda s: seeded.append(int(s))):
        lesson.seed_everything(seed)
    return seeded


# --- train_epoch ------------------------------------------------------------------------------


@beside
def epoch_losses(lesson, epochs: int) -> list:
    """What train_epoch returned in each of `epochs` epochs of Adam(lr=0.02) on make_model() over make_loader()."""
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    loader = make_loader()
    return [as_data(lesson.train_epoch(model, loader, optimizer, LOSS, torch.device("cpu"))) for _ in range(epochs)]


def dropout_in_eval(model: nn.Module) -> nn.Module:
    model.train()
    model[2].eval()
    return model


START_CASES = {  # the model's modes before train_epoch, and its dtype
    "train mode": (nn.Module.train, torch.float32),
    "eval mode": (nn.Module.eval, torch.float32),
    "train mode with its Dropout in eval": (dropout_in_eval, torch.float32),
    "train mode, float16": (nn.Module.train, torch.float16),  # a float16 loss: sum loss.item(), not tensors
}


def plain_loop_run(start: str):
    """(model, optimizer, batches) of test_train_epoch_matches_a_plain_loop: a model with Dropout(0.3)
    in the modes and dtype START_CASES[start] says, SGD with momentum, batches of 16, 16 and 8.
    Built alike for the learner's train_epoch and for each plain loop it is compared with."""
    set_modes, dtype = START_CASES[start]
    model = make_model(dropout=0.3, dtype=dtype)
    set_modes(model)
    x, y = make_data(dtype=dtype)
    batches = [(x[i:i + BATCH], y[i:i + BATCH]) for i in range(0, N_SAMPLES, BATCH)]
    return model, sgd(model, momentum=0.9), batches


@beside
def trained_from(lesson, start: str):
    """train_epoch on plain_loop_run(start), torch seeded with 3 first (its dropout masks): what it
    returned, the (submodule, training) flags afterwards, the parameters."""
    model, optimizer, batches = plain_loop_run(start)
    torch.manual_seed(3)
    got = lesson.train_epoch(model, batches, optimizer, LOSS, "cpu")
    return as_data(got), modes(model), parameters(model)


def plain_loop(start: str, clear: str = "before", losses: list | None = None):
    """reference_epoch on plain_loop_run(start), with the dropout masks trained_from's run draws:
    what it returned, the parameters."""
    model, optimizer, batches = plain_loop_run(start)
    torch.manual_seed(3)
    return reference_epoch(model, batches, optimizer, clear=clear, losses=losses), parameters(model)


def regression_batches() -> list:
    """21 samples with regression targets of shape (batch, 3), as batches of 8, 8 and 5."""
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(21, FEATURES, generator=g), torch.randn(21, CLASSES, generator=g)
    return [(x[:8], y[:8]), (x[8:16], y[8:16]), (x[16:], y[16:])]


@beside
def trained_on_a_generator(lesson, one_pass: bool = True):
    """train_epoch with mse_loss and SGD(lr=0.1) on make_model(), regression_batches() coming from a
    generator (one pass), or as a list with `one_pass` False: what it returned, the parameters."""
    model = make_model()
    batches = (batch for batch in regression_batches()) if one_pass else regression_batches()
    got = lesson.train_epoch(model, batches, sgd(model), nn.functional.mse_loss, "cpu")
    return as_data(got), parameters(model)


class Elsewhere(torch.Tensor):
    """A batch a loader yields on another device: it says it lives on `meta`; `.to(device)` returns
    an ordinary tensor and records where it was asked to go. Every other operation treats it
    as an ordinary CPU tensor."""

    __torch_function__ = torch._C._disabled_torch_function_impl
    moved_to: list = []

    @property
    def device(self) -> torch.device:
        return torch.device("meta")

    def to(self, *args, **kwargs):
        Elsewhere.moved_to.append(torch._C._nn._parse_to(*args, **kwargs)[0])
        return torch.Tensor.to(self.as_subclass(torch.Tensor), *args, **kwargs)


def elsewhere(batches: list) -> list:
    return [(x.as_subclass(Elsewhere), y.as_subclass(Elsewhere)) for x, y in batches]


def watch_batches(model: nn.Module, loss_fn=LOSS):
    """(seen, loss_fn): seen['inputs'] and seen['targets'] collect whether each reached the model
    and loss_fn still on the other device, seen['training'] whether the model was in training mode."""
    seen = {"inputs": [], "targets": [], "training": []}

    def watching_model(m, args):  # returns None: the inputs go on as they are
        seen["inputs"].append(isinstance(args[0], Elsewhere))
        seen["training"].append(m.training)

    model.register_forward_pre_hook(watching_model)

    def watching_loss(outputs, targets):
        seen["targets"].append(isinstance(targets, Elsewhere))
        return loss_fn(outputs, targets)

    return seen, watching_loss


MOVED_RUNS = {  # the model each function of the lesson is run on over batches elsewhere
    "train_epoch": lambda: make_model(),
    "evaluate": lambda: make_model(dropout=0.5),
}


def evaluate(lesson, *args):
    """lesson.evaluate(*args), with autograd's switch put back as it was before: an evaluate that
    leaves it off fails test_evaluate_runs_under_inference_mode, not every later test that trains."""
    with torch.set_grad_enabled(torch.is_grad_enabled()):
        return lesson.evaluate(*args)


@beside
def run_elsewhere(lesson, function: str, device):
    """train_epoch (SGD, lr=0.1) or evaluate on MOVED_RUNS[function]() over two_batches() on another
    device, with `device`: what it returned, what watch_batches saw, where .to moved the tensors."""
    model = MOVED_RUNS[function]()
    seen, loss_fn = watch_batches(model)
    Elsewhere.moved_to = moved_to = []
    if function == "train_epoch":
        got = lesson.train_epoch(model, elsewhere(two_batches()), sgd(model), loss_fn, device)
    else:
        got = evaluate(lesson, model, elsewhere(two_batches()), loss_fn, device)
    return as_data(got), seen, moved_to


def assert_moved(what: str, seen: dict, moved_to: list, device) -> None:
    __tracebackhide__ = True
    for name, where in (("inputs", "the model"), ("targets", "loss_fn")):
        if any(seen[name]):
            pytest.fail(
                f"{what}: {sum(seen[name])} of {len(seen[name])} batches' {name} reached {where} without "
                f"{name}.to(device) (a loader on another device: the CPU, or pinned memory, while the model "
                "is on the GPU). Move both tensors of every batch.", pytrace=False,
            )
    wrong = [d for d in moved_to if d != torch.device(device)]
    if wrong:
        pytest.fail(f"{what}: batches were moved to {wrong}, not to device={device!r}", pytrace=False)


class SpareHead(nn.Module):
    """The lesson's MLP and a parameter its forward does not use (a head for another task)."""

    def __init__(self, spare: bool = True, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.body = make_model(dtype=dtype)
        if spare:
            self.spare = nn.Parameter(torch.ones(CLASSES, dtype=dtype))

    def forward(self, x):
        return self.body(x)


def stale(model: nn.Module) -> nn.Module:
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)  # left behind by someone else's backward
    return model


@beside
def spare_after_training(lesson):
    """train_epoch with SGD(weight_decay=0.1) over make_loader() on a stale SpareHead: its spare
    parameter's .grad and value afterwards."""
    model = stale(SpareHead())
    optimizer = sgd(model, weight_decay=0.1)
    lesson.train_epoch(model, make_loader(), optimizer, LOSS, "cpu")
    return model.spare.grad, model.spare.detach().clone()


class Probe(torch.autograd.Function):
    """The identity, as a node of the graph whose life a weak reference can follow."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


@beside
def graphs_kept(lesson):
    """train_epoch over 5 batches of 8 with a loss that notes, at each step, which earlier steps'
    graphs are still alive: what it returned, and the notes (step, [steps alive]) where any were."""
    model = make_model()
    x, y = make_data()
    batches = [(x[i:i + 8], y[i:i + 8]) for i in range(0, N_SAMPLES, 8)]  # 5 steps
    graphs, kept = [], []  # weak references to each step's graph; (step, older steps still alive)

    def probed_loss(outputs, targets):
        alive = [i for i, ref in enumerate(graphs[:-1]) if ref() is not None]  # the last one may still be bound
        if alive:
            gc.collect()
            alive = [i for i in alive if graphs[i]() is not None]
        if alive:
            kept.append((len(graphs), alive))
        loss = Probe.apply(LOSS(outputs, targets))
        graphs.append(weakref.ref(loss.grad_fn))
        return loss

    got = lesson.train_epoch(model, batches, sgd(model), probed_loss, "cpu")
    return as_data(got), kept


@beside
def trained_stale(lesson):
    """train_epoch (SGD, lr=0.1) over make_loader() on a stale make_model(): the parameters afterwards."""
    model = stale(make_model())
    lesson.train_epoch(model, make_loader(), sgd(model), LOSS, "cpu")
    return parameters(model)


# --- evaluate ---------------------------------------------------------------------------------


def reference_evaluation(model: nn.Module, loader, losses: list | None = None) -> tuple[float, float]:
    """Batch by batch in eval mode; each batch's mean loss .item() times its size, summed as floats.
    losses: if given, collects each batch's (mean loss tensor, batch size)."""
    model = copy.deepcopy(model).eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss = LOSS(logits, y)
            if losses is not None:
                losses.append((loss, len(y)))
            total += loss.item() * len(y)
            correct += (logits.argmax(1) == y).sum().item()
            count += len(y)
    return total / count, correct / count


def evaluation_run(dropout: float, dtype: torch.dtype):
    """(model, loader) of test_evaluate_matches_the_whole_data_set_in_eval_mode: a model with Dropout
    and BatchNorm in train mode, batches of 12, 12, 12 and 4."""
    model = make_model(dropout=dropout, batchnorm=True, dtype=dtype)
    model.train()
    with torch.no_grad():  # running stats far from their defaults, so train-mode BatchNorm differs
        model[1].running_mean.fill_(0.3)
        model[1].running_var.fill_(2.0)
    return model, DataLoader(TensorDataset(*make_data(dtype=dtype)), batch_size=12)


@beside
def evaluated(lesson, dropout: float, dtype: torch.dtype):
    """evaluate on evaluation_run(dropout, dtype): what it returned, BatchNorm's running_mean afterwards."""
    model, loader = evaluation_run(dropout, dtype)
    got = evaluate(lesson, model, loader, LOSS, "cpu")
    return as_data(got), model[1].running_mean.clone()


@beside
def inference_seen(lesson):
    """evaluate on make_model() over make_loader(): at each forward, (inference mode on, autograd on,
    the output requires grad); whether autograd was on (inference mode off) once it returned; the
    parameters' .grad afterwards."""
    model = make_model()
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(
        (torch.is_inference_mode_enabled(), torch.is_grad_enabled(), out.requires_grad)))
    try:
        lesson.evaluate(model, make_loader(), LOSS, "cpu")
        grad_on_after = torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    finally:
        torch.set_grad_enabled(True)  # whatever evaluate left, what runs next needs autograd on
    return seen, grad_on_after, gradients(model)


def frozen_batchnorm(model: nn.Module) -> nn.Module:
    model.train()
    model[1].eval()  # fine-tuning with frozen BatchNorm statistics
    return model


def half_eval(model: nn.Module) -> nn.Module:
    model.eval()
    model[3].train()
    return model


def nested_frozen_batchnorm() -> nn.Module:
    """Modules inside modules: a frozen BatchNorm and a training Dropout two levels down."""
    model = nn.Sequential(make_model(dropout=0.2, batchnorm=True), nn.Sequential(nn.Dropout(0.2), nn.Linear(CLASSES, CLASSES)))
    model.train()
    model[0][1].eval()
    return model


MODE_CASES = {
    "train mode": lambda: make_model(dropout=0.2, batchnorm=True).train(),
    "eval mode": lambda: make_model(dropout=0.2, batchnorm=True).eval(),
    "train mode with a frozen BatchNorm in eval": lambda: frozen_batchnorm(make_model(dropout=0.2, batchnorm=True)),
    "eval mode with its Dropout in train": lambda: half_eval(make_model(dropout=0.2, batchnorm=True)),
    "train mode, nested, with a frozen BatchNorm two levels down": nested_frozen_batchnorm,
}


def modes_pitfall(model: nn.Module, after: list) -> str:
    """Why the flags `after` evaluate on `model` (as it was before the call) are wrong when they
    are what a pitfall the lesson names gives, else ""."""
    before, top = modes(model), model.training
    if all(not flag for _, flag in after) and top:
        return (" evaluate left the model in eval mode: the caller's next epoch would train without dropout. Put "
                "every flag back afterwards.")
    if all(flag == top for _, flag in after):
        kept = " and ".join(f"the {type(m).__name__} {name!r}" for name, m in model.named_modules() if m.training != top)
        return (f" Every flag is now {top}, the model's own: one flag was put back for the whole model "
                f"(model.train(was_training) sets every submodule), which overwrites {kept}, kept in "
                f"{'eval' if top else 'train'} mode on purpose. Record each submodule's own flag and put each one back.")
    wrong = [name for (name, was), (_, now) in zip(before, after) if was != now]
    if wrong and all(name.count(".") >= 1 for name in wrong):
        return (f" Only the deeper submodules ({', '.join(wrong)}) lost their flags: model.children() lists the "
                "first level only; model.modules() goes all the way down.")
    return ""


@beside
def modes_after_evaluate(lesson, case: str) -> list:
    """The (submodule, training) flags of MODE_CASES[case]() after evaluate on it over make_loader()."""
    model = MODE_CASES[case]()
    evaluate(lesson, model, make_loader(), LOSS, "cpu")
    return modes(model)


class LoaderFailed(Exception):
    pass


@beside
def modes_after_a_failed_evaluate(lesson):
    """evaluate on a frozen_batchnorm model whose loader raises LoaderFailed after one batch: the
    message of the LoaderFailed that came out of it (None if none did), the flags afterwards. Any
    other error is raised as itself."""
    model = frozen_batchnorm(make_model(batchnorm=True))
    x, y = make_data()

    def failing_loader():
        yield x[:BATCH], y[:BATCH]
        raise LoaderFailed("disk read failed (simulated)")

    raised = None
    try:
        evaluate(lesson, model, failing_loader(), LOSS, "cpu")
    except LoaderFailed as exc:
        raised = str(exc)
    return raised, modes(model)


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


def new_run(seed: int, batchnorm: bool = False):
    model = make_model(seed=seed, dropout=0.3, batchnorm=batchnorm)
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def one_gaussian_each() -> None:
    """Leave a cached Gaussian in Python's random and in NumPy: both draw them in pairs."""
    random.gauss(0.0, 1.0)
    np.random.randn()


def noisy_loader() -> DataLoader:
    return DataLoader(NoisyData(), batch_size=BATCH, shuffle=True)


@beside
def checkpoint_bytes(lesson):
    """The bytes save_checkpoint writes for new_run(seed=0) at epoch 1, NumPy's global state holding
    a cached position."""
    np.random.rand()  # a NumPy state with a cached position
    model, optimizer = new_run(seed=0)
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=1)
        return file_bytes(folder / "ckpt.pt")


def refused_type(exc: BaseException) -> str | None:
    """The name torch.load(weights_only=True) refused to unpickle (numpy._core.multiarray._reconstruct,
    say), read from torch's long message, or None when `exc` is no such refusal."""
    for line in str(exc).splitlines():
        if "Unsupported global: " in line:
            return line.split("Unsupported global: ")[1].removeprefix("GLOBAL ").split(" was not an allowed")[0]
    return None


def store_plain_data(reason: str) -> str:
    """What to store instead of the type weights_only refused (`reason`, from refused_type)."""
    numpy = (" That is a NumPy object: np.random.get_state() holds an np.ndarray, store it as a list "
             "(.tolist()).") if "numpy" in reason else ""
    return f"Store only tensors, dicts, lists, tuples, strings and numbers.{numpy}"


REFUSED = "weights_only refused"  # the key of what a reads_back scenario returns for such a checkpoint


def reads_back(fn):
    """A scenario (grader.testing.scenario.beside) that loads what save_checkpoint wrote. Where
    torch.load(weights_only=True) refuses a type in that file, the test fails saying what to
    store instead, as test_checkpoint_loads_with_weights_only does: the load never got to what the
    test checks, and torch's own message advises dropping weights_only."""
    @functools.wraps(fn)
    def refusal_as_data(lesson, *args, **kwargs):
        try:
            return fn(lesson, *args, **kwargs)
        except Exception as exc:  # only the refusal is caught; the rest is re-raised
            reason = refused_type(exc)
            if reason is None:
                raise
        return {REFUSED: reason}

    scenario = beside(refusal_as_data)

    @functools.wraps(fn)
    def checked(lesson, *args, **kwargs):
        __tracebackhide__ = True
        result = scenario(lesson, *args, **kwargs)
        if isinstance(result, dict) and set(result) == {REFUSED}:
            pytest.fail(f"load_checkpoint cannot read back what save_checkpoint wrote: torch.load(path, "
                        f"weights_only=True) refuses {result[REFUSED]}. {store_plain_data(str(result[REFUSED]))}",
                        pytrace=False)
        return result

    checked._kata_scenario_of = refusal_as_data  # what the code's process runs (beside)
    return checked


def random_states() -> dict:
    """Every global random state a training script draws from, as comparable plain values."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state().tolist(), "python": random.getstate(),
            "numpy": (name, keys.tolist(), pos, has_gauss, cached)}


def assert_states_restored(now: dict, saved: dict, what: str) -> None:
    """The random states `now` are `saved`, each whole; else a failure naming the one that is not."""
    __tracebackhide__ = True
    if now["torch"] != saved["torch"]:
        pytest.fail(f"{what}: torch's random state is not the one saved, so the resumed run shuffles and drops out "
                    "differently. Save torch.get_rng_state() and restore it (torch.set_rng_state).", pytrace=False)
    for key, name in (("python", "Python's random module"), ("numpy", "NumPy's global generator")):
        if now[key] == saved[key]:
            continue
        if key == "python":  # (version, internal state, the cached Gaussian or None)
            same_draws, cached = now[key][:2] == saved[key][:2], (now[key][2] is not None, saved[key][2] is not None)
        else:  # (name, keys, pos, has_gauss, cached_gaussian)
            same_draws, cached = now[key][:3] == saved[key][:3], (bool(now[key][3]), bool(saved[key][3]))
        if same_draws:
            held = ["one" if has else "none" for has in cached]
            pytest.fail(f"{what}: the state of {name} is restored but for its cached Gaussian (now {held[0]}, saved "
                        f"{held[1]}{'' if cached[0] != cached[1] else ', another value'}): Gaussians are drawn in pairs and the second waits in the state, so the "
                        "next one differs. Save and restore the whole state, its last items too.", pytrace=False)
        pytest.fail(f"{what}: the random state of {name} is not the one saved (an augmentation drawing from it would "
                    "differ). Save it in the checkpoint and restore it when loading.", pytrace=False)


def first_epochs():
    """(model, optimizer, losses): 2 epochs of new_run(seed=0) on noisy_loader() from seed_all(0), then
    one_gaussian_each(): the run test_resumed_training_is_bitwise_identical saves."""
    seed_all(0)
    model, optimizer = new_run(seed=0)
    losses = [reference_epoch(model, noisy_loader(), optimizer) for _ in range(2)]
    one_gaussian_each()
    return model, optimizer, losses


@reads_back
def resumed_run(lesson):
    """first_epochs() saved with save_checkpoint at epoch 2; then, as in a new process, other random
    states (seed_all(12345)) and new_run(seed=1), load_checkpoint, and 2 more epochs: what load
    returned, the random states right after it, the 4 epochs' losses, the parameters at the end."""
    model, optimizer, losses = first_epochs()
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "run.pt", model, optimizer, epoch=2)
        seed_all(12345)
        model, optimizer = new_run(seed=1)
        epoch = lesson.load_checkpoint(folder / "run.pt", model, optimizer)
    restored = random_states()
    losses += [reference_epoch(model, noisy_loader(), optimizer) for _ in range(2)]
    return as_data(epoch), restored, losses, parameters(model)


def trained_run():
    """new_run(seed=0, batchnorm=True) after one epoch over make_loader(), its dropout masks drawn
    from torch seeded with 0 (the global state left as it was)."""
    model, optimizer = new_run(seed=0, batchnorm=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        reference_epoch(model, make_loader(), optimizer)
    return model, optimizer


@reads_back
def restored_run(lesson):
    """trained_run() saved at epoch 3, loaded into new_run(seed=1, batchnorm=True): what load returned,
    that model's state_dict and that optimizer's state afterwards."""
    model, optimizer = trained_run()
    fresh, fresh_optimizer = new_run(seed=1, batchnorm=True)
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=3)
        epoch = lesson.load_checkpoint(folder / "ckpt.pt", fresh, fresh_optimizer)
    return as_data(epoch), dict(fresh.state_dict()), fresh_optimizer.state_dict()["state"]


@reads_back
def saved_twice(lesson):
    """save_checkpoint of new_run(seed=0) at epoch 1 (a Path), then at epoch 2 onto the same path
    (a str), in a folder of its own: what the folder holds then, and what load_checkpoint returns
    after each save."""
    model, optimizer = new_run(seed=0)
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=1)
        first = lesson.load_checkpoint(folder / "ckpt.pt", *new_run(seed=1))
        lesson.save_checkpoint(str(folder / "ckpt.pt"), model, optimizer, epoch=2)  # a str path, overwriting
        left = sorted(os.listdir(folder))
        epoch = lesson.load_checkpoint(folder / "ckpt.pt", *new_run(seed=1))
    return left, as_data(first), as_data(epoch)


def epoch_off(first, saved_first: int = 1) -> str:
    """Why load_checkpoint of a checkpoint saved with epoch=`saved_first` returned `first`, when it
    is not that int: the loading is at fault, not the saving; else ""."""
    if type(first) is int and first == saved_first:
        return ""
    said = f"load_checkpoint returned {first!r} for a checkpoint saved with epoch={saved_first}"
    if type(first) is int and first == saved_first + 1:
        return f"{said}: return the epoch as saved (the number of epochs finished), not the next epoch to run."
    return f"{said}; expected the int {saved_first}."


def recording(real, sources: list):
    """`real` (os.replace or os.rename), noting in `sources` the absolute path of each file it renames."""
    def rename(src, dst, *args, **kwargs):
        sources.append(os.path.abspath(os.fspath(src)))
        return real(src, dst, *args, **kwargs)
    return rename


@beside
def renamed_onto(lesson):
    """save_checkpoint onto an existing checkpoint, os.replace and os.rename recorded (Path.replace and
    shutil.move use them): the path, the file's inode before and after, the files renamed."""
    model, optimizer = new_run(seed=0)
    renamed = []
    with scratch_folder() as folder:
        path = folder / "ckpt.pt"
        lesson.save_checkpoint(path, model, optimizer, epoch=1)
        old_inode = path.stat().st_ino
        with mock.patch.object(os, "replace", recording(os.replace, renamed)), \
                mock.patch.object(os, "rename", recording(os.rename, renamed)):
            lesson.save_checkpoint(path, model, optimizer, epoch=2)
        return str(path), old_inode, path.stat().st_ino, renamed


FAILURES = {  # what stops a save midway: its type, its message
    "OSError": (OSError, "disk full (simulated)"),
    "KeyboardInterrupt": (KeyboardInterrupt, "Ctrl-C (simulated)"),
}


@reads_back
def interrupted_save(lesson, failure: str):
    """save_checkpoint onto a checkpoint of epoch 1, with a torch.save that writes half a file and then
    raises FAILURES[failure]: the message of that error as it came out of save_checkpoint (None if
    it did not; another error is raised as itself), what the folder holds then, and loading it:
    what load_checkpoint returned, or "Type: message" of its error."""
    kind, message = FAILURES[failure]
    model, optimizer = new_run(seed=0)

    def half_a_save(obj, f, *args, **kwargs):
        handle = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f  # closed by the caller's save, as torch.save's own is
        handle.write(b"half a checkpoint")
        if handle is not f:
            handle.close()
        raise kind(message)

    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=1)
        try:
            first = as_data(lesson.load_checkpoint(folder / "ckpt.pt", *new_run(seed=1)))
        except NotImplementedError:
            raise
        except Exception:  # noqa: BLE001 (the load after the failed save says what is wrong)
            first = None
        raised = None
        with mock.patch.object(torch, "save", half_a_save):
            try:
                lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=2)
            except kind as exc:
                raised = str(exc)
        left = sorted(os.listdir(folder))
        epoch = broken = None
        try:
            epoch = as_data(lesson.load_checkpoint(folder / "ckpt.pt", *new_run(seed=1)))
        except NotImplementedError:
            raise  # a TODO, not a broken file
        except Exception as exc:  # a broken file: the test says so
            if refused_type(exc):
                raise  # not a broken file: one weights_only refuses, which reads_back names
            broken = f"{type(exc).__name__}: {str(exc)[:120]}"
    return raised, left, first, epoch, broken


class CodeInPickle:
    """Unpickling this runs code: what a malicious checkpoint does."""

    def __reduce__(self):
        return exec, ("import builtins; builtins._kata_09_pwned = True",)


@beside
def evil_loaded(lesson):
    """load_checkpoint of a file whose unpickling runs code (CodeInPickle): the name of the error it
    raised (None if none), and whether that code ran."""
    model, optimizer = new_run(seed=0)
    refused = None
    with scratch_folder() as folder:
        torch.save({"model": CodeInPickle()}, folder / "evil.pt")
        try:
            lesson.load_checkpoint(folder / "evil.pt", model, optimizer)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 (any refusal will do)
            refused = type(exc).__name__
        finally:
            ran = getattr(builtins, "_kata_09_pwned", False)
            if ran:
                del builtins._kata_09_pwned
    return refused, ran


def keep_storage(storage, location):
    return storage


LOCATIONS = {  # map_location values, by the test's ids (a scenario takes the name)
    "dict": {"cuda:0": "cpu"},  # what a checkpoint written on a GPU needs on a CPU machine
    "None": None, "str": "cpu", "device": torch.device("cpu"), "callable": keep_storage,
}
LOCATIONS_SAID = {"callable": "a function (storage, location) -> storage"}  # what a message says, where not its repr


def loaded_with(lesson, **map_location) -> list[dict]:
    """load_checkpoint(..., **map_location) of a fresh checkpoint, torch.load recorded: the
    arguments of each of its calls, by name."""
    model, optimizer = new_run(seed=0)
    real_load, calls = torch.load, []

    def recording_load(*args, **kwargs):
        calls.append(inspect.signature(real_load).bind(*args, **kwargs).arguments)
        return real_load(*args, **kwargs)

    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=1)
        with mock.patch.object(torch, "load", recording_load):
            lesson.load_checkpoint(folder / "ckpt.pt", *new_run(seed=1), **map_location)
    return calls


@reads_back
def load_calls(lesson, location: str) -> list:
    """load_checkpoint(..., map_location=LOCATIONS[location]), torch.load recorded: for each call,
    whether its map_location was that very object (an identity the tests' process cannot see), its
    repr, and its weights_only."""
    map_location = LOCATIONS[location]
    return [(call.get("map_location") is map_location, repr(call.get("map_location")), as_data(call.get("weights_only")))
            for call in loaded_with(lesson, map_location=map_location)]


@reads_back
def load_location(lesson, **map_location) -> str:
    """Where load_checkpoint(..., **map_location) told torch.load to map the tensors, call by call:
    the device for a string or a torch.device ("cpu" for both "cpu" and torch.device("cpu")), else
    the repr of what it passed."""
    passed = [call.get("map_location") for call in loaded_with(lesson, **map_location)]
    return ", ".join(str(torch.device(m)) if isinstance(m, (str, torch.device)) else repr(m) for m in passed)


@reads_back
def mismatched_load(lesson, saved_spare: bool, loaded_spare: bool):
    """save_checkpoint of a SpareHead(spare=saved_spare), then load_checkpoint into a
    SpareHead(spare=loaded_spare), the optimizers alike: what load returned (its error is raised as itself)."""
    saved = SpareHead(spare=saved_spare)
    model = SpareHead(spare=loaded_spare)
    optimizer = torch.optim.Adam(model.body.parameters())  # the optimizers match: only the models differ
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "ckpt.pt", saved, torch.optim.Adam(saved.body.parameters()), epoch=1)
        return as_data(lesson.load_checkpoint(folder / "ckpt.pt", model, optimizer))


class FakeCudaRandom:
    """CUDA's random-state functions on a machine with `count` GPUs, for a CPU-only test."""

    NAMES = ("get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all")

    def __init__(self, count: int, fill: int):
        self.states = [torch.full((8,), fill + i, dtype=torch.uint8) for i in range(count)]
        self.sets = 0

    @staticmethod
    def _index(device) -> int:
        return device if isinstance(device, int) else (torch.device(device).index or 0)

    def get_rng_state(self, device="cuda"):
        return self.states[self._index(device)].clone()

    def get_rng_state_all(self):
        return [state.clone() for state in self.states]

    def set_rng_state(self, new_state, device="cuda"):
        self.sets += 1
        self.states[self._index(device)] = new_state.clone()

    def set_rng_state_all(self, new_states):
        for i, state in enumerate(new_states):
            self.set_rng_state(state, i)

    @contextlib.contextmanager
    def installed(self):
        """Inside the block, torch sees this machine: its GPUs and their random states."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(simulated_machine(len(self.states)))
            for module in (torch.cuda, torch.cuda.random):
                for name in self.NAMES:
                    stack.enter_context(mock.patch.object(module, name, getattr(self, name)))
            yield self


@reads_back
def cuda_states_restored(lesson, gpus: int):
    """save_checkpoint on a machine with 2 GPUs (FakeCudaRandom(2, fill=10)), load_checkpoint on a
    machine with `gpus` GPUs (fill=50; 2: a new process on the same machine, 0: one without CUDA):
    that one's CUDA random states afterwards, and how many it set."""
    model, optimizer = new_run(seed=0)
    fresh, fresh_optimizer = new_run(seed=1)
    later = FakeCudaRandom(gpus, fill=50)
    with scratch_folder() as folder:
        with FakeCudaRandom(2, fill=10).installed():
            lesson.save_checkpoint(folder / "ckpt.pt", model, optimizer, epoch=1)
        with later.installed():
            lesson.load_checkpoint(folder / "ckpt.pt", fresh, fresh_optimizer)
    return later.states, later.sets


SAVED_ON_GPUS = "save_checkpoint(path, model, optimizer, epoch=1) on a machine with 2 GPUs, then "


# --- accumulate_gradients ---------------------------------------------------------------------


def full_batch_gradients(model, x, y):
    reference = copy.deepcopy(model)
    loss = LOSS(reference(x), y)
    loss.backward()
    return loss.item(), [p.grad for p in reference.parameters()]


def chunk_gradients(model, x, y, micro_batches: int, weight) -> list[torch.Tensor]:
    """The .grad one backward per chunk leaves when chunk k's mean loss is scaled by weight(n_k)."""
    reference = copy.deepcopy(model)
    for xs, ys in zip(torch.tensor_split(x, micro_batches), torch.tensor_split(y, micro_batches)):
        (LOSS(reference(xs), ys) * weight(len(xs))).backward()
    return [p.grad for p in reference.parameters()]


def all_close(grads, others) -> bool:
    """Whether every gradient is there and equal to the other list's, up to float64 rounding."""
    return all(isinstance(g, torch.Tensor) and g.shape == o.shape and g.dtype == o.dtype
               and torch.allclose(g, o, rtol=1e-9, atol=1e-12) for g, o in zip(grads, others))


def accumulation_pitfall(grads: list, model, x, y, micro_batches: int, expected: list) -> str:
    """Why the .grad `grads` left on `model` (as it was before) is wrong when it is what a pitfall
    the lesson names gives, else ""."""
    pitfalls = [
        (lambda size: 1 / micro_batches,
         " That is each chunk's mean loss divided by the number of chunks: right only when every chunk has the same "
         "size. Weigh each chunk by its share of the samples, chunk size / N."),
        (lambda size: 1.0,
         " That is each chunk's mean loss unscaled: the gradients add up to about micro_batches times the full "
         "batch's. Weigh each chunk by its share of the samples, chunk size / N."),
    ]
    for weight, why in pitfalls:
        candidate = chunk_gradients(model, x, y, micro_batches, weight)
        if all_close(grads, candidate) and not all_close(expected, candidate):
            return why
    return ""


def chunks_of(n: int, micro_batches: int) -> list[int]:
    return [len(c) for c in torch.tensor_split(torch.arange(n), micro_batches)]


@beside
def accumulated(lesson, n: int, micro_batches: int, seed: int):
    """accumulate_gradients(make_model(float64), LOSS, *make_data(n, seed, float64), micro_batches):
    what it returned, and each parameter's .grad by name afterwards (its error is raised as itself)."""
    model = make_model(dtype=torch.float64)
    x, y = make_data(n, seed=seed, dtype=torch.float64)
    got = lesson.accumulate_gradients(model, LOSS, x, y, micro_batches)
    return as_data(got), gradients(model)


@beside
def accumulated_over_stale(lesson) -> dict:
    """accumulate_gradients(..., 3) over make_data(12, float64) on a float64 SpareHead whose .grad held
    ones: each parameter's .grad by name afterwards."""
    model = SpareHead(dtype=torch.float64)  # its `spare` parameter takes no part in the loss
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    lesson.accumulate_gradients(model, LOSS, *make_data(12, dtype=torch.float64), 3)
    return gradients(model)


@beside
def accumulation_watched(lesson, micro_batches: int):
    """accumulate_gradients(make_model(float64), LOSS, *make_data(7, float64), micro_batches), noting at
    each forward (its batch size, whether an earlier backward already filled .grad): those notes,
    the inputs and the parameters afterwards."""
    model = make_model(dtype=torch.float64)
    x, y = make_data(7, dtype=torch.float64)
    calls = []
    model.register_forward_pre_hook(lambda m, args: calls.append((len(args[0]), model[0].weight.grad is not None)))
    lesson.accumulate_gradients(model, LOSS, x, y, micro_batches)
    return calls, x, parameters(model)


# --- a real GPU -------------------------------------------------------------------------------


def on_the_cpu(model: nn.Module) -> dict[str, torch.Tensor]:
    """parameters(model), copied to the CPU."""
    return {name: p.cpu() for name, p in parameters(model).items()}


@reads_back
def gpu_round_trip(lesson):
    """On the device pick_device() gives: train_epoch and evaluate of make_model(dropout=0.2) with Adam
    over CPU batches; its checkpoint loaded into a CPU new_run(seed=1) (map_location="cpu"), whose
    checkpoint is loaded into make_model(seed=2, dropout=0.3) on that device (map_location=device).
    The device, what each call returned, and the three models' parameters (on the CPU)."""
    device = lesson.pick_device()
    model = make_model(dropout=0.2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss = as_data(lesson.train_epoch(model, make_loader(), optimizer, LOSS, device))  # batches live on the CPU
    result = as_data(evaluate(lesson, model, make_loader(), LOSS, device))
    cpu_model, cpu_optimizer = new_run(seed=1)
    gpu_model = make_model(seed=2, dropout=0.3).to(device)
    with scratch_folder() as folder:
        lesson.save_checkpoint(folder / "gpu.pt", model, optimizer, epoch=1)
        cpu_epoch = lesson.load_checkpoint(folder / "gpu.pt", cpu_model, cpu_optimizer, map_location="cpu")
        # And back: a CPU checkpoint mapped onto the GPU (the random states land there too).
        lesson.save_checkpoint(folder / "cpu.pt", cpu_model, cpu_optimizer, epoch=2)
        gpu_epoch = lesson.load_checkpoint(folder / "cpu.pt", gpu_model, torch.optim.Adam(gpu_model.parameters(), lr=0.01),
                                           map_location=device)
    return (as_data(device), loss, result, as_data(cpu_epoch), as_data(gpu_epoch),
            on_the_cpu(model), on_the_cpu(cpu_model), on_the_cpu(gpu_model))


CONTRACT = """Contract (lesson text, docstrings, hints -> tests):
pick_device
- "prefer=None: torch.device('cuda') (no index), else mps, else cpu" -> test_pick_device_default
- "always a torch.device" -> test_pick_device_default, test_pick_device_honours_what_is_asked
- "torch.device(prefer) unchanged if it exists (cuda:i: i < count; a tensor's mps:0)" -> test_pick_device_honours_what_is_asked
- "else RuntimeError, never a silent fallback (cuda on a Mac, cuda:count, meta)" -> test_pick_device_refuses_a_missing_device
  (a fallback to another device is named as one; a missing device returned as asked is told apart)
- "the message names the device asked for and every available one" -> test_pick_device_refuses_a_missing_device
seed_everything
- "torch, random, NumPy's global generator, a shuffling DataLoader, Dropout repeat; returns None;
  np.random.default_rng does not count" (the doctest too) -> test_seed_everything_repeats_every_generator
  (names the generator left unseeded, and default_rng for NumPy's)
- "another seed gives other numbers" -> test_different_seeds_differ
- "torch CPU and every CUDA device" -> test_seed_everything_seeds_every_cuda_device
train_epoch
- "returns a Python float" -> test_train_epoch_returns_a_float_that_decreases, test_train_epoch_matches_a_plain_loop
- "mean over samples: a smaller last batch weighs less; batch size is targets' first dim" ->
  test_train_epoch_matches_a_plain_loop, test_train_epoch_weighs_batches_by_their_samples
  (the mean of the batch means and a low-precision tensor sum are named when the result is exactly theirs)
- "one pass over any iterable loader, one optimizer step per batch" -> test_train_epoch_weighs_batches_by_their_samples,
  test_train_epoch_matches_a_plain_loop
- "trains in train mode whatever mode the model was in (every submodule)"; "a model that evaluate left in eval mode
  would train without dropout" -> test_train_epoch_matches_a_plain_loop[eval / Dropout in eval]
- "each batch (inputs and targets) moved to `device`" -> test_train_epoch_moves_every_batch_to_the_device
- "backward adds to .grad: each step sees only its own batch's gradient, whatever .grad held (a loop that never
  clears applies the sum)" -> test_train_epoch_clears_stale_gradients_first,
  test_train_epoch_matches_a_plain_loop (a loop that never clears, or clears after the step only, is named when the
  parameters are exactly its)
- "cleared to None, not zeros (an optimizer skips None, steps zeros)" -> test_train_epoch_sets_gradients_to_none
- "no graph or tensor outlives its step (a list of loss tensors keeps every graph)" -> test_train_epoch_frees_each_steps_graph,
  test_train_epoch_matches_a_plain_loop[train, float16]
evaluate
- "(mean loss over samples, accuracy) as Python floats; argmax over dim 1" -> test_evaluate_matches_the_whole_data_set_in_eval_mode
- "eval mode: no dropout, BatchNorm uses and keeps its running stats" -> test_evaluate_matches_the_whole_data_set_in_eval_mode
- "low precision: per-batch .item(), summed as floats" -> test_evaluate_matches_the_whole_data_set_in_eval_mode[bfloat16]
- "average over samples, not batches" (named as for train_epoch) -> test_evaluate_matches_the_whole_data_set_in_eval_mode
- "each batch moved to `device`" -> test_evaluate_moves_every_batch_to_the_device
- "under torch.inference_mode() (no graph), and only there"; "no_grad is not enough" (named) ->
  test_evaluate_runs_under_inference_mode
- "every submodule has the flag it had before"; "putting back 'the model's mode' overwrites a frozen part" ->
  test_evaluate_restores_every_submodules_mode (names: left in eval mode, one flag for all, the first level only)
- "however it ends, even by an exception" (the loader raises) -> test_evaluate_restores_modes_when_the_loader_fails
  (a missing `finally:` named only when nothing was put back; else the pitfall behind the flags that came back)
checkpoints
- "model state_dict (parameters and buffers), optimizer state_dict, epoch (an int, as saved)" ->
  test_load_restores_model_optimizer_and_epoch, test_resumed_training_is_bitwise_identical
- "random states of torch, random, NumPy (their cached Gaussians too): resuming is bitwise exact";
  "right after loading, every random state is the one saved, whole" (names the one that is not, or its cached
  Gaussian) -> test_resumed_training_is_bitwise_identical
- "CUDA's when available (every device), restored only where CUDA is available" -> test_checkpoint_keeps_every_cuda_random_state
- "types that weights_only=True accepts, the random states included" (NumPy's array named) -> test_checkpoint_loads_with_weights_only
  (every test that loads what save_checkpoint wrote says the same when weights_only refuses it: reads_back)
- "atomic: the old file never rewritten in place; a rename is atomic within one file system only (not from
  /tmp)"; str or PathLike ->
  test_save_writes_a_temporary_file_then_renames, test_save_leaves_only_the_checkpoint
- "a save that fails (an error, Ctrl-C: no Exception) leaves the old checkpoint and nothing else in its folder" -> test_failed_save_keeps_the_old_checkpoint
- "one torch.load call, map_location passed through unchanged, weights_only=True said explicitly" -> test_load_passes_map_location_and_weights_only
- `map_location=... = "cpu"` in the signature: left out, torch.load maps to the CPU ->
  test_load_maps_to_the_cpu_when_map_location_is_left_out
- "a file that would run code is refused" -> test_load_refuses_a_checkpoint_that_runs_code
- "strict: missing or unexpected keys raise RuntimeError" -> test_load_refuses_a_model_that_does_not_match
- "a GPU checkpoint loads on the CPU and back (map_location)" -> test_training_on_the_gpu_with_cpu_batches (cuda)
accumulate_gradients
- "the full batch's .grad, whatever the chunk sizes; its loss as a Python float" -> test_accumulated_gradients_equal_one_big_batch
- "divided by the number of chunks, right only when every chunk has the same size", "left as they are, about
  micro_batches times too large" (named when the .grad is exactly theirs) -> test_accumulated_gradients_equal_one_big_batch
- "old gradients discarded (set to None)" (grads plus the old ones named) -> test_accumulate_discards_old_gradients
- "tensor_split chunks, one forward and backward each, graph freed before the next" ->
  test_accumulate_runs_one_forward_and_backward_per_chunk
- "no optimizer step, inputs unchanged" -> test_accumulate_runs_one_forward_and_backward_per_chunk
- "ValueError unless 1 <= micro_batches <= N" -> test_accumulate_refuses_impossible_splits
(The text's notes on deterministic kernels, cuDNN, DataLoader workers and moving the model before
building the optimizer explain; no function here promises them.)
"""
