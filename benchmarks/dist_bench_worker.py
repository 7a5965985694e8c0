"""The 2-rank measurements of cases_distributed.py, run under mpiexec; rank 0 prints one line
``RESULT {json}`` with seconds per call.

- all_reduce of 100 MB of float32 through tocha.distributed (collective check on, as by
  default) and through mpi4py's own ``Allreduce`` on a NumPy buffer, interleaved, best of N;
- one DDP training step (forward, backward with bucketed all-reduces, SGD step) on 2 ranks,
  and the same step of the plain model in one process (rank 0 alone, rank 1 waiting).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from mpi4py import MPI

import tocha as torch
import tocha.distributed as dist
from tocha import nn

REPEATS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
MB = 1024 * 1024


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def all_reduce_figures() -> dict:
    comm = MPI.COMM_WORLD.Dup()
    array = np.ones(100 * MB // 4, np.float32)
    tensor = torch.from_numpy(np.ones(100 * MB // 4, np.float32))
    tocha_times, mpi_times = [], []
    for _ in range(REPEATS):  # interleaved, so that drift hits both alike
        tocha_times.append(best(lambda: dist.all_reduce(tensor), 1))
        mpi_times.append(best(lambda: comm.Allreduce(MPI.IN_PLACE, array, MPI.SUM), 1))
    comm.Free()
    return {"tocha_all_reduce": min(tocha_times), "mpi4py_all_reduce": min(mpi_times)}


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def step_time(net, steps: int, together: bool) -> float:
    """The best time of one SGD step of `net` on a batch of 64; with `together`, every rank
    starts each step at a barrier."""
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    times = []
    for _ in range(steps + 1):
        if together:
            dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    return min(times[1:])  # the first step allocates the gradients


def main() -> None:
    dist.init_process_group("mpi")
    figures = all_reduce_figures()
    figures["ddp_step"] = step_time(dist.DistributedDataParallel(model()), 2 * REPEATS, True)
    if dist.get_rank() == 0:  # rank 1 waits at the barrier, sleeping between polls
        figures["single_step"] = step_time(model(), 2 * REPEATS, False)
        print("RESULT " + json.dumps(figures), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
