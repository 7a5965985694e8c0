"""CuPy's ``RawModule`` emulated on the CPU, to test tocha-cuda's kernels without a GPU.

A module's code (the kernel file after ``common.cuh``) is compiled by g++ with
``emulator.h``, which runs each block's threads as ``std::thread``s with a barrier for
``__syncthreads()``. Each ``extern "C" __global__`` kernel gets a launcher; calling a
`Function` as CuPy's (``fn(grid, block, args)``) checks every argument against the kernel's C
parameter types, as CuPy cannot (a NumPy scalar of the wrong width would be read as garbage
on a GPU), and requires C-contiguous arrays, which the kernels index densely.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tocha_cuda._kernels import KernelLibrary

HEADER = Path(__file__).with_name("emulator.h")
BUILD_DIR = Path(tempfile.gettempdir()) / "tocha-cuda-emulator"
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)', re.S)
_C_SCALARS = {
    "int": (ctypes.c_int, np.dtype(np.int32)),
    "long long": (ctypes.c_longlong, np.dtype(np.int64)),
    "unsigned long long": (ctypes.c_ulonglong, np.dtype(np.uint64)),
    "double": (ctypes.c_double, np.dtype(np.float64)),
}
_SCALAR_T = {"float": (ctypes.c_float, np.dtype(np.float32)), "double": _C_SCALARS["double"]}


def available() -> bool:
    """Whether g++ is here to build emulated kernels."""
    return shutil.which("g++") is not None


def _parameters(text: str) -> list[tuple[str, str]]:
    """(C type, name) of each parameter in a kernel's parameter list."""
    params = []
    for part in text.split(","):
        *words, name = part.split()
        params.append((" ".join(words), name))
    return params


class Function:
    """One emulated kernel: ``fn(grid, block, args)`` as CuPy's ``RawKernel``."""

    def __init__(self, library, name: str, params, scalar):
        self.name, self.params = name, params
        self.launcher = getattr(library, f"emulate_{name}")
        self.kinds = []
        argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
        for ctype, _ in params:
            if "*" in ctype:
                self.kinds.append(None)
                argtypes.append(ctypes.c_void_p)
                continue
            c, dtype = scalar if ctype == "scalar_t" else _C_SCALARS[ctype]
            self.kinds.append(dtype)
            argtypes.append(c)
        self.launcher.argtypes = argtypes

    def __call__(self, grid, block, args):
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}: {len(args)} arguments for {len(self.params)}")
        values = []
        for arg, dtype, (ctype, pname) in zip(args, self.kinds, self.params):
            if dtype is None:
                if not isinstance(arg, np.ndarray) or not arg.flags.c_contiguous:
                    raise TypeError(f"{self.name}: {pname} ({ctype}) needs a C-contiguous array")
                values.append(arg.ctypes.data)
            else:
                if not isinstance(arg, np.generic) or arg.dtype != dtype:
                    raise TypeError(f"{self.name}: {pname} ({ctype}) needs a {dtype}, got {arg!r}")
                values.append(arg.item())
        grid = tuple(grid) + (1,) * (2 - len(grid))
        (threads,) = block
        self.launcher(grid[0], grid[1], threads, *values)


class RawModule:
    """CuPy's ``RawModule(code=..., options=(...))`` built by g++; ``-Dscalar_t=...`` is the
    one option the kernel files use (generated kernels, tocha-compiler's, use none)."""

    def __init__(self, code: str, options=()):
        scalars = [o.split("=", 1)[1] for o in options if o.startswith("-Dscalar_t=")]
        scalar = scalars[0] if scalars else ""
        self.kernels = {name: _parameters(text) for name, text in _KERNEL.findall(code)}
        self.scalar = _SCALAR_T.get(scalar)
        self.library = ctypes.CDLL(str(_build(code, scalar, self.kernels)))

    def get_function(self, name: str) -> Function:
        return Function(self.library, name, self.kernels[name], self.scalar)


def _launchers(kernels: dict) -> str:
    lines = []
    for name, params in kernels.items():
        decl = ", ".join(f"{t} {n}" for t, n in params)
        names = ", ".join(n for _, n in params)
        lines.append(
            f'extern "C" void emulate_{name}(unsigned int gx, unsigned int gy, unsigned int bx, '
            f"{decl}) {{ emulate_launch(gx, gy, bx, [&] {{ {name}({names}); }}); }}"
        )
    return "\n".join(lines)


def _build(code: str, scalar: str, kernels: dict) -> Path:
    """The shared library of `code` for `scalar`, built once per distinct source."""
    source = f'#include "{HEADER}"\n{code}\n{_launchers(kernels)}\n'
    digest = hashlib.sha256(f"{scalar}\n{source}".encode()).hexdigest()[:16]
    BUILD_DIR.mkdir(exist_ok=True)
    target = BUILD_DIR / f"{digest}.so"
    if not target.exists():
        src = BUILD_DIR / f"{digest}.cpp"
        src.write_text(source)
        tmp = BUILD_DIR / f"{digest}.{id(source)}.so"
        command = ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread"]
        done = subprocess.run(
            [*command, *([f"-Dscalar_t={scalar}"] if scalar else []), str(src), "-o", str(tmp)],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"g++ could not build {src}:\n{done.stderr}")
        tmp.replace(target)
    return target


class EmulatedLibrary(KernelLibrary):
    """tocha-cuda's kernel library over NumPy arrays and emulated kernels."""

    def __init__(self):
        super().__init__(type("EmulatedCupy", (), {"RawModule": RawModule}))

    @staticmethod
    def address(array) -> int:
        return array.ctypes.data
