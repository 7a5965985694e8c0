"""The op registry: every primitive has a CPU kernel; every public function is documented;
the tables that name ops by string (autocast's op lists, tocha-cuda's overrides) name
registered ones. Every installed tocha distribution is imported first, so that the ops they
declare (tocha-nn's, tocha-optim's) are walked too."""

from __future__ import annotations

import inspect

import pytest

import tocha
from tests.installed import load_installed
from tocha._api import PUBLIC
from tocha._device import CPU
from tocha._dispatch import AUTOCAST_HOOKS
from tocha.amp._policy import policy_for
from tocha.library import REGISTRY

MISSING = load_installed()
# The tables below name ops of every distribution (tocha-nn's layers, tocha-optim's steps).
needs_every_distribution = pytest.mark.skipif(
    bool(MISSING), reason=f"not every tocha distribution is installed (missing: {MISSING})"
)

# Ops that no single backend runs: they move data between two backends.
CROSS_BACKEND = {"to_device"}


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - CROSS_BACKEND))
def test_every_primitive_has_a_cpu_kernel(name):
    assert callable(REGISTRY[name].kernels[CPU])


def test_the_registry_holds_every_distribution():
    """The walk above sees tocha-nn's ops (and not only those of distributions that happened
    to be imported already)."""
    if "tocha-nn" in MISSING:
        pytest.skip("tocha-nn is not installed")
    assert {"convolution", "native_layer_norm", "cross_entropy_loss"} <= set(REGISTRY)


@pytest.mark.parametrize("device_type", ["cpu", "cuda"])
@needs_every_distribution
def test_autocast_lists_name_registered_ops(device_type):
    # a name is a primitive's (the dispatcher casts its inputs) or a hooked public function's
    unknown = sorted(set(policy_for(device_type)) - set(REGISTRY) - AUTOCAST_HOOKS)
    assert not unknown, f"autocast's {device_type} list names no op: {unknown}"


@needs_every_distribution
def test_cuda_overrides_name_registered_ops():
    from tocha_cuda._backend import CudaBackend

    for table in ("overrides", "unsupported"):
        unknown = sorted(set(getattr(CudaBackend, table)) - set(REGISTRY))
        assert not unknown, f"tocha-cuda's {table} name no op: {unknown}"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_function_is_documented(name):
    assert inspect.getdoc(PUBLIC[name]), f"tocha.{name} has no docstring"


def test_public_functions_are_reachable_from_tocha():
    for name in PUBLIC:
        assert getattr(tocha, name) is PUBLIC[name]


def test_an_op_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        tocha.library.defop("add", None)
