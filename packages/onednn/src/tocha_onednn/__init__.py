"""tocha-onednn: oneDNN's CPU kernels for tocha, as a kernel provider.

Installed, it serves tocha-nn's convolutions (forward, backward-data, backward-weights, 1 to
3 spatial dims, transposed), max and average pooling, layer norm, group norm and training
batch norm, softmax and log_softmax, GELU, and the recurrent layers (RNN, LSTM, GRU),
forward and backward, tocha's ``erf``, matrix products (``matmul`` and ``linear`` where they
are large enough to repay a call) and ``linear_pointwise`` (a linear map with its activation
fused), on the CPU through oneDNN's C API (``libdnnl`` from the onednn-cpu-gomp wheel, bound
with ctypes). The entry point `register` is cheap: oneDNN loads on the first call of an op
it serves. Calls it does not support (not float32, a shape oneDNN refuses) run tocha's
built-in kernels.
``TOCHA_KERNEL_PROVIDERS_DISABLE=onednn`` or
``tocha.backends.set_kernel_provider_enabled("onednn", False)`` turns it off.
"""

from __future__ import annotations

from typing import Any

from tocha.backends import KernelProvider

from ._version import __version__

__all__ = ["OneDNN", "register", "__version__"]

# op name -> (module, kernel factory name): each factory takes the built-in kernel.
KERNELS = {
    "convolution": ("_conv", "convolution"),
    "convolution_transpose": ("_conv", "convolution_transpose"),
    "convolution_backward_weight": ("_conv", "convolution_backward_weight"),
    "native_layer_norm": ("_norm", "layer_norm"),
    "native_layer_norm_backward": ("_norm", "layer_norm_backward"),
    "native_batch_norm": ("_norm", "batch_norm"),
    "native_batch_norm_backward": ("_norm", "batch_norm_backward"),
    "native_group_norm": ("_norm", "group_norm"),
    "native_group_norm_backward": ("_norm", "group_norm_backward"),
    "max_pool": ("_pool", "max_pool"),
    "avg_pool": ("_pool", "avg_pool"),
    "avg_pool_backward": ("_pool", "avg_pool_backward"),
    "rnn_layer": ("_rnn", "rnn_layer"),
    "rnn_layer_backward": ("_rnn", "rnn_layer_backward"),
    "linear_pointwise": ("_matmul", "linear_pointwise"),
    "linear": ("_matmul", "linear"),
    "matmul": ("_matmul", "matmul"),
    "softmax": ("_softmax", "softmax"),
    "gelu": ("_eltwise", "gelu"),
    "erf": ("_erf", "erf"),
    "gelu_backward": ("_eltwise", "gelu_backward"),
    "log_softmax": ("_softmax", "log_softmax"),
    "softmax_backward_data": ("_softmax", "softmax_backward"),
    "log_softmax_backward_data": ("_softmax", "log_softmax_backward"),
}


class OneDNN(KernelProvider):
    """The oneDNN kernel provider of the CPU."""

    name = "onednn"
    device_type = "cpu"
    priority = 10
    ops = frozenset(KERNELS)

    def kernel(self, op: Any, fallback):
        """oneDNN's kernel of `op`, handing the calls it declines to `fallback`."""
        import importlib

        module, factory = KERNELS[op.name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), factory)(fallback)


def register() -> OneDNN:
    """The ``tocha.kernels`` entry point: the provider (oneDNN is not loaded yet)."""
    return OneDNN()
