"""The chi-squared distribution, a Gamma of half its degrees of freedom."""

from __future__ import annotations

from numbers import Number

import tocha

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2); batch shape of `df`."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Number):
            df = tocha.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
