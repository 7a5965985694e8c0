"""Layout arithmetic of distributed tensors."""

from __future__ import annotations

from collections.abc import Sequence

from .placement_types import Placement, Shard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(
    global_shape: Sequence[int], mesh, placements: Sequence[Placement]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's piece of a tensor of `global_shape` laid out over `mesh` by `placements`
    (one per mesh dimension): its shape, and where it starts in the whole tensor. A rank
    outside the mesh (``mesh.get_coordinate()`` is None) holds nothing: ``((), ())``."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (), ()
    shape = list(global_shape)
    offset = [0] * len(shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, Shard):
            dim = placement.dim % len(shape)
            size, start = Shard.local_shard_size_and_offset(
                shape[dim], mesh.size(mesh_dim), coordinate[mesh_dim]
            )
            shape[dim] = size
            offset[dim] = global_shape[dim] if size == 0 else offset[dim] + start
    return tuple(shape), tuple(offset)
