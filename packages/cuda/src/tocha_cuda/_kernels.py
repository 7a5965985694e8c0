"""tocha-cuda's own CUDA kernels (the ``.cu`` files of ``kernels/``), compiled with CuPy's
NVRTC once per file and element type, and launched with arguments of checked C types.

Each kernel file is compiled after ``kernels/common.cuh``, with ``scalar_t`` defined as the
element type (``float`` or ``double``).
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np

KERNEL_DIR = files("tocha_cuda") / "kernels"
# The element types the kernels are compiled for, as C names.
SCALAR_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
ELEMENTWISE_THREADS = 256
MAX_BLOCKS = 65535


def kernel_source(name: str) -> str:
    """The code NVRTC compiles for kernel file `name`: the shared helpers, then the file."""
    return (KERNEL_DIR / "common.cuh").read_text() + "\n" + (KERNEL_DIR / name).read_text()


def row_threads(n: int) -> int:
    """The block of a row kernel over rows of `n` values: a power of two from 32 to 1024."""
    threads = 32
    while threads < n and threads < 1024:
        threads *= 2
    return threads


def elementwise_grid(n: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) of a grid-stride kernel over `n` elements."""
    blocks = min(max(-(-n // ELEMENTWISE_THREADS), 1), MAX_BLOCKS)
    return (blocks,), (ELEMENTWISE_THREADS,)


class KernelLibrary:
    """The compiled kernels of one CuPy module `cp` (anything with ``RawModule``)."""

    def __init__(self, cp):
        self.cp = cp
        self._functions: dict = {}

    def function(self, source: str, name: str, dtype):
        """Kernel `name` of file `source`, compiled for elements of `dtype`."""
        key = (source, name, dtype)
        fn = self._functions.get(key)
        if fn is None:
            module = self.cp.RawModule(
                code=kernel_source(source), options=(f"-Dscalar_t={SCALAR_TYPES[dtype]}",)
            )
            fn = self._functions[key] = module.get_function(name)
        return fn

    def launch(self, source: str, name: str, dtype, grid: tuple, block: tuple, args: tuple):
        """Run kernel `name` of `source` for `dtype` on `grid` x `block` threads. Scalars in
        `args` must be NumPy scalars of the kernel's C parameter types."""
        self.function(source, name, dtype)(grid, block, args)

    def launch_rows(self, source: str, name: str, dtype, rows: int, n: int, args: tuple):
        """Run row kernel `name` of `source`: one block per row of `n` values."""
        self.launch(source, name, dtype, (rows,), (row_threads(n),), args)

    @staticmethod
    def address(array) -> int:
        """The device address of `array`'s first element."""
        return array.data.ptr


LIBRARIES: dict = {}


def library(xp) -> KernelLibrary:
    """The kernel library of array namespace `xp` (one per namespace)."""
    lib = LIBRARIES.get(xp)
    if lib is None:
        lib = LIBRARIES[xp] = KernelLibrary(xp)
    return lib
