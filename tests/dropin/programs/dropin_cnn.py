"""A small CNN classifier with BatchNorm, trained with SGD and momentum and a StepLR
schedule on NumPy-generated 8x8 images (the class is which quadrant is brightest), through a
DataLoader. Written for PyTorch; weights and data come from NumPy. Prints the losses as JSON
on its last line."""

import argparse
import json
import math

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.0), nn.Linear(16, 4))

    def forward(self, x):
        return self.classifier(self.features(x))


def init_from_numpy(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() == 1 and bool((p == p.flatten()[0]).all()):
                continue
            bound = 1.0 / math.sqrt(p[0].numel())
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    images = rng.normal(0, 0.5, size=(n, 1, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 4, size=n)
    for i, c in enumerate(labels):
        r, col = divmod(int(c), 2)
        images[i, 0, r * 4 : (r + 1) * 4, col * 4 : (col + 1) * 4] += 1.0
    return torch.from_numpy(images), torch.from_numpy(labels).long()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Net()
    init_from_numpy(model, 3)
    images, labels = make_data(128, 4)
    loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for step, (x, y) in enumerate(loader):
        if step == args.steps:
            break
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        print(f"step {step} loss {loss:.4f}")
    model.eval()
    with torch.no_grad():
        logits = model(images)
        losses.append(criterion(logits, labels).item())
        accuracy = (logits.argmax(dim=1) == labels).float().mean().item()
    print(f"eval accuracy {accuracy:.3f}")
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main()
