"""Batch normalization layers, as ``torch.nn.modules.batchnorm``: BatchNorm1d/2d/3d, their
lazy forms, and SyncBatchNorm."""

from __future__ import annotations

import sys

import tocha
from tocha import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]


class _NormBase(Module):
    """What batch and instance normalization share: the affine parameters, the running
    statistics (``running_mean``, ``running_var``, ``num_batches_tracked``) and the repr."""

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(tocha.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(tocha.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", tocha.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", tocha.ones(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "num_batches_tracked", tocha.tensor(0, dtype=tocha.long, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean zeros, running variance ones, no batches tracked."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight ones, bias zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
        *args,
    ) -> None:
        """Checkpoints older than version 2 have no ``num_batches_tracked``: keep ours."""
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = (
                self.num_batches_tracked
                if self.num_batches_tracked is not None
                else tocha.tensor(0, dtype=tocha.long)
            )
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
            *args,
        )


class _BatchNorm(_NormBase):
    """Batch normalization: batch statistics in training (blended into the running ones,
    with `momentum`, or a cumulative average when it is None), running statistics in eval."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )


def _dims_error(input: Tensor, expected: str) -> ValueError:
    return ValueError(f"expected {expected} input (got {input.dim()}D input)")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs over all but dim 1.

    Example:
        >>> nn.BatchNorm1d(100)(tocha.randn(20, 100)).shape
        torch.Size([20, 100])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise _dims_error(input, "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs over all but dim 1."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise _dims_error(input, "4D")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` inputs over all but dim 1."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise _dims_error(input, "5D")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A normalization layer whose `num_features` is inferred from dim 1 of its first input;
    it then becomes its non-lazy class."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, bias=bias)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tocha.tensor(0, dtype=tocha.long, device=device)

    def reset_parameters(self) -> None:
        """As the non-lazy class's, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Take `num_features` from ``input.shape[1]`` and materialize the parameters and
        running statistics."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with tocha.no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                tensor = getattr(self, name)
                if tensor is not None:
                    tensor.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A `BatchNorm1d` whose `num_features` is inferred from its first input.

    Example:
        >>> m = nn.LazyBatchNorm1d()
        >>> m(tocha.randn(20, 100)).shape, m.num_features
        (torch.Size([20, 100]), 100)
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A `BatchNorm2d` whose `num_features` is inferred from its first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A `BatchNorm3d` whose `num_features` is inferred from its first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over inputs of any rank from 2 (``(N, C, *)``) whose statistics,
    in training, are those of the whole batch across the processes of `process_group`.

    Within one process (no process group initialized, or one of a single process), and in
    eval mode, it is exactly a `BatchNorm`. Training across several processes is refused, as
    PyTorch refuses it on the CPU (ValueError); tocha does not synchronize statistics across
    processes on other devices either (NotImplementedError).
    `convert_sync_batchnorm` turns a model's batch norms into SyncBatchNorm.

    Example:
        >>> nn.SyncBatchNorm(100)(tocha.randn(20, 100, 35, 45)).shape
        torch.Size([20, 100, 35, 45])
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if self.training and _world_size(self.process_group) > 1:
            if input.device.type == "cpu":
                raise ValueError(
                    "SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"
                )
            raise NotImplementedError(
                "tocha's SyncBatchNorm does not synchronize batch statistics across "
                "processes; train with BatchNorm in each process, or in one process"
            )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every batch norm layer in it (`module` itself included) replaced by
        a SyncBatchNorm sharing its parameters, running statistics and training mode."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


def _world_size(group) -> int:
    """The number of processes in `group` (or the default group), 1 without an initialized
    process group. tocha-distributed comes after tocha-nn: only if a program has imported it
    can a group be initialized."""
    dist = sys.modules.get("tocha.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size(group)
