"""tocha.library, the extension API other distributions and third parties build on: the one
in-place mechanism, the errors for non-tensor arguments, and an op's published parts."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd.derivatives import d
from tocha.library import (
    REGISTRY,
    assign,
    call,
    defop,
    expect_tensor,
    expect_tensors,
    inplace,
    not_a_tensor,
)


def _halve_kernel(xp):
    return lambda x, out=None: xp.multiply(x, 0.5, out=out)


halve_op = defop("test_library::halve", _halve_kernel)
d("test_library::halve", "", lambda g, out, x: g * 0.5)


def halve(x):
    return call(halve_op, (x,))


def _halve_direct(x):
    x.detach().numpy()[...] *= 0.5


def halve_(x):
    return inplace(x, (), halve, _halve_direct, x)


def test_direct_form_writes_in_place_and_bumps_the_version_once():
    x = tocha.arange(4.0)
    view = x[1:]
    version = x._version
    assert halve_(x) is x
    assert x.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert x._version == version + 1 and view._version == x._version


def test_tracked_target_takes_the_out_of_place_history():
    leaf = tocha.tensor([1.0, 2.0], requires_grad=True)
    y = leaf * 3
    halve_(y)
    assert y.grad_fn.name() == "TestLibrary::halveBackward0"
    y.sum().backward()
    assert leaf.grad.tolist() == [1.5, 1.5]


def test_a_tracked_operand_also_routes_through_autograd():
    target = tocha.zeros(2)
    src = tocha.tensor([1.0, 2.0], requires_grad=True)
    tocha.library.inplace(target, (src,), lambda: src * 2, lambda: pytest.fail("direct ran"))
    target.sum().backward()
    assert src.grad.tolist() == [2.0, 2.0]


def test_in_place_on_a_leaf_that_requires_grad_is_refused_before_any_write():
    leaf = tocha.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        halve_(leaf)
    assert leaf.tolist() == [1.0, 2.0]


def test_direct_form_runs_under_no_grad_even_on_a_leaf():
    leaf = tocha.tensor([1.0, 2.0], requires_grad=True)
    with tocha.no_grad():
        halve_(leaf)
    assert leaf.tolist() == [0.5, 1.0] and leaf.grad_fn is None


def test_assign_refuses_a_result_the_target_cannot_hold():
    ints = tocha.zeros(3, dtype=tocha.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired"):
        assign(ints, tocha.ones(3))
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast"):
        assign(tocha.zeros(3), tocha.ones(2, 3))


def test_a_saved_input_overwritten_in_place_keeps_its_old_values_for_backward():
    leaf = tocha.tensor([1.0, 2.0], requires_grad=True)
    y = leaf * 1
    z = y * y  # saves y
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        halve_(y)
        z.sum().backward()


@pytest.mark.parametrize(
    "call_it, message",
    [
        (
            lambda: tocha.matmul(1, tocha.ones(2)),
            "matmul(): argument 'input' (position 1) must be Tensor, not int",
        ),
        (
            lambda: tocha.linalg.det([[1.0]]),
            "linalg.det(): argument 'A' (position 1) must be Tensor, not list",
        ),
        (
            lambda: tocha.ones(2).copy_([1, 2]),
            "copy_(): argument 'other' (position 1) must be Tensor, not list",
        ),
        (
            lambda: tocha.cat([tocha.ones(1), 2]),
            "expected Tensor as element 1 in argument 0, but got int",
        ),
        (lambda: tocha.nn.Parameter(3), "Parameter(): argument 'data' must be Tensor, not int"),
        (
            lambda: tocha.special.ndtr(1.0),
            "ndtr(): argument 'input' (position 1) must be Tensor, not float",
        ),
    ],
)
def test_every_non_tensor_argument_gets_the_one_error(call_it, message):
    with pytest.raises(TypeError) as info:
        call_it()
    assert str(info.value) == message


def test_error_helpers():
    x = tocha.ones(1)
    assert expect_tensor("f", x) is x
    assert str(not_a_tensor("f", 1.5, "other", 2)) == (
        "f(): argument 'other' (position 2) must be Tensor, not float"
    )
    expect_tensors([x, x], 0)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 3, but got str"):
        expect_tensors([x, "a"], 3)


def test_cross_entropy_publishes_the_parts_a_fusing_backend_reuses():
    import tocha.nn  # noqa: F401  (declares the op)

    parts = REGISTRY["cross_entropy_loss"].parts
    assert {"rows", "unrows", "targets", "finish", "row_scale"} <= set(parts)
    x = np.arange(24.0).reshape(2, 3, 4)
    rows, idx = parts["rows"](np, x, np.zeros((2, 4), np.int64))
    assert rows.shape == (8, 3) and idx.shape == (8,)
    np.testing.assert_array_equal(parts["unrows"](np, rows, x.shape), x)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        parts["targets"](np, np.array([5]), None, -100, 3, np.float64)
