"""Recurrent layers: a whole layer over a whole sequence as one primitive, and the cell steps.

One primitive, ``rnn_layer``, runs a layer of RNN_TANH, RNN_RELU, LSTM or GRU (one or both
directions) over a whole sequence: its kernel loops over time on raw arrays and keeps what the
backward needs in a workspace (a hidden last output). Its derivative is a second primitive,
``rnn_layer_backward``, that loops backwards over time (BPTT), every gate gradient of a step
in a few whole-array operations, and finds the weight gradients with one matmul over all
steps at the end. The cells (RNNCell, LSTMCell, GRUCell) run the same primitive for one step,
so a cell step is one autograd node too. Double backward through these nodes is not
supported: it raises a RuntimeError when a second derivative reaches one. Forward mode is:
the layer's forward rule differentiates the cell recurrence step by step in tocha ops, and
BPTT's forward rule (forward-over-reverse, as Hessian-vector products run) differentiates
that recurrence backward.

Sequences are packed: the rows of time step t are ``data[offset_t : offset_t + batch_sizes[t]]``
with non-increasing batch sizes (a padded ``(T, B, *)`` batch is ``batch_sizes = (B,) * T``).
Gate order is PyTorch's: LSTM ``i, f, g, o``; GRU ``r, z, n``. Inside, LSTM runs its gates
in the order ``i, f, o, g`` (the three sigmoids side by side); the permutation swaps the last
two blocks and is its own inverse.
"""

from __future__ import annotations

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd import grad as autograd_grad
from tocha.autograd.derivatives import d, fwd
from tocha.library import TITLE, call, defop

from ._jvp import plus
from .dropout import dropout as _dropout

