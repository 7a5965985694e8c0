"""tocha.autograd.functional with forward mode: jvp by forward-mode AD, hvp forward over
reverse, jacobian(strategy="forward-mode") and vectorize=True (batched by tocha.func.vmap,
and the same values one at a time without tocha-func), hessian's outer strategy; values,
structures and errors against torch.autograd.functional.

They live with tocha-func's tests because vectorize=True batches through it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tocha
import tocha.autograd.functional as AF


def _t(*shape, seed=0):
    return tocha.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def smooth(x):
    return (x.exp() * x.sin()).sum() + x.sigmoid().prod()


def vector_fn(x, y):
    return (x[:, None] * y).tanh(), (x.exp() * y.sum()).sum()


def test_jvp_is_forward_mode_without_any_backward_pass(monkeypatch):
    def no_backward(*args, **kwargs):
        raise AssertionError("jvp ran a backward pass")

    monkeypatch.setattr(AF, "grad", no_backward)
    x, v = _t(3), _t(3, seed=1)
    out, tangent = AF.jvp(lambda a: a.exp() * 2, x, v)
    _close(out, x.exp() * 2)
    _close(tangent, 2 * x.exp() * v)
    assert not tangent.requires_grad


def test_jvp_of_tuples_and_of_a_one_element_input():
    x, y = _t(3), _t(2, seed=1)
    u, w = _t(3, seed=2), _t(2, seed=3)
    (out_m, out_s), (t_m, t_s) = AF.jvp(vector_fn, (x, y), (u, w))
    _close(t_m, (1 - out_m**2) * (u[:, None] * y + x[:, None] * w))
    _close(t_s, (x.exp() * u).sum() * y.sum() + x.exp().sum() * w.sum())
    _, tangent = AF.jvp(lambda a: a * a, _t(1))
    _close(tangent, 2 * _t(1))


def test_jvp_create_graph_stays_differentiable():
    x = _t(3).requires_grad_()
    out, tangent = AF.jvp(lambda a: a**3, x, tocha.ones_like(x), create_graph=True)
    assert out.requires_grad and tangent.requires_grad
    tangent.sum().backward()
    _close(x.grad, 6 * x)


def test_hvp_is_forward_over_reverse_and_equals_vhp():
    x, v = _t(4), _t(4, seed=1)
    _, hv = AF.hvp(smooth, x, v)
    _, vh = AF.vhp(smooth, x, v)
    _close(hv, vh)
    _close(hv, AF.hessian(smooth, x) @ v)
    _close(AF.hvp(lambda a: (a * a * a).sum(), x, v)[1], 6 * x * v)


def test_hvp_of_two_inputs():
    x, y = _t(3), _t(3, seed=1)
    u, w = _t(3, seed=2), _t(3, seed=3)

    def f(a, b):
        return (a * a * b.exp()).sum()

    _, (ha, hb) = AF.hvp(f, (x, y), (u, w))
    _close(ha, 2 * y.exp() * u + 2 * x * y.exp() * w)
    _close(hb, 2 * x * y.exp() * u + x * x * y.exp() * w)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_vectorized_equals_the_loop(strategy):
    x, y = _t(3), _t(2, seed=1)
    loop = AF.jacobian(vector_fn, (x, y))
    batched = AF.jacobian(vector_fn, (x, y), vectorize=True, strategy=strategy)
    for lo, ba in zip(loop, batched):
        for a, b in zip(lo, ba):
            _close(b, a)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorize_calls_the_function_once_with_tocha_func(strategy):
    calls = []

    def f(a):
        calls.append(1)
        return a.sin() * a.sum()

    AF.jacobian(f, _t(5), vectorize=True, strategy=strategy)
    assert len(calls) == 1


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorize_without_tocha_func_gives_the_same_values(monkeypatch, strategy):
    x, y = _t(3), _t(2, seed=1)
    batched = AF.jacobian(vector_fn, (x, y), vectorize=True, strategy=strategy)
    monkeypatch.setitem(sys.modules, "tocha.func", None)
    one_at_a_time = AF.jacobian(vector_fn, (x, y), vectorize=True, strategy=strategy)
    for lo, ba in zip(one_at_a_time, batched):
        for a, b in zip(lo, ba):
            _close(b, a)


@pytest.mark.parametrize(
    "outer, vectorize",
    [("reverse-mode", False), ("reverse-mode", True), ("forward-mode", True)],
    ids=["reverse", "reverse-vectorized", "forward-vectorized"],
)
def test_hessian_strategies_agree(outer, vectorize):
    x = _t(4)
    _close(
        AF.hessian(smooth, x, vectorize=vectorize, outer_jacobian_strategy=outer),
        AF.jacobian(lambda a: AF.vjp(smooth, a, create_graph=True)[1], x),
    )


# -- against torch.autograd.functional ------------------------------------------------------
def _smooth_of(lib):
    return lambda x: (x.exp() * x.sin()).sum() + x.sigmoid().prod()


CASES = {
    "jvp": lambda AFn, lib, x, y: AFn.jvp(lambda a: a.tanh() * a.sum(), x, y),
    "jvp_tuple": lambda AFn, lib, x, y: AFn.jvp(vector_fn, (x, y[:2]), (y, x[:2])),
    "hvp": lambda AFn, lib, x, y: AFn.hvp(_smooth_of(lib), x, y),
    "hvp_tuple": lambda AFn, lib, x, y: AFn.hvp(lambda a, b: (a * a * b).sum(), (x, y), (y, x)),
    "jacobian_forward": lambda AFn, lib, x, y: AFn.jacobian(
        vector_fn, (x, y[:2]), vectorize=True, strategy="forward-mode"
    ),
    "jacobian_forward_one_input": lambda AFn, lib, x, y: AFn.jacobian(
        lambda a: (a * 2, a.sum()), x, vectorize=True, strategy="forward-mode"
    ),
    "jacobian_vectorized": lambda AFn, lib, x, y: AFn.jacobian(
        vector_fn, (x, y[:2]), vectorize=True
    ),
    "hessian_forward_outer": lambda AFn, lib, x, y: AFn.hessian(
        lambda a, b: (a * a * b.exp()).sum(),
        (x, y),
        vectorize=True,
        outer_jacobian_strategy="forward-mode",
    ),
}


def _flat(result):
    """Each tensor of a nested result with the container types along the way."""
    if isinstance(result, (tuple, list)):
        return [(type(result).__name__, len(result))] + [
            item for part in result for item in _flat(part)
        ]
    return [np.asarray(result.detach().numpy())]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_structure_match_torch(torch, name):
    rng = np.random.default_rng(5)
    xn, yn = rng.standard_normal(3), rng.standard_normal(3)
    ours = _flat(CASES[name](AF, tocha, tocha.tensor(xn), tocha.tensor(yn)))
    theirs = _flat(
        CASES[name](torch.autograd.functional, torch, torch.tensor(xn), torch.tensor(yn))
    )
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, tuple):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


ERRORS = {
    "jvp_v_none": lambda AFn, lib: AFn.jvp(lambda a: a * 2, lib.ones(3)),
    "jvp_v_size": lambda AFn, lib: AFn.jvp(lambda a: a * 2, lib.ones(3), lib.ones(2)),
    "jvp_v_count": lambda AFn, lib: AFn.jvp(lambda a: a * 2, lib.ones(3), (lib.ones(3),) * 2),
    "jvp_v_tuple_count": lambda AFn, lib: AFn.jvp(
        lambda a, b: a, (lib.ones(3), lib.ones(3)), (lib.ones(3),)
    ),
    "jvp_v_not_tensor": lambda AFn, lib: AFn.jvp(lambda a: a, lib.ones(3), 3.0),
    "jvp_inputs_list": lambda AFn, lib: AFn.jvp(lambda a: a, [lib.ones(3)], [lib.ones(3)]),
    "jvp_output_list": lambda AFn, lib: AFn.jvp(lambda a: [a], lib.ones(3), lib.ones(3)),
    "jvp_output_item": lambda AFn, lib: AFn.jvp(lambda a: (a, 3), lib.ones(3), lib.ones(3)),
    "jvp_integer_input": lambda AFn, lib: AFn.jvp(lambda a: a, lib.arange(3), lib.arange(3)),
    "jvp_strict_constant": lambda AFn, lib: AFn.jvp(
        lambda a: lib.ones(3), lib.ones(3), lib.ones(3), strict=True
    ),
    "jvp_strict_unused": lambda AFn, lib: AFn.jvp(
        lambda a, b: a * 2, (lib.ones(3), lib.ones(3)), (lib.ones(3), lib.ones(3)), strict=True
    ),
    "hvp_not_scalar": lambda AFn, lib: AFn.hvp(lambda a: a * 2, lib.ones(3), lib.ones(3)),
    "hvp_tuple_output": lambda AFn, lib: AFn.hvp(lambda a: (a.sum(),), lib.ones(3), lib.ones(3)),
    "hvp_v_none": lambda AFn, lib: AFn.hvp(lambda a: a.sum(), lib.ones(3)),
    "hvp_strict_linear": lambda AFn, lib: AFn.hvp(
        lambda a: a.sum(), lib.ones(3), lib.ones(3), strict=True
    ),
    "hvp_strict_constant": lambda AFn, lib: AFn.hvp(
        lambda a: lib.ones(()), lib.ones(3), lib.ones(3), strict=True
    ),
    "jacobian_strategy": lambda AFn, lib: AFn.jacobian(lambda a: a, lib.ones(3), strategy="x"),
    "jacobian_forward_not_vectorized": lambda AFn, lib: AFn.jacobian(
        lambda a: a, lib.ones(3), strategy="forward-mode"
    ),
    "jacobian_forward_create_graph": lambda AFn, lib: AFn.jacobian(
        lambda a: a, lib.ones(3), strategy="forward-mode", vectorize=True, create_graph=True
    ),
    "jacobian_forward_strict": lambda AFn, lib: AFn.jacobian(
        lambda a: a, lib.ones(3), strategy="forward-mode", vectorize=True, strict=True
    ),
    "jacobian_vectorized_strict": lambda AFn, lib: AFn.jacobian(
        lambda a: a * a, lib.ones(3), vectorize=True, strict=True
    ),
    "jacobian_strict_unused": lambda AFn, lib: AFn.jacobian(
        lambda a, b: a * 2, (lib.ones(3), lib.ones(3)), strict=True
    ),
    "jacobian_not_tensor": lambda AFn, lib: AFn.jacobian(lambda a: 3, lib.ones(3)),
    "hessian_strategy": lambda AFn, lib: AFn.hessian(
        lambda a: a.sum(), lib.ones(3), outer_jacobian_strategy="x"
    ),
    "hessian_forward_not_vectorized": lambda AFn, lib: AFn.hessian(
        lambda a: a.sum(), lib.ones(3), outer_jacobian_strategy="forward-mode"
    ),
    "hessian_not_scalar": lambda AFn, lib: AFn.hessian(lambda a: a, lib.ones(3)),
    "hessian_strict_linear": lambda AFn, lib: AFn.hessian(
        lambda a: a.sum(), lib.ones(3), strict=True
    ),
}


def _error(call, lib):
    with pytest.raises(Exception) as error:
        call(lib.autograd.functional, lib)
    return type(error.value), str(error.value).replace("torch.", "tocha.")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    assert _error(ERRORS[name], tocha) == _error(ERRORS[name], torch)
