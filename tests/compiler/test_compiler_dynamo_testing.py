"""tocha._dynamo's testing helpers: CompileCounter, optimize, counters, as PyTorch's tests of
automatic dynamic shapes use them."""

from __future__ import annotations

import pytest

import tocha
import tocha._dynamo
from tocha._dynamo.testing import CompileCounter, CompileCounterWithBackend
from tocha._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _six_sizes(cnt, dynamic=None):
    def foo(x, y):
        return x * y

    opt = tocha._dynamo.optimize(cnt, dynamic=dynamic)(foo)
    for n in (2, 3, 4, 4, 5, 5, 6):
        x, y = tocha.randn(n), tocha.randn(n)
        tocha.testing.assert_close(opt(x, y), x * y)
    return cnt


def test_automatic_dynamic_shapes_reduce_recompiles(monkeypatch):
    monkeypatch.setattr(tocha._dynamo.config, "automatic_dynamic_shapes", False)
    assert _six_sizes(CompileCounter()).frame_count == 5
    monkeypatch.setattr(tocha._dynamo.config, "automatic_dynamic_shapes", True)
    assert _six_sizes(CompileCounter()).frame_count == 2
    assert _six_sizes(CompileCounter(), dynamic=True).frame_count == 1
    assert _six_sizes(CompileCounter(), dynamic=False).frame_count == 5


def test_counter_counts_operations_and_clears():
    cnt = CompileCounterWithBackend("inductor")
    f = tocha.compile(lambda x: (x.sin() + 1).relu(), backend=cnt)
    f(tocha.randn(4))
    assert (cnt.frame_count, cnt.op_count) == (1, 3)
    cnt.clear()
    assert (cnt.frame_count, cnt.op_count) == (0, 0)
    with pytest.raises(ValueError):
        CompileCounterWithBackend(lambda gm, inputs: gm)


def test_counters_count_frames_graphs_and_breaks():
    counters.clear()
    tocha.compile(lambda x: x * 2)(tocha.randn(3))
    tocha.compile(lambda x: x.sum().item())(tocha.randn(3))
    assert counters["frames"]["total"] == 2 and counters["frames"]["ok"] == 1
    assert counters["stats"]["unique_graphs"] == 1
    assert any("item()" in reason for reason in counters["graph_break"])
