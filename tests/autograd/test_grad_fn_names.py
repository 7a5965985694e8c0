"""A grad_fn's class is named as PyTorch names it (``MulBackward0``), so that tools which
read ``type(t.grad_fn).__name__`` (graph drawers such as torchviz) print PyTorch's names.
Against PyTorch, for ops whose primitive is PyTorch's own."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

OPS = {
    "mul": lambda lib, a, b: a * 2,
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "div": lambda lib, a, b: a / b,
    "sum": lambda lib, a, b: a.sum(),
    "mean": lambda lib, a, b: a.mean(),
    "exp": lambda lib, a, b: a.exp(),
    "tanh": lambda lib, a, b: a.tanh(),
    "relu": lambda lib, a, b: lib.relu(a),
    "pow": lambda lib, a, b: a.pow(2),
    "cat": lambda lib, a, b: lib.cat([a, b]),
    "neg": lambda lib, a, b: -a,
    "sigmoid": lambda lib, a, b: a.sigmoid(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_grad_fn_class_names_are_torchs(torch, name):
    def run(lib):
        a = lib.tensor(np.arange(1.0, 4.0), requires_grad=True)
        b = lib.tensor(np.arange(2.0, 5.0), requires_grad=True)
        return OPS[name](lib, a, b).grad_fn

    mine, theirs = run(tocha), run(torch)
    assert type(mine).__name__ == mine.name() == theirs.name()
    assert repr(mine).startswith(f"<{theirs.name()} object at ")
    assert isinstance(mine, tocha.autograd.graph.Node)


def test_custom_function_nodes_are_named_after_the_function():
    class Square(tocha.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    y = Square.apply(tocha.ones(2, requires_grad=True))
    assert type(y.grad_fn).__name__ == y.grad_fn.name() == "SquareBackward"
