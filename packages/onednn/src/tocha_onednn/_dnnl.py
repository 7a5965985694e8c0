"""ctypes bindings to oneDNN 3.x's C API (``libdnnl.so`` from the onednn-cpu-gomp wheel).

Only the calls tocha-onednn needs. Every call's status is checked (`check`); enum values are
those of oneDNN 3.x's ``dnnl_types.h`` and ``dnnl_common_types.h``. Memory descriptors are
opaque handles (`MemoryDesc`, destroyed with their Python object); memories wrap NumPy
buffers without copying them.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_int64, c_size_t, c_uint, c_void_p

import numpy as np

# dnnl_status_t
SUCCESS = 0
STATUS = {
    1: "out of memory",
    2: "invalid arguments",
    3: "unimplemented",
    4: "last implementation reached",
    5: "runtime error",
    6: "not required",
}
# dnnl_data_type_t
BF16, F32, S32, U8 = 2, 3, 4, 6
# dnnl_engine_kind_t, dnnl_stream_flags_t
ENGINE_CPU, STREAM_IN_ORDER = 1, 1
# dnnl_format_tag_t
FORMAT_ANY = 1
# dnnl_prop_kind_t
FORWARD_TRAINING, FORWARD_INFERENCE, BACKWARD = 64, 96, 128
# dnnl_alg_kind_t
CONVOLUTION_DIRECT = 0x1
SOFTMAX_ACCURATE, SOFTMAX_LOG = 0x30000, 0x30001
ELTWISE_RELU, ELTWISE_TANH, ELTWISE_LOGISTIC = 0x20, 0x21, 0x29
ELTWISE_GELU_TANH, ELTWISE_SWISH, ELTWISE_GELU_ERF = 0x2B, 0x2C, 0x31
POOLING_MAX, POOLING_AVG_INCLUDE_PADDING, POOLING_AVG_EXCLUDE_PADDING = 0x1FF, 0x2FF, 0x3FF
VANILLA_RNN, VANILLA_LSTM, LBR_GRU = 0x1FFF, 0x2FFF, 0x4FFF
ELTWISE_LINEAR, ELTWISE_CLIP = 0x26, 0x2E
BINARY_ADD, BINARY_MUL, BINARY_DIV = 0x1FFF0, 0x1FFF1, 0x1FFF4
# dnnl_rnn_direction_t, dnnl_rnn_flags_t
LEFT2RIGHT, BIDIRECTIONAL_CONCAT = 1, 3
RNN_DIFF_WEIGHTS_OVERWRITE = 0x1
# dnnl_normalization_flags_t (3.x values)
USE_SCALE, USE_SHIFT = 0x2, 0x4
# dnnl_scratchpad_mode_t
SCRATCHPAD_USER = 1
# dnnl_query_t
QUERY_IMPL_INFO_STR, QUERY_EXEC_ARG_MD = 8, 255
# DNNL_ARG_*
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 17, 33, 41
ARG_SRC_1 = 2
ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT = 49, 50, 51, 52
ARG_SRC_ITER, ARG_SRC_ITER_C, ARG_DST_ITER, ARG_DST_ITER_C = 2, 3, 18, 19
ARG_WEIGHTS_ITER, ARG_WORKSPACE = 34, 64
ARG_SCRATCHPAD = 80
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS = 129, 145, 161
ARG_DIFF_SRC_ITER, ARG_DIFF_SRC_ITER_C = 130, 131
ARG_DIFF_DST_ITER, ARG_DIFF_DST_ITER_C = 146, 147
ARG_DIFF_WEIGHTS_ITER, ARG_DIFF_BIAS = 162, 169
ARG_DIFF_SCALE, ARG_DIFF_SHIFT = 255, 256
ARG_ATTR_MULTIPLE_POST_OP_BASE = 32768

MAX_NDIMS = 12
Dims = c_int64 * MAX_NDIMS


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``: an argument index and a memory."""

    _fields_ = [("arg", c_int), ("memory", c_void_p)]


class DnnlError(RuntimeError):
    """A oneDNN call failed."""


