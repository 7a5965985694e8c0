"""Dynamic sizes: ``tocha.compile(dynamic=True)`` and automatic dynamic shapes (a dim seen at a
second size), one compiled graph for every batch size, equal to eager."""

from __future__ import annotations

import copy

import pytest

import tocha
import tocha._dynamo
import tocha.nn as nn
import tocha.nn.functional as F
from tests.compiler.models import Block
from tocha.compiler._guards import MISS

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))


MODELS = {
    "mlp": (_mlp, lambda b: tocha.randn(b, 12)),
    "gpt_block": (Block, lambda b: tocha.randn(b, 16, 32)),
    "cnn_bn_dropout": (
        lambda: nn.Sequential(
            nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.3), nn.Flatten()
        ),
        lambda b: tocha.randn(b, 2, 6, 6),
    ),
}


def _check_sizes(name, dynamic, sizes, captures):
    make, batch = MODELS[name]
    tocha.manual_seed(0)
    model = make()
    reference = copy.deepcopy(model)
    compiled = tocha.compile(model, dynamic=dynamic)
    for b in sizes:
        x = batch(b)
        tocha.manual_seed(b)
        out = compiled(x)
        tocha.manual_seed(b)
        want = reference(x)
        tocha.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        model.zero_grad()
        reference.zero_grad()
        (out * out).sum().backward()
        (want * want).sum().backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            tocha.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-5)
        for p, q in zip(model.buffers(), reference.buffers()):
            tocha.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)
    return captures()


@pytest.mark.parametrize("name", list(MODELS))
def test_dynamic_true_compiles_once_for_every_batch_size(name, captures):
    assert _check_sizes(name, True, [4, 7, 9, 5], captures) == 1


@pytest.mark.parametrize("name", ["mlp", "gpt_block"])
def test_a_second_size_makes_the_batch_dynamic(name, captures):
    assert _check_sizes(name, None, [4, 7, 9, 12, 4], captures) == 2


def test_dynamic_false_and_the_config_switch_keep_sizes_static(captures, monkeypatch):
    assert _check_sizes("mlp", False, [4, 7, 9], captures) == 3
    tocha.compiler.reset()
    monkeypatch.setattr(tocha._dynamo.config, "automatic_dynamic_shapes", False)
    assert _check_sizes("mlp", None, [4, 7, 9], captures) == 6


def test_sizes_0_and_1_are_specialised(captures):
    assert _check_sizes("mlp", True, [4, 1, 7, 1], captures) == 2


def test_a_size_used_non_linearly_stays_static(captures, caplog):
    def fn(x):
        n = x.shape[0]
        return x.sum(0).expand(n * n, 3) * 2

    compiled = tocha.compile(fn, dynamic=True)
    for b in (3, 4, 6):
        x = tocha.randn(b, 3)
        tocha.testing.assert_close(compiled(x), fn(x))
    assert captures() == 3
    # the shadow traces were tried once: later sizes capture once each
    shadows = sum("sizes stay static" in r.getMessage() for r in caplog.records)
    assert shadows == 1


def test_dims_that_change_together_share_the_size(captures):
    model = _mlp()

    def loss(x, y):
        return F.cross_entropy(model(x), y)

    compiled = tocha.compile(loss)
    for b in (4, 6, 9):
        x, y = tocha.randn(b, 12), tocha.randint(0, 3, (b,))
        tocha.testing.assert_close(compiled(x, y), loss(x, y))
    assert captures() == 2
    # a call whose batch sizes disagree is refused by the guards (and by the model's checks)
    with pytest.raises(ValueError, match="batch_size"):
        compiled(tocha.randn(5, 12), tocha.randint(0, 3, (6,)))


def test_the_fast_path_takes_new_sizes():
    model = _mlp()
    compiled = tocha.compile(model, dynamic=True)
    compiled(tocha.randn(4, 12))
    fast = compiled._compiled.fast
    x = tocha.randn(11, 12)
    result = fast((x,))
    tocha.testing.assert_close(result, model(x))
    assert fast((tocha.randn(11, 13),)) is MISS  # a static dim still guards
    assert fast((tocha.randn(1, 12),)) is MISS  # sizes 0 and 1 are specialised


def test_mark_dynamic_compiles_once(captures):
    model = _mlp()
    reference = copy.deepcopy(model)
    compiled = tocha.compile(model)
    for b in (4, 7, 9):
        x = tocha.randn(b, 12)
        tocha._dynamo.mark_dynamic(x, 0)
        tocha.testing.assert_close(compiled(x), reference(x))
    assert captures() == 1
    with pytest.raises(IndexError):
        tocha._dynamo.mark_dynamic(tocha.randn(3), 1)


def test_a_program_refusing_other_sizes_keeps_static_sizes(captures):
    def fn(x):
        if x.shape[0] != 4 and x.shape[0] != 6:
            raise ValueError("only 4 or 6 rows")
        return x * 2

    compiled = tocha.compile(fn, dynamic=True)
    for b in (4, 6, 4):
        x = tocha.randn(b, 3)
        tocha.testing.assert_close(compiled(x), x * 2)
    assert captures() == 2
    with pytest.raises(ValueError, match="only 4 or 6"):
        compiled(tocha.randn(5, 3))
