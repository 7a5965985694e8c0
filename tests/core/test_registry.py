"""The op registry: every primitive has a CPU kernel; every public function is documented."""

from __future__ import annotations

import inspect

import pytest

import tocha
from tocha._api import PUBLIC
from tocha._device import CPU
from tocha._dispatch import REGISTRY

# Ops that no single backend runs: they move data between two backends.
CROSS_BACKEND = {"to_device"}


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - CROSS_BACKEND))
def test_every_primitive_has_a_cpu_kernel(name):
    assert callable(REGISTRY[name].kernels[CPU])


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_function_is_documented(name):
    assert inspect.getdoc(PUBLIC[name]), f"tocha.{name} has no docstring"


def test_public_functions_are_reachable_from_tocha():
    for name in PUBLIC:
        assert getattr(tocha, name) is PUBLIC[name]


def test_an_op_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        tocha._dispatch.defop("add", None)
