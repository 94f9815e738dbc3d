"""t.numpy() without detach(): fails on a tensor that requires grad."""


def to_numpy(t):
    return t.cpu().numpy()