def _library_path() -> str:
    """Where the onednn-cpu-gomp wheel put ``libdnnl.so.3``."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("onednn-cpu-gomp")
    except PackageNotFoundError:
        return "libdnnl.so.3"
    for file in dist.files or ():
        if file.name.startswith("libdnnl.so"):
            path = str(dist.locate_file(file))
            if os.path.exists(path):
                return path
    return "libdnnl.so.3"


def _bind(lib):
    """Declare the argument and result types of the calls used."""
    p = c_void_p
    pp = POINTER(c_void_p)
    signatures = {
        "dnnl_engine_create": [pp, c_int, c_size_t],
        "dnnl_stream_create": [pp, p, c_uint],
        "dnnl_stream_wait": [p],
        "dnnl_memory_desc_create_with_strides": [pp, c_int, Dims, c_int, Dims],
        "dnnl_memory_desc_create_with_tag": [pp, c_int, Dims, c_int, c_int],
        "dnnl_memory_desc_destroy": [p],
        "dnnl_memory_desc_clone": [pp, p],
        "dnnl_memory_desc_equal": [p, p],
        "dnnl_memory_desc_get_size": [p],
        "dnnl_memory_create": [pp, p, p, p],
        "dnnl_memory_set_data_handle": [p, p],
        "dnnl_memory_destroy": [p],
        "dnnl_primitive_attr_create": [pp],
        "dnnl_primitive_attr_set_scratchpad_mode": [p, c_int],
        "dnnl_primitive_attr_set_post_ops": [p, p],
        "dnnl_primitive_attr_destroy": [p],
        "dnnl_post_ops_create": [pp],
        "dnnl_post_ops_append_eltwise": [p, c_int, c_float, c_float],
        "dnnl_post_ops_append_binary": [p, c_int, p],
        "dnnl_post_ops_destroy": [p],
        "dnnl_matmul_primitive_desc_create": [pp, p, p, p, p, p, p],
        "dnnl_primitive_desc_query": [p, c_int, c_int, p],
        "dnnl_primitive_desc_query_md": [p, c_int, c_int],
        "dnnl_primitive_desc_destroy": [p],
        "dnnl_primitive_create": [pp, p],
        "dnnl_primitive_execute": [p, p, c_int, POINTER(ExecArg)],
        "dnnl_primitive_destroy": [p],
        "dnnl_reorder_primitive_desc_create": [pp, p, p, p, p, p],
        "dnnl_convolution_forward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, p, p, Dims, Dims, Dims, Dims, p,
        ],
        "dnnl_convolution_backward_data_primitive_desc_create": [
            pp, p, c_int, p, p, p, Dims, Dims, Dims, Dims, p, p,
        ],
        "dnnl_convolution_backward_weights_primitive_desc_create": [
            pp, p, c_int, p, p, p, p, Dims, Dims, Dims, Dims, p, p,
        ],
        "dnnl_eltwise_forward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, c_float, c_float, p,
        ],
        "dnnl_eltwise_backward_primitive_desc_create": [
            pp, p, c_int, p, p, p, c_float, c_float, p, p,
        ],
        "dnnl_binary_primitive_desc_create": [pp, p, c_int, p, p, p, p],
        "dnnl_softmax_forward_primitive_desc_create": [pp, p, c_int, c_int, p, p, c_int, p],
        "dnnl_softmax_backward_primitive_desc_create": [pp, p, c_int, p, p, p, c_int, p, p],
        "dnnl_layer_normalization_forward_primitive_desc_create": [
            pp, p, c_int, p, p, p, c_float, c_uint, p,
        ],
        "dnnl_layer_normalization_backward_primitive_desc_create": [
            pp, p, c_int, p, p, p, p, c_float, c_uint, p, p,
        ],
        "dnnl_batch_normalization_forward_primitive_desc_create": [
            pp, p, c_int, p, p, c_float, c_uint, p,
        ],
        "dnnl_batch_normalization_backward_primitive_desc_create": [
            pp, p, c_int, p, p, p, c_float, c_uint, p, p,
        ],
        "dnnl_pooling_forward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, Dims, Dims, Dims, Dims, Dims, p,
        ],
        "dnnl_pooling_backward_primitive_desc_create": [
            pp, p, c_int, p, p, Dims, Dims, Dims, Dims, Dims, p, p,
        ],
        "dnnl_vanilla_rnn_forward_primitive_desc_create": [
            pp, p, c_int, c_int, c_int, p, p, p, p, p, p, p, c_uint, c_float, c_float, p,
        ],
        "dnnl_vanilla_rnn_backward_primitive_desc_create": [
            pp, p, c_int, c_int, c_int, p, p, p, p, p, p, p, p, p, p, p, p, p, p,
            c_uint, c_float, c_float, p, p,
        ],
        "dnnl_lstm_forward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, p, p, p, p, p, p, p, p, p, c_uint, p,
        ],
        "dnnl_lstm_backward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, p, p, p, p, p, p, p, p, p,
            p, p, p, p, p, p, p, p, p, p, p, c_uint, p, p,
        ],
        "dnnl_lbr_gru_forward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, p, p, p, p, p, c_uint, p,
        ],
        "dnnl_lbr_gru_backward_primitive_desc_create": [
            pp, p, c_int, c_int, p, p, p, p, p, p, p, p, p, p, p, p, p, p, c_uint, p, p,
        ],
    }  # fmt: skip
    for name, argtypes in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = c_int
    lib.dnnl_memory_desc_equal.restype = c_int
    lib.dnnl_memory_desc_get_size.restype = c_size_t
    lib.dnnl_primitive_desc_query_md.restype = c_void_p


class Library:
    """libdnnl loaded, with one CPU engine, an in-order stream per thread, and the attributes
    every primitive is created with: a scratchpad the caller provides, so that primitives
    hold no memory shared with others and may run in any thread."""

    def __init__(self, path: str | None = None):
        self.lib = ctypes.CDLL(path or _library_path())
        _bind(self.lib)
        self.engine = c_void_p()
        self.check("dnnl_engine_create", byref(self.engine), ENGINE_CPU, 0)
        self.attr = c_void_p()
        self.check("dnnl_primitive_attr_create", byref(self.attr))
        self.check("dnnl_primitive_attr_set_scratchpad_mode", self.attr, SCRATCHPAD_USER)
        self.omp = _openmp()
        self.local = threading.local()

    @property
    def stream(self) -> c_void_p:
        """This thread's stream (oneDNN's streams are not shared between threads)."""
        stream = getattr(self.local, "stream", None)
        if stream is None:
            stream = self.local.stream = c_void_p()
            self.check("dnnl_stream_create", byref(stream), self.engine, STREAM_IN_ORDER)
        return stream

    def check(self, name: str, *args) -> None:
        """Call ``name``; DnnlError naming the call and its status unless it succeeded."""
        status = getattr(self.lib, name)(*args)
        if status != SUCCESS:
            raise DnnlError(f"oneDNN: {name} failed: {STATUS.get(status, status)}")

    def set_threads(self, n: int) -> None:
        """Let this thread's OpenMP regions (oneDNN's parallel loops) use `n` threads."""
        if getattr(self.local, "threads", None) != n:
            if self.omp is not None:
                self.omp.omp_set_num_threads(n)
            self.local.threads = n


def _openmp():
    """GNU OpenMP (loaded by libdnnl), to set the thread count; None where it is absent."""
    try:
        omp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
    omp.omp_set_num_threads.argtypes = [c_int]
    omp.omp_set_num_threads.restype = None
    return omp


def dims(values) -> ctypes.Array[c_int64]:
    out = Dims()
    for i, v in enumerate(values):
        out[i] = v
    return out


class MemoryDesc:
    """An owned ``dnnl_memory_desc_t``."""

    __slots__ = ("lib", "handle")

    def __init__(self, lib: Library, handle: c_void_p):
        self.lib = lib
        self.handle = handle

    @classmethod
    def strided(cls, lib: Library, shape, strides, dtype: int = F32) -> MemoryDesc:
        """A plain layout: `shape` with `strides` in elements."""
        handle = c_void_p()
        lib.check(
            "dnnl_memory_desc_create_with_strides",
            byref(handle),
            len(shape),
            dims(shape),
            dtype,
            dims(strides),
        )
        return cls(lib, handle)

    @classmethod
    def any(cls, lib: Library, shape, dtype: int = F32) -> MemoryDesc:
        """A layout the primitive chooses."""
        handle = c_void_p()
        lib.check(
            "dnnl_memory_desc_create_with_tag",
            byref(handle),
            len(shape),
            dims(shape),
            dtype,
            FORMAT_ANY,
        )
        return cls(lib, handle)

    @classmethod
    def clone(cls, lib: Library, md) -> MemoryDesc:
        """An owned copy of a descriptor a primitive descriptor holds."""
        handle = c_void_p()
        lib.check("dnnl_memory_desc_clone", byref(handle), md)
        return cls(lib, handle)

    def __del__(self):
        if self.handle:
            self.lib.lib.dnnl_memory_desc_destroy(self.handle)
            self.handle = None


def shape_desc(lib: Library, shape, dtype: int = F32) -> MemoryDesc:
    """A C-contiguous layout of `shape` (float32 unless `dtype` says otherwise)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return MemoryDesc.strided(lib, shape, strides[::-1], dtype)


