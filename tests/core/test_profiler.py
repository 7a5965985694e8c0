"""tocha.profiler: op events from the dispatcher's kernel caches, record_function ranges,
schedules, the averages table, Chrome traces, and the caches put back after profiling."""

from __future__ import annotations

import gzip
import json
import os
import threading
import warnings

import pytest

import tocha
from tocha._dispatch import REGISTRY
from tocha.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

ACTIONS = [a.name for a in ProfilerAction]


def _caches():
    """Every op's cache: its class and the identity of each cached kernel."""
    return {
        name: (type(op.kernels), {dev: id(k) for dev, k in op.kernels.items()})
        for name, op in REGISTRY.items()
    }


def _counts(prof) -> dict:
    return {e.key: e.count for e in prof.key_averages()}


def _names(prof) -> list:
    return [e.name for e in prof.events()]


def test_ops_are_counted_by_name():
    a, b = tocha.ones(4), tocha.ones(4)
    with profile() as prof:
        for _ in range(3):
            a + b
        a * b
        tocha.mul(a, b)
        a.sum()
    counts = _counts(prof)
    assert counts["tocha::add"] == 3
    assert counts["tocha::mul"] == 2
    assert counts["tocha::sum"] == 1


def test_fast_paths_holding_a_cache_and_views_are_recorded():
    a = tocha.ones(3, 3)
    with profile() as prof:
        a @ a  # matmul's fast path calls its own reference to the cache
        a.sum()  # so does the full sum's
        a.t()
    counts = _counts(prof)
    assert counts["tocha::matmul"] == counts["tocha::sum"] == 1
    assert sum(counts.values()) == 3  # and one view op


def test_no_events_while_inactive():
    before = _caches()
    a = tocha.ones(4)
    prof = profile()
    a + a  # made but not started: nothing recorded, nothing swapped
    assert _caches() == before
    with prof:
        pass
    a + a
    assert prof.events() == []
    assert prof.key_averages().table().count("tocha::") == 0


def test_kernel_caches_are_swapped_only_while_recording():
    a = tocha.ones(4)
    a + a
    add = REGISTRY["add"].kernels
    original = dict(add)
    with profile():
        assert all(add[d] is not k for d, k in original.items())
    assert dict(add) == original
    assert all(add[d] is k for d, k in original.items())


def test_kernel_caches_are_restored_after_an_exception():
    a = tocha.ones(3, 3)
    a @ a, a.sum(), a + a
    before = _caches()
    with pytest.raises(ValueError, match="inside"):
        with profile():
            a @ a, a.sum(), a + a
            raise ValueError("inside")
    assert _caches() == before
    from tocha._ops import matmul, reduction

    # The modules that keep a cache of their own see the originals again.
    assert all(type(k).__name__ != "_Timed" for k in reduction._SUM_KERNELS.values())
    assert all(type(k).__name__ != "_Timed" for k in matmul._matmul_kernels.values())


def test_kernels_built_while_recording_are_unwrapped_after():
    op = REGISTRY["exp"]
    op.kernels.clear()
    with profile() as prof:
        tocha.exp(tocha.ones(2))
    assert "tocha::exp" in _names(prof)
    assert type(op.kernels).__name__ == "_Kernels"
    assert all(type(k).__name__ != "_Timed" for k in op.kernels.values())


def test_the_caches_of_ops_the_profiled_code_uses_are_restored_on_exit_from_a_schedule():
    before = _caches()
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(4):
            tocha.ones(2) + 1
            prof.step()
    assert _caches() == before


def test_record_function_nests_and_holds_its_ops():
    a = tocha.ones(4)
    with profile() as prof:
        with record_function("outer"):
            a + a
            with record_function("inner"):
                a * a
    events = {e.name: e for e in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert outer.cpu_parent is None
    assert inner.cpu_parent is outer
    assert events["tocha::mul"].cpu_parent is inner
    assert events["tocha::add"].cpu_parent is outer
    assert outer.cpu_time_total >= inner.cpu_time_total >= events["tocha::mul"].cpu_time_total
    assert outer.time_range.start <= inner.time_range.start
    assert inner.time_range.end <= outer.time_range.end
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children)
    )


def test_record_function_as_decorator_and_outside_a_profiler():
    @record_function("step_fn")
    def step(x):
        return x * 2

    x = tocha.ones(2)
    step(x)  # no profiler: nothing to record, nothing raised
    with record_function("alone"):
        x + 1
    with profile() as prof:
        step(step(x))
    assert _counts(prof)["step_fn"] == 2
    assert [e.cpu_parent.name for e in prof.events() if e.name == "tocha::mul"] == ["step_fn"] * 2


