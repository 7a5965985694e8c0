"""Run on 2 ranks by test_dist_ddp.py: DDP communication hooks (a hand-written all-reduce
through Work.get_future, the default hooks, a no-op hook) give PyTorch's gradients. Prints
``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os

import tocha as torch
import tocha.distributed as dist
from tocha import nn
from tocha.distributed.algorithms.ddp_comm_hooks import default_hooks
from tocha.nn.parallel import DistributedDataParallel as DDP

torch.compat.use_pytorch_random()  # PyTorch's draws for the seeds, as under tocha.run
dist.init_process_group("gloo")
RANK = dist.get_rank()


def say(ok: bool, line: str) -> None:
    os.write(1, f"{'PASS' if ok else 'FAIL'} {line} rank {RANK}\n".encode())


def mean_hook(state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    state["buckets"].append((bucket.index(), bucket.is_last(), len(bucket.parameters())))
    tensor = bucket.buffer().div_(dist.get_world_size())
    return dist.all_reduce(tensor, async_op=True).get_future().then(lambda f: f.value()[0])


def noop_hook(state, bucket):
    fut = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


def gradient(hook=None, state=None) -> list[float]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 2))
    ddp = DDP(model, bucket_cap_mb=0.00005)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    torch.manual_seed(RANK)
    ddp(torch.randn(3, 4)).pow(2).sum().backward()
    return [round(v, 4) for v in model[0].weight.grad.flatten()[:4].tolist()]


# PyTorch 2.13, gloo, 2 ranks
AVERAGE = [0.1155, 0.0318, -0.3174, 0.0038]
LOCAL = [[0.3613, 0.1251, -0.418, -0.0152], [-0.1303, -0.0615, -0.2167, 0.0228]][RANK]
state = {"buckets": []}
say(gradient(mean_hook, state) == AVERAGE, "hand-written hook")
say(state["buckets"] == [(0, True, 4)], "one bucket for the first backward, as PyTorch")
say(gradient(default_hooks.allreduce_hook) == AVERAGE, "allreduce_hook")
say(gradient(default_hooks.fp16_compress_hook) == AVERAGE, "fp16_compress_hook")
say(gradient(noop_hook) == LOCAL, "no-op hook")
say(gradient() == AVERAGE, "no hook")
dist.destroy_process_group()