class Primitive:
    """A created primitive with the memories it runs on (their data handles set per call).

    `args` are the DNNL_ARG_* indices, in the order `run` takes the arrays' addresses. The
    primitive's scratchpad is its own, sized as the primitive asks.
    """

    __slots__ = ("lib", "pd", "prim", "memories", "exec_args", "nargs", "impl", "owned")

    def __init__(self, lib: Library, pd: c_void_p, args):
        self.lib = lib
        self.pd = pd
        self.prim = c_void_p()
        lib.check("dnnl_primitive_create", byref(self.prim), pd)
        self.memories = []
        owned = (ARG_SCRATCHPAD,)
        arr = (ExecArg * (len(args) + len(owned)))()
        for i, arg in enumerate(args):
            md = lib.lib.dnnl_primitive_desc_query_md(pd, QUERY_EXEC_ARG_MD, arg)
            mem = c_void_p()
            lib.check("dnnl_memory_create", byref(mem), md, lib.engine, None)
            self.memories.append(mem)
            arr[i].arg, arr[i].memory = arg, mem
        self.owned = []
        for j, arg in enumerate(owned, len(args)):
            md = lib.lib.dnnl_primitive_desc_query_md(pd, QUERY_EXEC_ARG_MD, arg)
            size = lib.lib.dnnl_memory_desc_get_size(md)
            buffer = np.empty(max(size, 1), np.uint8)
            mem = c_void_p()
            lib.check(
                "dnnl_memory_create", byref(mem), md, lib.engine, c_void_p(buffer.ctypes.data)
            )
            self.owned.append((mem, buffer))
            arr[j].arg, arr[j].memory = arg, mem
        self.exec_args = arr
        self.nargs = len(arr)
        info = c_char_p()
        lib.check("dnnl_primitive_desc_query", pd, QUERY_IMPL_INFO_STR, 0, byref(info))
        self.impl = info.value.decode() if info.value else ""

    def run(self, *addresses: int) -> None:
        """Execute on the arrays at these addresses (one per argument) and wait."""
        lib = self.lib
        for mem, address in zip(self.memories, addresses):
            lib.check("dnnl_memory_set_data_handle", mem, address)
        stream = lib.stream
        lib.check("dnnl_primitive_execute", self.prim, stream, self.nargs, self.exec_args)
        lib.check("dnnl_stream_wait", stream)

    def __del__(self):
        lib = self.lib.lib
        for mem in self.memories:
            lib.dnnl_memory_destroy(mem)
        for mem, _ in self.owned:
            lib.dnnl_memory_destroy(mem)
        if self.prim:
            lib.dnnl_primitive_destroy(self.prim)
        if self.pd:
            lib.dnnl_primitive_desc_destroy(self.pd)


