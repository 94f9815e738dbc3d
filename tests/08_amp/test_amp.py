"""Lesson 08, mixed precision: checks amp.py side by side with torch.amp.GradScaler and autocast.

Every scaler test runs two identical models, one with torch.amp.GradScaler("cpu", ...) and one with
the learner's DynamicLossScaler (in a scenario, beside their code), and compares the scale,
state_dict(), the parameters, the optimizer state and the .grad after every step. CONTRACT, at the
end, maps the lesson's promises and pitfalls to the tests.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import os
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from grader.testing import (assert_close, assert_speed, attribute, counted, describe, dtype_name, expect_raises, explained, fail,
                            quoted, reported, same, trace_ops)
from grader.testing.errors import raised
from grader.testing.pitfalls import Pitfall, pitfalls_of
from grader.testing.differential import assert_same_as
from grader.testing.scenario import beside


INF, NAN = float("inf"), float("nan")
CLEAN = None  # a step whose gradients are left alone


# --- the basics: public ------------------------------------------------------------------------


@pytest.mark.public
def test_scale_multiplies_the_loss(lesson):
    report = observed(your_first_scale, lesson)
    scale = next(report)
    if not (isinstance(scale, float) and scale == 2.0**16):
        fail(f"DynamicLossScaler().get_scale() returned {scale!r} before any step; expected the float 65536.0 (init_scale)")
    scaled, requires_grad = next(report)
    assert_close(scaled.detach(), torch.tensor(32768.0), what="DynamicLossScaler().scale(tensor(0.5))")
    if not requires_grad:
        fail("scale(loss) must stay in the autograd graph: multiply the tensor, do not call .item()")


@pytest.mark.public
@pytest.mark.points(2)
def test_scale_after_a_clean_step_and_after_an_inf_step(lesson):
    schedule, settings = [CLEAN, INF, CLEAN], dict(growth_interval=1, init_scale=1024.0)
    mine, ref = observed(your_steps, lesson, "sgd", schedule, settings), torch_steps("sgd", schedule, settings)
    next(mine)  # before the first step
    for poison, scale, got, expected in zip(schedule, [2048.0, 1024.0, 2048.0], mine, ref[1:]):
        if expected["scale"] != scale:
            fail(f"torch.amp.GradScaler itself changed: its scale is {expected['scale']}")
        assert_same_state(expected, got,
                          f"DynamicLossScaler(init_scale=1024., growth_interval=1) after {a_step(poison)}")


def test_scale_matches_torch(lesson):
    # A 0-dim float16 or bfloat16 loss times torch's float32 0-dim scale is float32 (two 0-dim
    # tensors: the wider dtype wins); times a Python float it stays 16-bit and 3 * 65536 overflows.
    cases = [(init_scale, torch.linspace(3.0, 0.5, max(1, len(shape) and shape[0])).reshape(shape).to(dtype))
             for init_scale in (2.0**16, 3.0) for shape, dtype in SCALE_CASES]
    cases += [(2.0**16, torch.empty((), dtype=dtype, device="meta")) for dtype in (torch.float32, torch.float16)]
    for init_scale, loss in cases:
        what = (f"DynamicLossScaler(init_scale={init_scale}).scale(loss) for loss of {describe(loss)}"
                + (" on the meta device" if loss.device.type == "meta" else ""))
        report = your_scale(lesson, init_scale, loss)
        try:
            assert_same_as(lambda copy: replayed_scale(report, copy),
                           torch.amp.GradScaler("cpu", init_scale=init_scale).scale, loss, grads=True, what=what)
            continue
        except (AssertionError, pytest.fail.Exception) as exc:
            why = scale_failure(scaled_result(report), init_scale, loss)
            if why is None:
                raise
            failure = f"{exc}\n{why}"
        pytest.fail(failure, pytrace=False)


# --- side by side with torch.amp.GradScaler --------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_matches_torch_step_for_step(lesson, opt_name):
    schedule = [CLEAN, CLEAN, INF, CLEAN, CLEAN, CLEAN, NAN, CLEAN, CLEAN, CLEAN, CLEAN]
    run_schedule(lesson, opt_name, schedule, growth_interval=3)


@pytest.mark.points(2)
@pytest.mark.parametrize("poison", [INF, -INF, NAN], ids=["inf", "-inf", "nan"])
def test_a_step_with_non_finite_gradients_changes_nothing(lesson, poison):
    # A clean step first, so Adam has moments and a step count to protect.
    mine = your_steps(lesson, "adam", [CLEAN, poison], {})
    what = f"scaler.step(adam) after a gradient got {poison}"
    assert_skipped(mine[1], mine[2], poison, what, inf_skipped=lambda: skips_inf(lesson))
    result = mine[2]["returned"]
    if result is not None:
        fail(f"{what} returned {result!r}; a skipped step returns None")
    assert_same_state(torch_steps("adam", [CLEAN, poison], {})[2], mine[2], what)


def test_growth_waits_for_growth_interval_clean_steps(lesson):
    settings = dict(growth_interval=3, init_scale=8.0)
    scales = [snapshot["scale"] for snapshot in your_steps(lesson, "sgd", [CLEAN] * 7, settings)[1:]]
    expected = [snapshot["scale"] for snapshot in torch_steps("sgd", [CLEAN] * 7, settings)[1:]]
    if scales != expected:
        fail(f"DynamicLossScaler(init_scale=8., growth_interval=3): the scale after each of 7 clean steps was {scales}, "
             f"torch's {expected}. Grow only when growth_interval clean steps in a row have passed, then restart the count.")


def test_unscale_then_clip_matches_torch(lesson):
    mine = observed(your_unscale_then_clip, lesson)
    ref = unscale_then_clip(Side(torch.amp.GradScaler("cpu"), "adam"))  # step for step with the checks
    for step in range(3):
        got, expected = next(mine), next(ref)
        what = f"step {step}: the gradients after scaler.unscale_(optimizer)"
        if got["replaced"]:
            fail(f"{what}: the .grad of {listed(got['replaced'])} is a new tensor; unscale_ unscales the gradients IN PLACE "
                 "(`grad.mul_(inv_scale)` under torch.no_grad()), as torch's does: code holding the .grad tensors sees them unscaled")
        assert_close(got["unscaled"], expected["unscaled"], what=f"{what} (each .grad times 1/S, in place)",
                     explain=lambda: gradient_factor({"grads": expected["unscaled"]},
                                                     {**got, "grads": got["unscaled"]}, after="unscale_"))
        assert_same_state(next(ref), next(mine), f"step {step} of unscale_, clip_grad_norm_(0.05), step, update")


def test_param_groups_and_parameters_without_gradient(lesson):
    mine = observed(your_param_groups_run, lesson)
    ref = param_groups_run(torch.amp.GradScaler("cpu", growth_interval=2))
    scales = []
    for step, (poison, expected, got) in enumerate(zip(PARAM_GROUP_SCHEDULE, ref, mine)):
        crash = expected.get("crash") or got.get("crash")
        if crash:
            pytest.fail(f"scaler.step(optimizer), step {step}, for an optimizer holding a parameter whose .grad is None, "
                        f"raised {crash}.\n{NONE_GRAD}", pytrace=False)
        what = f"two param groups and a parameter whose .grad is None, step {step} ({poison_name(poison)})"
        scales.append(got["scale"])
        # The param-group advice only where the learner's scaler is blind to the second group's inf:
        # its scales so far those of every step clean, and the poisoned step not skipped.
        blind = (scales == [2.0**16 * 2 ** ((done + 1) // 2) for done in range(step + 1)]
                 and not same(got["params"], expected["params"]))
        if got["scale"] != expected["scale"]:
            fail(f"{what}: {scales_differ(got['scale'], expected['scale'])} "
                 + ("This is the scale of every step clean: the inf in the second param group was not seen. Check the "
                    "gradients of every param group (optimizer.param_groups), skipping those that are None."
                    if blind and poison is not None else SCALE_RULE))
        assert_close(got["params"], expected["params"], what=f"{what}: the parameters",
                     explain=lambda: second_group_only(got["params"], expected["params"])
                     or step_fault(expected, got, poison))
        assert_close(got["optimizer"], expected["optimizer"], what=f"{what}: the optimizer state",
                     explain=lambda: step_fault(expected, got, poison))


def test_two_optimizers_match_torch(lesson):
    mine = observed(your_two_optimizers_run, lesson)
    ref = two_optimizers_run(torch.amp.GradScaler("cpu", growth_interval=2), explain=False)
    history, scales = [], []
    for number, (iteration, expected, got) in enumerate(zip(TWO_OPTIMIZER_SCHEDULE, ref, mine)):
        poisoned, order, unscale_first = iteration
        history.append(f"inf in {'+'.join(poisoned) or 'none'}, unscale_ {'+'.join(unscale_first) or 'none'}, "
                       f"step {'+'.join(order)}")
        what = f"two optimizers (SGD on layer a, Adam on layer b), iterations [{'; '.join(history)}]"
        if "refused" in got:
            done, message = got["refused"]
            calls = scaler_calls_of(iteration)
            method, name = calls[done]
            pytest.fail(f"{what}: scaler.{method}(optimizer {name}) raised RuntimeError({message!r}) after "
                        f"{', '.join(f'{m_}(optimizer {n})' for m_, n in calls[:done])}. The record of "
                        "what was unscaled or stepped is per optimizer: another optimizer's calls do not "
                        "count against this one.", pytrace=False)
        scale = got["scale"]
        scales.append(scale)
        if scale != expected["scale"]:
            done = TWO_OPTIMIZER_SCHEDULE[: number + 1]
            rule = next((rule for rule in ("last unscaled", "per step") if scales_by_rule(done, rule) == scales), None)
            if rule == "per step" and grows_every_step(lesson):  # the same scales here, another mistake
                rule = "every step"
            pytest.fail(f"{what}: {scales_differ(scale, expected['scale'])}"
                        + (f" {RECORD_WORDS[rule]}" if rule else ""),
                        pytrace=False)
        assert_same_state_dict(got["state_dict"], expected["state_dict"], what)

        def explain() -> str:
            return next(filter(None, (step_fault(layer(expected, name), layer(got, name), INF if name in poisoned else None)
                                      for name in "ab")), "")
        assert_close(got["params"], expected["params"],
                     what=f"{what}: the parameters (only the optimizer whose gradients hold inf/nan skips its step; "
                          "a layer in no optimizer is neither checked nor unscaled)", explain=explain)
        for name in "ab":
            assert_close(got["optimizers"][name], expected["optimizers"][name],
                         what=f"{what}: the state of optimizer {name}", explain=explain)
        assert_close(got["grads"], expected["grads"],
                     what=f"{what}: the gradients after the steps (each optimizer's unscaled once; the loose layer's "
                          "left as they are)", explain=explain)


# --- the protocol: what may be called when ------------------------------------------------


def test_unscale_twice_raises(lesson):
    grads, second, after = unscaled_twice(lesson)
    expect_raises(lambda: replay(second), RuntimeError, what="a second scaler.unscale_(optimizer) before update()",
                  why="the gradients would be divided by the scale twice (torch.amp.GradScaler raises too).")
    assert_close(after, grads, what="the gradients after a refused second unscale_ (they must not be divided again)")


def test_unscale_after_step_and_step_twice_raise(lesson):
    report = observed(your_out_of_turn, lesson)
    unscale, step, before, after = next(report)
    expect_raises(lambda: replay(unscale), RuntimeError, what="scaler.unscale_(optimizer) after step() and before update()",
                  why="the step has already used the gradients (torch.amp.GradScaler raises too).")
    expect_raises(lambda: replay(step), RuntimeError, what="a second scaler.step(optimizer) before update()",
                  why="one update per iteration: call update() between steps (torch.amp.GradScaler raises too).")
    assert_close(after, before, what="the parameters after a refused second step()")
    list(report)  # the new iteration: an error of its update() or step is raised here


def test_step_returns_what_optimizer_step_returns(lesson):
    snapshots = your_steps(lesson, "counting sgd", [CLEAN, INF, CLEAN], {})[1:]
    got = [snapshot["returned"] for snapshot in snapshots]
    skipped = snapshots[2]["opt_steps"] == snapshots[1]["opt_steps"]  # optimizer.step() not called
    why = ("the third step was skipped although its gradients were clean: the inf/nan record of the step "
           "before was not cleared (update() starts a new iteration with none)" if got[2] is None and skipped else
           "return what optimizer.step() returned, and None (without calling it) for a skipped step")
    if got != [1, None, 2]:
        fail(f"scaler.step(optimizer) over a clean, an inf and a clean step returned {got}; expected [1, None, 2]: {why}")


# --- state_dict -----------------------------------------------------------------------------


def test_state_dict_matches_torch_and_round_trips(lesson):
    settings = dict(init_scale=256.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    fresh = your_steps(lesson, "sgd", [], settings)[0]["state_dict"]
    assert_same_state_dict(fresh, torch.amp.GradScaler("cpu", **settings).state_dict(),
                           f"{scaler_call(settings)} before any step")
    schedule = [CLEAN, INF, CLEAN, CLEAN]
    expected = torch_steps("sgd", schedule, settings)[-1]["state_dict"]  # {'scale': 64.0, ..., '_growth_tracker': 2}
    mine = your_steps(lesson, "sgd", schedule, settings)
    got, what = mine[-1]["state_dict"], f"{scaler_call(settings)} after 4 steps [clean, inf, clean, clean]"
    # A step taken on inf leaves inf/nan in the weights: every later step overflows and backs off.
    if not (not isinstance(got, dict) or got.keys() != expected.keys() or got == expected or mine[2]["opt_steps"] == mine[1]["opt_steps"]
            or all_finite(mine[-1]["params"])):
        fail(f"{what}: {state_dict_gaps(got, expected)}. Your parameters hold inf/nan after these steps, so every step "
             f"after the inf one overflowed.\n{stepped(mine[2], INF)}")
    assert_same_state_dict(got, expected, what)
    for source, state in (("your", got), ("torch.amp.GradScaler's", expected)):
        restored = your_steps(lesson, "sgd", [], {}, state)[0]  # DynamicLossScaler() loaded with `state`
        what = f"DynamicLossScaler().load_state_dict({source} state_dict)"
        assert_same_state_dict(restored["state_dict"], expected, what)
        if restored["scale"] != expected["scale"]:
            fail(f"{what}: get_scale() is {restored['scale']}, expected {expected['scale']}")
    theirs = torch.amp.GradScaler("cpu")
    theirs.load_state_dict(got)  # and torch's scaler takes yours
    assert_same_state_dict(theirs.state_dict(), expected, "torch.amp.GradScaler('cpu').load_state_dict(your state_dict)")
    # The restored scaler carries on exactly like the original: it grows after one more clean step.
    carried = your_steps(lesson, "sgd", [CLEAN], {}, got)[-1]["scale"]
    original = torch_steps("sgd", [*schedule, CLEAN], settings)[-1]["scale"]
    if not (carried == original == 256.0):
        fail(f"after load_state_dict and one more clean step the scale is {carried}, torch's "
             f"{original}: the growth counter (_growth_tracker) must survive the round trip")


def test_default_settings_and_growth_after_2000_clean_steps_match_torch(lesson):
    expected = torch.amp.GradScaler("cpu").state_dict()
    assert_same_state_dict(your_steps(lesson, "sgd", [], {})[0]["state_dict"], expected,
                           "DynamicLossScaler() (the defaults: init_scale=2**16, growth_factor=2.0, backoff_factor=0.5, "
                           "growth_interval=2000)")
    # 1999 clean steps already counted (as a checkpoint restores them): the 2000th grows the scale.
    restored = dict(expected, _growth_tracker=1999)
    mine, ref = observed(your_steps, lesson, "sgd", [CLEAN] * 2, {}, restored), torch_steps("sgd", [CLEAN] * 2, {}, restored)
    loaded = next(mine)["state_dict"]  # before the first step
    for step, (got, expected) in enumerate(zip(mine, ref[1:])):
        what = (f"DynamicLossScaler() restored with _growth_tracker=1999, after {counted(step + 1, 'more clean step')} "
                "(the 2000th clean step in a row doubles the scale)")
        try:
            assert_same_state(expected, got, what)
            continue
        except (AssertionError, pytest.fail.Exception) as exc:
            if not isinstance(loaded, dict) or loaded.get("_growth_tracker") == 1999:
                raise
            failure = (f"{exc}\nRight after load_state_dict, state_dict()['_growth_tracker'] was "
                       f"{loaded.get('_growth_tracker')!r}, not 1999.\n{tracker_rule(got, expected, 'load_state_dict')}")
        pytest.fail(failure, pytrace=False)


def test_load_state_dict_refuses_an_empty_dict(lesson):
    loaded, state = load_empty(lesson)
    expect_raises(lambda: replay(loaded), RuntimeError, what="DynamicLossScaler().load_state_dict({})",
                  why="an empty state dict was saved from a disabled scaler: there is nothing to restore, and "
                      "carrying on with the current scale would hide the mistake (torch.amp.GradScaler raises too).")
    assert_same_state_dict(state, torch.amp.GradScaler("cpu", init_scale=8.0).state_dict(),
                           "DynamicLossScaler(init_scale=8.) after a refused load_state_dict({})")


# --- enabled=False --------------------------------------------------------------------------


def test_disabled_is_a_pass_through(lesson):
    state = torch.amp.GradScaler("cpu", init_scale=8.0).state_dict()
    scaler = "DynamicLossScaler(init_scale=1024., enabled=False)"
    with disabled_calls(f"scaler = {scaler}; scaler.scale(loss) for loss = tensor(0.5, requires_grad=True); "
                        "scaler.get_scale()"):
        mine = observed(your_pass_through, lesson, state)
        scaled = next(mine)
    ref = list(pass_through(torch.amp.GradScaler("cpu", init_scale=1024.0, enabled=False), state))
    if not scaled["same"]:
        fail(f"DynamicLossScaler(enabled=False).scale(loss) returned {scaled['shown']}; "
             "a disabled scaler returns the loss itself (`return loss`, as torch.amp.GradScaler does)")
    if not (type(scaled["scale"]) is float and scaled["scale"] == 1.0):
        fail(f"{scaler}.get_scale() is {scaled['scale']!r}; expected the float 1.0")
    for poison, expected in zip(DISABLED_STEPS, ref[1:]):
        calls = ("scaler.unscale_(optimizer), scaler.unscale_(optimizer), scaler.step(optimizer), "
                 f"scaler.step(optimizer), scaler.update() with scaler = {scaler}, after a backward with "
                 + ("clean gradients" if poison is None else f"{poison} in a gradient"))
        with disabled_calls(calls):
            got = next(mine)
        what = f"{calls} (every method is a pass-through: step() just calls optimizer.step())"
        if got["returned"] != expected["returned"]:
            fail(f"{what}: the two step() calls returned {got['returned']}; torch.amp.GradScaler(enabled=False) returned "
                 f"{expected['returned']}")
        assert_close(got["params"], expected["params"], what=f"{what}: the parameters")
        assert_close(got["grads"], expected["grads"], what=f"{what}: the gradients (unscale_ must not touch them)")
        if got["scale"] != 1.0:
            fail(f"{what}: get_scale() is {got['scale']}; expected 1.0")
    with disabled_calls(f"{scaler}.state_dict()"):
        saved = next(mine)
    if saved != {}:
        fail(f"{scaler}.state_dict() is {saved}; expected {{}}")
    with disabled_calls(f"scaler.load_state_dict({{}}), then scaler.load_state_dict(torch.amp.GradScaler('cpu', "
                        f"init_scale=8.).state_dict()) with scaler = {scaler}"):
        state_dict, scale = next(mine)
    if not (state_dict == {} and scale == 1.0):
        fail(f"DynamicLossScaler(enabled=False).load_state_dict(...) changed it: state_dict() is {state_dict}, "
             f"get_scale() {scale}; expected {{}} and 1.0 (load_state_dict does nothing when disabled)")


# --- train_step -----------------------------------------------------------------------------


@pytest.mark.public
def test_train_step_returns_a_float(lesson):
    with stepping(f"train_step(model, optimizer, torch.amp.GradScaler('cpu'), x, y, F.mse_loss) for {TINY}"):
        loss, keywords, takes_kwargs = first_train_step(lesson)
    if type(loss) is not float:
        fail(f"train_step returned a {type(loss).__name__}; return the loss as a Python float (loss.item()), so the "
             "caller holds no graph and no tensor")
    x, y = batch()
    assert_close(loss, F.mse_loss(tiny_model()(x), y).item(), rtol=2e-2, atol=1e-3,
                 what="train_step's loss (the loss of the forward pass, before the step)")
    for name, default in TRAIN_STEP_KEYWORDS.items():
        param = keywords[name]
        if param is None and takes_kwargs:
            continue  # taken through **kwargs: the calls in the other tests tell
        if not (param is not None and param["kind"] == "KEYWORD_ONLY" and param["has_default"]
                and param["default"] == default):
            fail(f"train_step's parameter {name!r} is {param and param['text']}; keep the signature of the exercise: "
                 f"keyword-only (after `*`), default {default!r}")


@pytest.mark.points(2)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
def test_train_step_runs_the_forward_under_autocast(lesson, dtype):
    with stepping(f"train_step(model, optimizer, torch.amp.GradScaler('cpu'), x, y, F.mse_loss, dtype={dtype}) for {TINY}"):
        seen, said, weight = autocast_step(lesson, dtype)
    if weight != torch.float32:
        fail(f"train_step(..., dtype={dtype}) left the model's weights in {dtype_name(weight)}, not float32.\n{NOT_CONVERTED}")
    wrong = sorted({dtype_name(d) for d in seen if d != dtype})
    if not (seen and not wrong):
        fail(f"train_step(..., dtype={dtype}): the matmuls ran in {' and '.join(wrong) or 'nothing'}, not "
             f"{dtype_name(dtype)}.\n{autocast_advice(said, wrong)}")


def test_train_step_autocasts_the_forward_and_the_loss_only(lesson):
    for device_type, dtype in (("cpu", torch.float16), ("cpu", torch.bfloat16), ("cuda", torch.bfloat16)):
        cpu = device_type == "cpu"
        expected = {"the model's forward": (cpu, dtype if cpu else None), "loss_fn": (cpu, dtype if cpu else None),
                    "the backward": (False, None), "optimizer.step()": (False, None)}
        with stepping(f"train_step(model, optimizer, torch.amp.GradScaler('cpu', init_scale=256.), x, y, loss_fn, "
                      f"device_type={device_type!r}, dtype={dtype}) for {TINY}, loss_fn = F.mse_loss"):
            log, said = autocast_places(lesson, device_type, dtype)
        what = f"train_step(..., device_type={device_type!r}, dtype={dtype}) on CPU tensors"
        for where, (enabled, want_dtype) in expected.items():
            got = log.get(where)
            if got is None:
                fail(f"{what} never ran {where}")
            if got == (enabled, want_dtype):
                continue
            if not cpu:
                why = ("ran under CPU autocast: pass `device_type` on to torch.autocast (do not hard-code 'cpu'); "
                       "autocast for 'cuda' leaves CPU tensors in float32")
            elif enabled and not got[0]:
                warned = autocast_warning(said)
                why = (f"ran outside autocast. {warned}" if warned else
                       "ran outside autocast: call the model AND the loss inside `with torch.autocast(device_type, "
                       "dtype=dtype):`")
            elif enabled:
                why = f"ran under autocast with dtype {got[1]}: pass `dtype` on to torch.autocast"
            else:
                why = ("ran under autocast: only the forward and the loss go inside the `with` block; backward, "
                       "clipping and the optimizer step run after it")
            pytest.fail(f"{what}: {where} {why}", pytrace=False)


@pytest.mark.parametrize("max_grad_norm", [None, 0.05, 0.0])
def test_train_step_uses_the_scaler_it_is_given_in_order(lesson, max_grad_norm):
    expected = ["scale", "step", "update"] if max_grad_norm is None else ["scale", "unscale_", "step", "update"]
    with stepping(f"train_step(model, optimizer, scaler, x, y, F.mse_loss, max_grad_norm={max_grad_norm}) for {TINY}, "
                  "scaler = torch.amp.GradScaler('cpu') (its calls recorded)"):
        called = scaler_calls(lesson, max_grad_norm)
    calls = [name for name in called if name in ("scale", "unscale_", "step", "update")]
    what = f"train_step(..., max_grad_norm={max_grad_norm})"
    if not calls:
        fail(f"{what} called none of the scaler's methods (scale, unscale_, step, update).\n{NOT_GIVEN}")
    missing, extra = [m for m in expected if m not in calls], [c for c in calls if c not in expected]
    said = f", but not {listed(missing)}" if missing else "" if extra else ", in this order"
    if calls != expected:
        fail(f"{what} called the scaler's {listed(calls)}{said}; expected scale(loss).backward()"
             f"{', unscale_(optimizer) before clipping' if max_grad_norm is not None else ''}, step(optimizer), update()"
             + (": unscale_ only to clip, when max_grad_norm is given" if "unscale_" in extra else "")
             + (f"\n{NO_UPDATE}" if "update" in missing else "")
             + (f"\n{FALSY_NORM}" if max_grad_norm == 0.0 and "unscale_" in missing
                and "unscale_" in scaler_calls(lesson, 0.05) else ""))


@pytest.mark.points(2)
@pytest.mark.parametrize("max_grad_norm", [None, 0.05])
@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("scaler_kind", ["torch", "yours"])
def test_train_step_matches_the_reference_loop(lesson, scaler_kind, opt_name, max_grad_norm):
    call = (f"train_step(model, {opt_name}, {SCALER_CALLS[scaler_kind]}, x, y, F.mse_loss, "
            f"max_grad_norm={max_grad_norm})")
    mine = observed(your_train_run, lesson, scaler_kind, opt_name, max_grad_norm)
    ref = reference_run(opt_name, max_grad_norm)
    for step, expected in enumerate(ref):
        what = f"{call}, step {step} ({LOOP_SETUP})"
        with stepping(what, advice=none_grad_advice):
            got = next(mine)
        try:
            assert_close(torch.tensor(float(got["returned"])), torch.tensor(expected["returned"]),
                         what=f"{what}: the returned loss")
            assert_same_state(expected, got, what)
            continue
        except (AssertionError, pytest.fail.Exception) as exc:
            why = (SCALERS_FAULT if scaler_kind == "yours" and with_torchs_scaler(lesson, opt_name, max_grad_norm, step)
                   else loop_pitfall(got, expected, opt_name, max_grad_norm, step + 1)
                   or autocast_fault(lesson) or update_advice(lesson)(exc) or None)
            if why is None:
                raise
            failure = f"{exc}\n{why}"
        pytest.fail(failure, pytrace=False)


# --- the checkerboard -------------------------------------------------------------------------


@pytest.mark.points(2)
def test_checkerboard_trains_in_bfloat16(lesson):
    size, steps = 32, 120
    def train() -> dict:  # (written before the advice: the scaler's __init__ is what an untouched stub reaches first)
        return checkerboard_training(lesson, size, steps, bool(os.environ.get("KATA_IMAGES")))
    with stepping(f"train_step(model, optimizer, DynamicLossScaler(), x, y, F.mse_loss), {steps} times, for the "
                  "checkerboard net, optimizer = Adam(model.parameters(), lr=0.01), x of shape (1, 2, 32, 32)",
                  advice=update_advice(lesson)):
        trained = train()
    losses = trained["losses"]
    if trained["learned"] is not None:
        save_side_by_side(trained["learned"], checker(size, size, 4), os.environ["KATA_IMAGES"])
    # Predicting the mean gives 0.25; the reference reaches 0.03-0.05 from step ~80 on.
    final = sum(losses[-10:]) / 10
    if not (final < 0.1):
        fail(f"train_step with DynamicLossScaler and bfloat16 autocast on the 32x32 checkerboard: the mean loss of steps "
             f"{steps - 10}-{steps} is {final:.3f} (first {losses[0]:.3f}); expected < 0.1. Losses: "
             f"[{', '.join(f'{v:.3f}' for v in losses[::10])}]")


# --- speed ------------------------------------------------------------------------------------


@pytest.mark.speed
def test_bfloat16_step_is_faster_than_float32(lesson):
    if not cpu_has_native_bfloat16():
        pytest.skip("this CPU has neither avx512_bf16 nor amx_bf16: bfloat16 is emulated, no speedup to expect")
    # The checkerboard net as Linear layers over the pixels (a 1x1 conv IS a Linear on each pixel),
    # at width 256 on a 64x64 grid. Measured here: 1.6-3.2x with one or both cores busy. (As
    # 1x1 convs, float32 takes a slow conv path and bfloat16 pays layout copies: no stable ratio.)
    size, width = 64, 256
    inputs = grid(size, size).flatten(1).t().contiguous()  # (H*W, 2)
    targets = checker(size, size, 4).reshape(-1, 1)  # (H*W, 1)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layers, features = [], 2
        for _ in range(3):
            layers += [nn.Linear(features, width), nn.BatchNorm1d(width), nn.ReLU()]
            features = width
        fp32_model = nn.Sequential(*layers, nn.Linear(width, 1))
    bf16_model = copy.deepcopy(fp32_model)
    fp32_opt = torch.optim.Adam(fp32_model.parameters(), lr=1e-3)
    bf16_opt = torch.optim.Adam(bf16_model.parameters(), lr=1e-3)
    scaler = lesson.DynamicLossScaler()

    def fp32_step() -> float:
        fp32_opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(fp32_model(inputs), targets)
        loss.backward()
        fp32_opt.step()
        return loss.item()

    with stepping("train_step(model, optimizer, DynamicLossScaler(), x, y, F.mse_loss), again and again, for the "
                  "checkerboard net as Linear layers (width 256), optimizer = Adam(model.parameters(), lr=1e-3), "
                  "x of shape (4096, 2)", advice=update_advice(lesson)):
        assert_speed(
            fp32_step, lambda: lesson.train_step(bf16_model, bf16_opt, scaler, inputs, targets, F.mse_loss),
            at_least=1.2, what="train_step with bfloat16 autocast (checkerboard net, width 256, 4096 pixels)",
            baseline_name="a float32 training step",
            hint="Run the forward pass inside torch.autocast('cpu', dtype=torch.bfloat16) and keep the scaler's "
                 "work to one pass over the gradients.",
        )


# --- CUDA ---------------------------------------------------------------------------------------


@pytest.mark.cuda
def test_float16_on_cuda_matches_torch(lesson):
    # float16 with a scale large enough to overflow: real skipped steps, not injected ones.
    ref, mine = observed(cuda_run, lesson, "torch"), observed(cuda_run, lesson, "yours")
    for step, (expected, got) in enumerate(zip(ref, mine)):
        what = f"train_step on CUDA with float16 autocast, init_scale=2**40, step {step}"
        assert_close(torch.tensor(got["returned"]), torch.tensor(expected["returned"]), what=f"{what}: the loss")
        assert_same_state(expected, got, what)


# === what the tests use ===========================================================================
#
# The learner's side runs in a scenario (grader.testing.scenario): a script (a model, an optimizer
# and a scaler through a schedule of steps; train_step four times; ...) drives their objects
# beside their code and returns snapshots as data, and the test runs torch.amp.GradScaler through
# the same script in its own process and compares. Under `kata grade` only the snapshots cross.


def tiny_model(seed: int = 0) -> nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def batch(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(6, 3, generator=g), torch.randn(6, 2, generator=g)


class CountingSGD(torch.optim.SGD):
    """SGD whose step() returns how many times it ran, to see what scaler.step returns."""

    calls = 0

    def step(self, closure=None):
        super().step(closure)
        self.calls += 1
        return self.calls


# The optimizers a script may name (a scenario takes names, not objects). SGD with momentum and
# Adam both keep state a skipped step must not touch.
OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01),
    "counting sgd": lambda params: CountingSGD(params, lr=0.1),
}


def make_optimizer(name: str, params) -> torch.optim.Optimizer:
    return OPTIMIZERS[name](params)


def optimizer_state(opt: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    """The optimizer's per-parameter state (momenta, Adam's step count), cloned, by position."""
    params = [p for group in opt.param_groups for p in group["params"]]
    return {f"{key} of parameter {i}": torch.as_tensor(value).clone()
            for i, p in enumerate(params) for key, value in opt.state.get(p, {}).items()}


def params_of(model: nn.Module) -> dict[str, torch.Tensor]:
    return {attribute(name): p.detach().clone() for name, p in model.named_parameters()}


def grads_by_name(model: nn.Module) -> dict[str, torch.Tensor | None]:
    """The .grad of every parameter of `model` (None stays None), cloned, by name (model.a.bias)."""
    return {attribute(n): None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}


def grads_of(opt: torch.optim.Optimizer) -> dict[str, torch.Tensor | None]:
    """The .grad of every parameter of the optimizer (None stays None), cloned, by position."""
    params = [p for group in opt.param_groups for p in group["params"]]
    return {f".grad of parameter {i}": None if p.grad is None else p.grad.clone() for i, p in enumerate(params)}


# --- scenarios: the learner's objects driven beside their code ----------------------------------
#
# A scenario only drives and observes; every check stays in the test. A script that takes steps
# is a generator of observations, one a step: `observe` collects them beside the code and
# `observed` hands them to the test one by one, so the test checks each step before it meets an
# error of a later one, and that error is then raised as itself (a stub's TODO keeps its file:line).
# An error the test expects is recorded by `attempt` and raised again by `replay`.


RAISED = "<the code under test raised an error here>"


def observe(observations, catch: bool) -> list:
    """What a script yields, as a list; where the learner's code raises, with `catch` the list
    ends there with RAISED, else the error goes through."""
    seen = []
    try:
        for observation in observations:
            seen.append(observation)
    except Exception:
        if not catch:
            raise
        seen.append(RAISED)
    return seen


def observed(scenario, lesson, *args) -> Iterator:
    """The observations of `scenario(lesson, *args, catch=...)` (its script's, through `observe`),
    one by one; where the learner's code raised, the scenario runs again without catching, and
    its error is raised here, with the learner's frames, after the checks of what came before."""
    report = scenario(lesson, *args, catch=True)  # now: the learner's code runs before the test builds anything

    def each():
        for observation in report:
            if isinstance(observation, str) and observation == RAISED:
                scenario(lesson, *args, catch=False)
                raise AssertionError("your code raised an error, and none when the same calls ran again on the "
                                     "same inputs: it depends on something other than its inputs (a global, state "
                                     "left from an earlier call, an unseeded random number)")
            yield observation
    return each()


def attempt(call) -> tuple:
    """What `call()` did, as data: ("returned", its value) or ("raised", the name of the nearest
    built-in type of its exception, its arguments). A stub's bare NotImplementedError goes
    through: its TODO."""
    try:
        return "returned", call()
    except NotImplementedError as exc:
        if not exc.args:
            raise
        error = exc
    except Exception as exc:  # noqa: BLE001 (the learner's error is what the test checks)
        error = exc
    kind = next(t for t in type(error).__mro__ if getattr(builtins, t.__name__, None) is t)
    plain = all(type(arg) in (str, int, float, bool) for arg in error.args)
    return "raised", kind.__name__, list(error.args) if plain else [str(error)]


def replay(outcome: tuple):
    """Do again what `attempt` recorded: return its value, or raise its error as that built-in
    exception (RuntimeError for a name that is none)."""
    if outcome[0] == "returned":
        return outcome[1]
    kind = getattr(builtins, str(outcome[1]), None)
    kind = kind if isinstance(kind, type) and issubclass(kind, Exception) else RuntimeError
    try:
        error = kind(*outcome[2])  # KeyError('scale') again, not KeyError("'scale'")
    except Exception:  # noqa: BLE001 (a type that takes other arguments: UnicodeDecodeError's)
        error = RuntimeError(*outcome[2])
    raise error


def kept(value):
    """`value`, which the learner's code returned, as it is now: its tensors cloned, its lists,
    tuples and dicts copied: a script reports its snapshots at its end, and a scaler may hand out
    its own dict or tensor and change it in a later step."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if type(value) in (list, tuple):
        return type(value)(kept(v) for v in value)
    if type(value) is dict:
        return {k: kept(v) for k, v in value.items()}
    return value


def counting_steps(opt: torch.optim.Optimizer) -> list[int]:
    """Make `opt.step` count its calls, in the one-element list returned."""
    count, step = [0], opt.step

    def counting(*args, **kwargs):
        count[0] += 1
        return step(*args, **kwargs)
    opt.step = counting
    return count


def scaled_backward(scaler, loss: torch.Tensor) -> tuple:
    """scaler.scale(loss).backward(): the scale get_scale() gave before it, and what scale(loss)
    multiplied the loss by (None where it did not return one number), for gradient_factor."""
    scale_used = kept(scaler.get_scale())
    scaled = scaler.scale(loss)
    scaled_by = (float(scaled.detach().float() / loss.detach()) if isinstance(scaled, torch.Tensor)
                 and scaled.numel() == 1 and not scaled.is_meta else None)
    scaled.backward()
    return scale_used, scaled_by


class Side:
    """One model, its optimizer and a scaler: torch's or the learner's, driven in the process the
    scaler lives in; `snapshot` is what it reports."""

    def __init__(self, scaler, opt_name: str = "sgd"):
        self.model = tiny_model()
        self.scaler = scaler
        self.count_steps(make_optimizer(opt_name, self.model.parameters()))

    def count_steps(self, opt: torch.optim.Optimizer) -> None:
        """Make `opt` this side's optimizer, counting how often its step() is called."""
        self.opt, self.steps_taken = opt, counting_steps(opt)

    @property
    def opt_steps(self) -> int:
        return self.steps_taken[0]

    def backward(self, poison: float | None = None) -> None:
        """Scaled backward; `poison` (inf or nan) goes into one gradient entry."""
        x, y = batch()
        self.opt.zero_grad(set_to_none=True)
        self.scale_used, self.scaled_by = scaled_backward(self.scaler, F.mse_loss(self.model(x), y))
        if poison is not None:  # in the last layer's: an unscale_ that stops at it has unscaled the first layer's
            self.model[2].weight.grad[0, 0] = poison

    def step(self, poison: float | None = None):
        self.backward(poison)
        result = self.scaler.step(self.opt)
        self.scaler.update()
        return result

    def snapshot(self, returned=None) -> dict:
        """What the checks compare after a step, as data: the scale and state_dict(),
        the parameters, the optimizer's state and the .grad left, how often the optimizer stepped,
        `returned`, what the step returned, the scale get_scale() gave before it and what scale(loss)
        multiplied the loss by (None where this side's backward did not run)."""
        return {"scale": kept(self.scaler.get_scale()), "state_dict": kept(self.scaler.state_dict()),
                "params": params_of(self.model), "optimizer": optimizer_state(self.opt), "grads": grads_of(self.opt),
                "opt_steps": self.opt_steps, "returned": kept(returned),
                "scale_used": getattr(self, "scale_used", None), "scaled_by": getattr(self, "scaled_by", None)}


def run_steps(side: Side, schedule, state: dict | None = None) -> Iterator[dict]:
    """`side` through `schedule` (for each step CLEAN, or the inf or nan put into a gradient), its
    scaler first loaded with `state` if given: its snapshot before the first step and after each."""
    if state is not None:
        side.scaler.load_state_dict(state)
    yield side.snapshot()
    for poison in schedule:
        yield side.snapshot(side.step(poison))


@beside
def your_steps(lesson, opt_name: str, schedule, settings: dict, state: dict | None = None,
               catch: bool = False) -> list[dict]:
    """run_steps with the learner's DynamicLossScaler(**settings) and `opt_name`, observed."""
    # The scaler first: an untouched stub is a TODO before any optimizer is built.
    return observe(run_steps(Side(lesson.DynamicLossScaler(**settings), opt_name), schedule, state), catch)


def torch_steps(opt_name: str, schedule, settings: dict, state: dict | None = None) -> list[dict]:
    """run_steps with torch.amp.GradScaler("cpu", **settings): what your_steps must report."""
    return list(run_steps(Side(torch.amp.GradScaler("cpu", **settings), opt_name), schedule, state))


def poison_name(poison) -> str:
    return "clean" if poison is None else str(poison)


def a_step(poison) -> str:
    """"a clean step", "an inf step", "a -inf step", "a nan step"."""
    name = poison_name(poison)
    return f"{'an' if name in ('inf', 'nan') else 'a'} {name} step"


def show_state_dict(state: dict) -> str:
    return "{" + ", ".join(f"{k!r}: {v!r} ({type(v).__name__})" for k, v in state.items()) + "}"


def assert_same_state_dict(got, expected: dict, what: str) -> None:
    """The same keys, the same values AND the same types (torch hands out Python floats and ints);
    a failure names the keys that differ, and only those."""
    __tracebackhide__ = True
    if not isinstance(got, dict) or got.keys() != expected.keys():
        shown = show_state_dict(got) if isinstance(got, dict) else repr(got)
        fail(f"{what}: state_dict() is {shown}; torch.amp.GradScaler's is {show_state_dict(expected)}: "
             "the same keys, with Python numbers as values")
    wrong = [k for k in expected if type(got[k]) is not type(expected[k]) or got[k] != expected[k]]
    typed = any(type(got[k]) is not type(expected[k]) for k in wrong)
    if wrong:
        fail(f"{what}: {state_dict_gaps(got, expected)}"
             + (". Hand out Python floats and ints, as torch does (no tensors: `float(...)`, `int(...)`)" if typed
                else f".\n{tracker_rule(got, expected, what)}" if "_growth_tracker" in wrong else ""))


def state_dict_gaps(got: dict, expected: dict) -> str:
    """The entries of state_dict() `got` whose value or type is not torch's (`expected`, the same keys), as
    "state_dict()['scale'] is 4.0 (float), torch.amp.GradScaler's 64.0 (float); ..."."""
    return "; ".join(f"state_dict()[{k!r}] is {got[k]!r} ({type(got[k]).__name__}), torch.amp.GradScaler's "
                     f"{expected[k]!r} ({type(expected[k]).__name__})" for k in expected
                     if type(got[k]) is not type(expected[k]) or got[k] != expected[k])


def tracker_rule(got: dict, expected: dict, what: str) -> str:
    """The rule of _growth_tracker that `got` (a state_dict whose counter is not torch's, in `expected`)
    breaks: restored by load_state_dict (`what` says it loaded), restarted (torch's is 0, the learner's
    more), or counted (any other)."""
    if "load_state_dict" in what:
        return ("load_state_dict restores _growth_tracker too: the restored scaler carries on counting clean steps "
                "where the saved one stopped.")
    if expected["_growth_tracker"] == 0 and got["_growth_tracker"] > 0:
        return ("_growth_tracker goes back to 0 after a step with inf/nan gradients (when the scale backs off) and "
                "when the scale grows: it counts the clean steps in a row.")
    return ("_growth_tracker counts the clean steps in a row: each update() after an iteration without inf/nan adds "
            "1, until the scale grows.")


def _ratio(mine: dict, theirs: dict) -> float | None:
    """The one factor between the learner's gradients and torch's, if there is one (else None)."""
    ratios = []
    for key, ref in theirs.items():
        got = mine.get(key)
        if ref is None and got is None:  # a parameter the loss never reaches, on both sides
            continue
        if ref is None or got is None or got.shape != ref.shape:
            return None
        both = ref.isfinite() & got.isfinite() & (ref != 0)
        ratios.append((got[both].double() / ref[both].double()))
    ratios = torch.cat([r.flatten() for r in ratios]) if ratios else torch.empty(0)
    if ratios.numel() == 0 or not torch.allclose(ratios, ratios[0].expand_as(ratios), rtol=1e-3):
        return None
    return float(ratios[0])


def assert_same_grads(ref: dict, mine: dict, what: str) -> None:
    """The .grad left after the step (snapshots'): torch's, with the cause named where the
    difference shows one."""
    __tracebackhide__ = True
    got, expected = mine["grads"], ref["grads"]
    cleared = [key for key, grad in expected.items() if grad is not None and got.get(key) is None]
    if cleared:
        fail(f"{what}: the .grad of {', '.join(cleared)} is None after the step; torch's gradients are still there. Nothing "
             "clears the gradients after a step: clear them at the START of a step, before its forward pass.")
    assert_close(got, expected, what=f"{what}: the .grad left after the step", explain=lambda: gradient_factor(ref, mine))


def all_finite(grads: dict) -> bool:
    """Whether every .grad of a snapshot's (None ones aside) is finite: torch's hold inf/nan after a
    step whose gradients did."""
    return all(bool(g.isfinite().all()) for g in grads.values() if g is not None)


def gradient_factor(ref: dict, mine: dict, after: str = "the step") -> str:
    """What one factor between the .grad the learner's step left and torch's says (snapshots'),
    told against the scale S that get_scale() gave before the step and what scale(loss) multiplied
    the loss by: S (still scaled), S² (multiplied by S) or 1/S (divided twice, or never scaled);
    "" for none, another factor, or a step whose scale is not known (train_step's). `after`: when
    the .grad were taken, "the step" or "unscale_" (then step() has not run yet)."""
    ratio, scale, scaled_by = _ratio(mine["grads"], ref["grads"]), mine.get("scale_used"), mine.get("scaled_by")
    if not isinstance(scale, float) or scale <= 1 or not isinstance(scaled_by, float):
        return ""

    def near(a: float | None, b: float) -> bool:
        return a is not None and abs(a / b - 1) < 1e-3
    if ratio is None:
        return stopped_at_inf(ref["grads"], mine["grads"], scale) if near(scaled_by, scale) else ""
    told = f"The .grad left after {after} is {ratio:.5g} times torch's"
    if near(scaled_by, scale) and near(ratio, scale**2):
        return (f"{told}, S² for the scale S = {scale:g}: unscale_ multiplied the gradients by S where it divides "
                "them by S (times 1/S), so every update is S² times too large.")
    if near(scaled_by, scale) and near(ratio, scale) and after == "unscale_":
        return f"{told}, the scale S = {scale:g}: still scaled. unscale_ multiplies every .grad by 1/S, in place."
    if near(scaled_by, scale) and near(ratio, scale) and not all_finite(ref["grads"]):
        return (f"{told}, the scale S = {scale:g}: still scaled, on this step with inf/nan in a gradient. unscale_ "
                "(and step() through it when unscale_ was not called) unscales EVERY gradient of the optimizer in "
                "place, also once it has found inf/nan: the step is skipped, but the .grad it leaves is unscaled.")
    if near(scaled_by, scale) and near(ratio, scale):
        return (f"{told}, the scale S = {scale:g}: still scaled. step() unscales EVERY gradient of the optimizer in "
                "place (through unscale_ when unscale_ was not called), also on a skipped step.")
    if near(scaled_by, scale) and near(ratio, 1 / scale):
        return (f"{told}, 1/S for the scale S = {scale:g}: divided by the scale twice. step() unscales only what "
                "unscale_ has not unscaled yet.")
    if near(scaled_by, 1.0) and near(ratio, 1 / scale):
        return (f"{told}, 1/S for the scale S = {scale:g}: scale(loss) returned the loss unscaled (times 1, not "
                "times S), so the gradients were never scaled up, and unscaling shrank them by S. Multiply the loss "
                "by S.")
    return ""


def stopped_at_inf(ref: dict, mine: dict, scale: float) -> str:
    """Where the .grad the learner's step left (`mine`, by name) are torch's (`ref`) up to the first
    one that holds inf/nan, and S times torch's from it on: unscale_ stopped there; else ""."""
    keys = [key for key in ref if ref[key] is not None]
    poisoned = next((i for i, key in enumerate(keys) if not bool(ref[key].isfinite().all())), None)
    if not poisoned:  # none holds inf/nan, or the first does: nothing before it to tell
        return ""
    factors = [_ratio({key: mine.get(key)}, {key: ref[key]}) for key in keys]
    if not all(f is not None and abs(f - 1) < 1e-3 for f in factors[:poisoned]) or not all(
            f is not None and abs(f / scale - 1) < 1e-3 for f in factors[poisoned:]):
        return ""
    bad = "nan" if bool(ref[keys[poisoned]].isnan().any()) else "inf"
    return (f"{parameters(keys[:poisoned]).capitalize()} {'has' if poisoned == 1 else 'have'} torch's .grad, and from "
            f"{parameters(keys[poisoned:poisoned + 1])} on (the first holding {bad}) each .grad is still {scale:g} times "
            f"torch's, the scale S: unscale_ stopped at the {bad}. It unscales EVERY gradient of the optimizer in place, "
            "also once it has found inf/nan: the step is skipped, but the .grad it leaves is unscaled.")


def parameters(keys: list[str]) -> str:
    """Keys of grads_of's, as a sentence names them: "parameter 2", "parameters 0 and 1"; others as they are."""
    numbers = [key.removeprefix(".grad of parameter ") for key in keys]
    if not all(number.isdigit() for number in numbers):
        return listed(keys)
    return f"parameter{'s' if len(numbers) > 1 else ''} {listed(numbers)}"


SCALE_RULE = ("After a step with inf/nan gradients: scale *= backoff_factor and the counter restarts; after "
              "growth_interval clean steps in a row: scale *= growth_factor, and the counter restarts.")


def scales_differ(scale, expected) -> str:
    """The learner's scale beside torch's, as every scale check says it."""
    return f"the scale is {scale}, torch.amp.GradScaler's is {expected}."


def assert_same_state(ref: dict, mine: dict, what: str) -> None:
    """The learner's snapshot `mine` is torch's `ref`: scale, state_dict(), parameters, optimizer
    state and .grad."""
    __tracebackhide__ = True
    scale, expected = mine["scale"], ref["scale"]
    if type(scale) is not float:
        fail(f"{what}: get_scale() returned {scale!r}, a {type(scale).__name__}; return a Python float")
    if scale != expected:
        fail(f"{what}: {scales_differ(scale, expected)} {SCALE_RULE}")
    assert_same_state_dict(mine["state_dict"], ref["state_dict"], what)
    assert_close(mine["params"], ref["params"], what=f"{what}: the parameters", explain=lambda: gradient_factor(ref, mine))
    assert_close(mine["optimizer"], ref["optimizer"], what=f"{what}: the optimizer state",
                 explain=lambda: gradient_factor(ref, mine))
    assert_same_grads(ref, mine, what)


ISINF = ("This is an inf check that misses nan: `torch.isinf(grad)` and `grad == inf` are False for nan (nan equals "
         "nothing, not even itself), while a step with inf in a gradient was skipped. torch.isfinite(grad) is "
         "False for inf AND nan.")


def stepped(after: dict, poison) -> str:
    """Why a step with `poison` in a gradient moved the parameters although optimizer.step() must
    not run: `after`, the learner's snapshot after it, tells whether the gradients were neutralised
    (all finite where torch's hold `poison`) or stepped as they were."""
    if all_finite(after["grads"]):
        return (f"optimizer.step() ran on this step with {poison} in a gradient: a skipped step does not call it at "
                "all. Your step left the gradients finite (zeroed or otherwise neutralised), and even so "
                "optimizer.step() moves the optimizer's state: Adam's moments and step count, SGD's momentum.")
    return (f"optimizer.step() ran on a step whose gradients held {poison}: skip it (return None without calling "
            "optimizer.step()).")


def assert_skipped(before: dict, after: dict, poison, what: str, *, inf_skipped) -> None:
    """A step with `poison` in a gradient changed neither the parameters nor the optimizer's state:
    `before` and `after` are the learner's snapshots around it. inf_skipped(): whether the learner's
    scaler skips a step with inf (asked only when this one failed)."""
    __tracebackhide__ = True
    try:
        assert_close(after["params"], before["params"], what=f"{what} must be skipped, but it changed the parameters")
        assert_close(after["optimizer"], before["optimizer"],
                     what=f"{what} must be skipped, but it changed the optimizer's state (Adam's exp_avg and step, "
                          "SGD's momentum)")
        return
    except AssertionError as exc:
        if after["opt_steps"] == before["opt_steps"]:
            raise
        isnan = isinstance(poison, float) and poison != poison
        failure = f"{exc}\n{ISINF if isnan and inf_skipped() else stepped(after, poison)}"
    pytest.fail(failure, pytrace=False)


def listed(names: list[str]) -> str:
    """Names as a sentence lists them: "a", "a and b", "a, b and c"."""
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def scaler_call(settings: dict) -> str:
    """DynamicLossScaler(**settings) in call form: "DynamicLossScaler(init_scale=256.0, growth_interval=3)"."""
    return f"DynamicLossScaler({', '.join(f'{k}={v!r}' for k, v in settings.items())})"


def run_schedule(lesson, opt_name: str, schedule, **settings) -> None:
    __tracebackhide__ = True
    mine, ref = observed(your_steps, lesson, opt_name, schedule, settings), torch_steps(opt_name, schedule, settings)
    history, inf_skipped, before = [], False, next(mine)
    for i, (poison, after, expected) in enumerate(zip(schedule, mine, ref[1:])):
        history.append(poison_name(poison))
        what = f"{scaler_call(settings)} with {opt_name}, after steps [{', '.join(history)}]"
        if poison is not None:
            assert_skipped(before, after, poison, f"{what}: step {i}, with {poison} in a gradient,",
                           inf_skipped=lambda: inf_skipped)
            inf_skipped = inf_skipped or poison == INF
        assert_same_state(expected, after, what)
        before = after


def skips_inf(lesson) -> bool:
    """Whether the learner's scaler skips a step with inf in a gradient (without calling optimizer.step())."""
    try:
        return your_steps(lesson, "adam", [INF], {})[1]["opt_steps"] == 0
    except Exception:  # noqa: BLE001 (asked to explain another failure: no answer is an answer)
        return False


# --- the basics: public ------------------------------------------------------------------------


def first_scale(scaler) -> Iterator:
    """A fresh `scaler`'s get_scale(); then its scale(tensor(0.5, requires_grad=True)) and whether
    that requires grad."""
    yield scaler.get_scale()
    scaled = scaler.scale(torch.tensor(0.5, requires_grad=True))
    yield scaled, bool(getattr(scaled, "requires_grad", False))


@beside
def your_first_scale(lesson, catch: bool = False) -> list:
    """first_scale with the learner's DynamicLossScaler(), observed."""
    return observe(first_scale(lesson.DynamicLossScaler()), catch)


# (shape, dtype) of the losses scale() gets: 0-dim as usual, one-element and unreduced ones too.
SCALE_CASES = [(shape, dtype) for shape in [(), (1,), (3,)]
               for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64)]


