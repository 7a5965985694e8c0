"""tocha-cuda: the ``cuda`` backend of tocha, CuPy arrays on NVIDIA GPUs.

The ``tocha.backends`` entry point is `register`; importing this package is cheap: CuPy and
tocha are imported only when `register` is called, the first time a cuda device is asked for.
"""

from ._version import __version__

__all__ = ["register", "__version__"]


def register():
    """The ``tocha.backends`` entry point: the cuda backend over CuPy.

    Raises ImportError without CuPy, and RuntimeError without a usable NVIDIA driver or
    without a visible GPU; tocha keeps the error and shows it when a cuda device is asked for.
    """
    from ._backend import CudaBackend, load_cupy

    return CudaBackend(load_cupy())
