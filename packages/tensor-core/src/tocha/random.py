"""`tocha.random`: the default generator's seed and state as functions, and `fork_rng`, as
`torch.random`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._ops.random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Run the block on a fork of the random state: the default CPU generator's state (and,
    where the `device_type` module, by default the current accelerator's, keeps per-device
    states, those of `devices`, by default all) is restored when the block ends, however it
    ends. `enabled=False` makes it a plain block.

    Example:
        >>> with tocha.random.fork_rng():
        ...     noise = tocha.randn(3)   # the stream after the block is as before it
    """
    if not enabled:
        yield
        return
    from ._runtime import get_device_module

    module = get_device_module(device_type)  # None: the accelerator's, or tocha.cpu
    per_device = module.__name__ != "tocha.cpu" and hasattr(module, "get_rng_state")
    per_device = per_device and module.is_available()
    if per_device and devices is None:
        devices = range(module.device_count())
    device_states = [(d, module.get_rng_state(d)) for d in devices] if per_device else []
    cpu_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in device_states:
            module.set_rng_state(state, d)
