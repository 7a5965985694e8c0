"""A variational autoencoder on NumPy-generated binary patterns: a Gaussian encoder, the
reparameterisation trick (its noise drawn from NumPy), a Bernoulli decoder trained on BCE
with logits plus the KL term, with Adam. Written for PyTorch; weights and data come from
NumPy. Prints the losses as JSON on its last line."""

import argparse
import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, features=16, hidden=32, latent=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.Tanh(), nn.Linear(hidden, features)
        )

    def forward(self, x, eps):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar


def loss_function(logits, x, mu, logvar):
    reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (reconstruction + kl) / x.shape[0]


def init_from_numpy(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            bound = 1.0 / math.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    prototypes = rng.random((4, 16)) > 0.5
    data = prototypes[rng.integers(0, 4, size=64)] ^ (rng.random((64, 16)) < 0.05)
    x = torch.from_numpy(data.astype(np.float32))
    model = VAE()
    init_from_numpy(model, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    losses = []
    for step in range(args.steps):
        eps = torch.from_numpy(rng.standard_normal((64, 4)).astype(np.float32))
        logits, mu, logvar = model(x, eps)
        loss = loss_function(logits, x, mu, logvar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(f"step {step} loss {loss.item():.4f}")
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main()
