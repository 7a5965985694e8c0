"""`tocha.cond`, `tocha.while_loop`, the ``sym_*`` size functions, and the
``tocha.functional`` / ``tocha.storage`` modules, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def _sin(x):
    return x.sin()


def _cos(x):
    return x.cos()


@pytest.mark.parametrize("pred", [True, False, "positive", "negative"])
def test_cond_takes_the_branch_its_predicate_picks(torch, pred):
    values = np.array([0.5, -1.5, 2.0])

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        p = {"positive": x.sum() > 0, "negative": x.sum() < 0}.get(pred, pred)
        y = lib.cond(p, _sin, _cos, (x,))
        y.sum().backward()
        return y.detach().numpy(), x.grad.numpy()

    for got, want in zip(run(tocha), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cond_refuses_a_predicate_of_several_elements(torch):
    for lib in (tocha, torch):
        with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element"):
            lib.cond(lib.tensor([True, False]), _sin, _cos, (lib.ones(2),))


def test_cond_passes_several_operands_and_returns_tuples(torch):
    def run(lib):
        a, b = lib.arange(3.0), lib.ones(3)
        out = lib.cond(
            lib.tensor(True), lambda a, b: (a + b, a * b), lambda a, b: (a - b, b + a), [a, b]
        )
        return [t.numpy() for t in out]

    for got, want in zip(run(tocha), run(torch)):
        np.testing.assert_array_equal(got, want)


def test_while_loop_carries_its_values_until_the_condition_fails(torch):
    def run(lib):
        out = lib.while_loop(
            lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (lib.tensor(0), lib.tensor(0.0))
        )
        return [t.item() for t in out]

    assert run(tocha) == run(torch) == [5, 10.0]


def test_sym_functions_on_plain_numbers(torch):
    calls = [
        ("sym_max", (3, 5)),
        ("sym_min", (2.0, 1)),
        ("sym_float", (3,)),
        ("sym_int", (-3.7,)),
        ("sym_not", (True,)),
        ("sym_ite", (False, 1, 2)),
        ("sym_sqrt", (4,)),
    ]
    for name, args in calls:
        got, want = getattr(tocha, name)(*args), getattr(torch, name)(*args)
        assert (got, type(got)) == (want, type(want)), name
    assert tocha.sym_sum([1, 2, 3]) == torch.sym_sum([1, 2, 3]) == 6


def test_functional_and_storage_modules_name_what_torch_s_do(torch):
    import tocha.functional
    import tocha.storage

    assert tocha.functional.__all__ == sorted(torch.functional.__all__)
    for name in tocha.functional.__all__:
        assert getattr(tocha.functional, name) is getattr(tocha, name)
    assert tocha.storage.UntypedStorage is tocha.UntypedStorage
    assert tocha.storage.TypedStorage is tocha.TypedStorage
