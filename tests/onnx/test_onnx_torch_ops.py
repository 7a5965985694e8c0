"""The layer operators tocha.onnx writes for built-in modules are those torch.onnx writes
for the same modules (recorded by scripts/record_onnx_fixtures.py); the plumbing around
them (shapes, casts, constants) may differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tocha
import tocha.onnx
from tests.onnx.helpers import check_against_eager

CASES = json.loads((Path(__file__).parent / "fixtures" / "torch_onnx_op_types.json").read_text())
LAYER_OPS = {
    "LSTM",
    "GRU",
    "RNN",
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "LayerNormalization",
    "Softmax",
    "LogSoftmax",
    "Erf",
    "Tanh",
    "Sigmoid",
    "Relu",
    "Resize",
    "DepthToSpace",
}


def build(spec: dict):
    layers = [getattr(tocha.nn, name)(*args, **kw) for name, args, kw in spec["modules"]]
    return layers[0] if len(layers) == 1 else tocha.nn.Sequential(*layers)


def example(spec: dict):
    if spec["shape"] == "tokens":
        return tocha.tensor([[1, 2, 3], [4, 5, 6]])
    return tocha.randn(*spec["shape"])


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_layer_operators_match_torch_onnx(name):
    spec = CASES[name]
    program = check_against_eager(build(spec), (example(spec),), opset_version=18)  # as recorded
    ours = {n.op_type for n in program.model_proto.graph.node}
    theirs = set(spec["torch_op_types"])
    assert theirs & LAYER_OPS <= ours, sorted((theirs & LAYER_OPS) - ours)
    if spec["shape"] == "tokens":
        assert "Gather" in ours
