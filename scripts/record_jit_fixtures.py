"""Record PyTorch's answers for tocha.jit's tests: run with the PyTorch venv, from the repo root.

    /work/venv-torch/bin/python scripts/record_jit_fixtures.py

Every case's source is kept in the fixture, so the tests (`tests/fx/test_jit_script.py`)
run the same source through ``tocha.jit.script`` and compare with ``torch.jit.script``'s
outputs and error messages without PyTorch installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent.parent / "tests" / "fx" / "fixtures" / "jit_script_cases.json"
HEADER = """\
import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
"""

FUNCTIONS = {
    "loop_if": (
        """
        def loop_if(x, n: int):
            total = torch.zeros_like(x)
            for i in range(n):
                if i % 3 == 0:
                    total += x * i
                elif i == 4:
                    continue
                else:
                    total = total - 0.5
                if i >= 7:
                    break
            return total
        """,
        [[{"tensor": [1.0, -2.0, 3.0]}, 5], [{"tensor": [0.5, 0.25]}, 12]],
    ),
    "while_tensor": (
        """
        def while_tensor(x):
            steps = 0
            while bool(x.abs().sum() < 100.0):
                x = x * 2.0 + 1.0
                steps += 1
            return x, steps
        """,
        [[{"tensor": [1.0, 2.0]}], [{"tensor": [[0.1, -0.2], [0.3, 0.0]]}]],
    ),
    "lists_and_dicts": (
        """
        def lists_and_dicts(x, k: int) -> Tuple[torch.Tensor, int]:
            parts = [x * i for i in range(k)]
            parts.append(x.sum().reshape(1))
            sizes: List[int] = []
            for p in parts:
                sizes.append(p.numel())
            d: Dict[str, int] = {"a": 1, "b": k}
            first, second = sizes[0], sizes[-1]
            return torch.cat(parts[1:]), first + second + d["b"] + len(sizes)
        """,
        [[{"tensor": [1.0, 2.0, 3.0]}, 4]],
    ),
    "optional_arg": (
        """
        def optional_arg(x, bias: Optional[torch.Tensor] = None, scale: float = 2.0):
            y = x * scale
            if bias is not None:
                y = y + bias
            return y
        """,
        [[{"tensor": [1.0, 2.0]}], [{"tensor": [1.0, 2.0]}, {"tensor": [3.0, 4.0]}, 3]],
    ),
    "math_and_functional": (
        """
        def math_and_functional(x, p: float):
            y = F.relu(x - p) + torch.tanh(x) * math.pi
            z = F.softmax(y, dim=-1)
            return z + math.sqrt(abs(p)) + max(p, 0.5) - min(1, 2)
        """,
        [[{"tensor": [[0.1, -1.0, 2.0], [3.0, 0.0, -0.5]]}, -0.25]],
    ),
    "scalar_arith": (
        """
        def scalar_arith(a: int, b: int, c: float) -> Tuple[int, int, float, float, bool]:
            q = a // b
            r = a % b
            a += 3
            a *= 2
            s = c ** 2 - a / b
            flag = (a > b and not c < 0.0) or b == 0
            return q, r, s, float(a), flag
        """,
        [[7, 3, 1.5], [-9, 4, -2.0]],
    ),
    "indexing": (
        """
        def indexing(x, i: int):
            a = x[i]
            b = x[1:, 0]
            c = x[:, ::2]
            x[0, 0] = 5.0
            return a.sum() + b.sum() + c.sum() + x[0, 0]
        """,
        [[{"tensor": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]}, 1]],
    ),
    "calls_helper": (
        """
        def helper(x, k: int):
            return x * k + 1

        def calls_helper(x):
            acc = x
            for k in [1, 2, 3]:
                acc = helper(acc, k)
            return acc
        """,
        [[{"tensor": [1.0, -1.0]}]],
    ),
    "raise_and_assert": (
        """
        def raise_and_assert(x, n: int):
            assert n >= 0, "n must be non-negative"
            if n > 10:
                raise ValueError("n is too large")
            return x + n
        """,
        [[{"tensor": [1.0]}, 3]],
    ),
}

MODULES = {
    "mlp": (
        """
        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 3)

            def forward(self, x):
                return self.fc2(torch.relu(self.fc1(x)))
        """,
        "MLP",
        [[{"tensor": [[0.1, 0.2, 0.3, 0.4], [-1.0, 0.5, 0.0, 2.0]]}]],
    ),
    "module_list": (
        """
        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
                self.depth = 2

            def forward(self, x):
                for i, layer in enumerate(self.layers):
                    if i < self.depth:
                        x = self.activate(layer(x))
                    else:
                        x = layer(x)
                return x

            def activate(self, x):
                return torch.sigmoid(x) * 2.0
        """,
        "Stack",
        [[{"tensor": [[1.0, 2.0, 3.0]]}]],
    ),
    "optional_module": (
        """
        class WithMask(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(2, 2)

            def forward(self, x, mask: Optional[torch.Tensor] = None):
                y = self.proj(x)
                if mask is None:
                    return y
                return y * mask
        """,
        "WithMask",
        [[{"tensor": [[1.0, 2.0]]}], [{"tensor": [[1.0, 2.0]]}, {"tensor": [[0.0, 1.0]]}]],
    ),
    "conv_bn": (
        """
        class ConvBN(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 2, 3, padding=1)
                self.bn = nn.BatchNorm2d(2)

            def forward(self, x):
                return F.relu(self.bn(self.conv(x))).flatten(1)
        """,
        "ConvBN",
        [[{"tensor": np.linspace(-1, 1, 16).reshape(1, 1, 4, 4).tolist()}]],
    ),
}

REFUSED = {
    "try": """
        def refused(x):
            try:
                return x
            except Exception:
                return x
        """,
    "lambda": """
        def refused(x):
            f = lambda a: a
            return x
        """,
    "varargs": """
        def refused(*args):
            return args
        """,
    "kwargs": """
        def refused(x, **kwargs):
            return x
        """,
    "global": """
        def refused(x):
            global G
            return x
        """,
    "nested_def": """
        def refused(x):
            def inner(y):
                return y
            return x
        """,
    "nested_class": """
        def refused(x):
            class Inner:
                pass
            return x
        """,
    "yield": """
        def refused(x):
            for i in range(3):
                yield x
        """,
    "os_system": """
        import os

        def refused(x):
            os.system("true")
            return x
        """,
    "comprehension_if": """
        def refused(x):
            return [x * i for i in range(3) if i > 0]
        """,
    "open": """
        def refused(x):
            f = open("/etc/passwd")
            return x
        """,
}

TYPE_ERRORS = {
    "tensor_inferred": ("loop_if", [3, 5]),
    "int_given_float": ("loop_if", [{"tensor": [1.0]}, 2.5]),
    "missing": ("loop_if", [{"tensor": [1.0]}]),
    "too_many": ("loop_if", [{"tensor": [1.0]}, 1, 2]),
    "optional_wrong": ("optional_arg", [{"tensor": [1.0]}, 3]),
}


def load_source(source: str, tmp: Path, name: str):
    path = tmp / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def to_torch(spec):
    if isinstance(spec, dict):
        return torch.tensor(spec["tensor"], dtype=torch.float32)
    return spec


def to_json(value):
    if isinstance(value, torch.Tensor):
        return {"tensor": value.detach().tolist(), "shape": list(value.shape)}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return value


def fill_parameters(module) -> None:
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for _, p in module.named_parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


def error_answer(error: BaseException) -> dict:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return {"class": type(error).__name__, "module": type(error).__module__, "message": str(error),
            "first_line": lines[0] if lines else ""}  # fmt: skip


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    fixture: dict = {"header": HEADER, "functions": {}, "modules": {}, "refused": {},
                     "type_errors": {}}  # fmt: skip
    loaded = {}
    for name, (source, inputs) in FUNCTIONS.items():
        module = load_source(source, tmp, f"case_{name}")
        scripted = torch.jit.script(getattr(module, name))
        loaded[name] = scripted
        outputs = [to_json(scripted(*[to_torch(a) for a in args])) for args in inputs]
        fixture["functions"][name] = {"source": source, "inputs": inputs, "outputs": outputs}
    try:
        loaded["raise_and_assert"](torch.ones(1), 11)
    except Exception as error:  # noqa: BLE001
        fixture["functions"]["raise_and_assert"]["raised"] = error_answer(error)
    for name, (source, cls, inputs) in MODULES.items():
        module = load_source(source, tmp, f"case_{name}")
        instance = getattr(module, cls)()
        fill_parameters(instance)
        scripted = torch.jit.script(instance.eval())
        outputs = [to_json(scripted(*[to_torch(a) for a in args])) for args in inputs]
        fixture["modules"][name] = {"source": source, "class": cls, "inputs": inputs,
                                    "outputs": outputs, "code": scripted.code}  # fmt: skip
    for name, source in REFUSED.items():
        module = load_source(source, tmp, f"refused_{name}")
        try:
            torch.jit.script(module.refused)
        except Exception as error:  # noqa: BLE001
            fixture["refused"][name] = {"source": source, **error_answer(error)}
        else:
            raise AssertionError(f"torch scripted {name}")
    for name, (function, args) in TYPE_ERRORS.items():
        try:
            loaded[function](*[to_torch(a) for a in args])
        except Exception as error:  # noqa: BLE001
            fixture["type_errors"][name] = {"function": function, "args": args,
                                            **error_answer(error)}  # fmt: skip
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
