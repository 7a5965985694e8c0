"""Functions run in child processes by the tocha.multiprocessing tests (importable by name,
as the spawn and forkserver start methods need)."""

from __future__ import annotations

import time

import tocha as torch


def describe(t):
    """What a receiver sees of a tensor: dtype, shape, strides, offset, values, shared."""
    values = t.tolist() if t.numel() < 10_000 else None
    return (
        str(t.dtype),
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
        values,
        t.is_shared(),
        t.requires_grad,
    )


def fill_and_describe(q_in, q_out):
    """Receive a list of tensors, report what arrived, fill each with 1, send them back."""
    tensors = q_in.get(timeout=60)
    info = [describe(t) for t in tensors]
    with torch.no_grad():
        for t in tensors:
            if t.numel():
                t.fill_(1)
    q_out.put((info, tensors))
    q_in.get(timeout=60)  # the parent has the tensors: they may be let go


def add_one(t):
    """In place, for Pool.map: the parent sees it."""
    t.add_(1)
    return t


def add_one_to_all(*tensors):
    """In place, for Process arguments: several tensors, often in one shared segment."""
    for t in tensors:
        t.add_(1)


def echo(q_in, q_out):
    """Send back whatever arrives until None (the benchmark's other process)."""
    while True:
        obj = q_in.get()
        if obj is None:
            return
        q_out.put(obj)


def keep_all(q_in, q_out, count):
    """Receive `count` tensors and keep them all; report the sum of their first elements."""
    kept = [q_in.get(timeout=60) for _ in range(count)]
    q_out.put(sum(t[0].item() for t in kept))


def hold(q_in, q_out, outcome):
    """Receive tensors, send back tensors made here, then exit, raise or wait to be killed
    while holding all of them."""
    received = q_in.get(timeout=60)
    made = [torch.full((10,), 2.0), torch.full((300_000,), 3.0)]
    q_out.put(made)
    q_in.get(timeout=60)
    if outcome == "raise":
        raise RuntimeError("child failed on purpose")
    if outcome == "kill":
        q_out.put("holding")
        time.sleep(120)
    del received


def write_index(i, t):
    """For mp.spawn: process i writes i + 1 at t[i]."""
    t[i] = i + 1


def fail_second(i):
    """For mp.spawn: process 1 raises."""
    if i == 1:
        raise RuntimeError("child failed on purpose")
