"""``tocha.distributed.device_mesh``, as ``torch.distributed.device_mesh``: `DeviceMesh`, the
n-dimensional grid of ranks that distributed tensors are laid out over. tocha does not lay
tensors out over meshes yet: making one raises NotImplementedError."""

from __future__ import annotations

__all__ = ["DeviceMesh", "init_device_mesh"]

_MISSING = "torch.distributed.device_mesh.DeviceMesh is not in tocha yet"


class DeviceMesh:
    """A grid of ranks: not in tocha yet; constructing one raises NotImplementedError."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError(_MISSING)


def init_device_mesh(device_type: str, mesh_shape, **kwargs) -> DeviceMesh:
    """A `DeviceMesh` over the world's ranks: not in tocha yet, raises NotImplementedError."""
    raise NotImplementedError(_MISSING)
