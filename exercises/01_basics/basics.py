"""Lesson 01: PyTorch basics. Tensors, gradients, a curve fitted with an optimizer, and memory
shared with NumPy.

Tensors
-------
A tensor is an n-dimensional array, much like a NumPy array, with two extras: it lives on a
device (CPU or GPU), and it can record the operations applied to it so that PyTorch can
differentiate them. Whether a conversion copies or shares memory matters more than it looks:
torch.tensor(data) always copies `data` (a list, an array, even another tensor); other
conversions share, and a write through one name is then seen through the other.

Pitfall: switching on gradients by wrapping a tensor you already have in torch.tensor,

    w = torch.tensor(torch.randn(3), requires_grad=True)

copies it and warns about it (a UserWarning on every call), and the tests count warnings
as failures.

Gradients: backward() accumulates
---------------------------------
Autograd can differentiate a scalar in two ways. loss.backward() ADDS the gradient into the
.grad of every leaf tensor in the graph that requires grad, the ones the computation merely
uses included. Adds, not stores: d(-x*x)/dx is -2x, so at x = 1

    >>> x = torch.tensor(1.0, requires_grad=True)
    >>> (-x * x).backward(); x.grad
    tensor(-2.)
    >>> (-x * x).backward(); x.grad        # the same gradient, added to the last one
    tensor(-4.)

In a training loop, that means each step's gradient lands on top of the previous ones unless
something empties .grad in between: the optimizer then follows the running sum of all the
gradients so far, not the current one. The other way hands the gradient back to you and
stores it nowhere.

A borrowed tensor
-----------------
A function that differentiates on behalf of its caller borrows the caller's tensor and must
give it back as it found it. Four ways to go wrong behind the caller's back:

- its flag: switching gradients on for the caller's tensor changes it for the caller (and a
  later backward() fills its .grad); tidying up afterwards does not undo a .grad the caller
  already had.
- its memory: a function that writes into its argument (t.mul_(2)) writes into whatever
  memory it is given, and views and detached tensors share the memory of the tensor they
  come from. An in-place op on a leaf that requires grad is refused outright ("a leaf
  Variable that requires grad is being used in an in-place operation").
- its graph: when x was computed from tensors that require grad, differentiating through x
  sends gradients back into the caller's graph, into the .grad of the caller's leaves.
- its context: inside `with torch.no_grad():` nothing is recorded, so fn's result has no
  graph, and there is nothing to differentiate. The caller may well be inside one.

The derivative of a function that ignores its argument is zero, not an error (as in
torch.func.grad); autograd complains instead when asked about a tensor the result does not
depend on.

Curve fitting with an optimizer
-------------------------------
A polynomial w[0] x^d + ... + w[d] is linear in its coefficients. Fitting it to samples
(x, y) means minimising the mean squared error between its values at x and y, one optimizer
step after another, each from the gradient of the current loss.

Pitfall: shapes. Predictions of shape (N, 1) minus targets of shape (N,) broadcast to an
(N, N) matrix: every prediction is compared with every target, and the best "fit" is a
constant, the mean of y. F.mse_loss warns about the mismatch; a hand-written
((pred - y) ** 2).mean() does not. Squeezing afterwards is a fragile cure: squeeze() drops
every dim of size 1, so one sample, or degree 0, loses a dim too.

Why Adam: with x in [-10, 10] the x^2 term reaches 100, so the gradient for its coefficient
is huge; plain SGD at lr 0.1 overshoots further at every step and diverges to inf and nan.
Adam divides each coordinate's step by a running estimate of that coordinate's gradient size,
so every step is about lr long, whatever the scale. The price: the constant coefficient, whose
term is small, arrives last. Mean or sum of the squared errors? For Adam nearly the same, but
not exactly: its eps (1e-8) is added to the gradient size, so with tiny gradients the two take
different steps.

NumPy without copies
--------------------
A CPU tensor and a NumPy array can be two views of one buffer (the buffer protocol). PyTorch
has a zero-copy conversion in each direction: it keeps the dtype and carries the strides
over, so non-contiguous views stay views. What copies: torch.tensor(a), np.array(t),
.clone(), .contiguous() on a non-contiguous view, and dtype conversions (.float(),
.astype(np.float32)). NumPy cannot record operations for autograd, so the tensor-to-array
conversion refuses a tensor that requires grad. A CUDA tensor's memory is on the GPU where
NumPy cannot see it: there the one copy is unavoidable.

What the tests expect
---------------------
- derivative: any shape and floating dtype (the result has x's shape, dtype and device and
  does not require grad); the caller's x keeps its values, its requires_grad flag and its
  .grad (a .grad it already had included), even when fn writes into its argument or x was
  computed inside the caller's graph; repeated calls give the same answer; works when called
  under torch.no_grad(); no .grad filled anywhere (not even of tensors fn closes over); an fn
  that does not use its argument -> zeros; a non-scalar fn -> ValueError naming the shape;
  an integer, bool or complex x -> TypeError.
- fit_polynomial: shape (degree + 1,), highest power first, detached, x's dtype and device;
  recovers 5x^2 + 3 from noisy samples; follows torch.optim.Adam on the full-batch mean
  squared error step by step (steps and lr honoured); x and y not modified; no warnings;
  the same result after the same torch.manual_seed.
- to_numpy / from_numpy: the same memory address and writes seen both ways, dtypes kept,
  non-contiguous views kept as views, tensors that require grad accepted and left unchanged
  (flag and .grad).

Check your work with:  pytest exercises/01_basics
"""

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F


