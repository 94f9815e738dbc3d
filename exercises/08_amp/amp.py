"""Lesson 08: mixed precision. Run the forward pass in 16 bits, keep the training in 32.

Why it matters
--------------
A matrix multiply or a convolution in a 16-bit float moves half the bytes of float32 and, on
hardware built for it (GPU tensor cores, CPUs with AVX512-BF16 or AMX), runs several times
faster. The catch is precision: a long sum in 16 bits loses its small terms, and small
gradients round to zero. Mixed precision does the expensive products in 16 bits and keeps
everything that accumulates (additions, reductions, losses, the weights, the optimizer state)
in float32.

Autocast: what gets cast
------------------------
Inside `torch.autocast(device_type, dtype=...)` PyTorch picks the dtype per op: matmul,
linear and conv cast their inputs down to `dtype`; ops that need range or accuracy (losses,
softmax, sums like mse_loss) run in float32; plain elementwise ops such as + follow the usual
type promotion, so float32 + float32 stays float32:

    >>> x, y = torch.rand(8, 8), torch.rand(8, 8)
    >>> with torch.autocast("cpu", dtype=torch.bfloat16):
    ...     print((x @ y).dtype, (x + y).dtype)
    torch.bfloat16 torch.float32

The parameters are NOT converted: a Linear's weight stays float32 and is cast on the fly
for each matmul, so the optimizer updates float32 weights. Put the forward pass and the loss
inside autocast and nothing else (backward and the optimizer step run outside it).

float16 or bfloat16?
--------------------
Both have 16 bits. float16 keeps 10 mantissa bits but only 5 exponent bits: its largest value
is 65504 and anything below ~6e-8 rounds to 0. bfloat16 keeps float32's 8 exponent bits (the
same range, up to ~3.4e38) with only 7 mantissa bits (about 2-3 decimal digits). Gradients
are often tiny: `torch.tensor(1e-8).half()` is 0, `torch.tensor(1e-8).bfloat16()` is 1.0012e-08.
So float16 needs loss scaling to keep small gradients alive, and bfloat16 rarely does. On a
CPU, bfloat16 is the choice: float16 autocast on a CPU without native float16 arithmetic
(no AVX512-FP16) is emulated and was measured 17-21x SLOWER than float32.

Loss scaling, and why steps get skipped
---------------------------------------
The chain rule multiplies the loss's gradient through every layer, so scaling the loss by S
scales every gradient by S: multiply the loss by a large S (2**16) before backward, and
gradients that would underflow in float16 become representable. Before the optimizer uses
them, bring them back to their true size ("unscale": times 1/S). If S was too large, some
gradient overflowed to inf (or became nan): that step's update would be garbage, so the
scaler SKIPS it (the parameters and the optimizer's state, e.g. Adam's moments and step
count, stay as they were) and halves S. After `growth_interval` clean steps in a row it
doubles S again, so S hovers just below the overflow point. A few skipped steps at the start
are normal.

A training step, and what goes wrong when its parts are out of place
--------------------------------------------------------------------
A mixed-precision step does what any step does (clear the gradients, forward, loss,
backward, optimizer step) with the scaler's calls woven in. Each part has its place because
of what it finds and what it leaves behind:

- backward() ADDS into .grad, it never overwrites. Whatever .grad holds when the backward
  runs, from the last step or from code that ran before the first one, ends up in the
  update. Clearing the gradients after the optimizer's step looks the same from the second
  step on, but the first step still meets what earlier code left.
- Autocast is for what computes the loss, and only that. It is also what sends a loss to
  float32: outside the `with` block, a loss such as cross_entropy on 16-bit outputs runs in
  16 bits. The backward needs no autocast (each op's backward runs in the dtype its forward
  op chose; PyTorch advises against backward under autocast), and the optimizer updates
  float32 weights in float32.
- The scaler unscales whatever the backward produced. A backward that starts from the loss
  itself instead of the scaled loss gives true-size gradients, the scaler shrinks them by S,
  and every update is S times too small (in float16 the small gradients also underflow:
  the very thing scaling was for).
- Between the backward and the scaler's step the gradients are S times too large. Anything
  that reads or changes them there (clipping to a maximum norm, logging their norm) works
  on the wrong numbers unless they were unscaled first: clipping before unscale_ compares
  the threshold with a norm S times too large, so once unscaled the clipped gradients are S
  times too small. The scaler unscales an optimizer's gradients once per iteration, and its
  step unscales only what is still scaled. A parameter in no optimizer is never unscaled:
  leave it out of the clipping, or its scaled gradient swells the total norm.
- update() ends the iteration: it judges what this iteration's unscaling found (torch's
  refuses to run with nothing to judge), and only after it may the same optimizer be
  unscaled and stepped again.

Traps we measured
-----------------
- `torch.amp.GradScaler()` without a device means "cuda". On a machine without CUDA it
  disables itself with nothing but a warning: scale() returns the loss unchanged and a step
  with inf gradients is NOT skipped. Always pass the device: `torch.amp.GradScaler("cpu")`.
- `torch.cuda.amp.autocast` and `torch.cuda.amp.GradScaler` (in older tutorials) are
  deprecated: use `torch.autocast(device_type, ...)` and `torch.amp.GradScaler(device, ...)`.

Your task
---------
Write `DynamicLossScaler`, a loss scaler that behaves like `torch.amp.GradScaler("cpu", ...)`
for the same arguments (the tests run both side by side; torch's source,
torch/amp/grad_scaler.py, is the reference), and `train_step`, one mixed-precision training
step that works with your scaler and with torch's. Out of scope: sparse gradients, closures,
`update(new_scale)`, update() with no step since the last one (torch raises), a scale grown
past float32's range, bookkeeping per device (torch keeps one inf flag per device for models
split across GPUs).

S, the scale, is a number. torch holds it in a float32 0-dim tensor; yours may hold it as a
Python float (and the growth counter as an int). What differs: torch's S is rounded to
float32 (with init_scale=0.1 its get_scale() says 0.10000000149011612 once it has scaled a
loss), and torch unscales by multiplying by 1/S computed in float64 and rounded to float32,
not by dividing. The tests use only scales and factors that are exact in float32 (powers of
two, and 3.0 for scale()), where dividing by S and multiplying by that reciprocal give the
same bits; they never check the rounding of S itself.

The last test trains a checkerboard: a net of 1x1 convolutions maps (x, y) pixel
coordinates to a checkerboard. If the environment variable KATA_IMAGES names a folder, it
writes `checkerboard.png` there: what the net learned next to the target.

What the tests expect
---------------------
- scale(loss) matches torch.amp.GradScaler("cpu").scale(loss): value, dtype, device and
  graph, for 0-dim, one-element and unreduced losses of every floating dtype (on the meta
  device too);
- get_scale() and state_dict() match torch's, values AND types (Python numbers, no tensors),
  before any step and after every step; load_state_dict takes yours and torch's, and
  torch's scaler takes yours;
- step for step, the scale, the parameters, the optimizer's state and the .grad tensors
  left after each step match torch's with SGD (momentum) and Adam: with inf, -inf or nan
  injected into a gradient on some steps, several param groups and a parameter the loss
  never reaches, two optimizers in one iteration (unscaled and stepped in either order, an
  inf in one, both or neither), and a checkpoint restored 1999 clean steps into the default
  growth_interval of 2000; step() returns what torch's returns;
- unscale_ changes the .grad tensors in place, as torch's does (code holding one sees it
  change);
- where torch's scaler raises RuntimeError (a call out of turn within one iteration, an empty
  state dict), yours raises RuntimeError too, with any message, and changes nothing;
- enabled=False: yours does what torch's disabled scaler does, call for call (where torch
  returns the very object it was given, so does yours);
- train_step(..., dtype=d): the forward's matmuls run in d and the model's weights stay
  float32; the model and the loss run under autocast for `device_type`, the backward and the
  optimizer's step outside it; it uses the scaler it is given (yours or torch's), calling
  unscale_ only when it clips (max_grad_norm given, 0.0 included); it returns the loss as a
  Python float; and after each of four steps it leaves the same loss, scale, parameters,
  optimizer state and .grad as the step described above written with torch's GradScaler
  (SGD, Adam, with and without max_grad_norm, an optimizer that lacks one of the model's
  parameters and holds one the loss never uses, and gradients left in .grad by earlier code);
- the checkerboard trains with bfloat16 autocast, and (on a CPU with AVX512-BF16 or AMX) a
  bfloat16 step is at least 1.2x as fast as a float32 one.

Check your work with:  pytest exercises/08_amp
"""

