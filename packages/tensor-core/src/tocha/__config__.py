"""``tocha.__config__``: how this tocha was built and what it computes with, as
``torch.__config__`` (for environment reports)."""

from __future__ import annotations

import platform

import numpy as np

from ._ops.compat import get_num_interop_threads
from ._runtime import get_num_threads
from ._version import __version__

__all__ = ["parallel_info", "show"]


def show() -> str:
    """A description of the build: versions and the libraries the CPU kernels run on."""
    blas = _blas_name()
    return (
        f"tocha {__version__} built with:\n"
        f"  - Python {platform.python_version()}\n"
        f"  - NumPy {np.__version__} (BLAS: {blas})\n"
        "  - CPU kernels: NumPy; CUDA kernels: tocha-cuda (CuPy) when installed\n"
    )


def parallel_info() -> str:
    """The thread settings the CPU kernels run with."""
    return (
        "ATen/Parallel:\n"
        f"\tat::get_num_threads() : {get_num_threads()}\n"
        f"\tat::get_num_interop_threads() : {get_num_interop_threads()}\n"
        f"NumPy BLAS: {_blas_name()}\n"
    )


def _blas_name() -> str:
    try:
        info = np.show_config(mode="dicts")
        return info["Build Dependencies"]["blas"]["name"]
    except (TypeError, KeyError):
        return "unknown"
