"""Emitters of layers: linear maps, convolutions, pooling, normalization, embedding, softmax
and dropout."""

from __future__ import annotations

from typing import Any

import numpy as np

import tocha
import tocha.nn.functional as F

from .._builder import Builder, meta_dtype, meta_shape, np_dtype, rank, static_dim


def _tuple(value: Any, n: int) -> list[int]:
    """A size argument (an int or a sequence) as `n` ints."""
    if isinstance(value, (tuple, list)):
        return [int(v) for v in value] if len(value) == n else [int(value[0])] * n
    return [int(value)] * n


def _linear(b: Builder, node, input, weight, bias=None):
    w = b.value(weight)
    if rank(weight) == 2:
        w = b.op("Transpose", [w], perm=[1, 0])
    y = b.op("MatMul", [b.value(input), w])
    return y if bias is None else b.op("Add", [y, b.value(bias)])


def _matmul(b: Builder, node, input, other, *, out=None):
    dtype = meta_dtype(node)
    return b.op("MatMul", [b.operand(input, dtype), b.operand(other, dtype)])


def _addmm(b: Builder, node, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    dtype = meta_dtype(node)
    return b.op(
        "Gemm",
        [b.value(mat1), b.value(mat2), b.operand(input, dtype)],
        alpha=float(alpha),
        beta=float(beta),
    )


def _conv(n: int):
    def emit(b: Builder, node, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        kernel = list(meta_shape(weight)[2:])
        dilations = _tuple(dilation, n)
        if padding == "valid":
            pads = [0] * (2 * n)
        elif padding == "same":
            total = [d * (k - 1) for d, k in zip(dilations, kernel)]
            pads = [t // 2 for t in total] + [t - t // 2 for t in total]
        else:
            pads = _tuple(padding, n) * 2
        unbatched = rank(input) == n + 1
        x = b.value(input)
        if unbatched:
            x = b.op("Unsqueeze", [x, b.ints([0])])
        y = b.op(
            "Conv",
            [x, b.value(weight), None if bias is None else b.value(bias)],
            strides=_tuple(stride, n),
            pads=pads,
            dilations=dilations,
            group=int(groups),
        )
        return b.op("Squeeze", [y, b.ints([0])]) if unbatched else y

    return emit


def _channels(b: Builder, node, tensor, count: int, fill: float, dtype) -> str:
    """A per-channel parameter, or `fill` repeated when it is None."""
    if tensor is None:
        return b.const(np.full(count, fill, dtype=np_dtype(dtype)))
    return b.value(tensor)


def _batch_norm(
    b: Builder,
    node,
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    dtype = meta_dtype(input)
    channels = static_dim(input, 1)
    x = b.value(input)
    if training or running_mean is None:
        axes = [d for d in range(rank(input)) if d != 1]
        mean = b.reduce("ReduceMean", x, axes)
        centred = b.op("Sub", [x, mean])
        var = b.reduce("ReduceMean", b.op("Mul", [centred, centred]), axes)
        std = b.op("Sqrt", [b.op("Add", [var, b.scalar(eps, dtype)])])
        y = b.op("Div", [centred, std])
        shape = b.ints([channels] + [1] * (rank(input) - 2))
        if weight is not None:
            y = b.op("Mul", [y, b.op("Reshape", [b.value(weight), shape])])
        if bias is not None:
            y = b.op("Add", [y, b.op("Reshape", [b.value(bias), shape])])
        return y
    scale = _channels(b, node, weight, channels, 1.0, dtype)
    shift = _channels(b, node, bias, channels, 0.0, dtype)
    return b.op(
        "BatchNormalization",
        [x, scale, shift, b.value(running_mean), b.value(running_var)],
        epsilon=float(eps),
        momentum=float(1 - momentum),
    )


def layer_norm_parts(b: Builder, x: str, nd: int, eps: float, dtype) -> tuple[str, str, str]:
    """Layer norm over the last `nd` dims of `x` without LayerNormalization (opset 17):
    the normalised value, the mean and the reciprocal standard deviation."""
    axes = list(range(-nd, 0))
    mean = b.reduce("ReduceMean", x, axes)
    centred = b.op("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.op("Mul", [centred, centred]), axes)
    rstd = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.scalar(eps, dtype)])])])
    return b.op("Mul", [centred, rstd]), mean, rstd


