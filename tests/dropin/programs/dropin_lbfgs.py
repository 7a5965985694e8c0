"""Polynomial regression fitted with L-BFGS (strong Wolfe line search) on NumPy-generated
data, in float64: the closure re-evaluates the loss. Written for PyTorch; the weights and data
come from NumPy. Prints the losses as JSON on its last line."""

import argparse
import json

import numpy as np
import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(9)
    t = rng.uniform(-1, 1, size=(100, 1))
    y = 0.5 - 1.5 * t + 2.0 * t**3 + rng.normal(0, 0.05, size=t.shape)
    features = torch.from_numpy(np.concatenate([t, t**2, t**3], axis=1))
    target = torch.from_numpy(y)
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.from_numpy(rng.normal(0, 0.1, size=(1, 3))))
        model.bias.zero_()
    optimizer = torch.optim.LBFGS(
        model.parameters(), lr=1, max_iter=4, line_search_fn="strong_wolfe"
    )
    criterion = nn.MSELoss()

    def closure():
        optimizer.zero_grad()
        loss = criterion(model(features), target)
        loss.backward()
        return loss

    losses = []
    for step in range(args.steps):
        loss = optimizer.step(closure)
        losses.append(loss.item())
        print(f"step {step} loss {loss.item():.6f}")
    print(json.dumps({"losses": losses, "weights": model.weight.detach().flatten().tolist()}))


if __name__ == "__main__":
    main()
