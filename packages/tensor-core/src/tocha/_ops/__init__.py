"""The op families. Importing this package declares every op and publishes its functions."""

from . import (  # noqa: F401
    arrangement,
    compat,
    creation,
    fill,
    indexing,
    join,
    legacy,
    math_extra,
    matmul,
    methods,
    nn_entry,
    pointwise,
    random,
    reduction,
    routines,
    scatter,
    shape,
    sorting,
    windows,
)
from .aliases import add_aliases

add_aliases()  # once every op is exported: ``axis=`` and ``keepdims=`` accepted