def _layer_norm(b: Builder, node, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, (tuple, list, tocha.Size)):
        shape = [int(s) for s in normalized_shape]
    else:
        shape = [int(normalized_shape)]
    dtype = meta_dtype(input)
    if b.target < 17:  # before LayerNormalization
        y, _, _ = layer_norm_parts(b, b.value(input), len(shape), eps, dtype)
        if weight is not None:
            y = b.op("Mul", [y, b.value(weight)])
        return y if bias is None else b.op("Add", [y, b.value(bias)])
    scale = b.const(np.ones(shape, dtype=np_dtype(dtype))) if weight is None else b.value(weight)
    return b.op(
        "LayerNormalization",
        [b.value(input), scale, None if bias is None else b.value(bias)],
        axis=-len(shape),
        epsilon=float(eps),
    )


def _pool_input(b: Builder, input, n: int) -> tuple[str, bool]:
    x = b.value(input)
    unbatched = rank(input) == n + 1
    return (b.op("Unsqueeze", [x, b.ints([0])]) if unbatched else x), unbatched


def _pool_output(b: Builder, y: str, unbatched: bool) -> str:
    return b.op("Squeeze", [y, b.ints([0])]) if unbatched else y


def _max_pool(n: int):
    def emit(
        b: Builder,
        node,
        input,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        if return_indices:
            raise NotImplementedError("max_pool with return_indices=True")
        kernel = _tuple(kernel_size, n)
        strides = kernel if stride is None or stride == [] or stride == () else _tuple(stride, n)
        x, unbatched = _pool_input(b, input, n)
        y = b.op(
            "MaxPool",
            [x],
            kernel_shape=kernel,
            strides=strides,
            pads=_tuple(padding, n) * 2,
            dilations=_tuple(dilation, n),
            ceil_mode=int(ceil_mode),
        )
        return _pool_output(b, y, unbatched)

    return emit


def _avg_pool(n: int):
    def emit(
        b: Builder,
        node,
        input,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        if divisor_override is not None:
            raise NotImplementedError("avg_pool with divisor_override")
        kernel = _tuple(kernel_size, n)
        strides = kernel if stride is None or stride == [] or stride == () else _tuple(stride, n)
        x, unbatched = _pool_input(b, input, n)
        y = b.op(
            "AveragePool",
            [x],
            kernel_shape=kernel,
            strides=strides,
            pads=_tuple(padding, n) * 2,
            ceil_mode=int(ceil_mode),
            count_include_pad=int(count_include_pad),
        )
        return _pool_output(b, y, unbatched)

    return emit


def _adaptive_pool(n: int, kind: str):
    """Adaptive pooling (``kind`` "Average" or "Max"), one spatial dim at a time (a mean or
    max over a rectangle is one over its rows of one over its columns): PyTorch's bins
    ``[floor(i * size / out), ceil((i + 1) * size / out))``."""
    reduce = "ReduceMean" if kind == "Average" else "ReduceMax"

    def emit(b: Builder, node, input, output_size, return_indices=False):
        if return_indices:
            raise NotImplementedError("adaptive_max_pool with return_indices=True")
        x, unbatched = _pool_input(b, input, n)
        sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * n
        spatial = meta_shape(input)[-n:]
        wanted = [s if o is None else int(o) for o, s in zip(sizes, spatial)]
        if all(o == 1 for o in wanted):
            return _pool_output(b, b.op(f"Global{kind}Pool", [x]), unbatched)
        for k, (size, out) in enumerate(zip(spatial, wanted)):
            if size == out:
                continue
            axis = 2 + k
            if size % out == 0:
                kernel = [1] * n
                kernel[k] = size // out
                x = b.op(f"{kind}Pool", [x], kernel_shape=kernel, strides=kernel)
                continue
            cells = []
            for i in range(out):
                start, stop = (i * size) // out, -(-((i + 1) * size) // out)
                piece = b.op("Slice", [x, b.ints([start]), b.ints([stop]), b.ints([axis])])
                cells.append(b.reduce(reduce, piece, [axis]))
            x = b.op("Concat", cells, axis=axis)
        return _pool_output(b, x, unbatched)

    return emit


def _conv_transpose(n: int):
    def emit(
        b: Builder,
        node,
        input,
        weight,
        bias=None,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        dilation=1,
    ):
        unbatched = rank(input) == n + 1
        x = b.value(input)
        if unbatched:
            x = b.op("Unsqueeze", [x, b.ints([0])])
        y = b.op(
            "ConvTranspose",
            [x, b.value(weight), None if bias is None else b.value(bias)],
            strides=_tuple(stride, n),
            pads=_tuple(padding, n) * 2,
            output_padding=_tuple(output_padding, n),
            dilations=_tuple(dilation, n),
            group=int(groups),
        )
        return b.op("Squeeze", [y, b.ints([0])]) if unbatched else y

    return emit


def _embedding(
    b: Builder,
    node,
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    if max_norm is not None:
        raise NotImplementedError("embedding with max_norm (it renormalizes the weight)")
    return b.op("Gather", [b.value(weight), b.operand(input, tocha.int64)], axis=0)


def _softmax(op_type: str):
    def emit(b: Builder, node, input, dim=None, _stacklevel=3, dtype=None):
        if dim is None:
            dim = 0 if rank(input) in (0, 1, 3) else 1
        x = b.operand(input, meta_dtype(node))
        return b.op(op_type, [x], axis=int(dim))

    return emit


def _softmin(b: Builder, node, input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if rank(input) in (0, 1, 3) else 1
    x = b.operand(input, meta_dtype(node))
    return b.op("Softmax", [b.op("Neg", [x])], axis=int(dim))


def _dropout(b: Builder, node, input, p=0.5, training=True, inplace=False):
    x = b.value(input)
    if not training or p == 0:
        return x
    dtype = meta_dtype(input)
    return b.op("Dropout", [x, b.scalar(p, dtype), b.const(np.array(True))])


def _normalize(b: Builder, node, input, p=2.0, dim=1, eps=1e-12, out=None):
    x = b.value(input)
    dtype = meta_dtype(input)
    if p == 2:
        norm = b.reduce("ReduceL2", x, [dim])
    elif p == 1:
        norm = b.reduce("ReduceL1", x, [dim])
    else:
        raise NotImplementedError(f"normalize with p={p}")
    return b.op("Div", [x, b.op("Max", [norm, b.scalar(eps, dtype)])])


def _table() -> dict:
    table: dict = {
        F.linear: _linear,
        F.conv1d: _conv(1),
        F.conv2d: _conv(2),
        F.conv3d: _conv(3),
        F.batch_norm: _batch_norm,
        F.layer_norm: _layer_norm,
        F.max_pool1d: _max_pool(1),
        F.max_pool2d: _max_pool(2),
        F.max_pool3d: _max_pool(3),
        F.avg_pool1d: _avg_pool(1),
        F.avg_pool2d: _avg_pool(2),
        F.avg_pool3d: _avg_pool(3),
        F.adaptive_avg_pool1d: _adaptive_pool(1, "Average"),
        F.adaptive_avg_pool2d: _adaptive_pool(2, "Average"),
        F.adaptive_avg_pool3d: _adaptive_pool(3, "Average"),
        F.adaptive_max_pool1d: _adaptive_pool(1, "Max"),
        F.adaptive_max_pool2d: _adaptive_pool(2, "Max"),
        F.adaptive_max_pool3d: _adaptive_pool(3, "Max"),
        F.conv_transpose1d: _conv_transpose(1),
        F.conv_transpose2d: _conv_transpose(2),
        F.conv_transpose3d: _conv_transpose(3),
        F.embedding: _embedding,
        F.softmax: _softmax("Softmax"),
        F.log_softmax: _softmax("LogSoftmax"),
        F.softmin: _softmin,
        F.dropout: _dropout,
        F.dropout1d: _dropout,
        F.dropout2d: _dropout,
        F.alpha_dropout: _dropout,
        F.normalize: _normalize,
    }
    for owner in (tocha, tocha.Tensor):
        for name, emit in (
            ("matmul", _matmul),
            ("mm", _matmul),
            ("bmm", _matmul),
            ("addmm", _addmm),
            ("softmax", _softmax("Softmax")),
            ("log_softmax", _softmax("LogSoftmax")),
            ("dropout", _dropout),
        ):
            fn = getattr(owner, name, None)
            if fn is not None:
                table[fn] = emit
    return table


FUNCTIONS = _table()
