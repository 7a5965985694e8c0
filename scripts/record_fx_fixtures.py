"""Record torch.fx's graphs of the modules in tests/fx/test_fx_trace.py as JSON fixtures.

Run with PyTorch installed, from the repository root:
``/work/venv-torch/bin/python scripts/record_fx_fixtures.py``. It writes
``tests/fx/fixtures/fx_trace_graphs.json``: for each case, the nodes of the traced graph as
``[name, op, target, args, kwargs]`` in a library-neutral spelling (``lib.relu`` for
``torch.relu``; see `describe`), and ``tests/fx/fixtures/fx_trace_code.json``: the code
torch.fx generates for the modules whose code tocha.fx writes alike (those calling
functions that pass their defaults on, such as ``F.relu``'s ``inplace=False``, are left
out). The test defines the same modules with tocha and compares.
"""

from __future__ import annotations

import builtins
import json
import operator
import sys
from pathlib import Path

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fx" / "fixtures"
CODE_CASES = ("resnet_block", "view_size", "params", "cat", "getitem", "custom_traced_through",
              "constants", "methods", "nested")  # fmt: skip


def describe(graph, lib) -> list[list]:
    """The nodes of `graph` as JSON-ready rows, with `lib` (torch or tocha) spelled ``lib``."""
    namespaces = [
        ("lib.nn.functional", lib.nn.functional),
        ("lib.linalg", lib.linalg),
        ("lib.special", lib.special),
        ("lib.fft", lib.fft),
        ("lib", lib),
        ("operator", operator),
        ("builtins", builtins),
    ]

    def target(t):
        if isinstance(t, str):
            return t
        name = getattr(t, "__name__", None)
        for prefix, ns in namespaces:
            if name and getattr(ns, name, None) is t:
                return f"{prefix}.{name}"
        return name or repr(t)

    def enc(a):
        if isinstance(a, torch.fx.Node if lib is torch else lib.fx.Node):
            return f"%{a.name}"
        if isinstance(a, tuple):
            inner = ", ".join(enc(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(enc(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {enc(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({enc(a.start)}, {enc(a.stop)}, {enc(a.step)})"
        if isinstance(a, float):
            return repr(float(a))
        return repr(a).replace(lib.__name__ + ".", "lib.")

    return [
        [n.name, n.op, target(n.target), [enc(a) for a in n.args],
         {k: enc(v) for k, v in n.kwargs.items()}]
        for n in graph.nodes
    ]  # fmt: skip


def my_scale(x, k):
    return x * k


torch.fx.wrap("my_scale")


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class ViewSize(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


class Params(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))
        self.scale = nn.Parameter(torch.ones(3))
        self.register_buffer("shift", torch.zeros(3))

    def forward(self, x):
        y = torch.matmul(x, self.weight) * self.scale
        return self.shift + y


class Cat(nn.Module):
    def forward(self, x):
        return torch.cat([x, x * 2, torch.sigmoid(x)], dim=1)


class GetItem(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        n = x.shape[-1]
        return a[0] + b[:, 1:2], x[..., None], n


class Kwargs(nn.Module):
    def forward(self, x):
        s = torch.sum(x, dim=1, keepdim=True)
        m = x.mean(dim=-1)
        return F.softmax(x, dim=-1) + s, torch.clamp(m, min=0.0, max=1.0)


class Wrapped(nn.Module):
    def forward(self, x):
        return my_scale(x, 3.0) + 1


class MyAct(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2


class WithCustom(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = MyAct()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.act(self.lin(x))


class Concrete(nn.Module):
    def forward(self, x, flag=True, y=None):
        if flag:
            x = x * 2
        if y is not None:
            x = x + y
        return x


class Constants(nn.Module):
    def forward(self, x):
        return x + torch.ones(3), torch.arange(3)


class Methods(nn.Module):
    def forward(self, x):
        y = x.transpose(0, 1).contiguous().reshape(-1)
        return y.unsqueeze(0).float(), x.t(), x.permute(1, 0)


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

    def forward(self, x):
        return self.layers(self.lin(x))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Inner()

    def forward(self, x):
        return self.sub(x) - x


class Scalars(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.ones(3))

    def forward(self, x):
        y = 2 * x - 1
        z = (1 - y) / 2 + y**2
        return -z, self.b + x, x @ x.t(), abs(x), x > 0


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, MyAct) or super().is_leaf_module(m, qualname)


CASES = {
    "resnet_block": lambda: torch.fx.symbolic_trace(ResBlock()).graph,
    "mlp": lambda: torch.fx.symbolic_trace(MLP()).graph,
    "view_size": lambda: torch.fx.symbolic_trace(ViewSize()).graph,
    "params": lambda: torch.fx.symbolic_trace(Params()).graph,
    "cat": lambda: torch.fx.symbolic_trace(Cat()).graph,
    "getitem": lambda: torch.fx.symbolic_trace(GetItem()).graph,
    "kwargs": lambda: torch.fx.symbolic_trace(Kwargs()).graph,
    "wrapped": lambda: torch.fx.symbolic_trace(Wrapped()).graph,
    "custom_traced_through": lambda: torch.fx.symbolic_trace(WithCustom()).graph,
    "leaf_override": lambda: LeafTracer().trace(WithCustom()),
    "concrete_args": lambda: (
        torch.fx.symbolic_trace(Concrete(), concrete_args={"flag": False, "y": None}).graph
    ),
    "constants": lambda: torch.fx.symbolic_trace(Constants()).graph,
    "methods": lambda: torch.fx.symbolic_trace(Methods()).graph,
    "nested": lambda: torch.fx.symbolic_trace(Nested()).graph,
    "scalars": lambda: torch.fx.symbolic_trace(Scalars()).graph,
}


def main() -> None:
    graphs = {name: describe(build(), torch) for name, build in CASES.items()}
    (FIXTURES / "fx_trace_graphs.json").write_text(json.dumps(graphs, indent=1) + "\n")
    code = {name: CASES[name]().python_code("self").src.strip() for name in CODE_CASES}
    (FIXTURES / "fx_trace_code.json").write_text(json.dumps(code, indent=1) + "\n")
    print(f"wrote {len(graphs)} graphs and {len(code)} sources to {FIXTURES}", file=sys.stderr)


if __name__ == "__main__":
    main()
