"""Run on several ranks by test_dist_collectives.py: each collective against the result of one
process that holds every rank's input. Prints ``PASS name`` or ``FAIL name: why`` per check."""

from __future__ import annotations

import os
import traceback

import numpy as np

import tocha as torch
import tocha.distributed as dist

dist.init_process_group("mpi")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def data(rank: int, shape=(3, 4), dtype=np.float32, salt: int = 0) -> np.ndarray:
    """Rank `rank`'s input: any rank can make any rank's, as a single process would."""
    rng = np.random.default_rng(1000 * salt + rank)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 5, shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.standard_normal(shape).astype(dtype)


def every(**kw) -> np.ndarray:
    return np.stack([data(r, **kw) for r in range(WORLD)])


def close(t, expected, atol=1e-5) -> None:
    got = t.numpy() if isinstance(t, torch.Tensor) else t
    assert got.dtype == np.asarray(expected).dtype, (got.dtype, np.asarray(expected).dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=atol)


REDUCTIONS = {
    "SUM": lambda a: a.sum(0),
    "AVG": lambda a: a.mean(0),
    "MAX": lambda a: a.max(0),
    "MIN": lambda a: a.min(0),
    "PRODUCT": lambda a: a.prod(0),
}


@check
def all_reduce():
    for name, ref in REDUCTIONS.items():
        for dtype in (np.float32, np.float64, np.int64):
            if name == "AVG" and dtype == np.int64:
                continue
            t = torch.from_numpy(data(RANK, dtype=dtype))
            assert dist.all_reduce(t, op=getattr(dist.ReduceOp, name)) is None
            close(t, ref(every(dtype=dtype)).astype(dtype))


@check
def all_reduce_half_and_noncontiguous():
    t = torch.from_numpy(data(RANK, dtype=np.float16))
    dist.all_reduce(t)
    close(t, every(dtype=np.float16).astype(np.float32).sum(0).astype(np.float16), atol=1e-2)
    t = torch.from_numpy(data(RANK, shape=(4, 3))).t()
    version = t._version
    dist.all_reduce(t)
    close(t, every(shape=(4, 3)).sum(0).T)
    assert t._version > version


@check
def all_reduce_async():
    t = torch.from_numpy(data(RANK))
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    close(t, every().sum(0))


@check
def broadcast():
    for src in range(WORLD):
        t = torch.from_numpy(data(RANK, dtype=np.int32))
        dist.broadcast(t, src=src)
        close(t, data(src, dtype=np.int32))


@check
def reduce():
    t = torch.from_numpy(data(RANK))
    dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
    close(t, every().max(0) if RANK == 1 else data(RANK))


@check
def all_gather():
    out = [torch.zeros(3, 4) for _ in range(WORLD)]
    dist.all_gather(out, torch.from_numpy(data(RANK)))
    for r in range(WORLD):
        close(out[r], data(r))


@check
def all_gather_into_tensor():
    out = torch.zeros(WORLD * 3, 4)
    dist.all_gather_into_tensor(out, torch.from_numpy(data(RANK)))
    close(out, every().reshape(WORLD * 3, 4))


@check
def reduce_scatter_tensor():
    out = torch.zeros(2, 4)
    dist.reduce_scatter_tensor(out, torch.from_numpy(data(RANK, shape=(2 * WORLD, 4))))
    close(out, every(shape=(2 * WORLD, 4)).sum(0)[2 * RANK : 2 * RANK + 2])


@check
def gather():
    gathered = [torch.zeros(3, 4) for _ in range(WORLD)] if RANK == 0 else None
    dist.gather(torch.from_numpy(data(RANK)), gathered, dst=0)
    if RANK == 0:
        for r in range(WORLD):
            close(gathered[r], data(r))


@check
def scatter():
    pieces = [torch.from_numpy(data(r, salt=7)) for r in range(WORLD)] if RANK == 1 else None
    t = torch.zeros(3, 4)
    dist.scatter(t, pieces, src=1)
    close(t, data(RANK, salt=7))


@check
def all_to_all_single():
    inp = torch.from_numpy(data(RANK, shape=(2 * WORLD, 3)))
    out = torch.zeros(2 * WORLD, 3)
    dist.all_to_all_single(out, inp)
    expected = np.concatenate(
        [data(r, shape=(2 * WORLD, 3))[2 * RANK : 2 * RANK + 2] for r in range(WORLD)]
    )
    close(out, expected)


@check
def all_to_all_single_uneven():
    # rank r sends r + j + 1 rows to rank j
    in_splits = [RANK + j + 1 for j in range(WORLD)]
    out_splits = [r + RANK + 1 for r in range(WORLD)]
    inp = torch.from_numpy(data(RANK, shape=(sum(in_splits), 2)))
    out = torch.zeros(sum(out_splits), 2)
    dist.all_to_all_single(out, inp, out_splits, in_splits)
    pieces = []
    for r in range(WORLD):
        start = sum(r + j + 1 for j in range(RANK))
        pieces.append(
            data(r, shape=(sum(r + j + 1 for j in range(WORLD)), 2))[start : start + r + RANK + 1]
        )
    close(out, np.concatenate(pieces))


@check
def send_recv():
    if RANK == 0:
        dist.send(torch.from_numpy(data(0, salt=3)), dst=1)
        t = torch.zeros(3, 4)
        work = dist.irecv(t, src=1, tag=5)
        work.wait()
        close(t, data(1, salt=3))
    elif RANK == 1:
        t = torch.zeros(3, 4)
        assert dist.recv(t) == 0
        close(t, data(0, salt=3))
        dist.isend(torch.from_numpy(data(1, salt=3)), dst=0, tag=5).wait()


@check
def objects():
    objs = [None] * WORLD
    dist.all_gather_object(objs, {"rank": RANK, "t": [RANK] * RANK})
    assert objs == [{"rank": r, "t": [r] * r} for r in range(WORLD)]
    lst = ["a", 1, None] if RANK == 0 else [None, None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == ["a", 1, None]


@check
def groups():
    g = dist.new_group([0, 1])
    assert dist.get_world_size(g) == 2 and dist.get_rank(g) == RANK
    t = torch.ones(2) * RANK
    dist.all_reduce(t, group=g)
    close(t, np.full(2, 1.0, np.float32))
    solo = dist.new_group([1])
    if RANK == 1:
        assert dist.get_world_size(solo) == 1
    else:
        assert solo is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(solo) == -1
        assert dist.all_reduce(torch.ones(1), group=solo) is None
    dist.barrier()


for fn in CHECKS:
    try:
        fn()
    except Exception:
        line = f"FAIL {fn.__name__}: {traceback.format_exc()}"
    else:
        line = f"PASS {fn.__name__}"
    os.write(1, f"{line}\n".encode())  # one write: the ranks' lines never interleave
dist.destroy_process_group()
assert not dist.is_initialized()
