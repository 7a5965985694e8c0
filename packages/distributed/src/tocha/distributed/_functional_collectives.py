"""``tocha.distributed._functional_collectives``, as PyTorch's module of that name: the
collectives that return their result. tocha's collectives finish before they return, so
there is nothing to wait for."""

from __future__ import annotations

import tocha

__all__ = ["wait_tensor", "all_to_all_single_autograd"]


def wait_tensor(tensor: tocha.Tensor) -> tocha.Tensor:
    """`tensor` once the collective that produced it has finished: tocha's collectives are
    synchronous, so `tensor` itself."""
    return tensor


def all_to_all_single_autograd(input, output_split_sizes, input_split_sizes, group, tag=""):
    """The differentiable all-to-all: not in tocha yet, raises NotImplementedError."""
    raise NotImplementedError(
        "torch.distributed._functional_collectives.all_to_all_single_autograd is not in tocha yet"
    )