@beside
def your_scale(lesson, init_scale: float, loss: torch.Tensor) -> dict:
    """DynamicLossScaler(init_scale=init_scale).scale on a copy of `loss` that requires grad, as
    assert_same_as calls it: the result and its device, whether it requires grad, and
    the gradient of its sum that reaches the loss (None where none does, or on the meta device)."""
    loss = loss.detach().clone().requires_grad_()
    out = lesson.DynamicLossScaler(init_scale=init_scale).scale(loss)
    tracked = isinstance(out, torch.Tensor) and out.requires_grad
    if tracked and out.device.type != "meta":
        out.sum().backward()
    return {"result": out, "device": out.device if isinstance(out, torch.Tensor) else None,
            "requires_grad": tracked, "grad": loss.grad}


class Replayed(torch.autograd.Function):
    """The result your_scale reported, made again on the test's loss: its value, and as the
    gradient reaching the loss (through `.sum()`, all assert_same_as asks for) the reported one."""

    @staticmethod
    def forward(ctx, loss, value, grad):
        ctx.grad = grad
        return value.clone()

    @staticmethod
    def backward(ctx, _):
        return ctx.grad, None, None


def scaled_result(report: dict):
    """What scale(loss) returned beside the code (your_scale's report), here, out of any graph."""
    result = report["result"]
    # A tensor crosses to the CPU from any device but meta: put it back where it was.
    return result.detach().to(report["device"]) if isinstance(result, torch.Tensor) else result


