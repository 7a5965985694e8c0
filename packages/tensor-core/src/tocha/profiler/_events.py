"""What a profiler recorded: events, their averages, the table and the exported traces.

Times are kept in nanoseconds of `time.perf_counter_ns` and shown in microseconds, as
PyTorch's `FunctionEvent` shows them. Memory is the bytes of the arrays an op returned that
share no memory with its inputs (a view allocates nothing).
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Interval"]

# perf_counter's epoch in wall-clock nanoseconds: a trace's `baseTimeNanoseconds`.
_WALL_OFFSET_NS = time.time_ns() - time.perf_counter_ns()
_STACK_METRICS = ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total")


class Interval:
    """An event's span, in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _Times:
    """The device-side columns tocha does not measure (its times are host times): zeros."""

    __slots__ = ()

    device_time_total = 0.0
    self_device_time_total = 0.0
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0
    device_memory_usage = 0
    self_device_memory_usage = 0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0

    @property
    def device_time(self) -> float:
        return 0.0

    cuda_time = device_time

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)


class FunctionEvent(_Times):
    """One recorded span: an op's kernel (``tocha::add``), a `record_function` range or a
    backward node (``MulBackward0``), on one thread, with the events it encloses."""

    __slots__ = (
        "id",
        "name",
        "thread",
        "kind",
        "device",
        "start_ns",
        "end_ns",
        "input_shapes",
        "stack",
        "self_cpu_memory_usage",
        "cpu_parent",
        "cpu_children",
        "trace_name",
        "flops",
    )
    count = 1

    def __init__(self, id: int, name: str, thread: int, kind: str, parent=None, device="cpu"):
        self.id = id
        self.name = name
        self.thread = thread
        self.kind = kind
        self.device = device
        self.start_ns = 0
        self.end_ns = 0
        self.input_shapes: list = []
        self.stack: list = []
        self.self_cpu_memory_usage = 0
        self.cpu_parent = parent
        self.cpu_children: list = []
        self.trace_name = name
        self.flops = 0

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> Interval:
        return Interval(self.start_ns / 1e3, self.end_ns / 1e3)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_total_str} start_us={self.start_ns / 1e3:.3f} "
            f"end_us={self.end_ns / 1e3:.3f} cpu_children={[c.id for c in self.cpu_children]} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>"
        )


