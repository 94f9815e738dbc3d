"""log_softmax as logits - logsumexp(logits) without shifting first: 1e4 - (1e4 + 0.693) cancels most digits."""

EXPECT = r"cancels the digits"


def softmax_cross_entropy(labels, logits, dim=-1):
    log_probs = logits - logsumexp(logits, dim).unsqueeze(dim)  # noqa: F821 (the reference's)
    return -(labels * log_probs).sum(dim=dim)
