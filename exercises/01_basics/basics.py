"""Lesson 01: PyTorch basics. Tensors, gradients with torch.autograd.grad, a curve fitted with
Adam, and memory shared with NumPy.

Tensors
-------
A tensor is an n-dimensional array, much like a NumPy array, with two extras: it lives on a
device (CPU or GPU), and it can record the operations applied to it so that PyTorch can
differentiate them. Whether a constructor copies or shares memory matters more than it looks:

    torch.tensor(data)      always copies `data` (a list, an array, even another tensor)
    torch.from_numpy(a)     shares the memory of the NumPy array `a`: no copy
    t.numpy()               shares the memory of the CPU tensor `t`: no copy

Pitfall: switching on gradients by wrapping a tensor in torch.tensor,

    w = torch.tensor(torch.randn(3), requires_grad=True)    # copies, and warns about it

Create it with the flag instead, torch.randn(3, requires_grad=True), or, for a tensor you
already have, make your own copy with t.detach().clone().requires_grad_().

Gradients: grad() returns them, backward() accumulates them
-----------------------------------------------------------
torch.autograd.grad(output, inputs) returns d(output)/d(inputs) and stores nothing anywhere.
The derivative of -x*x is -2x, so at x = 1:

    >>> x = torch.tensor(1.0, requires_grad=True)
    >>> torch.autograd.grad(-x * x, x)
    (tensor(-2.),)

loss.backward() instead ADDS the gradient into the .grad of every leaf tensor in the graph
that requires grad, the ones the computation merely uses included. Adds, not stores: call it
twice and .grad holds twice the gradient. That is why every training loop clears the
gradients (optimizer.zero_grad()) before backward(); forget it, and each step follows the sum
of all the gradients so far, not the current one.

A borrowed tensor
-----------------
A function that differentiates on behalf of its caller borrows the caller's tensor and must
give it back as it found it. Three ways to change it behind the caller's back, and one
context to respect:

- its flag: x.requires_grad_() switches gradients on for the caller's tensor (and a later
  backward() fills its .grad). x.detach() is a new tensor over the same memory, with no
  history and a flag of its own.
- its memory: a function that writes into its argument (t.mul_(2)) writes into whatever
  memory it is given, and a detached tensor shares the caller's. An in-place op on a leaf
  that requires grad is refused outright ("a leaf Variable that requires grad is being used
  in an in-place operation").
- its graph: when x was computed from tensors that require grad, differentiating through x
  sends gradients back into the caller's graph.
- its context: inside `with torch.no_grad():` nothing is recorded, so there is no graph to
  differentiate; torch.enable_grad() switches recording back on for a block of code.

Curve fitting with an optimizer
-------------------------------
A polynomial w[0] x^d + ... + w[d] is linear in its coefficients: at N samples its values are
one matrix product, an (N, d + 1) matrix whose columns are powers of x, times the vector w.
Fitting it means minimising the mean squared error between those values and y, one optimizer
step after another, each from the gradient of the current loss.

Pitfall: shapes. With w of shape (d + 1, 1) the prediction has shape (N, 1), and (N, 1) minus
targets of shape (N,) broadcasts to an (N, N) matrix: every prediction is compared with every
target, and the best "fit" is a constant, the mean of y. F.mse_loss warns about the mismatch;
a hand-written ((pred - y) ** 2).mean() does not. Keep w of shape (d + 1,). Squeezing the
column afterwards is no cure: squeeze() drops every dim of size 1, so one sample, or degree
0, loses a dim too.

Why Adam: with x in [-10, 10] the x^2 column reaches 100, so the gradient for its coefficient
is huge; plain SGD at lr 0.1 overshoots further at every step and diverges to inf and nan.
Adam divides each coordinate's step by a running estimate of that coordinate's gradient size,
so every step is about lr long, whatever the scale. The price: the constant coefficient, whose
column is small, arrives last. Mean or sum of the squared errors? For Adam nearly the same,
but not exactly: its eps (1e-8) is added to the gradient size, so with tiny gradients the two
take different steps. The tests want the mean.

NumPy without copies
--------------------
A CPU tensor and a NumPy array can be two views of one buffer (the buffer protocol): t.numpy()
and torch.from_numpy(a) copy nothing, keep the dtype, and carry the strides over, so
non-contiguous views stay views. A write through one is seen through the other. What copies:
torch.tensor(a), np.array(t), .clone(), .contiguous() on a non-contiguous view, and dtype
conversions (.float(), .astype(np.float32)). t.numpy() refuses a tensor that requires grad
(NumPy cannot record operations for autograd); t.requires_grad_(False) would get past that
by switching off the caller's flag. A CUDA tensor's memory is on the GPU where NumPy cannot
see it: there the one copy is unavoidable.

What the tests expect
---------------------
- derivative: any shape and floating dtype (the result has x's shape and dtype and does not
  require grad); the caller's x keeps its values, its requires_grad flag and its .grad, even
  when fn writes into its argument; repeated calls give the same answer; works inside
  torch.no_grad(); no .grad filled anywhere (not even of tensors fn closes over); a non-scalar
  fn -> ValueError naming the shape; an integer, bool or complex x -> TypeError.
- fit_polynomial: highest power first, detached, x's dtype and device; recovers 5x^2 + 3 from
  noisy samples; follows Adam on the full batch step by step (steps and lr are honoured);
  x and y are not modified; no warnings; the same result after the same torch.manual_seed.
- to_numpy / from_numpy: the same memory address and writes seen both ways, dtypes kept,
  non-contiguous views kept as views, tensors that require grad accepted and left unchanged.

Check your work with:  pytest exercises/01_basics
"""

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F


def derivative(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The gradient of the scalar-valued `fn` at `x`, computed with torch.autograd.grad.

    fn: takes a tensor shaped like x and returns a scalar tensor (one element), built from
    torch operations on its argument. It may modify its argument in place.
    x: floating-point tensor of any shape, on any device; it may require grad or not.
    Returns d fn / d x: a new tensor of x's shape, dtype and device that does not require
    grad. x itself is left exactly as it was: values, requires_grad flag and .grad. Stores
    nothing: no .grad anywhere, not even of the tensors fn uses besides its argument.
    Raises TypeError when x is not floating point (gradients need floating point), and
    ValueError naming the shape fn returned when that is not a single element.
    """
    # TODO: return d fn / d x: a new tensor of x's shape, dtype and device that does not
    #       require grad. The tests lend you x in every state (plain, requiring grad, with a
    #       .grad already set, computed inside a graph, under torch.no_grad()) and check that
    #       it comes back exactly as it was, even from an fn that writes into its argument, and
    #       that no .grad anywhere is filled. Errors: TypeError for a non-floating x; ValueError
    #       naming the shape when fn returns anything but one element.
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
    seen 0.74: it converges last, its column is up to 100 times smaller than the x^2 one).
    Noise-free samples with |x| <= 2, degrees 1 to 3: within 1e-3 of the true coefficients.
    """
    # TODO: return the degree + 1 coefficients, highest power first, after `steps` steps of
    #       torch.optim.Adam at `lr` on the mean squared error over all N samples. The tests
    #       replay Adam step by step from what steps=0 returns, so each step must follow the
    #       current gradient only. Shape (degree + 1,), degree 0 and a single sample included;
    #       x's dtype and device; detached; x and y untouched; no warnings.
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
    #       and strides. t may require grad: it keeps its flag and its .grad.
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
