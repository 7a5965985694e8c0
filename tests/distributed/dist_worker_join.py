"""Run on 2 ranks by test_dist_ddp.py: uneven inputs (rank 0 has 3 batches, rank 1 has 5)
under ``ddp.join()`` and ``Join([ddp, ZeroRedundancyOptimizer])`` give PyTorch's final
weights on both ranks; ``throw_on_early_termination`` raises PyTorch's errors. Prints
``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os

import tocha as torch
import tocha.distributed as dist
from tocha import nn
from tocha.distributed.algorithms.join import Join
from tocha.distributed.optim import ZeroRedundancyOptimizer
from tocha.nn.parallel import DistributedDataParallel as DDP

torch.compat.use_pytorch_random()  # PyTorch's draws for the seeds, as under tocha.run
dist.init_process_group("gloo")
RANK = dist.get_rank()

# PyTorch 2.13, gloo, 2 ranks: the final weight of nn.Linear(3, 2)
EXPECTED = {
    "ddp": [-0.01378, 0.01054, 0.0042, 0.01167, -0.00617, -0.00188],
    "ddp_nodiv": [-0.01617, 0.01389, -0.03314, 0.01017, -0.00021, 0.00411],
    "zero": [-0.00602, -0.1325, 0.36858, -0.16046, 0.2391, -0.26104],
}
THROWN = ["Rank 0 exhausted all inputs.", "Detected at least one rank that exhausted inputs."]


def say(ok: bool, line: str) -> None:
    os.write(1, f"{'PASS' if ok else 'FAIL'} {line} rank {RANK}\n".encode())


for mode in ["ddp", "ddp_nodiv", "zero", "throw"]:
    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 2))
    if mode == "zero":
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.1)
        context = Join([model, opt])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        context = model.join(
            divide_by_initial_world_size=mode != "ddp_nodiv",
            throw_on_early_termination=mode == "throw",
        )
    torch.manual_seed(10 + RANK)
    inputs = [torch.randn(4, 3) for _ in range(3 + 2 * RANK)]
    try:
        with context:
            for x in inputs:
                opt.zero_grad()
                model(x).pow(2).sum().backward()
                opt.step()
    except RuntimeError as exc:
        say(mode == "throw" and THROWN[RANK] in str(exc), f"{mode}: {exc}")
    else:
        weight = [round(v, 5) for v in model.module.weight.flatten().tolist()]
        say(weight == EXPECTED.get(mode), f"{mode}: {weight}")
dist.destroy_process_group()
