"""Run on 2 ranks by test_dist_zero.py: ZeroRedundancyOptimizer over DDP gives the
parameters and the optimizer state of a plain optimizer on one process; its state dict
is gathered on rank 0, loads back, and is refused before it is gathered. Prints
``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os

import tocha as torch
import tocha.distributed as dist
from tocha import nn
from tocha.distributed.optim import ZeroRedundancyOptimizer
from tocha.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
RANK = dist.get_rank()


def say(ok: bool, line: str) -> None:
    os.write(1, f"{'PASS' if ok else 'FAIL'} {line} rank {RANK}\n".encode())


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))


torch.manual_seed(1)
X, Y = torch.randn(8, 6), torch.randn(8, 3)
ddp = DDP(model())
zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.05)
reference = model()
plain = torch.optim.Adam(reference.parameters(), lr=0.05)
for _ in range(3):
    zero.zero_grad()
    nn.functional.mse_loss(ddp(X[RANK * 4 : RANK * 4 + 4]), Y[RANK * 4 : RANK * 4 + 4]).backward()
    zero.step()
    plain.zero_grad()
    nn.functional.mse_loss(reference(X), Y).backward()
    plain.step()
close = all(
    torch.allclose(a, b, atol=1e-6) for a, b in zip(ddp.parameters(), reference.parameters())
)
say(close, "parameters of a plain Adam")
say(ddp.device_ids is None and ddp.dim == 0 and not ddp.static_graph, "DDP attributes")
owned = sum(len(g["params"]) for g in zero.optim.param_groups)
say(0 < owned < 4, f"a share of the parameters ({owned} of 4)")
shapes = [tuple(p.shape) for g in zero.optim.param_groups for p in g["params"]]
# PyTorch's shares: largest first, to the least loaded rank, in that order
say(shapes == [[(5, 6)], [(3, 5), (5,), (3,)]][RANK], f"PyTorch's shares {shapes}")
try:
    zero.state_dict()
except RuntimeError as exc:
    say("has not been consolidated" in str(exc), "state_dict before consolidating")
else:
    say(False, "state_dict before consolidating")
zero.consolidate_state_dict(to=0)
if RANK == 0:
    state, expected = zero.state_dict(), plain.state_dict()
    same = state["param_groups"] == expected["param_groups"] and all(
        torch.allclose(state["state"][i]["exp_avg"], expected["state"][i]["exp_avg"], atol=1e-6)
        for i in range(4)
    )
    say(same and sorted(state["state"]) == [0, 1, 2, 3], "consolidated state dict")
else:
    state = None
objects = [state]
dist.broadcast_object_list(objects, src=0)
fresh = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.5)
fresh.load_state_dict(objects[0])
mine = fresh.optim.state_dict()
say(
    fresh.param_groups[0]["lr"] == 0.05 and len(mine["state"]) == owned,
    "load_state_dict takes the whole state, keeps its share",
)
dist.destroy_process_group()
