"""A test backend built for a plugin API version that tocha does not speak: tocha must refuse
it, keep the reason, and still import."""


def register():
    """The ``tocha.backends`` entry point: a backend claiming plugin API version 999."""
    from ._backend import BadVersionBackend

    return BadVersionBackend()
