"""nn.utils.parametrize.transfer_parametrizations_and_params against PyTorch: the
parametrization modules and original tensors are shared, missing tensors are created."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def _parametrized(lib):
    class Double(lib.nn.Module):
        def forward(self, x):
            return x * 2

        def right_inverse(self, x):
            return x / 2

    class Upper(lib.nn.Module):
        def forward(self, x):
            return x.triu()

    P = lib.nn.utils.parametrize
    lib.manual_seed(0)
    a = lib.nn.Linear(3, 3)
    P.register_parametrization(a, "weight", Upper())
    P.register_parametrization(a, "weight", Double())
    P.register_parametrization(a, "bias", Double())
    return a


def _summary(lib, source, target):
    P = lib.nn.utils.parametrize
    names = list(source.parametrizations) if P.is_parametrized(source) else []
    return {
        "repr": repr(target),
        "keys": sorted(target.state_dict()),
        "shared_modules": [
            all(x is y for x, y in zip(source.parametrizations[n], target.parametrizations[n]))
            for n in names
            if P.is_parametrized(target, n)
        ],
        "shared_originals": [
            source.parametrizations[n].original is target.parametrizations[n].original
            for n in names
            if P.is_parametrized(target, n)
        ],
    }


@pytest.mark.parametrize("tensor_name", [None, "weight"])
@pytest.mark.parametrize("target", ["Linear", "Module"])
def test_transfer(torch, tensor_name, target):
    results = {}
    for lib in (tocha, torch):
        source = _parametrized(lib)
        to = lib.nn.Linear(3, 3) if target == "Linear" else lib.nn.Module()
        out = lib.nn.utils.parametrize.transfer_parametrizations_and_params(source, to, tensor_name)
        assert out is to
        np.testing.assert_array_equal(to.weight.detach().numpy(), source.weight.detach().numpy())
        results[lib] = _summary(lib, source, to)
    assert results[tocha] == results[torch]


def test_transfer_of_weight_norm_shares_both_originals(torch):
    results = {}
    for lib in (tocha, torch):
        lib.manual_seed(0)
        source = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        to = lib.nn.utils.parametrize.transfer_parametrizations_and_params(
            source, lib.nn.Linear(3, 2)
        )
        ours = to.parametrizations.weight
        theirs = source.parametrizations.weight
        assert ours.original0 is theirs.original0 and ours.original1 is theirs.original1
        results[lib] = sorted(to.state_dict())
    assert results[tocha] == results[torch]


def test_transfer_from_a_plain_module_does_nothing(torch):
    for lib in (tocha, torch):
        to = lib.nn.Linear(3, 3)
        P = lib.nn.utils.parametrize
        assert P.transfer_parametrizations_and_params(lib.nn.Linear(2, 2), to) is to
        assert not P.is_parametrized(to)


def test_transfer_of_an_unknown_name(torch):
    with pytest.raises(AttributeError) as theirs:
        torch.nn.utils.parametrize.transfer_parametrizations_and_params(
            _parametrized(torch), torch.nn.Linear(3, 3), "nope"
        )
    with pytest.raises(AttributeError) as ours:
        tocha.nn.utils.parametrize.transfer_parametrizations_and_params(
            _parametrized(tocha), tocha.nn.Linear(3, 3), "nope"
        )
    assert str(ours.value) == str(theirs.value)
