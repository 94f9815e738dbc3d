"""Lesson 09: the training loop. Devices, seeds, train/eval modes, checkpoints, accumulation.

Most bugs in a training script raise no error: the loss still goes down, just not the way
it should. This lesson builds the plumbing around the model, one habit per function.

Device-agnostic code
--------------------
Decide the device once, at the top, and pass it along: `model.to(device)`, then every batch
`x.to(device)`, and every tensor you create with `device=` (or from an existing tensor with
`torch.zeros_like`, `x.new_zeros`). The same script then runs on a laptop and on a GPU
machine. Move the model *before* building the optimizer, so the optimizer holds the moved
parameters. And when the user asks for a GPU that is not there, say so: a script that
silently falls back to the CPU runs for a day before anyone notices.

Seeds, and what they do not promise
-----------------------------------
Every random draw comes from a generator: torch has one on the CPU and one per GPU, Python's
`random` has its own, NumPy's `np.random.*` functions share a global one. To repeat a run,
seed all of them: a DataLoader with `shuffle=True` draws from torch, an augmentation may draw
from `random` or NumPy. `np.random.default_rng(seed)` builds a *new* generator: it does not
seed the global one.

    >>> seed_everything(0); first = [torch.rand(2), random.random(), np.random.rand()]
    >>> seed_everything(0); again = [torch.rand(2), random.random(), np.random.rand()]
    >>> torch.equal(first[0], again[0]) and first[1:] == again[1:]
    True

A seed fixes the numbers drawn, not the arithmetic: some GPU kernels (atomic adds in
scatter/index_add, some cuDNN convolutions) sum in a different order on every run.
`torch.use_deterministic_algorithms(True)` picks deterministic versions or raises where
there is none (set `CUBLAS_WORKSPACE_CONFIG=:4096:8` on CUDA too);
`torch.backends.cudnn.benchmark = False` stops cuDNN from picking kernels by timing.
DataLoader workers (`num_workers > 0`) seed torch, `random` and NumPy's global generator
themselves, from a base seed drawn from torch plus the worker id, so seeding the main process
is enough for them. The trap is a generator *object* kept on the dataset (`self.rng =
np.random.default_rng(0)`): every worker gets a copy in the same state and draws the same
numbers.

train() and eval()
------------------
A module's `training` flag changes what some layers compute: Dropout zeroes activations in
training and is the identity in eval; BatchNorm normalises with the batch's statistics (and
updates its running averages) in training and with the running averages in eval. `model.train()`
and `model.eval()` set the flag on every submodule. A phase that does not set the mode it
needs inherits whatever the last one left: a model that `evaluate` left in eval mode would
train without dropout.
Some models keep one part in eval on purpose (a frozen BatchNorm while fine-tuning): a
helper that switches modes and then puts back "the model's mode" overwrites that choice, and
nothing complains.

inference_mode and no_grad
--------------------------
Autograd records every operation on a tensor that requires a gradient; a model's parameters
do, so evaluating a model builds a graph that nobody will ever use. `torch.no_grad()` stops
the recording. `torch.inference_mode()` does as well and also skips autograd's version
counters, so it is a little faster; the price is that its outputs ("inference tensors") can
never enter a graph later. Use it for evaluation and serving; keep `no_grad` for code whose
results must feed a backward pass afterwards.

zero_grad
---------
`loss.backward()` *adds* to `.grad`: whatever an earlier backward left there (the previous
step's, or the caller's) enters this step too, and a loop that never clears applies the sum
of all gradients so far. A cleared gradient can be a tensor of zeros or None, and they are
not the same: an optimizer skips a parameter whose grad is None, but steps one whose grad is
zeros (weight decay and Adam's moments still move it). A list of loss *tensors*, kept for the
log, keeps every step's graph alive. And the mean of the batch means is not the mean over the
samples: it gives a smaller last batch as much weight as a full one.

Checkpoints
-----------
To resume a run so that it continues exactly as if it had never stopped, save:
the model's `state_dict()` (parameters and buffers such as BatchNorm's running averages);
the optimizer's `state_dict()` (Adam's moment estimates and step counts: without them the
first steps after a restart are much too large); the number of epochs finished; and the
random states (torch CPU and CUDA, Python `random`, NumPy), so the next shuffle and the next
dropout masks are the ones the uninterrupted run would have drawn. Python's and NumPy's
states end with a cached Gaussian (both draw normal numbers in pairs): a state without it
makes the next Gaussian draw differ. Writing over the old file directly is the trap: a crash
mid-save (a full disk, a killed job) leaves a truncated file, and the previous checkpoint is
gone with it. A rename within one file system is atomic (the name points at the old file or
at the new one, never at half of one); a rename across file systems (from /tmp, say) is a
copy, or fails. And a save can be stopped by more than errors: Ctrl-C raises
KeyboardInterrupt, which is no `Exception`, and must not leave debris behind either.

`torch.load` unpickles, and unpickling can call any function: a checkpoint from the internet
can run code on your machine. `torch.load(path, weights_only=True)` (the default since
PyTorch 2.6; say it anyway) accepts only tensors, dicts, lists, tuples, strings and numbers,
so everything a checkpoint holds must be built from those types, the random states
included.
`map_location="cpu"` loads tensors saved on a GPU onto the CPU (or `"cuda:1"`, ...), so a
checkpoint written on one machine loads on another.

Gradient accumulation
---------------------
When a batch of N samples does not fit in memory, split it into micro-batches, run forward
and backward on each (freeing each graph before the next) and step once. Since backward
*adds* to `.grad`, the chunks' gradients add up: if the chunks' losses add up to the full
batch's loss, their gradients add up to its gradient, with only one chunk's graph alive at a
time. With a mean-reduced loss they do not add up by themselves: each chunk's loss is a mean
over its own samples. Left as they are, they make the gradient about micro_batches times too
large; divided by the number of chunks, they are right only when every chunk has the same
size, and `tensor_split` makes chunks that differ by one whenever N is not a multiple. (This
holds for models whose samples do not interact: BatchNorm in training mode sees different
batch statistics in a smaller chunk.)

What the tests expect
---------------------
- `pick_device()`: `torch.device("cuda")` (no index), else `"mps"`, else `"cpu"`.
  `pick_device(x)`: `torch.device(x)` unchanged when this machine has it, else RuntimeError
  whose message names the device asked for and every available one. Always a `torch.device`.
- `seed_everything(seed)`: draws from torch, `random`, NumPy, a shuffling DataLoader and a
  Dropout model repeat bit for bit after the same seed and differ after another one.
- `train_epoch` returns the mean loss over samples as a Python float, and its parameters
  match a plain loop's step for step, whatever mode the model was in and whatever its
  `.grad` held; every batch is moved to `device`; gradients are cleared to None, not zeros;
  no step's graph outlives it.
- `evaluate` returns (mean loss over samples, accuracy) as floats, with every batch moved to
  `device`, in eval mode, under `torch.inference_mode()` (`no_grad` is not enough). However
  it ends, even by an exception, the model is left exactly as it was found (each
  submodule's train/eval flag, BatchNorm's running stats).
- checkpoints: 2 epochs + save + load into a fresh model and optimizer + 2 epochs ends
  bitwise equal to 4 straight epochs (Adam, Dropout, shuffling, NumPy and `random`
  augmentation), and right after loading every random state is the one saved, whole. The
  file loads with `weights_only=True`. Saving is atomic, and a save that fails (an error or
  Ctrl-C) leaves the old checkpoint and nothing else in its folder. Loading refuses a file
  that would run code and a model whose keys differ, passes `map_location` to `torch.load`
  unchanged, and returns the epoch saved.
- `accumulate_gradients`: the same `.grad` as one full batch, whatever the chunk sizes, with
  earlier gradients discarded (set to None), one forward and backward per
  `torch.tensor_split` chunk, the full-batch loss returned as a float; ValueError unless
  1 <= micro_batches <= N.

Check your work with:  pytest exercises/09_training
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import nn

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


### BEGIN SOLUTION
def _available_devices() -> list[torch.device]:
    devices = [torch.device("cpu")]
    if torch.cuda.is_available():
        devices += [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    if torch.backends.mps.is_available():
        devices.append(torch.device("mps", 0))
    return devices
### END SOLUTION


def pick_device(prefer: str | torch.device | None = None) -> torch.device:
    """The device to run on, as a `torch.device`.

    What this machine has is what torch.cuda (is_available, device_count) and
    torch.backends.mps (is_available) report: the tests simulate machines through them.
    prefer=None: "cuda" if CUDA is available, else "mps" if MPS is, else "cpu".
    prefer given ("cpu", "cuda", "cuda:1", "mps" or a torch.device): that device, unchanged,
    if it exists here (for "cuda:i": i < the number of GPUs; a device of another type,
    "meta" included, never does), else a RuntimeError whose message names the device asked
    for and every available one ("cpu", "cuda:0", ...). Never falls back silently.
    """
    # TODO: return a torch.device. No preference: the best device this machine has (CUDA,
    #       then MPS, then the CPU). A preference: that very device if this machine has it;
    #       if not, RuntimeError naming it and every device there is (no silent fallback).
    ### BEGIN SOLUTION
    if prefer is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(prefer)
    available = _available_devices()
    # "cuda" (no index) means "the current GPU": any GPU will do; "cpu:0" is the CPU.
    if any(d.type == device.type and (device.index is None or d.index in (None, device.index)) for d in available):
        return device
    names = ", ".join(str(d) for d in available)
    raise RuntimeError(f"device {str(device)!r} was asked for but is not available; available: {names}")
    ### END SOLUTION


def seed_everything(seed: int) -> None:
    """Seed every random generator a training script draws from: torch (CPU and every CUDA
    device), Python's `random` and NumPy's global generator (np.random.*).

    After seed_everything(s), the same code draws the same numbers (shuffling, dropout,
    augmentation); another seed gives other numbers. Returns None.
    """
    # TODO: make every generator listed above repeat its draws after the same seed (and
    #       draw other numbers after another seed).
    ### BEGIN SOLUTION
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device (lazily, if CUDA is not started yet)
    ### END SOLUTION


def train_epoch(model: nn.Module, loader: Iterable, optimizer: torch.optim.Optimizer, loss_fn: Loss,
                device: torch.device | str) -> float:
    """One pass over `loader`, one optimizer step per batch; the mean loss over samples.

    loader yields (inputs, targets) pairs (at least one), anywhere; each is moved to
    `device`, where the model already is. Trains in train mode; each step sees only its own
    batch's gradient, and cleared gradients are None. loss_fn(outputs, targets) returns the
    batch's mean. Returns the mean loss over all samples (not over batches) as a Python
    float; no graph or tensor outlives its step.
    """
    # TODO: one optimizer step per batch, whatever mode the model was left in, on batches
    #       moved to `device`, each step's gradient free of every earlier one (stale ones
    #       included); return the mean loss over samples, not over batches, as a Python float,
    #       keeping no step's graph alive.
    ### BEGIN SOLUTION
    model.train()  # evaluate() may have left it in eval mode: dropout must be on again
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)  # before backward: backward adds to .grad
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        batch_size = targets.shape[0]
        total_loss += loss.item() * batch_size  # .item(): a float, the graph is freed
        total_samples += batch_size
    return total_loss / total_samples
    ### END SOLUTION


def evaluate(model: nn.Module, loader: Iterable, loss_fn: Loss, device: torch.device | str) -> tuple[float, float]:
    """(mean loss over samples, accuracy) of `model` on `loader`, as Python floats.

    loader yields (inputs, targets) pairs with class indices as targets (at least one pair);
    the model returns (batch, classes) scores; accuracy is the fraction of samples whose
    argmax over dim 1 equals the target. Runs in eval mode (no dropout, BatchNorm uses and
    keeps its running stats) under torch.inference_mode() (no graph). However it ends, every
    submodule has the train/eval flag it had before.
    """
    # TODO: return (mean loss over samples, accuracy) as Python floats, computed in eval mode
    #       with no graph recorded (inference mode), batches moved to `device`; leave every
    #       submodule's train/eval flag as it was, however the call ends.
    ### BEGIN SOLUTION
    # Each submodule's own flag: a model in train mode may hold a frozen part in eval mode.
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)
    finally:
        for module, training in modes:
            module.training = training  # not .train(): that would recurse into the children
    ### END SOLUTION


### BEGIN SOLUTION
def _loss_and_accuracy(model: nn.Module, loader: Iterable, loss_fn: Loss, device: torch.device | str) -> tuple[float, float]:
    total_loss, correct, total_samples = 0.0, 0, 0
    with torch.inference_mode():  # no graph, no version counters
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)  # (B, C)
            batch_size = targets.shape[0]
            total_loss += loss_fn(outputs, targets).item() * batch_size
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            total_samples += batch_size
    return total_loss / total_samples, correct / total_samples


def _rng_states() -> dict:
    name, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "python": random.getstate(),  # a tuple of ints (and a float or None): loads safely
        # keys is an np.ndarray, which weights_only loading refuses: store plain ints.
        "numpy": (name, keys.tolist(), pos, has_gauss, cached_gaussian),
    }


def _set_rng_states(states: dict) -> None:
    torch.set_rng_state(states["torch"].cpu())  # map_location may have put it elsewhere
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in states["cuda"]])
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    name, keys, pos, has_gauss, cached_gaussian = states["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached_gaussian))
### END SOLUTION


def save_checkpoint(path: str | os.PathLike, model: nn.Module, optimizer: torch.optim.Optimizer, epoch: int) -> None:
    """Save everything needed to resume training exactly to `path`.

    Stores the model's and the optimizer's state_dicts, `epoch` (the number of epochs
    finished) and the random states of torch (CPU, and CUDA when available), Python's
    `random` and NumPy, all in types that torch.load(..., weights_only=True) accepts.
    Atomic: `path` holds the old checkpoint or the whole new one, never part of one, and the
    old file is never rewritten in place. If saving fails (any exception, KeyboardInterrupt
    included), `path` keeps its old content and nothing else is left in its folder.
    """
    # TODO: write everything a resumed run needs to continue bit for bit (listed above), in
    #       types that weights_only loading accepts, atomically: a save that fails midway (an
    #       error or Ctrl-C) leaves the old file as it was and nothing else in its folder.
    ### BEGIN SOLUTION
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "rng": _rng_states(),
    }
    path = os.fspath(path)
    # Same folder: os.replace is atomic only within one file system.
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
    ### END SOLUTION


def load_checkpoint(path: str | os.PathLike, model: nn.Module, optimizer: torch.optim.Optimizer,
                    map_location: str | torch.device | dict | Callable | None = "cpu") -> int:
    """Restore a checkpoint written by save_checkpoint; return its epoch.

    Reads the file with one torch.load call, `map_location` passed through unchanged and
    weights_only=True said explicitly, so a file that would run code when unpickled is
    refused. Restores the model's and the optimizer's
    state and the random states saved with them (CUDA's only where CUDA is available).
    load_state_dict is strict: a model with missing or unexpected keys raises RuntimeError.
    Returns the number of epochs finished, as saved.
    """
    # TODO: read the file without unpickling arbitrary objects, map_location passed through
    #       unchanged; restore the model (refusing one whose keys differ), the optimizer and
    #       every random state saved; return the epoch.
    ### BEGIN SOLUTION
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])
    return checkpoint["epoch"]
    ### END SOLUTION


def accumulate_gradients(model: nn.Module, loss_fn: Loss, inputs: torch.Tensor, targets: torch.Tensor,
                         micro_batches: int) -> float:
    """Fill each parameter's .grad with the gradient of loss_fn(model(inputs), targets),
    computed in `micro_batches` chunks; return that full-batch loss as a Python float.

    inputs: (N, ...), targets: (N, ...); loss_fn returns the mean over its batch. The chunks
    are torch.tensor_split(inputs, micro_batches), whose sizes may differ by one; each gets
    one forward and one backward, the graph freed before the next chunk. Gradients already in
    .grad are discarded first (set to None). No optimizer step, inputs unchanged. Raises
    ValueError unless 1 <= micro_batches <= N.
    """
    # TODO: leave exactly the full-batch gradient in .grad (earlier gradients discarded, to
    #       None), with one forward and one backward per chunk and never two chunks' graphs at
    #       once, even when the chunks differ in size; return the full-batch loss as a float;
    #       ValueError unless 1 <= micro_batches <= N.
    ### BEGIN SOLUTION
    n = inputs.shape[0]
    if not 1 <= micro_batches <= n:
        raise ValueError(f"micro_batches must be between 1 and the batch size {n}, got {micro_batches}")
    model.zero_grad(set_to_none=True)
    total = 0.0
    for x, y in zip(torch.tensor_split(inputs, micro_batches), torch.tensor_split(targets, micro_batches)):
        share = x.shape[0] / n  # the chunk's weight in the full-batch mean
        loss = loss_fn(model(x), y) * share
        loss.backward()  # adds to .grad and frees this chunk's graph
        total += loss.item()
    return total
    ### END SOLUTION
