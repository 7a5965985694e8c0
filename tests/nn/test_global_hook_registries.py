"""``torch.nn.modules.module``'s global hook registries under PyTorch's names: the hooks that
``register_module_forward_hook`` and the others add are there, and a hook that a library puts
there directly runs on every module."""

from __future__ import annotations

import tocha
from tocha.nn.modules import module as module_mod


def test_registered_hooks_are_in_the_registries():
    handle = tocha.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    try:
        assert handle.id in module_mod._global_forward_hooks
    finally:
        handle.remove()
    assert handle.id not in module_mod._global_forward_hooks


def test_a_hook_put_in_a_registry_runs():
    seen = []
    module_mod._global_forward_pre_hooks[-1] = lambda m, args: seen.append(type(m).__name__)
    try:
        tocha.nn.Linear(2, 2)(tocha.ones(1, 2))
    finally:
        del module_mod._global_forward_pre_hooks[-1]
    assert seen == ["Linear"]
    assert module_mod._global_backward_hooks is module_mod._GLOBAL_BACKWARD_HOOKS


def test_parameters_take_attributes_and_deepcopy_keeps_them():
    """Libraries mark parameters (transformers' ``_is_hf_initialized``), as PyTorch allows."""
    import copy

    p = tocha.nn.Parameter(tocha.ones(2))
    p._is_hf_initialized = True
    q = copy.deepcopy(p)
    assert q._is_hf_initialized and q is not p and not hasattr(tocha.nn.Parameter(p), "_x")
    assert module_mod._EXTRA_STATE_KEY_SUFFIX == "_extra_state"