def replayed_scale(report: dict, loss: torch.Tensor):
    """scaled_result, in `loss`'s graph where the result was in the loss's graph beside the code."""
    result = scaled_result(report)
    return Replayed.apply(loss, result, report["grad"]) if report["requires_grad"] else result


def scale_failure(got, init_scale: float, loss: torch.Tensor) -> str | None:
    """Why `got`, the learner's scale(loss), differs from torch's, where its dtype or device shows
    the cause; else None."""
    want = torch.amp.GradScaler("cpu", init_scale=init_scale).scale(loss.detach().clone())
    if not isinstance(got, torch.Tensor):
        return None
    if got.device != want.device:
        return (f"The result is on {got.device}, the loss on {loss.device}: build the scale on the loss's device "
                "(device=loss.device).")
    if got.dtype == loss.dtype != want.dtype:
        return (f"The result stayed {dtype_name(loss.dtype)}: the scale was applied as a Python "
                "float (or a tensor of the loss's dtype), so a 16-bit 0-dim loss stays 16-bit (and 65536 * loss can "
                "overflow there). torch holds the scale in a float32 0-dim tensor: between two 0-dim tensors the "
                "wider dtype wins, and the result is float32.")
    if got.dtype != want.dtype:
        return (f"The result is {dtype_name(got.dtype)}, torch's {dtype_name(want.dtype)}: "
                "hold the scale in a float32 0-dim tensor, as torch does (not float64).")
    return None


