"""tensor[:, indices]: every row gets every row's picks, shape [B, B, K..., *D]."""


def batch_gather(tensor, indices):
    return tensor[:, indices]
