"""tocha.autograd.forward_ad, the API of forward-mode AD: dual levels, make_dual and
unpack_dual, their errors, and how tangents live with grad mode and reverse mode. The forward
rules of the ops are checked in test_gradients.py and the other *_grad.py files."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd import forward_ad as fwAD


def _vector(*values):
    return tocha.tensor(values, dtype=tocha.float64)


def test_make_dual_is_a_view_of_the_primal_carrying_the_tangent():
    primal, tangent = _vector(1.0, 2.0), _vector(0.5, -1.0)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        assert dual._base is primal
        primal[0] = 7.0
        assert dual.tolist() == [7.0, 2.0]
        p, t = fwAD.unpack_dual(dual)
        assert p.tolist() == [7.0, 2.0] and t.tolist() == [0.5, -1.0]
        assert fwAD.unpack_dual(p).tangent is None  # the primal is a view without tangent
        assert isinstance(fwAD.unpack_dual(dual), fwAD.UnpackedDualTensor)


def test_tangent_is_none_for_a_plain_tensor_and_outside_a_level():
    x = _vector(1.0, 2.0)
    assert fwAD.unpack_dual(x).tangent is None
    assert fwAD.unpack_dual(x).primal is x
    with fwAD.dual_level():
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(x * 2).tangent is None


def test_ops_carry_tangents():
    with fwAD.dual_level():
        x = fwAD.make_dual(_vector(0.5, 2.0), _vector(1.0, 3.0))
        y = (x * x).sin()
        expected = np.cos([0.25, 4.0]) * 2 * np.array([0.5, 2.0]) * [1.0, 3.0]
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), expected)


def test_enter_and_exit_by_hand():
    level = fwAD.enter_dual_level()
    try:
        x = fwAD.make_dual(_vector(1.0), _vector(2.0), level=level)
        assert fwAD.unpack_dual(x * 3, level=level).tangent.tolist() == [6.0]
    finally:
        fwAD.exit_dual_level(level=level)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


def test_level_index_and_errors_as_pytorch():
    """PyTorch's first (and only) level is 0, each time; messages recorded from PyTorch."""
    with fwAD.dual_level() as first:
        x = fwAD.make_dual(_vector(1.0), _vector(2.0))
        with pytest.raises(RuntimeError) as info:
            fwAD.make_dual(x, _vector(1.0))
        assert str(info.value) == (
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported."
        )
        with pytest.raises(RuntimeError, match="^Invalid level given to _make_dual$"):
            fwAD.make_dual(_vector(1.0), _vector(1.0), level=2)
        with pytest.raises(RuntimeError, match="^Invalid level given to _fw_primal$"):
            fwAD.unpack_dual(x, level=3)
        assert fwAD.unpack_dual(x, level=0).tangent.tolist() == [2.0]
    with fwAD.dual_level() as second:
        assert first == second == 0
        assert fwAD.unpack_dual(x).tangent is None  # the exited level's tangents are gone
        with pytest.raises(RuntimeError, match="Trying to exit a forward AD level that was not"):
            fwAD.exit_dual_level(level=1)


def test_make_dual_needs_a_level():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(_vector(1.0), _vector(1.0))


def test_levels_do_not_nest():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the"):
            with fwAD.dual_level():
                pass


def test_tangent_of_another_shape_is_refused():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(_vector(1.0, 2.0), _vector(1.0))


def test_integer_primal_is_refused():
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(tocha.tensor([1, 2]), _vector(1.0, 2.0))


def test_forward_mode_runs_under_no_grad():
    with tocha.no_grad(), fwAD.dual_level():
        x = fwAD.make_dual(_vector(1.0, 2.0), _vector(1.0, 1.0))
        y = x.exp()
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), np.exp([1.0, 2.0]))
        assert not y.requires_grad


def test_gradient_of_a_tangent():
    """Reverse over forward: the tangent ``2 * sum(p * t)`` of ``sum(x * x)`` is
    differentiable in p (gradient ``2 * t``) and in t (``2 * p``)."""
    p = _vector(1.0, -2.0, 3.0).requires_grad_()
    t = _vector(0.5, 1.0, -1.0).requires_grad_()
    with fwAD.dual_level():
        y = (fwAD.make_dual(p, t) ** 2).sum()
        jvp = fwAD.unpack_dual(y).tangent
    assert jvp.item() == pytest.approx(2 * (0.5 - 2.0 - 3.0))
    grad_p, grad_t = tocha.autograd.grad(jvp, (p, t))
    assert grad_p.tolist() == [1.0, 2.0, -2.0]
    assert grad_t.tolist() == [2.0, -4.0, 6.0]


def test_tangents_vanish_when_the_level_exits():
    with fwAD.dual_level():
        x = fwAD.make_dual(_vector(1.0), _vector(1.0))
        y = x * 2
    assert fwAD.unpack_dual(x).tangent is None and fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
        assert fwAD.unpack_dual(y * 2).tangent is None


def test_a_primitive_without_forward_rule_raises_naming_it():
    from tocha.autograd._formulas import FORMULAS
    from tocha.autograd.derivatives import d
    from tocha.library import REGISTRY, call, defop

    op = defop("test_forward_ad_without_rule", lambda xp: lambda x: x * 2)
    d("test_forward_ad_without_rule", "", lambda g, out, x: g * 2)
    try:
        x = _vector(1.0)
        assert call(op, (x,)).tolist() == [2.0]  # no tangent: no rule needed
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, _vector(1.0))
            with pytest.raises(NotImplementedError, match="test_forward_ad_without_rule"):
                call(op, (dual,))
    finally:
        del REGISTRY["test_forward_ad_without_rule"], FORMULAS["test_forward_ad_without_rule"]


def test_inplace_under_no_grad_keeps_the_history_and_moves_the_tangent():
    v = tocha.tensor([-1.0, 2.0, 3.0], dtype=tocha.float64, requires_grad=True)
    with fwAD.dual_level():
        c = fwAD.make_dual(v * 1, tocha.ones(3, dtype=tocha.float64)).clone()
        with tocha.no_grad():
            c.clamp_(min=0.0)
            module = tocha.nn.Linear(3, 2)  # its init writes in place under no_grad
        assert c.grad_fn is not None
        assert fwAD.unpack_dual(c).tangent.tolist() == [0.0, 1.0, 1.0]
    assert module.weight.shape == (2, 3)
