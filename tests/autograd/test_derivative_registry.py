"""Every differentiable primitive has a derivative formula and a forward-mode rule, and every
formula and rule names a primitive. Every installed tocha distribution is imported first, so
that tocha-nn's primitives and the formulas and rules it declares beside them are checked
too."""

from __future__ import annotations

import pytest

import tocha
from tests.installed import load_installed
from tocha.autograd._formulas import FORMULAS
from tocha.autograd._forward import FORWARD_RULES
from tocha.library import REGISTRY

load_installed()

# Primitives whose gradient is handled outside the formula table.
NOT_IN_TABLE = {"to_device"} - set(FORMULAS)


@pytest.mark.parametrize(
    "name", sorted(n for n, op in REGISTRY.items() if op.differentiable and n not in NOT_IN_TABLE)
)
def test_every_differentiable_primitive_has_a_formula(name):
    assert name in FORMULAS, f"tocha-autograd has no derivative for {name}"


def test_formulas_name_only_existing_primitives():
    unknown = sorted(set(FORMULAS) - set(REGISTRY))
    assert not unknown, f"derivatives of no op: {unknown}"


# tocha's own primitives: an op a test or an example declares under its namespace ("ns::op")
# may go without a forward rule (forward mode then raises, naming it).
@pytest.mark.parametrize(
    "name", sorted(n for n, op in REGISTRY.items() if op.differentiable and "::" not in n)
)
def test_every_differentiable_primitive_has_a_forward_rule(name):
    assert name in FORWARD_RULES, f"tocha-autograd has no forward rule for {name}"


def test_forward_rules_name_only_differentiable_primitives():
    unknown = sorted(n for n in FORWARD_RULES if n not in REGISTRY)
    assert not unknown, f"forward rules of no op: {unknown}"
    constant = sorted(n for n in FORWARD_RULES if not REGISTRY[n].differentiable)
    assert not constant, f"forward rules of non-differentiable ops: {constant}"


def test_non_differentiable_ops_record_nothing():
    x = tocha.ones(3, requires_grad=True)
    for result in (x > 0, x.argmax(), x.isnan()):
        assert result.grad_fn is None and not result.requires_grad
