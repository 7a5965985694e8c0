"""tocha.autograd.profiler: the legacy profile API, and backward nodes as events."""

from __future__ import annotations

import json
import warnings

import pytest

import tocha
import tocha.profiler
from tocha.autograd import profiler
from tocha.autograd.profiler import profile, record_function


def _model_step():
    x = tocha.ones(3, 4, requires_grad=True)
    with record_function("model"):
        y = (x * 2).sin().sum()
        y.backward()
    return x


def test_legacy_profile_table():
    with profile() as prof:
        _model_step()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["model"] == 1
    assert counts["tocha::sin"] == 1
    assert counts["SinBackward0"] == counts["MulBackward0"] == counts["SumBackward0"] == 1
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert len(table.splitlines()) == 3 + 5 + 2
    assert table.splitlines()[1].split()[0] == "Name"
    assert "Self CPU time total" in table
    assert prof.table() == prof.function_events.table()
    assert str(prof) == prof.function_events.table()


def test_backward_nodes_hold_their_formulas_ops():
    with profile() as prof:
        _model_step()
    events = prof.function_events
    sin_backward = next(e for e in events if e.name == "SinBackward0")
    children = [c.name for c in sin_backward.cpu_children]
    assert "tocha::cos" in children and "tocha::mul" in children
    model = next(e for e in events if e.name == "model")
    assert sin_backward.cpu_parent is model


def test_engine_is_untouched_outside_profiling():
    from tocha.autograd import _engine

    apply = _engine._apply
    with pytest.raises(KeyError):
        with profile():
            assert _engine._apply is not apply
            raise KeyError("x")
    assert _engine._apply is apply


def test_record_function_is_the_profilers():
    assert profiler.record_function is tocha.profiler.record_function


def test_shapes_and_memory():
    with profile(record_shapes=True, profile_memory=True) as prof:
        tocha.ones(4, 5) * 2
    mul = next(e for e in prof.function_events if e.name == "tocha::mul")
    assert mul.input_shapes == [[4, 5], []]
    assert mul.self_cpu_memory_usage == 80
    grouped = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in grouped and "[[4, 5], []]" in grouped
    assert "Self CPU Mem" in grouped


def test_unfinished_profile_raises():
    prof = profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()
    with prof:
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            prof.table()


def test_disabled_profile_records_nothing():
    with profile(enabled=False) as prof:
        tocha.ones(2) + 1
    assert prof.function_events is None


def test_not_reentrant():
    prof = profile()
    with prof:
        with pytest.raises(RuntimeError, match="not reentrant"):
            prof.__enter__()


def test_use_cuda_warns_and_use_device_is_accepted():
    with pytest.warns(FutureWarning, match="use_cuda"):
        profile(use_cuda=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with profile(use_device="cuda", use_kineto=True, with_flops=True) as prof:
            tocha.ones(2)
    assert [e.name for e in prof.function_events] == ["tocha::ones"]


def test_self_cpu_time_total_and_total_average():
    with profile() as prof:
        with record_function("outer"):
            tocha.ones(2) + 1
    outer = next(e for e in prof.function_events if e.name == "outer")
    assert prof.self_cpu_time_total == pytest.approx(outer.cpu_time_total)
    assert prof.total_average().count == 3


def test_chrome_trace_has_backward_nodes(tmp_path):
    with profile() as prof:
        _model_step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"model", "MulBackward0", "tocha::mul", "tocha::cos"} <= names
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and isinstance(e["ts"], (int, float))


def test_new_profiler_sees_backward_nodes_too():
    with tocha.profiler.profile() as prof:
        _model_step()
    names = {e.name for e in prof.events()}
    assert {"MulBackward0", "SinBackward0", "SumBackward0"} <= names


def test_range_markers_are_accepted_and_kineto_is_available():
    x = tocha.ones(2, requires_grad=True)
    for markers in (profiler.emit_nvtx(), profiler.emit_itt(record_shapes=True)):
        with markers:
            (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
    assert profiler.kineto_available() is True
