"""Recurrent layers on oneDNN: tocha-nn's ``rnn_layer`` and ``rnn_layer_backward``.

One call runs one layer, one or both directions, of RNN_TANH, RNN_RELU (oneDNN's vanilla
RNN), LSTM or GRU (oneDNN's linear-before-reset GRU, which is PyTorch's) over a whole
sequence. The layouts line up with tocha's: the rows of ``x`` are oneDNN's ``tnc`` (time,
batch, features), the states ``(num_dir, B, H)`` its ``ldnc``, a weight ``(G * H, I)`` its
``ldgoi`` (described by strides, reordered to what the primitive chose). Gates: LSTM's are
``i, f, g, o`` in both; a GRU's are ``r, z, n`` in PyTorch and ``u(=z), r, n`` in oneDNN, so
the first two blocks swap, and oneDNN's GRU bias has a fourth block, ``b_hn``.

The layer's workspace (its hidden last output, read only by the backward) is oneDNN's
workspace followed by a copy of the outputs; the backward recognises it by its memory (a
table of the workspaces this module made and that are alive) and hands any other workspace
to the built-in kernel. Declined, to the built-in kernels: not float32, packed sequences
whose batch shrinks over time, LSTM projections, empty inputs; and where the built-in kernel
is the faster one (measured on AVX2, where oneDNN 3.2 runs its reference RNN on GEMMs): fewer
than `MIN_STEPS` time steps (the cells), and the training of a GRU or vanilla RNN whose
batch times hidden size exceeds `WIDE` (oneDNN's GRU backward is slower than tocha's BPTT
there, and its vanilla RNN no faster).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

import tocha

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
MIN_STEPS = 3
WIDE = 1024
# workspace address -> (weak reference to it, plan key, the (offset, size) of each part)
_workspaces: dict = {}
_lock = threading.Lock()


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


class _Layer:
    """The sizes of one call: time steps, batch, input, hidden, directions, bias, mode."""

    __slots__ = ("mode", "t", "n", "i", "h", "d", "bias", "g")

    def __init__(self, mode, t, n, i, h, d, bias):
        self.mode, self.t, self.n, self.i, self.h, self.d, self.bias = mode, t, n, i, h, d, bias
        self.g = GATES[mode]

    def key(self):
        return (self.mode, self.t, self.n, self.i, self.h, self.d, self.bias)

    @property
    def lstm(self) -> bool:
        return self.mode == "LSTM"

    @property
    def bias_gates(self) -> int:
        return 4 if self.mode == "GRU" else self.g


# -- memory descriptors of tocha's arrays -----------------------------------------------------
def _layer_md(lib, t, n, c):
    """Rows ``(t * n, c)`` as oneDNN's ``tnc``."""
    return D.MemoryDesc.strided(lib, (t, n, c), (n * c, c, 1))


def _state_md(lib, s: _Layer):
    """States ``(d, n, h)`` as ``ldnc``."""
    return D.MemoryDesc.strided(lib, (1, s.d, s.n, s.h), (s.d * s.n * s.h, s.n * s.h, s.h, 1))


def _weights_md(lib, s: _Layer, inputs: int):
    """Stacked weights ``(d, g * h, inputs)`` (PyTorch's rows) as oneDNN's ``(l, d, i, g, o)``."""
    g, h = s.g, s.h
    per_dir = g * h * inputs
    return D.MemoryDesc.strided(
        lib, (1, s.d, inputs, g, h), (s.d * per_dir, per_dir, 1, h * inputs, inputs)
    )


def _bias_md(lib, s: _Layer):
    g, h = s.bias_gates, s.h
    return D.MemoryDesc.strided(lib, (1, s.d, g, h), (s.d * g * h, g * h, h, 1))


def _any(lib, shape):
    return D.MemoryDesc.any(lib, shape)


def _descs(lib, s: _Layer):
    """The primitive's descriptors: data in tocha's layouts, weights in oneDNN's choice."""
    return {
        "src": _layer_md(lib, s.t, s.n, s.i),
        "state": _state_md(lib, s),
        "w": _any(lib, (1, s.d, s.i, s.g, s.h)),
        "wh": _any(lib, (1, s.d, s.h, s.g, s.h)),
        "b": _bias_md(lib, s),
        "dst": _layer_md(lib, s.t, s.n, s.d * s.h),
    }


def _h(md):
    return None if md is None else md.handle


