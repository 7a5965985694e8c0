"""What the tests of tests/onednn share: a provided kernel set beside its op's built-in one,
with a spy on the built-in kernel that the provided one falls back to."""

from __future__ import annotations

import numpy as np

from tocha.library import REGISTRY


class Spy:
    """A fallback kernel that records being called (a declined call) and runs the built-in."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.kernel(*args, **kwargs)


def provided(module, op_name: str, factory: str):
    """``(provided kernel, built-in kernel, spy)``: `module`'s kernel factory `factory` for
    op `op_name`, wrapping a spy of the op's generic NumPy kernel."""
    generic = REGISTRY[op_name].generic(np)
    spy = Spy(generic)
    return getattr(module, factory)(spy), generic, spy
