"""``tocha.distributed.tensor``, as ``torch.distributed.tensor``: the placements of a
distributed tensor (`Shard`, `Replicate`, `Partial`), `DTensor` and `distribute_tensor`.

tocha does not lay tensors out over device meshes yet: no tensor is a `DTensor` (so
``isinstance(t, DTensor)`` is False for every tocha tensor), and making one
(`DTensor.from_local`, `distribute_tensor`) raises NotImplementedError. Libraries that
branch on ``isinstance(t, DTensor)`` and build placements run.
"""

from __future__ import annotations

import tocha
from tocha.library import disabled_torch_function_impl

from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_tensor"]

_MISSING = "torch.distributed.tensor.DTensor is not in tocha yet"


class DTensor(tocha.Tensor):
    """A tensor laid out over a device mesh (torch.distributed.tensor.DTensor): not in tocha
    yet, so there are none; constructing one raises NotImplementedError."""

    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_MISSING)

    @classmethod
    def from_local(cls, *args, **kwargs):
        """Not in tocha yet: raises NotImplementedError."""
        raise NotImplementedError(_MISSING)


def distribute_tensor(tensor, device_mesh=None, placements=None, **kwargs) -> DTensor:
    """Lay `tensor` out over `device_mesh`: not in tocha yet, raises NotImplementedError."""
    raise NotImplementedError(_MISSING)
