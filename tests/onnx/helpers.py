"""Helpers of the tocha.onnx tests: graphs built by hand with their example values, and
onnxruntime runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

import tocha
import tocha.onnx

TOL = 1e-4


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


def flat(value):
    """A module's outputs as a flat list of tensors."""
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in flat(item)]
    return [] if value is None else [value]


def check_against_eager(module, args, *others, training=False, **export_kw):
    """Export `module` (in eval mode unless `training`) on `args`, check the model, and
    compare onnxruntime with eager tocha on `args` and on each tuple of `others` (other sizes
    of dynamic axes)."""
    module.train(training)
    program = tocha.onnx.export(module, args, **export_kw)
    onnx.checker.check_model(program.model_proto, full_check=True)
    s = session(program.model_proto)
    names = [i.name for i in s.get_inputs()]
    for inputs in (args, *others):
        got = s.run(None, {n: x.numpy() for n, x in zip(names, flat(inputs))})
        with tocha.no_grad():
            want = flat(module(*inputs))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w)
    return program


def op_types(program):
    return {n.op_type for n in program.model_proto.graph.node}