def test_record_function_ranges_show_in_table():
    with profile() as prof:
        with record_function("my_block"):
            tocha.ones(3).sum()
    table = prof.key_averages().table(sort_by="cpu_time_total")
    rows = [line.split()[0] for line in table.splitlines()[3:-2]]
    assert rows[0] == "my_block"
    assert set(rows) == {"my_block", "tocha::ones", "tocha::sum"}


def test_table_columns_and_footer():
    a = tocha.ones(8)
    with profile() as prof:
        for _ in range(3):
            a + a
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    lines = table.splitlines()
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[1].split("  ") and [c.strip() for c in lines[1].split("  ") if c.strip()] == [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ]
    row = lines[3].split()
    assert row[0] == "tocha::add"
    assert row[1] == "100.00%" and row[3] == "100.00%"
    assert row[2].endswith("us") or row[2].endswith("ms")
    assert row[-1] == "3"
    assert lines[-1].startswith("Self CPU time total: ")


def test_table_sorts_and_limits_rows():
    a = tocha.ones(8)
    with profile() as prof:
        for _ in range(3):
            a * a
        a + a
        a.sum()
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    rows = table.splitlines()[3:-2]
    assert len(rows) == 2
    assert rows[0].split()[0] == "tocha::mul"
    averages = prof.key_averages()
    totals = sorted((e.cpu_time_total for e in averages), reverse=True)
    by_total = averages.table(sort_by="cpu_time_total").splitlines()[3:-2]
    assert [line.split()[0] for line in by_total][0] == max(
        averages, key=lambda e: e.cpu_time_total
    ).key
    assert totals[0] >= totals[-1]


def test_input_shapes_are_recorded_and_grouped():
    a, b = tocha.ones(2, 3), tocha.ones(4)
    with profile(record_shapes=True) as prof:
        a + a
        b + b
        b + b
        a + 1
    adds = [e for e in prof.events() if e.name == "tocha::add"]
    assert [e.input_shapes for e in adds] == [
        [[2, 3], [2, 3]],
        [[4], [4]],
        [[4], [4]],
        [[2, 3], []],
    ]
    grouped = prof.key_averages(group_by_input_shape=True)
    assert sorted((str(e.input_shapes), e.count) for e in grouped) == [
        ("[[2, 3], [2, 3]]", 1),
        ("[[2, 3], []]", 1),
        ("[[4], [4]]", 2),
    ]
    header = grouped.table().splitlines()[1]
    assert header.rstrip().endswith("Input Shapes")
    assert "Input Shapes" not in prof.key_averages().table()


def test_shapes_are_not_recorded_unless_asked():
    with profile() as prof:
        tocha.ones(2) + 1
    assert all(e.input_shapes == [] for e in prof.events())


def test_memory_of_each_result():
    x = tocha.ones(10, 10)
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            y = x + x  # 400 bytes
            x.t()  # a view allocates nothing
            x.add_(1)  # in place: nothing
    events = {e.name: e for e in prof.events()}
    memory = [(e.name, e.self_cpu_memory_usage) for e in events["block"].cpu_children]
    assert memory[0] == ("tocha::add", 400)
    assert len(memory) == 3 and all(nbytes == 0 for _, nbytes in memory[1:])
    assert events["block"].cpu_memory_usage == 400
    assert events["block"].self_cpu_memory_usage == 0
    header = prof.key_averages().table().splitlines()[1]
    assert "CPU Mem" in header and "Self CPU Mem" in header
    assert "400 B" in prof.key_averages().table()
    del y


def test_memory_columns_only_with_profile_memory():
    with profile() as prof:
        tocha.ones(3)
    assert "CPU Mem" not in prof.key_averages().table()


def test_with_stack_names_the_calling_line():
    with profile(with_stack=True) as prof:
        tocha.ones(3) * 2
    mul = next(e for e in prof.events() if e.name == "tocha::mul")
    assert mul.stack and "test_profiler.py" in mul.stack[0]
    assert "test_with_stack_names_the_calling_line" in mul.stack[0]
    assert not any("/tocha/" in frame and "site-packages" not in frame for frame in mul.stack[:1])


def test_export_stacks(tmp_path):
    with profile(with_stack=True) as prof:
        for _ in range(20):
            tocha.ones(100) * 2
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines
    for line in lines:
        frames, value = line.rsplit(" ", 1)
        assert int(value) > 0
        assert frames.split(";")[-1].startswith("tocha::")
    with pytest.raises(ValueError, match="metric"):
        prof.export_stacks(str(path), "nonsense")


def _check_trace(trace: dict) -> list:
    """The complete events of a trace, after checking the Chrome trace event format."""
    assert isinstance(trace["traceEvents"], list)
    complete = []
    for e in trace["traceEvents"]:
        assert e["ph"] in ("X", "M")
        assert isinstance(e["name"], str)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e.get("args", {}), dict)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
            assert e["dur"] >= 0
            assert isinstance(e["cat"], str)
            complete.append(e)
    return complete


