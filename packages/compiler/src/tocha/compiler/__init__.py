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
from ._state import STANCES, Disabled, config, stance
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
    "set_stance",
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


class set_stance:  # noqa: N801 - a function in PyTorch, usable as a context manager too
    """Set how compiled functions behave from now on (or for a ``with`` block, or for each
    call of a decorated function): ``"default"``; ``"force_eager"``, running their original
    code; ``"eager_on_recompile"``, running eagerly where they would compile again;
    ``"fail_on_recompile"``, raising RuntimeError there. `skip_guard_eval_unsafe` and
    `force_backend` are accepted (tocha's guards are cheap; one backend per function)."""

    def __init__(
        self,
        stance: str = "default",
        *,
        skip_guard_eval_unsafe: bool = False,
        force_backend: Any = None,
    ) -> None:
        if stance not in STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        self.previous = _stance_now()
        self.stance = stance
        _set_stance(stance)

    def __enter__(self) -> None:
        _set_stance(self.stance)

    def __exit__(self, *exc: object) -> None:
        _set_stance(self.previous)

    def __call__(self, fn: Callable) -> Callable:
        _set_stance(self.previous)  # as a decorator the stance holds inside calls only
        import functools

        @functools.wraps(fn)
        def with_stance(*args: Any, **kwargs: Any) -> Any:
            before = _stance_now()
            _set_stance(self.stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_stance(before)

        return with_stance


def _stance_now() -> str:
    return stance[0]


def _set_stance(value: str) -> None:
    was_forced = stance[0] == "force_eager"
    stance[0] = value
    # compiled functions' guards read ``disable`` on every call: force_eager sets it
    if value == "force_eager" and not was_forced:
        _disable_before[0] = config.disable
        config.disable = True
    elif was_forced and value != "force_eager":
        config.disable = _disable_before[0]


_disable_before = [False]