# --- side by side with torch.amp.GradScaler --------------------------------------------------


def unscale_then_clip(side: Side) -> Iterator[dict]:
    """Three iterations of backward, unscale_, clip_grad_norm_(0.05), step and update: for each,
    after unscale_ the names of the parameters whose .grad it replaced by a new tensor (instead
    of changing it in place), the gradients by name and what scaled_backward saw; after update,
    the snapshot."""
    for _ in range(3):
        side.backward()
        grads = [p.grad for p in side.model.parameters()]
        side.scaler.unscale_(side.opt)
        yield {"replaced": [attribute(n) for (n, p), g in zip(side.model.named_parameters(), grads) if p.grad is not g],
               "unscaled": grads_by_name(side.model), "scale_used": side.scale_used, "scaled_by": side.scaled_by}
        nn.utils.clip_grad_norm_(side.model.parameters(), 0.05)
        side.scaler.step(side.opt)
        side.scaler.update()
        yield side.snapshot()


@beside
def your_unscale_then_clip(lesson, catch: bool = False) -> list[dict]:
    """unscale_then_clip with the learner's DynamicLossScaler() and Adam, observed."""
    return observe(unscale_then_clip(Side(lesson.DynamicLossScaler(), "adam")), catch)


NONE_GRAD = ("A parameter the loss never reaches has .grad None (a layer that got no gradient this step, as torch "
             "allows): unscale_ and the inf check skip those parameters (`if p.grad is None: continue`).")


