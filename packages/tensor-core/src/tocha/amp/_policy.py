"""Autocast's op lists: how each primitive's floating inputs are cast inside an autocast
region, per device kind (PyTorch's lists for CPU and for CUDA, by tocha's op names).

``LOWER``: to the region's dtype (float16 or bfloat16). ``FP32``: to float32. ``PROMOTE``: to
the widest floating dtype among the inputs. Ops not listed run in their inputs' dtypes.
Only float16, bfloat16 and float32 inputs are cast (float64 never is), as in PyTorch.
"""

from __future__ import annotations

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

_MATMUL_LIKE = (
    "matmul",
    "linear",
    "convolution",
    "convolution_transpose",
    "scaled_dot_product_attention",
    "rnn_layer",
)

CUDA = {
    **dict.fromkeys(_MATMUL_LIKE, LOWER),
    **dict.fromkeys(
        (
            "acos",
            "asin",
            "cosh",
            "erfinv",
            "exp",
            "expm1",
            "log",
            "log10",
            "log2",
            "log1p",
            "reciprocal",
            "rsqrt",
            "sinh",
            "tan",
            "pow",
            "softplus",
            "native_layer_norm",
            "native_group_norm",
            "norm",
            "softmax",
            "log_softmax",
            "cumsum",
            "cumprod",
            "sum",
            "prod",
            "logsumexp",
            "nll_loss",
            "cross_entropy_loss",
            "ctc_loss",
            "binary_cross_entropy",
        ),
        FP32,
    ),
    **dict.fromkeys(
        ("atan2", "cat", "stack", "index_put", "scatter_add", "tensordot", "vdot"), PROMOTE
    ),
}

CPU = {
    **dict.fromkeys(_MATMUL_LIKE + ("linalg_vecdot",), LOWER),
    **dict.fromkeys(
        (
            "prod",
            "nll_loss",
            "cross_entropy_loss",
            "ctc_loss",
            "binary_cross_entropy",
            "fft_c2c",
            "fft_r2c",
            "fft_c2r",
            "linalg_cholesky_ex",
            "linalg_inv_ex",
            "linalg_qr",
            "linalg_svd",
            "linalg_svdvals",
            "linalg_eig",
            "linalg_eigvals",
            "linalg_eigh",
            "linalg_eigvalsh",
            "linalg_lstsq",
            "linalg_lu_factor_ex",
            "linalg_lu_solve",
            "linalg_solve",
            "linalg_solve_triangular",
            "linalg_pinv",
            "linalg_det",
            "linalg_slogdet",
            "linalg_matrix_exp",
        ),
        FP32,
    ),
    **dict.fromkeys(("cat", "stack", "index_put", "scatter_add", "tensordot"), PROMOTE),
}


def policy_for(device_type: str) -> dict:
    """The op list of a device type: the CPU's for ``cpu``, CUDA's for any other."""
    return CPU if device_type == "cpu" else CUDA
