"""Recurrent layers: tocha-nn's ``rnn_layer`` primitive (one layer of RNN, LSTM or GRU, one or
both directions, over a padded sequence) as ONNX's RNN, LSTM and GRU operators.

PyTorch packs gate blocks as LSTM ``i, f, g, o`` and GRU ``r, z, n``; ONNX as LSTM
``i, o, f, c`` and GRU ``z, r, h``, so each weight and bias is split into its gate blocks and
joined again in ONNX's order. GRU applies the reset gate after the hidden side's linear map,
which is ONNX's ``linear_before_reset=1``.
"""

from __future__ import annotations

from .._builder import Builder, is_static, static_dim

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2)}
OP_TYPE = {"RNN_TANH": "RNN", "RNN_RELU": "RNN", "LSTM": "LSTM", "GRU": "GRU"}


def _gates(b: Builder, mode: str, weight: str) -> str:
    """A weight or bias with its gate blocks (dim 0) in ONNX's order."""
    if mode not in ORDER:
        return weight
    n = GATES[mode]
    blocks = b.op("Split", [weight], outputs=n, axis=0, num_outputs=n if b.opset >= 18 else None)
    return b.op("Concat", [blocks[k] for k in ORDER[mode]], axis=0)


def _stacked(b: Builder, per_direction: list[str]) -> str:
    """Per-direction tensors stacked on a new leading direction axis."""
    parts = [b.op("Unsqueeze", [p, b.ints([0])]) for p in per_direction]
    return parts[0] if len(parts) == 1 else b.op("Concat", parts, axis=0)


def _rnn_layer(b: Builder, node, *args):
    """``(x, h0, [c0], *weights, mode, batch_sizes, has_bias, num_dir, proj)`` ->
    ``(y, h_n, [c_n], workspace)``; x and y are the time steps' rows ``(T * B, features)``."""
    *tensors, mode, batch_sizes, has_bias, num_dir, proj = args
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = list(tensors[0])
    if proj:
        raise NotImplementedError("LSTM with proj_size > 0")
    sizes = list(batch_sizes)
    if len(set(sizes)) > 1:
        raise NotImplementedError("packed sequences of unequal lengths")
    lstm = mode == "LSTM"
    x, states, weights = tensors[0], tensors[1 : 2 + lstm], tensors[2 + lstm :]
    per_dir = len(weights) // num_dir
    hidden = static_dim(weights[1], 1)
    w, r, bias = [], [], []
    for k in range(num_dir):
        group = [b.value(t) for t in weights[k * per_dir : (k + 1) * per_dir]]
        w.append(_gates(b, mode, group[0]))
        r.append(_gates(b, mode, group[1]))
        if has_bias:
            ih, hh = _gates(b, mode, group[2]), _gates(b, mode, group[3])
            bias.append(b.op("Concat", [ih, hh], axis=0))
    features = static_dim(x, 1)
    batch = sizes[0]
    known = is_static(batch) or b.is_value(b.symbolic(batch))
    shape = [-1, batch, features] if known else [len(sizes), -1, features]
    seq = b.op("Reshape", [b.value(x), b.ints(shape)])
    inputs = [
        seq,
        _stacked(b, w),
        _stacked(b, r),
        _stacked(b, bias) if has_bias else None,
        None,
        *(b.value(s) for s in states),
    ]
    attrs = {
        "hidden_size": hidden,
        "direction": "bidirectional" if num_dir == 2 else "forward",
    }
    if mode == "GRU":
        attrs["linear_before_reset"] = 1
    if mode in ("RNN_TANH", "RNN_RELU"):
        attrs["activations"] = ["Tanh" if mode == "RNN_TANH" else "Relu"] * num_dir
    outs = b.op(OP_TYPE[mode], inputs, outputs=2 + lstm, **attrs)
    y = b.op("Transpose", [outs[0]], perm=[0, 2, 1, 3])
    rows = b.op("Reshape", [y, b.ints([-1, num_dir * hidden])])
    return (rows, *outs[1:], None)


PRIMITIVES = {"rnn_layer": _rnn_layer}
