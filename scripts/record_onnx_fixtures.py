"""Record the ONNX operator types of torch.onnx's exports of built-in modules, as a JSON
fixture for tests/onnx/test_onnx_torch_ops.py.

Run with PyTorch installed, from the repository root:
``/work/venv-torch/bin/python scripts/record_onnx_fixtures.py``. It writes
``tests/onnx/fixtures/torch_onnx_op_types.json``: for each case, the modules (class name,
positional and keyword arguments), the input shape, and the sorted operator types of the
model that ``torch.onnx.export(..., dynamo=False, opset_version=18)`` writes. The test builds
the same modules with tocha and compares the layer operators (LSTM, Conv, ...) it writes.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import onnx
import torch

OUT = Path(__file__).resolve().parent.parent / "tests" / "onnx" / "fixtures"
OUT = OUT / "torch_onnx_op_types.json"

CASES: dict[str, dict] = {
    "mlp": {
        "modules": [
            ["Linear", [6, 8], {}],
            ["GELU", [], {}],
            ["Linear", [8, 8], {}],
            ["Tanh", [], {}],
            ["Linear", [8, 4], {}],
            ["LogSoftmax", [-1], {}],
        ],
        "shape": [3, 6],
    },
    "cnn": {
        "modules": [
            ["Conv2d", [3, 8, 3], {"padding": 1}],
            ["BatchNorm2d", [8], {}],
            ["ReLU", [], {}],
            ["MaxPool2d", [2], {}],
            ["AvgPool2d", [2], {}],
            ["AdaptiveAvgPool2d", [1], {}],
            ["Flatten", [], {}],
            ["Linear", [8, 2], {}],
        ],
        "shape": [2, 3, 8, 8],
    },
    "lstm": {"modules": [["LSTM", [5, 7], {"num_layers": 2}]], "shape": [4, 2, 5]},
    "lstm-bidirectional": {
        "modules": [["LSTM", [5, 7], {"bidirectional": True, "batch_first": True}]],
        "shape": [2, 4, 5],
    },
    "gru": {"modules": [["GRU", [5, 7], {"bidirectional": True}]], "shape": [4, 2, 5]},
    "layer-norm-sigmoid": {
        "modules": [["LayerNorm", [6], {}], ["Sigmoid", [], {}], ["Softmax", [1], {}]],
        "shape": [3, 6],
    },
    "embedding": {"modules": [["Embedding", [10, 4], {}]], "shape": "tokens"},
    "upsample": {
        "modules": [["Upsample", [], {"scale_factor": 2}], ["PixelShuffle", [2], {}]],
        "shape": [1, 4, 3, 3],
    },
    "conv-transpose": {
        "modules": [["ConvTranspose2d", [4, 2, 3], {"stride": 2}]],
        "shape": [1, 4, 5, 5],
    },
}


def build(lib, spec: dict):
    """The case's module, built from `lib` (torch or tocha)."""
    layers = [getattr(lib.nn, name)(*args, **kwargs) for name, args, kwargs in spec["modules"]]
    model = layers[0] if len(layers) == 1 else lib.nn.Sequential(*layers)
    return model.eval()


def example(lib, spec: dict):
    """The case's example input."""
    if spec["shape"] == "tokens":
        return lib.tensor([[1, 2, 3], [4, 5, 6]])
    return lib.randn(*spec["shape"])


def op_types(spec: dict) -> list[str]:
    model = build(torch, spec)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example(torch, spec),), buffer, dynamo=False, opset_version=18)
    return sorted({n.op_type for n in onnx.load_from_string(buffer.getvalue()).graph.node})


def main() -> None:
    torch.manual_seed(0)
    out = {name: {**spec, "torch_op_types": op_types(spec)} for name, spec in CASES.items()}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} ({len(out)} cases)")


if __name__ == "__main__":
    main()
