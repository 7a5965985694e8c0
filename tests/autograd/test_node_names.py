"""The names tensors print for their ``grad_fn`` (``grad_fn=<SliceBackward0>``) are
PyTorch's, also where PyTorch's op is a composite whose last step names the node: indexing
(Select, Slice, Unsqueeze, Alias), linear and matmul by rank, reductions over dims,
cross_entropy, reflected subtraction, tensor exponents."""

from __future__ import annotations

import pytest

import tocha

EXPRESSIONS = {
    "x[0]": lambda L, x, y: x[0],
    "x[0, 1]": lambda L, x, y: x[0, 1],
    "x[1:]": lambda L, x, y: x[1:],
    "x[:, 0]": lambda L, x, y: x[:, 0],
    "x[0, 1:3]": lambda L, x, y: x[0, 1:3],
    "x[1:3, 0]": lambda L, x, y: x[1:3, 0],
    "x[None]": lambda L, x, y: x[None],
    "x[..., None]": lambda L, x, y: x[..., None],
    "x[None, 0]": lambda L, x, y: x[None, 0],
    "x[:]": lambda L, x, y: x[:],
    "x[(slice(None),)]": lambda L, x, y: x[(slice(None),)],
    "x[(slice(0, 3),)]": lambda L, x, y: x[(slice(0, 3),)],
    "linear 3-D constant input": lambda L, x, y: L.nn.functional.linear(
        x.detach()[None], y, y.sum(1)
    ),
    "x[...]": lambda L, x, y: x[...],
    "x[0:3]": lambda L, x, y: x[0:3],
    "x[::2]": lambda L, x, y: x[::2],
    "x[-1]": lambda L, x, y: x[-1],
    "linear 2-D": lambda L, x, y: L.nn.functional.linear(x, y, y[:, 0]),
    "linear 2-D no bias": lambda L, x, y: L.nn.functional.linear(x, y),
    "linear 3-D": lambda L, x, y: L.nn.functional.linear(x[None], y, y.sum(1)),
    "linear 3-D no bias": lambda L, x, y: L.nn.functional.linear(x[None], y),
    "matmul 2-D": lambda L, x, y: x @ y.T,
    "matmul 3-D @ 2-D": lambda L, x, y: x[None] @ y.T,
    "matmul 1-D @ 2-D": lambda L, x, y: x[0] @ y.T,
    "matmul 2-D @ 1-D": lambda L, x, y: x @ y[0],
    "matmul 1-D @ 1-D": lambda L, x, y: x[0] @ y[0],
    "sum": lambda L, x, y: x.sum(),
    "sum(dim)": lambda L, x, y: x.sum(1),
    "mean(dim)": lambda L, x, y: x.mean(0, keepdim=True),
    "cross_entropy": lambda L, x, y: L.nn.functional.cross_entropy(x, L.tensor([0, 1, 2])),
    "cross_entropy none": lambda L, x, y: L.nn.functional.cross_entropy(
        x, L.tensor([0, 1, 2]), reduction="none"
    ),
    "1 - x": lambda L, x, y: 1 - x,
    "x - 1": lambda L, x, y: x - 1,
    "x ** y": lambda L, x, y: x**y,
    "x ** 2": lambda L, x, y: x**2,
    "clamp": lambda L, x, y: x.clamp(0, 1),
    "max(dim)": lambda L, x, y: x.max(1).values,
    "double": lambda L, x, y: x.double(),
    "narrow": lambda L, x, y: x.narrow(1, 1, 2),
    "norm": lambda L, x, y: x.norm(),
}


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_grad_fn_name_is_torchs(torch, name):
    def node_name(lib):
        x = lib.ones(3, 4, requires_grad=True)
        y = lib.ones(3, 4, requires_grad=True)
        return EXPRESSIONS[name](lib, x, y).grad_fn.name()

    assert node_name(tocha) == node_name(torch)


def test_a_printed_slice_of_a_parameter():
    p = tocha.nn.Parameter(tocha.ones(4, 3))
    assert repr(p[:2]).endswith("grad_fn=<SliceBackward0>)")
    assert repr(p[0]).endswith("grad_fn=<SelectBackward0>)")
