"""Makes map_location=None the default of load_checkpoint: left out, it must be "cpu", so that a
checkpoint written on a GPU loads on a machine without one."""

EXPECT = r"leaves out map_location='cpu'"

_load = load_checkpoint


def load_checkpoint(path, model, optimizer, map_location=None):
    return _load(path, model, optimizer, map_location)