def _forward_pd(lib, s: _Layer, m, prop):
    direction = D.BIDIRECTIONAL_CONCAT if s.d == 2 else D.LEFT2RIGHT
    src, st, w, wh, b, dst = (_h(m[k]) for k in ("src", "state", "w", "wh", "b", "dst"))
    if s.lstm:
        return D.create_pd(
            lib,
            "dnnl_lstm_forward_primitive_desc_create",
            prop,
            direction,
            src,
            st,
            st,
            w,
            wh,
            None,
            None,
            b,
            dst,
            st,
            st,
            0,
        )
    if s.mode == "GRU":
        return D.create_pd(
            lib,
            "dnnl_lbr_gru_forward_primitive_desc_create",
            prop,
            direction,
            src,
            st,
            w,
            wh,
            b,
            dst,
            st,
            0,
        )
    return D.create_pd(
        lib,
        "dnnl_vanilla_rnn_forward_primitive_desc_create",
        prop,
        D.ELTWISE_TANH if s.mode == "RNN_TANH" else D.ELTWISE_RELU,
        direction,
        src,
        st,
        w,
        wh,
        b,
        dst,
        st,
        0,
        0.0,
        0.0,
    )


def _backward_pd(lib, s: _Layer, m, hint):
    """The layer's backward primitive descriptor from its forward's `hint` (destroyed)."""
    direction = D.BIDIRECTIONAL_CONCAT if s.d == 2 else D.LEFT2RIGHT
    src, st, w, wh, b, dst = (_h(m[k]) for k in ("src", "state", "w", "wh", "b", "dst"))
    flags = D.RNN_DIFF_WEIGHTS_OVERWRITE
    if s.lstm:
        return D.create_backward_pd(
            lib,
            "dnnl_lstm_backward_primitive_desc_create",
            D.BACKWARD,
            direction,
            src, st, st, w, wh, None, None, b, dst, st, st,
            src, st, st, w, wh, None, None, b, dst, st, st,
            flags,
            hint=hint,
        )  # fmt: skip
    if s.mode == "GRU":
        return D.create_backward_pd(
            lib,
            "dnnl_lbr_gru_backward_primitive_desc_create",
            D.BACKWARD,
            direction,
            src, st, w, wh, b, dst, st,
            src, st, w, wh, b, dst, st,
            flags,
            hint=hint,
        )  # fmt: skip
    return D.create_backward_pd(
        lib,
        "dnnl_vanilla_rnn_backward_primitive_desc_create",
        D.BACKWARD,
        D.ELTWISE_TANH if s.mode == "RNN_TANH" else D.ELTWISE_RELU,
        direction,
        src, st, w, wh, b, dst, st,
        src, st, w, wh, b, dst, st,
        flags,
        0.0,
        0.0,
        hint=hint,
    )  # fmt: skip


def _weight_args(lib, s: _Layer, diff: bool):
    base = D.ARG_DIFF_WEIGHTS if diff else D.ARG_WEIGHTS
    base_iter = D.ARG_DIFF_WEIGHTS_ITER if diff else D.ARG_WEIGHTS_ITER
    return [
        (base, _weights_md(lib, s, s.i), diff),
        (base_iter, _weights_md(lib, s, s.h), diff),
        (D.ARG_DIFF_BIAS if diff else D.ARG_BIAS, _bias_md(lib, s), diff),
    ]


def _state_args(lib, s: _Layer, first: int, out: bool):
    """The hidden state (and the LSTM cell) argument at index `first` (SRC_ITER, ...)."""
    st = _state_md(lib, s)
    return [(first, st, out)] + ([(first + 1, st, out)] if s.lstm else [])


def _build_forward(s: _Layer, training: bool):
    lib = library()
    m = _descs(lib, s)
    pd = _forward_pd(lib, s, m, D.FORWARD_TRAINING if training else D.FORWARD_INFERENCE)
    args = [(D.ARG_SRC, m["src"], False), *_state_args(lib, s, D.ARG_SRC_ITER, False)]
    args += _weight_args(lib, s, False)
    args += [(D.ARG_DST, m["dst"], True), *_state_args(lib, s, D.ARG_DST_ITER, True)]
    if training:
        args.append((D.ARG_WORKSPACE, None, True))
    plan = Plan(lib, pd, args)
    plan.workspace_size = (
        lib.lib.dnnl_memory_desc_get_size(
            lib.lib.dnnl_primitive_desc_query_md(pd, D.QUERY_EXEC_ARG_MD, D.ARG_WORKSPACE)
        )
        if training
        else 0
    )
    return plan


