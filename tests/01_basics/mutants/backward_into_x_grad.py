"""Calls .backward() and returns x.grad: the caller's .grad is filled and grows with every call."""

EXPECT = r"autograd\.grad"


def derivative(fn, x):
    x.requires_grad_()
    fn(x).backward()
    return x.grad
