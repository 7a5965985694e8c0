"""Dynamic dimensions: `Dim`, `dims`, the hints ``Dim.AUTO``/``Dim.STATIC``/``Dim.DYNAMIC``,
and the reading of `export`'s ``dynamic_shapes`` into one symbol per dynamic dimension."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import tocha

from ._errors import ConstraintViolationError, UserError, with_footer

__all__ = ["Dim", "DimHint", "ValueRanges", "dims", "int_oo", "read_dynamic_shapes"]

_DOCS = (
    "\nFor more information about this error, see: "
    "https://pytorch.org/docs/main/generated/exportdb/index.html#dynamic-shapes-validation"
)


class _IntInfinity:
    """The upper bound of an unbounded dimension (PyTorch prints it ``int_oo``)."""

    def __repr__(self) -> str:
        return "int_oo"

    def __lt__(self, other: Any) -> bool:
        return False

    def __le__(self, other: Any) -> bool:
        return other is self

    def __gt__(self, other: Any) -> bool:
        return other is not self

    def __ge__(self, other: Any) -> bool:
        return True

    def __reduce__(self) -> str:
        return "int_oo"


int_oo = _IntInfinity()


@dataclass(frozen=True)
class ValueRanges:
    """The closed range ``[lower, upper]`` a dynamic dimension may take."""

    lower: int
    upper: Any

    def __repr__(self) -> str:
        return f"VR[{self.lower}, {self.upper!r}]"

    def __contains__(self, value: int) -> bool:
        return self.lower <= value and not value > self.upper


class Symbol(str):
    """The name of a dynamic dimension (``s0``), printed without quotes."""

    def __repr__(self) -> str:
        return str(self)


class _Hint(enum.Enum):
    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"


class DimHint:
    """``Dim.AUTO`` (dynamic unless the code specialises it), ``Dim.STATIC`` (the example's
    size) or ``Dim.DYNAMIC`` (dynamic, an error if specialised). Calling one bounds it:
    ``Dim.DYNAMIC(min=3, max=10)``."""

    def __init__(self, kind: _Hint, min: int | None = None, max: int | None = None) -> None:
        self.kind = kind
        self.min = min
        self.max = max

    def __call__(self, min: int | None = None, max: int | None = None) -> DimHint:
        return DimHint(self.kind, min, max)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DimHint):
            return NotImplemented
        return (self.kind, self.min, self.max) == (other.kind, other.min, other.max)

    def __hash__(self) -> int:
        return hash((self.kind, self.min, self.max))

    def __repr__(self) -> str:
        bounds = "".join(
            f", {name}={value}"
            for name, value in (("min", self.min), ("max", self.max))
            if value is not None
        )
        return f"DimHint({self.kind.value}{bounds})"


class Dim:
    """A named dynamic dimension with an inclusive range: ``Dim("batch", min=1, max=64)``.
    Dimensions given the same `Dim` are the same symbol."""

    AUTO = DimHint(_Hint.AUTO)
    STATIC = DimHint(_Hint.STATIC)
    DYNAMIC = DimHint(_Hint.DYNAMIC)

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None) -> None:
        lower = 0 if min is None else min
        upper = int_oo if max is None else max
        if not upper > lower:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min = lower
        self.max = upper

    def __repr__(self) -> str:
        parts = [repr(self.__name__)]
        if self.min != 0:
            parts.append(f"min={self.min}")
        if self.max is not int_oo:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple[Dim, ...]:
    """One `Dim` per name, all with the same range."""
    return tuple(Dim(name, min=min, max=max) for name in names)


@dataclass(eq=False)
class DynamicDim:
    """One dynamic dimension of one input: its symbol, range, the example size, the size a
    second run takes to find what depends on it, whether it must stay dynamic (`strict`: a
    `Dim` or ``Dim.DYNAMIC``) and whether the code specialised it (``Dim.AUTO``)."""

    symbol: Symbol
    range: ValueRanges
    example: int
    shadow: int
    name: str | None
    strict: bool
    source: str = ""
    specialized: bool = False


class _Symbols:
    def __init__(self) -> None:
        self.by_dim: dict[str, DynamicDim] = {}
        self.count = 0

    def new(self, example: int, rng: ValueRanges, name: str | None, strict: bool) -> DynamicDim:
        symbol = Symbol(f"s{self.count}")
        self.count += 1
        shadow = example + 1 if example + 1 in rng else example - 1
        if shadow not in rng or shadow < 2:
            shadow = example
        return DynamicDim(symbol, rng, example, shadow, name, strict)


def read_dynamic_shapes(
    names: list[str], values: list[Any], dynamic_shapes: Any
) -> list[dict[int, DynamicDim]]:
    """For each top-level input (`names`, `values`), the dynamic dimensions of its tensor
    leaves, as ``{leaf index: {dim: DynamicDim}}`` flattened in leaf order: one dict per
    tensor leaf. Raises PyTorch's UserError for a spec that does not fit the inputs and
    ConstraintViolationError for an example outside its range."""
    if dynamic_shapes is None:
        specs: list[Any] = [None] * len(values)
    elif isinstance(dynamic_shapes, dict):
        if list(dynamic_shapes) != names and sorted(dynamic_shapes) != sorted(names):
            raise UserError(
                with_footer(
                    "When `dynamic_shapes` is specified as a dict, its top-level keys must be "
                    f"the arg names {names} of `inputs`, but here they are "
                    f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg names "
                    "entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`."
                    + _DOCS
                )
            )
        specs = [dynamic_shapes[n] for n in names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(values):
            raise UserError(
                with_footer(
                    "Detected mismatch between the structure of `inputs` and `dynamic_shapes`: "
                    f"`inputs` has {len(values)} elements, but `dynamic_shapes` has "
                    f"{len(dynamic_shapes)} elements" + _DOCS
                )
            )
        specs = list(dynamic_shapes)
    else:
        raise UserError(
            with_footer(
                "dynamic_shapes must be a dict, a tuple or a list, but got "
                f"{type(dynamic_shapes).__name__}" + _DOCS
            )
        )
    symbols = _Symbols()
    leaves: list[dict[int, DynamicDim]] = []
    for index, (name, value, spec) in enumerate(zip(names, values, specs)):
        where = (
            f"dynamic_shapes[{index}]"
            if not isinstance(dynamic_shapes, dict)
            else (f"dynamic_shapes[{name!r}]")
        )
        _read(value, spec, name, where, symbols, leaves)
    return leaves


def _read(value: Any, spec: Any, path: str, where: str, symbols: _Symbols, leaves: list) -> None:
    if isinstance(value, tocha.Tensor):
        leaves.append(_read_tensor(value, spec, path, where, symbols))
        return
    if isinstance(value, (tuple, list)):
        if spec is not None and (not isinstance(spec, (tuple, list)) or len(spec) != len(value)):
            raise UserError(
                with_footer(
                    f"Detected mismatch between the structure of `inputs` and `dynamic_shapes`: "
                    f"`inputs{path[len(path) :]}` has {len(value)} elements, but `{where}` is "
                    f"{spec!r}" + _DOCS
                )
            )
        for i, v in enumerate(value):
            _read(
                v,
                None if spec is None else spec[i],
                f"{path}[{i}]",
                f"{where}[{i}]",
                symbols,
                leaves,
            )
        return
    if isinstance(value, dict):
        for k, v in value.items():
            sub = None if spec is None else spec.get(k)
            _read(v, sub, f"{path}[{k!r}]", f"{where}[{k!r}]", symbols, leaves)


def _read_tensor(
    value: tocha.Tensor, spec: Any, path: str, where: str, symbols: _Symbols
) -> dict[int, DynamicDim]:
    shape = tuple(value.shape)
    if spec is None:
        return {}
    if isinstance(spec, (tuple, list)):
        if len(spec) != len(shape):
            raise UserError(
                with_footer(
                    f"Expected dynamic shape spec {spec!r} specified at `{where}` to have the "
                    f"same length as the actual tensor shape {tocha.Size(shape)} (expected "
                    f"{len(shape)}, but got {len(spec)} instead)" + _DOCS
                )
            )
        spec = dict(enumerate(spec))
    if not isinstance(spec, dict):
        raise UserError(
            with_footer(
                f"Unexpected input tensor shape {spec!r} specified at `{where}` (expected "
                "either a list/tuple of dimensions, or a dict mapping indices to dimensions, "
                "where each dimension is None, an int, a Dim, Dim.AUTO, Dim.STATIC, or "
                "Dim.DYNAMIC)" + _DOCS
            )
        )
    found: dict[int, DynamicDim] = {}
    for d, dim in spec.items():
        if not isinstance(d, int) or not -len(shape) <= d < len(shape):
            raise UserError(
                with_footer(
                    f"Dimension {d} in `{where}` is out of range for an input of "
                    f"{len(shape)} dimensions" + _DOCS
                )
            )
        d %= len(shape)
        size = shape[d]
        if dim is None or (isinstance(dim, DimHint) and dim.kind is _Hint.STATIC):
            continue
        if type(dim) is int:
            if dim != size:
                raise ConstraintViolationError(
                    with_footer(
                        f"Static shape constraint of {dim} does not match input size of "
                        f"{size}, for L[{path!r}].size()[{d}]"
                    )
                )
            continue
        if isinstance(dim, DimHint):
            if size < 2:
                continue
            lower = 2 if dim.min is None else max(dim.min, 2)
            rng = ValueRanges(lower, int_oo if dim.max is None else dim.max)
            found[d] = symbols.new(size, rng, None, dim.kind is _Hint.DYNAMIC)
            found[d].source = f"L[{path!r}].size()[{d}]"
            continue
        if isinstance(dim, Dim):
            checked = ValueRanges(max(dim.min, 2), dim.max)
            if size not in checked:
                raise ConstraintViolationError(
                    with_footer(f"{size} not in range [{checked.lower}, {checked.upper!r}]")
                )
            known = symbols.by_dim.get(dim.__name__)
            if known is not None:
                if known.example != size:
                    raise UserError(
                        with_footer(
                            f"Constraints violated ({dim.__name__})! The values of "
                            f"{dim.__name__} differ between inputs: {known.example} and {size}"
                        )
                    )
                found[d] = known
                continue
            found[d] = symbols.by_dim[dim.__name__] = symbols.new(
                size, ValueRanges(dim.min, dim.max), dim.__name__, True
            )
            found[d].source = f"L[{path!r}].size()[{d}]"
            continue
        raise UserError(
            with_footer(
                f"Unexpected dimension mapped to index {d} in input tensor shape {spec!r} "
                f"specified at `{where}` (expected None, an int, a Dim, Dim.AUTO, Dim.STATIC, "
                f"or Dim.DYNAMIC,  but got {dim!r} instead)" + _DOCS
            )
        )
    return found