def _build_backward(s: _Layer):
    lib = library()
    m = _descs(lib, s)
    pd = _backward_pd(lib, s, m, _forward_pd(lib, s, m, D.FORWARD_TRAINING))
    args = [(D.ARG_SRC, m["src"], False), *_state_args(lib, s, D.ARG_SRC_ITER, False)]
    args += _weight_args(lib, s, False)
    args += [(D.ARG_DST, m["dst"], False), *_state_args(lib, s, D.ARG_DST_ITER, False)]
    args += [(D.ARG_DIFF_DST, m["dst"], False), *_state_args(lib, s, D.ARG_DIFF_DST_ITER, False)]
    args.append((D.ARG_WORKSPACE, None, False))
    args += [(D.ARG_DIFF_SRC, m["src"], True), *_state_args(lib, s, D.ARG_DIFF_SRC_ITER, True)]
    args += _weight_args(lib, s, True)
    return Plan(lib, pd, args)


# -- tocha's weights <-> oneDNN's ---------------------------------------------------------------
def _gru_order(w: np.ndarray) -> np.ndarray:
    """A GRU weight's or bias's gate blocks r, z, n <-> z, r, n (its own inverse)."""
    n = w.shape[0] // 3
    return np.concatenate((w[n : 2 * n], w[:n], w[2 * n :]))


def _stack(parts, gru: bool) -> np.ndarray:
    """Per-direction weights as one C-ordered ``(d, rows, cols)`` array in oneDNN's gates."""
    if gru:
        parts = [_gru_order(p) for p in parts]
    return np.ascontiguousarray(np.stack(parts)) if len(parts) > 1 else _contiguous(parts[0])


def _bias(s: _Layer, b_ih, b_hh) -> np.ndarray:
    """oneDNN's ``(d, gates, h)`` bias: b_ih + b_hh, and for the GRU b_hn in a block apart
    (zeros for a layer without bias: oneDNN 3.2's recurrent primitives need one)."""
    if not s.bias:
        return np.zeros((s.d, s.bias_gates, s.h), _F32)
    out = np.empty((s.d, s.bias_gates, s.h), _F32)
    for k in range(s.d):
        if s.mode == "GRU":
            r, z, n = (b_ih[k] + b_hh[k]).reshape(3, s.h)
            out[k, 0], out[k, 1] = z, r
            out[k, 2] = b_ih[k][2 * s.h :]
            out[k, 3] = b_hh[k][2 * s.h :]
        else:
            out[k] = (b_ih[k] + b_hh[k]).reshape(s.g, s.h)
    return out


def _weights(s: _Layer, arrays) -> list:
    """The weight arguments of a plan from tocha's per-direction ``(w_ih, w_hh, [b_ih, b_hh])``."""
    size = 2 + 2 * s.bias
    groups = [arrays[k * size : (k + 1) * size] for k in range(s.d)]
    gru = s.mode == "GRU"
    out = [_stack([g[0] for g in groups], gru), _stack([g[1] for g in groups], gru)]
    if not s.bias:
        return [*out, _bias(s, None, None)]
    return [*out, _bias(s, [g[2] for g in groups], [g[3] for g in groups])]


def _split_grads(s: _Layer, dw, dwh, db) -> list:
    """tocha's per-direction weight gradients from oneDNN's stacked ones."""
    gru = s.mode == "GRU"
    grads = []
    for k in range(s.d):
        gw, gwh = dw[k], dwh[k]
        grads += [_gru_order(gw), _gru_order(gwh)] if gru else [gw, gwh]
        if s.bias:
            b = db[k]
            if gru:
                grads += [np.concatenate((b[1], b[0], b[2])), np.concatenate((b[1], b[0], b[3]))]
            else:
                grads += [b.reshape(-1), b.reshape(-1).copy()]
    return grads


