"""tocha.compiler: the compiler behind `tocha.compile`, with the API of ``torch.compiler``.

`tocha.compile(model)` (in tocha-core) hands the model to `compile` here when this
distribution is installed. A call of the result is *captured* once per guard key (shapes,
dtypes, devices, ``requires_grad``, grad mode, the module's parameters and training flags):
the program runs for real while every kernel it runs is recorded, with its backward when
gradients are needed. The graph is split into a forward and a backward function of direct
kernel calls (no dispatcher, no tape), with chains of elementwise kernels fused into kernels
generated for the call's device (numba on the CPU when installed, CUDA C through CuPy on
cuda). See docs/design.md, "The compiler".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._backends import list_backends
from ._frontend import compile_model, compiling, reset_all
from ._state import Disabled, config
from ._version import __version__

__all__ = [
    "__version__",
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "config",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "reset",
]


def compile(
    model: Callable,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
) -> Any:
    """`model` compiled (see `tocha.compile` for the arguments): a module comes back as an
    ``OptimizedModule`` holding it as ``_orig_mod``, a function as a callable."""
    if disable:
        return model
    return compile_model(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode)


def reset() -> None:
    """Forget every compiled entry of every compiled function: the next calls capture and
    compile again."""
    reset_all()


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Run `fn` (or, without `fn`, the block of a ``with``) without compiled code: compiled
    functions called inside run their original code."""
    if fn is None:
        return Disabled()

    def run_eagerly(*args: Any, **kwargs: Any) -> Any:
        with Disabled():
            return fn(*args, **kwargs)

    run_eagerly.__wrapped__ = fn  # type: ignore[attr-defined]
    return run_eagerly


def is_compiling() -> bool:
    """Whether the calling code runs inside a capture."""
    return compiling()


def is_dynamo_compiling() -> bool:
    """As `is_compiling`."""
    return compiling()


def is_exporting() -> bool:
    """Whether the calling code runs inside ``tocha.export``: never within tocha.compile."""
    return False


def allow_in_graph(fn: Callable) -> Callable:
    """`fn` unchanged: tocha's capture records the kernels any function runs."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """`fn` unchanged: its result is captured as the value of the call seen."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Marks the start of a step for CUDA graphs, which tocha does not use: does nothing."""
