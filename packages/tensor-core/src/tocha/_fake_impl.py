"""Fake (meta) kernels of custom operators: `get_ctx` and the context it returns, with
which a fake kernel makes sizes that only the real kernel knows."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

__all__ = ["FakeImplCtx", "get_ctx", "run_fake", "run_fake_with"]


class FakeImplCtx:
    """What `get_ctx` returns inside a fake kernel: `new_dynamic_size` gives an output size
    that depends on the input's values."""

    def __init__(self) -> None:
        self.dynamic = False

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> int:  # noqa: A002
        """A size only the real kernel knows (the nonzero count...): an int at least `min`
        (and at most `max`)."""
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be >= 0")
        if max is not None and max < min:
            raise ValueError(
                f"ctx.new_dynamic_size(min={min}, max={max}): expected min to be <= max"
            )
        self.dynamic = True
        size = builtins.max(min, 2)
        return size if max is None else builtins.min(size, max)

    new_unbacked_symint = new_dynamic_size


_CTX: list[FakeImplCtx] = []


def get_ctx() -> FakeImplCtx | None:
    """Inside a fake kernel, its context (`FakeImplCtx`); None elsewhere."""
    return _CTX[-1] if _CTX else None


def run_fake(op, *args, **kwargs) -> Any:
    """Run `op`'s fake kernel with a fresh `get_ctx()` context."""
    return run_fake_with(op.fake, FakeImplCtx(), args, kwargs)


def run_fake_with(fake: Callable, ctx: FakeImplCtx, args, kwargs) -> Any:
    """Run the fake kernel `fake` with `ctx` as `get_ctx()`."""
    _CTX.append(ctx)
    try:
        return fake(*args, **kwargs)
    finally:
        _CTX.pop()
