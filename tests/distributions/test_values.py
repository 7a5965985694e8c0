"""Values of every distribution against torch.distributions: shapes, log_prob, entropy,
cdf/icdf, mean/mode/variance/stddev, support, enumerate_support and expand."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.distributions.cases import CASES, UNITS, t

ATTRIBUTES = ("mean", "mode", "variance", "stddev")
METHODS = ("log_prob", "cdf")


def _value(call):
    """The result as NumPy, or the exception's type name where the library raises
    NotImplementedError."""
    try:
        return np.asarray(call())
    except NotImplementedError:
        return "NotImplementedError"


def _describe(lib, name):
    build, points = CASES[name]
    dist = build(lib)
    result = {
        "batch_shape": tuple(dist.batch_shape),
        "event_shape": tuple(dist.event_shape),
        "has_rsample": bool(dist.has_rsample),
        "has_enumerate_support": bool(dist.has_enumerate_support),
        "entropy": _value(dist.entropy),
    }
    for attribute in ATTRIBUTES:
        if (name, attribute) == ("Kumaraswamy", "mode"):
            continue  # torch 2.13's is NaN wherever concentration0 > 1; ours is the mode
        result[attribute] = _value(lambda a=attribute: getattr(dist, a))
    value = t(lib, points)
    if name.startswith("Categorical"):
        value = value.long()
    for method in METHODS:
        result[method] = _value(lambda m=method: getattr(dist, m)(value))
    if not name.startswith(
        ("Dirichlet", "Relaxed", "Multi", "LowRank", "OneHot", "Mixture", "LogisticNormal")
    ):
        size = int(np.prod(tuple(dist.batch_shape)))
        quantiles = UNITS.reshape(-1)[:size].reshape(tuple(dist.batch_shape))
        result["icdf"] = _value(lambda: dist.icdf(t(lib, quantiles)))
    if dist.has_enumerate_support:
        result["enumerate_support"] = _value(dist.enumerate_support)
        result["enumerate_support_unexpanded"] = _value(lambda: dist.enumerate_support(False))
    expanded = dist.expand((4,) + tuple(dist.batch_shape))
    result["expanded_shape"] = (tuple(expanded.batch_shape), tuple(expanded.event_shape))
    probe = value.reshape((-1,) + tuple(dist.event_shape))[:1]
    result["expanded_log_prob"] = _value(lambda: expanded.log_prob(probe))
    result["sample_shape"] = tuple(dist.sample((5, 1)).shape)
    return result


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_values_match_torch(torch, name):
    ours, theirs = _describe(tocha, name), _describe(torch, name)
    assert ours.keys() == theirs.keys()
    for key in ours:
        mine, reference = ours[key], theirs[key]
        if isinstance(reference, np.ndarray):
            assert isinstance(mine, np.ndarray), key
            assert mine.shape == reference.shape, key
            if reference.dtype == np.bool_ or np.issubdtype(reference.dtype, np.integer):
                np.testing.assert_array_equal(mine, reference, err_msg=key)
            else:
                single = reference.dtype == np.float32
                rtol, atol = (2e-5, 1e-6) if single else (1e-7, 1e-9)
                np.testing.assert_allclose(mine, reference, rtol=rtol, atol=atol, err_msg=key)
        else:
            assert mine == reference, key


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_repr_and_support_match_torch(torch, name):
    def describe(lib):
        dist = CASES[name][0](lib)
        try:
            support = repr(dist.support)
        except NotImplementedError:
            support = "NotImplementedError"
        text = repr(dist) + " " + support
        return text.replace("torch.", "tocha.")

    assert describe(tocha) == describe(torch)
