"""DCP's `save` and `load`: a state dict (nested dicts and lists of tensors and plain values,
and `Stateful` objects) written by the ranks together into a folder, and read back in place.

Every rank calls them with its state dict. Tensors are replicated, as with
DistributedDataParallel: rank 0 writes the items and every rank reads them, so a checkpoint
saved by N ranks loads on any number of ranks, or in one process without a process group.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import tocha

from .._collectives import barrier
from .._group import get_rank, get_world_size, is_initialized
from .._objects import all_gather_object
from ._filesystem import METADATA, FileSystemReader, FileSystemWriter, Metadata, data_file
from .api import CheckpointException
from .stateful import Stateful

__all__ = ["load", "load_state_dict", "save", "save_state_dict"]


def _flatten(state: Any, prefix: str, out: dict[str, Any]) -> None:
    """``{"model": {"w": t}}`` into ``{"model.w": t}`` (list items by their index)."""
    if isinstance(state, dict):
        for key, value in state.items():
            _flatten(value, f"{prefix}{key}.", out)
    elif isinstance(state, list) and any(isinstance(v, (dict, list, tocha.Tensor)) for v in state):
        for i, value in enumerate(state):
            _flatten(value, f"{prefix}{i}.", out)
    else:
        out[prefix[:-1]] = state


def _resolve(state_dict: dict[str, Any]) -> dict[str, Any]:
    """`state_dict` with each `Stateful` value replaced by its state dict."""
    return {k: v.state_dict() if isinstance(v, Stateful) else v for k, v in state_dict.items()}


def _distributed(process_group, no_dist: bool) -> bool:
    if no_dist:
        return False
    if not is_initialized():
        warnings.warn(
            "torch.distributed is disabled, unavailable or uninitialized, assuming the intent "
            "is to save in a single process.",
            stacklevel=3,
        )
        return False
    return True


def _folder(checkpoint_id, store, kind: str):
    if store is not None:
        return store
    if checkpoint_id is None:
        raise RuntimeError(f"`checkpoint_id` must be specified if storage_{kind} is None.")
    return FileSystemWriter(checkpoint_id) if kind == "writer" else FileSystemReader(checkpoint_id)


def _describe(value) -> dict[str, Any]:
    if isinstance(value, tocha.Tensor):
        return {"kind": "tensor", "shape": list(value.shape), "dtype": str(value.dtype)}
    return {"kind": "bytes"}


def save(
    state_dict: dict[str, Any],
    *,
    checkpoint_id: str | os.PathLike | None = None,
    storage_writer=None,
    planner=None,
    process_group=None,
    no_dist: bool = False,
    use_collectives: bool = True,
) -> Metadata:
    """Save `state_dict` into the folder `checkpoint_id` (or `storage_writer`'s), every rank
    together; returns the checkpoint's `Metadata`.

    Example::

        >>> dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")
    """
    writer = _folder(checkpoint_id, storage_writer, "writer")
    distributed = _distributed(process_group, no_dist)
    rank = get_rank(process_group) if distributed else 0
    flat: dict[str, Any] = {}
    _flatten(_resolve(state_dict), "", flat)
    writer.path.mkdir(parents=True, exist_ok=True)
    mine = flat if rank == 0 else {}
    tocha.save(mine, writer.path / data_file(rank))
    metadata = Metadata(
        {key: _describe(value) for key, value in flat.items()},
        {key: data_file(0) for key in flat},
    )
    if rank == 0:
        tocha.save(metadata, writer.path / METADATA)
    if distributed:
        barrier(process_group)
    return metadata


def _load_into(state: Any, prefix: str, items: dict[str, Any]) -> Any:
    """`state` with its items replaced by (tensors: copied in place from) those of `items`."""
    if isinstance(state, dict):
        for key in list(state):
            state[key] = _load_into(state[key], f"{prefix}{key}.", items)
        return state
    if isinstance(state, list) and any(isinstance(v, (dict, list, tocha.Tensor)) for v in state):
        for i in range(len(state)):
            state[i] = _load_into(state[i], f"{prefix}{i}.", items)
        return state
    key = prefix[:-1]
    if key not in items:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
    saved = items[key]
    if isinstance(state, tocha.Tensor):
        if not isinstance(saved, tocha.Tensor) or saved.shape != state.shape:
            shape = list(saved.shape) if isinstance(saved, tocha.Tensor) else type(saved).__name__
            raise RuntimeError(
                f"Size mismatch for {key}: the checkpoint holds {shape}, the state dict "
                f"{list(state.shape)}"
            )
        with tocha.no_grad():
            state.copy_(saved)
        return state
    return saved


def load(
    state_dict: dict[str, Any],
    *,
    checkpoint_id: str | os.PathLike | None = None,
    storage_reader=None,
    planner=None,
    process_group=None,
    no_dist: bool = False,
) -> None:
    """Load the checkpoint in the folder `checkpoint_id` (or `storage_reader`'s) into
    `state_dict`, in place: its tensors are copied into, its other values replaced, and its
    `Stateful` values given their state with ``load_state_dict``. Every key of `state_dict`
    must be in the checkpoint; the checkpoint may hold more. When a rank fails (a missing
    key, no checkpoint), every rank raises `CheckpointException` naming each failure.

    Example::

        >>> state = {"model": model.state_dict()}
        >>> dcp.load(state, checkpoint_id="ckpt")
        >>> model.load_state_dict(state["model"])
    """
    reader = _folder(checkpoint_id, storage_reader, "reader")
    distributed = _distributed(process_group, no_dist)
    error = None
    try:
        metadata = reader.read_metadata()
        items: dict[str, Any] = {}
        for name in sorted(set(metadata.storage_data.values())):
            items.update(tocha.load(reader.path / name, weights_only=False))
        wanted: dict[str, Any] = {}
        _flatten(_resolve(state_dict), "", wanted)
        missing = [key for key in wanted if key not in items]
        if missing:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {missing[0]}.")
    except Exception as exc:  # noqa: BLE001 - every rank learns of every rank's failure
        error = exc
    _raise_failures(error, distributed, process_group)
    for key, value in state_dict.items():
        if isinstance(value, Stateful):
            value.load_state_dict(_load_into(value.state_dict(), f"{key}.", items))
        else:
            state_dict[key] = _load_into(value, f"{key}.", items)
    if distributed:
        barrier(process_group)


def _raise_failures(error: BaseException | None, distributed: bool, process_group) -> None:
    """Raise `CheckpointException` on every rank when any rank failed."""
    if distributed:
        errors = [None] * get_world_size(process_group)
        all_gather_object(errors, error, group=process_group)
    else:
        errors = [error]
    failures = {rank: exc for rank, exc in enumerate(errors) if exc is not None}
    if failures:
        raise CheckpointException("CheckpointException", failures)


def save_state_dict(
    state_dict: dict[str, Any],
    storage_writer,
    process_group=None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner=None,
) -> Metadata:
    """The older spelling of `save`, with the storage writer given."""
    warnings.warn(
        "'save_state_dict' is deprecated and will be removed in future versions. "
        "Please use 'save' instead.",
        FutureWarning,
        stacklevel=2,
    )
    return save(
        state_dict, storage_writer=storage_writer, process_group=process_group, no_dist=no_dist
    )


def load_state_dict(
    state_dict: dict[str, Any],
    storage_reader,
    process_group=None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner=None,
) -> None:
    """The older spelling of `load`, with the storage reader given."""
    warnings.warn(
        "'load_state_dict' is deprecated and will be removed in future versions. "
        "Please use 'load' instead.",
        FutureWarning,
        stacklevel=2,
    )
    load(state_dict, storage_reader=storage_reader, process_group=process_group, no_dist=no_dist)
