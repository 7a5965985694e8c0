"""Run by test_dist_launch.py through ``python -m tocha.distributed.run --standalone
--nproc_per_node 2``, written as a PyTorch program for torchrun is: ``init_process_group("gloo")``
with the environment (or, given ``tcp``, with ``tcp://MASTER_ADDR:MASTER_PORT`` and the rank
and world size as arguments), all_reduce, broadcast, a DDP step. Prints ``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os
import sys
import traceback

import tocha as torch
import tocha.distributed as dist
from tocha import nn
from tocha.nn.parallel import DistributedDataParallel as DDP

if sys.argv[1:] == ["tcp"]:  # the address, rank and world size passed as arguments
    address = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method=address, rank=rank, world_size=world_size)
else:
    dist.init_process_group("gloo")
RANK, WORLD = dist.get_rank(), dist.get_world_size()


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())


def check(name: str, fn) -> None:
    try:
        fn()
    except Exception:
        say(f"FAIL {name} rank {RANK}: {traceback.format_exc()}")
    else:
        say(f"PASS {name} rank {RANK}")


def environment() -> None:
    env = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")}
    assert env == {
        "RANK": str(RANK),
        "LOCAL_RANK": str(RANK),
        "WORLD_SIZE": "2",
        "LOCAL_WORLD_SIZE": "2",
    }, env
    for name in ("MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "ROLE_RANK", "TORCHELASTIC_RUN_ID"):
        assert name in os.environ, name
    assert dist.get_backend() == "gloo" and WORLD == 2 and dist.is_torchelastic_launched()


def all_reduce() -> None:
    t = torch.arange(4, dtype=torch.float32) + 10 * RANK
    dist.all_reduce(t)
    assert t.tolist() == [10.0, 12.0, 14.0, 16.0], t.tolist()


def broadcast() -> None:
    t = torch.full((3,), float(RANK + 5))
    dist.broadcast(t, src=1)
    assert t.tolist() == [6.0, 6.0, 6.0], t.tolist()


def ddp_step() -> None:
    torch.manual_seed(RANK)  # different initial weights: DDP takes rank 0's
    model = DDP(nn.Linear(3, 2))
    x = torch.ones(4, 3) * (RANK + 1)
    model(x).sum().backward()
    grad = model.module.weight.grad
    # the mean over the ranks of d(sum(W x + b))/dW = 4 * x-row: (4 * 1 + 4 * 2) / 2 = 6
    assert torch.allclose(grad, torch.full((2, 3), 6.0)), grad
    weights = [torch.zeros(2, 3) for _ in range(WORLD)]
    dist.all_gather(weights, model.module.weight.detach().clone())
    assert torch.equal(weights[0], weights[1])


for name, fn in [
    ("environment", environment),
    ("all_reduce", all_reduce),
    ("broadcast", broadcast),
    ("ddp_step", ddp_step),
]:
    check(name, fn)
dist.destroy_process_group()