from __future__ import annotations

from typing import Any, Callable

import torch


class DynamicLossScaler:
    """Loss scaling for mixed-precision training, like torch.amp.GradScaler("cpu", ...).

    init_scale: the first scale S. growth_factor (> 1) / backoff_factor (< 1): what S is
    multiplied by after `growth_interval` clean steps in a row / after a step whose gradients
    held inf or nan. enabled=False turns every method into a pass-through.
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        """Store the settings; the growth counter starts at 0 and no optimizer has been seen."""
        # TODO: set up the scaler's state: the settings, the scale at init_scale, no clean step
        #       counted yet, and nothing seen yet of any optimizer in this iteration.
        raise NotImplementedError

    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        """Return loss * S, as torch.amp.GradScaler("cpu").scale(loss) returns it.

        The same value, dtype (which is not always the loss's), device and autograd graph as
        torch's result; the loss itself, the same object, when disabled.
        """
        # TODO: return the scaled loss, equal to torch's in value, dtype, device and graph (the
        #       very same loss object when disabled).
        raise NotImplementedError

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """Unscale the gradients of `optimizer`'s parameters in place (times 1/S); remember inf/nan.

        Raises RuntimeError when called twice for the same optimizer, or after step(), before
        update(). No-op when disabled.
        """
        # TODO: unscale the gradients of `optimizer`'s parameters in place (code holding a .grad
        #       sees it change), as torch's unscale_ does with whatever parameters the optimizer
        #       holds, and remember, for this optimizer and this iteration, that they are
        #       unscaled and whether any held inf or nan. RuntimeError for a second call or a call
        #       after step() before update(). Nothing at all when disabled.
        raise NotImplementedError

    def step(self, optimizer: torch.optim.Optimizer) -> Any:
        """Unscale (unless unscale_ was called), then optimizer.step() unless inf/nan was found.

        Returns what optimizer.step() returned, or None for a skipped step. Raises
        RuntimeError when called twice for the same optimizer before update().
        When disabled: just optimizer.step().
        """
        # TODO: step the optimizer on unscaled gradients, unless they held inf or nan: then
        #       skip it, without calling optimizer.step(), so the parameters and the optimizer's
        #       state stay as they are. Return optimizer.step()'s result (None when skipped);
        #       RuntimeError for a second step before update(). Disabled: just the step.
        raise NotImplementedError

    def update(self) -> None:
        """Back off S after any skipped step, grow it after `growth_interval` clean ones.

        Found inf/nan (for any optimizer this iteration): S *= backoff_factor and the counter
        goes back to 0. Otherwise the counter counts one more clean step; when it reaches
        growth_interval, S *= growth_factor and the counter goes back to 0. Then a new
        iteration begins (unscale_ and step may be called again). No-op when disabled.
        """
        # TODO: adjust the scale and the counter for this iteration as the docstring says
        #       (inf/nan in any optimizer counts; one update is one step, however many
        #       optimizers stepped), then start a new iteration. Nothing when disabled.
        raise NotImplementedError

    def get_scale(self) -> float:
        """The current scale S as a Python float (1.0 when disabled)."""
        # TODO: the current scale, a Python float (1.0 when disabled).
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}
        with Python numbers, as torch's; {} when disabled."""
        # TODO: torch's five keys with Python numbers ({} when disabled).
        raise NotImplementedError

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned (yours or torch.amp.GradScaler's).

        No-op when disabled; RuntimeError for an empty dict (saved from a disabled scaler).
        """
        # TODO: restore the five values, from your dict or torch's (nothing when disabled;
        #       RuntimeError for {}).
        raise NotImplementedError


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, scaler: Any, inputs: torch.Tensor,
               targets: torch.Tensor, loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *,
               device_type: str = "cpu", dtype: torch.dtype = torch.bfloat16,
               max_grad_norm: float | None = None) -> float:
    """One mixed-precision training step; returns the loss as a Python float.

    scaler: a DynamicLossScaler or a torch.amp.GradScaler (the same methods).
    dtype: the autocast dtype (torch.bfloat16 or torch.float16) for the forward and the loss.
    max_grad_norm: when given (0.0 too), the TRUE (unscaled) gradients of the optimizer's
    parameters are clipped to this total norm, as torch.nn.utils.clip_grad_norm_ does, before
    the step.
    """
    # TODO: one training step with the `scaler` given (no scaler of your own), its parts placed
    #       so that none of what the lesson text says goes wrong happens: the forward and the
    #       loss, and only those, under autocast for `device_type` and `dtype` (the model stays
    #       float32); no gradient left over from before the step; unscale_ called only when
    #       clipping. Return the loss as a Python float.
    raise NotImplementedError
