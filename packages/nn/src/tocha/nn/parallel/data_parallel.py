"""`DataParallel` and `data_parallel`, as ``torch.nn.parallel.data_parallel``: on tocha's one
device they run the module as it is."""

from __future__ import annotations

from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps `module` as ``torch.nn.DataParallel`` does; tocha replicates nothing, so forward
    is the module's own forward on its device.

    Args:
        module: the module to run.
        device_ids: the devices PyTorch would scatter over (recorded only).
        output_device: where PyTorch would gather outputs (recorded only).
        dim: the batch dimension PyTorch would scatter along (recorded only).

    Example:
        >>> model = DataParallel(tocha.nn.Linear(4, 2))
        >>> model(tocha.randn(8, 4)).shape
        tocha.Size([8, 2])
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids=None,
    output_device=None,
    dim: int = 0,
    module_kwargs: dict | None = None,
) -> Any:
    """``module(*inputs, **module_kwargs)``: the functional form of `DataParallel`."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
