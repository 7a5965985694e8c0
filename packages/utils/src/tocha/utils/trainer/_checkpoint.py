"""Random states for checkpoints: tocha's default generator, the train loader's generator,
Python's ``random`` and NumPy's global generator, as values `tocha.load` rebuilds with
``weights_only=True``."""

from __future__ import annotations

import random

import numpy as np

import tocha

__all__ = ["get_rng_states", "set_rng_states"]


def get_rng_states(loader) -> dict:
    """Every random state a training run draws from (see module doc)."""
    np_state = np.random.get_state(legacy=False)
    generator = getattr(loader, "generator", None)
    return {
        "tocha": tocha.get_rng_state(),
        "loader": None if generator is None else generator.get_state(),
        "python": random.getstate(),
        "numpy": {
            "key": np_state["state"]["key"].tolist(),
            "pos": int(np_state["state"]["pos"]),
            "has_gauss": int(np_state["has_gauss"]),
            "gauss": float(np_state["gauss"]),
        },
    }


def set_rng_states(states: dict, loader) -> None:
    """Restore what `get_rng_states` returned."""
    tocha.set_rng_state(states["tocha"])
    generator = getattr(loader, "generator", None)
    if generator is not None and states["loader"] is not None:
        generator.set_state(states["loader"])
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    np_state = states["numpy"]
    np.random.set_state(
        (
            "MT19937",
            np.array(np_state["key"], dtype=np.uint32),
            np_state["pos"],
            np_state["has_gauss"],
            np_state["gauss"],
        )
    )
