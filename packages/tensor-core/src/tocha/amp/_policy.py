"""Autocast's op lists: how the floating inputs of each op are cast inside an autocast region,
per device kind (PyTorch's lists for the CPU and for CUDA, under PyTorch's op names).

A name is either a primitive op's (the dispatcher asks) or the name under which a public
function is hooked with `tocha.library.autocast_op` (its wrapper asks): a function that
checks its operands' dtypes before any op runs (``F.linear``, ``torch.bmm``), or one that
tocha composes of other ops (``F.mse_loss``, ``torch.trace``), is hooked itself.

``LOWER``: to the region's dtype (float16 or bfloat16). ``FP32``: to float32. ``PROMOTE``: to
float32 if any input is float32, else the region's dtype (a float16 input in a bfloat16 region
is PyTorch's error). ``NATIVE``: no cast, for functions whose PyTorch kernel is one native
op (its inner work never autocasts) that tocha composes of listed ops (``mv`` of ``matmul``).
Only float16, bfloat16 and float32 inputs are cast (float64 never is), as in PyTorch. A hooked
function runs with autocast off for its device type, as PyTorch's kernels do below the
autocast layer; a call with ``out=`` is not cast (PyTorch's out= variants are not listed).
"""

from __future__ import annotations

LOWER, FP32, PROMOTE, NATIVE = "lower", "fp32", "promote", "native"

_CONVOLUTIONS = (
    "convolution",  # the primitives, for their callers inside tocha
    "convolution_transpose",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)
_PRODUCTS = ("matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "linear")
_FFT = (
    "fft_fft",
    "fft_ifft",
    "fft_fft2",
    "fft_ifft2",
    "fft_fftn",
    "fft_ifftn",
    "fft_rfft",
    "fft_irfft",
    "fft_rfft2",
    "fft_irfft2",
    "fft_rfftn",
    "fft_irfftn",
    "fft_hfft",
    "fft_ihfft",
)
_LOSSES = (
    "mse_loss",
    "cosine_embedding_loss",
    "nll_loss",
    "hinge_embedding_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "cross_entropy_loss",
    "l1_loss",
    "huber_loss",
    "margin_ranking_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "ctc_loss",
    "kl_div",
    "multilabel_margin_loss",
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy",
)

# PyTorch's native ops that tocha composes of listed ones: they must not cast inside.
_NATIVE = ("mv", "dot", "addmv", "bilinear", "adaptive_avg_pool1d", "adaptive_avg_pool2d")

CPU = {
    **dict.fromkeys(
        _CONVOLUTIONS
        + _PRODUCTS
        + (
            "conv_tbc",
            "linalg_vecdot",
            "prelu",
            "scaled_dot_product_attention",
            "rnn_layer",
            "einsum",  # a contraction (PyTorch's runs a bmm); a mere product is "einsum_product"
        ),
        LOWER,
    ),
    **dict.fromkeys(
        _LOSSES
        + _FFT
        + (
            "avg_pool3d",
            "grid_sample",
            "polar",
            "prod",
            "quantile",
            "nanquantile",
            "stft",
            "cdist",
            "trace",
            "view_as_complex",
            "cholesky",
            "cholesky_inverse",
            "cholesky_solve",
            "inverse",
            "lu_solve",
            "orgqr",
            "ormqr",
            "pinverse",
            "max_pool3d",
            "max_unpool2d",
            "max_unpool3d",
            "adaptive_avg_pool3d",
            "reflection_pad1d",
            "reflection_pad2d",
            "replication_pad1d",
            "replication_pad2d",
            "replication_pad3d",
            "linalg_cond",
            "linalg_matrix_rank",
            "linalg_solve",
            "linalg_cholesky",
            "linalg_svdvals",
            "linalg_eigvals",
            "linalg_eigvalsh",
            "linalg_inv",
            "linalg_householder_product",
            "linalg_tensorinv",
            "linalg_tensorsolve",
            "geqrf",
            "lu",
            "qr",
            "svd",
            "triangular_solve",
            "fractional_max_pool2d",
            "fractional_max_pool3d",
            "adaptive_max_pool3d",
            "linalg_qr",
            "linalg_cholesky_ex",
            "linalg_svd",
            "linalg_eig",
            "linalg_eigh",
            "linalg_lstsq",
            "linalg_inv_ex",
        ),
        FP32,
    ),
    **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
    **dict.fromkeys(_NATIVE, NATIVE),
}

CUDA = {
    **dict.fromkeys(
        _CONVOLUTIONS
        + _PRODUCTS
        + (
            "addmv",
            "mv",
            "prelu",
            "scaled_dot_product_attention",
            "rnn_layer",
            "einsum",
            "einsum_product",
        ),
        LOWER,
    ),
    **dict.fromkeys(
        _LOSSES
        + (
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
            "cdist",
        ),
        FP32,
    ),
    **dict.fromkeys(
        (
            "atan2",
            "bilinear",
            "cat",
            "stack",
            "index_put",
            "scatter_add",
            "tensordot",
            "dot",
            "grid_sample",
        ),
        PROMOTE,
    ),
    **dict.fromkeys(("adaptive_avg_pool1d", "adaptive_avg_pool2d"), NATIVE),
}


def policy_for(device_type: str) -> dict:
    """The op list of a device type: the CPU's for ``cpu``, CUDA's for any other."""
    return CPU if device_type == "cpu" else CUDA
