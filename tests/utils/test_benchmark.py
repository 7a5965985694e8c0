"""tocha.utils.benchmark against torch.utils.benchmark: the reports and statistics of
Measurements built from fixed times (as PyTorch prints them), Compare's tables, and Timers
that run statements."""

from __future__ import annotations

import pytest

import tocha
from tocha.utils import benchmark

# name: (per-block times, runs per block, TaskSpec fields)
MEASUREMENTS = {
    "one_block": ([0.00912], 1000, {}),
    "two_blocks": ([1.0, 1.1], 10, {}),
    "four_tight": ([0.001, 0.0011, 0.00105, 0.00101], 100, {}),
    "five_spread": ([0.001, 0.002, 0.003, 0.004, 0.005], 100, {}),
    "labelled": ([2.5], 1, {"label": "L", "sub_label": "S", "description": "D", "num_threads": 4}),
    "nanoseconds": ([2.5e-8], 1, {}),
    "long": ([1234.5], 1, {}),
    "multiline": (
        [1.0, 1.0, 1.0],
        3,
        {"stmt": "a = 1\nb = 2", "setup": "import torch\nx = 1"},
    ),
    "multiline_sub_label": ([1.0], 3, {"stmt": "a = 1\nb = 2", "sub_label": "sl"}),
    "setup_fluctuating": ([1e-5, 1.2e-5, 1.1e-5, 5e-5], 5, {"setup": "y = 2"}),
    "mild_spread": ([1.0, 1.1, 1.2, 1.25, 1.3], 1, {}),
}


def _measurement(lib, name):
    times, number, fields = MEASUREMENTS[name]
    fields = {"stmt": "x + y", "setup": "pass", **fields}
    bench = lib.utils.benchmark
    return bench.Measurement(number, times, bench.TaskSpec(**fields))


@pytest.mark.parametrize("name", list(MEASUREMENTS), ids=list(MEASUREMENTS))
def test_measurement_as_pytorch(name, torch):
    want = _measurement(torch, name)
    got = _measurement(tocha, name)
    assert repr(got).split("\n", 1)[1] == repr(want).split("\n", 1)[1]
    for stat in ("median", "mean", "iqr"):
        assert getattr(got, stat) == pytest.approx(getattr(want, stat), rel=1e-12)
    assert got.significant_figures == want.significant_figures
    assert got.has_warnings == want.has_warnings
    assert got.meets_confidence() == want.meets_confidence()
    assert got.meets_confidence(0.5) == want.meets_confidence(0.5)
    assert (got.title, got.env, got.as_row_name) == (want.title, want.env, want.as_row_name)


def test_merge_pools_times_by_task(torch):
    def merged(lib):
        bench = lib.utils.benchmark
        spec = {"stmt": "x", "setup": "pass"}
        ms = [
            bench.Measurement(10, [1.0], bench.TaskSpec(label="a", **spec)),
            bench.Measurement(10, [2.0], bench.TaskSpec(label="a", **spec)),
            bench.Measurement(10, [3.0], bench.TaskSpec(label="b", **spec)),
        ]
        return [repr(m).split("\n", 1)[1] for m in bench.Measurement.merge(ms)]

    assert merged(tocha) == merged(torch)


def test_units(torch):
    for lib_fn in ("select_unit", "unit_to_english", "trim_sigfig", "ordered_unique"):
        assert hasattr(tocha.utils.benchmark, lib_fn)
    got, want = tocha.utils.benchmark, torch.utils.benchmark
    for t in (1e-10, 1e-7, 3e-6, 0.5, 3.0, 5000.0):
        assert got.select_unit(t) == want.select_unit(t)
    assert got.unit_to_english("us") == want.unit_to_english("us")
    assert got.trim_sigfig(123.456, 2) == want.trim_sigfig(123.456, 2)
    assert got.ordered_unique([3, 1, 3, 2]) == want.ordered_unique([3, 1, 3, 2])


def _table(lib):
    bench = lib.utils.benchmark

    def m(t, **fields):
        return bench.Measurement(1, [t], bench.TaskSpec("x + y", "pass", **fields))

    return str(
        bench.Compare(
            [
                m(1e-6, label="add", sub_label="float", description="4x4"),
                m(2e-6, label="add", sub_label="float", description="8x8"),
                m(3e-6, label="add", sub_label="int", description="4x4"),
                m(5e-6, label="add", sub_label="int", description="8x8", num_threads=2),
                m(1e-3, label="mm", description="d1"),
                m(2.5e-3, label="mm", description="d2"),
            ]
        )
    )


def test_compare_table_as_pytorch(torch):
    assert _table(tocha) == _table(torch)


def test_timer_measures_a_statement():
    timer = benchmark.Timer(
        stmt="x + y",
        globals={"x": tocha.ones(3), "y": tocha.ones(3)},
        label="add",
        sub_label="float",
        description="3",
    )
    m = timer.timeit(100)
    assert m.number_per_run == 100 and len(m.times) == 1 and m.median > 0
    blocks = []
    m = timer.blocked_autorange(callback=lambda n, t: blocks.append((n, t)), min_run_time=0.02)
    assert len(blocks) == len(m.times) >= 1 and sum(t for _, t in blocks) >= 0.02
    assert m.title == "add: float" and m.task_spec.description == "3"
    m = benchmark.Timer("torch.ones(2).sum()").adaptive_autorange(max_run_time=0.05)
    assert isinstance(m, benchmark.Measurement) and m.median > 0


def test_timer_errors():
    with pytest.raises(ValueError, match="Invalid language `foo`."):
        benchmark.Timer("x", language="foo")
    with pytest.raises(NotImplementedError):
        benchmark.Timer().repeat()