def none_grad_advice(exc: BaseException) -> str:
    """`reported`'s advice for an error of train_step: NONE_GRAD where it is an attribute or type
    error on None (the loop's optimizer holds a parameter whose .grad is None)."""
    return NONE_GRAD if isinstance(exc, (AttributeError, TypeError)) and "NoneType" in str(exc) else ""


PARAM_GROUP_SCHEDULE = [CLEAN, CLEAN, INF, CLEAN]  # the inf in the second param group


def param_groups_run(scaler) -> Iterator[dict]:
    """Four steps (the third with inf in the second param group) of SGD over two param groups,
    one holding a layer the loss never reaches: for each, what step() crashed with where it
    crashed on a .grad of None (then the run ends), or the scale, the parameters, the
    optimizer's state, the .grad left by name, what scaled_backward saw and whether
    optimizer.step() ran."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = nn.ModuleDict({"used": nn.Linear(3, 2), "frozen": nn.Linear(3, 2), "other": nn.Linear(2, 2)})
    groups = [{"params": [*model["used"].parameters(), *model["frozen"].parameters()]},
              {"params": model["other"].parameters(), "lr": 0.05}]
    opt = torch.optim.SGD(groups, lr=0.1, momentum=0.9)
    steps_taken = counting_steps(opt)
    x, y = batch()
    for poison in PARAM_GROUP_SCHEDULE:
        opt.zero_grad(set_to_none=True)
        before = steps_taken[0]
        # "frozen" gets no gradient: its .grad stays None
        scale_used, scaled_by = scaled_backward(scaler, F.mse_loss(model["other"](model["used"](x)), y))
        if poison is not None:
            model["other"].weight.grad[0, 0] = poison  # in the second param group
        try:
            scaler.step(opt)
        except (AttributeError, TypeError) as exc:
            if "NoneType" not in str(exc):
                raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            yield {"crash": f"{quoted(exc)} at {Path(where.filename).name}:{where.lineno}"}
            return
        scaler.update()
        yield {"scale": kept(scaler.get_scale()), "params": params_of(model), "optimizer": optimizer_state(opt),
               "grads": grads_by_name(model), "scale_used": scale_used, "scaled_by": scaled_by,
               "stepped": steps_taken[0] > before}


@beside
def your_param_groups_run(lesson, catch: bool = False) -> list[dict]:
    """param_groups_run with the learner's DynamicLossScaler(growth_interval=2), observed."""
    return observe(param_groups_run(lesson.DynamicLossScaler(growth_interval=2)), catch)


def step_fault(expected: dict, got: dict, poison) -> str:
    """What the learner's step (`got`, a snapshot with "stepped", "grads", "scale_used" and
    "scaled_by") says of why it differs from torch's (`expected`), where its data shows a cause:
    optimizer.step() ran on a step with `poison` in a gradient, or one factor between the .grad
    left and torch's (gradient_factor); else ""."""
    if poison is not None and got["stepped"] and not expected["stepped"]:
        return stepped(got, poison)
    return gradient_factor(expected, got)


def second_group_only(got: dict, expected: dict) -> str:
    """The param-group pitfall, when of param_groups_run's parameters only the second group's
    ("other.*") differ from torch's, else ""."""
    wrong = {name.removeprefix("model.").split(".")[0] for name in expected if not same(got.get(name), expected[name])}
    if wrong != {"other"}:
        return ""
    return ("The first param group's parameters match torch's and the second group's do not: unscale and check "
            "the gradients of every param group (optimizer.param_groups), not only the first, skipping those "
            "that are None.")


