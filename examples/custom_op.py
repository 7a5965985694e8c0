"""A third-party primitive op on tocha's extension API: ``softclip``, with its derivative and
its in-place form.

    softclip(x, limit) = limit * tanh(x / limit)      (a smooth clamp to (-limit, limit))
    d softclip / dx    = 1 - tanh(x / limit) ** 2

`tocha.library.defop` declares the op once, from a generic kernel written against an array
namespace ``xp`` (NumPy on the CPU, CuPy on a GPU): every backend gets a kernel from it.
`tocha.autograd.derivatives.d` gives it a backward; `tocha.library.call` runs it through
the dispatcher (autograd records it when an input requires grad); `tocha.library.inplace`
gives it an in-place form (the result written into the tensor, which bumps its version
counter and takes the result's history when autograd tracks it).
`tocha.autograd.gradcheck` then checks the derivative against finite differences.

    python examples/custom_op.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tocha as torch
import tocha.nn as nn
from tocha.autograd import gradcheck, gradgradcheck
from tocha.autograd.derivatives import d
from tocha.library import call, defop, expect_tensor, inplace


def _softclip_kernel(xp: Any) -> Callable[..., Any]:
    def kernel(x: Any, limit: float, out: Any = None) -> Any:
        return xp.multiply(xp.tanh(x / limit), limit, out=out)

    return kernel


softclip_op = defop("example::softclip", _softclip_kernel)
# saves the output ("o"); the formula gets (grad, out, x, limit), returns the grad by x
d("example::softclip", "o", lambda g, out, x, limit: g * (1 - (out / limit) ** 2))


def softclip(x: torch.Tensor, limit: float = 1.0) -> torch.Tensor:
    """``limit * tanh(x / limit)``, elementwise; same shape and dtype as `x`."""
    expect_tensor("softclip", x)
    result: torch.Tensor = call(softclip_op, (x,), float(limit))
    return result


def softclip_(x: torch.Tensor, limit: float = 1.0) -> torch.Tensor:
    """In-place form of `softclip`: writes into `x` and returns it."""
    expect_tensor("softclip_", x)
    return inplace(x, (), softclip, None, x, limit)


class SoftClip(nn.Module):
    """The module form of `softclip`."""

    def __init__(self, limit: float = 1.0) -> None:
        super().__init__()
        self.limit = limit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softclip(x, self.limit)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    print("gradcheck:", gradcheck(lambda t: softclip(t, 2.0), (x,)))
    print("gradgradcheck:", gradgradcheck(lambda t: softclip(t, 2.0), (x,)))
    y = x.detach().clone()
    version = y._version
    softclip_(y, 2.0)
    print("in place, same values:", torch.allclose(y, softclip(x, 2.0)))
    print("version counter bumped:", y._version == version + 1)

    model = nn.Sequential(nn.Linear(4, 8), SoftClip(0.5), nn.Linear(8, 1))
    model(torch.randn(16, 4)).sum().backward()
    inside = all(abs(v) <= 0.5 for v in model[1](torch.randn(100) * 10).tolist())
    print("module output within its limit:", inside)
    print("every parameter has a gradient:", all(p.grad is not None for p in model.parameters()))


if __name__ == "__main__":
    main()
