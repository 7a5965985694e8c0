"""Run on 2 ranks by test_dist_api.py: the collectives of PyTorch's tutorials beyond the
basic ones (all_to_all, reduce_scatter, batch_isend_irecv in a ring all-reduce,
monitored_barrier, the object collectives) and the errors PyTorch raises on misuse. Prints
``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os
import warnings
from datetime import timedelta

import tocha as torch
import tocha.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
RANK, WORLD = dist.get_rank(), dist.get_world_size()


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())


def equal(name: str, got, expected) -> None:
    say(f"{'PASS' if got == expected else 'FAIL'} {name} rank {RANK}: {got!r}")


def raises(name: str, error: type, message: str, fn) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        ok = type(exc) is error and message in str(exc)
        say(f"{'PASS' if ok else 'FAIL'} {name} rank {RANK}: {type(exc).__name__}: {exc}")
    else:
        say(f"FAIL {name} rank {RANK}: no error")


def ring_all_reduce(tensor):
    """The tutorial's ring all-reduce, with batch_isend_irecv."""
    left, right = (RANK - 1) % WORLD, (RANK + 1) % WORLD
    total, send = tensor.clone(), tensor.clone()
    recv = torch.zeros_like(tensor)
    for _ in range(WORLD - 1):
        ops = [dist.P2POp(dist.isend, send, right), dist.P2POp(dist.irecv, recv, left)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        total += recv
        send = recv.clone()
    return total


outputs = [torch.zeros(RANK + 1) for _ in range(WORLD)]
dist.all_to_all(outputs, [torch.full((j + 1,), 10.0 * RANK + j) for j in range(WORLD)])
equal(
    "all_to_all",
    [o.tolist() for o in outputs],
    [[10.0 * j + RANK] * (RANK + 1) for j in range(WORLD)],
)
out = torch.zeros(2)
dist.reduce_scatter(out, [torch.full((2,), float(j + RANK)) for j in range(WORLD)])
equal("reduce_scatter", out.tolist(), [float(2 * RANK + 1)] * 2)
equal("ring", ring_all_reduce(torch.tensor([RANK + 1.0, 1.0])).tolist(), [3.0, 2.0])
dist.monitored_barrier(wait_all_ranks=True)
received = [None]
dist.scatter_object_list(received, [{"to": j} for j in range(WORLD)] if RANK == 0 else None, src=0)
equal("scatter_object_list", received, [{"to": RANK}])
if RANK == 0:
    dist.send_object_list(["hello", 3], dst=1)
    equal("send_object_list", True, True)
else:
    objects = [None, None]
    sender = dist.recv_object_list(objects)
    equal("recv_object_list", (sender, objects), (0, ["hello", 3]))
gathered = [None, None, "kept"]
dist.all_gather_object(gathered, RANK)
equal("all_gather_object longer list", gathered, [0, 1, "kept"])
equal(
    "str(op)", (str(dist.ReduceOp.SUM), f"{dist.ReduceOp.MAX}"), ("RedOpType.SUM", "RedOpType.MAX")
)
raises(
    "avg int",
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
    lambda: dist.all_reduce(torch.arange(3), op=dist.ReduceOp.AVG),
)
raises(
    "op type",
    TypeError,
    "incompatible function arguments",
    lambda: dist.all_reduce(torch.ones(2), op="sum"),
)
raises(
    "band float",
    RuntimeError,
    "Cannot use ReduceOp.BAND with non-integral dtype",
    lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND),
)
raises(
    "complex max",
    ValueError,
    "all_reduce does not support RedOpType.MAX on complex tensors",
    lambda: dist.all_reduce(torch.tensor([1 + 2j]), op=dist.ReduceOp.MAX),
)
raises(
    "root",
    RuntimeError,
    "ProcessGroupGloo::broadcast: invalid root rank: 5",
    lambda: dist.broadcast(torch.ones(1), src=5),
)
raises(
    "all_gather size",
    RuntimeError,
    "ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (2), got (3))",
    lambda: dist.all_gather([torch.zeros(3), torch.zeros(3)], torch.ones(2)),
)
raises(
    "all_gather dtype",
    ValueError,
    "Invalid usage of tensors with different dtypes",
    lambda: dist.all_gather([torch.zeros(2, dtype=torch.int64)] * 2, torch.ones(2)),
)
raises(
    "all_to_all length",
    RuntimeError,
    "output tensor list size 1 does not match world size 2",
    lambda: dist.all_to_all([torch.zeros(1)], [torch.zeros(1)] * 2),
)
raises(
    "all_gather_into_tensor size",
    RuntimeError,
    "ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected (2), got (1))",
    lambda: dist.all_gather_into_tensor(torch.zeros(3), torch.ones(2)),
)
raises(
    "new_group rank",
    ValueError,
    "Rank 5 is out of range. Valid ranks are 0 to 1 (world_size=2)",
    lambda: dist.new_group([0, 5]),
)
stacked = torch.zeros(2, 2)
dist.all_gather_into_tensor(stacked, torch.full((2,), float(RANK)))
equal("all_gather_into_tensor stacked", stacked.tolist(), [[0.0, 0.0], [1.0, 1.0]])
only_one = dist.new_group([1])
equal("get_pg_count counts groups this rank is outside of", dist.get_pg_count(), 2)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.all_reduce(torch.ones(1), group=only_one)
expected = ["Running all_reduce on global rank 0 which does not belong to the given group."]
equal("warns outside the group", [str(w.message) for w in caught], expected if RANK == 0 else [])
mine, subgroups = dist.new_subgroups(group_size=1)
equal("new_subgroups", dist.get_process_group_ranks(mine), [RANK])
raises(
    "new_subgroups size",
    ValueError,
    "The arg 'group_size' (3) must not exceed the world size (2)",
    lambda: dist.new_subgroups(group_size=3),
)
raises(
    "new_subgroups_by_enumeration overlap",
    ValueError,
    "Rank 1 has appeared in both subgroup [0, 1] and [1]",
    lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]]),
)
if RANK == 1:
    raises(
        "gather_object list off the destination",
        ValueError,
        "Argument ``gather_list`` must NOT be specified on non-destination ranks.",
        lambda: dist.gather_object(RANK, [None, None], dst=0),
    )
else:
    into = [None, None]
    dist.gather_object(RANK, into, dst=0)
    equal("gather_object list off the destination", into, [0, 1])
raises("P2POp", ValueError, "Invalid ``op``", lambda: dist.P2POp(dist.send, torch.ones(1), 0))
t = torch.ones(2)
dist.all_reduce(t)
equal("usable after errors", t.tolist(), [2.0, 2.0])
sub = dist.new_group([0, 1])
dist.destroy_process_group(sub)
raises(
    "destroy group twice",
    ValueError,
    "Invalid process group specified",
    lambda: dist.destroy_process_group(sub),
)
dist.destroy_process_group()
raises("destroy twice", AssertionError, "Process group cannot be None", dist.destroy_process_group)