# One iteration with two optimizers: (where the inf goes, the order of the steps, who is unscaled first).
# "loose" is a layer in no optimizer: its gradient is no scaler's business, inf or not.
TWO_OPTIMIZER_SCHEDULE = [
    ((), "ab", ""), (("a",), "ab", ""), ((), "ba", "a"), (("b",), "ba", ""), (("a",), "ba", "b"),
    (("loose",), "ab", ""), (("a", "b"), "ab", "ab"), ((), "ab", ""), ((), "ba", "b"), ((), "ab", ""),
]


def scales_by_rule(schedule, rule: str, init_scale: float = 2.0**16, growth_interval: int = 2) -> list[float]:
    """The scale after each iteration of a TWO_OPTIMIZER_SCHEDULE prefix, under `rule`: "torch" (an
    inf in any optimizer backs off; one clean step per update()), "last unscaled" (only the
    optimizer unscaled last is looked at) or "per step" (a clean step counted per optimizer stepped)."""
    scale, tracker, scales = init_scale, 0, []
    for poisoned, order, unscale_first in schedule:
        infs = {name for name in poisoned if name in "ab"}
        if rule == "last unscaled":
            unscaled = [*unscale_first, *(name for name in order if name not in unscale_first)]
            found = unscaled[-1] in infs
        else:
            found = bool(infs)
        if found:
            scale, tracker = scale * 0.5, 0
        else:
            tracker += len(order) if rule == "per step" else 1
            if tracker >= growth_interval:
                scale, tracker = scale * 2.0, 0
        scales.append(scale)
    return scales


RECORD_WORDS = {
    "last unscaled": ("This is one inf/nan flag for all optimizers: update() saw only the optimizer unscaled last, "
                      "and an inf in the other one was forgotten. Keep the inf/nan record per optimizer, and back off "
                      "when ANY optimizer found inf/nan this iteration."),
    "per step": ("This is a clean step counted per optimizer stepped: with two optimizers the scale grows twice as "
                 "fast. Count ONE clean step per update(), however many optimizers stepped."),
    "every step": ("With one optimizer too the scale grows after a single clean step: growth_interval is not "
                   "waited for. Grow only when growth_interval clean steps in a row have passed (see "
                   "test_growth_waits_for_growth_interval_clean_steps)."),
}


def grows_every_step(lesson) -> bool:
    """Whether the learner's DynamicLossScaler(growth_interval=2) with one optimizer grows after
    one clean step: what the "per step" rule's scales also show with two optimizers."""
    first = your_steps(lesson, "sgd", [CLEAN, CLEAN], {"growth_interval": 2})[1]["scale"]
    return first != torch_steps("sgd", [CLEAN, CLEAN], {"growth_interval": 2})[1]["scale"]


def scaler_calls_of(iteration) -> list[tuple[str, str]]:
    """The scaler's calls of a TWO_OPTIMIZER_SCHEDULE iteration: (method, optimizer name), in order."""
    _, order, unscale_first = iteration
    return [("unscale_", name) for name in unscale_first] + [("step", name) for name in order]


def two_optimizers_run(scaler, explain: bool) -> Iterator[dict]:
    """TWO_OPTIMIZER_SCHEDULE with SGD on layer a and Adam on layer b: for each iteration the scale
    and state_dict(), the parameters, each optimizer's state, the gradients by name, what
    scaled_backward saw and whether each optimizer's step() ran.
    With `explain`, a RuntimeError of a call made after another optimizer's call ends the run
    recorded as {"refused": (its index among the iteration's calls, its message)}; any other error
    goes through as itself."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = nn.ModuleDict({"a": nn.Linear(3, 4), "b": nn.Linear(4, 2), "loose": nn.Linear(2, 2)})
    opts = {"a": make_optimizer("sgd", model["a"].parameters()), "b": make_optimizer("adam", model["b"].parameters())}
    steps_taken = {name: counting_steps(opt) for name, opt in opts.items()}
    x, y = batch()
    for iteration in TWO_OPTIMIZER_SCHEDULE:
        model.zero_grad(set_to_none=True)
        before = {name: count[0] for name, count in steps_taken.items()}
        scale_used, scaled_by = scaled_backward(scaler, F.mse_loss(model["loose"](model["b"](torch.tanh(model["a"](x)))), y))
        for name in iteration[0]:
            model[name].weight.grad[0, 0] = INF
        calls = scaler_calls_of(iteration)
        for done, (method, name) in enumerate(calls):
            try:
                getattr(scaler, method)(opts[name])
            except RuntimeError as exc:
                if not explain or not any(other != name for _, other in calls[:done]):
                    raise
                yield {"refused": (done, str(exc))}
                return
        scaler.update()
        yield {"scale": kept(scaler.get_scale()), "state_dict": kept(scaler.state_dict()),
               "params": params_of(model), "optimizers": {n: optimizer_state(o) for n, o in opts.items()},
               "grads": grads_by_name(model), "scale_used": scale_used, "scaled_by": scaled_by,
               "stepped": {name: count[0] > before[name] for name, count in steps_taken.items()}}


@beside
def your_two_optimizers_run(lesson, catch: bool = False) -> list[dict]:
    """two_optimizers_run with the learner's DynamicLossScaler(growth_interval=2), explained, observed."""
    return observe(two_optimizers_run(lesson.DynamicLossScaler(growth_interval=2), explain=True), catch)


def layer(snapshot: dict, name: str) -> dict:
    """Of a two_optimizers_run snapshot, what step_fault reads for the optimizer of layer `name`:
    that layer's .grad, whether its optimizer stepped, and the scaling."""
    return {"grads": {key: grad for key, grad in snapshot["grads"].items() if key.startswith(f"model.{name}.")},
            "stepped": snapshot["stepped"][name], "scale_used": snapshot["scale_used"], "scaled_by": snapshot["scaled_by"]}


# --- the protocol: what may be called when ------------------------------------------------


@beside
def unscaled_twice(lesson):
    """A backward and unscale_ with the learner's DynamicLossScaler(), then a second unscale_:
    the gradients by name before it, what it did (`attempt`), and the gradients after it."""
    side = Side(lesson.DynamicLossScaler())
    side.backward()
    side.scaler.unscale_(side.opt)
    grads = {attribute(name): p.grad.clone() for name, p in side.model.named_parameters()}
    second = attempt(lambda: side.scaler.unscale_(side.opt))
    return grads, second, {attribute(name): p.grad for name, p in side.model.named_parameters()}


def out_of_turn(scaler) -> Iterator[tuple]:
    """A backward and step with `scaler` and Adam, then unscale_ and step again before update(),
    each `attempt`ed: what they did, and the parameters before and after them; then update() and
    a step of a new iteration."""
    side = Side(scaler, "adam")
    side.backward()
    scaler.step(side.opt)
    before = params_of(side.model)
    unscale = attempt(lambda: scaler.unscale_(side.opt))
    step = attempt(lambda: scaler.step(side.opt))
    yield unscale, step, before, params_of(side.model)
    scaler.update()
    side.step()  # a new iteration may unscale and step again


@beside
def your_out_of_turn(lesson, catch: bool = False) -> list[tuple]:
    """out_of_turn with the learner's DynamicLossScaler(), observed."""
    return observe(out_of_turn(lesson.DynamicLossScaler()), catch)


# --- state_dict -----------------------------------------------------------------------------


@beside
def load_empty(lesson):
    """The learner's DynamicLossScaler(init_scale=8.) told to load_state_dict({}): what that did
    (`attempt`), and its state_dict() after."""
    scaler = lesson.DynamicLossScaler(init_scale=8.0)
    return attempt(lambda: scaler.load_state_dict({})), scaler.state_dict()


# --- enabled=False --------------------------------------------------------------------------


DISABLED_STEPS = (CLEAN, CLEAN, INF)
OPTIMIZER_ID = "<id(optimizer)>"


def pass_through(scaler, state: dict) -> Iterator:
    """A disabled `scaler` driven call for call. Yields, in turn: after scale(loss), "same"
    (whether it returned the loss itself), "shown" (else what it returned) and get_scale(); for
    each of DISABLED_STEPS, after unscale_, unscale_, step, step and update with CountingSGD, the
    snapshot, the two step() results in it; its state_dict() then; and its state_dict() and
    get_scale() after load_state_dict({}) and load_state_dict(`state`). A KeyError of the steps
    whose key is id(optimizer) is raised with the key OPTIMIZER_ID instead."""
    loss = torch.tensor(0.5, requires_grad=True)
    out = scaler.scale(loss)
    if not isinstance(out, torch.Tensor):
        shown = repr(out)
    elif out.numel() == 1 and not out.is_meta and out.item() == loss.item():
        shown = "a new tensor of the same value (loss * 1?)"
    elif out.numel() == 1 and not out.is_meta:
        shown = f"loss * {out.item() / loss.item():g}"
    else:
        shown = "a new tensor"
    yield {"same": out is loss, "shown": shown,
           "scale": kept(scaler.get_scale())}
    side = Side(scaler, "counting sgd")
    for poison in DISABLED_STEPS:
        side.backward(poison)
        try:
            scaler.unscale_(side.opt)
            scaler.unscale_(side.opt)  # disabled: no check, no error, the gradients stay as they are
            results = [scaler.step(side.opt), scaler.step(side.opt)]  # no check: steps twice
            scaler.update()
        except KeyError as exc:
            if exc.args == (id(side.opt),):  # a record looked up by id(optimizer): its number says nothing
                exc.args = (OPTIMIZER_ID,)
            raise
        yield side.snapshot(results)
    yield kept(scaler.state_dict())
    scaler.load_state_dict({})  # a disabled scaler loads nothing, and refuses nothing
    scaler.load_state_dict(state)
    yield scaler.state_dict(), scaler.get_scale()


@beside
def your_pass_through(lesson, state: dict, catch: bool = False) -> list:
    """pass_through with the learner's DynamicLossScaler(init_scale=1024., enabled=False), observed."""
    return observe(pass_through(lesson.DynamicLossScaler(init_scale=1024.0, enabled=False), state), catch)


PASS_THROUGH = ("torch.amp.GradScaler(enabled=False) takes the same calls without an error: a disabled scaler is a "
                "pass-through (scale returns the loss, unscale_, update and load_state_dict do nothing, step() just "
                "calls optimizer.step()), with no check and no record kept; return before any of that when disabled.")


@contextmanager
def disabled_calls(what: str) -> Iterator[None]:
    """Inside the block, an error of the learner's disabled scaler fails the test with `what`
    (the calls made), the error and the learner's lines, and PASS_THROUGH."""
    __tracebackhide__ = True
    with reported(what):
        try:
            yield
            return
        except (AssertionError, NotImplementedError):  # the test's own failure; a stub's TODO
            raise
        except Exception as exc:  # noqa: BLE001 (the learner's error, told with the calls)
            failure = raised(what, exc)
            if isinstance(exc, KeyError) and exc.args == (OPTIMIZER_ID,):
                failure = failure.replace(f"raised {quoted(exc)}", "raised KeyError(id(optimizer)): your scaler looked "
                                          "up its record of this optimizer, which a disabled scaler never makes", 1)
    fail(f"{failure}\n{PASS_THROUGH}")


# --- train_step -----------------------------------------------------------------------------


# train_step's keyword-only parameters and their defaults, as the exercise has them.
TRAIN_STEP_KEYWORDS = {"device_type": "cpu", "dtype": torch.bfloat16, "max_grad_norm": None}


# The inputs of the train_step calls the tests make (tiny_model, batch()), in words.
TINY = ("model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)), optimizer = SGD(model.parameters(), "
        "lr=0.1), x of shape (6, 3), y of shape (6, 2)")
CONVERTED = ("torch's GradScaler refuses float16 gradients, and a gradient is float16 only where its parameter is: "
             "the model was converted to 16 bits. train_step must not convert the model (no .to(dtype), .half() or "
             ".bfloat16()): autocast casts each matmul's inputs on the fly, and the optimizer updates float32 weights.")


@contextmanager
def stepping(what: str, advice=None) -> Iterator[None]:
    """Inside the block, an error of the learner's train_step fails the test with `what` (the
    call), the error and the learner's lines, and what `advice(error)` says of it ("" for nothing);
    torch's refusal of float16 gradients with CONVERTED."""
    __tracebackhide__ = True
    with reported(what, advice), explained(what, when="Attempting to unscale FP16 gradients", advice=CONVERTED,
                                   exc_type=ValueError):
        yield


def described(param: inspect.Parameter | None) -> dict | None:
    """A parameter of a signature as data (None stays None): its text, the name of its kind,
    and its default (None where it has none, "has_default" telling)."""
    if param is None:
        return None
    has_default = param.default is not inspect.Parameter.empty
    return {"text": str(param), "kind": param.kind.name, "has_default": has_default,
            "default": param.default if has_default else None}


