"""A `FusedSpec` compiled to machine code through numba (LLVM): one loop nest per kernel.

`compile_numba(spec)` returns a callable that picks a *layout* for the arrays it is given and
runs the numba kernel generated for that layout:

- ``rows``: the iteration seen as ``(outer, inner)`` rows of C-contiguous memory. Each input is
  read as ``c`` (C-contiguous, the whole iteration shape, index ``k``), ``s`` (one element,
  read once), ``i`` (varies along the inner part only, index ``j``: a bias over rows) or ``o``
  (along the outer part only, index ``i``). When every input is ``c`` or ``s`` the rows are
  fixed-size chunks of the flat iteration. The inner loop is a plain loop over contiguous
  memory that LLVM vectorises. A reduction over the trailing dims (or over all dims) is done
  in the same pass: each row is summed in blocks of 128 with eight accumulators, the blocks
  pairwise (as NumPy's ``sum``), then the rows' partial results are combined with NumPy.
- ``nd``: anything else (transposed, negative or zero strides...): nested loops over the
  iteration shape, indexing each input through its broadcast strides. A reduction there, or
  over dims that are not trailing, reduces the fused elementwise result with NumPy.

The source of each kernel is written once to a file under the compile cache directory
(``TOCHA_COMPILE_CACHE``, default ``~/.cache/tocha/compile``), named by a hash of that source
(which holds the spec's steps and the layout) and numba's version, and compiled with
``cache=True``: a later process loads the machine code instead of compiling. Loops run under
``numba.prange`` when the iteration is large and numba has more than one thread. No fast-math
flag is set: NaN, infinities and signed zeros keep NumPy's semantics, and float32 steps
compute in float32 (every constant and every step result is typed).

float32 ``tanh``, ``erf`` and ``exp`` are approximations written here in plain arithmetic
(rational functions; a polynomial scaled by exponent bits), a few ulp from the correctly
rounded values: libm's calls keep LLVM from vectorising a loop and cost a fused chain more
than fusion saves (on the 10M-element chain ``relu(tanh(x*w+b)*0.5+x)``, with libm's tanhf
the kernel takes 1.6-3.8x NumPy's unfused time, with the approximation 0.15-0.45x).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ._codegen_numpy import compile_numpy, iteration_shape, reduce_array, reduced_dims
from ._spec import FusedSpec, Step

__all__ = ["available", "cache_dir", "compile_numba", "kernel_source"]

_CODEGEN_VERSION = "4"
PARALLEL_MIN = 1 << 16
"""Iterations of at least this many elements run under ``prange`` (when numba has threads)."""
_CHUNK = 1 << 14
_BLOCK = 128
_DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64".split()
)
_BOOL_RESULT = frozenset("eq ne lt le gt ge logical_not logical_and logical_or".split())
# Ops that take integers (converted to compute) in float64, as NumPy's float ufuncs do.
_FLOAT_ONLY = frozenset(
    """div atan2 reciprocal rsqrt exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh
    sigmoid erf silu gelu gelu_tanh""".split()
)
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
_MATH = frozenset("exp expm1 log log2 log10 log1p sqrt sin cos tan erf".split())
_SQRT_HALF = 0.7071067811865476
_TANH_K = 0.7978845608028654
_TANH_C = 0.044715

_LOCK = threading.Lock()
_MODULES: dict[str, object] = {}


@functools.cache
def available() -> bool:
    """Whether numba can be imported (it is an optional dependency of tocha-compiler)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def cache_dir() -> Path:
    """Where generated kernels and numba's cached machine code live: ``TOCHA_COMPILE_CACHE``,
    else ``~/.cache/tocha/compile``."""
    root = os.environ.get("TOCHA_COMPILE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "tocha" / "compile"


class _Source:
    """Generated source text, with its module-level constants typed in their dtypes."""

    def __init__(self) -> None:
        self.constants: dict[str, str] = {}
        self.helpers: set[str] = set()

    def const(self, value, dtype: str) -> str:
        """The name of a module-level constant holding `value` as a `dtype` scalar."""
        if dtype == "bool":
            literal = f"np.bool_({bool(value)})"
        elif np.dtype(dtype).kind == "f":
            literal = f"np.{dtype}(float.fromhex({float(value).hex()!r}))"
        else:
            literal = f"np.{dtype}({int(value)})"
        if literal not in self.constants:
            self.constants[literal] = f"K{len(self.constants)}"
        return self.constants[literal]

    def helper(self, name: str) -> str:
        """`name`, a function of `_HELPERS`, which the module will then define."""
        self.helpers.update((name, *_HELPER_NEEDS.get(name, ())))
        return name


def _convert(src: _Source, expr: str, source: str, target: str) -> str:
    if source == target:
        return expr
    if target == "bool":
        return f"({expr} != {src.const(0, source)})"
    return f"np.{target}({expr})"


def _work_dtype(step: Step) -> str:
    """The dtype a step computes in: its compute dtype, float64 for the float-only ops of
    integers and booleans."""
    if step.op in _FLOAT_ONLY and np.dtype(step.compute).kind != "f":
        return "float64"
    return step.compute


def _op_expr(src: _Source, step: Step, a: list[str], fast32: bool) -> str:
    """The expression of one step over argument expressions already in its work dtype."""
    op, t = step.op, _work_dtype(step)
    kind = np.dtype(t).kind
    one, zero = src.const(1, t), src.const(0, t)
    if op in _ARITH:
        return f"({a[0]} {_ARITH[op]} {a[1]})"
    if op in _COMPARE:
        return f"({a[0]} {_COMPARE[op]} {a[1]})"
    if op == "maximum":
        return f"({a[0]} if ({a[0]} >= {a[1]} or {a[0]} != {a[0]}) else {a[1]})"
    if op == "minimum":
        return f"({a[0]} if ({a[0]} <= {a[1]} or {a[0]} != {a[0]}) else {a[1]})"
    if op == "atan2":
        return f"math.atan2({a[0]}, {a[1]})"
    if op == "neg":
        return f"(-{a[0]})"
    if op == "abs":
        return f"abs({a[0]})"
    if op == "square":
        return f"({a[0]} * {a[0]})"
    if op == "reciprocal":
        return f"({one} / {a[0]})"
    if op == "rsqrt":
        return f"({one} / math.sqrt({a[0]}))"
    fast = fast32 and t == "float32"
    if op == "exp" and fast:
        return f"{src.helper('exp32')}({a[0]})"
    if op == "erf" and fast:
        return f"{src.helper('erf32')}({a[0]})"
    if op in _MATH:
        return f"math.{op}({a[0]})"
    if op == "exp2":
        return f"np.exp2({a[0]})"
    if op == "tanh":
        if fast32 and t == "float32":
            return f"{src.helper('tanh32')}({a[0]})"
        return f"math.tanh({a[0]})"
    exp = src.helper("exp32") if fast32 and t == "float32" else "math.exp"
    if op == "sigmoid":
        return f"({one} / ({one} + {exp}(-{a[0]})))"
    if op == "silu":
        return f"({a[0]} / ({one} + {exp}(-{a[0]})))"
    if op == "relu":
        return f"({a[0]} if ({a[0]} > {zero} or {a[0]} != {a[0]}) else {zero})"
    if op == "gelu":
        half, c = src.const(0.5, t), src.const(_SQRT_HALF, t)
        erf = src.helper("erf32") if fast else "math.erf"
        return f"(({erf}({a[0]} * {c}) + {one}) * {a[0]} * {half})"
    if op == "gelu_tanh":
        half, k, c = src.const(0.5, t), src.const(_TANH_K, t), src.const(_TANH_C, t)
        x = a[0]
        inner = f"{k} * ({x} + {c} * {x} * {x} * {x})"
        tanh = (
            f"{src.helper('tanh32')}({inner})"
            if fast32 and t == "float32"
            else (f"math.tanh({inner})")
        )
        return f"(({tanh} + {one}) * {x} * {half})"
    if op == "leaky_relu":
        return f"({a[0]} if {a[0]} > {zero} else {a[0]} * {a[1]})"
    if op == "clamp":
        x = a[0]
        if a[1] is not None:
            x = f"({x} if ({x} >= {a[1]} or {x} != {x}) else {a[1]})"
        if a[2] is not None:
            x = f"({x} if ({x} <= {a[2]} or {x} != {x}) else {a[2]})"
        return x
    if op in ("floor", "ceil", "trunc"):
        return f"np.{op}({a[0]})" if kind == "f" else a[0]
    if op == "sign":
        if kind == "b":
            return a[0]
        keep = f"({a[0]} if {a[0]} != {a[0]} else {zero})" if kind == "f" else zero
        return f"({one} if {a[0]} > {zero} else (({zero} - {one}) if {a[0]} < {zero} else {keep}))"
    if op == "logical_not":
        return f"({a[0]} == {zero})"
    if op == "logical_and":
        return f"(({a[0]} != {zero}) & ({a[1]} != {zero}))"
    if op == "logical_or":
        return f"(({a[0]} != {zero}) | ({a[1]} != {zero}))"
    if op == "where":
        return f"({a[1]} if {a[0]} else {a[2]})"
    if op == "cast":
        return a[0]
    raise NotImplementedError(f"fused kernels have no op {op!r}")


def _body(src: _Source, spec: FusedSpec, names: dict[str, tuple[str, str]], fast32: bool):
    """Lines computing every step; `names` maps each input to (variable, dtype) and is
    extended with the steps."""
    lines = []
    for n, step in enumerate(spec.steps):
        args = []
        work = _work_dtype(step)
        for pos, arg in enumerate(step.args):
            target = "bool" if step.op == "where" and pos == 0 else step.compute
            if arg is None:
                args.append(None)
            elif isinstance(arg, str):
                var, dtype = names[arg]
                args.append(_convert(src, _convert(src, var, dtype, target), target, work))
            else:
                args.append(src.const(np.dtype(target).type(arg), work))
        expr = _op_expr(src, step, args, fast32)
        if step.dtype != "bool":
            expr = f"np.{step.dtype}({expr})"
        elif step.op not in _BOOL_RESULT:
            expr = f"bool({expr})"
        lines.append(f"v{n} = {expr}")
        names[step.name] = (f"v{n}", step.dtype)
    return lines


_HELPERS = {
    "tanh32": """
@numba.njit(cache=True)
def tanh32(x):
    # x P(x^2) / Q(x^2), fitted to tanh on [0, 9] (relative error 2e-8 in float64); pure
    # arithmetic, so that loops calling it vectorise. NaN passes through the clamp.
    c = x
    if x < TLOW:
        c = TLOW
    if x > THIGH:
        c = THIGH
    t = c * c
    p = TP4 * t + TP3
    p = p * t + TP2
    p = p * t + TP1
    p = p * t + TP0
    q = TQ4 * t + TQ3
    q = q * t + TQ2
    q = q * t + TQ1
    q = q * t + TQ0
    y = c * p / q
    if y > TONE:
        y = TONE
    if y < -TONE:
        y = -TONE
    return y
""",
    "erf32": """
@numba.njit(cache=True)
def erf32(x):
    # x P(x^2) / Q(x^2), fitted to erf on [0, 3.92] (relative error 2e-8 in float64; erf
    # rounds to 1 above 3.92). NaN passes through the clamp.
    c = x
    if x < RLOW:
        c = RLOW
    if x > RHIGH:
        c = RHIGH
    t = c * c
    p = RP5 * t + RP4
    p = p * t + RP3
    p = p * t + RP2
    p = p * t + RP1
    p = p * t + RP0
    q = RQ5 * t + RQ4
    q = q * t + RQ3
    q = q * t + RQ2
    q = q * t + RQ1
    q = q * t + RQ0
    y = c * p / q
    if y > RONE:
        y = RONE
    if y < -RONE:
        y = -RONE
    return y
""",
    "exp32": """
@numba.njit(cache=True)
def exp32(x):
    # 2^n exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2 (Cody and Waite's split of
    # ln 2), exp(r) by its Taylor polynomial of degree 7, 2^n built from exponent bits in two
    # factors (so that results below 2^-126 stay right). About 1 ulp; vectorises.
    c = x
    if c > EHIGH:
        c = EHIGH
    if c < ELOW:
        c = ELOW
    n = np.floor(c * LOG2E + EHALF)
    r = c - n * LN2HI
    r = r - n * LN2LO
    p = EC7 * r + EC6
    p = p * r + EC5
    p = p * r + EC4
    p = p * r + EC3
    p = p * r + EC2
    p = p * r + EC1
    p = p * r + EC0
    k = np.int32(n)
    k1 = k >> 1
    s1 = np.int32((k1 + 127) << 23).view(np.float32)
    s2 = np.int32((k - k1 + 127) << 23).view(np.float32)
    y = p * s1 * s2
    if x > EHIGH:
        y = EINF
    if x < ELOW:
        y = EZERO
    if x != x:
        y = x
    return y
""",
    "block_sum": """
@numba.njit(cache=True)
def block_sum(tmp, m):
    if m < 8:
        r = tmp[0]
        for t in range(1, m):
            r += tmp[t]
        return r
    r0, r1, r2, r3 = tmp[0], tmp[1], tmp[2], tmp[3]
    r4, r5, r6, r7 = tmp[4], tmp[5], tmp[6], tmp[7]
    e = m - m % 8
    for t in range(8, e, 8):
        r0 += tmp[t]
        r1 += tmp[t + 1]
        r2 += tmp[t + 2]
        r3 += tmp[t + 3]
        r4 += tmp[t + 4]
        r5 += tmp[t + 5]
        r6 += tmp[t + 6]
        r7 += tmp[t + 7]
    r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for t in range(e, m):
        r += tmp[t]
    return r
""",
    "nanmax": """
@numba.njit(cache=True)
def nanmax(a, b):
    return a if (a > b or a != a) else b
""",
    "nanmin": """
@numba.njit(cache=True)
def nanmin(a, b):
    return a if (a < b or a != a) else b
""",
    "block_max": """
@numba.njit(cache=True)
def block_max(tmp, m):
    r = tmp[0]
    for t in range(1, m):
        r = nanmax(r, tmp[t])
    return r
""",
    "block_min": """
@numba.njit(cache=True)
def block_min(tmp, m):
    r = tmp[0]
    for t in range(1, m):
        r = nanmin(r, tmp[t])
    return r
""",
}
_HELPER_NEEDS = {"block_max": ("nanmax",), "block_min": ("nanmin",)}
_TANH_P = (
    0.9999999801162323,
    0.1338101452836654,
    0.0034955684149923704,
    2.0608517741712434e-05,
    1.3353487260392427e-08,
)
_TANH_Q = (
    1.0,
    0.46714330408790394,
    0.025876923874365954,
    0.00032855918939194285,
    7.776156955990876e-07,
)


_ERF_P = (
    1.1283791465846604,
    0.190387087855404,
    0.05274534572985034,
    0.0037645797372330256,
    0.00028482468874142797,
    2.0497753530912544e-06,
)
_ERF_Q = (
    1.0,
    0.5020589116082972,
    0.11410036800271615,
    0.014967144897727436,
    0.0011622204374569286,
    3.808545185101514e-05,
)
_EXP32 = {
    "EHIGH": 88.72283935546875,  # the largest float32 whose exp is finite
    "ELOW": -103.97208404541016,  # below, exp rounds to 0
    "LOG2E": 1.4426950408889634,
    "LN2HI": 0.693359375,  # ln 2 = LN2HI + LN2LO, LN2HI with few bits: n * LN2HI is exact
    "LN2LO": -2.1219444005469057e-04,
    "EHALF": 0.5,
    "EINF": float("inf"),
    "EZERO": 0.0,
}


def _module_text(src: _Source, kernel_lines: list[str], parallel: bool) -> str:
    head = [
        "# Generated by tocha.compiler: a fused kernel (numba).",
        "import math",
        "",
        "import numba",
        "import numpy as np",
        "from numba import prange",
        "",
    ]
    for literal, name in src.constants.items():
        head.append(f"{name} = {literal}")
    if "tanh32" in src.helpers:
        for n, c in enumerate(_TANH_P):
            head.append(f"TP{n} = np.float32({c!r})")
        for n, c in enumerate(_TANH_Q):
            head.append(f"TQ{n} = np.float32({c!r})")
        head += ["TLOW = np.float32(-9.0)", "THIGH = np.float32(9.0)", "TONE = np.float32(1.0)"]
    if "erf32" in src.helpers:
        head += [f"RP{n} = np.float32({c!r})" for n, c in enumerate(_ERF_P)]
        head += [f"RQ{n} = np.float32({c!r})" for n, c in enumerate(_ERF_Q)]
        head += ["RLOW = np.float32(-3.92)", "RHIGH = np.float32(3.92)", "RONE = np.float32(1.0)"]
    if "exp32" in src.helpers:
        head += [f"EC{k} = np.float32({1 / math.factorial(k)!r})" for k in range(8)]
        head += [f"{k} = np.float32(float.fromhex({v.hex()!r}))" for k, v in _EXP32.items()]
    head += [text for name, text in _HELPERS.items() if name in src.helpers]
    flags = f'cache=True, error_model="numpy", nogil=True, parallel={parallel}'
    return "\n".join([*head, "", f"@numba.njit({flags})", *kernel_lines, ""])


def _rows_kernel(spec: FusedSpec, kinds: str, reduce_op: str | None, fast32: bool, par: bool):
    """Source of the ``rows`` kernel: ``kernel(n, outer, inner, group, *ins, *outs, part)``."""
    src = _Source()
    ins = [f"a{n}" for n in range(len(kinds))]
    outs = [f"o{n}" for n in range(len(spec.outputs))]
    written = spec.outputs[:-1] if reduce_op else spec.outputs
    params = ", ".join(["n", "outer", "inner", "group", *ins, *outs, "part"])
    lines = [f"def kernel({params}):"]
    names = {}
    for n, ((name, dtype), kind) in enumerate(zip(spec.inputs, kinds)):
        names[name] = (f"x{n}", dtype)
        if kind == "s":
            lines.append(f"    x{n} = a{n}[0]")
    # The inner loop reads and writes slices of the row (or block) by an index from a plain
    # range: numba then knows it is not negative (no wraparound check), and LLVM vectorises.
    loads = []
    for n, kind in enumerate(kinds):
        if kind != "s":
            loads.append(f"x{n} = {'r' if kind != 'o' else 'a'}{n}[{'i' if kind == 'o' else 'j'}]")
    body = _body(src, spec, names, fast32)
    stores = [f"p{n}[j] = {names[name][0]}" for n, name in enumerate(written)]

    def rows(start: str, stop: str, inner_start: str) -> list[str]:
        views = [f"r{n} = a{n}[{start}:{stop}]" for n, kind in enumerate(kinds) if kind == "c"]
        views += [
            f"r{n} = a{n}[{inner_start}:{inner_start} + ({stop}) - ({start})]"
            for n, kind in enumerate(kinds)
            if kind == "i"
        ]
        views += [f"p{n} = o{n}[{start}:{stop}]" for n in range(len(written))]
        return views

    lines.append("    for g in prange((outer + group - 1) // group):")
    if reduce_op is None:
        lines += [
            "        for i in range(g * group, min(outer, (g + 1) * group)):",
            "            base = i * inner",
            "            stop = min(inner, n - base)",
        ]
        lines += ["            " + line for line in rows("base", "base + stop", "0")]
        lines += ["            for j in range(stop):"]
        lines += ["                " + line for line in (*loads, *body, *stores)]
    else:
        rdtype = spec.reduce.dtype
        last = names[spec.outputs[-1]]
        value = _convert(src, last[0], last[1], rdtype)
        block, combine = {
            "sum": ("block_sum", "stk[top] + s"),
            "amax": ("block_max", "nanmax(stk[top], s)"),
            "amin": ("block_min", "nanmin(stk[top], s)"),
        }[reduce_op]
        final = {"sum": "stk[t] + r", "amax": "nanmax(stk[t], r)", "amin": "nanmin(stk[t], r)"}
        src.helper(block)
        zero = src.const(0, rdtype)
        lines += [
            f"        tmp = np.empty({_BLOCK}, np.{rdtype})",
            f"        stk = np.empty(64, np.{rdtype})",
            "        for i in range(g * group, min(outer, (g + 1) * group)):",
            "            base = i * inner",
            "            stop = min(inner, n - base)",
            "            top = 0",
            "            nb = 0",
            f"            for j0 in range(0, stop, {_BLOCK}):",
            f"                m = min({_BLOCK}, stop - j0)",
        ]
        lines += ["                " + line for line in rows("base + j0", "base + j0 + m", "j0")]
        lines += ["                for j in range(m):"]
        lines += ["                    " + line for line in (*loads, *body, *stores)]
        lines += [
            f"                    tmp[j] = {value}",
            f"                s = {block}(tmp, m)",
            "                nb += 1",
            "                c = nb",
            "                while c & 1 == 0:",
            "                    top -= 1",
            f"                    s = {combine}",
            "                    c >>= 1",
            "                stk[top] = s",
            "                top += 1",
            f"            r = {zero}",
            "            if top > 0:",
            "                r = stk[top - 1]",
            "                for t in range(top - 2, -1, -1):",
            f"                    r = {final[reduce_op]}",
            "            part[i] = r",
        ]
    return _module_text(src, lines, par)


def _nd_kernel(spec: FusedSpec, kinds: str, ndim: int, fast32: bool, par: bool):
    """Source of the ``nd`` kernel: ``kernel(shape, *ins, *outs)``, every input an array of
    the iteration's ndim (broadcast strides) or, for kind ``s``, one element."""
    src = _Source()
    ins = [f"a{n}" for n in range(len(kinds))]
    outs = [f"o{n}" for n in range(len(spec.outputs))]
    lines = [f"def kernel(shape, {', '.join([*ins, *outs])}):"]
    names = {}
    for n, ((name, dtype), kind) in enumerate(zip(spec.inputs, kinds)):
        names[name] = (f"x{n}", dtype)
        if kind == "s":
            lines.append(f"    x{n} = a{n}[0]")
    index = ", ".join(f"i{d}" for d in range(ndim))
    indent = "    "
    for d in range(ndim):
        loop = "prange" if d == 0 else "range"
        lines.append(f"{indent}for i{d} in {loop}(shape[{d}]):")
        indent += "    "
    loads = [f"x{n} = a{n}[{index}]" for n, kind in enumerate(kinds) if kind != "s"]
    body = _body(src, spec, names, fast32)
    stores = [f"o{n}[{index}] = {names[name][0]}" for n, name in enumerate(spec.outputs)]
    lines += [indent + line for line in (*loads, *body, *stores)]
    return _module_text(src, lines, par)


def kernel_source(spec: FusedSpec, variant: tuple) -> str:
    """The generated source of `spec` for one layout `variant` (see `compile_numba`)."""
    layout, kinds, extra, par, fast32 = variant
    if layout == "rows":
        return _rows_kernel(spec, kinds, extra, fast32, par)
    return _nd_kernel(spec, kinds, extra, fast32, par)


def _load(source: str, digest: str):
    """Import the module of `source`, written under the cache dir as ``k_<digest>.py``."""
    module = _MODULES.get(digest)
    if module is not None:
        return module
    with _LOCK:
        module = _MODULES.get(digest)
        if module is not None:
            return module
        path = _write(source, f"k_{digest}.py")
        name = f"tocha_kernel_{digest}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(loader_spec)
        # numba's cached code finds its globals by module name, in this process and the next.
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
        _MODULES[digest] = module
        return module


def _write(source: str, name: str) -> Path:
    """The file `name` holding `source` in the cache dir (in a temporary dir when the cache
    dir cannot be written). An existing file is kept as is: numba's index is keyed by its
    modification time."""
    for root in (cache_dir(), Path(tempfile.gettempdir()) / f"tocha-compile-{os.getuid()}"):
        path = root / name
        try:
            if path.exists() and path.read_text() == source:
                return path
            root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=root, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
            return path
        except OSError:
            continue
    raise OSError(f"tocha.compiler: cannot write a kernel under {cache_dir()}")


def _classify(arrays: list, shape: tuple, split: int) -> str | None:
    """Each input's kind for rows split at `split` (``c s i o``), or None when one fits no
    kind."""
    kinds = []
    ndim = len(shape)
    for a in arrays:
        ashape = (1,) * (ndim - a.ndim) + a.shape
        if a.size == 1:
            kinds.append("s")
        elif not a.flags.c_contiguous:
            return None
        elif ashape == shape:
            kinds.append("c")
        elif ashape[split:] == shape[split:] and all(d == 1 for d in ashape[:split]):
            kinds.append("i")
        elif ashape[:split] == shape[:split] and all(d == 1 for d in ashape[split:]):
            kinds.append("o")
        else:
            return None
    return "".join(kinds)


class _Plan:
    """How one call signature (input shapes, strides, dtypes, thread count) runs: the kernel,
    its integer arguments and how its outputs are finished. Made once per signature."""

    def __init__(self, owner: _Compiled, arrays: list, shape: tuple, par: bool) -> None:
        spec = owner.spec
        self.spec = spec
        self.shape = shape
        self.n = n = math.prod(shape)
        self.out_dtypes = owner.out_dtypes
        ndim = len(shape)
        reduce = spec.reduce
        self.rdims = rdims = reduced_dims(reduce, ndim) if reduce is not None else ()
        self.kernel = None
        self.in_kernel = None
        if n == 0:
            return
        if reduce is not None and ndim and rdims == tuple(range(rdims[0], ndim)):
            self.in_kernel = "sum" if reduce.op == "mean" else reduce.op
        whole = len(rdims) == ndim
        splits = [ndim - len(rdims)] if self.in_kernel and not whole else range(ndim, -1, -1)
        for split in splits:
            kinds = _classify(arrays, shape, split)
            if kinds is not None:
                break
        else:
            self.in_kernel = None
            self.kinds = "".join("s" if a.size == 1 else "g" for a in arrays)
            self.layout = "nd"
            self.kernel = owner.kernel(("nd", self.kinds, ndim, par, owner.fast32))
            return
        self.kinds = kinds
        self.layout = "rows"
        self.flatten = any(a.ndim != 1 for a in arrays)
        if all(k in "cs" for k in kinds) and (self.in_kernel is None or whole):
            self.inner = _CHUNK
            self.outer = -(-n // _CHUNK)
        else:
            self.inner = math.prod(shape[split:])
            self.outer = n // self.inner
        self.group = max(1, _CHUNK // self.inner)
        self.kernel = owner.kernel(("rows", kinds, self.in_kernel, par, owner.fast32))

    def run(self, arrays: list) -> tuple:
        shape, spec = self.shape, self.spec
        if self.kernel is None:  # an empty iteration
            outs = [np.empty(shape, d) for d in self.out_dtypes]
        elif self.layout == "nd":
            outs = [np.empty(shape, d) for d in self.out_dtypes]
            ins = [
                a.reshape(1) if k == "s" else np.broadcast_to(a, shape)
                for a, k in zip(arrays, self.kinds)
            ]
            self.kernel(shape, *ins, *outs)
        else:
            n = self.n
            flat = [a.reshape(-1) for a in arrays] if self.flatten else arrays
            outs = [np.empty(n, d) for d in self.out_dtypes]
            if self.in_kernel:
                part = np.empty(self.outer, spec.reduce.dtype)
                outs[-1] = _EMPTY
                self.kernel(n, self.outer, self.inner, self.group, *flat, *outs, part)
                outs[-1] = self._finish(part)
                if len(shape) != 1:
                    outs[:-1] = [o.reshape(shape) for o in outs[:-1]]
                return tuple(outs)
            self.kernel(n, self.outer, self.inner, self.group, *flat, *outs, _EMPTY)
            if len(shape) != 1:
                outs = [o.reshape(shape) for o in outs]
        if spec.reduce is not None:
            outs[-1] = reduce_array(outs[-1], spec.reduce)
        return tuple(outs)

    def _finish(self, part: np.ndarray) -> np.ndarray:
        """The reduction from per-row partial results."""
        reduce, shape, rdims = self.spec.reduce, self.shape, self.rdims
        dtype = np.dtype(reduce.dtype)
        with np.errstate(all="ignore"):
            if len(rdims) == len(shape):
                if reduce.op == "amax":
                    result = np.asarray(np.max(part))
                elif reduce.op == "amin":
                    result = np.asarray(np.min(part))
                else:
                    result = np.asarray(np.sum(part, dtype=dtype))
            else:
                result = part.reshape(shape[: len(shape) - len(rdims)])
            if reduce.op == "mean":
                count = math.prod(shape[d] for d in rdims)
                result = np.asarray(np.true_divide(result, dtype.type(count), dtype=dtype))
        if reduce.keepdim:
            result = result.reshape(tuple(1 if d in rdims else s for d, s in enumerate(shape)))
        return result


_EMPTY = np.empty(0, np.float32)


class _Compiled:
    """The callable `compile_numba` returns: one numba kernel per layout, made on first use,
    and one `_Plan` per call signature."""

    def __init__(self, spec: FusedSpec, fast32: bool) -> None:
        self.spec = spec
        self.fast32 = fast32
        self.variants: dict[tuple, object] = {}
        self.plans: dict[tuple, _Plan] = {}
        self.dtypes = [np.dtype(d) for _, d in spec.inputs]
        dtypes = {name: np.dtype(d) for name, d in spec.inputs}
        dtypes.update({step.name: np.dtype(step.dtype) for step in spec.steps})
        self.out_dtypes = [dtypes[name] for name in spec.outputs]

    def kernel(self, variant: tuple):
        """The numba dispatcher of one layout `variant`."""
        dispatcher = self.variants.get(variant)
        if dispatcher is None:
            import numba

            source = kernel_source(self.spec, variant)
            # Named by what it computes: specs that differ only in what the kernel leaves to
            # NumPy (a reduction's dims, keepdim) share one kernel.
            text = f"{_CODEGEN_VERSION}|{numba.__version__}|{source}"
            digest = hashlib.sha256(text.encode()).hexdigest()[:32]
            dispatcher = _load(source, digest).kernel
            self.variants[variant] = dispatcher
        return dispatcher

    def __call__(self, *arrays) -> tuple:
        try:
            plans = self.plans[tuple([(a.shape, a.strides, a.dtype) for a in arrays])]
        except (KeyError, AttributeError):
            arrays, plans = self._plans_of(arrays)
        plan = plans[0]
        if plan.n >= PARALLEL_MIN and _threads() > 1:
            if plans[1] is None:
                plans[1] = _Plan(self, arrays, plan.shape, True)
            plan = plans[1]
        return plan.run(arrays)

    def _plans_of(self, arrays: tuple) -> tuple[list, list]:
        """`arrays` as arrays of the declared dtypes, and their [serial, parallel] plans."""
        arrays = [np.asarray(a) for a in arrays]
        if len(arrays) != len(self.dtypes):
            iteration_shape(self.spec, arrays)
        arrays = [a if a.dtype == d else a.astype(d) for a, d in zip(arrays, self.dtypes)]
        key = tuple([(a.shape, a.strides, a.dtype) for a in arrays])
        plans = self.plans.get(key)
        if plans is None:
            if len(self.plans) >= _PLANS:
                self.plans.clear()
            shape = iteration_shape(self.spec, arrays)
            plans = self.plans[key] = [_Plan(self, arrays, shape, False), None]
        return arrays, plans


_PLANS = 64


def _threads() -> int:
    from numba import get_num_threads

    return get_num_threads()


def compile_numba(spec: FusedSpec, *, fast32: bool = True) -> Callable[..., tuple]:
    """A callable that runs `spec` as numba kernels.

    Args:
        spec: the fused kernel.
        fast32: compute float32 ``tanh``, ``exp`` and ``erf`` (so ``sigmoid``, ``silu``,
            ``gelu``) with vectorisable approximations (a few float32 ulp from the correctly
            rounded value) rather than libm's ``tanhf``, ``expf`` and ``erff``, which keep a
            loop from vectorising.

    Returns:
        ``fn(*arrays) -> tuple`` of one array per name of ``spec.outputs``, as
        `compile_numpy`'s. Specs with a dtype numba does not support (float16, bfloat16,
        complex) run through `compile_numpy`.
    """
    dtypes = {d for _, d in spec.inputs} | {s.dtype for s in spec.steps}
    dtypes |= {s.compute for s in spec.steps}
    if spec.reduce is not None:
        dtypes.add(spec.reduce.dtype)
    if not dtypes <= _DTYPES:
        return compile_numpy(spec)
    return _Compiled(spec, fast32)
