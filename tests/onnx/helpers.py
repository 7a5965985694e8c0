"""Helpers of the tocha.onnx tests: graphs built by hand with their example values, and
onnxruntime runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

import tocha
from tocha.library import REGISTRY, call

TOL = 1e-4


class Primitive:
    """A graph target for a tocha primitive: ``f(*tensors, *extras)`` runs
    ``call(REGISTRY[name], tensors, *extras)``; `extras` counts the trailing non-tensor
    arguments."""

    def __init__(self, name: str, extras: int) -> None:
        self.name = name
        self.extras = extras

    def __call__(self, *args: Any) -> Any:
        cut = len(args) - self.extras
        return call(REGISTRY[self.name], tuple(args[:cut]), *args[cut:])


def _load(env: dict, a: Any) -> Any:
    if isinstance(a, (tuple, list)):
        return type(a)(_load(env, x) for x in a)
    return env[a] if hasattr(a, "op") and a in env else a


def propagate(graph: Any, feeds: dict[str, Any]) -> list:
    """Run a graph on `feeds` (by placeholder name), storing each node's value in
    ``meta['val']``; returns the flat list of output values."""
    env: dict = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            env[node] = feeds[node.name]
        elif node.op == "call_function":
            args = _load(env, node.args)
            kwargs = {k: _load(env, v) for k, v in node.kwargs.items()}
            with tocha.no_grad():
                env[node] = node.target(*args, **kwargs)
        elif node.op == "output":
            out = _load(env, node.args[0])
            return list(out) if isinstance(out, (tuple, list)) else [out]
        node.meta["val"] = env[node]
    raise AssertionError("graph without output")


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def run(model: onnx.ModelProto, *inputs: Any) -> list[np.ndarray]:
    """The model's outputs from onnxruntime, fed tensors (or arrays) in input order."""
    s = session(model)
    names = [i.name for i in s.get_inputs()]
    arrays = [x.detach().numpy() if isinstance(x, tocha.Tensor) else x for x in inputs]
    return s.run(None, dict(zip(names, arrays)))


def assert_close(got: Any, want: Any, tol: float = TOL) -> None:
    want = want.detach().numpy() if isinstance(want, tocha.Tensor) else np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
