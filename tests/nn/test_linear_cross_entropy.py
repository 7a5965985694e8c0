"""nn.LinearCrossEntropyLoss and the K-dimensional form of F.linear_cross_entropy against
PyTorch: parameters, state dict, repr, losses, gradients and shape errors."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

CASES = [
    ({}, (3, 4), (3,)),
    ({"bias": True, "label_smoothing": 0.1}, (3, 4), (3,)),
    ({"out_features": (2,), "reduction": "none", "ignore_index": 1}, (3, 4), (3, 2)),
    ({"out_features": (2, 3), "bias": True, "reduction": "sum"}, (2, 4), (2, 2, 3)),
    ({"reduction": "none"}, (4,), ()),
]


def _run(lib, kwargs, x_shape, t_shape, with_weight):
    if with_weight:
        kwargs = {**kwargs, "weight": lib.arange(1.0, 6.0)}
    module = lib.nn.LinearCrossEntropyLoss(4, 5, **kwargs)
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)), dtype=lib.float32))
    x = lib.tensor(rng.normal(size=x_shape), dtype=lib.float32, requires_grad=True)
    target = lib.tensor(rng.integers(0, 5, size=t_shape))
    loss = module(x, target)
    loss.sum().backward()
    return {
        "repr": repr(module),
        "params": [(n, tuple(p.shape)) for n, p in module.named_parameters()],
        "state": list(module.state_dict()),
        "loss": loss.detach().numpy(),
        "x_grad": x.grad.numpy(),
        "w_grad": module.linear.weight.grad.numpy(),
    }


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("with_weight", [False, True])
def test_module_matches_torch(torch, case, with_weight):
    ours = _run(tocha, *CASES[case], with_weight)
    theirs = _run(torch, *CASES[case], with_weight)
    for key in ("repr", "params", "state"):
        assert ours[key] == theirs[key]
    for key in ("loss", "x_grad", "w_grad"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)


def test_options_repr(torch):
    assert repr(tocha.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    module = tocha.nn.LinearCrossEntropyLoss(
        4, 5, options=tocha.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    )
    assert "batch_chunk_size=2" in repr(module)


ERRORS = [
    ((3, 7, 4), (5, 4), None),
    ((3, 5), (5, 4), None),
    ((3, 4), (5, 2, 3, 4), (30,)),
    ((3, 4), (5, 2, 3, 4), (5,)),
    ((3, 4), (5, 4), (4,)),
    ((4,), (5, 2, 3, 4), None),
]


@pytest.mark.parametrize("x_shape,w_shape,b_shape", ERRORS)
def test_functional_shape_errors(torch, x_shape, w_shape, b_shape):
    def run(lib):
        bias = None if b_shape is None else lib.zeros(b_shape)
        target = lib.zeros(3, dtype=lib.long)
        lib.nn.functional.linear_cross_entropy(
            lib.zeros(x_shape), lib.zeros(w_shape), target, linear_bias=bias
        )

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)
