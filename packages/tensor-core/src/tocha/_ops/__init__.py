"""The op families. Importing this package declares every op and publishes its functions."""

from . import creation, fill, indexing, join, matmul, pointwise, random, reduction, shape  # noqa: F401
from .. import fft, linalg, special  # noqa: E402, F401  (op modules with public namespaces)