# -- the workspace ------------------------------------------------------------------------------
def _parts(s: _Layer, workspace_bytes: int) -> list:
    """``(offset, size)`` in float32 elements of oneDNN's workspace, then y, h_n, [c_n]."""
    sizes = [-(-workspace_bytes // 64) * 16, s.t * s.n * s.d * s.h, s.d * s.n * s.h]
    if s.lstm:
        sizes.append(s.d * s.n * s.h)
    parts, start = [], 0
    for size in sizes:
        parts.append((start, size))
        start += size
    return parts


def _remember(ws: np.ndarray, key, parts) -> None:
    address = ws.ctypes.data
    with _lock:
        _workspaces[address] = (weakref.ref(ws), key, parts, ws.nbytes)
    weakref.finalize(ws, _forget, address)


def _forget(address) -> None:
    with _lock:
        entry = _workspaces.get(address)
        if entry is not None and entry[0]() is None:
            del _workspaces[address]


def _recall(ws: np.ndarray):
    """``(plan key, parts)`` of a workspace this module made, else None."""
    if ws.dtype != _F32 or ws.ndim != 1:
        return None
    entry = _workspaces.get(ws.ctypes.data)
    if entry is None or entry[0]() is None or entry[3] != ws.nbytes:
        return None
    return entry[1], entry[2]


def _view(ws, part, shape=None):
    start, size = part
    v = ws[start : start + size]
    return v if shape is None else v.reshape(shape)


# -- the kernels ------------------------------------------------------------------------------
def _layer_of(mode, x, w_hh, batch_sizes, has_bias, num_dir) -> _Layer:
    return _Layer(
        mode,
        len(batch_sizes),
        batch_sizes[0],
        x.shape[1],
        w_hh.shape[1],
        num_dir,
        bool(has_bias),
    )


def _ok(mode, arrays, batch_sizes, proj) -> bool:
    if proj or mode not in GATES or len(batch_sizes) < MIN_STEPS or arrays[0].size == 0:
        return False
    if any(b != batch_sizes[0] for b in batch_sizes):
        return False
    return all(a.dtype == _F32 for a in arrays)


def rnn_layer(fallback):
    """``rnn_layer(x, h0, [c0], *weights, mode, batch_sizes, has_bias, num_dir, proj)`` ->
    ``(y, h_n, [c_n], workspace)``."""

    def kernel(*flat):
        *arrays, mode, batch_sizes, has_bias, num_dir, proj = flat
        if not _ok(mode, arrays, batch_sizes, proj):
            return fallback(*flat)
        lstm = mode == "LSTM"
        states = [_contiguous(a) for a in arrays[1 : 2 + lstm]]
        x, weights = _contiguous(arrays[0]), arrays[2 + lstm :]
        s = _layer_of(mode, x, weights[1], batch_sizes, has_bias, num_dir)
        training = tocha.is_grad_enabled()
        if training and mode != "LSTM" and s.n * s.h > WIDE:
            return fallback(*flat)
        key = (s.key(), training, threads())
        plan = _cache.get(key, lambda: _build_forward(s, training))
        if plan is None:
            return fallback(*flat)
        y = np.empty((x.shape[0], s.d * s.h), _F32)
        finals = [np.empty((s.d, s.n, s.h), _F32) for _ in states]
        if not training:
            plan.run(x, *states, *_weights(s, weights), y, *finals)
            return (y, *finals, np.empty(0, _F32))
        parts = _parts(s, plan.workspace_size)
        ws = np.empty(sum(size for _, size in parts), _F32)
        plan.run(x, *states, *_weights(s, weights), y, *finals, _view(ws, parts[0]))
        for part, out in zip(parts[1:], (y, *finals)):
            _view(ws, part)[...] = out.reshape(-1)
        _remember(ws, s.key(), parts)
        return (y, *finals, ws)

    return kernel


def rnn_layer_backward(fallback):
    """``rnn_layer_backward(gy, gh_n, [gc_n], x, h0, [c0], *weights, workspace, mode,
    batch_sizes, has_bias, num_dir, proj)`` -> ``(dx, dh0, [dc0], *dweights)``."""

    def kernel(*flat):
        *arrays, mode, batch_sizes, has_bias, num_dir, proj = flat
        known = _recall(arrays[-1]) if mode in GATES else None
        if known is None or not _ok(mode, arrays[:-1], batch_sizes, proj):
            return fallback(*flat)
        lstm = mode == "LSTM"
        n_states = 1 + lstm
        grads = [_contiguous(a) for a in arrays[: 1 + n_states]]
        x = _contiguous(arrays[1 + n_states])
        states = [_contiguous(a) for a in arrays[2 + n_states : 2 + 2 * n_states]]
        *weights, ws = arrays[2 + 2 * n_states :]
        s = _layer_of(mode, x, weights[1], batch_sizes, has_bias, num_dir)
        key, parts = known
        if key != s.key():
            return fallback(*flat)
        plan = _cache.get(("bwd", key, threads()), lambda: _build_backward(s))
        if plan is None:
            return fallback(*flat)
        outs = [_view(ws, parts[1], (x.shape[0], s.d * s.h))]
        outs += [_view(ws, part, (s.d, s.n, s.h)) for part in parts[2:]]
        dx = np.empty(x.shape, _F32)
        dstates = [np.empty((s.d, s.n, s.h), _F32) for _ in states]
        dw = np.empty((s.d, s.g * s.h, s.i), _F32)
        dwh = np.empty((s.d, s.g * s.h, s.h), _F32)
        db = np.empty((s.d, s.bias_gates, s.h), _F32)
        plan.run(
            x,
            *states,
            *_weights(s, weights),
            *outs,
            *grads,
            _view(ws, parts[0]),
            dx,
            *dstates,
            dw,
            dwh,
            db,
        )
        return (dx, *dstates, *_split_grads(s, dw, dwh, db))

    return kernel
