"""Argument and state-dict helpers that programs import from ``torch.nn.modules.utils``:
``_single``/``_pair``/``_triple``/``_quadruple`` (a size given once or per dim, as a tuple)
and `consume_prefix_in_state_dict_if_present` (strip a wrapper's key prefix, such as
DataParallel's ``module.``)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function making its argument an `n`-tuple: an iterable becomes a tuple of its
    items, anything else is repeated `n` times."""

    def parse(value) -> tuple:
        if isinstance(value, Iterable):
            return tuple(value)
        return (value,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Remove `prefix` from the keys of `state_dict` that start with it, in place (keys keep
    their values; a renamed key moves to the end). Its ``_metadata``, when present, is
    renamed the same way, the entry named `prefix` without its dots becoming ``""``."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.replace(".", "")
    for key in list(metadata.keys()):
        if key == bare or key.startswith(prefix):
            metadata[key[len(prefix) :]] = metadata.pop(key)
