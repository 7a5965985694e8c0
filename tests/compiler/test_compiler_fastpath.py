"""The per-call path of a compiled function: the generated guards (every guard that fails
leads to the general path, which recompiles or runs eagerly) and the generated call (saved
values freed after backward as in eager, retain_graph, several outputs)."""

from __future__ import annotations

import pytest

import tocha
import tocha.compiler
import tocha.nn as nn

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _leaves(n=3, size=5):
    tocha.manual_seed(0)
    return [tocha.randn(size, requires_grad=True) for _ in range(n)]


def test_each_guard_of_the_fast_path_sends_a_changed_call_to_the_general_path(captures):
    fn = tocha.compile(lambda a, b, scale: (a * b * scale).sum())
    a, b = _leaves(2)
    fn(a, b, 2.0)
    fn(a, b, 2.0)
    assert captures() == 1
    changed = [
        ((a, b, 3.0), "scalar value"),
        ((a, b, 3), "scalar type"),
        ((a, b.detach(), 2.0), "requires_grad"),
        ((a, b.double(), 2.0), "dtype"),
        ((tocha.randn(4), tocha.randn(4, requires_grad=True), 2.0), "shape"),
    ]
    for args, why in changed:
        before = captures()
        out = fn(*args)
        assert captures() == before + 1, why
        x, y, s = args
        assert tocha.allclose(out, (x * y * s).sum()), why
    with tocha.no_grad():
        before = captures()
        assert not fn(a, b, 2.0).requires_grad
        assert captures() == before + 1
    assert fn(a, b, 2.0).requires_grad  # back on the first entry


def test_the_fast_path_is_off_under_disable_and_inside_a_capture(captures):
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    fn = tocha.compile(f)
    x = tocha.ones(3)
    fn(x)
    fn(x)
    assert len(calls) == 1
    with tocha.compiler.disable():
        fn(x)
    assert len(calls) == 2
    outer = tocha.compile(lambda x: fn(x) + 1)
    assert tocha.equal(outer(x), tocha.full((3,), 3.0))
    assert len(calls) == 3  # traced eagerly inside the capture of `outer`


def test_the_default_dtype_and_module_state_are_checked_on_the_fast_path(captures):
    model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5))
    compiled = tocha.compile(model)
    x = tocha.randn(2, 4)
    compiled(x)
    model.eval()
    before = captures()
    assert tocha.allclose(compiled(x), model[0](x))
    assert captures() == before + 1
    model[0].weight = nn.Parameter(tocha.zeros(3, 4))
    assert tocha.allclose(compiled(x), model[0].bias.expand(2, 3))
    tocha.set_default_dtype(tocha.float64)
    try:
        before = captures()
        compiled(x)
        assert captures() == before + 1
    finally:
        tocha.set_default_dtype(tocha.float32)


@pytest.mark.parametrize("saves_an_input", [True, False])
def test_saved_values_are_freed_after_backward_as_in_eager(saves_an_input):
    # intermediate values travel in the node's argument list when it saves an input,
    # else as extra outputs: both are freed by a backward without retain_graph
    def f(a, b):
        return (a.exp() * (b if saves_an_input else 2.0)).tanh().sum()

    fn = tocha.compile(f)
    a, b = _leaves(2)
    out = fn(a, b)
    out = fn(a, b)  # the compiled entry's call
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    a2, b2 = (t.detach().requires_grad_() for t in (a, b))
    f(a2, b2).backward()
    assert tocha.allclose(a.grad, 2 * a2.grad)
    if saves_an_input:
        assert tocha.allclose(b.grad, 2 * b2.grad)


def test_an_input_changed_in_place_after_the_call_is_reported_at_backward():
    fn = tocha.compile(lambda a, w: (a * w).sum())
    a, w = _leaves(2)
    fn(a, w)
    x = tocha.randn(5)
    out = fn(x, w)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_several_outputs_of_which_some_get_no_gradient():
    fn = tocha.compile(lambda a, b: (a * b, a.sin(), (a * b).argmax(), 7))
    a, b = _leaves(2)
    for _ in range(2):
        prod, s, idx, seven = fn(a, b)
    assert seven == 7 and not idx.requires_grad and idx.dtype == tocha.int64
    prod.sum().backward()  # sin's output gets none
    assert tocha.allclose(a.grad, b) and tocha.allclose(b.grad, a)
    a.grad = b.grad = None
    prod, s, _, _ = fn(a, b)
    (s * 2).sum().backward()
    assert tocha.allclose(a.grad, 2 * a.detach().cos())
    assert b.grad is None or not b.grad.any()  # zeros, as with torch.compile
