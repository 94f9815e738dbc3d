"""Calls torch.nn.functional.normalize instead of writing it: right values, but the lesson asks for the division written out."""
EXPECT = r"calls torch\.nn\.functional\.normalize \(F\.normalize\)"

from torch.nn.functional import normalize


def normalize_rows(x, eps=1e-12):
    return normalize(x, p=2, dim=-1, eps=eps)
