"""Run on 2 ranks by test_dist_ddp.py: DistributedDataParallel against single-process training.
Prints ``PASS name`` or ``FAIL name: why`` per check."""

from __future__ import annotations

import os
import traceback

import numpy as np

import tocha as torch
import tocha.distributed as dist
from tocha import nn
from tocha.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("mpi")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
STEPS, BATCH = 20, 8  # BATCH rows per rank and step


def make_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)
    )


def dataset() -> TensorDataset:
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((STEPS * BATCH * WORLD, 6)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 3, STEPS * BATCH * WORLD))
    return TensorDataset(x, y)


def train(model, loader) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def weights(model) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def same_on_every_rank(vector: np.ndarray) -> None:
    gathered = [torch.zeros(vector.size) for _ in range(WORLD)]
    dist.all_gather(gathered, torch.from_numpy(vector))
    for other in gathered:
        np.testing.assert_array_equal(other.numpy(), vector)


def check_training_matches_single_process():
    data = dataset()
    # Each rank starts from its own random weights: DDP must take rank 0's.
    ddp = dist.DistributedDataParallel(make_model(seed=RANK), bucket_cap_mb=0.001)
    assert len(ddp._buckets) == 1  # one bucket for the first backward, as PyTorch
    sampler = DistributedSampler(data, num_replicas=WORLD, rank=RANK, shuffle=False)
    train(ddp, DataLoader(data, batch_size=BATCH, sampler=sampler))
    assert len(ddp._buckets) > 1  # then buckets of bucket_cap_mb
    single = make_model(seed=0)
    train(single, DataLoader(data, batch_size=BATCH * WORLD, shuffle=False))
    same_on_every_rank(weights(ddp.module))
    np.testing.assert_allclose(weights(ddp.module), weights(single), rtol=1e-4, atol=1e-5)


def check_no_sync_accumulates():
    ddp = dist.DistributedDataParallel(make_model(seed=RANK))
    single = make_model(seed=0)
    rng = np.random.default_rng(5)
    xs = [
        torch.from_numpy(rng.standard_normal((WORLD * 4, 6)).astype(np.float32)) for _ in range(2)
    ]
    mine = [x[RANK * 4 : RANK * 4 + 4] for x in xs]
    with ddp.no_sync():
        ddp(mine[0]).sum().backward()
    local = weights_grad(ddp.module)
    ddp(mine[1]).sum().backward()
    for x in xs:
        (single(x).sum() / WORLD).backward()
    same_on_every_rank(weights_grad(ddp.module))
    np.testing.assert_allclose(weights_grad(ddp.module), weights_grad(single), rtol=1e-4, atol=1e-5)
    assert not np.allclose(local, weights_grad(single))


def weights_grad(model) -> np.ndarray:
    return np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return self.used(x)


def check_unused_parameters():
    torch.manual_seed(0)
    ddp = dist.DistributedDataParallel(TwoHeads(), find_unused_parameters=True)
    ddp(torch.ones(2, 4) * (RANK + 1)).sum().backward()
    assert ddp.module.unused.weight.grad is None
    np.testing.assert_allclose(ddp.module.used.weight.grad.numpy(), np.full((2, 4), 3.0))
    strict = dist.DistributedDataParallel(TwoHeads())
    strict(torch.ones(2, 4)).sum().backward()
    try:
        strict(torch.ones(2, 4))
    except RuntimeError as exc:
        assert "Expected to have finished reduction" in str(exc)
    else:
        raise AssertionError("an unused parameter went unnoticed")


def check_buffers_follow_rank_0():
    torch.manual_seed(RANK)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    ddp = dist.DistributedDataParallel(model)
    ddp(torch.randn(4, 3) + RANK)
    ddp.eval()
    ddp(torch.randn(4, 3))  # buffers re-broadcast from rank 0, and left as they are
    same_on_every_rank(model[1].running_mean.numpy().copy())


def check_different_models_raise():
    model = nn.Linear(3, 3 + RANK)
    try:
        dist.DistributedDataParallel(model)
    except RuntimeError as exc:
        assert "DDP expects same model across all ranks" in str(exc)
    else:
        raise AssertionError("different models went unnoticed")


for fn in [v for k, v in list(globals().items()) if k.startswith("check_")]:
    try:
        fn()
    except Exception:
        line = f"FAIL {fn.__name__}: {traceback.format_exc()}"
    else:
        line = f"PASS {fn.__name__}"
    os.write(1, f"{line}\n".encode())
dist.destroy_process_group()
