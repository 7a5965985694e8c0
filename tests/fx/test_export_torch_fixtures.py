"""tocha.export against torch.export on custom modules (which the oracle cannot replay: they
subclass ``torch.nn.Module``): `scripts/record_export_fixtures.py` builds each module of
`CASES` with torch, exports it and writes its signature, state, weights, inputs and outputs to
``tests/fx/fixtures/export_cases.json``; these tests build the same modules with tocha, load
the weights and compare."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tocha

FIXTURES = Path(__file__).parent / "fixtures" / "export_cases.json"


def _buffer_and_constant(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 4)
            self.register_buffer("scale", lib.full((4,), 2.0))
            self.register_buffer("shift", lib.ones(4), persistent=False)
            self.offset = lib.tensor([1.0, -1.0, 0.5, 0.0])

        def forward(self, x):
            return self.fc(x) * self.scale + self.shift + self.offset

    return Model().eval(), ((3, 3),), {}


def _kwargs_and_tuple(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(4, 2)
            self.b = lib.nn.Linear(4, 3)

        def forward(self, x, *, y):
            h = lib.tanh(x) + y
            return self.a(h), self.b(h).sigmoid()

    return Model().eval(), ((2, 4),), {"y": (2, 4)}


def _cnn_batch_norm_train(lib):
    model = lib.nn.Sequential(
        lib.nn.Conv2d(1, 3, 3, padding=1),
        lib.nn.BatchNorm2d(3),
        lib.nn.ReLU(),
        lib.nn.MaxPool2d(2),
        lib.nn.Flatten(),
        lib.nn.Linear(12, 2),
    )
    return model.train(), ((4, 1, 4, 4),), {}


def _lstm(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lib.nn.LSTM(3, 4, num_layers=2, batch_first=True)
            self.head = lib.nn.Linear(4, 1)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    return Model().eval(), ((2, 5, 3),), {}


def _transformer(lib):
    layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    return layer.eval(), ((2, 3, 8),), {}


# Cases whose modules tocha writes with the same public calls as torch, so that the graphs
# agree node for node (tocha's LSTM runs its layers as primitives, and its attention is
# composed differently, where torch has one op for each).
SAME_GRAPH = ("buffer_and_constant", "kwargs_and_tuple", "cnn_batch_norm_train")

CASES = {
    "buffer_and_constant": _buffer_and_constant,
    "kwargs_and_tuple": _kwargs_and_tuple,
    "cnn_batch_norm_train": _cnn_batch_norm_train,
    "lstm": _lstm,
    "transformer_encoder_layer": _transformer,
}


def inputs(case: str, lib) -> tuple:
    """The case's example inputs, the same numbers in torch and tocha."""
    _, shapes, kwshapes = CASES[case](tocha)
    rng = np.random.default_rng(len(case))
    args = tuple(lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes)
    kwargs = {k: lib.tensor(rng.standard_normal(s).astype(np.float32)) for k, s in kwshapes.items()}
    return args, kwargs


def _load(model, record):
    for name, value in record["weights"].items():
        target = model
        *path, field = name.split(".")
        for part in path:
            target = getattr(target, part)
        array = np.asarray(value["data"], dtype=value["dtype"]).reshape(value["shape"])
        current = getattr(target, field)
        with tocha.no_grad():
            current.copy_(tocha.tensor(array))


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flat(v)]
    return [value]


@pytest.fixture(scope="module")
def recorded():
    return json.loads(FIXTURES.read_text())


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_signature_state_and_outputs_match_torch(recorded, case):
    record = recorded[case]
    model = CASES[case](tocha)[0]
    _load(model, record)
    args, kwargs = inputs(case, tocha)
    ep = tocha.export.export(model, args, kwargs)
    specs = [[s.kind.name, s.target, s.arg.name] for s in ep.graph_signature.input_specs]
    assert specs == record["input_specs"]
    outputs = [[s.kind.name, s.target] for s in ep.graph_signature.output_specs]
    assert outputs == record["output_specs"]
    assert list(ep.state_dict) == record["state_dict"]
    assert sorted(ep.constants) == sorted(record["constants"])
    if case in SAME_GRAPH:
        assert [n.name for n in ep.graph.nodes if n.op == "call_function"] == record["nodes"]
    got = _flat(ep.module()(*args, **kwargs))
    assert len(got) == len(record["outputs"])
    for mine, theirs in zip(got, record["outputs"]):
        np.testing.assert_allclose(np.asarray(mine.detach()), np.asarray(theirs), atol=2e-5)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_decomposed_signature_and_outputs_match_torch(recorded, case):
    record = recorded[case]
    model = CASES[case](tocha)[0]
    _load(model, record)
    args, kwargs = inputs(case, tocha)
    decomposed = tocha.export.export(model, args, kwargs).run_decompositions()
    outputs = [[s.kind.name, s.target] for s in decomposed.graph_signature.output_specs]
    assert outputs == record["decomposed_output_specs"]
    got = _flat(decomposed.module()(*args, **kwargs))
    for mine, theirs in zip(got, record["outputs"]):
        np.testing.assert_allclose(np.asarray(mine.detach()), np.asarray(theirs), atol=2e-5)