@beside
def first_train_step(lesson):
    """train_step on tiny_model with SGD and torch.amp.GradScaler("cpu"): what it returned; its
    parameters named in TRAIN_STEP_KEYWORDS, `described`; and whether it takes **kwargs."""
    model = tiny_model()
    x, y = batch()
    loss = lesson.train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.amp.GradScaler("cpu"), x, y,
                             F.mse_loss)
    params = inspect.signature(lesson.train_step).parameters
    return (loss, {name: described(params.get(name)) for name in TRAIN_STEP_KEYWORDS},
            any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()))


@beside
def autocast_step(lesson, dtype: torch.dtype):
    """train_step(..., dtype=dtype) on tiny_model with SGD and torch.amp.GradScaler("cpu"): the
    dtypes going into its matmuls (forward and backward), the messages of the warnings it raised,
    and the dtype of the model's first weight after it."""
    model = tiny_model()
    x, y = batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        calls = trace_ops(lambda: lesson.train_step(model, opt, torch.amp.GradScaler("cpu"), x, y, F.mse_loss, dtype=dtype))
    seen = [d for call in calls if call.name in ("aten.mm", "aten.addmm") for d in call.inputs]
    return seen, [str(w.message) for w in caught], model[0].weight.dtype


NOT_CONVERTED = ("train_step must not convert the model (no .to(dtype), .half() or .bfloat16()): autocast casts each "
                 "matmul's inputs on the fly, and the optimizer updates float32 weights.")


def autocast_advice(said: list[str], wrong: list[str]) -> str:
    """What to do about a forward whose matmuls ran in the dtypes `wrong` (their names), not the
    autocast dtype, given the messages of the warnings train_step raised."""
    if wrong and "float32" not in wrong:
        return (f"With float32 weights, a {' or '.join(wrong)} matmul is autocast's work with another dtype: pass `dtype` "
                "on to torch.autocast (`torch.autocast(device_type, dtype=dtype)`), do not hard-code one.")
    return autocast_warning(said) or ("The forward ran outside autocast: run the model and the loss inside "
                                       "`with torch.autocast(device_type, dtype=dtype):`, and nothing else.")


def autocast_fault(lesson) -> str | None:
    """The advice of test_train_step_runs_the_forward_under_autocast where train_step(...,
    dtype=torch.bfloat16) runs its matmuls in another dtype or converts the model; else None
    (asked to explain another failure of train_step)."""
    try:
        seen, said, weight = autocast_step(lesson, torch.bfloat16)
    except Exception:  # noqa: BLE001 (asked to explain another failure: no answer is an answer)
        return None
    if weight != torch.float32:
        return NOT_CONVERTED
    wrong = sorted({dtype_name(d) for d in seen if d != torch.bfloat16})
    return autocast_advice(said, wrong) if not seen or wrong else None


def note_autocast(log: dict, where: str) -> None:
    """CPU autocast's state (enabled, dtype or None) where the learner's code calls ours, the first time."""
    enabled = torch.is_autocast_enabled("cpu")
    log.setdefault(where, (enabled, torch.get_autocast_dtype("cpu") if enabled else None))


class Probe(nn.Module):
    """tiny_model noting autocast's state in `log` when its forward runs."""

    def __init__(self, log: dict) -> None:
        super().__init__()
        self.log, self.inner = log, tiny_model()

    def forward(self, inputs):
        note_autocast(self.log, "the model's forward")
        return self.inner(inputs)


class ProbeSGD(torch.optim.SGD):
    """SGD noting autocast's state in `log` when its step runs."""

    def __init__(self, params, log: dict, **settings) -> None:
        super().__init__(params, **settings)
        self.log = log

    def step(self, closure=None):
        note_autocast(self.log, "optimizer.step()")
        return super().step(closure)


@beside
def autocast_places(lesson, device_type: str, dtype: torch.dtype):
    """train_step(..., device_type=device_type, dtype=dtype) on CPU tensors with a Probe, a
    ProbeSGD, a loss function and a gradient hook that note CPU autocast's state: what each
    part saw, by part ("the model's forward", "loss_fn", "the backward", "optimizer.step()"),
    and the messages of the warnings it raised."""
    log: dict[str, tuple] = {}

    def loss_fn(output, target):
        note_autocast(log, "loss_fn")
        return F.mse_loss(output, target)

    model = Probe(log)
    model.inner[0].weight.register_hook(lambda grad: note_autocast(log, "the backward"))
    x, y = batch()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # torch.autocast("cuda") without CUDA warns and disables itself
        lesson.train_step(model, ProbeSGD(model.parameters(), log, lr=0.1), torch.amp.GradScaler("cpu", init_scale=256.0),
                          x, y, loss_fn, device_type=device_type, dtype=dtype)
    return log, [str(w.message) for w in caught]


def autocast_warning(said: list[str]) -> str | None:
    """What the warnings (their messages) of a train_step that ran outside CPU autocast say about why, or None."""
    if any("torch.cuda.amp.autocast" in text for text in said):
        return ("This is torch.cuda.amp.autocast (from older tutorials): it is CUDA's autocast, and deprecated; it "
                "leaves CPU tensors alone (without CUDA it even disables itself, with a warning). Use "
                "`torch.autocast(device_type, dtype=dtype)`.")
    if any("CUDA is not available" in text and "autocast" in text for text in said):
        return ("torch warned that CUDA is not available and disabled autocast: this is autocast for 'cuda' on "
                "CPU tensors. Pass `device_type` on to torch.autocast (do not hard-code 'cuda').")
    return None


class RecordingScaler:
    """torch.amp.GradScaler("cpu") that logs which of its methods were called, in order."""

    def __init__(self) -> None:
        self.inner = torch.amp.GradScaler("cpu")
        self.calls: list[str] = []

    def __getattr__(self, name):
        method = getattr(self.inner, name)

        def recorded(*args, **kwargs):
            self.calls.append(name)
            return method(*args, **kwargs)
        return recorded


@beside
def scaler_calls(lesson, max_grad_norm: float | None) -> list[str]:
    """The methods of a RecordingScaler that train_step(..., max_grad_norm=max_grad_norm) called, in order."""
    model = tiny_model()
    x, y = batch()
    scaler = RecordingScaler()
    lesson.train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), scaler, x, y, F.mse_loss,
                      max_grad_norm=max_grad_norm)
    return scaler.calls


NOT_GIVEN = ("train_step uses the scaler it is given, `scaler`, and builds no GradScaler of its own "
             "(torch.amp.GradScaler() without a device is a CUDA scaler, disabled on a CPU).")
FALSY_NORM = ("With max_grad_norm=0.05 your train_step unscales and clips, with 0.0 it does not: 0.0 is a norm to clip "
              "to as well. Test `max_grad_norm is not None`, not `if max_grad_norm:` (0.0 is false).")
NO_UPDATE = ("train_step never calls scaler.update(): update() ends the iteration (it judges the inf/nan found and "
             "adapts the scale), and without it the next train_step's scaler.step() raises RuntimeError. Call "
             "scaler.update() after scaler.step(optimizer), on every step.")


def update_advice(lesson):
    """`reported`'s advice for an error of repeated train_step calls (and the reason of the reference
    loop's mismatch): where train_step, run once with a recording scaler, calls none of its methods,
    NOT_GIVEN; where it calls some but not update(), NO_UPDATE; else nothing."""
    def advice(exc: BaseException) -> str:
        try:
            calls = [name for name in scaler_calls(lesson, None) if name in ("scale", "unscale_", "step", "update")]
            return NOT_GIVEN if not calls else NO_UPDATE if "update" not in calls else ""
        except Exception:  # noqa: BLE001 (asked to explain another failure: no answer is an answer)
            return ""
    return advice


def replayed(pitfall: str):
    """What the training step fallen into `pitfall` (reference_step's) leaves after `steps` steps with
    torch's scaler: a Pitfall's `gives`, from the test's inputs (opt_name, max_grad_norm, steps)."""
    return lambda opt_name, max_grad_norm, steps: reference_run(opt_name, max_grad_norm, steps, pitfall)[-1]


def clipping(opt_name: str, max_grad_norm, steps: int) -> bool:
    """Whether these steps clip: a clipping pitfall shows only where they do."""
    return max_grad_norm is not None


# The pitfalls of the training step the lesson names, each as the step falls into it, and its words.
LOOP_PITFALLS = [
    Pitfall(replayed("clip before unscale_"), (
        "This is clipping before unscale_: clip_grad_norm_ measured the SCALED gradients, a norm S times too large, "
        "so once unscaled the clipped gradients are S times too small. Call scaler.unscale_(optimizer) first, then "
        "clip."), shows=clipping),
    Pitfall(replayed("clip model.parameters()"), (
        "This clips model.parameters(), not the optimizer's parameters: a parameter in no optimizer is never "
        "unscaled, its scaled gradient (S times too large) swells the total norm, and every other gradient is "
        "clipped far too much. Clip the parameters of every group in optimizer.param_groups."), shows=clipping),
    Pitfall(replayed("no zero_grad"), (
        "The gradients were never cleared: each backward added to what the step before (or earlier code) left in "
        ".grad. Clear them (to None) at the start of every step.")),
    Pitfall(replayed("zero_grad after the step"), (
        "The gradients were cleared after the step instead of before the forward pass: the first step added to "
        "gradients left from earlier code. Clear them at the start of the step.")),
    Pitfall(replayed("backward of the unscaled loss"), (
        "The backward ran on the loss itself, not on scaler.scale(loss): the scaler then divides true-size "
        "gradients by S, and every update is S times too small. Backpropagate the scaled loss.")),
]


def reference_step(model, opt, scaler, x, y, max_grad_norm, pitfall: str | None = None) -> float:
    """The step the lesson text teaches, written with torch.amp.GradScaler; or, given `pitfall` (one
    of LOOP_PITFALLS, by name), the same step fallen into it."""
    if pitfall not in ("no zero_grad", "zero_grad after the step"):
        opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.mse_loss(model(x), y)
    scaled = scaler.scale(loss)
    (loss if pitfall == "backward of the unscaled loss" else scaled).backward()
    if max_grad_norm is not None:
        params = ([*model.parameters()] if pitfall == "clip model.parameters()"
                  else [p for group in opt.param_groups for p in group["params"]])
        if pitfall == "clip before unscale_":
            nn.utils.clip_grad_norm_(params, max_grad_norm)
        scaler.unscale_(opt)
        if pitfall != "clip before unscale_":
            nn.utils.clip_grad_norm_(params, max_grad_norm)
    scaler.step(opt)
    scaler.update()
    if pitfall == "zero_grad after the step":
        opt.zero_grad(set_to_none=True)
    return loss.item()


class TrainSide(Side):
    """A model whose first bias is in no optimizer (its .grad stays scaled: clip only the optimizer's
    parameters), an optimizer holding a spare parameter the loss never uses (its .grad is None after
    zero_grad(set_to_none=True)), and leftover gradients from an earlier backward in all of them."""

    def __init__(self, scaler, opt_name: str):
        self.model, self.scaler = tiny_model(), scaler
        spare = nn.Parameter(torch.ones(2))
        self.count_steps(make_optimizer(opt_name, [self.model[0].weight, *self.model[2].parameters(), spare]))
        for p in [*self.model.parameters(), spare]:
            p.grad = torch.full_like(p, 7.0)


def train_run(side: Side, step, steps: int = 4) -> Iterator[dict]:
    """`steps` training steps of `side` on batch(), each `step(model, opt, scaler, x, y)`: the
    snapshot after each, holding what the step returned."""
    x, y = batch()
    for _ in range(steps):
        yield side.snapshot(step(side.model, side.opt, side.scaler, x, y))


@beside
def your_train_run(lesson, scaler_kind: str, opt_name: str, max_grad_norm: float | None,
                   catch: bool = False) -> list[dict]:
    """train_run of the learner's train_step on a TrainSide with growth_interval=2 and torch's
    scaler ("torch") or the learner's ("yours"), observed."""
    scaler = (torch.amp.GradScaler("cpu", growth_interval=2) if scaler_kind == "torch"
              else lesson.DynamicLossScaler(growth_interval=2))
    return observe(train_run(TrainSide(scaler, opt_name), lambda model, opt, scaler, x, y: lesson.train_step(
        model, opt, scaler, x, y, F.mse_loss, max_grad_norm=max_grad_norm)), catch)


