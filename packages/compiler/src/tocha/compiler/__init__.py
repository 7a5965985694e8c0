"""tocha.compiler: what ``torch.compiler`` offers, and the compiler behind `tocha.compile`."""

from ._version import __version__

__all__ = ["__version__"]
