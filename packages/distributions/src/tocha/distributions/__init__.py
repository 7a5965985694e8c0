"""tocha.distributions: probability distributions, as ``torch.distributions``."""

from ._version import __version__

__all__ = ["__version__"]
