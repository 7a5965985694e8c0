"""The emitters on graphs built by hand with tocha.fx.Graph: each family of ops written as
ONNX, checked by onnx.checker and run by onnxruntime against tocha's own values."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.onnx.helpers import assert_close, propagate, run
from tocha.export import ops
from tocha.fx import Graph
from tocha.onnx._convert import Lifted, to_model
from tocha.onnx.errors import OnnxExporterError, UnsupportedOperatorError


def export_graph(graph, params, inputs, opset=18):
    """The graph's outputs from tocha and from onnxruntime, placeholders named as the dicts'
    keys (params become initializers)."""
    want = propagate(graph, {**params, **inputs})
    lifted = Lifted({k: (k, v) for k, v in params.items()}, list(inputs))
    model = to_model(graph, lifted, opset=opset)
    return run(model, *inputs.values()), want, model


def check(graph, params, inputs, opset=18):
    got, want, model = export_graph(graph, params, inputs, opset)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)
    return model


def op_types(model):
    return {n.op_type for n in model.graph.node}


@pytest.mark.parametrize("opset", [17, 18, 20], ids=["opset17", "opset18", "opset20"])
def test_mlp_pieces(opset):
    g = Graph()
    x, w, b = g.placeholder("x"), g.placeholder("w"), g.placeholder("b")
    h = g.call_function(F.linear, (x, w, b))
    h = g.call_function(tocha.relu, (h,))
    e = g.call_function(F.gelu, (h,))
    t = g.call_function(F.gelu, (h,), {"approximate": "tanh"})
    s = g.call_function(F.silu, (t,))
    y = g.call_function(tocha.add, (e, s), {"alpha": 2})
    y = g.call_function(tocha.sub, (y, 0.5))
    y = g.call_function(tocha.mul, (y, g.call_function(tocha.sigmoid, (s,))))
    y = g.call_function(tocha.div, (y, 3.0))
    y = g.call_function(tocha.tanh, (y,))
    z = g.call_function(tocha.matmul, (y, w))
    sm = g.call_function(F.softmax, (z,), {"dim": -1})
    lsm = g.call_function(F.log_softmax, (z, 1))
    d = g.call_function(F.dropout, (lsm,), {"p": 0.3, "training": False})
    g.output((sm, d))
    params = {"w": tocha.randn(6, 5), "b": tocha.randn(6)}
    check(g, params, {"x": tocha.randn(4, 5)}, opset)


def test_shape_ops():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    f = g.call_function(tocha.flatten, (x, 1))
    v = g.call_function(tocha.Tensor.view, (f, -1, 4, 6))
    r = g.call_function(tocha.reshape, (v, (2, 2, 12)))
    p = g.call_function(tocha.permute, (r, 2, 0, 1))
    t = g.call_function(tocha.transpose, (p, 0, 2))
    u = g.call_function(tocha.unsqueeze, (t, -1))
    s = g.call_function(tocha.squeeze, (u, -1))
    c = g.call_function(tocha.cat, ([s, s], 1))
    parts = g.call_function(tocha.chunk, (c, 3, 2))
    first = g.call_function(operator.getitem, (parts, 0))
    last = g.call_function(operator.getitem, (parts, 2))
    sl = g.call_function(operator.getitem, (y, (slice(None), 1, None, slice(1, None, 2))))
    el = g.call_function(operator.getitem, (y, (Ellipsis, -1)))
    st = g.call_function(tocha.stack, ([first, last], 0))
    m = g.call_function(tocha.mean, (st, (1, -1)), {"keepdim": True})
    un = g.call_function(tocha.unflatten, (f, 1, (4, 6)))
    g.output((st, sl, el, m, un))
    check(g, {}, {"x": tocha.randn(2, 3, 4, 2), "y": tocha.randn(3, 4, 5)})


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"stride": 2, "padding": 1},
        {"padding": "same", "dilation": 2},
        {"groups": 2, "padding": (1, 0)},
    ],
    ids=["plain", "stride-pad", "same-dilation", "groups"],
)
def test_conv_batch_norm_pool(kw):
    g = Graph()
    x = g.placeholder("x")
    w, b = g.placeholder("w"), g.placeholder("b")
    mean, var = g.placeholder("mean"), g.placeholder("var")
    gamma, beta = g.placeholder("gamma"), g.placeholder("beta")
    h = g.call_function(F.conv2d, (x, w, b), kw)
    h = g.call_function(F.batch_norm, (h, mean, var, gamma, beta, False, 0.1, 1e-5))
    mp = g.call_function(F.max_pool2d, (h, 2))
    ap = g.call_function(F.avg_pool2d, (h, 3), {"stride": 1, "padding": 1})
    gp = g.call_function(F.adaptive_avg_pool2d, (h, 1))
    cp = g.call_function(F.adaptive_avg_pool2d, (h, (3, 2)))
    g.output((mp, ap, gp, cp))
    c_in = 4 // (kw.get("groups", 1)) if "groups" in kw else 4
    params = {
        "w": tocha.randn(6, c_in, 3, 3),
        "b": tocha.randn(6),
        "mean": tocha.randn(6),
        "var": tocha.rand(6) + 0.5,
        "gamma": tocha.randn(6),
        "beta": tocha.randn(6),
    }
    check(g, params, {"x": tocha.randn(2, 4, 9, 8)})


def test_conv1d_unbatched_and_pool1d():
    g = Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    h = g.call_function(F.conv1d, (x, w), {"stride": 2, "padding": 2})
    mp = g.call_function(F.max_pool1d, (h, 2))
    ap = g.call_function(F.adaptive_avg_pool1d, (h, 3))
    g.output((mp, ap))
    check(g, {"w": tocha.randn(5, 3, 4)}, {"x": tocha.randn(3, 11)})


def test_layer_norm_embedding_attention():
    g = Graph()
    idx, table = g.placeholder("idx"), g.placeholder("table")
    lw, lb = g.placeholder("lw"), g.placeholder("lb")
    e = g.call_function(F.embedding, (idx, table))
    n = g.call_function(F.layer_norm, (e, (8,), lw, lb))
    q = g.call_function(tocha.unflatten, (n, -1, (2, 4)))
    q = g.call_function(tocha.transpose, (q, 1, 2))
    a = g.call_function(F.scaled_dot_product_attention, (q, q, q))
    c = g.call_function(F.scaled_dot_product_attention, (q, q, q), {"is_causal": True})
    g.output((a, c))
    params = {"table": tocha.randn(10, 8), "lw": tocha.randn(8), "lb": tocha.randn(8)}
    check(g, params, {"idx": tocha.tensor([[1, 2, 3], [4, 5, 9]])})


def test_attention_primitive_with_mask():
    sdpa = ops.get("scaled_dot_product_attention")
    g = Graph()
    q, k, v, m = (g.placeholder(n) for n in "qkvm")
    pair = g.call_function(sdpa, (q, k, v, m, 0.5, False, "m"))
    out = g.call_function(operator.getitem, (pair, 0))
    weights = g.call_function(operator.getitem, (pair, 1))
    g.output((out, weights))
    mask = tocha.zeros(3, 4)
    mask[0, 1:] = -float("inf")
    inputs = {"q": tocha.randn(2, 3, 5), "k": tocha.randn(2, 4, 5), "v": tocha.randn(2, 4, 6)}
    check(g, {}, {**inputs, "m": mask})


def _recurrent_graph(module, x):
    """The graph of module(x) on `rnn_layer` primitives, as nn.LSTM/nn.GRU run them."""
    layer = ops.get("rnn_layer")
    lstm = module.mode == "LSTM"
    dirs = 2 if module.bidirectional else 1
    steps, batch = (x.shape[1], x.shape[0]) if module.batch_first else x.shape[:2]
    g = Graph()
    inp = g.placeholder("x")
    names = [n for n, _ in module.named_parameters()]
    weights = {n: g.placeholder(n) for n in names}
    seq = g.call_function(tocha.transpose, (inp, 0, 1)) if module.batch_first else inp
    rows = g.call_function(tocha.reshape, (seq, (steps * batch, x.shape[2])))
    states = [g.call_function(tocha.zeros, ((dirs, batch, module.hidden_size),))]
    if lstm:
        states.append(g.call_function(tocha.zeros, ((dirs, batch, module.hidden_size),)))
    per = len(names) // module.num_layers
    finals = []
    for layer_k in range(module.num_layers):
        w = [weights[n] for n in names[layer_k * per : (layer_k + 1) * per]]
        out = g.call_function(
            layer, (rows, *states, *w, module.mode, (batch,) * steps, True, dirs, False)
        )
        rows = g.call_function(operator.getitem, (out, 0))
        finals.append(g.call_function(operator.getitem, (out, 1)))
    h = g.call_function(tocha.cat, (finals,))
    y = g.call_function(tocha.reshape, (rows, (steps, batch, dirs * module.hidden_size)))
    if module.batch_first:
        y = g.call_function(tocha.transpose, (y, 0, 1))
    g.output((y, h))
    params = {n: p.detach() for n, p in module.named_parameters()}
    return g, params


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"num_layers": 2}, {"bidirectional": True, "batch_first": True}],
    ids=["one-layer", "two-layers", "bidirectional-batch-first"],
)
def test_recurrent_primitive(kind, kw):
    module = getattr(nn, kind)(5, 7, **kw)
    x = tocha.randn(3, 4, 5)
    g, params = _recurrent_graph(module, x)
    got, want, model = export_graph(g, params, {"x": x})
    out, h = module(x)
    h = h[0] if kind == "LSTM" else h
    assert_close(want[0], out)
    assert_close(got[0], out)
    assert_close(got[1], h)
    assert kind in op_types(model)


def test_unsupported_function_names_it():
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(tocha.special.bessel_j0, (x,)))
    propagate(g, {"x": tocha.randn(3)})
    with pytest.raises(UnsupportedOperatorError, match="bessel_j0") as info:
        to_model(g, Lifted({}, ["x"]), opset=18)
    assert isinstance(info.value, OnnxExporterError)
    assert "opset version 18 is not supported" in str(info.value)


def test_unsupported_primitive_names_it():
    g = Graph()
    x = g.placeholder("x")
    x.meta["val"] = tocha.randn(3)
    g.output(g.call_function(ops.get("cumsum"), (x, 0)))
    with pytest.raises(UnsupportedOperatorError, match="'cumsum'"):
        to_model(g, Lifted({}, ["x"]), opset=18)


def test_unsupported_arguments_raise_exporter_error():
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(F.avg_pool2d, (x, 2), {"divisor_override": 3}))
    propagate(g, {"x": tocha.randn(1, 1, 4, 4)})
    with pytest.raises(OnnxExporterError, match="divisor_override"):
        to_model(g, Lifted({}, ["x"]), opset=18)


def test_initializers_named_and_inputs_outputs_renamed():
    g = Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    g.output(g.call_function(tocha.matmul, (x, w)))
    propagate(g, {"x": tocha.randn(2, 3), "w": tocha.randn(3, 4)})
    model = to_model(
        g,
        Lifted({"w": ("fc.weight", tocha.randn(3, 4))}, ["x"]),
        opset=18,
        input_names=["data"],
        output_names=["scores"],
        dynamic_dims={"data": {0: "batch"}, "scores": {0: "batch"}},
    )
    assert [i.name for i in model.graph.input] == ["data"]
    assert [o.name for o in model.graph.output] == ["scores"]
    assert [i.name for i in model.graph.initializer][:1] == ["fc.weight"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and dims[1].dim_value == 3
    (out,) = run(model, np.ones((5, 3), np.float32))
    assert out.shape == (5, 4)


def test_attention_with_grouped_heads_and_a_bool_mask():
    g = Graph()
    q, k, v, m = (g.placeholder(n) for n in "qkvm")
    a = g.call_function(F.scaled_dot_product_attention, (q, k, v, m), {"enable_gqa": True})
    b = g.call_function(F.scaled_dot_product_attention, (q, k, v), {"enable_gqa": True})
    g.output((a, b))
    mask = tocha.rand(3, 5) > 0.3
    mask[:, 0] = True
    inputs = {
        "q": tocha.randn(2, 4, 3, 6),
        "k": tocha.randn(2, 2, 5, 6),
        "v": tocha.randn(2, 2, 5, 7),
        "m": mask,
    }
    check(g, {}, inputs)