def derivative(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The gradient of the scalar-valued `fn` at `x`.

    fn: takes a tensor shaped like x and returns a scalar tensor (one element), built from
    torch operations on its argument. It may modify its argument in place, and it may ignore
    it (then the derivative is zero everywhere).
    x: floating-point tensor of any shape, on any device; it may require grad or not, and it
    may have been computed from tensors that require grad. The caller may be inside
    torch.no_grad().
    Returns d fn / d x: a new tensor of x's shape, dtype and device that does not require
    grad. x itself is left exactly as it was: values, requires_grad flag and .grad. Stores
    nothing: no .grad anywhere, not even of the tensors fn uses besides its argument.
    Raises TypeError when x is not floating point (gradients need floating point), and
    ValueError naming the shape fn returned when that is not a single element.
    """
    # TODO: return d fn / d x: a new tensor of x's shape, dtype and device that does not
    #       require grad (zeros when fn ignores its argument). The tests lend you x in every
    #       state (plain, requiring grad, with a .grad already set, computed inside a graph,
    #       under torch.no_grad()) and check that it comes back exactly as it was, even from an
    #       fn that writes into its argument, and that no .grad anywhere is filled. Errors:
    #       TypeError for a non-floating x; ValueError naming the shape when fn returns
    #       anything but one element.
    raise NotImplementedError


def fit_polynomial(x: torch.Tensor, y: torch.Tensor, degree: int, steps: int = 1000, lr: float = 0.1) -> torch.Tensor:
    """Coefficients of the degree-`degree` polynomial closest to the samples (x, y).

    x, y: float tensors of shape (N,), same dtype and device; neither is modified.
    Minimises the mean squared error over all N samples (full batch) with torch.optim.Adam
    at learning rate `lr` for `steps` steps, starting from zeros or from torch's global RNG
    (either way: the same torch.manual_seed, the same result; steps=0 returns the start).
    Returns shape (degree + 1,), highest power first (w[0] x^degree + ... + w[degree]),
    in x's dtype and on x's device, detached (it does not require grad).
    Accuracy with the defaults (measured over 30 draws): on the tests' example, 100 samples
    of 5x^2 + 3 plus N(0, 1) noise, x uniform in [-10, 10], the x^2 and x coefficients come
    within 0.05 of 5 and 0 (worst seen 0.014 and 0.039), the constant within 1.0 of 3 (worst
    seen 0.74: it converges last, its term is up to 100 times smaller than the x^2 one).
    Noise-free samples with |x| <= 2, degrees 1 to 3: within 1e-3 of the true coefficients.
    """
    # TODO: return the degree + 1 coefficients, highest power first, after `steps` steps of
    #       torch.optim.Adam at `lr` on the mean squared error over all N samples. The tests
    #       replay Adam step by step from what steps=0 returns (after the same manual_seed) and
    #       compare every coefficient. Shape (degree + 1,), degree 0 and a single sample
    #       included; x's dtype and device; detached; x and y untouched; no warnings.
    raise NotImplementedError


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A NumPy view of the CPU tensor `t`: no copy.

    The array shares t's memory (a write through one is seen through the other, the same
    data address), has t's dtype, shape and strides (non-contiguous views stay views).
    Works on a tensor that requires grad, which keeps its flag and .grad. A CUDA tensor
    cannot be shared with NumPy: it is copied to the host (the only case that copies).
    bfloat16 has no NumPy dtype (TypeError).
    """
    # TODO: return an array over t's own memory (the same data address) with t's dtype, shape
    #       and strides. t may require grad: afterwards it still does, with the same .grad.
    raise NotImplementedError


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A CPU tensor over the memory of the NumPy array `a`: no copy.

    The tensor shares a's memory (a write through one is seen through the other, the same
    data address), has a's dtype, shape and strides (non-contiguous views stay views).
    Read-only arrays are shared too (PyTorch warns that the tensor is writable). Arrays with
    negative strides (a[::-1]) cannot be shared: ValueError.
    """
    # TODO: return a tensor over a's own memory (the same data address) with a's dtype, shape
    #       and strides; never a copy, not even of an array that cannot be shared (ValueError).
    raise NotImplementedError
