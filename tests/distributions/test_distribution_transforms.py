"""Transforms, constraints and biject_to/transform_to against torch.distributions."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.distributions.cases import LOC, SCALE, t

X = np.array([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]])


def _transform(name, lib):
    T = lib.distributions.transforms
    return {
        "Exp": lambda: T.ExpTransform(),
        "Affine": lambda: T.AffineTransform(t(lib, LOC), t(lib, SCALE)),
        "Affine_scalar": lambda: T.AffineTransform(1.5, -2.0),
        "Affine_event": lambda: T.AffineTransform(t(lib, LOC), t(lib, SCALE), event_dim=1),
        "Sigmoid": lambda: T.SigmoidTransform(),
        "Tanh": lambda: T.TanhTransform(),
        "Softplus": lambda: T.SoftplusTransform(),
        "Power": lambda: T.ComposeTransform([T.ExpTransform(), T.PowerTransform(t(lib, 2.5))]),
        "Abs": lambda: T.AbsTransform(),
        "Softmax": lambda: T.SoftmaxTransform(),
        "StickBreaking": lambda: T.StickBreakingTransform(),
        "Compose": lambda: T.ComposeTransform(
            [T.AffineTransform(0.5, 2.0), T.SigmoidTransform(), T.AffineTransform(-1.0, 3.0)]
        ),
        "Compose_inverse": lambda: (
            T.ComposeTransform([T.ExpTransform().inv, T.TanhTransform()]).inv
        ),
        "Identity": lambda: T.identity_transform,
        "Independent": lambda: T.IndependentTransform(T.ExpTransform(), 1),
        "Reshape": lambda: T.ReshapeTransform((3,), (3, 1)),
        "LowerCholesky": lambda: T.LowerCholeskyTransform(),
        "PositiveDefinite": lambda: T.PositiveDefiniteTransform(),
        "CorrCholesky": lambda: T.CorrCholeskyTransform(),
        "Cat": lambda: T.CatTransform(
            [T.ExpTransform(), T.SigmoidTransform()], dim=-1, lengths=[2, 1]
        ),
        "Stack": lambda: T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0),
    }[name]()


TRANSFORMS = [
    "Exp",
    "Affine",
    "Affine_scalar",
    "Affine_event",
    "Sigmoid",
    "Tanh",
    "Softplus",
    "Power",
    "Abs",
    "Softmax",
    "StickBreaking",
    "Compose",
    "Compose_inverse",
    "Identity",
    "Independent",
    "Reshape",
    "LowerCholesky",
    "PositiveDefinite",
    "CorrCholesky",
    "Cat",
    "Stack",
]


def _input(name):
    if name in ("LowerCholesky", "PositiveDefinite"):
        return np.array([[[0.3, 0.0, 0.0], [-1.2, 0.5, 0.0], [2.0, 0.7, -0.4]]])
    if name == "Compose_inverse":
        return np.tanh(X) * 0.9
    return X


def _describe(name, lib):
    transform = _transform(name, lib)
    x = t(lib, _input(name))
    y = transform(x)
    result = {
        "y": np.asarray(y),
        "repr": repr(transform).replace("torch.", "tocha."),
        "domain": repr(transform.domain),
        "codomain": repr(transform.codomain),
        "bijective": bool(transform.bijective),
        "forward_shape": tuple(transform.forward_shape(tuple(x.shape))),
        "x_again": np.asarray(transform.inv(y)),
        "codomain_check": np.asarray(transform.codomain.check(y)),
    }
    try:
        result["log_abs_det_jacobian"] = np.asarray(transform.log_abs_det_jacobian(x, y))
    except NotImplementedError:
        result["log_abs_det_jacobian"] = "NotImplementedError"
    return result


@pytest.mark.parametrize("name", TRANSFORMS, ids=TRANSFORMS)
def test_transforms_match_torch(torch, name):
    ours, theirs = _describe(name, tocha), _describe(name, torch)
    assert ours.keys() == theirs.keys()
    for key in ours:
        if isinstance(theirs[key], np.ndarray):
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-7, atol=1e-9, err_msg=key)
        else:
            assert ours[key] == theirs[key], key


def test_log_abs_det_jacobian_is_the_jacobians():
    """For elementwise bijections, the log-determinant equals log |dy/dx| by autograd."""
    T = tocha.distributions.transforms
    for transform in (
        T.ExpTransform(),
        T.SigmoidTransform(),
        T.TanhTransform(),
        T.SoftplusTransform(),
        T.AffineTransform(0.3, -2.0),
    ):
        x = tocha.tensor(X, requires_grad=True)
        y = transform(x)
        (dy,) = tocha.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(
            transform.log_abs_det_jacobian(x, y).detach().numpy(),
            np.log(np.abs(dy.numpy())),
            rtol=1e-6,
            atol=1e-9,
        )


def test_transform_cache():
    T = tocha.distributions.transforms
    transform = T.ExpTransform(cache_size=1)
    x = tocha.tensor([0.5, 1.0])
    y = transform(x)
    assert transform.inv(y) is x
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv.inv == T.ExpTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


CONSTRAINTS = {
    "real": lambda C, lib: C.real,
    "positive": lambda C, lib: C.positive,
    "nonnegative": lambda C, lib: C.nonnegative,
    "unit_interval": lambda C, lib: C.unit_interval,
    "interval": lambda C, lib: C.interval(-1.0, 2.0),
    "half_open_interval": lambda C, lib: C.half_open_interval(-1.0, 2.0),
    "greater_than": lambda C, lib: C.greater_than(0.5),
    "greater_than_eq": lambda C, lib: C.greater_than_eq(0.5),
    "less_than": lambda C, lib: C.less_than(0.5),
    "boolean": lambda C, lib: C.boolean,
    "integer_interval": lambda C, lib: C.integer_interval(0, 2),
    "nonnegative_integer": lambda C, lib: C.nonnegative_integer,
    "positive_integer": lambda C, lib: C.positive_integer,
    "simplex": lambda C, lib: C.simplex,
    "one_hot": lambda C, lib: C.one_hot,
    "multinomial": lambda C, lib: C.multinomial(3),
    "real_vector": lambda C, lib: C.real_vector,
    "independent": lambda C, lib: C.independent(C.positive, 1),
    "lower_triangular": lambda C, lib: C.lower_triangular,
    "lower_cholesky": lambda C, lib: C.lower_cholesky,
    "corr_cholesky": lambda C, lib: C.corr_cholesky,
    "square": lambda C, lib: C.square,
    "symmetric": lambda C, lib: C.symmetric,
    "positive_definite": lambda C, lib: C.positive_definite,
    "positive_semidefinite": lambda C, lib: C.positive_semidefinite,
    "cat": lambda C, lib: C.cat([C.positive, C.real], dim=-1, lengths=[2, 1]),
    "stack": lambda C, lib: C.stack([C.positive, C.unit_interval, C.real], dim=-1),
}

VALUES = [
    np.array([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5], [2.0, 1.0, 0.0]]),
    np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.1, 0.2, 0.3]]),
    np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]]),
    np.array([[-1.0, np.nan, 0.5], [1.0, 0.0, 0.0], [0.6, 0.8, 0.0]]),
    np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]),
]


@pytest.mark.parametrize("name", list(CONSTRAINTS), ids=list(CONSTRAINTS))
def test_constraints_match_torch(torch, name):
    def describe(lib):
        C = lib.distributions.constraints
        constraint = CONSTRAINTS[name](C, lib)
        checks = [np.asarray(constraint.check(t(lib, v))) for v in VALUES]
        result = [repr(constraint), constraint.is_discrete, constraint.event_dim, checks]
        for registry in ("biject_to", "transform_to"):
            try:
                result.append(repr(getattr(lib.distributions, registry)(constraint)))
            except NotImplementedError as e:
                result.append(str(e))
        return result

    ours, theirs = describe(tocha), describe(torch)
    assert ours[:3] == theirs[:3]
    for mine, reference in zip(ours[3], theirs[3]):
        np.testing.assert_array_equal(mine, reference)
    assert ours[4:] == theirs[4:]


def test_biject_to_maps_onto_the_constraint():
    D = tocha.distributions
    C = D.constraints
    rng = np.random.default_rng(3)
    for constraint, shape in [
        (C.positive, (5,)),
        (C.interval(-2.0, 3.0), (5,)),
        (C.simplex, (4, 3)),
        (C.greater_than(1.5), (5,)),
        (C.corr_cholesky, (2, 3)),
        (C.independent(C.unit_interval, 1), (4,)),
    ]:
        transform = D.biject_to(constraint)
        x = tocha.tensor(rng.standard_normal(shape))
        y = transform(x)
        assert bool(constraint.check(y).all())
        np.testing.assert_allclose(transform.inv(y).numpy(), x.numpy(), rtol=1e-6, atol=1e-9)
    for constraint in (C.lower_cholesky, C.positive_definite):
        assert bool(constraint.check(D.transform_to(constraint)(tocha.randn(3, 3))).all())
