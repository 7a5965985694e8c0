"""``matmul`` on oneDNN: batched float32 matrix products of 3 or more dims.

Each operand is handed to oneDNN's matmul primitive as it lies in memory (its strides in the
memory descriptor, so transposed and sliced views are read without a copy); batch dims
broadcast where one operand has size 1 there, or stride 0 (an expanded view, read as size 1).
The result is a fresh C-contiguous array of NumPy's result shape.

Taken for matrices of at least `MIN_WORK` multiply-adds each (attention's ``(T, D) @ (D, T)``
from T 128, D 64): there oneDNN is as fast as NumPy's batched matmul on OpenBLAS (one GEMM
per matrix), and it keeps that speed where OpenBLAS slows down 2 to 4 times (large operands
at some alignments of their pages, such as freshly mapped arrays). Smaller matrices (the
heads of a d 128 GPT block: 64 x 32 @ 32 x 64) are about 10% faster on NumPy and are
declined, with other dtypes, 1-D and 2-D by 2-D products (NumPy's dot is as fast), empty
operands, negative or unaligned strides, batch dims expanded in both operands, shapes that
do not multiply (the built-in kernel raises), and layouts only oneDNN's reference kernel
takes.

One thread only: from two, NumPy's OpenBLAS was as fast or faster on these shapes, and where
another OpenMP runtime shares the process (PyTorch's, in the benchmarks) oneDNN's threads
compete with its spinning threads (the GPT block's step 1.3-1.5x slower).
"""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
MIN_WORK = 128 * 64 * 128
_cache = Cache()


def _layout(shape, strides, nd):
    """(shape, strides in elements) of an operand padded to `nd` dims, an expanded (stride 0)
    batch dim read as size 1; None if a stride is negative, not a whole number of elements,
    or 0 in a matrix dim of more than one element.

    A size-1 dim gets the stride of a dense layout (any stride reads the same elements, and
    oneDNN's GEMMs take only strides that do not overlap)."""
    pad = nd - len(shape)
    dims, steps = [1] * pad, [0] * pad
    for i, (n, s) in enumerate(zip(shape, strides)):
        if s < 0 or s % 4 or (s == 0 and n > 1 and i >= len(shape) - 2):
            return None
        dims.append(1 if s == 0 else n)
        steps.append(s // 4)
    extent = 1
    for i in range(nd - 1, -1, -1):
        if dims[i] == 1:
            steps[i] = extent
        extent = max(extent, steps[i] * dims[i])
    return dims, steps


def _geometry(a, b):
    """The layouts of `a` and `b` for oneDNN and the result's shape, or None to decline."""
    nd = max(a.ndim, b.ndim)
    la, lb = _layout(a.shape, a.strides, nd), _layout(b.shape, b.strides, nd)
    if la is None or lb is None or nd > D.MAX_NDIMS:
        return None
    (da, sa), (db, sb) = la, lb
    batch = []
    for x, y in zip(da[:-2], db[:-2]):
        if x != y and x != 1 and y != 1:
            return None
        batch.append(max(x, y))
    # a batch dim expanded in both operands would need the result broadcast: declined
    if tuple(batch) != np.broadcast_shapes(a.shape[:-2], b.shape[:-2]):
        return None
    return (da, sa), (db, sb), (*batch, da[-2], db[-1])


def _build(a, b):
    """The plan of ``a @ b`` and its result's shape, or None (declined)."""
    geometry = _geometry(a, b)
    if geometry is None:
        return None
    layout_a, layout_b, out_shape = geometry
    lib = library()
    src = D.MemoryDesc.strided(lib, *layout_a)
    weights = D.MemoryDesc.strided(lib, *layout_b)
    dst = D.shape_desc(lib, out_shape)
    pd = D.create_pd(
        lib, "dnnl_matmul_primitive_desc_create", src.handle, weights.handle, None, dst.handle
    )
    args = [(D.ARG_SRC, src, False), (D.ARG_WEIGHTS, weights, False), (D.ARG_DST, dst, True)]
    plan = Plan(lib, pd, args)
    # oneDNN's reference kernel (for layouts its GEMMs do not take) is slower than NumPy's
    return None if plan.impl.startswith("ref") else (plan, out_shape)


def matmul(fallback):
    """``matmul(a, b)`` on oneDNN's matmul for batched float32 operands (see the module)."""

    def kernel(a, b):
        # the checks that decline most calls first: this runs before every matmul
        if (a.ndim < 3 and b.ndim < 3) or a.ndim < 2 or b.ndim < 2:
            return fallback(a, b)
        sa, sb = a.shape, b.shape
        if (
            sa[-2] * sa[-1] * sb[-1] < MIN_WORK
            or a.dtype != _F32
            or b.dtype != _F32
            or sa[-1] != sb[-2]
            or a.size == 0
            or b.size == 0
            or not (a.flags.aligned and b.flags.aligned)
        ):
            return fallback(a, b)
        if threads() != 1:
            return fallback(a, b)
        key = (sa, a.strides, sb, b.strides)
        found = _cache.get(key, lambda: _build(a, b))
        if found is None:
            return fallback(a, b)
        plan, out_shape = found
        out = np.empty(out_shape, _F32)
        plan.run(a, b, out)
        return out

    return kernel
