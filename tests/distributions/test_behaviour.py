"""Assorted behaviour against torch.distributions: expand of subclasses, mixture sample
shapes, reprs of wrappers and inverse transforms, deprecation warnings, straight-through
samples, enumerate_support shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha


def _chi2_expand(lib, D):
    c = D.Chi2(lib.tensor([2.0, 3.0])).expand((4, 2))
    return repr(c), tuple(c.batch_shape), np.asarray(c.df).tolist()


def _mixture_shapes(lib, D):
    m = D.MixtureSameFamily(
        D.Categorical(lib.ones(3, 2)), D.Normal(lib.zeros(3, 2), lib.ones(3, 2))
    )
    m2 = D.MixtureSameFamily(
        D.Categorical(lib.ones(2)), D.MultivariateNormal(lib.zeros(2, 3), lib.eye(3))
    )
    shapes = (tuple(m2.sample((5,)).shape), tuple(m2.batch_shape), tuple(m2.event_shape))
    return tuple(m.sample((5,)).shape), shapes, repr(m2)


def _sample_n_warning(lib, D):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shape = tuple(D.Normal(0.0, 1.0).sample_n(3).shape)
    return shape, [(w.category.__name__, str(w.message)) for w in caught]


def _straight_through(lib, D):
    o = D.OneHotCategoricalStraightThrough(lib.tensor([0.2, 0.8], requires_grad=True))
    return tuple(o.rsample((2,)).shape), o.rsample().requires_grad


def _reprs(lib, D):
    T = D.transforms
    return [
        repr(D.Normal(lib.tensor([0.0, 1.0]), 1.0).expand((3, 2))),
        repr(D.Independent(D.Normal(lib.zeros(2), 1.0), 1)),
        repr(T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]).inv),
        repr(T.ExpTransform().inv),
    ]


def _stick_breaking(lib, D):
    t = D.TransformedDistribution(
        D.Normal(lib.zeros(3), 1.0), D.transforms.StickBreakingTransform()
    )
    return tuple(t.batch_shape), tuple(t.event_shape), repr(t.support)


def _reshape_shapes(lib, D):
    reshape = D.transforms.ReshapeTransform((4,), (2, 2))
    forward, inverse = reshape.forward_shape((3, 4)), reshape.inverse_shape((3, 2, 2))
    return repr(forward), repr(inverse)


def _enumerate(lib, D):
    return (
        tuple(D.Independent(D.Bernoulli(lib.tensor([0.3, 0.4])), 0).enumerate_support().shape),
        tuple(D.Categorical(logits=lib.zeros(2, 3)).enumerate_support(False).shape),
        np.asarray(D.Binomial(3, lib.tensor([0.5, 0.2])).enumerate_support()).tolist(),
        np.round(np.asarray(D.Categorical(lib.tensor([0.2, 0.8])).perplexity()), 5).tolist(),
    )


CASES = {
    "chi2_expand": _chi2_expand,
    "mixture_shapes": _mixture_shapes,
    "sample_n_warning": _sample_n_warning,
    "straight_through": _straight_through,
    "reprs": _reprs,
    "stick_breaking": _stick_breaking,
    "enumerate": _enumerate,
    "reshape_shapes": _reshape_shapes,
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_behaviour_matches_torch(torch, name):
    def run(lib):
        return str(CASES[name](lib, lib.distributions)).replace("torch.", "tocha.")

    assert run(tocha) == run(torch)


def test_distributions_and_transforms_pickle():
    import pickle

    D = tocha.distributions
    dists = [
        D.Normal(0.0, 1.0),
        D.LogNormal(tocha.zeros(2), 1.0),
        D.Gumbel(0.0, 1.0),
        D.Categorical(logits=tocha.zeros(3)),
        D.MultivariateNormal(tocha.zeros(2), tocha.eye(2)),
        D.Beta(2.0, 3.0),
        D.MixtureSameFamily(D.Categorical(tocha.ones(2)), D.Normal(tocha.zeros(2), 1.0)),
    ]
    for dist in dists:
        copy = pickle.loads(pickle.dumps(dist))
        value = dist.sample((3,))
        np.testing.assert_allclose(copy.log_prob(value).numpy(), dist.log_prob(value).numpy())
    inverse = pickle.loads(pickle.dumps(D.transforms.ExpTransform().inv))
    assert float(inverse(tocha.tensor(1.0))) == 0.0