def test_chrome_trace_schema(tmp_path):
    a = tocha.ones(5)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("outer"):
            a + a
            a.sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert trace["displayTimeUnit"] in ("ms", "ns")
    complete = _check_trace(trace)
    by_name = {e["name"]: e for e in complete}
    assert set(by_name) == {"outer", "tocha::add", "tocha::sum"}
    outer, add = by_name["outer"], by_name["tocha::add"]
    assert outer["cat"] == "user_annotation" and add["cat"] == "cpu_op"
    # nesting on one thread is containment in time
    assert add["tid"] == outer["tid"] == threading.get_native_id()
    assert add["pid"] == os.getpid()
    assert outer["ts"] <= add["ts"] and add["ts"] + add["dur"] <= outer["ts"] + outer["dur"]
    assert add["args"]["Input Dims"] == [[5], [5]]
    assert add["args"]["Bytes"] == 20
    threads = [e for e in trace["traceEvents"] if e["name"] == "thread_name"]
    assert threads and threads[0]["tid"] == outer["tid"]
    # the same microseconds as the events
    event = next(e for e in prof.events() if e.name == "tocha::add")
    assert add["dur"] == pytest.approx(event.cpu_time_total, abs=1e-3)


def test_chrome_trace_gzipped_and_metadata(tmp_path):
    with profile() as prof:
        tocha.ones(2) + 1
    prof.add_metadata("run", "a")
    prof.add_metadata_json("config", '{"lr": 0.1}')
    path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(path))
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    assert trace["run"] == "a" and trace["config"] == {"lr": 0.1}
    assert {e["name"] for e in _check_trace(trace)} == {"tocha::ones", "tocha::add"}


def test_events_of_other_threads_carry_their_thread():
    seen = {}

    def work():
        seen["tid"] = threading.get_native_id()
        with record_function("in_thread"):
            tocha.ones(3) + 1

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        tocha.ones(3) * 2
    events = {e.name: e for e in prof.events()}
    assert events["in_thread"].thread == seen["tid"]
    assert events["tocha::add"].cpu_parent is events["in_thread"]
    assert events["tocha::mul"].thread == threading.get_native_id()
    assert events["tocha::mul"].cpu_parent is None


def test_nested_profilers_both_record():
    with profile() as outer:
        tocha.ones(2) + 1
        with profile() as inner:
            tocha.ones(2) * 2
        tocha.ones(2) - 1
    assert _counts(inner) == {"tocha::ones": 1, "tocha::mul": 1}
    assert _counts(outer) == {"tocha::ones": 3, "tocha::add": 1, "tocha::mul": 1, "tocha::sub": 1}


def test_start_stop_without_with():
    prof = profile()
    prof.start()
    tocha.ones(2) + 1
    prof.stop()
    assert _counts(prof)["tocha::add"] == 1


SCHEDULES = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
    dict(wait=0, warmup=2, active=1, repeat=1),
    dict(wait=2, warmup=1, active=3, repeat=0, skip_first=3),
    dict(wait=1, warmup=1, active=2, skip_first_wait=1),
    dict(wait=1, warmup=1, active=2, repeat=2, skip_first=2, skip_first_wait=1),
]


@pytest.mark.parametrize("args", SCHEDULES, ids=str)
def test_schedule_matches_torch(torch, args):
    expected = [torch.profiler.schedule(**args)(step).name for step in range(16)]
    assert [schedule(**args)(step).name for step in range(16)] == expected


def test_schedule_actions():
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    got = [s(i).name for i in range(11)]
    assert got == [
        "NONE",
        "NONE",
        "WARMUP",
        "RECORD",
        "RECORD_AND_SAVE",
        "NONE",
        "WARMUP",
        "RECORD",
        "RECORD_AND_SAVE",
        "NONE",
        "NONE",
    ]
    assert ACTIONS == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"]


def test_schedule_rejects_bad_arguments():
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="warmup"):
        schedule(wait=0, warmup=0, active=1)


def test_schedule_drives_recording_and_on_trace_ready():
    traces = []

    def ready(p):
        traces.append((p.step_num, _counts(p)))

    x = tocha.ones(3)
    with profile(schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=ready) as prof:
        for i in range(6):
            x + i
            prof.step()
    # steps 2 and 3 are recorded and saved at the end of step 3; step 6 starts the next
    # cycle's recording, saved when the profiler stops
    assert [step for step, _ in traces] == [4, 6]
    first = traces[0][1]
    assert first["tocha::add"] == 2
    assert first["ProfilerStep*"] == 2
    assert traces[1][1] == {"ProfilerStep*": 1}
    assert prof.step_num == 6
    steps = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#6"]


