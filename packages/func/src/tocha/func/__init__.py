"""tocha.func: composable function transforms, as ``torch.func``."""

from ._version import __version__

__all__ = ["__version__"]
