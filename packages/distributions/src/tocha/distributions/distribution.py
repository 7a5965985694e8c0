"""The base class of every distribution: shapes, argument and sample validation, and the
methods a family overrides."""

from __future__ import annotations

import warnings
from typing import Any

import tocha

from . import constraints
from .utils import _EMPTY_SHAPE, _format, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution over events of shape `event_shape`, with independent
    parameters for each index of `batch_shape`. A sample of `sample_shape` has shape
    `sample_shape + batch_shape + event_shape`; `log_prob(value)` has shape
    `sample_shape + batch_shape`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument and sample validation on or off for distributions made later
        without an explicit `validate_args` (on by default, as Python's `__debug__`)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: tuple[int, ...] = _EMPTY_SHAPE,
        event_shape: tuple[int, ...] = _EMPTY_SHAPE,
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = tocha.Size(batch_shape)
        self._event_shape = tocha.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue  # a parameter not given, computed from another one
                value = getattr(self, param)
                if not tocha.is_tensor(value):
                    continue
                valid = constraint.check(value)
                if not valid.all():
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{_format(value)}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the parameters expanded (as views) to `batch_shape`."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> tocha.Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> tocha.Size:
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each parameter satisfies."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        """The constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> tocha.Tensor:
        """The mean, of shape `batch_shape + event_shape`."""
        raise NotImplementedError

    @property
    def mode(self) -> tocha.Tensor:
        """The mode, of shape `batch_shape + event_shape`."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> tocha.Tensor:
        """The variance, of shape `batch_shape + event_shape`."""
        raise NotImplementedError

    @property
    def stddev(self) -> tocha.Tensor:
        """The standard deviation: the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, sample_shape=_EMPTY_SHAPE) -> tocha.Tensor:
        """A sample of shape `sample_shape + batch_shape + event_shape`, without gradients."""
        with tocha.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY_SHAPE) -> tocha.Tensor:
        """A reparameterized sample: gradients flow to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> tocha.Tensor:
        """`n` samples: `sample((n,))` (deprecated)."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(tocha.Size((n,)))

    def log_prob(self, value: tocha.Tensor) -> tocha.Tensor:
        """The log of the density (or mass) at `value`, of shape `value`'s broadcast with
        `batch_shape + event_shape`, less `event_shape`."""
        raise NotImplementedError

    def cdf(self, value: tocha.Tensor) -> tocha.Tensor:
        """The cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value: tocha.Tensor) -> tocha.Tensor:
        """The inverse of the cumulative distribution function at `value`."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> tocha.Tensor:
        """Every value of a discrete support, along a new leftmost dimension (of shape
        `(cardinality,) + batch_shape + event_shape` when `expand`, else
        `(cardinality,) + (1,) * len(batch_shape) + event_shape`)."""
        raise NotImplementedError

    def entropy(self) -> tocha.Tensor:
        """The entropy, of shape `batch_shape`."""
        raise NotImplementedError

    def perplexity(self) -> tocha.Tensor:
        """exp(entropy)."""
        return tocha.exp(self.entropy())

    def _extended_shape(self, sample_shape=_EMPTY_SHAPE) -> tocha.Size:
        """`sample_shape + batch_shape + event_shape`."""
        if not isinstance(sample_shape, tocha.Size):
            sample_shape = tocha.Size(sample_shape)
        return tocha.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Any) -> None:
        """Raises ValueError unless `value` is a tensor whose rightmost dimensions are the
        event shape, that broadcasts with the batch shape and lies in the support."""
        if not isinstance(value, tocha.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        valid = support.check(value)
        if not valid.all():
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{_format(value)}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        """A bare instance for `expand` to fill in."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: "
            + (
                _format(self.__dict__[p])
                if self.__dict__[p].numel() == 1
                else str(self.__dict__[p].size())
            )
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"


def _expand_params(self, cls, batch_shape, _instance, params, copy=()):
    """`expand` for a distribution whose parameters (the attribute names `params`, those
    present) have shape `batch_shape + trailing`: each is expanded to the new batch shape
    with its trailing dimensions kept; the attributes `copy` are shared as they are."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = tocha.Size(batch_shape)
    for name in params:
        if name in self.__dict__:
            value = self.__dict__[name]
            trailing = tuple(value.shape[len(self._batch_shape) :])
            setattr(new, name, value.expand(tuple(batch_shape) + trailing))
    for name in copy:
        setattr(new, name, getattr(self, name))
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new