def test_step_events_hold_the_steps_ops(tmp_path):
    x = tocha.ones(3)
    with profile(schedule=schedule(wait=0, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(4):
            x * 2
            prof.step()
    events = prof.events()
    steps = [e for e in events if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    assert all(e.cpu_parent in steps for e in events if e.name == "tocha::mul")
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    names = {e["name"] for e in _check_trace(json.loads(path.read_text()))}
    assert {"ProfilerStep#1", "ProfilerStep#2", "tocha::mul"} <= names


def test_acc_events_keeps_every_cycle():
    sched = schedule(wait=0, warmup=1, active=1, repeat=2)
    with profile(schedule=sched, acc_events=True) as prof:
        for _ in range(5):
            tocha.ones(2) + 1
            prof.step()
    assert _counts(prof)["tocha::add"] == 2


def test_warmup_records_nothing():
    with profile(schedule=schedule(wait=0, warmup=3, active=1)) as prof:
        for _ in range(2):
            tocha.ones(2) + 1
            prof.step()
    assert prof.events() == []


def test_incorrect_schedule_warns():
    with pytest.warns(UserWarning, match="RECORD followed by NONE"):
        with profile(schedule=lambda step: [ProfilerAction.RECORD, ProfilerAction.NONE][step]) as p:
            p.step()


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path), "worker0")):
        tocha.ones(2) + 1
    (path,) = tmp_path.iterdir()
    assert path.name.startswith("worker0.") and path.name.endswith(".pt.trace.json")
    assert "tocha::add" in {e["name"] for e in _check_trace(json.loads(path.read_text()))}


def test_tensorboard_trace_handler_gzip(tmp_path):
    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path / "d"), use_gzip=True)):
        tocha.ones(2)
    (path,) = (tmp_path / "d").iterdir()
    assert path.name.endswith(".pt.trace.json.gz")
    with gzip.open(path, "rt") as f:
        _check_trace(json.load(f))


def test_activities_and_accepted_arguments():
    assert ProfilerActivity.CPU in tocha.profiler.supported_activities()
    assert {"CPU", "CUDA"} <= set(ProfilerActivity.__members__)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        with_flops=True,
        with_modules=True,
        experimental_config=None,
    ) as prof:
        tocha.ones(2)
    assert _counts(prof) == {"tocha::ones": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning, match="use_cuda"):
            profile(use_cuda=True)


def test_total_average_and_self_time_total():
    with profile() as prof:
        with record_function("r"):
            tocha.ones(2) + 1
    events = prof.events()
    total = events.total_average()
    assert total.key == "Total" and total.count == 3
    top = next(e for e in events if e.name == "r")
    assert events.self_cpu_time_total == pytest.approx(top.cpu_time_total)


def test_missing_names_say_so():
    with pytest.raises(AttributeError, match="itt"):
        tocha.profiler.itt  # noqa: B018


def test_a_range_left_open_at_stop_ends_with_the_recording():
    prof = profile()
    span = record_function("span")
    prof.start()
    span.__enter__()
    tocha.ones(2)
    prof.stop()
    span.__exit__(None, None, None)
    event = next(e for e in prof.events() if e.name == "span")
    assert event.end_ns >= event.start_ns > 0
    assert event.cpu_time_total >= event.cpu_children[0].cpu_time_total


def test_with_flops_counts_products_and_arithmetic():
    a, b = tocha.ones(64, 128), tocha.ones(128, 32)
    with profile(with_flops=True) as prof:
        a @ b
        tocha.mm(a, b)
        a * a
        a.t()
    flops = {e.key: e.flops for e in prof.key_averages()}
    assert flops["tocha::matmul"] == 2 * 2 * 64 * 32 * 128
    assert flops["tocha::mul"] == 64 * 128
    table = prof.key_averages().table()
    assert table.splitlines()[1].rstrip().endswith("Total KFLOPs")
    assert "1048.576" in table and "--" in table
    with profile() as prof:
        a @ b
    assert "FLOPs" not in prof.key_averages().table()


def test_instrumentation_runs_while_recording_and_a_failing_one_undoes_all():
    from tocha.profiler import _record
    from tocha.profiler.profiler import add_instrumentation

    log = []

    def install():
        if log == ["fail"]:
            raise RuntimeError("cannot instrument")
        log.append("installed")
        return lambda: log.append("undone")

    before = _caches()
    try:
        with profile():
            add_instrumentation(install)  # added while recording: installed at once
            assert log == ["installed"]
        assert log == ["installed", "undone"]
        log[:] = ["fail"]
        with pytest.raises(RuntimeError, match="cannot instrument"):
            with profile():
                pass
        assert _caches() == before
        log.clear()
        with profile() as prof:
            tocha.ones(1)
        assert log == ["installed", "undone"] and _counts(prof) == {"tocha::ones": 1}
    finally:
        _record.STATE.instrumentations.remove(install)
