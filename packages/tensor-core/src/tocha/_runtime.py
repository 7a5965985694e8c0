"""Process-wide settings that PyTorch programs set at their start: `compile`, deterministic
algorithms, float32 matmul precision, BLAS threads and the default device.

tocha runs eagerly on NumPy, whose matmuls are always full float32 and deterministic: the
flags are kept and reported back, so programs that set them run unchanged. The thread count
really limits NumPy's BLAS pool (through threadpoolctl, imported on first use).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import _device
from ._backend import resolve_device

__all__ = [
    "compile",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    "set_num_threads",
    "get_num_threads",
    "set_default_device",
    "get_default_device",
    "get_device_module",
]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_PRECISIONS = ("highest", "high", "medium")
# The flags, read by tocha.backends too (``backends.cuda.matmul.allow_tf32`` is "not highest").
STATE = {
    "deterministic": False,
    "warn_only": False,
    "precision": "highest",
    "threads": None,
    "blas_pool": None,
}


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend=None,
    mode: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    disable: bool = False,
    **kwargs,
) -> Callable:
    """`model` compiled, as ``torch.compile``: with tocha-compiler installed, a module comes
    back as an ``OptimizedModule`` holding it as ``_orig_mod`` (state dict keys start with
    ``_orig_mod.``) and a function as a compiled callable, which capture each call's kernels
    (forward and backward) and replay them without per-op dispatch, with elementwise chains
    fused. `backend` names a compile backend (``"inductor"``, the default; ``"aot_eager"``,
    ``"eager"``; or one another distribution declares in the ``tocha.compile_backends``
    entry-point group) or is a callable ``backend(gm, example_inputs)``. Without
    tocha-compiler, or with ``disable=True``, `model` itself runs eagerly. Used as
    ``@compile(...)`` without `model`, returns a decorator.

    Example:
        >>> model = tocha.compile(tocha.nn.Linear(2, 2), mode="max-autotune")
    """
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode)
    if model is None:
        return lambda fn: compile(fn, options=options, disable=disable, **settings)
    if not callable(model):
        raise RuntimeError("model must be a callable")
    if disable:
        return model
    try:
        import tocha.compiler as compiler  # tocha-compiler, when installed
    except ImportError:
        return model
    return compiler.compile(model, **settings)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (tocha's CPU kernels always are)."""
    STATE["deterministic"], STATE["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether `use_deterministic_algorithms(True)` was called."""
    return STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic algorithms were asked for with ``warn_only=True``."""
    return STATE["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matmuls: ``"highest"``, ``"high"`` or
    ``"medium"`` (recorded; NumPy's matmuls are always full float32)."""
    if precision not in _PRECISIONS:
        raise RuntimeError(f"{precision} is not one of 'highest', 'high', or 'medium'")
    STATE["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision set last (``"highest"`` by default)."""
    return STATE["precision"]


def set_num_threads(num: int) -> None:
    """Limit the threads of NumPy's BLAS (OpenBLAS, MKL or BLIS) to `num`."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=num, user_api="blas")
    STATE["threads"] = num


def get_num_threads() -> int:
    """The threads tocha's kernels use (NumPy's BLAS, tocha-compiler's kernels): the last
    `set_num_threads`, else what NumPy's BLAS pool had when first asked (its size follows
    OMP_NUM_THREADS / OPENBLAS_NUM_THREADS)."""
    if STATE["threads"] is None:
        if STATE["blas_pool"] is None:
            from threadpoolctl import threadpool_info

            counts = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
            STATE["blas_pool"] = max(counts) if counts else (os.cpu_count() or 1)
        return STATE["blas_pool"]
    return STATE["threads"]


def set_default_device(device) -> None:
    """Where factories (``zeros``, ``tensor``, ``randn``...) and so layers' parameters put
    tensors when no device is given; None restores the CPU."""
    _device.DEFAULT = _device.CPU if device is None else resolve_device(device)


def get_default_device() -> _device.device:
    """The device `set_default_device` set (the CPU by default)."""
    return _device.DEFAULT


def get_device_module(device=None):
    """The module of a device type (``tocha.cuda`` for ``"cuda"``, ``tocha.cpu`` for the CPU,
    ``tocha.<type>`` for a backend's own); without `device`, the current accelerator's, or
    ``tocha.cpu`` when there is none.

    Example:
        >>> tocha.get_device_module("cpu").device_count()
        1
    """
    import importlib
    import sys

    if device is None:
        from . import accelerator

        current = accelerator.current_accelerator()
        name = "cpu" if current is None else current.type
    elif isinstance(device, (_device.device, str)):
        name = _device.device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = sys.modules.get(f"tocha.{name}")
    if module is None:
        try:
            module = importlib.import_module(f"tocha.{name}")
        except ModuleNotFoundError:
            module = None
    if module is None or name == "meta":
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'."
        )
    return module
