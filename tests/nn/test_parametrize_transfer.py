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


def test_deepcopy_of_a_parametrized_module(torch):
    """copy.deepcopy works (pickling does not): same class, its own originals; under
    `cached` each copy caches its own tensor."""
    import copy

    results = {}
    for lib in (tocha, torch):
        lib.manual_seed(0)
        source = _parametrized(lib)
        copied = copy.deepcopy(source)
        assert type(copied) is type(source)
        ours = copied.parametrizations.weight
        assert ours.original is not source.parametrizations.weight.original
        with lib.nn.utils.parametrize.cached():
            same_before = bool(lib.equal(copied.weight, source.weight))
            with lib.no_grad():
                ours.original.add_(1)
            same_after = bool(lib.equal(copied.weight, source.weight))
        results[lib] = (same_before, same_after, repr(copied))
    assert results[tocha] == results[torch]


PICKLE_ERROR = (
    "Serialization of parametrized modules is only supported through state_dict(). See:\n"
    "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
    "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
)


def test_pickling_a_parametrized_module_raises():
    import pickle

    with pytest.raises(RuntimeError) as ours:
        pickle.dumps(_parametrized(tocha))
    assert str(ours.value) == PICKLE_ERROR


def _metadata_after_spectral_norm(lib):
    sn = lib.nn.utils.spectral_norm
    model = lib.nn.Sequential(sn(lib.nn.Linear(2, 2)), sn(lib.nn.Conv1d(1, 1, 1), "bias"))
    model[0].register_state_dict_post_hook(lambda m, sd, p, meta: meta.__setitem__("x", 1))
    before = dict(model.state_dict()._metadata)
    lib.nn.utils.remove_spectral_norm(model[1], "bias")
    return before, dict(model.state_dict()._metadata)


# PyTorch 2.13's (a state dict's _metadata cannot go through the recorded oracle).
EXPECTED_METADATA = (
    {
        "": {"version": 1},
        "0": {"version": 1, "spectral_norm": {"weight.version": 1}, "x": 1},
        "1": {"version": 1, "spectral_norm": {"bias.version": 1}},
    },
    {
        "": {"version": 1},
        "0": {"version": 1, "spectral_norm": {"weight.version": 1}, "x": 1},
        "1": {"version": 1},
    },
)


def test_spectral_norm_records_its_version_in_the_metadata():
    assert _metadata_after_spectral_norm(tocha) == EXPECTED_METADATA


def test_spectral_norm_metadata_live():
    torch = pytest.importorskip("torch")
    assert _metadata_after_spectral_norm(torch) == EXPECTED_METADATA
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
        import pickle

        pickle.dumps(_parametrized(torch))