class FunctionEventAvg(_Times):
    """The sum of the events that share a key (a name, and with grouping the input shapes or
    the top of the stack): `count` calls, total and self times, memory."""

    def __init__(self, key: str = "", input_shapes=None, stack=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = input_shapes
        self.stack = stack
        self.flops = 0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, other) -> FunctionEventAvg:
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        return self

    __iadd__ = add

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class EventList(list):
    """A list of events (`FunctionEvent`) or of their averages (`FunctionEventAvg`)."""

    def __init__(self, events=(), profile_memory: bool = False, with_flops: bool = False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **_):
        """The events averaged by name (and input shapes, and the `group_by_stack_n`
        innermost stack frames, when asked)."""
        groups: dict = {}
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key,
                    e.input_shapes if group_by_input_shape else None,
                    e.stack[:group_by_stack_n] if group_by_stack_n > 0 else None,
                )
            avg.add(e)
        return EventList(groups.values(), self._profile_memory, self._with_flops)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The events as PyTorch's profiler table: one row each, sorted by the attribute
        `sort_by` (largest first), at most `row_limit` rows."""
        return _table(
            self,
            sort_by,
            row_limit,
            max_src_column_width,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
            time_unit,
        )

    def export_chrome_trace(self, path: str, metadata: dict | None = None) -> None:
        """Write the events as a Chrome trace (JSON, gzipped when `path` ends in ``.gz``),
        as chrome://tracing and Perfetto load it."""
        import gzip
        import json

        text = json.dumps(chrome_trace(self, metadata or {}, os.path.basename(path)))
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            f.write(text)

    def supported_export_stacks_metrics(self) -> list:
        return list(_STACK_METRICS)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write each event's stack, outermost frame first, with its `metric` in whole
        microseconds: the collapsed format flame graph tools read."""
        if metric not in _STACK_METRICS:
            raise ValueError(f"metric should be one of: {list(_STACK_METRICS)}")
        with open(path, "w") as f:
            for e in self:
                value = int(getattr(e, metric))
                if e.stack and value > 0:
                    f.write(";".join(reversed(e.stack)) + ";" + e.name + f" {value}\n")


def format_time(us: float, unit: str | None = None) -> str:
    if unit == "s" or (unit is None and abs(us) >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and abs(us) >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    for size, unit in ((1 << 30, "Gb"), (1 << 20, "Mb"), (1 << 10, "Kb")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _flops_unit(rows) -> tuple:
    """The scale and name of the FLOPs column (none when no row counted any)."""
    most = max((e.flops for e in rows), default=0)
    if most <= 0:
        return 0, ""
    units = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")
    k = min(max(len(str(int(most))) - 1, 0) // 3 - 1, len(units) - 1)
    k = max(k, 0)
    return 1000**k, units[k]


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _table(
    events,
    sort_by,
    row_limit,
    max_src_column_width,
    max_name_column_width,
    max_shapes_column_width,
    header,
    top_level_events_only,
    time_unit,
) -> str:
    rows = list(events)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    total = sum(e.self_cpu_time_total for e in events)
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("gpu", "device")
        rows.sort(key=lambda e: getattr(e, attribute), reverse=True)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    shapes = any(e.input_shapes for e in rows)
    stacks = any(e.stack for e in rows)

    names = [e.key for e in rows]
    name_width = min(max((len(n) for n in names), default=4) + 4, max_name_column_width)
    columns = [("Name", name_width)]
    columns += [(title, 12) for title in ("Self CPU %", "Self CPU", "CPU total %", "CPU total")]
    columns.append(("CPU time avg", 12))
    if events._profile_memory:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    flops_scale, flops_unit = _flops_unit(rows) if events._with_flops else (0, "")
    if flops_unit:
        columns.append((f"Total {flops_unit}", 12))
    if shapes:
        longest = max(len(str(e.input_shapes)) for e in rows)
        columns.append(("Input Shapes", min(longest + 4, max_shapes_column_width)))
    if stacks:
        longest = max(len(frame) for e in rows for frame in e.stack or ["Source Location"])
        columns.append(("Source Location", min(longest + 4, max_src_column_width)))

    def line(cells) -> str:
        return "".join(f"{cell:>{width}}  " for cell, (_, width) in zip(cells, columns))

    rule = line(["-" * width for _, width in columns])
    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line([title for title, _ in columns]), rule]
    for e in rows:
        cells = [
            _clip(e.key, name_width),
            _percent(e.self_cpu_time_total, total),
            format_time(e.self_cpu_time_total, time_unit),
            _percent(e.cpu_time_total, total),
            format_time(e.cpu_time_total, time_unit),
            format_time(e.cpu_time, time_unit),
        ]
        if events._profile_memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        cells.append(str(e.count))
        if flops_unit:
            cells.append(f"{e.flops / flops_scale:.3f}" if e.flops else "--")
        if shapes:
            cells.append(_clip(str(e.input_shapes or []), columns[len(cells)][1]))
        if stacks:
            cells.append(_clip(e.stack[0] if e.stack else "", columns[len(cells)][1]))
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {format_time(total, time_unit)}", ""]
    return "\n".join(out)


_CATEGORIES = {"op": "cpu_op", "user": "user_annotation"}


def chrome_trace(events, metadata: dict, trace_name: str) -> dict:
    """The events in the Chrome trace event format: complete events (``"ph": "X"``) with
    ``ts`` and ``dur`` in microseconds, and the names of the process and its threads."""
    pid = os.getpid()
    trace = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    threads = {e.thread for e in events}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in sorted(threads):
        label = f"thread {tid} ({names.get(tid, 'python')})"
        trace.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label}}
        )
    for e in events:
        args: dict = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.kind == "op":
            args["Device"] = e.device
        if e.self_cpu_memory_usage:
            args["Bytes"] = e.self_cpu_memory_usage
        if e.flops:
            args["flops"] = e.flops
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append(
            {
                "ph": "X",
                "cat": _CATEGORIES[e.kind],
                "name": e.trace_name,
                "pid": pid,
                "tid": e.thread,
                "ts": round(e.start_ns / 1e3, 3),
                "dur": round((e.end_ns - e.start_ns) / 1e3, 3),
                "args": args,
            }
        )
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": _WALL_OFFSET_NS,
        **metadata,
        "traceEvents": trace,
        "traceName": trace_name,
    }
