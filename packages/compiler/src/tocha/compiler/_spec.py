"""What a fused kernel computes: the contract between the fusion pass and the code generators.

A `FusedSpec` is a straight-line program of elementwise `Step`s over input arrays that
broadcast together (NumPy's rules) to one *iteration shape*, optionally followed by one
reduction of its last output. The fusion pass (`_fusion.py`) builds specs from graphs; the
generators turn a spec into a callable: `_codegen_numba.py` (CPU, through numba),
`_codegen_numpy.py` (CPU, NumPy with reused buffers, when numba is missing) and
`_codegen_cupy.py` (CUDA, a generated kernel run through CuPy).

Every generator's callable takes the input arrays in `FusedSpec.inputs` order (any strides,
broadcastable to one shape) and returns a tuple holding one array per name of
`FusedSpec.outputs`: C-contiguous, of the iteration shape and the step's dtype, except the
last one when `reduce` is set, which is reduced.

Step semantics (``a``, ``b``, ``c`` are the step's arguments: names of inputs or of earlier
steps, or Python numbers; every argument is first converted to the step's `compute` dtype,
the result then to its `dtype`):

======================  ====================================================================
op                      value
======================  ====================================================================
``add sub mul div``     ``a + b``, ``a - b``, ``a * b``, ``a / b`` (true division)
``pow``                 ``a ** b``
``maximum minimum``     NumPy's (NaN propagates)
``atan2``               ``arctan2(a, b)``
``neg abs square``      ``-a``, ``|a|``, ``a * a``
``reciprocal rsqrt``    ``1 / a``, ``1 / sqrt(a)``
``exp exp2 expm1``      as NumPy's
``log log2 log10``      as NumPy's
``log1p sqrt``          as NumPy's
``sin cos tan``         as NumPy's
``tanh sigmoid``        ``tanh(a)``, ``1 / (1 + exp(-a))``
``erf``                 the error function
``relu``                ``a if a > 0 else 0`` (NaN stays NaN)
``silu``                ``a * sigmoid(a)``
``gelu``                ``a * (1 + erf(a / sqrt(2))) / 2``
``gelu_tanh``           ``a * (1 + tanh(sqrt(2/pi) * (a + 0.044715 a^3))) / 2``
``leaky_relu``          ``a if a > 0 else a * b`` (``b`` the slope)
``clamp``               ``min(max(a, b), c)``; ``b`` or ``c`` may be None (no bound)
``floor ceil trunc``    as NumPy's
``sign``                as NumPy's
``eq ne lt le gt ge``   comparisons, in `compute`; `dtype` is ``bool``
``logical_not``         ``not a``
``logical_and``         ``a and b``
``logical_or``          ``a or b``
``where``               ``b if a else c`` (``a`` is converted to bool, not to `compute`)
``cast``                ``a`` converted to `dtype`
======================  ====================================================================

`Reduce` ``op`` is ``sum``, ``mean``, ``amax`` or ``amin`` over `dims` of the iteration shape
(all of them when empty), accumulated in `dtype` (float32 sums accumulate in float32, as
tocha's kernels do), with `keepdim` as in tocha.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ELEMENTWISE_OPS", "REDUCE_OPS", "FusedSpec", "Reduce", "Step"]

ELEMENTWISE_OPS = frozenset(
    """add sub mul div pow maximum minimum atan2 neg abs square reciprocal rsqrt exp exp2 expm1
    log log2 log10 log1p sqrt sin cos tan tanh sigmoid erf relu silu gelu gelu_tanh leaky_relu
    clamp floor ceil trunc sign eq ne lt le gt ge logical_not logical_and logical_or where
    cast""".split()
)
REDUCE_OPS = frozenset({"sum", "mean", "amax", "amin"})


@dataclass(frozen=True)
class Step:
    """One elementwise operation: ``name = op(*args)``, computed in `compute` and stored as
    `dtype` (NumPy dtype names such as ``"float32"``, ``"int64"``, ``"bool"``)."""

    name: str
    op: str
    args: tuple
    dtype: str
    compute: str


@dataclass(frozen=True)
class Reduce:
    """A reduction of the spec's last output over `dims` (all when empty)."""

    op: str
    dims: tuple[int, ...]
    keepdim: bool
    dtype: str


@dataclass(frozen=True)
class FusedSpec:
    """A fused kernel: `inputs` as ``(name, dtype)`` pairs, the `steps` in order, the names it
    returns, and an optional reduction of the last of them."""

    inputs: tuple[tuple[str, str], ...]
    steps: tuple[Step, ...]
    outputs: tuple[str, ...]
    reduce: Reduce | None = None

    def key(self) -> str:
        """A text that identifies what the spec computes (for caches, on disk too)."""
        return repr(self)
