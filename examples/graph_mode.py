"""Graph mode end to end: train a model, trace it, rewrite its graph, export it to ONNX.

A small classifier (Linear -> BatchNorm1d -> ReLU, twice, then a Linear) is trained for a few
steps on synthetic data. ``tocha.fx.symbolic_trace`` records its forward as a graph; a
``tocha.fx.Transformer`` pass folds each eval-mode BatchNorm1d into the Linear before it
(``w' = w * g / sqrt(var + eps)``, ``b' = (b - mean) * g / sqrt(var + eps) + beta``), which
removes the batch norms from the graph without changing the outputs. The folded module is
checked against the trained one, exported with ``tocha.onnx.export`` (a dynamic batch axis),
and run with onnxruntime at another batch size; the script prints the largest difference and
exits nonzero when any check fails.

    python examples/graph_mode.py --steps 60
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

import numpy as np

import tocha
import tocha.nn as nn
import tocha.onnx
from tocha import fx

TOLERANCE = 1e-4


def make_model() -> nn.Module:
    """The classifier: 8 features -> 32 -> 32 -> 3 classes."""
    return nn.Sequential(
        nn.Linear(8, 32),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.Linear(32, 32),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.Linear(32, 3),
    )


def make_data(n: int, seed: int) -> tuple[tocha.Tensor, tocha.Tensor]:
    """Points of three Gaussian blobs in 8 dimensions, and their labels."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 2, (3, 8))
    labels = rng.integers(0, 3, n)
    points = centres[labels] + rng.normal(0, 1, (n, 8))
    return tocha.from_numpy(points.astype(np.float32)), tocha.from_numpy(labels)


def train(model: nn.Module, steps: int) -> float:
    """A few Adam steps on the blobs; the last loss."""
    x, y = make_data(256, seed=0)
    optimizer = tocha.optim.Adam(model.parameters(), lr=1e-2)
    loss = tocha.zeros(())
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return float(loss)


def folded(linear: nn.Linear, bn: nn.BatchNorm1d) -> nn.Linear:
    """A Linear that computes ``bn(linear(x))`` for an eval-mode batch norm."""
    assert bn.running_var is not None and bn.running_mean is not None
    with tocha.no_grad():
        scale = tocha.rsqrt(bn.running_var + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight
        shift = -bn.running_mean * scale
        if bn.bias is not None:
            shift = shift + bn.bias
        fused = nn.Linear(linear.in_features, linear.out_features)
        fused.weight.copy_(linear.weight * scale[:, None])
        bias = linear.bias * scale if linear.bias is not None else tocha.zeros_like(shift)
        fused.bias.copy_(bias + shift)
    return fused


class FoldBatchNorm(fx.Transformer):
    """Calls of a Linear whose only user is a BatchNorm1d become calls of the folded Linear
    (registered on the module as ``<linear>_folded``); the batch norm becomes the identity."""

    def __init__(self, module: fx.GraphModule) -> None:
        self.pairs: dict[str, str] = {}
        modules = dict(module.named_modules())
        for node in module.graph.nodes:
            bn = str(node.target)
            if node.op != "call_module" or not isinstance(modules[bn], nn.BatchNorm1d):
                continue
            source = node.args[0]
            if not (isinstance(source, fx.Node) and source.op == "call_module"):
                continue
            linear = str(source.target)
            if isinstance(modules[linear], nn.Linear) and len(source.users) == 1:
                name = f"{linear.replace('.', '_')}_folded"
                module.add_submodule(name, folded(modules[linear], modules[bn]))
                self.pairs[linear] = name
                self.pairs[bn] = ""
        super().__init__(module)

    def call_module(self, target: Any, args: Any, kwargs: Any) -> Any:
        replacement = self.pairs.get(target)
        if replacement == "":
            return args[0]
        return super().call_module(replacement or target, args, kwargs)


def max_difference(a: Any, b: Any) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps")
    args = parser.parse_args()

    tocha.manual_seed(0)
    model = make_model()
    loss = train(model, args.steps)
    model.eval()
    print(f"trained {args.steps} steps: loss {loss:.4f}")

    traced = fx.symbolic_trace(model)
    edited = FoldBatchNorm(traced).transform()
    modules = dict(edited.named_modules())
    left = [n for n in edited.graph.nodes if n.op == "call_module"]
    print(f"graph: {len(traced.graph.nodes)} nodes, after folding {len(edited.graph.nodes)}")
    x, _ = make_data(64, seed=1)
    with tocha.no_grad():
        want = model(x)
        got = edited(x)
    folded_diff = max_difference(got.numpy(), want.numpy())
    print(f"folded module vs trained module: max difference {folded_diff:.2e}")
    if any(isinstance(modules[n.target], nn.BatchNorm1d) for n in left):
        print("error: a batch norm is left in the graph", file=sys.stderr)
        return 1

    try:
        import onnxruntime
    except ImportError:
        print("onnxruntime is not installed: pip install onnxruntime to run the exported model")
        return 0 if folded_diff <= TOLERANCE else 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "classifier.onnx")
        tocha.onnx.export(
            edited,
            (x,),
            path,
            input_names=["x"],
            output_names=["logits"],
            dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
        )
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        other, _ = make_data(10, seed=2)
        (logits,) = session.run(["logits"], {"x": other.numpy()})
    with tocha.no_grad():
        reference = model(other).numpy()
    onnx_diff = max_difference(logits, reference)
    print(f"onnxruntime (batch {other.shape[0]}) vs tocha: max difference {onnx_diff:.2e}")
    if folded_diff > TOLERANCE or onnx_diff > TOLERANCE:
        print("error: outputs differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
