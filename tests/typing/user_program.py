"""A small training program written as a PyTorch user writes one, for the type checker.

`test_user_program.py` and ``nox -s typecheck`` run ``mypy --strict`` on this file: every
Tensor method, `tocha.nn` module, optimizer, scheduler and DataLoader it uses must be known
to the checker, with useful types. It also runs (``python tests/typing/user_program.py``).
"""

from __future__ import annotations

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.optim.lr_scheduler import StepLR
from tocha.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    """A small CNN: one Conv2d, then a Sequential of Linear layers."""

    def __init__(self, classes: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(4 * 8 * 8, 16), nn.ReLU(), nn.Linear(16, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.head(F.relu(self.conv(x)))
        return y


def tensors() -> float:
    """Arithmetic, matmul, reductions, views, indexing and autograd on plain tensors."""
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3, 2, dtype=torch.float32)
    y = (x @ w + 1.0) * 2 - x.sum(dim=1, keepdim=True) / 3
    z = torch.matmul(y.T, y).reshape(-1).view(2, 2).mean()
    z.backward()
    assert x.grad is not None
    first: torch.Tensor = x[0]
    rows: int = x.shape[0]
    cols = x.size(1)
    moved = first.to(torch.float64).to("cpu").detach().clone()
    total = float(moved.abs().max()) + z.item() + rows + cols + x.grad.norm().item()
    with torch.no_grad():
        x.mul_(0.5).add_(torch.zeros_like(x))
    return total + x.numel() + len(x.tolist())


def train(epochs: int = 2) -> list[float]:
    """A few epochs of a CNN on random data: SGD then Adam, with a StepLR schedule."""
    torch.manual_seed(0)
    images = torch.rand(32, 1, 8, 8)
    labels = torch.randint(0, 3, (32,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=True)
    model = Net()
    losses: list[float] = []
    for optimizer in (
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        torch.optim.Adam(model.parameters(), lr=1e-3),
    ):
        scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
        for _ in range(epochs):
            for batch, target in loader:
                optimizer.zero_grad()
                loss = F.cross_entropy(model(batch), target)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            scheduler.step()
    model.eval()
    with torch.no_grad():
        predictions = model(images).argmax(dim=1)
    accuracy = (predictions == labels).float().mean().item()
    losses.append(accuracy)
    return losses


if __name__ == "__main__":
    print(f"tensors: {tensors():.3f}")
    print(f"last loss: {train()[-2]:.3f}")
