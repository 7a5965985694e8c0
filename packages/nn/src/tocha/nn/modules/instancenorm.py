"""Instance normalization layers, as ``torch.nn.modules.instancenorm``:
InstanceNorm1d/2d/3d and their lazy forms."""

from __future__ import annotations

import warnings

from tocha import Tensor

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _InstanceNorm(_NormBase):
    """Normalize each channel of each sample over its spatial dims (unbatched inputs too)."""

    _spatial = 0

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
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
        """Checkpoints from before running statistics were optional may hold them though
        this layer does not track them: report and drop them."""
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {} for {} with track_running_stats="
                    "False. If state_dict is a checkpoint saved before 0.4.0, this may be "
                    "expected because {} does not track running stats by default since "
                    "0.4.0. Please remove these keys from state_dict. If the running stats "
                    "are actually needed, instead set track_running_stats=True in {} to enable "
                    "them. See the documentation of {} for details.".format(
                        " and ".join(f'"{k}"' for k in keys), klass, klass, klass, klass
                    )
                )
                for key in keys:
                    state_dict.pop(key)
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

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(
                f"expected {self._spatial + 1}D or {self._spatial + 2}D input "
                f"(got {input.dim()}D input)"
            )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - (self._spatial + 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match "
                    f"num_features ({self.num_features}), but got: "
                    f"{input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You "
                "can silence this warning by not passing in num_features, which is "
                "not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._spatial + 1:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` or ``(C, L)`` inputs.

    Example:
        >>> nn.InstanceNorm1d(100)(tocha.randn(20, 100, 40)).shape
        torch.Size([20, 100, 40])
    """

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    _spatial = 3


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An `InstanceNorm1d` whose `num_features` is inferred from dim 1 of its first input
    (as PyTorch, dim 1 even of an unbatched input). Unlike `InstanceNorm1d`, `affine` and
    `track_running_stats` default to True."""

    cls_to_become = InstanceNorm1d
    _spatial = 1


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An `InstanceNorm2d` whose `num_features` is inferred from its first input."""

    cls_to_become = InstanceNorm2d
    _spatial = 2


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An `InstanceNorm3d` whose `num_features` is inferred from its first input."""

    cls_to_become = InstanceNorm3d
    _spatial = 3
