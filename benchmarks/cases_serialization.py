"""Serialization benchmarks (issue "tocha.save / tocha.load"): a 1 GB state dict (8 float32
tensors of 128 MB) saved and loaded, beside torch.save / torch.load, with the disk's plain
speed in the NumPy column: the same bytes written with ``open().write`` and ``fsync``, and
read back into memory with ``readinto``.

Every save reaches the disk (tocha.save syncs its file; the torch and plain callables fsync
theirs), and every load reads its file cold: the file's pages are dropped from the page cache
first (``posix_fadvise(POSIX_FADV_DONTNEED)``, where the platform has it). Target: tocha at
least 0.7x the plain speed both ways. ``TOCHA_BENCH_SERIALIZATION_MB`` sets another total
size (a smoke run may take 16 MB).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

import numpy as np
from harness import Case, numpy_throughput

N_TENSORS = 8
MEGABYTES = int(os.environ.get("TOCHA_BENCH_SERIALIZATION_MB", "1024"))
NUMEL = (MEGABYTES << 20) // (4 * N_TENSORS)


def state_dict():
    """The 8 tensors, filled (so that every page is real memory, not the zero page)."""
    return tuple(np.full(NUMEL, i, np.float32) for i in range(N_TENSORS))


@functools.cache
def _folder() -> str:
    folder = tempfile.mkdtemp(prefix="tocha-bench-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _path(name: str) -> str:
    return os.path.join(_folder(), name)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _drop_cache(path: str) -> None:
    """Evict `path` from the page cache, so that the next read comes from the disk."""
    if hasattr(os, "posix_fadvise"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def save(lib, *tensors, name: str = "saved") -> str:
    """``lib.save`` of the state dict to a file, synced to disk; its path."""
    path = _path(f"{lib.__name__}-{name}.pt")
    lib.save({f"layer{i}.weight": t for i, t in enumerate(tensors)}, path)
    if lib.__name__ != "tocha":  # tocha.save syncs its file; torch.save does not
        _fsync(path)
    return path


def plain_write(np, *arrays, name: str = "saved") -> str:
    """The floor: the same bytes written with one ``write`` per tensor, then ``fsync``."""
    path = _path(f"plain-{name}.bin")
    with open(path, "wb") as f:
        for a in arrays:
            f.write(a)
        f.flush()
        os.fsync(f.fileno())
    return path


def load(lib, *tensors):
    """``lib.load`` of a cold file, saved by `lib` on the first (untimed) call."""
    path = _path(f"{lib.__name__}-loaded.pt")
    if not os.path.exists(path):
        save(lib, *tensors, name="loaded")
    _drop_cache(path)
    return lib.load(path)


def plain_read(np, *arrays):
    """The floor: the bytes of a cold file read into one new array per tensor."""
    path = _path("plain-loaded.bin")
    if not os.path.exists(path):
        plain_write(np, *arrays, name="loaded")
    _drop_cache(path)
    out = []
    with open(path, "rb") as f:
        for a in arrays:
            buf = np.empty(a.nbytes, np.uint8)
            f.readinto(buf)
            out.append(buf)
    return out


SIZE = f"{MEGABYTES} MB: {N_TENSORS} x {MEGABYTES // N_TENSORS} MB float32"
CASES = [
    Case(
        "tocha.save(state_dict, path)",
        SIZE,
        state_dict,
        save,
        numpy=plain_write,
        goal=numpy_throughput(0.7),
        loops=1,
        repeats=5,
        interleave=False,
    ),
    Case(
        "tocha.load(path)",
        SIZE,
        state_dict,
        load,
        numpy=plain_read,
        goal=numpy_throughput(0.7),
        loops=1,
        repeats=5,
        interleave=False,
    ),
]
