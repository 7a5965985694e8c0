"""A fused multiply-add on NumPy (or CuPy) arrays: ``x * scale + shift`` rounded once, as
PyTorch's CPU kernels round it where their compiler fuses the two (random samplers' affine
maps, linspace)."""

from __future__ import annotations

import numpy as np


def fused_multiply_add(xp, x, scale: float, shift: float):
    """``x * scale + shift`` rounded once, in `x`'s precision (a float32 or float64 array),
    as PyTorch's CPU kernels compute it (a fused multiply-add): float32 through float64 (with
    `scale` and `shift` rounded to float32 first, the product is exact there); float64 with
    the product's rounding error, found exactly by splitting the factors in halves, added
    back with the sum's."""
    if x.dtype == xp.float32:
        wide = x.astype(xp.float64) * float(xp.float32(scale)) + float(xp.float32(shift))
        return wide.astype(xp.float32)
    product = x * scale
    x_high = x * _SPLIT
    x_high -= x_high - x
    x_low = x - x_high
    scale_high = scale * _SPLIT
    scale_high -= scale_high - scale
    scale_low = scale - scale_high
    product_error = x_high * scale_high - product
    product_error += x_high * scale_low
    product_error += x_low * scale_high
    product_error += x_low * scale_low
    total = product + shift
    part = total - product
    sum_error = (product - (total - part)) + (shift - part)
    sum_error += product_error
    total += sum_error
    return total


_SPLIT = 2.0**27 + 1  # Dekker's splitter: a float64 times it splits into two 26-bit halves
FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