__all__ = ["gru_cell", "lstm_cell", "rnn", "rnn_relu_cell", "rnn_tanh_cell"]

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- array helpers --------------------------------------------------------------------------
def _sigmoid_(xp, a) -> None:
    """``a = 1 / (1 + exp(-a))`` in place."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1
    xp.reciprocal(a, out=a)


def _ifog(xp, a):
    """LSTM gate blocks (rows of a weight, or a bias) reordered i, f, g, o <-> i, f, o, g."""
    h = a.shape[0] // 4
    return xp.concatenate((a[: 2 * h], a[3 * h :], a[2 * h : 3 * h]))


def _steps(batch_sizes, reverse: bool) -> list:
    """``(start, stop)`` row ranges of the time steps, in the order a direction visits them."""
    steps, start = [], 0
    for bs in batch_sizes:
        steps.append((start, start + bs))
        start += bs
    return steps[::-1] if reverse else steps


def _carve(slab, n: int, widths) -> list:
    """Contiguous ``(n, width)`` arrays laid end to end in the flat array `slab`."""
    views, start = [], 0
    for width in widths:
        views.append(slab[start : start + n * width].reshape(n, width))
        start += n * width
    return views


def _ws_widths(mode: str, hidden: int, out: int) -> tuple:
    """Columns of each workspace array per row of one direction: the previous hidden state,
    then LSTM: previous cell, gates, tanh(cell); GRU: gates, W_hn h + b_hn; RNN: outputs."""
    if mode == "LSTM":
        return (out, hidden, 4 * hidden, hidden)
    if mode == "GRU":
        return (out, 3 * hidden, hidden)
    return (out, hidden)


def _groups(weights, has_bias: bool, proj: bool, num_dir: int) -> list:
    """Per direction: ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` (None where absent)."""
    size = 2 + 2 * has_bias + proj
    groups = []
    for k in range(num_dir):
        w = list(weights[k * size : (k + 1) * size])
        b = w[2:4] if has_bias else [None, None]
        groups.append((w[0], w[1], *b, w[-1] if proj else None))
    return groups


# -- forward of one direction: fills `y`, updates states h (and c) in place -----------------
def _rnn_forward(xp, mode, x, w, steps, y, h, c, ws):
    w_ih, w_hh, b_ih, b_hh, _ = w
    xw = x @ w_ih.T
    if b_ih is not None:
        xw += b_ih + b_hh
    h_prev, outs = ws
    w_hh_t = w_hh.T
    for s, e in steps:
        hp = h[: e - s]
        h_prev[s:e] = hp
        o = outs[s:e]
        xp.matmul(hp, w_hh_t, out=o)
        o += xw[s:e]
        if mode == "RNN_TANH":
            xp.tanh(o, out=o)
        else:
            xp.maximum(o, 0, out=o)
        hp[...] = o
        y[s:e] = o


def _step_block(flat, width: int, s: int, e: int):
    """The ``(width, e - s)`` block of time step rows ``s:e`` in a step-blocked flat array
    (LSTM keeps its per-step arrays transposed: features by batch, each block contiguous)."""
    return flat[width * s : width * e].reshape(width, e - s)


def _lstm_forward(xp, mode, x, w, steps, y, h, c, ws):
    """LSTM, run in the transposed layout: states ``(features, batch)``, gates of a step one
    contiguous ``(4H, bs)`` block in order i, f, o, g. The sigmoid gates' rows are scaled by
    1/2 so that one tanh over the block gives them: ``sigmoid(z) = (1 + tanh(z / 2)) / 2``."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    n = w_hh.shape[0] // 4
    scale = xp.ones((4 * n, 1), x.dtype)
    scale[: 3 * n] = 0.5
    xw = (_ifog(xp, w_ih) * scale) @ x.T
    if b_ih is not None:
        xw += _ifog(xp, b_ih + b_hh)[:, None] * scale
    w_hh_s = _ifog(xp, w_hh) * scale
    h_prev = ws[0]
    c_prev, gates, tanh_c = (a.reshape(-1) for a in ws[1:])
    h_out, c_out = h, c
    h, c = h.T.copy(), c.T.copy()
    for s, e in steps:
        hp, cp = h[:, : e - s], c[:, : e - s]
        h_prev[s:e] = hp.T
        _step_block(c_prev, n, s, e)[...] = cp
        g = _step_block(gates, 4 * n, s, e)
        xp.matmul(w_hh_s, hp, out=g)
        g += xw[:, s:e]
        xp.tanh(g, out=g)
        sig = g[: 3 * n]
        sig *= 0.5
        sig += 0.5
        cp *= g[n : 2 * n]
        cp += g[:n] * g[3 * n :]
        tc = xp.tanh(cp, out=_step_block(tanh_c, n, s, e))
        if w_hr is None:
            xp.multiply(g[2 * n : 3 * n], tc, out=hp)
        else:
            xp.matmul(w_hr, g[2 * n : 3 * n] * tc, out=hp)
        y[s:e] = hp.T
    h_out[...] = h.T
    c_out[...] = c.T


def _gru_forward(xp, mode, x, w, steps, y, h, c, ws):
    w_ih, w_hh, b_ih, b_hh, _ = w
    n = w_hh.shape[0] // 3
    xw = x @ w_ih.T
    if b_ih is not None:
        xw += b_ih
    h_prev, gates, hn_all = ws
    gh = xp.empty((h.shape[0], 3 * n), h.dtype)
    w_hh_t = w_hh.T
    for s, e in steps:
        hp, ght, g = h[: e - s], gh[: e - s], gates[s:e]
        h_prev[s:e] = hp
        xp.matmul(hp, w_hh_t, out=ght)
        if b_hh is not None:
            ght += b_hh
        xp.add(xw[s:e, : 2 * n], ght[:, : 2 * n], out=g[:, : 2 * n])
        _sigmoid_(xp, g[:, : 2 * n])
        hn_all[s:e] = ght[:, 2 * n :]
        new = g[:, 2 * n :]
        xp.multiply(g[:, :n], ght[:, 2 * n :], out=new)
        new += xw[s:e, 2 * n :]
        xp.tanh(new, out=new)
        hp -= new
        hp *= g[:, n : 2 * n]
        hp += new
        y[s:e] = hp


# -- backward of one direction: returns the weight gradients, adds into dx ------------------
def _bias_grads(dg, has_bias: bool) -> list:
    """The gradients of b_ih and b_hh (equal) from the rows of pre-activation gradients."""
    if not has_bias:
        return []
    db = dg.sum(0)
    return [db, db.copy()]


def _rnn_backward(xp, mode, x, w, steps, gy, dh, dc, ws, dx):
    w_ih, w_hh, b_ih, _, _ = w
    h_prev, outs = ws
    dpre = xp.empty_like(outs)
    for s, e in steps:
        dht, o, dp = dh[: e - s], outs[s:e], dpre[s:e]
        dht += gy[s:e]
        if mode == "RNN_TANH":
            xp.multiply(o, o, out=dp)
            xp.subtract(1, dp, out=dp)
            dp *= dht
        else:
            xp.multiply(dht, o > 0, out=dp)
        xp.matmul(dp, w_hh, out=dht)
    dx += dpre @ w_ih
    return [dpre.T @ x, dpre.T @ h_prev, *_bias_grads(dpre, b_ih is not None)]


def _lstm_backward(xp, mode, x, w, steps, gy, dh, dc, ws, dx):
    """BPTT in `_lstm_forward`'s layout; the pre-activation gradients of every step are
    gathered in one ``(4H, N)`` array for the weight gradients at the end."""
    w_ih, w_hh, b_ih, _, w_hr = w
    n = w_hh.shape[0] // 4
    h_prev = ws[0]
    c_prev, gates, tanh_c = (a.reshape(-1) for a in ws[1:])
    w_hh_p = _ifog(xp, w_hh)
    dgates = xp.empty((4 * n, x.shape[0]), x.dtype)
    scratch = xp.empty(4 * n * dh.shape[0], x.dtype)
    dw_hr = None if w_hr is None else xp.zeros_like(w_hr)
    dh_out, dc_out = dh, dc
    dh, dc = dh.T.copy(), dc.T.copy()
    for s, e in steps:
        dht, dct = dh[:, : e - s], dc[:, : e - s]
        dht += gy[s:e].T
        g, tc = _step_block(gates, 4 * n, s, e), _step_block(tanh_c, n, s, e)
        i, f, o, gg = g[:n], g[n : 2 * n], g[2 * n : 3 * n], g[3 * n :]
        if w_hr is None:
            dm = dht
        else:
            dw_hr += dht @ (o * tc).T
            dm = w_hr.T @ dht
        dg = scratch[: 4 * n * (e - s)].reshape(4 * n, e - s)
        t = tc * tc
        xp.subtract(1, t, out=t)
        t *= o
        t *= dm
        dct += t
        xp.multiply(dm, tc, out=dg[2 * n : 3 * n])
        xp.multiply(dct, gg, out=dg[:n])
        xp.multiply(dct, _step_block(c_prev, n, s, e), out=dg[n : 2 * n])
        xp.multiply(dct, i, out=dg[3 * n :])
        sig = g[: 3 * n]
        t = 1 - sig
        t *= sig
        dg[: 3 * n] *= t
        t = gg * gg
        xp.subtract(1, t, out=t)
        dg[3 * n :] *= t
        dct *= f
        dgates[:, s:e] = dg
        xp.matmul(w_hh_p.T, dg, out=dht)
    dx += dgates.T @ _ifog(xp, w_ih)
    grads = [_ifog(xp, dgates @ x), _ifog(xp, dgates @ h_prev)]
    if b_ih is not None:
        db = _ifog(xp, dgates.sum(1))
        grads += [db, db.copy()]
    if w_hr is not None:
        grads.append(dw_hr)
    dh_out[...] = dh.T
    dc_out[...] = dc.T
    return grads


def _gru_backward(xp, mode, x, w, steps, gy, dh, dc, ws, dx):
    w_ih, w_hh, b_ih, _, _ = w
    n = w_hh.shape[0] // 3
    h_prev, gates, hn_all = ws
    dgi = xp.empty_like(gates)
    dgh = xp.empty_like(gates)
    for s, e in steps:
        dht, g, dg, dh_gates = dh[: e - s], gates[s:e], dgi[s:e], dgh[s:e]
        dht += gy[s:e]
        r, z, new = g[:, :n], g[:, n : 2 * n], g[:, 2 * n :]
        one_minus_z = 1 - z
        t = new * new
        xp.subtract(1, t, out=t)
        t *= dht
        xp.multiply(t, one_minus_z, out=dg[:, 2 * n :])
        dz = dg[:, n : 2 * n]
        xp.subtract(h_prev[s:e], new, out=dz)
        dz *= dht
        dz *= z
        dz *= one_minus_z
        xp.multiply(dg[:, 2 * n :], r, out=dh_gates[:, 2 * n :])
        dr = dg[:, :n]
        xp.multiply(dg[:, 2 * n :], hn_all[s:e], out=dr)
        dr *= r
        dr *= 1 - r
        dh_gates[:, : 2 * n] = dg[:, : 2 * n]
        dht *= z
        dht += dh_gates @ w_hh
    dx += dgi @ w_ih
    grads = [dgi.T @ x, dgh.T @ h_prev]
    if b_ih is not None:
        grads += [dgi.sum(0), dgh.sum(0)]
    return grads


_FORWARD = {
    "RNN_TANH": _rnn_forward,
    "RNN_RELU": _rnn_forward,
    "LSTM": _lstm_forward,
    "GRU": _gru_forward,
}
_BACKWARD = {
    "RNN_TANH": _rnn_backward,
    "RNN_RELU": _rnn_backward,
    "LSTM": _lstm_backward,
    "GRU": _gru_backward,
}


# -- the two primitives ---------------------------------------------------------------------
def _layer_kernel(xp):
    def kernel(*flat):
        """``(x, h0, [c0], *weights, mode, batch_sizes, has_bias, num_dir, proj)`` ->
        ``(y, h_n, [c_n], workspace)``."""
        *arrays, mode, batch_sizes, has_bias, num_dir, proj = flat
        lstm = mode == "LSTM"
        x, h0, c0 = arrays[0], arrays[1], arrays[2] if lstm else None
        groups = _groups(arrays[2 + lstm :], has_bias, proj, num_dir)
        rows, out_size = x.shape[0], h0.shape[-1]
        hidden = groups[0][1].shape[0] // GATES[mode]
        widths = _ws_widths(mode, hidden, out_size)
        y = xp.empty((rows, num_dir * out_size), x.dtype)
        ws = xp.empty(num_dir * rows * sum(widths), x.dtype)
        hn = h0.copy()
        cn = c0.copy() if lstm else None
        per_dir = ws.shape[0] // num_dir
        with np.errstate(over="ignore"):
            for k, w in enumerate(groups):
                _FORWARD[mode](
                    xp,
                    mode,
                    x,
                    w,
                    _steps(batch_sizes, k == 1),
                    y[:, k * out_size : (k + 1) * out_size],
                    hn[k],
                    cn[k] if lstm else None,
                    _carve(ws[k * per_dir : (k + 1) * per_dir], rows, widths),
                )
        return (y, hn, cn, ws) if lstm else (y, hn, ws)

    return kernel


def _layer_backward_kernel(xp):
    def kernel(*flat):
        """``(gy, gh_n, [gc_n], x, h0, [c0], *weights, workspace, mode, batch_sizes,
        has_bias, num_dir, proj)`` -> ``(dx, dh0, [dc0], *dweights)``. The initial states
        are for the forward rule only (the workspace holds what BPTT needs)."""
        *arrays, mode, batch_sizes, has_bias, num_dir, proj = flat
        lstm = mode == "LSTM"
        gy, dh0 = arrays[0], arrays[1].copy()
        dc0 = arrays[2].copy() if lstm else None
        x = arrays[2 + lstm]
        *weights, ws = arrays[4 + 2 * lstm :]
        groups = _groups(weights, has_bias, proj, num_dir)
        rows, out_size = x.shape[0], dh0.shape[-1]
        hidden = groups[0][1].shape[0] // GATES[mode]
        widths = _ws_widths(mode, hidden, out_size)
        per_dir = ws.shape[0] // num_dir
        dx = xp.zeros_like(x)
        dweights = []
        for k, w in enumerate(groups):
            dweights += _BACKWARD[mode](
                xp,
                mode,
                x,
                w,
                _steps(batch_sizes, k == 0),
                gy[:, k * out_size : (k + 1) * out_size],
                dh0[k],
                dc0[k] if lstm else None,
                _carve(ws[k * per_dir : (k + 1) * per_dir], rows, widths),
                dx,
            )
        return (dx, dh0, dc0, *dweights) if lstm else (dx, dh0, *dweights)

    return kernel


layer_op = defop("rnn_layer", _layer_kernel)
layer_backward_op = defop("rnn_layer_backward", _layer_backward_kernel)


def _layer_grad(grads, out, *flat):
    *tensors, mode, batch_sizes, has_bias, num_dir, proj = flat
    state_grads = grads[:-1]
    inputs = (*state_grads, *tensors, out[-1])
    return call(layer_backward_op, inputs, mode, batch_sizes, has_bias, num_dir, proj)


def _no_double_backward(grads, out, *args):
    raise RuntimeError(
        "double backward through tocha's fused recurrent layers (RNN, LSTM, GRU and their "
        "cells) is not supported"
    )


# -- forward mode: the recurrence differentiated forward, in tocha ops ----------------------
def _times_t(a, ta, w, tw):
    """The tangent of ``a @ w.T`` (None when neither has a tangent)."""
    return plus(None if ta is None else ta @ w.T, None if tw is None else a @ tw.T)


def _sigmoid_t(z, tz):
    """``sigmoid(z)`` and its tangent."""
    s = z.sigmoid()
    return s, s * (1 - s) * tz


def _tanh_t(z, tz):
    """``tanh(z)`` and its tangent."""
    t = z.tanh()
    return t, (1 - t * t) * tz


def _rnn_step(mode, pre, t_pre, hp, thp, cp, tcp, w, tw):
    """One step of RNN_TANH or RNN_RELU: ``h' = act(pre)``."""
    if mode == "RNN_TANH":
        return (*_tanh_t(pre, t_pre), None, None)
    return pre.relu(), t_pre * (pre > 0), None, None


def _lstm_step(mode, pre, t_pre, hp, thp, cp, tcp, w, tw):
    """One LSTM step from the pre-activations (gates i, f, g, o): ``c' = f * c + i * g``,
    ``h' = o * tanh(c')`` (projected by w_hr when given)."""
    chunks, t_chunks = pre.chunk(4, 1), t_pre.chunk(4, 1)
    i, ti = _sigmoid_t(chunks[0], t_chunks[0])
    f, tf = _sigmoid_t(chunks[1], t_chunks[1])
    g, tg = _tanh_t(chunks[2], t_chunks[2])
    o, to = _sigmoid_t(chunks[3], t_chunks[3])
    c = f * cp + i * g
    tc = tf * cp + f * tcp + ti * g + i * tg
    tanh_c, t_tanh_c = _tanh_t(c, tc)
    m, tm = o * tanh_c, to * tanh_c + o * t_tanh_c
    if w[4] is None:
        return m, tm, c, tc
    return m @ w[4].T, _times_t(m, tm, w[4], tw[4]), c, tc


def _gru_step(mode, pre, t_pre, hp, thp, cp, tcp, w, tw):
    """One GRU step; `pre` holds the input side ``x @ w_ih.T + b_ih``, the hidden side
    ``h @ w_hh.T + b_hh`` is computed here (r scales its n block)."""
    gh = hp @ w[1].T
    if w[3] is not None:
        gh = gh + w[3]
    t_gh = plus(_times_t(hp, thp, w[1], tw[1]), tw[3])
    (xr, xz, xn), (txr, txz, txn) = pre.chunk(3, 1), t_pre.chunk(3, 1)
    (hr, hz, hn), (thr, thz, thn) = gh.chunk(3, 1), t_gh.chunk(3, 1)
    r, tr = _sigmoid_t(xr + hr, txr + thr)
    z, tz = _sigmoid_t(xz + hz, txz + thz)
    n, tn = _tanh_t(xn + r * hn, txn + tr * hn + r * thn)
    return n + z * (hp - n), tn + tz * (hp - n) + z * (thp - tn), None, None


_STEP = {"RNN_TANH": _rnn_step, "RNN_RELU": _rnn_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _direction_t(mode, x, tx, w, tw, steps, h, th, c, tc):
    """The output tangents of one direction (rows in time order) and its final states'
    tangents: the primal recurrence recomputed in tocha ops beside its tangent."""
    w_ih, w_hh, b_ih, b_hh, _ = w
    xw, t_xw = x @ w_ih.T, _times_t(x, tx, w_ih, tw[0])
    if b_ih is not None and mode == "GRU":  # b_hh joins the hidden side (scaled by r)
        xw, t_xw = xw + b_ih, plus(t_xw, tw[2])
    elif b_ih is not None:
        xw, t_xw = xw + b_ih + b_hh, plus(t_xw, tw[2], tw[3])
    t_xw = tocha.zeros_like(xw) if t_xw is None else t_xw.expand(xw.shape)
    rows = {}
    for s, e in steps:
        n = e - s
        hp, thp = h[:n], th[:n]
        cp, tcp = (c[:n], tc[:n]) if c is not None else (None, None)
        pre, t_pre = xw[s:e], t_xw[s:e]
        if mode != "GRU":
            pre = pre + hp @ w_hh.T
            t_pre = plus(t_pre, _times_t(hp, thp, w_hh, tw[1]))
        hn, thn, cn, tcn = _STEP[mode](mode, pre, t_pre, hp, thp, cp, tcp, w, tw)
        rows[s] = thn
        h, th = tocha.cat([hn, h[n:]]), tocha.cat([thn, th[n:]])
        if c is not None:
            c, tc = tocha.cat([cn, c[n:]]), tocha.cat([tcn, tc[n:]])
    return tocha.cat([rows[s] for s in sorted(rows)]), th, tc


def _layer_tangents(tangents, flat):
    """The tangents of a layer's outputs ``(y, h_n, [c_n])`` from its inputs' tangents."""
    *tensors, mode, batch_sizes, has_bias, num_dir, proj = flat
    lstm = mode == "LSTM"
    t = list(tangents[: len(tensors)])
    for k in range(1, 2 + lstm):  # the states' recurrences start from zero tangents
        if t[k] is None:
            t[k] = tocha.zeros_like(tensors[k])
    x, h0, c0 = tensors[0], tensors[1], tensors[2] if lstm else None
    groups = _groups(tensors[2 + lstm :], has_bias, proj, num_dir)
    t_groups = _groups(t[2 + lstm :], has_bias, proj, num_dir)
    outs, h_n, c_n = [], [], []
    for k, (w, tw) in enumerate(zip(groups, t_groups)):
        ty, th, tc = _direction_t(
            mode,
            x,
            t[0],
            w,
            tw,
            _steps(batch_sizes, k == 1),
            h0[k],
            t[1][k],
            c0[k] if lstm else None,
            t[2][k] if lstm else None,
        )
        outs.append(ty)
        h_n.append(th)
        c_n.append(tc)
    result = (tocha.cat(outs, 1), tocha.stack(h_n))
    return (*result, tocha.stack(c_n)) if lstm else result


def _layer_jvp(tangents, out, *flat):
    """The forward rule of a layer: the cell recurrence differentiated forward, step by
    step (the workspace gets no tangent: only the backward reads it)."""
    return (*_layer_tangents(tangents, flat), None)


def _layer_backward_jvp(tangents, out, *flat):
    """Forward mode through BPTT (forward-over-reverse, as Hessian-vector products run it).
    BPTT is linear in the output gradients: the op on their tangents. By the layer's inputs
    it is the gradient of ``<grads, layer tangent>`` (second derivatives are symmetric),
    the layer tangent (`_layer_tangents`) held in a direction fixed to the inputs' tangents
    and differentiated backward. The workspace, a function of those inputs, adds nothing.
    This tangent is not differentiable backward again (no more than the layer's double
    backward is)."""
    *arrays, mode, batch_sizes, has_bias, num_dir, proj = flat
    params = (mode, batch_sizes, has_bias, num_dir, proj)
    n_grads = 3 if mode == "LSTM" else 2
    grads, inputs, ws = arrays[:n_grads], arrays[n_grads:-1], arrays[-1]
    t_grads, t_inputs = tangents[:n_grads], tangents[n_grads : len(arrays) - 1]
    by_grads = by_inputs = ()
    if any(t is not None for t in t_grads):
        filled = [tocha.zeros_like(g) if t is None else t for g, t in zip(grads, t_grads)]
        by_grads = call(layer_backward_op, (*filled, *inputs, ws), *params)
    if any(t is not None for t in t_inputs):
        with tocha.enable_grad():
            leaves = [a.detach().requires_grad_() for a in inputs]
            direction = [None if t is None else t.detach() for t in t_inputs]
            layer_t = _layer_tangents(direction, (*leaves, *params))
            inner = sum(((g.detach() * t).sum() for g, t in zip(grads, layer_t)), 0)
            by_inputs = autograd_grad(inner, leaves, allow_unused=True)
    return tuple(
        plus(*(part[i] for part in (by_grads, by_inputs) if part)) for i in range(len(inputs))
    )


d("rnn_layer", "0+o-1", _layer_grad)
fwd("rnn_layer", _layer_jvp)
d("rnn_layer_backward", "", _no_double_backward)
fwd("rnn_layer_backward", _layer_backward_jvp)


# -- the functional forms -------------------------------------------------------------------
def rnn(
    mode: str,
    input: Tensor,
    batch_sizes: tuple,
    hx: tuple,
    weights: list,
    has_bias: bool,
    num_layers: int,
    dropout: float,
    training: bool,
    bidirectional: bool,
    proj: bool,
) -> tuple:
    """Run a stack of recurrent layers over packed rows (as PyTorch's ``_VF.lstm`` and alike).

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input: ``(rows, input_size)``, the packed time steps.
        batch_sizes: the batch size of each time step (non-increasing), as ints.
        hx: ``(h0,)`` or, for LSTM, ``(h0, c0)``; each ``(num_layers * num_dir, B, *)``.
        weights: the flat weights in PyTorch's order (``RNNBase._flat_weights``).
        dropout: the probability of dropout on the outputs of all layers but the last.

    Returns:
        ``(output, h_n)`` or, for LSTM, ``(output, h_n, c_n)``; output ``(rows, num_dir *
        hidden)``.
    """
    num_dir = 2 if bidirectional else 1
    per_layer = num_dir * (2 + 2 * has_bias + proj)
    x, finals = input, []
    for layer in range(num_layers):
        states = [t if num_layers == 1 else t[layer * num_dir : (layer + 1) * num_dir] for t in hx]
        w = weights[layer * per_layer : (layer + 1) * per_layer]
        x, *state, _ = call(layer_op, (x, *states, *w), mode, batch_sizes, has_bias, num_dir, proj)
        finals.append(state)
        if dropout and training and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    if num_layers == 1:
        return (x, *finals[0])
    return (x, *(tocha.cat(parts) for parts in zip(*finals)))


def _check_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor) -> None:
    """PyTorch's checks of a cell's input and states against its weights."""
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.shape[1]} expected {w_ih.shape[1]}"
        )
    for k, h in enumerate(hx):
        if input.shape[0] != h.shape[0]:
            raise RuntimeError(
                f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size {h.shape[0]}"
            )
        if h.shape[1] != w_hh.shape[1]:
            raise RuntimeError(
                f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, "
                f"expected {w_hh.shape[1]}"
            )
    if input.dtype != w_ih.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{TITLE[input.dtype]} and {TITLE[w_ih.dtype]}"
        )


def _cell(mode: str, input: Tensor, hx: tuple, w_ih, w_hh, b_ih, b_hh) -> tuple:
    """One step of a cell: the layer primitive on a sequence of length one."""
    _check_cell(input, hx, w_ih, w_hh)
    weights = (w_ih, w_hh) if b_ih is None else (w_ih, w_hh, b_ih, b_hh)
    states = tuple(h.unsqueeze(0) for h in hx)
    return call(
        layer_op, (input, *states, *weights), mode, (input.shape[0],), b_ih is not None, 1, False
    )


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``h' = tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``; input ``(B, I)``, hx
    ``(B, H)``."""
    return _cell("RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``h' = relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    return _cell("RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(
    input: Tensor,
    hx: tuple,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple:
    """One LSTM step: ``(h', c')`` from input ``(B, I)`` and ``hx = (h, c)``, each ``(B, H)``.

    ``i, f, g, o = split(input @ w_ih.T + b_ih + h @ w_hh.T + b_hh)`` (sigmoid, sigmoid, tanh,
    sigmoid); ``c' = f * c + i * g``; ``h' = o * tanh(c')``.
    """
    y, _, c, _ = _cell("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)
    return y, c.squeeze(0)


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step: ``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))``, ``h' = (1 - z) * n + z * h``."""
    return _cell("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
