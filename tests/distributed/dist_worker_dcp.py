"""Run on 2 ranks by test_dist_checkpoint.py: DCP's tutorial, a DDP model and its Adam
saved through a Stateful with get_state_dict, loaded into fresh ones with set_state_dict;
a missing key raises CheckpointException on every rank. Prints ``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os
import sys

import tocha as torch
import tocha.distributed as dist
import tocha.distributed.checkpoint as dcp
from tocha import nn
from tocha.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from tocha.distributed.checkpoint.stateful import Stateful
from tocha.nn.parallel import DistributedDataParallel as DDP

FOLDER = sys.argv[1]
dist.init_process_group("gloo")
RANK = dist.get_rank()


def say(ok: bool, line: str) -> None:
    os.write(1, f"{'PASS' if ok else 'FAIL'} {line} rank {RANK}\n".encode())


class AppState(Stateful):
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model, optim = get_state_dict(self.model, self.optimizer)
        return {"model": model, "optim": optim}

    def load_state_dict(self, state_dict):
        set_state_dict(
            self.model,
            self.optimizer,
            model_state_dict=state_dict["model"],
            optim_state_dict=state_dict["optim"],
        )


def make():
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


torch.manual_seed(0)
model = DDP(make())
opt = torch.optim.Adam(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(5, 4)).sum().backward()
    opt.step()
names, optim = get_state_dict(model, opt)
say(sorted(names) == ["0.bias", "0.weight", "2.bias", "2.weight"], "names without module.")
say(optim["param_groups"][0]["params"] == ["0.weight", "0.bias", "2.weight", "2.bias"], "optim")
dcp.save({"app": AppState(model, opt), "step": 7}, checkpoint_id=FOLDER)
say(sorted(os.listdir(FOLDER)) == [".metadata", "__0_0.distcp", "__1_0.distcp"], "files")
torch.manual_seed(5)
fresh = DDP(make())
fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.5)
state = {"app": AppState(fresh, fresh_opt), "step": 0}
dcp.load(state, checkpoint_id=FOLDER)
same = all(torch.equal(a, b) for a, b in zip(model.parameters(), fresh.parameters()))
moments = torch.equal(
    fresh_opt.state_dict()["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"]
)
say(same and moments and state["step"] == 7 and fresh_opt.param_groups[0]["lr"] == 0.1, "load")
plain = make()
into = {"app": {"model": plain.state_dict()}}
dcp.load(into, checkpoint_id=FOLDER)
plain.load_state_dict(into["app"]["model"])
say(all(torch.equal(a, b) for a, b in zip(model.parameters(), plain.parameters())), "plain")
try:
    dcp.load({"nothere": torch.zeros(1)}, checkpoint_id=FOLDER)
except dcp.CheckpointException as exc:
    say(
        sorted(exc.failures) == [0, 1]
        and "Missing key in checkpoint state_dict: nothere." in str(exc),
        "missing",
    )
else:
    say(False, "missing")
dist.destroy_process_group()
