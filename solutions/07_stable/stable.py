"""Lesson 07: numerical stability. Softmax, log-sum-exp and cross entropy that never overflow.

Why it matters
--------------
Code that is right on paper can be wrong in floating point. float32 holds magnitudes up to
about 3.4e38, so exp(x) is already inf for x > ln(3.4e38) ~= 88.7 (float16: x > ~11.1).
The textbook softmax then divides inf by inf:

    >>> x = torch.tensor([1000.0, 0.0])
    >>> torch.exp(x) / torch.exp(x).sum()
    tensor([nan, 0.])

The shift identity
------------------
Softmax does not change when the same number c is subtracted from every logit: the factor
exp(-c) appears above and below the fraction and cancels,

    exp(x_i - c) / sum_j exp(x_j - c)  ==  exp(x_i) / sum_j exp(x_j).

Pick c = the largest logit *along the dim you normalise over*. Every exponent is then <= 0,
every exp lies in [0, 1], and the largest term of the sum is exactly 1, so nothing overflows
and the sum is never 0. (One maximum for the whole tensor is not enough: a row whose values
all sit far below it underflows to 0 / 0.)

Log-sum-exp, log(sum_j exp(x_j)), gets the same treatment:

    logsumexp(x) == c + log(sum_j exp(x_j - c))

and it gives log-probabilities directly: log_softmax(x) = x - logsumexp(x).

Infinite entries need one more thought. In a slice that is entirely -inf (fully masked), the
maximum c is -inf itself, and x - c is -inf - (-inf) = nan; the same happens with a +inf
entry (inf - inf). Such a slice has nothing to shift: its log-sum-exp is -inf (the log of an
empty sum) or +inf as it stands.

The pitfall: log(softmax(x))
----------------------------
With logits [1000, 0] the softmax is exactly [1, 0]: exp(-1000) underflows to 0. Its log is
[0, -inf], so a cross entropy built as -sum(labels * log(softmax(logits))) is inf (and its
gradient nan), while the true value is a finite 500. Never take the log of a number that may
have underflowed; compute x - logsumexp(x) instead, and shift first: with x = [1e4, 1e4],
1e4 - (1e4 + 0.693) in float32 keeps only three digits of 0.693 (the spacing of float32
numbers near 1e4 is about 0.001). Subtracting two large, nearly equal numbers cancels the
digits you want. (x - c) - logsumexp(x - c), with c the maximum, subtracts small numbers.

Gradients need the same care: a forward pass can return a finite number while the backward
pass produces nan (through log(0), or inf - inf). The tests check gradients as well.

What the tests expect (all of it matches PyTorch's built-ins)
-------------------------------------------------------------
- any shape and any `dim`, negative ones too; non-contiguous inputs; the input is not modified;
- float16 and bfloat16 in, the same dtype out;
- masking with -inf: a masked entry gets probability 0; a row that is *entirely* -inf has no
  valid softmax (PyTorch returns nan there) and its logsumexp is -inf, the log of an empty sum;
  likewise a +inf logit makes logsumexp +inf;
- an empty dim to reduce over: softmax returns the empty tensor, logsumexp returns -inf.

You build these from exp, log, max and sum: the tests fail if the code calls torch.softmax,
torch.log_softmax, torch.logsumexp or F.cross_entropy (in any spelling).

Check your work with:  pytest exercises/07_stable
"""

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax of `logits` along `dim`, safe for any magnitude.

    logits: float tensor of any shape (float32, float64, float16 or bfloat16).
    Returns a tensor of the same shape and dtype whose entries along `dim` are in [0, 1] and
    sum to 1 (nan for a slice that is entirely -inf, as in torch.softmax).
    """
    # TODO: return the softmax of `logits` along `dim`: the same shape and dtype, no overflow
    #       and no nan for finite logits of any magnitude (nan only for an all -inf slice, the
    #       empty tensor for an empty one). Build it from exp, max and sum over whole tensors:
    #       no loop over slices, no torch.softmax, and leave `logits` unchanged.
    ### BEGIN SOLUTION
    if logits.numel() == 0:
        return logits.clone()  # nothing to normalise (and amax refuses an empty dim)
    # The shift is a constant: its gradient cancels out, so keep it out of the graph.
    shift = logits.amax(dim=dim, keepdim=True).detach()  # (..., 1, ...)
    exp = torch.exp(logits - shift)  # every exponent <= 0: values in [0, 1]
    return exp / exp.sum(dim=dim, keepdim=True)
    ### END SOLUTION


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """log(sum(exp(x))) along `dim`, without overflow; `dim` is removed from the shape.

    x: float tensor of any shape. Returns x's shape without `dim`, in x's dtype. A slice that
    is entirely -inf gives -inf, one holding +inf gives +inf, an empty slice gives -inf.
    """
    # TODO: return log(sum(exp(x))) along `dim`, with `dim` removed, in x's dtype: finite for
    #       finite x of any magnitude, -inf for an all -inf or empty slice, +inf for a slice
    #       holding +inf, never a nan value. Gradients as torch.logsumexp's (nan included,
    #       where it gives one). Whole tensors, no torch.logsumexp, x left unchanged.
    ### BEGIN SOLUTION
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()  # the log of an empty sum: -inf (amax refuses an empty dim)
    shift = x.amax(dim=dim, keepdim=True).detach()  # (..., 1, ...)
    # An all -inf (or a +inf) slice would give inf - inf = nan: shift those by 0 instead.
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
    ### END SOLUTION


def softmax_cross_entropy(labels: torch.Tensor, logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Cross entropy -sum(labels * log_softmax(logits)) reduced over `dim` only.

    labels: probabilities (each slice along `dim` sums to 1), broadcastable with `logits`.
    logits: float tensor. Returns the per-example loss: the broadcast shape without `dim`.
    Finite for finite logits of any magnitude, with finite gradients.
    """
    # TODO: return -sum(labels * log_softmax(logits)) over `dim` only (one loss per example,
    #       labels broadcast against logits): finite, with finite and correct gradients, for
    #       finite logits of any magnitude, even where a probability underflows to 0, and
    #       accurate for large, nearly equal logits. No F.cross_entropy or log_softmax built-in.
    ### BEGIN SOLUTION
    if logits.numel() == 0:
        return -(labels * logits).sum(dim=dim)  # an empty sum: 0 (amax refuses an empty dim)
    shift = logits.amax(dim=dim, keepdim=True).detach()
    shifted = logits - shift.masked_fill(shift.isinf(), 0)  # (..., C, ...), max 0: no cancellation
    log_probs = shifted - logsumexp(shifted, dim).unsqueeze(dim)  # log_softmax
    return -(labels * log_probs).sum(dim=dim)
    ### END SOLUTION
