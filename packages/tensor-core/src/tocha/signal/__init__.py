"""Signal processing, as ``torch.signal``: the window functions of `tocha.signal.windows`."""

from . import windows

__all__ = ["windows"]
