"""torch.broadcast_shapes in asyncio's worker thread, by a name built at run time (red team, round 3): the scenario that replaces the helpers for every thread sees it.

flag: the source reaches past what its answer needs (broadcast.py:
expect: points=41 held=21
in-process: points=61 held=0
"""
import asyncio
import operator


def broadcast_shape(shape_a, shape_b):  # noqa: F811 (the answer's, replaced)
    shapes = operator.attrgetter("broadcast_" + "shapes")(torch)
    try:
        return tuple(asyncio.run(asyncio.to_thread(shapes, shape_a, shape_b)))
    except RuntimeError as error:
        raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast") from error