def create_pd(lib: Library, name: str, *args, attr: c_void_p | None = None) -> c_void_p:
    """A primitive descriptor from ``name`` (a ``*_primitive_desc_create`` call) with the
    library's attributes or `attr`; DnnlError when oneDNN has no implementation for these
    arguments."""
    pd = c_void_p()
    lib.check(name, byref(pd), lib.engine, *args, attr or lib.attr)
    return pd


def create_backward_pd(lib: Library, name: str, *args, hint: c_void_p) -> c_void_p:
    """`create_pd` of a backward primitive, whose last argument is its forward's descriptor
    `hint`; the hint is destroyed afterwards, whether or not oneDNN created the primitive."""
    try:
        return create_pd(lib, name, *args, hint)
    finally:
        lib.lib.dnnl_primitive_desc_destroy(hint)


def chain_attr(lib: Library, steps) -> c_void_p:
    """Attributes for a primitive followed by post-ops, one per step in order: ``(BINARY_*,
    memory descriptor of its second operand)`` for a binary post-op (which takes that
    operand as the argument `post_op_arg` ``(i)``, `i` the step's index) or ``(ELTWISE_*,
    alpha, beta)`` for an eltwise one; with a user scratchpad as every primitive's. The
    caller destroys them."""
    attr, ops = c_void_p(), c_void_p()
    lib.check("dnnl_primitive_attr_create", byref(attr))
    try:
        lib.check("dnnl_primitive_attr_set_scratchpad_mode", attr, SCRATCHPAD_USER)
        lib.check("dnnl_post_ops_create", byref(ops))
        try:
            for alg, *operands in steps:
                if alg >= BINARY_ADD:
                    lib.check("dnnl_post_ops_append_binary", ops, alg, operands[0].handle)
                else:
                    lib.check("dnnl_post_ops_append_eltwise", ops, alg, *operands)
            lib.check("dnnl_primitive_attr_set_post_ops", attr, ops)
        finally:
            lib.lib.dnnl_post_ops_destroy(ops)
    except DnnlError:
        lib.lib.dnnl_primitive_attr_destroy(attr)
        raise
    return attr


def post_op_arg(index: int) -> int:
    """The execution argument of binary post-op `index`'s second operand."""
    return ARG_ATTR_MULTIPLE_POST_OP_BASE * (index + 1) | ARG_SRC_1