def reference_run(opt_name: str, max_grad_norm: float | None, steps: int = 4, pitfall: str | None = None) -> list[dict]:
    """train_run of reference_step (fallen into `pitfall`, if given) with torch's scaler: what
    your_train_run must report, or what a pitfall leaves."""
    return list(train_run(TrainSide(torch.amp.GradScaler("cpu", growth_interval=2), opt_name),
                          lambda model, opt, scaler, x, y: reference_step(model, opt, scaler, x, y, max_grad_norm, pitfall),
                          steps))


def _same_state(a: dict, b: dict) -> bool:
    """The same scale, parameters, optimizer state and gradients (snapshots'); the gradients relative
    to their size (clipped ones are tiny, and two pitfalls may clip them to different tiny sizes)."""
    try:
        assert_close(a["params"], b["params"])
        assert_close(a["optimizer"], b["optimizer"])
        assert_close(a["grads"], b["grads"], rtol=1e-3, atol=1e-12)
    except AssertionError:
        return False
    return a["scale"] == b["scale"]


SCALER_CALLS = {"torch": "torch.amp.GradScaler('cpu', growth_interval=2)", "yours": "DynamicLossScaler(growth_interval=2)"}
LOOP_SETUP = "every .grad 7.0 before step 0; the first bias in no optimizer, an unused parameter in it"
SCALERS_FAULT = ("With torch.amp.GradScaler in place of your DynamicLossScaler, the same train_step gives the "
                 "reference's loss and state at this step: the difference comes from your scaler, not from train_step.")


def loop_pitfall(mine: dict, expected: dict, opt_name: str, max_grad_norm, steps: int) -> str | None:
    """The one pitfall of LOOP_PITFALLS whose step, taken `steps` times with torch's scaler, leaves
    what the learner's snapshot `mine` holds and the reference's, `expected`, does not; None if none
    does, or more than one."""
    found = pitfalls_of(mine, expected, LOOP_PITFALLS, opt_name, max_grad_norm, steps,
                        match=lambda got, wrong: _same_state(wrong, got))
    return found[0] if len(found) == 1 else None


def with_torchs_scaler(lesson, opt_name: str, max_grad_norm: float | None, step: int) -> bool:
    """Whether the learner's train_step with torch.amp.GradScaler gives the reference loop's
    loss and state at `step` (asked when it did not with the learner's scaler)."""
    try:
        got = your_train_run(lesson, "torch", opt_name, max_grad_norm, catch=True)[step]
        expected = reference_run(opt_name, max_grad_norm, step + 1)[step]
        return (same(got["returned"], expected["returned"]) and _same_state(got, expected)
                and got["state_dict"] == expected["state_dict"])
    except Exception:  # noqa: BLE001 (asked to explain another failure: no answer is an answer)
        return False


# --- the checkerboard -------------------------------------------------------------------------


def grid(width: int, height: int) -> torch.Tensor:
    """(2, H, W) pixel coordinates in [0, 1): x in channel 0, y in channel 1."""
    xs = (torch.arange(width) / width).expand(height, width)
    ys = (torch.arange(height) / height)[:, None].expand(height, width)
    return torch.stack([xs, ys])


def checker(width: int, height: int, freq: int) -> torch.Tensor:
    """(H, W) checkerboard of 0. and 1. with `freq` squares along each axis."""
    cols = (torch.arange(width) * (freq / width / 2.0)).fmod(1.0) > 0.5
    rows = (torch.arange(height) * (freq / height / 2.0)).fmod(1.0) > 0.5
    return (cols[None, :] ^ rows[:, None]).float()


def checker_net(width: int) -> nn.Module:
    """The checkerboard net: 1x1 convolutions (a per-pixel MLP on the coordinates) with BatchNorm."""
    layers, channels = [], 2
    for _ in range(3):
        layers += [nn.Conv2d(channels, width, 1), nn.BatchNorm2d(width), nn.ReLU()]
        channels = width
    return nn.Sequential(*layers, nn.Conv2d(width, 1, 1))


def save_side_by_side(learned: torch.Tensor, target: torch.Tensor, folder: str) -> None:
    import cv2

    image = torch.cat([learned.clamp(0, 1), torch.ones(target.shape[0], 2), target], dim=1)  # (H, 2W+2)
    pixels = (image * 255).round().to(torch.uint8).numpy()
    pixels = cv2.resize(pixels, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    Path(folder).mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(Path(folder) / "checkerboard.png"), pixels)


@beside
def checkerboard_training(lesson, size: int, steps: int, picture: bool) -> dict:
    """The learner's train_step with their DynamicLossScaler() and bfloat16 autocast, `steps` times,
    on the checkerboard net (width 32) and a size x size checkerboard: the losses it returned
    and, with `picture`, the trained net's output in eval mode, (size, size)."""
    scaler = lesson.DynamicLossScaler()  # first: an untouched stub is a TODO before any optimizer is built
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = checker_net(32)
    inputs, targets = grid(size, size)[None], checker(size, size, 4)[None, None]  # (1, 2, H, W), (1, 1, H, W)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    # One thread (the harness sets it for every test): with 2 busy cores torch's pool stalls, 1.5 s becomes 20 s.
    losses = [lesson.train_step(model, opt, scaler, inputs, targets, F.mse_loss) for _ in range(steps)]
    learned = None
    if picture:
        model.eval()
        with torch.no_grad():
            learned = model(inputs)[0, 0]
    return {"losses": losses, "learned": learned}


# --- speed ------------------------------------------------------------------------------------


def cpu_has_native_bfloat16() -> bool:
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return bool(flags & {"avx512_bf16", "amx_bf16"})


# --- CUDA ---------------------------------------------------------------------------------------


@beside
def cuda_run(lesson, scaler_kind: str, catch: bool = False) -> list[dict]:
    """train_run, eight steps, of the learner's train_step with float16 autocast on CUDA, Adam and
    torch.amp.GradScaler("cuda") ("torch") or their DynamicLossScaler ("yours"), init_scale=2**40
    and growth_interval=2, observed."""
    settings = dict(init_scale=2.0**40, growth_interval=2)
    side = Side(torch.amp.GradScaler("cuda", **settings) if scaler_kind == "torch" else lesson.DynamicLossScaler(**settings))
    side.model.cuda()
    side.count_steps(make_optimizer("adam", side.model.parameters()))
    return observe(train_run(side, lambda model, opt, scaler, x, y: lesson.train_step(
        model, opt, scaler, x.cuda(), y.cuda(), F.mse_loss, device_type="cuda", dtype=torch.float16), steps=8), catch)


CONTRACT = """Contract (lesson text, docstrings, hints) -> tests
- "scale(loss) matches torch's: value, dtype, device and graph" -> test_scale_multiplies_the_loss, test_scale_matches_torch
- "for 0-dim, one-element and unreduced losses of every floating dtype (meta too)"; "dtype not always the loss's"
  -> test_scale_matches_torch
- "S may be a Python float; the tests use scales and factors exact in float32 and never check the rounding of S"
  -> not a promise to test: test_scale_matches_torch uses init_scale 3.0, every other test powers of two
- "get_scale() and state_dict() match torch's, values and types, before any step and after every step"
  -> test_scale_multiplies_the_loss, test_state_dict_matches_torch_and_round_trips, assert_same_state (all)
- "step for step ... with SGD (momentum) and Adam: scale, params, optimizer state, .grad" -> test_matches_torch_step_for_step
- "inf, -inf or nan injected", "the scaler SKIPS it (parameters and optimizer state stay)", "step() returns what torch's
  returns" -> test_a_step_with_non_finite_gradients_changes_nothing, test_matches_torch_step_for_step
- "several param groups and a parameter the loss never reaches" -> test_param_groups_and_parameters_without_gradient
- "after growth_interval clean steps in a row: S *= growth_factor, counter to 0" -> test_growth_waits_for_growth_interval_clean_steps,
  test_default_settings_and_growth_after_2000_clean_steps_match_torch
- "inf/nan: S *= backoff_factor and the counter goes back to 0" -> test_scale_after_a_clean_step_and_after_an_inf_step
- "found inf/nan for ANY optimizer this iteration" / one count per update() / a record per optimizer
  -> test_two_optimizers_match_torch
- "only `optimizer`'s parameters" (a layer in no optimizer: neither checked nor unscaled) -> test_two_optimizers_match_torch
- "unscale_ changes the .grad tensors in place (times 1/S)" -> test_unscale_then_clip_matches_torch,
  assert_same_state (grads after step)
- "step unscales unless unscale_ was called" -> test_unscale_then_clip_matches_torch, test_matches_torch_step_for_step
- "where torch raises RuntimeError ... yours too, and changes nothing"; unscale_ twice (gradients untouched)
  -> test_unscale_twice_raises
- "unscale_ after step, step twice, raise RuntimeError; update() starts a new iteration" -> test_unscale_after_step_and_step_twice_raise
- "step() returns what optimizer.step() returned, None on a skipped step" -> test_step_returns_what_optimizer_step_returns
- "state_dict() has torch's keys and values, Python numbers" -> test_state_dict_matches_torch_and_round_trips, assert_same_state
- the defaults (init_scale 2**16, factors 2.0/0.5, growth_interval 2000) -> test_default_settings_and_growth_after_2000_clean_steps_match_torch
- "load_state_dict accepts yours and torch's" (and torch's takes yours; the counter survives) -> test_state_dict_matches_torch_and_round_trips
- "RuntimeError for an empty dict" -> test_load_state_dict_refuses_an_empty_dict
- "enabled=False: what torch's disabled scaler does, call for call; the very object where torch returns it" (scale
  returns the loss itself, get_scale 1.0, unscale_/update no-ops, step just steps (twice too), state_dict {},
  load_state_dict no-op) -> test_disabled_is_a_pass_through
- train_step "returns the loss as a Python float"; keyword-only device_type/dtype/max_grad_norm -> test_train_step_returns_a_float
- "the forward's matmuls run in `dtype`", the model is not converted -> test_train_step_runs_the_forward_under_autocast
- "forward and loss inside autocast and nothing else", device_type passed on -> test_train_step_autocasts_the_forward_and_the_loss_only
- "uses the scaler it is given, calling unscale_ only when it clips (max_grad_norm=0.0 too)"; the order the
  parts' reasons in the lesson text imply (scale, unscale_, step, update) -> test_train_step_uses_the_scaler_it_is_given_in_order
- "after each of four steps the same loss, scale, params, optimizer state and .grad as the step described above with
  torch's GradScaler (SGD, Adam, with and without max_grad_norm, ...)": backward ADDS into .grad (clear first), clip the
  OPTIMIZER's parameters after unscale_ -> test_train_step_matches_the_reference_loop
- "the checkerboard trains with bfloat16 autocast" -> test_checkerboard_trains_in_bfloat16
- "a bfloat16 step is at least 1.2x as fast" -> test_bfloat16_step_is_faster_than_float32
- float16 on CUDA with real overflows -> test_float16_on_cuda_matches_torch

Pitfalls the lesson names, each named in a failure only where its symptom shows (a simulation of
the pitfall gives what the learner's code gave, or the symptom is the pitfall's own):
- clipping before unscale_; clipping model.parameters(); no zero_grad, or zero_grad after the step; backward of
  the unscaled loss -> test_train_step_matches_the_reference_loop (LOOP_PITFALLS, replayed with torch's scaler)
- torch.amp.GradScaler() without a device (a disabled CUDA scaler) -> test_train_step_uses_the_scaler_it_is_given_in_order
- torch.cuda.amp.autocast, autocast hard-coded to 'cuda' (warnings seen) -> test_train_step_runs_the_forward_under_autocast,
  test_train_step_autocasts_the_forward_and_the_loss_only
- backward or step inside autocast, the loss outside it -> test_train_step_autocasts_the_forward_and_the_loss_only
- converting the model to 16 bits -> test_train_step_runs_the_forward_under_autocast
- an inf check that misses nan (isinf); optimizer.step() called on a skipped step (zeroed gradients)
  -> test_a_step_with_non_finite_gradients_changes_nothing, test_matches_torch_step_for_step
- the scale as a Python float (a 16-bit 0-dim loss stays 16-bit) -> test_scale_matches_torch
- one inf flag or one "unscaled" record for all optimizers; a clean step counted per optimizer -> test_two_optimizers_match_torch
- gradients left scaled, or unscaled twice, after step (one factor between them and torch's) -> assert_same_state (all)
- a new .grad tensor instead of in place -> test_unscale_then_clip_matches_torch
- .grad None not skipped -> test_param_groups_and_parameters_without_gradient
- disabled: loss * 1 instead of the loss itself -> test_disabled_is_a_pass_through
"""
