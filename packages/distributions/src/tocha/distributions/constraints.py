"""Constraints: the sets a parameter or a sample must lie in. Each has `check(value)`, a
boolean tensor of `value`'s batch shape (`value.shape` less the constraint's `event_dim`
rightmost dimensions), True where the value satisfies it."""

from __future__ import annotations

from typing import Any

import tocha

from .utils import _format

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A region over which a variable is valid. `is_discrete` says whether the region is
    discrete; `event_dim` is the number of rightmost dimensions that form one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value: tocha.Tensor) -> tocha.Tensor:
        """A boolean tensor of shape `value.shape[:value.dim() - event_dim]`."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


def _all_last(value: tocha.Tensor, ndims: int) -> tocha.Tensor:
    """`value` reduced with `all` over its `ndims` rightmost dimensions."""
    for _ in range(ndims):
        value = value.all(-1)
    return value


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (a Binomial's
    support depends on its total count): it cannot check values."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        """A dependent constraint with the given static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether `constraint` is a dependent constraint (a :data:`dependent` one)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property of a distribution whose value is a constraint depending on its
    parameters; on the class it stands as a dependent constraint."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):  # type: ignore[override]
        """Used as a decorator with arguments: ``@dependent_property(event_dim=1)``."""
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with its `reinterpreted_batch_ndims` rightmost batch dimensions
    made part of the event: a value is valid when all its entries there are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"Expected a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                "reinterpreted_batch_ndims must be a non-negative int, "
                f"got {reinterpreted_batch_ndims!r}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        return _all_last(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (
            f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(Constraint):
    """The support of a mixture: its component distribution's support, checked over the
    component dimension as well."""

    def __init__(self, base_constraint: Constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"Expected a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value):
        """`value` has the mixture's sample shape; the component dimension sits just left
        of the event dimensions."""
        unsqueezed = value.unsqueeze(-1 - self.event_dim)
        return self.base_constraint.check(unsqueezed).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """Values 0 and 1."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors: zeros and ones summing to one over the last dimension."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _IntegerInterval(Constraint):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)}, "
            f"upper_bound={_format(self.upper_bound)})"
        )


class _IntegerLessThan(Constraint):
    """Integers <= upper_bound."""

    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={_format(self.upper_bound)})"


class _IntegerGreaterThan(Constraint):
    """Integers >= lower_bound."""

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _Real(Constraint):
    """The extended real line, NaN excluded."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    """Reals > lower_bound."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _GreaterThanEq(Constraint):
    """Reals >= lower_bound."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _LessThan(Constraint):
    """Reals < upper_bound."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={_format(self.upper_bound)})"


class _Interval(Constraint):
    """Reals in [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)}, "
            f"upper_bound={_format(self.upper_bound)})"
        )


class _HalfOpenInterval(_Interval):
    """Reals in [lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors summing to one (within 1e-6) over the last dimension."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative count vectors whose total is at most upper_bound."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value):
        return _all_last(value.tril() == value, 2)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        lower = _all_last(value.tril() == value, 2)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky factors whose rows have
    unit Euclidean norm."""

    event_dim = 2

    def check(self, value):
        tol = tocha.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = tocha.linalg.vector_norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        return tocha.full(
            tuple(value.shape[:-2]),
            value.shape[-2] == value.shape[-1],
            dtype=tocha.bool,
            device=value.device,
        )


class _Symmetric(_Square):
    """Symmetric matrices (within an absolute tolerance of 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return _all_last(tocha.isclose(value, value.mT, atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return tocha.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorization."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return tocha.linalg.cholesky_ex(value).info.eq(0)


class _Cat(Constraint):
    """Constraints applied to consecutive slices along `dim`, of sizes `lengths` (one
    each by default), as `tocha.cat` joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("Expected a sequence of Constraints")
        if lengths is None:
            lengths = [1] * len(self.cseq)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(
                f"Expected {len(self.cseq)} lengths, one per constraint, got {len(self.lengths)}"
            )
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"Dimension out of range for a value of {value.dim()} dimensions")
        checks = []
        start = 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return tocha.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints applied to the slices of a value along `dim`, as `tocha.stack` joins
    them."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("Expected a sequence of Constraints")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"Dimension out of range for a value of {value.dim()} dimensions")
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return tocha.stack(
            [constraint.check(part) for constraint, part in zip(self.cseq, parts)], self.dim
        )


dependent: _Dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean: Constraint = _Boolean()
one_hot: Constraint = _OneHot()
nonnegative_integer: Constraint = _IntegerGreaterThan(0)
positive_integer: Constraint = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real: Constraint = _Real()
real_vector: Constraint = independent(real, 1)
positive: Constraint = _GreaterThan(0.0)
nonnegative: Constraint = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval: Constraint = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex: Constraint = _Simplex()
lower_triangular: Constraint = _LowerTriangular()
lower_cholesky: Constraint = _LowerCholesky()
corr_cholesky: Constraint = _CorrCholesky()
square: Constraint = _Square()
symmetric: Constraint = _Symmetric()
positive_semidefinite: Constraint = _PositiveSemidefinite()
positive_definite: Constraint = _PositiveDefinite()
cat = _Cat
stack = _Stack
