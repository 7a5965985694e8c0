"""The op families. Importing this package declares every op and publishes its functions."""

from . import creation, pointwise  # noqa: F401
