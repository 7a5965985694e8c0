"""A custom autograd Function: Swish (x * sigmoid(x)) with a hand-written backward.

``forward`` computes the output and saves what ``backward`` needs; ``backward`` gets the
gradient of the loss by the output and returns the gradient by each input:

    swish(x) = x * s,  s = sigmoid(x)
    d swish / dx = s + x * s * (1 - s) = s * (1 + x * (1 - s))

`tocha.autograd.gradcheck` compares that backward with finite differences in float64, and
`gradgradcheck` checks its own derivative: backward is written in tocha ops, so it is
differentiable too, provided it recomputes sigmoid(x) from the saved input (a sigmoid saved by
forward would be a constant to the second derivative, since forward runs without recording).
The Function then serves as the activation of a small regression network trained by Adam.

    python examples/custom_function.py [--steps 300]
"""

from __future__ import annotations

import argparse

import tocha as torch
import tocha.nn as nn
from tocha.autograd import Function, FunctionCtx, gradcheck, gradgradcheck


class SwishFunction(Function):
    """swish(x) = x * sigmoid(x), with the derivative s * (1 + x * (1 - s))."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)  # recomputed here, so that backward is differentiable in x
        return grad_output * s * (1 + x * (1 - s))


class Swish(nn.Module):
    """The module form of `SwishFunction`, used like nn.SiLU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = SwishFunction.apply(x)
        return y


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="Adam steps")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)

    x = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    print("gradcheck:", gradcheck(SwishFunction.apply, (x,)))
    print("gradgradcheck:", gradgradcheck(SwishFunction.apply, (x,)))
    reference = nn.functional.silu(x)
    print("same values as F.silu:", torch.allclose(SwishFunction.apply(x), reference))

    inputs = torch.linspace(-3, 3, 256).unsqueeze(1)
    targets = torch.sin(2 * inputs)
    model = nn.Sequential(nn.Linear(1, 32), Swish(), nn.Linear(32, 32), Swish(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(1, args.steps + 1):
        loss = nn.functional.mse_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1 or step % 100 == 0 or step == args.steps:
            print(f"step {step:>4}  mse {loss.item():.5f}")


if __name__ == "__main__":
    main()
