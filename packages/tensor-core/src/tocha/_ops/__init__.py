"""The op families. Importing this package declares every op and publishes its functions."""

from . import creation, indexing, join, matmul, pointwise, random, reduction, shape  # noqa: F401
