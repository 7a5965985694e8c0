"""Parameters as one flat vector and back, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

import tocha
from tocha import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, device):
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return device


def parameters_to_vector(parameters) -> Tensor:
    """All `parameters` flattened and concatenated into one 1-D tensor."""
    device = None
    vec = []
    for param in parameters:
        device = _check_device(param, device)
        vec.append(param.reshape(-1))
    return tocha.cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-D `vec` into `parameters`."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    with tocha.no_grad():
        for param in parameters:
            device = _check_device(param, device)
            n = param.numel()
            param.copy_(vec[pointer : pointer + n].view_as(param))
            pointer += n
